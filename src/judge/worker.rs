//! The worker: the only place candidate code runs, in a process of its own.
//!
//! The harness re-executes itself as `harness __worker …` (see `sandbox`).
//! The worker limits itself, moves fd 1 out of the candidate's reach, loads
//! the library with `RTLD_NOW | RTLD_LOCAL`, checks the handshake, then runs
//! each case's calls on a thread with a large stack, writing one frame per
//! call to the protocol pipe as it goes. A crash therefore loses nothing
//! that had already happened: the parent knows exactly which call was
//! running.
//!
//! This is the only module with `unsafe`: calling into a foreign library.

use std::ffi::c_void;
use std::fs::File;
use std::io::Read;
use std::os::fd::AsFd;
use std::path::Path;

use harness_contract::{ABI_VERSION, Handshake, RawBuf};

use crate::judge::sandbox::frame;

type HandshakeFn = unsafe extern "C" fn() -> Handshake;
type SchemaFn = unsafe extern "C" fn(*mut RawBuf);
type OpenFn = unsafe extern "C" fn() -> *mut c_void;
type CallFn = unsafe extern "C" fn(*mut c_void, *const u8, usize, *mut RawBuf);
type CloseFn = unsafe extern "C" fn(*mut c_void);
type FreeFn = unsafe extern "C" fn(RawBuf);

/// Arguments of the hidden `__worker` subcommand.
pub struct WorkerArgs<'a> {
    pub lib: &'a Path,
    pub schema_hash: u64,
    pub memory_bytes: u64,
    pub stack_bytes: usize,
    pub cpu_seconds: u64,
}

/// Runs the worker; returns the process exit code.
pub fn main(args: WorkerArgs<'_>) -> i32 {
    let mut request = Vec::new();
    if std::io::stdin().read_to_end(&mut request).is_err() {
        return 3;
    }
    set_limits(&args);
    // Keep the real stdout for frames and point fd 1 at stderr, so that a
    // candidate's `println!` lands in the captured output instead of
    // corrupting the protocol.
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
        .name("candidate".into())
        .stack_size(args.stack_bytes)
        .spawn(move || run(&lib, hash, &request, &mut proto));
    match runner.map(|h| h.join()) {
        Ok(Ok(())) => 0,
        _ => 3,
    }
}

fn set_limits(args: &WorkerArgs<'_>) {
    use rustix::process::{Resource, Rlimit, setrlimit};
    let limit = |n: u64| Rlimit { current: Some(n), maximum: Some(n) };
    // Failures are ignored: a limit we cannot set is a weaker sandbox, not a
    // reason to refuse to judge.
    let _ = setrlimit(Resource::Core, limit(0));
    let _ = setrlimit(Resource::As, limit(args.memory_bytes));
    let _ = setrlimit(Resource::Cpu, limit(args.cpu_seconds));
}

fn send(proto: &mut File, tag: u8, body: &[u8]) {
    crate::judge::channel::send(proto, tag, body);
}

fn run(lib_path: &Path, expected_hash: u64, request: &[u8], proto: &mut File) {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

    // SAFETY: loading runs the library's initialisers; that is candidate
    // code, and running it in this disposable process is the point.
    let lib = match unsafe { Library::open(Some(lib_path), RTLD_NOW | RTLD_LOCAL) } {
        Ok(lib) => lib,
        Err(e) => {
            return send(proto, frame::LOAD_ERROR, format!("cannot load {}: {e}", lib_path.display()).as_bytes());
        }
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
                        format!(
                            "the library exports no `{name}`: end the solution's lib.rs with \
                             `harness_contract::export!(<problem>, <YourType>);`"
                        )
                        .as_bytes(),
                    );
                }
            }
        };
    }
    let handshake = symbol!(b"harness_handshake\0", HandshakeFn);
    let schema = symbol!(b"harness_schema\0", SchemaFn);
    let free = symbol!(b"harness_free\0", FreeFn);
    // SAFETY: `harness_handshake` takes nothing and returns a repr(C) struct.
    let hs = unsafe { handshake() };
    if hs.abi_version != ABI_VERSION || hs.schema_hash != expected_hash {
        let mut buf = RawBuf::empty();
        let text = if hs.abi_version == ABI_VERSION {
            // SAFETY: same ABI version, so `harness_schema` has this signature.
            unsafe { schema(&mut buf) };
            // SAFETY: the library filled `buf` and has not freed it.
            let text = String::from_utf8_lossy(unsafe { buf.as_slice() }).into_owned();
            // SAFETY: `buf` came from this library and is freed once.
            unsafe { free(buf) };
            text
        } else {
            String::new()
        };
        let mut body = Vec::new();
        body.extend_from_slice(&hs.abi_version.to_le_bytes());
        body.extend_from_slice(&hs.schema_hash.to_le_bytes());
        body.extend_from_slice(text.as_bytes());
        return send(proto, frame::MISMATCH, &body);
    }
    let open = symbol!(b"harness_open\0", OpenFn);
    let call = symbol!(b"harness_call\0", CallFn);
    let close = symbol!(b"harness_close\0", CloseFn);
    send(proto, frame::HELLO, &[]);

    let Ok(cases) = parse_request(request) else {
        return send(proto, frame::LOAD_ERROR, b"malformed request from the harness");
    };
    for calls in cases {
        // SAFETY: `harness_open` takes nothing and returns an opaque session.
        let session = unsafe { open() };
        for req in calls {
            let mut out = RawBuf::empty();
            // SAFETY: `session` is live, `req` is readable and `out` is a
            // valid place for the result buffer.
            unsafe { call(session, req.as_ptr(), req.len(), &mut out) };
            // SAFETY: the library filled `out` and has not freed it.
            let bytes = unsafe { out.as_slice() }.to_vec();
            // SAFETY: `out` came from this library and is freed once.
            unsafe { free(out) };
            send(proto, frame::OUTCOME, &bytes);
            if bytes.first() != Some(&b'R') {
                // After a panic the instance may be half-updated: the case
                // ends here.
                break;
            }
        }
        // SAFETY: `session` came from `harness_open` and is closed once.
        unsafe { close(session) };
        send(proto, frame::CASE_END, &[]);
    }
    send(proto, frame::DONE, &[]);
}

/// Splits a request into cases, each a list of encoded calls.
fn parse_request(request: &[u8]) -> Result<Vec<Vec<&[u8]>>, String> {
    let mut r = harness_contract::wire::Reader::new(request);
    let mut cases = Vec::new();
    for _ in 0..r.u32()? {
        let mut calls = Vec::new();
        for _ in 0..r.u32()? {
            let len = r.u32()? as usize;
            calls.push(r.take(len)?);
        }
        cases.push(calls);
    }
    Ok(cases)
}
