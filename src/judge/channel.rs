//! The result channel: the pipe a worker writes frames to and the parent
//! reads verdicts from. Candidate code runs in the writing process, so the
//! parent reads this stream as hostile input.
//!
//! Reading (parent side) is bounded: one frame at a time, at most
//! [`MAX_FRAME`] bytes each and [`MAX_RUN_BYTES`] in all, values decoded
//! against a budget of [`MAX_RUN_VALUES`] and nested at most
//! [`wire::MAX_DEPTH`] deep, and the frames must come in the one order a
//! worker sends them (`S`, `H`, then per case `O`… `C`? `W` `E`, then `Z`;
//! or `S` and a single `M` or `L`). Anything else means the candidate wrote into the channel: the
//! rest is drained unread and the run ends as [`Broken::Tampered`], never a
//! pass. The parent never keeps more than the limits, whatever is written.
//!
//! Writing (worker side) checks before every frame that the channel is
//! still the pipe the worker was given: a candidate that closed the
//! descriptor or `dup2`'d something over it makes the worker exit with
//! [`LOST_EXIT`], which the parent reports as tampering rather than as an
//! `exit(0)`.

use std::fs::File;
use std::io::{Read, Write};
use std::sync::OnceLock;

use harness_contract::wire::{self, Outcome};

use crate::judge::confine::Refusals;

/// Frames from worker to parent: `u32` length (tag and body), tag byte, body.
pub mod frame {
    /// The library loaded and the handshake matched.
    pub const HELLO: u8 = b'H';
    /// The handshake did not match: `u32` ABI, `u64` hash, schema text.
    pub const MISMATCH: u8 = b'M';
    /// The library could not be loaded or lacks a symbol: a message.
    pub const LOAD_ERROR: u8 = b'L';
    /// One call's encoded outcome.
    pub const OUTCOME: u8 = b'O';
    /// The case's process ran every call and closed the instance.
    pub const CASE_END: u8 = b'C';
    /// What confinement is in force: JSON of `confine::Protections`.
    pub const SANDBOX: u8 = b'S';
    /// The case's output: `u64` bytes dropped beyond the cap, then the bytes.
    pub const OUTPUT: u8 = b'W';
    /// How the case's process ended (`worker::CaseExit`); closes the case.
    pub const EXIT: u8 = b'E';
    pub const DONE: u8 = b'Z';
    /// The measuring worker (`measure`): an operation did not return:
    /// `u32` index (setup calls first, then measured ones), then its
    /// encoded outcome.
    pub const FAILED: u8 = b'F';
    /// The measuring worker's measurements (`measure::Stats`).
    pub const STATS: u8 = b'T';

    pub fn frame(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut f = Vec::with_capacity(body.len() + 5);
        f.extend_from_slice(&((body.len() + 1) as u32).to_le_bytes());
        f.push(tag);
        f.extend_from_slice(body);
        f
    }
}

/// Largest frame accepted: one call's outcome (or the schema text).
pub const MAX_FRAME: usize = 16 << 20;
/// Bytes of frames accepted from one worker run.
pub const MAX_RUN_BYTES: usize = 64 << 20;
/// Values decoded from one worker run (each costs ~32 bytes in memory).
pub const MAX_RUN_VALUES: usize = 2 << 20;

/// The exit code of a worker whose channel was closed or replaced by the
/// code it ran.
pub const LOST_EXIT: i32 = 87;

/// What the stream carried that the parent refuses.
#[derive(Clone, Debug, PartialEq)]
pub enum Broken {
    /// The bytes are not what a worker writes.
    Tampered(String),
    /// Well-formed, but more than the channel carries.
    TooLarge(String),
}

/// How one case's process ended, as the worker reported it.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseEnd {
    /// The process sent its case-end frame: every call ran.
    pub finished: bool,
    /// `worker::CaseExit`'s kind: `x` exited, `s` signal, `t` timeout.
    pub kind: u8,
    pub value: i32,
    pub elapsed: std::time::Duration,
    pub output: String,
    pub output_dropped: usize,
    /// What the sandbox refused the case (`confine::Refusals`).
    pub refused: crate::judge::confine::Refusals,
}

/// Largest sandbox report accepted.
const MAX_SANDBOX: usize = 64 << 10;

/// What a run's frames said.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stream {
    /// Outcomes per case, in order; the last may be unfinished.
    pub cases: Vec<Vec<Outcome>>,
    /// How each closed case's process ended: `ends[i]` for `cases[i]`.
    pub ends: Vec<CaseEnd>,
    /// The worker's sandbox report (JSON).
    pub sandbox: Option<Vec<u8>>,
    /// The worker said every case ended.
    pub done: bool,
    /// The handshake did not match: ABI, hash, the library's schema text.
    pub mismatch: Option<(u32, u64, String)>,
    pub load_error: Option<String>,
    pub broken: Option<Broken>,
    /// The stream ended inside a frame (a worker killed mid-write, or junk).
    pub incomplete: bool,
}

/// A worker's request, parent to worker: lists of encoded calls (a case
/// worker's cases; a measuring worker's setup, then its batches): `u32`
/// count of lists, then per list a `u32` count and per call a `u32` length
/// and its bytes.
pub fn encode_lists<'a, L, C>(lists: L) -> Vec<u8>
where
    L: IntoIterator<Item = C>,
    L::IntoIter: ExactSizeIterator,
    C: IntoIterator<Item = &'a [u8]>,
    C::IntoIter: ExactSizeIterator,
{
    let mut w = wire::Writer::default();
    let lists = lists.into_iter();
    w.u32(lists.len() as u32);
    for list in lists {
        let calls = list.into_iter();
        w.u32(calls.len() as u32);
        for call in calls {
            w.u32(call.len() as u32);
            w.buf.extend_from_slice(call);
        }
    }
    w.buf
}

/// The worker's side of [`encode_lists`].
pub fn decode_lists(request: &[u8]) -> Result<Vec<Vec<&[u8]>>, String> {
    let mut r = wire::Reader::new(request);
    let mut lists = Vec::new();
    for _ in 0..r.u32()? {
        let mut calls = Vec::new();
        for _ in 0..r.u32()? {
            let len = r.u32()? as usize;
            calls.push(r.take(len)?);
        }
        lists.push(calls);
    }
    Ok(lists)
}

/// Splits a short stream (the measuring worker's: a handful of frames)
/// into (tag, body) frames, refusing one cut short, empty or larger than
/// [`MAX_FRAME`].
pub fn split(mut rest: &[u8]) -> Result<Vec<(u8, &[u8])>, Broken> {
    let mut frames = Vec::new();
    while !rest.is_empty() {
        let Some(len) = rest.get(..4).map(|b| u32::from_le_bytes(b.try_into().expect("four bytes")) as usize) else {
            return Err(Broken::Tampered("a frame cut short or garbled".into()));
        };
        if len == 0 || len > MAX_FRAME || rest.len() < 4 + len {
            return Err(Broken::Tampered("a frame cut short or garbled".into()));
        }
        frames.push((rest[4], &rest[5..4 + len]));
        rest = &rest[4 + len..];
    }
    Ok(frames)
}

/// Reads a worker's channel to its end. `shape` is the number of calls in
/// each case the worker was sent; `on_broken` runs as soon as the stream
/// is refused (the caller kills the worker: nothing it says counts now).
pub fn read(src: impl Read, shape: &[usize], on_broken: impl FnOnce()) -> Stream {
    // Frames are small and many: one read per 64 KiB, not two per frame.
    let mut src = std::io::BufReader::with_capacity(64 << 10, src);
    let mut parser =
        Parser { shape, stream: Stream::default(), state: State::Start, bytes: 0, finished: false, output: None };
    if let Err(broken) = parser.run(&mut src) {
        parser.stream.broken = Some(broken);
        on_broken();
        // Keep the writer from blocking; what it writes is not looked at.
        let _ = std::io::copy(&mut src, &mut std::io::sink());
    }
    let mut stream = parser.stream;
    if stream.cases.last().is_some_and(Vec::is_empty) {
        stream.cases.pop();
    }
    stream
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Start,
    /// Inside case `n` (0-based); `ended` once it returned a non-value.
    Case {
        n: usize,
        stopped: bool,
    },
    Finished,
}

struct Parser<'a> {
    shape: &'a [usize],
    stream: Stream,
    state: State,
    bytes: usize,
    /// The case in progress sent its case-end frame.
    finished: bool,
    /// The case in progress's output frame: text, bytes dropped.
    output: Option<(String, usize)>,
}

fn tampered(why: impl Into<String>) -> Broken {
    Broken::Tampered(why.into())
}

impl Parser<'_> {
    fn run(&mut self, src: &mut impl Read) -> Result<(), Broken> {
        let mut values = MAX_RUN_VALUES;
        let mut body = Vec::new();
        loop {
            let mut header = [0u8; 5];
            match read_full(src, &mut header) {
                0 => return Ok(()),
                5 => {}
                _ => {
                    self.stream.incomplete = true;
                    return Ok(());
                }
            }
            let len = u32::from_le_bytes(header[..4].try_into().expect("four bytes")) as usize;
            let tag = header[4];
            if len == 0 || !matches!(tag, b'S' | b'H' | b'M' | b'L' | b'O' | b'C' | b'W' | b'E' | b'Z') {
                return Err(tampered(format!("a frame with tag {tag:#04x} and length {len}")));
            }
            let body_len = len - 1;
            if body_len > MAX_FRAME {
                return Err(if tag == frame::OUTCOME {
                    Broken::TooLarge(format!(
                        "one result took {} MiB (the limit is {} MiB)",
                        body_len >> 20,
                        MAX_FRAME >> 20
                    ))
                } else {
                    tampered(format!("a frame of {body_len} bytes"))
                });
            }
            self.bytes += len + 4;
            if self.bytes > MAX_RUN_BYTES {
                return Err(Broken::TooLarge(format!(
                    "the results of one run took more than {} MiB",
                    MAX_RUN_BYTES >> 20
                )));
            }
            body.clear();
            let got = src.by_ref().take(body_len as u64).read_to_end(&mut body).unwrap_or(0);
            if got < body_len {
                self.stream.incomplete = true;
                return Ok(());
            }
            self.frame(tag, &body, &mut values)?;
        }
    }

    fn frame(&mut self, tag: u8, body: &[u8], values: &mut usize) -> Result<(), Broken> {
        let out_of_order = || tampered(format!("a `{}` frame out of order", tag as char));
        match (self.state, tag) {
            (State::Start, frame::SANDBOX) if self.stream.sandbox.is_none() && body.len() <= MAX_SANDBOX => {
                self.stream.sandbox = Some(body.to_vec());
            }
            (State::Start, frame::HELLO) if body.is_empty() => {
                self.state = State::Case { n: 0, stopped: false };
                self.stream.cases.push(Vec::new());
            }
            (State::Start, frame::MISMATCH) if body.len() >= 12 => {
                let abi = u32::from_le_bytes(body[..4].try_into().expect("four bytes"));
                let hash = u64::from_le_bytes(body[4..12].try_into().expect("eight bytes"));
                let schema = String::from_utf8_lossy(&body[12..]).into_owned();
                self.stream.mismatch = Some((abi, hash, schema));
                self.state = State::Finished;
            }
            // Also after HELLO: the worker could not read the harness's request.
            (State::Start | State::Case { .. }, frame::LOAD_ERROR) => {
                self.stream.load_error = Some(String::from_utf8_lossy(body).into_owned());
                self.state = State::Finished;
            }
            (State::Case { n, stopped: false }, frame::OUTCOME) if n < self.shape.len() && !self.finished => {
                let case = self.stream.cases.last_mut().expect("a case is open");
                if case.len() >= self.shape[n] {
                    return Err(tampered(format!("more results than case {} has operations", n + 1)));
                }
                let mut r = wire::Reader::with_budget(body, *values);
                let outcome = wire::decode_outcome(&mut r).map_err(|e| {
                    if e.starts_with("too many values") {
                        Broken::TooLarge(format!("the results of one run held more than {MAX_RUN_VALUES} values"))
                    } else {
                        tampered(format!("an outcome that does not decode: {e}"))
                    }
                })?;
                if !r.is_empty() {
                    return Err(tampered("an outcome with trailing bytes"));
                }
                *values = r.budget();
                let stopped = !matches!(outcome, Outcome::Returned(_));
                case.push(outcome);
                self.state = State::Case { n, stopped };
            }
            (State::Case { n, .. }, frame::CASE_END)
                if body.is_empty() && n < self.shape.len() && !self.finished && self.output.is_none() =>
            {
                self.finished = true;
            }
            (State::Case { n, .. }, frame::OUTPUT)
                if body.len() >= 8 && n < self.shape.len() && self.output.is_none() =>
            {
                let dropped = u64::from_le_bytes(body[..8].try_into().expect("eight bytes")) as usize;
                self.output = Some((String::from_utf8_lossy(&body[8..]).into_owned(), dropped));
            }
            (State::Case { n, .. }, frame::EXIT)
                if (body.len() == 13 || body.len() == 13 + Refusals::BYTES)
                    && n < self.shape.len()
                    && self.output.is_some() =>
            {
                let refused = Refusals::decode(&body[13..]).unwrap_or_default();
                let (output, output_dropped) = self.output.take().expect("checked");
                self.stream.ends.push(CaseEnd {
                    finished: std::mem::take(&mut self.finished),
                    kind: body[0],
                    value: i32::from_le_bytes(body[1..5].try_into().expect("four bytes")),
                    elapsed: std::time::Duration::from_micros(u64::from_le_bytes(
                        body[5..13].try_into().expect("eight bytes"),
                    )),
                    output,
                    output_dropped,
                    refused,
                });
                self.state = State::Case { n: n + 1, stopped: false };
                self.stream.cases.push(Vec::new());
            }
            (State::Case { n, .. }, frame::DONE) if body.is_empty() && n == self.shape.len() => {
                self.stream.done = true;
                self.state = State::Finished;
            }
            _ => return Err(out_of_order()),
        }
        Ok(())
    }
}

/// Fills `buf` as far as the stream allows; returns the bytes read.
fn read_full(src: &mut impl Read, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match src.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    n
}

/// The channel's identity (device, inode) when the worker adopted it.
static ADOPTED: OnceLock<(u64, u64)> = OnceLock::new();

#[allow(clippy::unnecessary_cast, reason = "`stat`'s field types differ between platforms")]
fn identity(file: &File) -> Option<(u64, u64)> {
    rustix::fs::fstat(file).ok().map(|st| (st.st_dev as u64, st.st_ino as u64))
}

/// Worker side: remembers which pipe `file` is, before candidate code runs.
pub fn adopt(file: &File) {
    if let Some(id) = identity(file) {
        let _ = ADOPTED.set(id);
    }
}

/// Worker side: whether `file` is still the adopted pipe (candidate code
/// may have closed it or put another file in its place).
pub fn intact(file: &File) -> bool {
    match ADOPTED.get() {
        Some(id) => identity(file).as_ref() == Some(id),
        None => true,
    }
}

/// Worker side: writes one frame, in one write. If the channel is no longer
/// the adopted pipe (the candidate closed it or put another file in its
/// place), the worker exits with [`LOST_EXIT`] at once: nothing it could
/// write would reach the parent.
pub fn send(file: &mut File, tag: u8, body: &[u8]) {
    if !intact(file) {
        std::process::exit(LOST_EXIT);
    }
    match file.write_all(&frame::frame(tag, body)) {
        Ok(()) => {}
        // The parent is gone (EPIPE): there is nobody to tell.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(_) => std::process::exit(LOST_EXIT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_contract::Value;
    use harness_contract::wire::Writer;

    fn outcome(o: &Outcome) -> Vec<u8> {
        let mut w = Writer::default();
        wire::encode_outcome(&mut w, o);
        frame::frame(frame::OUTCOME, &w.buf)
    }

    fn one() -> Vec<u8> {
        outcome(&Outcome::Returned(Value::Int(1)))
    }

    /// The worker's frames after a case's process exited 0: no output.
    fn end() -> Vec<u8> {
        let mut data = frame::frame(frame::OUTPUT, &0u64.to_le_bytes());
        let mut exit = vec![b'x'];
        exit.extend_from_slice(&0i32.to_le_bytes());
        exit.extend_from_slice(&7u64.to_le_bytes());
        data.extend(frame::frame(frame::EXIT, &exit));
        data
    }

    /// The frames of a worker that ran `cases` cases of one call each.
    fn honest(cases: usize) -> Vec<u8> {
        let mut data = frame::frame(frame::HELLO, &[]);
        for _ in 0..cases {
            data.extend(one());
            data.extend(frame::frame(frame::CASE_END, &[]));
            data.extend(end());
        }
        data.extend(frame::frame(frame::DONE, &[]));
        data
    }

    #[test]
    fn an_honest_stream_splits_into_cases() {
        let s = read(&honest(2)[..], &[1, 1], || panic!("an honest stream is not refused"));
        assert_eq!((s.cases.len(), s.done, s.broken, s.incomplete), (2, true, None, false));
        // Cut inside the second case: the worker crashed there.
        let data = honest(2);
        let cut = frame::frame(frame::HELLO, &[]).len() + one().len() + 5 + end().len() + one().len();
        let s = read(&data[..cut], &[1, 1], || {});
        assert_eq!((s.cases.len(), s.done, s.broken), (2, false, None));
        assert_eq!(s.cases[1].len(), 1);
    }

    #[test]
    fn a_frame_cut_short_is_incomplete_not_tampered() {
        let data = honest(1);
        let s = read(&data[..data.len() - 3], &[1], || {});
        assert!(s.incomplete && s.broken.is_none() && !s.done, "{s:?}");
    }

    #[test]
    fn junk_is_tampering() {
        let mut data = frame::frame(frame::HELLO, &[]);
        data.extend_from_slice(b"junk junk junk junk");
        data.extend(honest(1));
        let mut killed = false;
        let s = read(&data[..], &[1], || killed = true);
        assert!(matches!(s.broken, Some(Broken::Tampered(_))), "{s:?}");
        assert!(killed, "the caller is told at once, to stop the writer");
        assert!(!s.done, "nothing after the junk is believed");
    }

    #[test]
    fn frames_out_of_order_or_too_many_are_tampering() {
        // DONE before the case ended.
        let mut data = frame::frame(frame::HELLO, &[]);
        data.extend(frame::frame(frame::DONE, &[]));
        assert!(matches!(read(&data[..], &[1], || {}).broken, Some(Broken::Tampered(_))));
        // Two results for a one-call case.
        let mut data = frame::frame(frame::HELLO, &[]);
        data.extend(one());
        data.extend(one());
        assert!(matches!(read(&data[..], &[1], || {}).broken, Some(Broken::Tampered(_))));
        // A forged second DONE after the real one.
        let mut data = honest(1);
        data.extend(frame::frame(frame::DONE, &[]));
        let s = read(&data[..], &[1], || {});
        assert!(matches!(s.broken, Some(Broken::Tampered(_))), "{s:?}");
        // A result after a panic: the worker ends the case at a panic.
        let mut data = frame::frame(frame::HELLO, &[]);
        data.extend(outcome(&Outcome::Panicked { message: "x".into(), location: String::new() }));
        data.extend(one());
        assert!(matches!(read(&data[..], &[2], || {}).broken, Some(Broken::Tampered(_))));
    }

    #[test]
    fn a_forged_deep_value_is_tampering_not_a_stack_overflow() {
        let mut body = vec![b'R'];
        for _ in 0..1_000_000 {
            body.extend_from_slice(&[6, 1, 0, 0, 0]);
        }
        body.push(0);
        let mut data = frame::frame(frame::HELLO, &[]);
        data.extend(frame::frame(frame::OUTCOME, &body));
        let s = read(&data[..], &[1], || {});
        match s.broken {
            Some(Broken::Tampered(why)) => assert!(why.contains("nested more than"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn oversize_frames_and_runs_are_refused_without_reading_them_into_memory() {
        // A header claiming a 1 GiB outcome, then a few bytes.
        let mut data = frame::frame(frame::HELLO, &[]);
        data.extend_from_slice(&(1u32 << 30).to_le_bytes());
        data.push(frame::OUTCOME);
        data.extend_from_slice(&[0; 100]);
        let s = read(&data[..], &[1], || {});
        assert!(matches!(s.broken, Some(Broken::TooLarge(_))), "{s:?}");
        // Many honest-looking 8 MiB results: the run's total is capped.
        let big = outcome(&Outcome::Returned(Value::Str("x".repeat(8 << 20))));
        let mut data = frame::frame(frame::HELLO, &[]);
        for _ in 0..9 {
            data.extend_from_slice(&big);
            data.extend(frame::frame(frame::CASE_END, &[]));
            data.extend(end());
        }
        let s = read(&data[..], &[1; 9], || {});
        match s.broken {
            Some(Broken::TooLarge(why)) => assert!(why.contains("64 MiB"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_endless_stream_is_drained_with_bounded_memory() {
        // 256 MiB of zeros: refused at the first header, the rest discarded.
        let s = read(std::io::repeat(0).take(256 << 20), &[1], || {});
        assert!(matches!(s.broken, Some(Broken::Tampered(_))), "{s:?}");
    }

    #[test]
    fn mismatch_and_load_errors_are_read() {
        let mut body = 1u32.to_le_bytes().to_vec();
        body.extend_from_slice(&7u64.to_le_bytes());
        body.extend_from_slice(b"schema");
        let s = read(&frame::frame(frame::MISMATCH, &body)[..], &[], || {});
        assert_eq!(s.mismatch, Some((1, 7, "schema".into())));
        let s = read(&frame::frame(frame::LOAD_ERROR, b"no symbol")[..], &[], || {});
        assert_eq!(s.load_error.as_deref(), Some("no symbol"));
        assert!(s.broken.is_none());
    }
}
