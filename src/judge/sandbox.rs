//! Running candidate code from the parent's side: spawn a worker (this
//! binary, `__worker`), feed it calls, collect its frames, enforce the wall
//! clock, and say how each case ended.
//!
//! The worker leads a session of its own (no controlling terminal; its
//! process group is killed after every run), dies with the thread that
//! started it (`PR_SET_PDEATHSIG`), runs in a fresh scratch folder that is
//! removed afterwards, and confines itself further (see `confine`). It
//! judges each case in a process of its own and reports how that process
//! ended, so the parent only enforces a backstop for the whole run. Its
//! stdout (frames) and stderr are read in one loop here, which stops a
//! short, fixed time after the worker has ended: something the candidate
//! started that still holds a pipe cannot hang the harness.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use harness_contract::wire::{self, Outcome};

use crate::base::config::Limits;
use crate::judge::channel;
use crate::judge::confine::{self, Protections, Refusals};
use crate::problem::script::Call;

pub use crate::judge::channel::frame;
pub use frame::frame;

/// How a case (or a whole worker) ended.
#[derive(Clone, Debug, PartialEq)]
pub enum End {
    /// Every call ran to its end (a panic ends a case, not the run).
    Completed,
    /// The wall-clock limit passed; the process was killed.
    Timeout,
    /// Killed by a signal (abort, segfault, …) before finishing.
    Signal(i32),
    /// Exited on its own before finishing (e.g. `process::exit`).
    Exited(i32),
    /// The library is not for this contract.
    Mismatch { abi: u32, hash: u64, schema: String },
    /// The library could not be loaded.
    LoadError(String),
    /// The result channel carried what no worker writes, or was closed or
    /// replaced: the candidate wrote into it (see `channel`).
    Tampered(String),
    /// The results were well-formed but beyond the channel's limits.
    TooLarge(String),
}

/// One case, run in a process of its own.
#[derive(Clone, Debug)]
pub struct CaseRun {
    pub outcomes: Vec<Outcome>,
    pub end: End,
    /// The case's stdout and stderr, interleaved, capped.
    pub output: String,
    /// Bytes of output beyond the cap that were dropped.
    pub output_dropped: usize,
    pub elapsed: Duration,
    /// What the sandbox refused the case (sockets, processes, disk).
    pub refused: Refusals,
}

/// What one worker run produced.
#[derive(Clone, Debug)]
pub struct Run {
    /// The cases that were judged, in order. When the worker itself ended
    /// early, the case it was running is last, with the worker's end; the
    /// cases after it are absent.
    pub cases: Vec<CaseRun>,
    /// How the worker ended.
    pub end: End,
    /// What the worker printed outside any case (the library's
    /// initialisers), capped.
    pub output: String,
    pub elapsed: Duration,
    /// What confinement the worker reported.
    pub protections: Option<Protections>,
}

impl Run {
    /// Case `i`; a case the worker never reached takes the worker's end.
    pub fn case(&self, i: usize) -> CaseRun {
        self.cases.get(i).cloned().unwrap_or_else(|| CaseRun {
            outcomes: Vec::new(),
            end: self.end.clone(),
            output: self.output.clone(),
            output_dropped: 0,
            elapsed: self.elapsed,
            refused: Refusals::default(),
        })
    }
}

/// Everything a worker needs besides the calls.
#[derive(Clone, Debug)]
pub struct Target {
    pub lib: PathBuf,
    pub schema_hash: u64,
    pub limits: Limits,
    /// The cases run one after another in the worker, without a process
    /// each. For the problem's reference computing expectations (half the
    /// forks of a `check`; `harness audit` judges the reference a process
    /// per case, so a reference whose statics leak is still caught), and
    /// for shrinking's search, whose final case is judged again in a
    /// process of its own before it is shown.
    pub shared: bool,
    /// Ops the contract runs on a small stack of their own (name, KiB):
    /// there a stack overflow is a SIGSEGV, since a library's own std
    /// cannot report it.
    pub small_stacks: Vec<(String, u32)>,
}

/// Encodes the request a worker reads on stdin.
pub fn encode(cases: &[&[Call]]) -> Vec<u8> {
    let encoded: Vec<Vec<Vec<u8>>> =
        cases.iter().map(|calls| calls.iter().map(|c| wire::encode_request(&c.op, &c.args)).collect()).collect();
    channel::encode_lists(encoded.iter().map(|calls| calls.iter().map(Vec::as_slice)))
}

/// Runs `cases` in one worker, each case in a process of its own under
/// the case time limit.
pub fn run(target: &Target, cases: &[&[Call]]) -> Result<Run> {
    run_cancellable(target, cases, None)
}

/// Like [`run`]; a set `cancel` kills the worker within a few
/// milliseconds (the run then holds the cases finished so far).
pub fn run_cancellable(target: &Target, cases: &[&[Call]], cancel: Option<&AtomicBool>) -> Result<Run> {
    run_with(exe()?, target, cases, cancel)
}

static EXE: std::sync::OnceLock<std::io::Result<PathBuf>> = std::sync::OnceLock::new();

/// The executable every worker (case and measuring alike) re-executes:
/// this binary, looked up once, unless [`use_worker_exe`] named another.
pub fn exe() -> Result<&'static Path> {
    EXE.get_or_init(std::env::current_exe)
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(|e| anyhow::anyhow!("cannot find the harness executable: {e}"))
}

/// Names the harness binary workers re-execute, for a test that judges
/// through the library (its own executable has no worker subcommands).
/// Before any worker starts; a later call changes nothing.
pub fn use_worker_exe(path: &Path) {
    let _ = EXE.set(Ok(path.to_path_buf()));
}

/// What a worker on this machine is confined by: a worker that loads
/// nothing reports it.
pub fn protections(limits: &Limits) -> Result<Protections> {
    let target = Target {
        lib: PathBuf::from("-"),
        schema_hash: 0,
        limits: limits.clone(),
        shared: false,
        small_stacks: Vec::new(),
    };
    let run = run(&target, &[])?;
    run.protections.with_context(|| format!("the worker reported no sandbox ({:?}): {}", run.end, run.output))
}

/// After the worker has ended, how long its pipes are still read.
const PIPE_GRACE: Duration = Duration::from_millis(100);
/// How often a run looks at its cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(2);

/// A fresh folder that is the worker's cwd and its only writable place;
/// removed with whatever the candidate wrote into it.
pub(crate) struct Scratch(pub(crate) PathBuf);

impl Scratch {
    pub(crate) fn new() -> Result<Scratch> {
        static N: AtomicU64 = AtomicU64::new(0);
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(sweep_scratch);
        let path = std::env::temp_dir().join(format!(
            "harness-scratch-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .with_context(|| format!("cannot create a scratch folder {}", path.display()))?;
        Ok(Scratch(path))
    }
}

use std::os::unix::fs::DirBuilderExt;

/// Removes the scratch folders of harness processes that are gone (killed
/// before they could remove their own), once per process.
fn sweep_scratch() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix("harness-scratch-").and_then(|rest| rest.split('-').next()) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// How a worker process ended, and what it wrote: the one way every worker
/// (the case worker, `__worker`, and the measuring worker, `__measure`) is
/// started, fed, read and stopped.
pub(crate) struct Ended {
    /// Its stdout, the result channel, up to the cap it was given.
    pub frames: Vec<u8>,
    /// Its stderr, up to the cap it was given; `output_dropped` the rest.
    pub output: Vec<u8>,
    pub output_dropped: usize,
    pub status: std::process::ExitStatus,
    /// It ran past its wall-clock limit and was killed.
    pub timed_out: bool,
    /// `cancel` was set and it was killed.
    pub cancelled: bool,
    /// From the start to its exit.
    pub wall: Duration,
    /// From the start to the end of its output (its pipes closed).
    pub elapsed: Duration,
}

/// What to start: `harness <subcommand> <args…>`, and the request written
/// to its stdin.
pub(crate) struct Spawn<'a> {
    pub subcommand: &'a str,
    pub args: Vec<std::ffi::OsString>,
    pub request: Vec<u8>,
    /// Wall clock for the whole process.
    pub limit: Duration,
    pub cancel: Option<&'a AtomicBool>,
    /// Stdout bytes kept; past them the worker is killed (the channel
    /// parser refuses such a run anyway).
    pub frames_cap: usize,
    /// Stderr bytes kept; the rest is counted and dropped.
    pub output_cap: usize,
}

/// A poll's timeout: until `deadline`, or [`CANCEL_POLL`] at most when
/// `often`.
fn until(deadline: Instant, now: Instant, often: bool) -> rustix::event::Timespec {
    let mut wait = deadline.saturating_duration_since(now);
    if often {
        wait = wait.min(CANCEL_POLL);
    }
    rustix::event::Timespec { tv_sec: wait.as_secs() as i64, tv_nsec: wait.subsec_nanos() as i64 }
}

/// The worker's command: its subcommand and arguments, a scratch folder
/// for its cwd and TMPDIR, its three pipes, and confined at exec.
fn worker_command(exe: &Path, spawn: &Spawn<'_>, scratch: &Path) -> Command {
    let mut cmd = Command::new(exe);
    cmd.arg(spawn.subcommand)
        .args(&spawn.args)
        .env("RUST_BACKTRACE", "0")
        .env("MALLOC_ARENA_MAX", "2")
        .env("TMPDIR", scratch)
        .current_dir(scratch)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    confine::name_parent(&mut cmd);
    cmd
}

/// Writes the request to the worker's stdin: at once when it fits a pipe,
/// else from a thread (joined by the caller), while its output is read.
/// Dropping stdin closes it: the worker reads to the end.
fn send_request(
    stdin: Option<std::process::ChildStdin>,
    request: Vec<u8>,
) -> Result<Option<std::thread::JoinHandle<()>>> {
    use std::io::Write;
    Ok(match stdin {
        // A request that fits a pipe is written at once; a larger one from
        // a thread, while its output is read here.
        Some(mut stdin) if request.len() <= 64 << 10 => {
            let _ = stdin.write_all(&request);
            None
        }
        Some(mut stdin) => Some(
            std::thread::Builder::new()
                .name("worker-request".into())
                .spawn(move || {
                    let _ = stdin.write_all(&request);
                })
                .context("cannot start a thread")?,
        ),
        None => None,
    })
}

/// Kills a worker that has not ended, with its process group, and waits for
/// it. Before it leads its own group (`confine::detach`, its first step)
/// the group kill misses it, so it is killed by pid too: it is not reaped
/// yet, so the pid is still its own.
fn stop(child: &mut std::process::Child, pid: rustix::process::Pid) -> Result<std::process::ExitStatus> {
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    let _ = child.kill();
    child.wait().context("cannot wait for a worker")
}

/// Starts a worker in a scratch folder of its own (its cwd, `TMPDIR`, its
/// only writable place, removed afterwards), in a session of its own and
/// confined by itself (`confine::detach` first); writes its request from a thread
/// (so a worker that writes before it has read everything never blocks on
/// a full pipe); reads its stdout and stderr with caps; and kills its
/// process group at the limit, on cancel, or once it has ended: nothing it
/// started outlives it.
pub(crate) fn drive(exe: &Path, spawn: Spawn<'_>) -> Result<Ended> {
    use rustix::event::{PollFd, PollFlags, poll};

    let scratch = Scratch::new()?;
    let started = Instant::now();
    let mut cmd = worker_command(exe, &spawn, &scratch.0);
    let mut child = cmd.spawn().with_context(|| format!("cannot start a worker ({})", exe.display()))?;
    let pid = rustix::process::Pid::from_raw(child.id() as i32).context("a worker without a pid")?;
    let kill = || {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    };
    let writer = send_request(child.stdin.take(), spawn.request)?;
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let pidfd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok();
    let mut frames = Vec::new();
    let mut output = Vec::new();
    let mut output_dropped = 0usize;
    let (mut out_open, mut err_open) = (true, true);
    let mut status = None;
    let mut timed_out = false;
    let mut cancelled = false;
    let mut ended_at: Option<Instant> = None;
    let mut worker_ended = false;
    let limit = spawn.limit;
    loop {
        // With a pidfd, only look when it says the worker has ended.
        if status.is_none()
            && (pidfd.is_none() || worker_ended)
            && let Ok(Some(s)) = child.try_wait()
        {
            status = Some(s);
        }
        let now = Instant::now();
        if status.is_some() {
            let at = *ended_at.get_or_insert(now);
            if !(out_open || err_open) || now >= at + PIPE_GRACE {
                break;
            }
        } else if now >= started + limit {
            timed_out = true;
            status = Some(stop(&mut child, pid)?);
            continue;
        } else if spawn.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            cancelled = true;
            status = Some(stop(&mut child, pid)?);
            continue;
        }
        // Without a pidfd, or with a cancel flag, look again every
        // CANCEL_POLL.
        let often = spawn.cancel.is_some() || (pidfd.is_none() && status.is_none());
        let timeout = until(ended_at.map_or(started + limit, |at| at + PIPE_GRACE), now, often);
        let (mut which, mut fds) = (Vec::with_capacity(3), Vec::with_capacity(3));
        if out_open {
            which.push(0);
            fds.push(PollFd::new(&stdout, PollFlags::IN));
        }
        if err_open {
            which.push(1);
            fds.push(PollFd::new(&stderr, PollFlags::IN));
        }
        if let (Some(fd), None) = (&pidfd, &status) {
            which.push(2);
            fds.push(PollFd::new(fd, PollFlags::IN));
        }
        let _ = poll(&mut fds, Some(&timeout));
        let ready: Vec<usize> =
            which.iter().zip(&fds).filter(|(_, p)| !p.revents().is_empty()).map(|(i, _)| *i).collect();
        drop(fds);
        for i in ready {
            match i {
                0 => {
                    out_open = read_into(&stdout, &mut frames, &mut 0, usize::MAX);
                    // More than a run may carry: its reader refuses it; no
                    // need to read (or keep) the rest.
                    if frames.len() > spawn.frames_cap {
                        kill();
                        out_open = false;
                    }
                }
                1 => err_open = read_into(&stderr, &mut output, &mut output_dropped, spawn.output_cap),
                _ => worker_ended = true,
            }
        }
    }
    let wall = ended_at.map_or_else(|| started.elapsed(), |at| at.duration_since(started));
    // Nothing the worker started outlives the run.
    kill();
    let status = status.expect("the loop ends with a status");
    if let Some(w) = writer {
        let _ = w.join();
    }
    let elapsed = started.elapsed();
    drop(scratch);
    Ok(Ended { frames, output, output_dropped, status, timed_out, cancelled, wall, elapsed })
}

pub fn run_with(exe: &Path, target: &Target, cases: &[&[Call]], cancel: Option<&AtomicBool>) -> Result<Run> {
    let limits = &target.limits;
    // The worker enforces each case's limit; this backstop covers loading
    // the library and the worker itself.
    let limit = limits.case_timeout * (cases.len() as u32 + 1) + Duration::from_secs(1);
    let cpu_seconds = limits.case_timeout.as_secs() + 2;
    let args: Vec<std::ffi::OsString> = vec![
        target.lib.clone().into(),
        format!("{:016x}", target.schema_hash).into(),
        limits.memory_bytes.to_string().into(),
        limits.stack_bytes.to_string().into(),
        cpu_seconds.to_string().into(),
        limits.case_timeout.as_millis().to_string().into(),
        limits.output_bytes.to_string().into(),
        (if target.shared { "shared" } else { "fork" }).into(),
    ];
    let Ended { frames, output, output_dropped, status, timed_out, cancelled, elapsed, .. } = drive(
        exe,
        Spawn {
            subcommand: "__worker",
            args,
            request: encode(cases),
            limit,
            cancel,
            frames_cap: channel::MAX_RUN_BYTES + 5,
            output_cap: limits.output_bytes,
        },
    )?;

    let shape: Vec<usize> = cases.iter().map(|c| c.len()).collect();
    let stream = channel::read(&frames[..], &shape, || {});
    let end = end_of(&stream, timed_out, status.signal(), status.code());
    let protections = stream.sandbox.as_deref().and_then(|j| serde_json::from_slice(j).ok());
    let in_progress = stream.cases.len() > stream.ends.len();
    let mut outcomes = stream.cases.into_iter();
    let mut case_runs: Vec<CaseRun> = stream
        .ends
        .into_iter()
        .map(|e| CaseRun {
            outcomes: outcomes.next().unwrap_or_default(),
            end: match e.kind {
                b't' => End::Timeout,
                b's' => End::Signal(e.value),
                _ if e.value == 0 && e.finished => End::Completed,
                _ if e.value == channel::LOST_EXIT => End::Tampered("the result channel was closed or replaced".into()),
                _ => End::Exited(e.value),
            },
            output: e.output,
            output_dropped: e.output_dropped,
            elapsed: e.elapsed,
            refused: e.refused,
        })
        .collect();
    // The case in progress when the worker itself ended (or its stream was
    // refused) takes the worker's end.
    if !stream.done
        && !cancelled
        && !matches!(end, End::Mismatch { .. } | End::LoadError(_))
        && case_runs.len() < cases.len()
        && (in_progress || matches!(end, End::Tampered(_) | End::TooLarge(_)))
    {
        case_runs.push(CaseRun {
            outcomes: outcomes.next().unwrap_or_default(),
            end: end.clone(),
            output: String::from_utf8_lossy(&output).into_owned(),
            output_dropped,
            elapsed,
            refused: Refusals::default(),
        });
    }
    Ok(Run { cases: case_runs, end, output: String::from_utf8_lossy(&output).into_owned(), elapsed, protections })
}

/// How a run ended, from its frames and its exit status. A broken stream
/// outranks everything: what it said cannot be believed.
fn end_of(stream: &channel::Stream, timed_out: bool, signal: Option<i32>, code: Option<i32>) -> End {
    match (&stream.broken, &stream.mismatch, &stream.load_error) {
        (Some(channel::Broken::Tampered(why)), ..) => return End::Tampered(why.clone()),
        (Some(channel::Broken::TooLarge(why)), ..) => return End::TooLarge(why.clone()),
        (None, Some((abi, hash, schema)), _) => {
            return End::Mismatch { abi: *abi, hash: *hash, schema: schema.clone() };
        }
        (None, None, Some(e)) => return End::LoadError(e.clone()),
        _ => {}
    }
    match (signal, code) {
        _ if stream.done => End::Completed,
        _ if timed_out => End::Timeout,
        (Some(sig), _) => End::Signal(sig),
        (None, Some(channel::LOST_EXIT)) => End::Tampered("the result channel was closed or replaced".into()),
        // The worker's own exit after a frame cut short: a candidate wrote
        // a partial frame that swallowed the worker's last ones.
        (None, Some(0)) if stream.incomplete => End::Tampered("the stream ended inside a frame".into()),
        (None, Some(code)) => End::Exited(code),
        (None, None) => End::Exited(-1),
    }
}

/// Reads what is there into `kept` up to `cap`; returns whether the pipe
/// is still open.
pub(crate) fn read_into(fd: &impl std::os::fd::AsFd, kept: &mut Vec<u8>, dropped: &mut usize, cap: usize) -> bool {
    let mut chunk = [0u8; 16384];
    match rustix::io::read(fd, &mut chunk) {
        Ok(0) => false,
        Ok(n) => {
            let room = cap.saturating_sub(kept.len()).min(n);
            kept.extend_from_slice(&chunk[..room]);
            *dropped += n - room;
            true
        }
        Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => true,
        Err(_) => false,
    }
}

/// A short name for a signal number.
pub fn signal_name(sig: i32) -> String {
    match sig {
        4 => "SIGILL".into(),
        5 => "SIGTRAP".into(),
        6 => "SIGABRT".into(),
        7 => "SIGBUS".into(),
        8 => "SIGFPE".into(),
        9 => "SIGKILL".into(),
        11 => "SIGSEGV".into(),
        13 => "SIGPIPE".into(),
        15 => "SIGTERM".into(),
        24 => "SIGXCPU".into(),
        n => format!("signal {n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_channel_or_a_cut_frame_is_tampering_not_an_exit() {
        let s = channel::Stream::default();
        assert_eq!(end_of(&s, false, None, Some(0)), End::Exited(0), "process::exit(0) stays `exited`");
        assert!(matches!(end_of(&s, false, None, Some(channel::LOST_EXIT)), End::Tampered(_)));
        let cut = channel::Stream { incomplete: true, ..Default::default() };
        assert!(matches!(end_of(&cut, false, None, Some(0)), End::Tampered(_)));
        assert_eq!(end_of(&cut, false, Some(9), None), End::Signal(9), "killed mid-write");
        let broken = channel::Stream {
            done: true,
            broken: Some(channel::Broken::Tampered("junk".into())),
            ..Default::default()
        };
        assert_eq!(end_of(&broken, false, None, Some(0)), End::Tampered("junk".into()), "never a pass");
    }
}
