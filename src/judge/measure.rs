//! The measuring worker (`harness __measure`): builds one state of size `n`
//! in a library and measures it, in a process of its own.
//!
//! It loads the library as the case worker does, runs the setup calls,
//! reads the library's heap counters (`harness_heap`, installed by
//! `export!`), then runs the measured calls once to warm up and `reps`
//! times more, each batch timed with this thread's CPU clock
//! (`CLOCK_THREAD_CPUTIME_ID`): time the scheduler gives to other processes
//! is not counted, so a busy machine slows the wall clock, not the figure.
//! Calls go straight to `harness_call` from here, with no pipe in between,
//! so a per-call cost is the library's own plus a constant decode/encode.
//!
//! Like `worker`, this module calls into a foreign library, so it has
//! `unsafe`.

use std::ffi::c_void;
use std::fs::File;
use std::io::Read;
use std::os::fd::AsFd;
use std::path::Path;

use harness_contract::RawBuf;
use harness_contract::wire::{Reader, Writer};

use crate::judge::channel::frame;
use crate::judge::confine::{self, Protections};
use crate::judge::library::{self, LoadFailure};

/// After this much timed CPU (and two timed batches), stop repeating.
const SLOW_BATCHES_NS: u64 = 100_000_000;

/// What one measuring run found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Live heap bytes held after the setup, minus those before `new`.
    pub live_bytes: u64,
    /// Peak live bytes during the whole run.
    pub peak_bytes: u64,
    /// Allocations during the setup.
    pub allocations: u64,
    /// CPU time of the setup, in nanoseconds.
    pub setup_ns: u64,
    /// CPU time of each timed repetition of the measured calls.
    pub reps_ns: Vec<u64>,
    /// Live heap bytes the measured calls added (all their batches).
    pub measured_bytes: u64,
}

impl Stats {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        for v in [self.live_bytes, self.peak_bytes, self.allocations, self.setup_ns, self.measured_bytes] {
            w.buf.extend_from_slice(&v.to_le_bytes());
        }
        w.u32(self.reps_ns.len() as u32);
        for v in &self.reps_ns {
            w.buf.extend_from_slice(&v.to_le_bytes());
        }
        w.buf
    }

    pub fn decode(body: &[u8]) -> Result<Stats, String> {
        let mut r = Reader::new(body);
        let u64s = |r: &mut Reader<'_>| -> Result<u64, String> {
            Ok(u64::from_le_bytes(r.take(8)?.try_into().map_err(|_| "short")?))
        };
        let (live_bytes, peak_bytes, allocations, setup_ns) =
            (u64s(&mut r)?, u64s(&mut r)?, u64s(&mut r)?, u64s(&mut r)?);
        let measured_bytes = u64s(&mut r)?;
        let mut reps_ns = Vec::new();
        for _ in 0..r.u32()? {
            reps_ns.push(u64s(&mut r)?);
        }
        Ok(Stats { live_bytes, peak_bytes, allocations, setup_ns, reps_ns, measured_bytes })
    }
}

/// The request: the setup calls, then batches of measured calls (the
/// first one warms up, each later one is timed). Batches are drawn apart,
/// so a repetition does not find the state its predecessor left warm.
pub fn encode_request(setup: &[Vec<u8>], batches: &[Vec<Vec<u8>>]) -> Vec<u8> {
    let lists = std::iter::once(setup).chain(batches.iter().map(Vec::as_slice));
    let lists: Vec<&[Vec<u8>]> = lists.collect();
    crate::judge::channel::encode_lists(lists.into_iter().map(|l| l.iter().map(Vec::as_slice)))
}

type Lists<'a> = (Vec<&'a [u8]>, Vec<Vec<&'a [u8]>>);

fn decode_request(req: &[u8]) -> Result<Lists<'_>, String> {
    let mut lists = crate::judge::channel::decode_lists(req)?;
    if lists.is_empty() {
        return Err("no setup".into());
    }
    let setup = lists.remove(0);
    Ok((setup, lists))
}

/// Arguments of the hidden `__measure` subcommand.
pub struct MeasureArgs<'a> {
    pub lib: &'a Path,
    pub schema_hash: u64,
    pub memory_bytes: u64,
    pub stack_bytes: usize,
    pub cpu_seconds: u64,
}

/// Runs the measuring worker; returns the process exit code.
pub fn main(args: MeasureArgs<'_>) -> i32 {
    // Confined as a case worker is (see `confine`); what is in force is
    // what `harness doctor` reports for workers.
    if confine::detach().is_err() {
        return confine::ORPHANED;
    }
    let mut protections = Protections::default();
    if let Some(code) = confine::enter_pid_namespace_as_task(&mut protections) {
        return code;
    }
    let mut request = Vec::new();
    if std::io::stdin().read_to_end(&mut request).is_err() {
        return 3;
    }
    // Candidate code reads nothing: stdin is /dev/null from here on.
    if let Ok(null) = File::open("/dev/null") {
        let _ = rustix::stdio::dup2_stdin(&null);
    }
    {
        use rustix::process::{Resource, Rlimit, setrlimit};
        let limit = |n: u64| Rlimit { current: Some(n), maximum: Some(n) };
        let _ = setrlimit(Resource::Core, limit(0));
        let _ = setrlimit(Resource::As, limit(args.memory_bytes));
        let _ = setrlimit(Resource::Cpu, limit(args.cpu_seconds));
    }
    // The channel is close-on-exec: no program the candidate starts
    // inherits it.
    let Ok(proto) = rustix::io::fcntl_dupfd_cloexec(std::io::stdout().as_fd(), 3) else {
        return 3;
    };
    if rustix::stdio::dup2_stdout(std::io::stderr().as_fd()).is_err() {
        return 3;
    }
    let mut proto = File::from(proto);
    crate::judge::channel::adopt(&proto);
    let scratch = std::env::current_dir().unwrap_or_else(|_| "/nonexistent".into());
    confine::restrict(&mut protections, &scratch);
    // Before the library loads (its initialisers are candidate code): no
    // process, program, socket or io_uring. Best effort, as the rest.
    let _ = confine::refuse_quietly();
    let lib = args.lib.to_path_buf();
    let hash = args.schema_hash;
    let runner = std::thread::Builder::new()
        .name("measure".into())
        .stack_size(args.stack_bytes)
        .spawn(move || run(&lib, hash, &request, &mut proto));
    match runner.map(|h| h.join()) {
        Ok(Ok(())) => 0,
        _ => 3,
    }
}

fn send(proto: &mut File, tag: u8, body: &[u8]) {
    // Exits the worker if the candidate closed or replaced the channel.
    crate::judge::channel::send(proto, tag, body);
}

fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn run(lib_path: &Path, expected_hash: u64, request: &[u8], proto: &mut File) {
    let loaded = match library::load(lib_path, expected_hash) {
        Ok(loaded) => loaded,
        Err(LoadFailure::Error(why)) => return send(proto, frame::LOAD_ERROR, why.as_bytes()),
        Err(LoadFailure::Mismatch(..)) => {
            return send(proto, frame::LOAD_ERROR, b"the library is built for another contract");
        }
    };
    let library::Entry { open, call, free, heap, .. } = loaded.entry;
    send(proto, frame::HELLO, &[]);
    let Ok((setup, batches)) = decode_request(request) else {
        return send(proto, frame::LOAD_ERROR, b"malformed request from the harness");
    };

    // Runs one call; on anything but a return, reports it and says stop.
    let one = |session: *mut c_void, index: usize, req: &[u8], proto: &mut File| -> bool {
        let mut out = RawBuf::empty();
        // SAFETY: `session` is live, `req` is readable, `out` is writable.
        unsafe { call(session, req.as_ptr(), req.len(), &mut out) };
        // SAFETY: the library filled `out` and has not freed it.
        let bytes = unsafe { out.as_slice() };
        let ok = bytes.first() == Some(&b'R');
        if !ok {
            let mut body = (index as u32).to_le_bytes().to_vec();
            body.extend_from_slice(bytes);
            send(proto, frame::FAILED, &body);
        }
        // SAFETY: `out` came from this library and is freed once.
        unsafe { free(out) };
        ok
    };

    // SAFETY: `harness_heap` and `harness_open` take nothing.
    let before = unsafe { heap() };
    let session = unsafe { open() };
    let started = thread_cpu_ns();
    for (i, req) in setup.iter().enumerate() {
        if !one(session, i, req, proto) {
            return;
        }
    }
    let setup_ns = thread_cpu_ns() - started;
    // SAFETY: as above.
    let after = unsafe { heap() };
    let mut reps_ns = Vec::with_capacity(batches.len());
    if batches.iter().any(|b| !b.is_empty()) {
        for (rep, measured) in batches.iter().enumerate() {
            let started = thread_cpu_ns();
            for (i, req) in measured.iter().enumerate() {
                if !one(session, setup.len() + rep * measured.len() + i, req, proto) {
                    return;
                }
            }
            // The first batch warms caches and lazily built structures.
            if rep > 0 {
                reps_ns.push(thread_cpu_ns() - started);
            }
            // Slow batches are measured fewer times: noise matters for
            // small costs, and a slow one is slow in every repetition.
            if rep >= 2 && reps_ns.iter().sum::<u64>() > SLOW_BATCHES_NS {
                break;
            }
        }
    }
    // SAFETY: as above.
    let end = unsafe { heap() };
    let peak = end.peak;
    let stats = Stats {
        measured_bytes: end.live.saturating_sub(after.live),
        live_bytes: after.live.saturating_sub(before.live),
        peak_bytes: peak,
        allocations: after.allocations - before.allocations,
        setup_ns,
        reps_ns,
    };
    send(proto, frame::STATS, &stats.encode());
    send(proto, frame::DONE, &[]);
    // The process ends here, the state as it is: dropping it (thousands of
    // entries, in an unoptimised build) is not what is measured and would
    // only delay the answer by milliseconds. The cases run every drop.
    // SAFETY: `_exit` ends the process at once; nothing of it runs after.
    unsafe { libc::_exit(0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_and_requests_round_trip() {
        let s =
            Stats { live_bytes: 1, peak_bytes: 2, allocations: 3, setup_ns: 4, reps_ns: vec![5, 6], measured_bytes: 7 };
        assert_eq!(Stats::decode(&s.encode()).unwrap(), s);
        let req = encode_request(&[vec![1, 2]], &[vec![vec![3], vec![]], vec![vec![4]]]);
        let (a, b) = decode_request(&req).unwrap();
        assert_eq!(a, vec![&[1u8, 2][..]]);
        assert_eq!(b, vec![vec![&[3u8][..], &[][..]], vec![&[4u8][..]]]);
    }
}
