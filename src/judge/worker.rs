//! The worker: the only place candidate code runs, in processes of its own.
//!
//! The harness re-executes itself as `harness __worker …` (see `sandbox`).
//! The worker confines itself (`confine`: a PID namespace whose first
//! process it is, Landlock, limits), moves fd 1 out of the candidate's
//! reach, loads the library once with `RTLD_NOW | RTLD_LOCAL` and checks
//! the handshake. Then, for each case, it forks a child that runs the
//! case's calls on a thread with a large stack, writing one frame per call
//! to the protocol pipe as it goes, and exits. Statics therefore never
//! carry over from one case to the next, and a crash loses nothing that
//! had already happened: the parent knows exactly which call was running.
//! The worker waits for each child under the case's time limit, collects
//! its output, kills whatever it left behind and reports how it ended.
//!
//! It has `unsafe` (as `confine`, `library`, `measure` and `buildbox` do):
//! calling into a foreign library and forking.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;
use std::time::{Duration, Instant};

use harness_contract::RawBuf;

use crate::judge::confine::{self, Protection, Protections, Role};
use crate::judge::library::{self, Entry, LoadFailure};
use crate::judge::sandbox::frame;

/// Arguments of the hidden `__worker` subcommand.
pub struct WorkerArgs<'a> {
    /// The library; `-` to report the sandbox and load nothing.
    pub lib: &'a Path,
    pub schema_hash: u64,
    pub memory_bytes: u64,
    pub stack_bytes: usize,
    pub cpu_seconds: u64,
    /// Wall-clock limit of one case.
    pub case_timeout: Duration,
    /// Output of one case kept; the rest is counted.
    pub output_bytes: usize,
    /// A process per case; otherwise (the trusted reference) the cases run
    /// one after another in the worker.
    pub fork_per_case: bool,
}

/// How long the worker keeps reading a case's output after the case's
/// process has ended (something it started may still hold the pipe).
const OUTPUT_GRACE: Duration = Duration::from_millis(100);

/// Runs the worker; returns the process exit code.
pub fn main(args: WorkerArgs<'_>) -> i32 {
    if confine::detach().is_err() {
        return confine::ORPHANED;
    }
    let mut protections = Protections::default();
    let role = confine::enter_pid_namespace(&mut protections);
    if let Role::Outer(pid) = role {
        return confine::relay(pid);
    }
    protections.parent_death_signal = match rustix::process::parent_process_death_signal() {
        Ok(Some(_)) => {
            Protection::on("the worker is killed when the harness thread that started it ends, even by SIGKILL")
        }
        _ => Protection::off("PR_SET_PDEATHSIG is not set"),
    };
    let mut request = Vec::new();
    if std::io::stdin().read_to_end(&mut request).is_err() {
        return 3;
    }
    // Candidate code reads nothing: stdin is /dev/null from here on.
    if let Ok(null) = File::open("/dev/null") {
        let _ = rustix::stdio::dup2_stdin(&null);
    }
    // Keep the real stdout for frames (close-on-exec, so no program the
    // candidate starts inherits it) and point fd 1 at stderr, so that a
    // `println!` lands in the captured output instead of the protocol.
    let Ok(proto) = rustix::io::fcntl_dupfd_cloexec(std::io::stdout().as_fd(), 3) else {
        return 3;
    };
    if rustix::stdio::dup2_stdout(std::io::stderr().as_fd()).is_err() {
        return 3;
    }
    let mut proto = File::from(proto);
    crate::judge::channel::adopt(&proto);
    confine::check_terminal(&mut protections);
    let scratch = std::env::current_dir().unwrap_or_else(|_| "/nonexistent".into());
    confine::restrict(&mut protections, &scratch);
    set_limits(&args, &mut protections);
    // Cases in processes of their own: every process, program, socket or
    // io_uring asked for from here on (the library's initialisers too) is
    // refused, and counted for the case's verdict. The trusted reference,
    // run in the worker itself, is refused sockets only.
    let supervisor = if args.fork_per_case {
        confine::Supervisor::install()
    } else {
        confine::refuse_network(&mut protections);
        Err("the trusted reference runs in the worker".into())
    };
    if args.fork_per_case {
        confine::record_confinement(&mut protections, supervisor.as_ref().map(drop).map_err(Clone::clone));
    }
    protections.process_per_case =
        Protection::on("each case runs in a process forked for it from the loaded worker; no state carries over");
    send(&mut proto, frame::SANDBOX, &serde_json::to_vec(&protections).unwrap_or_default());
    if args.lib == Path::new("-") {
        send(&mut proto, frame::DONE, &[]);
        return 0;
    }
    run(&args, &role, &request, &mut proto, supervisor.ok());
    0
}

fn set_limits(args: &WorkerArgs<'_>, p: &mut Protections) {
    use rustix::process::{Resource, Rlimit, setrlimit};
    let limit = |n: u64| Rlimit { current: Some(n), maximum: Some(n) };
    // Failures are recorded, not fatal: a limit we cannot set is a weaker
    // sandbox, not a reason to refuse to judge.
    let results = [
        setrlimit(Resource::Core, limit(0)),
        setrlimit(Resource::As, limit(args.memory_bytes)),
        setrlimit(Resource::Cpu, limit(args.cpu_seconds)),
    ];
    p.resource_limits = if results.iter().all(Result::is_ok) {
        Protection::on(format!(
            "address space {} MiB, CPU {} s per case, no core dumps",
            args.memory_bytes >> 20,
            args.cpu_seconds
        ))
    } else {
        Protection::off("setrlimit failed")
    };
}

fn send(proto: &mut File, tag: u8, body: &[u8]) {
    crate::judge::channel::send(proto, tag, body);
}

fn run(args: &WorkerArgs<'_>, role: &Role, request: &[u8], proto: &mut File, supervisor: Option<confine::Supervisor>) {
    // What the initialisers are refused is answered while they run (and
    // not counted: no case is running).
    let load = || library::load(args.lib, args.schema_hash);
    let loaded = match supervisor.as_ref().map_or_else(load, |s| s.during(load)) {
        Ok(loaded) => loaded,
        Err(LoadFailure::Error(why)) => return send(proto, frame::LOAD_ERROR, why.as_bytes()),
        Err(LoadFailure::Mismatch(hs, text)) => {
            let mut body = Vec::new();
            body.extend_from_slice(&hs.abi_version.to_le_bytes());
            body.extend_from_slice(&hs.schema_hash.to_le_bytes());
            body.extend_from_slice(text.as_bytes());
            return send(proto, frame::MISMATCH, &body);
        }
    };
    let entry = &loaded.entry;
    send(proto, frame::HELLO, &[]);

    let Ok(cases) = crate::judge::channel::decode_lists(request) else {
        return send(proto, frame::LOAD_ERROR, b"malformed request from the harness");
    };
    if !args.fork_per_case {
        return run_shared(args, entry, &cases, proto);
    }
    let pending = Pending::new();
    let jail = Jail { supervisor };
    let fresh = confine::ScratchUse::now();
    for calls in cases {
        let end = run_case(args, role, entry, &calls, pending.as_ref(), &jail, proto);
        let (output, dropped, end) = match end {
            Ok(x) => x,
            Err(e) => {
                let why = format!("the worker could not start a process for the case: {e}");
                send(proto, frame::LOAD_ERROR, why.as_bytes());
                return;
            }
        };
        let mut end = end;
        if confine::settle_scratch(fresh) {
            end.refused.0[confine::Act::Disk as usize] = 1;
        }
        // The case's process is gone: what it left in the shared buffer,
        // then its output and how it ended, in one write (one wake-up of
        // the harness per case).
        let mut out = Vec::new();
        if let Some(p) = &pending {
            p.take(&mut out);
        }
        let mut body = (dropped as u64).to_le_bytes().to_vec();
        body.extend_from_slice(&output);
        out.extend(frame(frame::OUTPUT, &body));
        out.extend(frame(frame::EXIT, &end.encode()));
        let _ = proto.write_all(&out);
    }
    send(proto, frame::DONE, &[]);
}

/// The trusted reference's cases, one after another on one thread of the
/// worker; each still ends with the `W` and `E` frames a case's process
/// would get, so the parent reads both modes alike.
fn run_shared(args: &WorkerArgs<'_>, entry: &Entry, cases: &[Vec<&[u8]>], proto: &mut File) {
    std::thread::scope(|scope| {
        let runner = std::thread::Builder::new().name("reference".into()).stack_size(args.stack_bytes).spawn_scoped(
            scope,
            || {
                // A case's frames go out in one write: the harness wakes
                // once per case, not once per call (a concurrent gate's
                // checker replays thousands of short orders this way).
                let mut out = Vec::new();
                for calls in cases {
                    let started = Instant::now();
                    out.clear();
                    run_calls(entry, calls, &mut |tag, body| out.extend(frame(tag, body)));
                    out.extend(frame(frame::OUTPUT, &0u64.to_le_bytes()));
                    out.extend(frame(
                        frame::EXIT,
                        &CaseExit { kind: b'x', value: 0, elapsed: started.elapsed(), refused: Default::default() }
                            .encode(),
                    ));
                    let _ = proto.write_all(&out);
                }
                send(proto, frame::DONE, &[]);
            },
        );
        if let Ok(handle) = runner {
            let _ = handle.join();
        }
    });
}

/// How a case's process ended, as the `E` frame carries it.
pub struct CaseExit {
    /// `x` exited (value: the code), `s` killed by a signal (value: the
    /// signal), `t` killed at the case's time limit.
    pub kind: u8,
    pub value: i32,
    pub elapsed: Duration,
    /// What the sandbox refused the case.
    pub refused: confine::Refusals,
}

impl CaseExit {
    /// 13 bytes, then the refusals when there were any.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![self.kind];
        b.extend_from_slice(&self.value.to_le_bytes());
        b.extend_from_slice(&(self.elapsed.as_micros() as u64).to_le_bytes());
        if self.refused.any() {
            b.extend_from_slice(&self.refused.encode());
        }
        b
    }

    pub fn decode(b: &[u8]) -> Option<CaseExit> {
        if b.len() < 13 {
            return None;
        }
        Some(CaseExit {
            kind: b[0],
            value: i32::from_le_bytes(b[1..5].try_into().ok()?),
            elapsed: Duration::from_micros(u64::from_le_bytes(b[5..13].try_into().ok()?)),
            refused: if b.len() == 13 { Default::default() } else { confine::Refusals::decode(&b[13..])? },
        })
    }
}

/// What confines each case's process beyond the worker: the seccomp
/// filter whose refusals the worker answers and counts.
struct Jail {
    supervisor: Option<confine::Supervisor>,
}

/// Runs one case in a child process; returns its output (capped), the
/// bytes dropped beyond the cap, and how it ended.
fn run_case(
    args: &WorkerArgs<'_>,
    role: &Role,
    entry: &Entry,
    calls: &[&[u8]],
    pending: Option<&Pending>,
    jail: &Jail,
    proto: &mut File,
) -> std::io::Result<(Vec<u8>, usize, CaseExit)> {
    use rustix::event::{PollFd, PollFlags, poll};
    use rustix::process::{Pid, Signal, WaitOptions};

    let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let started = Instant::now();
    let pid = match &jail.supervisor {
        Some(supervisor) => supervisor.fork_case()?,
        None => confine::fork_case()?,
    };
    if pid == 0 {
        let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
        let _ = rustix::stdio::dup2_stdout(&write);
        let _ = rustix::stdio::dup2_stderr(&write);
        drop((read, write));
        if jail.supervisor.is_none() {
            let _ = confine::refuse_quietly();
        }
        confine::exit_now(run_in_child(entry, calls, proto.as_fd(), pending, args.stack_bytes));
    }
    drop(write);
    let pid = Pid::from_raw(pid).expect("a forked pid is positive");
    let pidfd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok();
    let deadline = started + args.case_timeout;
    let mut output = Vec::new();
    let mut dropped = 0usize;
    let mut pipe_open = true;
    let mut timed_out = false;
    let mut refused = confine::Refusals::default();
    let status = loop {
        if let Ok(Some((_, status))) = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG) {
            break status;
        }
        let now = Instant::now();
        let flood = refused.0.iter().sum::<u32>() >= confine::REFUSALS_BEFORE_END;
        if now >= deadline || flood {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
            timed_out = !flood;
            match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
                Ok(Some((_, status))) => break status,
                _ => continue,
            }
        }
        // Without a pidfd (Linux < 5.3), look at the child every 2 ms.
        let mut wait = deadline - now;
        if pidfd.is_none() {
            wait = wait.min(Duration::from_millis(2));
        }
        let timeout = rustix::event::Timespec { tv_sec: wait.as_secs() as i64, tv_nsec: wait.subsec_nanos() as i64 };
        let mut fds = Vec::with_capacity(2);
        if pipe_open {
            fds.push(PollFd::new(&read, PollFlags::IN));
        }
        if let Some(fd) = &pidfd {
            fds.push(PollFd::new(fd, PollFlags::IN));
        }
        if let Some(s) = &jail.supervisor {
            fds.push(PollFd::new(s, PollFlags::IN));
        }
        let _ = poll(&mut fds, Some(&timeout));
        let readable = pipe_open && !fds[0].revents().is_empty();
        let refusing = jail.supervisor.is_some() && fds.last().is_some_and(|f| !f.revents().is_empty());
        drop(fds);
        if readable {
            pipe_open = crate::judge::sandbox::read_into(&read, &mut output, &mut dropped, args.output_bytes);
        }
        if refusing && let Some(s) = &jail.supervisor {
            s.answer(&mut refused);
        }
    };
    let elapsed = started.elapsed();
    confine::kill_the_rest(role);
    if pipe_open {
        drain(&read, &mut output, &mut dropped, args.output_bytes);
    }
    let end = if timed_out {
        CaseExit { kind: b't', value: 0, elapsed, refused }
    } else if let Some(sig) = status.terminating_signal() {
        CaseExit { kind: b's', value: sig, elapsed, refused }
    } else {
        CaseExit { kind: b'x', value: status.exit_status().unwrap_or(-1), elapsed, refused }
    };
    Ok((output, dropped, end))
}

/// Whatever a case wrote before it ended; a process that escaped the
/// namespace-less fallback may hold the pipe, so stop after
/// [`OUTPUT_GRACE`].
fn drain(read: &std::os::fd::OwnedFd, output: &mut Vec<u8>, dropped: &mut usize, cap: usize) {
    use rustix::event::{PollFd, PollFlags, poll};
    let grace = Instant::now() + OUTPUT_GRACE;
    loop {
        let left = grace.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let timeout = rustix::event::Timespec { tv_sec: 0, tv_nsec: left.as_nanos() as i64 };
        let mut fds = [PollFd::new(read, PollFlags::IN)];
        if poll(&mut fds, Some(&timeout)).unwrap_or(0) == 0 {
            break;
        }
        if !crate::judge::sandbox::read_into(read, output, dropped, cap) {
            break;
        }
    }
}

/// The frames of the case in progress, in memory the worker shares with
/// the case's process: the process appends each outcome there instead of
/// writing it to the pipe, and the worker sends them all in one write once
/// the process has ended. A crash still loses nothing (the memory is the
/// worker's too), and the harness wakes once per case, not once per call.
/// The first 8 bytes count the bytes of complete frames that follow;
/// candidate code can scribble on them, which the parent's frame parsing
/// must (and does) survive.
struct Pending {
    base: *mut u8,
}

// SAFETY: one thread at a time touches the buffer: in the worker its main
// thread, in a case's process the thread running the case.
unsafe impl Sync for Pending {}

/// Room for frames; a case that outgrows it has its frames written out
/// directly by its process, in order, as before.
const PENDING_BYTES: usize = 1 << 20;

impl Pending {
    fn new() -> Option<Pending> {
        // SAFETY: a fresh anonymous mapping: no existing memory is touched;
        // MAP_SHARED keeps it shared with the processes forked later.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                PENDING_BYTES + 8,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        (base != libc::MAP_FAILED).then_some(Pending { base: base.cast() })
    }

    fn used(&self) -> &std::sync::atomic::AtomicU64 {
        // SAFETY: the mapping is page-aligned, at least 8 bytes and lives as
        // long as `self` (never unmapped: the worker ends first).
        unsafe { &*(self.base as *const std::sync::atomic::AtomicU64) }
    }

    fn frames(&self, len: usize) -> &[u8] {
        // SAFETY: `len` is at most PENDING_BYTES, so the slice is inside the
        // mapping; only one process uses it at a time (the case's process
        // while it lives, then the worker).
        unsafe { std::slice::from_raw_parts(self.base.add(8), len) }
    }

    fn write_at(&self, at: usize, bytes: &[u8]) {
        assert!(at + bytes.len() <= PENDING_BYTES, "inside the room");
        // SAFETY: the range is inside the mapping (checked above) and does
        // not overlap `bytes`, which lives elsewhere; one process at a time.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.base.add(8 + at), bytes.len()) }
    }

    /// In the case's process: appends one frame.
    fn push(&self, proto: &mut File, frame: &[u8]) {
        use std::sync::atomic::Ordering;
        let used = (self.used().load(Ordering::Acquire) as usize).min(PENDING_BYTES);
        if used + frame.len() > PENDING_BYTES {
            self.drain(proto);
            if frame.len() > PENDING_BYTES {
                let _ = proto.write_all(frame);
                return;
            }
        }
        let used = (self.used().load(Ordering::Acquire) as usize).min(PENDING_BYTES - frame.len());
        self.write_at(used, frame);
        self.used().store((used + frame.len()) as u64, Ordering::Release);
    }

    /// In the worker: moves what is there to `into`.
    fn take(&self, into: &mut Vec<u8>) {
        use std::sync::atomic::Ordering;
        let used = (self.used().load(Ordering::Acquire) as usize).min(PENDING_BYTES);
        into.extend_from_slice(self.frames(used));
        self.used().store(0, Ordering::Release);
    }

    /// Sends what is there and empties it.
    fn drain(&self, proto: &mut File) {
        use std::sync::atomic::Ordering;
        let used = (self.used().load(Ordering::Acquire) as usize).min(PENDING_BYTES);
        if used > 0 {
            let _ = proto.write_all(self.frames(used));
        }
        self.used().store(0, Ordering::Release);
    }
}

/// In the case's own process: runs the calls on a thread with a large
/// stack; returns the exit code.
fn run_in_child(entry: &Entry, calls: &[&[u8]], proto: BorrowedFd<'_>, pending: Option<&Pending>, stack: usize) -> i32 {
    let Ok(proto) = proto.try_clone_to_owned() else { return 3 };
    // Never closed here: candidate code may have closed the descriptor
    // already, and closing it again would abort. The process exits soon.
    let mut proto = std::mem::ManuallyDrop::new(File::from(proto));
    let mut out = |tag: u8, body: &[u8]| match pending {
        Some(p) => p.push(&mut proto, &frame(tag, body)),
        None => send(&mut proto, tag, body),
    };
    let ran = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("candidate".into())
            .stack_size(stack)
            .spawn_scoped(scope, || run_calls(entry, calls, &mut out))
            .map(|h| h.join().is_ok())
    });
    // A case that closed the channel or put another file in its place
    // tried to tamper with it, even if the results got through.
    if !crate::judge::channel::intact(&proto) {
        return crate::judge::channel::LOST_EXIT;
    }
    if matches!(ran, Ok(true)) { 0 } else { 3 }
}

fn run_calls(entry: &Entry, calls: &[&[u8]], emit: &mut (dyn FnMut(u8, &[u8]) + Send)) {
    // A concurrent gate's case: threads on one shared instance (it opens
    // and closes its own sessions). If one of its runs never finished,
    // candidate threads still hold the instance: end the process now.
    if crate::judge::threads::is_plan(calls) {
        if !crate::judge::threads::run(entry, calls, emit) {
            confine::exit_now(0);
        }
        return;
    }
    // SAFETY: `harness_open` takes nothing and returns an opaque session.
    let session = unsafe { (entry.open)() };
    for req in calls {
        let mut out = RawBuf::empty();
        // SAFETY: `session` is live, `req` is readable and `out` is a
        // valid place for the result buffer.
        unsafe { (entry.call)(session, req.as_ptr(), req.len(), &mut out) };
        // SAFETY: the library filled `out` and has not freed it.
        let bytes = unsafe { out.as_slice() }.to_vec();
        // SAFETY: `out` came from this library and is freed once.
        unsafe { (entry.free)(out) };
        emit(frame::OUTCOME, &bytes);
        if bytes.first() != Some(&b'R') {
            // After a panic the instance may be half-updated: the case
            // ends here.
            break;
        }
    }
    // SAFETY: `session` came from `harness_open` and is closed once.
    unsafe { (entry.close)(session) };
    emit(frame::CASE_END, &[]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Seek;

    #[test]
    fn pending_frames_come_out_whole_and_in_order_even_past_the_room() {
        let pending = Pending::new().expect("an anonymous mapping");
        let mut file = tempfile::tempfile().unwrap();
        let big = |n: u8| frame(frame::OUTCOME, &vec![n; PENDING_BYTES * 3 / 5]);
        let mut expected = Vec::new();
        for f in [frame(frame::OUTCOME, b"R1"), big(1), big(2), frame(frame::CASE_END, &[]), big(3)] {
            pending.push(&mut file, &f);
            expected.extend_from_slice(&f);
        }
        // Too big for the room at all: written straight through, in order.
        let huge = frame(frame::OUTCOME, &vec![4; PENDING_BYTES + 1]);
        pending.push(&mut file, &huge);
        expected.extend_from_slice(&huge);
        pending.push(&mut file, &frame(frame::CASE_END, &[]));
        expected.extend_from_slice(&frame(frame::CASE_END, &[]));
        pending.drain(&mut file);
        let mut written = Vec::new();
        file.rewind().unwrap();
        file.read_to_end(&mut written).unwrap();
        assert!(written == expected, "{} bytes written, {} expected", written.len(), expected.len());
        // A scribbled count is clamped to the room, never read past it.
        pending.used().store(u64::MAX, std::sync::atomic::Ordering::Release);
        pending.drain(&mut file);
        assert_eq!(pending.used().load(std::sync::atomic::Ordering::Acquire), 0);
    }

    #[test]
    fn a_case_exit_round_trips() {
        let e = CaseExit { kind: b's', value: 11, elapsed: Duration::from_micros(1234), refused: Default::default() };
        assert_eq!(e.encode().len(), 13, "no refusals, the frame of before");
        let d = CaseExit::decode(&e.encode()).unwrap();
        assert_eq!((d.kind, d.value, d.elapsed), (b's', 11, Duration::from_micros(1234)));
        assert!(CaseExit::decode(&[1, 2]).is_none());
        let refused = confine::Refusals([3000, 0, 1, 0, 1]);
        let e = CaseExit { refused, ..e };
        assert_eq!(CaseExit::decode(&e.encode()).unwrap().refused, refused);
        assert!(CaseExit::decode(&e.encode()[..20]).is_none(), "refusals cut short");
    }
}
