//! A second solution for `streaming_tokenizer`, written from the
//! statements alone, with a different design from the reference.
//!
//! Instead of a per-byte state machine with a decoded buffer, this keeps a
//! *raw carry buffer*: the unfinished token's bytes exactly as they came,
//! quotes and backslashes included, so the buffer's length is the token's
//! size. The scanner works on runs: inside a string it jumps to the next
//! quote, backslash or newline and moves the whole run at once; in a bare
//! token it jumps to the next delimiter. A run never goes back over bytes
//! already buffered (the only thing remembered about them is whether the
//! last one was an unpaired backslash), so the cost stays linear. Escapes
//! are checked as they arrive and decoded once, when the string closes;
//! bare tokens are classified once, when they end.
//!
//! Truncation keeps the first `limit` raw bytes and counts the rest; the
//! number automaton runs over every run of a bare token, kept or not.
//!
//! Nesting is a counter and one bit per open level (`{` or `[`), kept in
//! a vector of words that grows only with the depth.

use harness_contract::streaming_tokenizer::{Fault, Kind, Refusal, StreamingTokenizer, Token};

const ONE_MIB: usize = 1_048_576;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Idle,
    Word,
    Quoted { after_backslash: bool },
    Skip,
    Dead,
    Done,
}

pub struct Tokenizer {
    mode: Mode,
    /// The unfinished token, byte for byte as it appeared in the stream.
    raw: Vec<u8>,
    limit: usize,
    recovering: bool,
    /// Bytes dropped by the skip in progress.
    dropped: u64,
    /// Line and column of the next character.
    line: u64,
    col: u64,
    /// Line and column of the character holding the last byte seen.
    last: (u64, u64),
    /// Where the unfinished token (or the skipped region) began.
    began: (u64, u64),
    /// The nesting checks: whether they are on, the bound, how many
    /// containers are open, and one bit per open level (1 for `{`).
    checking: bool,
    bound: usize,
    levels: usize,
    braces: Vec<u64>,
    /// Truncation: whether it is the policy, whether the unfinished token
    /// has dropped bytes, how many, and its number automaton.
    truncating: bool,
    cut: bool,
    extra: usize,
    shape: u8,
}

fn delimits(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'{' | b'}' | b'[' | b']' | b':' | b',' | b'"')
}

fn valid_escape(b: u8) -> bool {
    matches!(b, b'"' | b'\\' | b'n' | b't')
}

/// A small automaton for `-?[0-9]+(\.[0-9]+)?`, fed a run at a time so
/// that a bare token is classified as its bytes go by, kept or not.
/// 0 start, 1 after '-', 2 in integer digits, 3 after '.', 4 in fraction
/// digits, 9 not a number.
fn numeric(mut st: u8, run: &[u8]) -> u8 {
    for &b in run {
        st = match (st, b) {
            (0, b'-') => 1,
            (0..=2, b'0'..=b'9') => 2,
            (2, b'.') => 3,
            (3 | 4, b'0'..=b'9') => 4,
            _ => return 9,
        };
    }
    st
}

/// Drops the end of `bytes` that is not a whole UTF-8 character.
fn whole(mut bytes: Vec<u8>) -> String {
    if let Err(e) = std::str::from_utf8(&bytes) {
        bytes.truncate(e.valid_up_to());
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The content `inner` of a string token (between its quotes, or after the
/// opening quote of a truncated one), with its (already validated) escapes
/// decoded; a backslash cut off from its escape is left out.
fn decode(inner: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(inner.len());
    let mut it = inner.iter();
    while let Some(&b) = it.next() {
        if b == b'\\' {
            bytes.push(match it.next() {
                Some(b'n') => b'\n',
                Some(b't') => b'\t',
                Some(&other) => other,
                None => break,
            });
        } else {
            bytes.push(b);
        }
    }
    bytes
}

impl Tokenizer {
    fn brace_at(&self, level: usize) -> bool {
        self.braces[level / 64] >> (level % 64) & 1 == 1
    }

    fn set_brace(&mut self, level: usize, brace: bool) {
        if level / 64 == self.braces.len() {
            self.braces.push(0);
        }
        let bit = 1u64 << (level % 64);
        if brace {
            self.braces[level / 64] |= bit;
        } else {
            self.braces[level / 64] &= !bit;
        }
    }

    /// The nesting check of punctuation `b`: the fault it is, if any;
    /// otherwise the container is opened or closed.
    fn structure(&mut self, b: u8) -> Option<Fault> {
        match b {
            b'[' | b'{' if self.levels >= self.bound => Some(Fault::TooDeep),
            b'[' | b'{' => {
                self.set_brace(self.levels, b == b'{');
                self.levels += 1;
                None
            }
            b']' | b'}' => {
                if self.levels == 0 || self.brace_at(self.levels - 1) != (b == b'}') {
                    return Some(Fault::MismatchedClose);
                }
                self.levels -= 1;
                None
            }
            _ => None,
        }
    }

    /// Moves the position over one byte.
    fn step(&mut self, b: u8) {
        if b & 0b1100_0000 != 0b1000_0000 {
            self.last = (self.line, self.col);
            self.col += 1;
        }
        if b == b'\n' {
            self.line += 1;
            self.col = 1;
        }
    }

    fn emit(&self, out: &mut Vec<Token>, kind: Kind, text: String, at: (u64, u64)) {
        out.push(Token::new(kind, text).at(at.0, at.1));
    }

    /// Emits a finished token, and its marker if it was truncated (`size`
    /// must be taken before `raw` is cleared).
    fn emit_sized(&mut self, out: &mut Vec<Token>, kind: Kind, text: String, size: usize) {
        self.emit(out, kind, text, self.began);
        if self.cut {
            self.emit(out, Kind::Truncated, size.to_string(), self.began);
        }
        self.cut = false;
        self.extra = 0;
    }

    /// Reports a fault at `at`. `extra` bytes of the broken token were seen
    /// but not buffered. `by_newline`: the revealing byte was a newline.
    fn fault(&mut self, what: Fault, at: (u64, u64), extra: u64, by_newline: bool, out: &mut Vec<Token>) {
        out.push(Token::error(what).at(at.0, at.1));
        let seen = (self.raw.len() + self.extra) as u64 + extra;
        self.raw.clear();
        if self.recovering {
            self.dropped = seen;
            self.mode = Mode::Skip;
            if by_newline {
                self.finish_skip(out);
            }
        } else {
            self.mode = Mode::Dead;
        }
    }

    fn finish_skip(&mut self, out: &mut Vec<Token>) {
        let at = self.began;
        self.emit(out, Kind::Gap, self.dropped.to_string(), at);
        self.dropped = 0;
        self.mode = Mode::Idle;
    }

    /// Buffers `run` (no newline in it) onto the token, as far as the limit
    /// allows. Returns the bytes consumed and whether they all fitted; if
    /// not, the byte that passed the limit was consumed and reported.
    /// Truncating, what does not fit is counted in `extra` and dropped, and
    /// so is everything after it in the same token.
    fn take(&mut self, run: &[u8], out: &mut Vec<Token>) -> (usize, bool) {
        let room = if self.cut { 0 } else { self.limit.saturating_sub(self.raw.len()) };
        if run.len() <= room {
            run.iter().for_each(|&b| self.step(b));
            self.raw.extend_from_slice(run);
            return (run.len(), true);
        }
        if self.cut || self.truncating {
            run.iter().for_each(|&b| self.step(b));
            self.raw.extend_from_slice(&run[..room]);
            self.extra += run.len() - room;
            self.cut = true;
            return (run.len(), true);
        }
        run[..=room].iter().for_each(|&b| self.step(b));
        self.raw.extend_from_slice(&run[..room]);
        let at = self.last;
        self.fault(Fault::TokenTooLong, at, 1, false, out);
        (room + 1, false)
    }

    fn idle(&mut self, chunk: &[u8], i: usize, out: &mut Vec<Token>) -> usize {
        let b = chunk[i];
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            self.step(b);
            return i + 1;
        }
        self.began = (self.line, self.col);
        self.raw.clear();
        self.cut = false;
        self.extra = 0;
        self.shape = 0;
        match b {
            b'{' | b'}' | b'[' | b']' | b':' | b',' => {
                if self.take(&chunk[i..=i], out).1 {
                    self.raw.clear();
                    let fault = if self.checking { self.structure(b) } else { None };
                    match fault {
                        Some(f) => {
                            let at = self.began;
                            self.fault(f, at, 1, false, out);
                        }
                        None => {
                            let text = if self.cut { String::new() } else { (b as char).to_string() };
                            self.emit_sized(out, Kind::Punct, text, 1);
                        }
                    }
                }
                i + 1
            }
            b'"' => {
                if self.take(&chunk[i..=i], out).1 {
                    self.mode = Mode::Quoted { after_backslash: false };
                }
                i + 1
            }
            _ => {
                self.mode = Mode::Word;
                i
            }
        }
    }

    fn finish_word(&mut self, out: &mut Vec<Token>) {
        let kind = if matches!(self.shape, 2 | 4) { Kind::Number } else { Kind::Word };
        let size = self.raw.len() + self.extra;
        let text = whole(std::mem::take(&mut self.raw));
        self.emit_sized(out, kind, text, size);
        self.mode = Mode::Idle;
    }

    fn word(&mut self, chunk: &[u8], i: usize, out: &mut Vec<Token>) -> usize {
        let end = chunk[i..].iter().position(|&b| delimits(b)).map_or(chunk.len(), |p| i + p);
        let (used, fitted) = self.take(&chunk[i..end], out);
        if !fitted {
            return i + used;
        }
        self.shape = numeric(self.shape, &chunk[i..end]);
        if end < chunk.len() {
            self.finish_word(out);
        }
        end
    }

    fn quoted(&mut self, chunk: &[u8], i: usize, after_backslash: bool, out: &mut Vec<Token>) -> usize {
        if after_backslash {
            let b = chunk[i];
            if valid_escape(b) {
                if self.take(&chunk[i..=i], out).1 {
                    self.mode = Mode::Quoted { after_backslash: false };
                }
            } else {
                self.step(b);
                let at = self.last;
                let newline = b == b'\n';
                self.fault(Fault::BadEscape, at, u64::from(!newline), newline, out);
            }
            return i + 1;
        }
        let stop = chunk[i..]
            .iter()
            .position(|&b| matches!(b, b'"' | b'\\' | b'\n'))
            .map_or(chunk.len(), |p| i + p);
        let (used, fitted) = self.take(&chunk[i..stop], out);
        if !fitted {
            return i + used;
        }
        if stop == chunk.len() {
            return stop;
        }
        match chunk[stop] {
            b'\n' => {
                self.step(b'\n');
                let at = self.last;
                self.fault(Fault::UnterminatedString, at, 0, true, out);
            }
            b'\\' => {
                if self.take(&chunk[stop..=stop], out).1 {
                    self.mode = Mode::Quoted { after_backslash: true };
                }
            }
            _ => {
                if self.take(&chunk[stop..=stop], out).1 {
                    let size = self.raw.len() + self.extra;
                    // Cut short, the kept bytes hold no closing quote (and
                    // with a limit of 0, not even the opening one).
                    let end = if self.cut { self.raw.len() } else { self.raw.len() - 1 };
                    let text = whole(decode(&self.raw[end.min(1)..end]));
                    self.raw.clear();
                    self.emit_sized(out, Kind::Str, text, size);
                    self.mode = Mode::Idle;
                }
            }
        }
        stop + 1
    }

    fn skip(&mut self, chunk: &[u8], i: usize, out: &mut Vec<Token>) -> usize {
        let nl = chunk[i..].iter().position(|&b| b == b'\n');
        let end = nl.map_or(chunk.len(), |p| i + p);
        chunk[i..end].iter().for_each(|&b| self.step(b));
        self.dropped += (end - i) as u64;
        if nl.is_none() {
            return end;
        }
        self.step(b'\n');
        self.finish_skip(out);
        end + 1
    }
}

impl StreamingTokenizer for Tokenizer {
    fn new() -> Self {
        Tokenizer {
            mode: Mode::Idle,
            raw: Vec::new(),
            limit: ONE_MIB,
            recovering: false,
            dropped: 0,
            line: 1,
            col: 1,
            last: (1, 1),
            began: (1, 1),
            checking: false,
            bound: 0,
            levels: 0,
            braces: Vec::new(),
            truncating: false,
            cut: false,
            extra: 0,
            shape: 0,
        }
    }

    fn feed(&mut self, chunk: &[u8]) -> Result<Vec<Token>, Refusal> {
        match self.mode {
            Mode::Done => return Err(Refusal::Closed),
            Mode::Dead => return Ok(Vec::new()),
            _ => {}
        }
        let mut out = Vec::new();
        let mut i = 0;
        while i < chunk.len() {
            i = match self.mode {
                Mode::Idle => self.idle(chunk, i, &mut out),
                Mode::Word => self.word(chunk, i, &mut out),
                Mode::Quoted { after_backslash } => self.quoted(chunk, i, after_backslash, &mut out),
                Mode::Skip => self.skip(chunk, i, &mut out),
                Mode::Dead | Mode::Done => break,
            };
        }
        Ok(out)
    }

    fn close(&mut self) -> Result<Vec<Token>, Refusal> {
        let mut out = Vec::new();
        match self.mode {
            Mode::Done => return Err(Refusal::Closed),
            Mode::Idle | Mode::Dead => {}
            Mode::Word => self.finish_word(&mut out),
            Mode::Quoted { .. } => {
                let end = (self.line, self.col);
                self.fault(Fault::UnterminatedString, end, 0, false, &mut out);
                if self.mode == Mode::Skip {
                    self.finish_skip(&mut out);
                }
            }
            Mode::Skip => self.finish_skip(&mut out),
        }
        if self.checking && self.levels > 0 && self.mode != Mode::Dead {
            out.push(Token::error(Fault::Unclosed).at(self.line, self.col));
        }
        self.levels = 0;
        self.mode = Mode::Done;
        self.raw = Vec::new();
        Ok(out)
    }

    fn set_limit(&mut self, max_token_bytes: usize) {
        self.limit = max_token_bytes;
    }

    fn buffered(&self) -> usize {
        match self.mode {
            Mode::Word | Mode::Quoted { .. } => self.raw.len() + self.extra,
            _ => 0,
        }
    }

    fn set_recovery(&mut self, on: bool) {
        self.recovering = on;
    }

    fn set_truncate(&mut self, on: bool) {
        self.truncating = on;
    }

    fn set_max_depth(&mut self, max_depth: usize) {
        self.checking = true;
        self.bound = max_depth;
    }

    fn depth(&self) -> usize {
        match self.mode {
            Mode::Dead | Mode::Done => 0,
            _ => self.levels,
        }
    }
}

harness_contract::export!(streaming_tokenizer, Tokenizer);
