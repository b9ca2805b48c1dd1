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

use harness_contract::measure::HeapStats;
use harness_contract::wire::{Reader, Writer};
use harness_contract::{ABI_VERSION, Handshake, RawBuf};

use crate::judge::channel::frame;

type HandshakeFn = unsafe extern "C" fn() -> Handshake;
type OpenFn = unsafe extern "C" fn() -> *mut c_void;
type CallFn = unsafe extern "C" fn(*mut c_void, *const u8, usize, *mut RawBuf);
type CloseFn = unsafe extern "C" fn(*mut c_void);
type FreeFn = unsafe extern "C" fn(RawBuf);
type HeapFn = unsafe extern "C" fn() -> HeapStats;

/// Frame tags of the measuring worker, besides `frame::HELLO` and
/// `frame::LOAD_ERROR`.
pub mod tag {
    /// An operation did not return: `u32` index (setup calls first, then
    /// measured ones), then its encoded outcome.
    pub const FAILED: u8 = b'F';
    /// The measurements: see [`super::Stats::decode`].
    pub const STATS: u8 = b'S';
}

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
    let mut w = Writer::default();
    w.u32(1 + batches.len() as u32);
    for list in std::iter::once(setup).chain(batches.iter().map(Vec::as_slice)) {
        w.u32(list.len() as u32);
        for req in list {
            w.u32(req.len() as u32);
            w.buf.extend_from_slice(req);
        }
    }
    w.buf
}

type Lists<'a> = (Vec<&'a [u8]>, Vec<Vec<&'a [u8]>>);

fn decode_request(req: &[u8]) -> Result<Lists<'_>, String> {
    let mut r = Reader::new(req);
    let mut lists = Vec::new();
    for _ in 0..r.u32()? {
        let mut list = Vec::new();
        for _ in 0..r.u32()? {
            let len = r.u32()? as usize;
            list.push(r.take(len)?);
        }
        lists.push(list);
    }
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
    let mut request = Vec::new();
    if std::io::stdin().read_to_end(&mut request).is_err() {
        return 3;
    }
    {
        use rustix::process::{Resource, Rlimit, setrlimit};
        let limit = |n: u64| Rlimit { current: Some(n), maximum: Some(n) };
        let _ = setrlimit(Resource::Core, limit(0));
        let _ = setrlimit(Resource::As, limit(args.memory_bytes));
        let _ = setrlimit(Resource::Cpu, limit(args.cpu_seconds));
    }
    let Ok(proto) = rustix::io::dup(std::io::stdout().as_fd()) else {
        return 3;
    };
    if rustix::stdio::dup2_stdout(std::io::stderr().as_fd()).is_err() {
        return 3;
    }
    let mut proto = File::from(proto);
    crate::judge::channel::adopt(&proto);
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
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

    // SAFETY: loading runs the library's initialisers; that is candidate
    // code, and running it in this disposable process is the point.
    let lib = match unsafe { Library::open(Some(lib_path), RTLD_NOW | RTLD_LOCAL) } {
        Ok(lib) => lib,
        Err(e) => return send(proto, frame::LOAD_ERROR, format!("cannot load {}: {e}", lib_path.display()).as_bytes()),
    };
    macro_rules! symbol {
        ($name:literal, $ty:ty) => {
            // SAFETY: the symbol's type is fixed by `harness_contract::export!`,
            // and the ABI version is checked before any other symbol is called.
            match unsafe { lib.get::<$ty>($name) } {
                Ok(s) => *s,
                Err(_) => {
                    let name = String::from_utf8_lossy(&$name[..$name.len() - 1]).into_owned();
                    return send(
                        proto,
                        frame::LOAD_ERROR,
                        format!("the library exports no `{name}`: rebuild it against this harness's contract")
                            .as_bytes(),
                    );
                }
            }
        };
    }
    let handshake = symbol!(b"harness_handshake\0", HandshakeFn);
    // SAFETY: `harness_handshake` takes nothing and returns a repr(C) struct.
    let hs = unsafe { handshake() };
    if hs.abi_version != ABI_VERSION || hs.schema_hash != expected_hash {
        return send(proto, frame::LOAD_ERROR, b"the library is built for another contract");
    }
    let open = symbol!(b"harness_open\0", OpenFn);
    let call = symbol!(b"harness_call\0", CallFn);
    let close = symbol!(b"harness_close\0", CloseFn);
    let free = symbol!(b"harness_free\0", FreeFn);
    let heap = symbol!(b"harness_heap\0", HeapFn);
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
            send(proto, tag::FAILED, &body);
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
    send(proto, tag::STATS, &stats.encode());
    // SAFETY: `session` came from `harness_open` and is closed once.
    unsafe { close(session) };
    send(proto, frame::DONE, &[]);
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
