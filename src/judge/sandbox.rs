//! Running candidate code from the parent's side: spawn a worker (this
//! binary, `__worker`), feed it calls, collect its frames, enforce the wall
//! clock, and say how the process ended.
//!
//! The worker gets its own process group, so a timeout kills everything the
//! candidate started, and the group is killed after every run so no process
//! is left behind. stdout (frames) and stderr (the candidate's output) are
//! drained on their own threads: a worker blocked on a full pipe would
//! otherwise look like a timeout.

use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use harness_contract::wire::{self, Outcome};
use wait_timeout::ChildExt;

use crate::base::config::Limits;
use crate::problem::script::Call;

/// Frames from worker to parent: `u32` length, tag byte, body.
pub mod frame {
    /// The library loaded and the handshake matched.
    pub const HELLO: u8 = b'H';
    /// The handshake did not match: `u32` ABI, `u64` hash, schema text.
    pub const MISMATCH: u8 = b'M';
    /// The library could not be loaded or lacks a symbol: a message.
    pub const LOAD_ERROR: u8 = b'L';
    /// One call's encoded outcome.
    pub const OUTCOME: u8 = b'O';
    pub const CASE_END: u8 = b'C';
    pub const DONE: u8 = b'Z';

    pub fn frame(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut f = Vec::with_capacity(body.len() + 5);
        f.extend_from_slice(&((body.len() + 1) as u32).to_le_bytes());
        f.push(tag);
        f.extend_from_slice(body);
        f
    }
}

pub use frame::frame;

/// How a worker ended.
#[derive(Clone, Debug, PartialEq)]
pub enum End {
    /// Every case ran to its end (a panic ends a case, not the run).
    Completed,
    /// The wall-clock limit passed; the process group was killed.
    Timeout,
    /// Killed by a signal (abort, segfault, …) before finishing.
    Signal(i32),
    /// Exited on its own before finishing (e.g. `process::exit`).
    Exited(i32),
    /// The library is not for this contract.
    Mismatch { abi: u32, hash: u64, schema: String },
    /// The library could not be loaded.
    LoadError(String),
}

/// What one worker run produced.
#[derive(Clone, Debug)]
pub struct Run {
    /// Outcomes per case, in order; cases after a crash are absent.
    pub cases: Vec<Vec<Outcome>>,
    pub end: End,
    /// The candidate's stdout and stderr, interleaved, capped.
    pub output: String,
    /// Bytes of output beyond the cap that were dropped.
    pub output_dropped: usize,
    pub elapsed: Duration,
}

/// Everything a worker needs besides the calls.
#[derive(Clone, Debug)]
pub struct Target {
    pub lib: PathBuf,
    pub schema_hash: u64,
    pub limits: Limits,
}

/// Encodes the request a worker reads on stdin.
pub fn encode(cases: &[&[Call]]) -> Vec<u8> {
    let mut w = wire::Writer::default();
    w.u32(cases.len() as u32);
    for calls in cases {
        w.u32(calls.len() as u32);
        for c in *calls {
            let req = wire::encode_request(&c.op, &c.args);
            w.u32(req.len() as u32);
            w.buf.extend_from_slice(&req);
        }
    }
    w.buf
}

/// Runs `cases` in one worker. The wall-clock limit is the case limit
/// times the number of cases.
pub fn run(target: &Target, cases: &[&[Call]]) -> Result<Run> {
    run_limited(target, cases, target.limits.case_timeout * (cases.len().max(1) as u32))
}

/// Runs `cases` in one worker with an explicit wall-clock limit.
pub fn run_limited(target: &Target, cases: &[&[Call]], limit: Duration) -> Result<Run> {
    // Looked up once: every worker of every run re-executes this binary.
    static EXE: std::sync::OnceLock<std::io::Result<PathBuf>> = std::sync::OnceLock::new();
    let exe = EXE
        .get_or_init(std::env::current_exe)
        .as_ref()
        .map_err(|e| anyhow::anyhow!("cannot find the harness executable: {e}"))?;
    run_with(exe, target, cases, limit)
}

pub fn run_with(exe: &Path, target: &Target, cases: &[&[Call]], limit: Duration) -> Result<Run> {
    let cpu_seconds = limit.as_secs() + 2;
    let started = Instant::now();
    let mut child = Command::new(exe)
        .arg("__worker")
        .arg(&target.lib)
        .arg(format!("{:016x}", target.schema_hash))
        .arg(target.limits.memory_bytes.to_string())
        .arg(target.limits.stack_bytes.to_string())
        .arg(cpu_seconds.to_string())
        .env("RUST_BACKTRACE", "0")
        .env("MALLOC_ARENA_MAX", "2")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot start a worker ({})", exe.display()))?;
    let pgid = rustix::process::Pid::from_raw(child.id() as i32).context("a worker without a pid")?;

    let mut stdout = child.stdout.take().expect("piped");
    let frames = std::thread::Builder::new()
        .name("worker-frames".into())
        .spawn(move || {
            let mut buf = Vec::new();
            let _ = stdout.read_to_end(&mut buf);
            buf
        })
        .context("cannot start a thread")?;
    let mut stderr = child.stderr.take().expect("piped");
    let cap = target.limits.output_bytes;
    let output = std::thread::Builder::new()
        .name("worker-output".into())
        .spawn(move || {
            let mut kept = Vec::new();
            let mut dropped = 0usize;
            let mut chunk = [0u8; 8192];
            // Keep draining past the cap: a blocked writer would stall.
            while let Ok(n) = stderr.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                let room = cap.saturating_sub(kept.len()).min(n);
                kept.extend_from_slice(&chunk[..room]);
                dropped += n - room;
            }
            (kept, dropped)
        })
        .context("cannot start a thread")?;

    let request = encode(cases);
    if let Some(mut stdin) = child.stdin.take() {
        // A worker that died at once closes its end; that shows in its status.
        let _ = stdin.write_all(&request);
    }

    let status = child.wait_timeout(limit).context("cannot wait for a worker")?;
    let timed_out = status.is_none();
    let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
    let status = match status {
        Some(s) => s,
        None => child.wait().context("cannot wait for a worker")?,
    };
    let elapsed = started.elapsed();
    let frames = frames.join().unwrap_or_default();
    let (kept, output_dropped) = output.join().unwrap_or_default();

    let (cases_out, done, early) = parse_frames(&frames);
    let end = match early {
        Some(end) => end,
        None if done => End::Completed,
        None if timed_out => End::Timeout,
        None => match (status.signal(), status.code()) {
            (Some(sig), _) => End::Signal(sig),
            (None, Some(code)) => End::Exited(code),
            (None, None) => End::Exited(-1),
        },
    };
    Ok(Run { cases: cases_out, end, output: String::from_utf8_lossy(&kept).into_owned(), output_dropped, elapsed })
}

/// Splits the frame stream. Returns the outcomes per case, whether the
/// worker said it was done, and an early end (mismatch, load error).
fn parse_frames(mut data: &[u8]) -> (Vec<Vec<Outcome>>, bool, Option<End>) {
    let mut cases: Vec<Vec<Outcome>> = vec![Vec::new()];
    let mut done = false;
    while data.len() >= 4 {
        let len = u32::from_le_bytes(data[..4].try_into().unwrap()) as usize;
        if len == 0 || data.len() < 4 + len {
            break;
        }
        let (tag, body) = (data[4], &data[5..4 + len]);
        data = &data[4 + len..];
        match tag {
            frame::OUTCOME => {
                let outcome = wire::decode_outcome(&mut wire::Reader::new(body))
                    .unwrap_or_else(|e| Outcome::Rejected(format!("garbled outcome: {e}")));
                cases.last_mut().expect("never empty").push(outcome);
            }
            frame::CASE_END => cases.push(Vec::new()),
            frame::DONE => done = true,
            frame::MISMATCH if body.len() >= 12 => {
                let abi = u32::from_le_bytes(body[..4].try_into().unwrap());
                let hash = u64::from_le_bytes(body[4..12].try_into().unwrap());
                let schema = String::from_utf8_lossy(&body[12..]).into_owned();
                return (Vec::new(), false, Some(End::Mismatch { abi, hash, schema }));
            }
            frame::LOAD_ERROR => {
                return (Vec::new(), false, Some(End::LoadError(String::from_utf8_lossy(body).into_owned())));
            }
            _ => {}
        }
    }
    // The last entry is the case in progress (or an empty one after the
    // final CASE_END).
    if cases.last().is_some_and(|c| c.is_empty()) {
        cases.pop();
    }
    (cases, done, None)
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
    fn frames_split_into_cases() {
        let mut w = wire::Writer::default();
        wire::encode_outcome(&mut w, &Outcome::Returned(harness_contract::Value::Int(1)));
        let mut data = frame(frame::HELLO, &[]);
        data.extend(frame(frame::OUTCOME, &w.buf));
        data.extend(frame(frame::CASE_END, &[]));
        data.extend(frame(frame::OUTCOME, &w.buf));
        // The second case never ended: the worker crashed in it.
        let (cases, done, early) = parse_frames(&data);
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[1].len(), 1);
        assert!(!done);
        assert!(early.is_none());
        data.extend(frame(frame::CASE_END, &[]));
        data.extend(frame(frame::DONE, &[]));
        let (cases, done, _) = parse_frames(&data);
        assert_eq!((cases.len(), done), (2, true));
    }

    #[test]
    fn a_truncated_frame_is_ignored() {
        let mut data = frame(frame::CASE_END, &[]);
        data.extend_from_slice(&[9, 0, 0, 0, b'O']);
        let (cases, done, _) = parse_frames(&data);
        assert_eq!((cases.len(), done), (1, false));
    }
}
