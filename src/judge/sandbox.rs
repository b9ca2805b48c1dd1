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
use crate::judge::channel;
use crate::problem::script::Call;

pub use crate::judge::channel::frame;
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
    /// The result channel carried what no worker writes, or was closed or
    /// replaced: the candidate wrote into it (see `channel`).
    Tampered(String),
    /// The results were well-formed but beyond the channel's limits.
    TooLarge(String),
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

    let stdout = child.stdout.take().expect("piped");
    let shape: Vec<usize> = cases.iter().map(|c| c.len()).collect();
    let frames = std::thread::Builder::new()
        .name("worker-frames".into())
        .spawn(move || {
            channel::read(stdout, &shape, || {
                let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
            })
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
    let stream = frames.join().unwrap_or_default();
    let (kept, output_dropped) = output.join().unwrap_or_default();
    let end = end_of(&stream, timed_out, status.signal(), status.code());
    Ok(Run { cases: stream.cases, end, output: String::from_utf8_lossy(&kept).into_owned(), output_dropped, elapsed })
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
