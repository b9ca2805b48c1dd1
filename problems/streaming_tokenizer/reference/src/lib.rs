//! Reference solution for `streaming_tokenizer`.
//!
//! A byte-level state machine. Everything that must survive a chunk
//! boundary lives in the struct: the state (between tokens, in a bare token,
//! in a string, just after a backslash, skipping to the next line), the
//! decoded bytes of the unfinished token, how many raw bytes it spans, and
//! where it started. `feed` looks at every byte exactly once and never
//! goes back, so the work is linear in the bytes fed however they are cut.
//!
//! UTF-8 is never decoded per chunk: a token's bytes are collected as bytes
//! and turned into a `String` only when the token is complete. Every byte
//! that ends a token is ASCII, so a complete token is whole UTF-8. Columns
//! count characters by counting the bytes that start one (every byte but
//! the `10xxxxxx` continuation bytes), which needs no decoding either.
//!
//! Nesting, once `set_max_depth` turns it on, is a stack of the openers
//! still open, touched only where a punctuation token is emitted.

use harness_contract::streaming_tokenizer::{Fault, Kind, Refusal, StreamingTokenizer, Token};

/// The limit before any `set_limit`: 1 MiB.
const DEFAULT_LIMIT: usize = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Between tokens.
    Between,
    /// Inside a bare token (a number or a word).
    Bare,
    /// Inside a string.
    InString,
    /// Inside a string, just after a backslash.
    Escape,
    /// Recovering from a fault: discarding bytes up to the next newline.
    Skipping,
    /// A fault without recovery: every later byte is discarded.
    Broken,
    /// `close` was called.
    Closed,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Pos {
    line: u64,
    column: u64,
}

pub struct Lexer {
    state: State,
    /// Decoded bytes of the unfinished token (a string without its quotes).
    text: Vec<u8>,
    /// Raw bytes of the stream the unfinished token spans so far.
    span: usize,
    /// Where the unfinished token, or the region being skipped, started.
    start: Pos,
    limit: usize,
    recover: bool,
    /// Bytes skipped so far while recovering.
    skipped: u64,
    /// Whether a token past the limit is truncated rather than a fault.
    truncate: bool,
    /// Whether the unfinished token has dropped a byte (it is truncated).
    dropping: bool,
    /// Where the number automaton is after the bare token's bytes so far.
    shape: u8,
    /// Whether the nesting checks are on, and their bound.
    nesting: bool,
    max_depth: usize,
    /// The openers (`[` or `{`) of the containers open now, innermost last.
    open: Vec<u8>,
    /// The line of the next byte.
    line: u64,
    /// The column the next character will have.
    next_column: u64,
    /// The character that holds the byte being looked at.
    here: Pos,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_punct(b: u8) -> bool {
    matches!(b, b'{' | b'}' | b'[' | b']' | b':' | b',')
}

/// Whether a byte ends a bare token.
fn ends_bare(b: u8) -> bool {
    is_space(b) || is_punct(b) || b == b'"'
}

/// The opener a closer closes.
fn opener_of(closer: u8) -> Option<u8> {
    [(b']', b'['), (b'}', b'{')].into_iter().find(|&(c, _)| c == closer).map(|(_, o)| o)
}

/// What `\x` stands for in a string, if it is a valid escape.
fn unescape(b: u8) -> Option<u8> {
    match b {
        b'"' => Some(b'"'),
        b'\\' => Some(b'\\'),
        b'n' => Some(b'\n'),
        b't' => Some(b'\t'),
        _ => None,
    }
}

/// The number automaton for `-?[0-9]+(\.[0-9]+)?`, one byte at a time:
/// 0 start, 1 after the minus, 2 in the digits, 3 after the point, 4 in
/// the fraction (2 and 4 accept), 5 not a number.
const SHAPE_START: u8 = 0;

fn shape_step(state: u8, b: u8) -> u8 {
    match (state, b) {
        (0, b'-') => 1,
        (0..=2, b'0'..=b'9') => 2,
        (2, b'.') => 3,
        (3 | 4, b'0'..=b'9') => 4,
        _ => 5,
    }
}

fn number_or_word(shape: u8) -> Kind {
    if matches!(shape, 2 | 4) { Kind::Number } else { Kind::Word }
}

/// `-?[0-9]+(\.[0-9]+)?`
fn is_number(s: &[u8]) -> bool {
    let digits = |p: &[u8]| !p.is_empty() && p.iter().all(u8::is_ascii_digit);
    let s = s.strip_prefix(b"-").unwrap_or(s);
    match s.iter().position(|&b| b == b'.') {
        Some(dot) => digits(&s[..dot]) && digits(&s[dot + 1..]),
        None => digits(s),
    }
}

impl Lexer {
    /// Moves the position past byte `b`; returns the position of the
    /// character `b` belongs to.
    fn advance(&mut self, b: u8) -> Pos {
        if b & 0xC0 != 0x80 {
            self.here = Pos { line: self.line, column: self.next_column };
            self.next_column += 1;
        }
        if b == b'\n' {
            self.line += 1;
            self.next_column = 1;
        }
        self.here
    }

    fn token(&self, kind: Kind, text: String, at: Pos) -> Token {
        Token::new(kind, text).at(at.line, at.column)
    }

    /// Counts byte `b` (at `at`) into the unfinished token; false (after
    /// reporting the fault) if that makes the token longer than the limit.
    fn join(&mut self, at: Pos, out: &mut Vec<Token>) -> bool {
        if self.dropping || (self.truncate && self.span >= self.limit) {
            // Truncated: this byte and every later one of the token are
            // dropped, only counted.
            self.span += 1;
            self.dropping = true;
            return true;
        }
        self.span += 1;
        if self.span > self.limit {
            self.fault(Fault::TokenTooLong, at, false, out);
            return false;
        }
        true
    }

    /// Keeps byte `b` of the token's text, unless the token is truncated.
    fn keep(&mut self, b: u8) {
        if !self.dropping {
            self.text.push(b);
        }
    }

    /// A truncated token's text ends at its last whole character: the
    /// limit may have cut one in two.
    fn whole_characters(&mut self) {
        if self.dropping {
            if let Err(e) = std::str::from_utf8(&self.text) {
                self.text.truncate(e.valid_up_to());
            }
        }
    }

    /// After a token is emitted: the marker, if it was truncated.
    fn flag(&mut self, out: &mut Vec<Token>) {
        if self.dropping {
            out.push(Token::truncated(self.span as u64).at(self.start.line, self.start.column));
        }
    }

    /// Reports `fault`, revealed by the character at `at`, then breaks the
    /// stream or starts skipping. `at_newline`: the revealing byte is itself
    /// the newline that ends the skip.
    fn fault(&mut self, fault: Fault, at: Pos, at_newline: bool, out: &mut Vec<Token>) {
        out.push(Token::error(fault).at(at.line, at.column));
        self.text.clear();
        if !self.recover {
            self.state = State::Broken;
            return;
        }
        self.skipped = self.span as u64;
        self.state = State::Skipping;
        if at_newline {
            self.end_skip(out);
        }
    }

    fn end_skip(&mut self, out: &mut Vec<Token>) {
        out.push(Token::gap(self.skipped).at(self.start.line, self.start.column));
        self.skipped = 0;
        self.state = State::Between;
    }

    /// A byte seen between tokens.
    fn begin(&mut self, b: u8, at: Pos, out: &mut Vec<Token>) {
        if is_space(b) {
            return;
        }
        self.start = at;
        self.span = 0;
        self.text.clear();
        self.dropping = false;
        if !self.join(at, out) {
            return;
        }
        if is_punct(b) {
            if self.nesting && !self.nest(b, at, out) {
                return;
            }
            let text = if self.dropping { String::new() } else { (b as char).to_string() };
            out.push(self.token(Kind::Punct, text, at));
            self.flag(out);
            self.span = 0;
        } else if b == b'"' {
            self.state = State::InString;
        } else {
            self.keep(b);
            self.shape = shape_step(SHAPE_START, b);
            self.state = State::Bare;
        }
    }

    /// Opens or closes a container for punctuation `b` (at `at`); false
    /// (after reporting the fault) if the nesting forbids it.
    fn nest(&mut self, b: u8, at: Pos, out: &mut Vec<Token>) -> bool {
        if b == b'[' || b == b'{' {
            if self.open.len() + 1 > self.max_depth {
                self.fault(Fault::TooDeep, at, false, out);
                return false;
            }
            self.open.push(b);
        } else if let Some(opener) = opener_of(b) {
            if self.open.last() != Some(&opener) {
                self.fault(Fault::MismatchedClose, at, false, out);
                return false;
            }
            self.open.pop();
        }
        true
    }

    fn emit_bare(&mut self, out: &mut Vec<Token>) {
        self.whole_characters();
        let kind = if is_number(&self.text) { Kind::Number } else { Kind::Word };
        let text = String::from_utf8_lossy(&self.text).into_owned();
        // Truncated, the kept text is not the whole token: its kind is.
        let kind = if self.dropping { number_or_word(self.shape) } else { kind };
        out.push(self.token(kind, text, self.start));
        self.flag(out);
        self.text.clear();
        self.span = 0;
        self.state = State::Between;
    }

    fn step(&mut self, b: u8, out: &mut Vec<Token>) {
        let at = self.advance(b);
        match self.state {
            State::Between => self.begin(b, at, out),
            State::Bare => {
                if ends_bare(b) {
                    self.emit_bare(out);
                    self.begin(b, at, out);
                } else if self.join(at, out) {
                    self.shape = shape_step(self.shape, b);
                    self.keep(b);
                }
            }
            State::InString => match b {
                b'"' => {
                    if self.join(at, out) {
                        self.whole_characters();
                        let text = String::from_utf8_lossy(&self.text).into_owned();
                        out.push(self.token(Kind::Str, text, self.start));
                        self.text.clear();
                        self.flag(out);
                        self.span = 0;
                        self.state = State::Between;
                    }
                }
                b'\\' => {
                    if self.join(at, out) {
                        self.state = State::Escape;
                    }
                }
                b'\n' => self.fault(Fault::UnterminatedString, at, true, out),
                _ => {
                    if self.join(at, out) {
                        self.keep(b);
                    }
                }
            },
            State::Escape => match unescape(b) {
                Some(c) => {
                    if self.join(at, out) {
                        self.keep(c);
                        self.state = State::InString;
                    }
                }
                None if b == b'\n' => self.fault(Fault::BadEscape, at, true, out),
                None => {
                    self.span += 1;
                    self.fault(Fault::BadEscape, at, false, out);
                }
            },
            State::Skipping => {
                if b == b'\n' {
                    self.end_skip(out);
                } else {
                    self.skipped += 1;
                }
            }
            State::Broken | State::Closed => unreachable!("feed returns before stepping"),
        }
    }
}

impl StreamingTokenizer for Lexer {
    fn new() -> Self {
        Lexer {
            state: State::Between,
            text: Vec::new(),
            span: 0,
            start: Pos::default(),
            limit: DEFAULT_LIMIT,
            recover: false,
            skipped: 0,
            truncate: false,
            dropping: false,
            shape: SHAPE_START,
            nesting: false,
            max_depth: 0,
            open: Vec::new(),
            line: 1,
            next_column: 1,
            here: Pos::default(),
        }
    }

    fn feed(&mut self, chunk: &[u8]) -> Result<Vec<Token>, Refusal> {
        match self.state {
            State::Closed => return Err(Refusal::Closed),
            State::Broken => return Ok(Vec::new()),
            _ => {}
        }
        let mut out = Vec::new();
        for &b in chunk {
            self.step(b, &mut out);
            if self.state == State::Broken {
                break;
            }
        }
        Ok(out)
    }

    fn close(&mut self) -> Result<Vec<Token>, Refusal> {
        let mut out = Vec::new();
        match self.state {
            State::Closed => return Err(Refusal::Closed),
            State::Between | State::Broken => {}
            State::Bare => self.emit_bare(&mut out),
            State::InString | State::Escape => {
                let end = Pos { line: self.line, column: self.next_column };
                self.fault(Fault::UnterminatedString, end, false, &mut out);
                if self.state == State::Skipping {
                    self.end_skip(&mut out);
                }
            }
            State::Skipping => self.end_skip(&mut out),
        }
        // The end of the stream closes no container: one still open is a
        // fault, after the pending token, unless the stream already broke.
        if self.nesting && !self.open.is_empty() && self.state != State::Broken {
            let end = Pos { line: self.line, column: self.next_column };
            out.push(Token::error(Fault::Unclosed).at(end.line, end.column));
        }
        self.open = Vec::new();
        self.state = State::Closed;
        Ok(out)
    }

    fn set_limit(&mut self, max_token_bytes: usize) {
        self.limit = max_token_bytes;
    }

    fn buffered(&self) -> usize {
        match self.state {
            State::Bare | State::InString | State::Escape => self.span,
            _ => 0,
        }
    }

    fn set_recovery(&mut self, on: bool) {
        self.recover = on;
    }

    fn set_truncate(&mut self, on: bool) {
        self.truncate = on;
    }

    fn set_max_depth(&mut self, max_depth: usize) {
        // Containers count from the first call on: none is open before it.
        self.nesting = true;
        self.max_depth = max_depth;
    }

    fn depth(&self) -> usize {
        match self.state {
            State::Broken | State::Closed => 0,
            _ => self.open.len(),
        }
    }
}

harness_contract::export!(streaming_tokenizer, Lexer);
