//! Reference solution for `streaming_tokenizer`.
//!
//! A byte-level state machine. Everything that must survive a chunk
//! boundary lives in the struct: the state (between tokens, in a bare token,
//! in a string, just after a backslash) and the decoded bytes of the
//! unfinished token.
//! It also counts the raw bytes the unfinished token spans, for the limit. // @gate 2
//! It keeps where the unfinished token started, and the position of the next character. // @gate 3
//! After a fault with recovery on, one more state skips to the next line. // @gate 4
//! `feed` looks at every byte exactly once and never goes back, so the work
//! is linear in the bytes fed however they are cut.
//!
//! UTF-8 is never decoded per chunk: a token's bytes are collected as bytes
//! and turned into a `String` only when the token is complete. Every byte
//! that ends a token is ASCII, so a complete token is whole UTF-8.
//! Columns count characters by counting the bytes that start one (every byte but // @gate 3
//! the `10xxxxxx` continuation bytes), which needs no decoding either. // @gate 3
//! A truncated token keeps its bytes up to the limit, and only counts the rest. // @gate 6
// @gate 5
//!
//! Nesting, once `set_max_depth` turns it on, is a stack of the openers
//! still open, touched only where a punctuation token is emitted.
// @end

use harness_contract::streaming_tokenizer::{Fault, Kind, Refusal, StreamingTokenizer, Token};

// @gate 2
/// The limit before any `set_limit`: 1 MiB.
const DEFAULT_LIMIT: usize = 1 << 20;
// @end

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
    // @gate 4
    /// Recovering from a fault: discarding bytes up to the next newline.
    Skipping,
    // @end
    /// Broken by a fault: every later byte is discarded.
    Broken,
    /// `close` was called.
    Closed,
}

// @gate 3
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Pos {
    line: u64,
    column: u64,
}
// @end

pub struct Lexer {
    state: State,
    /// Decoded bytes of the unfinished token (a string without its quotes).
    text: Vec<u8>,
    // @gate 2
    /// Raw bytes of the stream the unfinished token spans so far.
    span: usize,
    limit: usize,
    // @end
    // @gate 3
    /// Where the unfinished token started.
    start: Pos,
    /// The line of the next byte.
    line: u64,
    /// The column the next character will have.
    next_column: u64,
    /// The character that holds the byte being looked at.
    here: Pos,
    // @end
    // @gate 4
    /// Whether a fault skips to the next line instead of breaking the stream.
    recover: bool,
    /// Bytes skipped so far while recovering.
    skipped: u64,
    // @end
    // @gate 5
    /// Whether the nesting checks are on, and their bound.
    nesting: bool,
    max_depth: usize,
    /// The openers (`[` or `{`) of the containers open now, innermost last.
    open: Vec<u8>,
    // @end
    // @gate 6
    /// Whether a token past the limit is truncated rather than a fault.
    truncate: bool,
    /// Whether the unfinished token has dropped a byte (it is truncated).
    dropping: bool,
    /// Where the number automaton is after the bare token's bytes so far.
    shape: u8,
    // @end
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

// @gate 5
/// The opener a closer closes.
fn opener_of(closer: u8) -> Option<u8> {
    [(b']', b'['), (b'}', b'{')].into_iter().find(|&(c, _)| c == closer).map(|(_, o)| o)
}
// @end

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

// @gate 6
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
// @end

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
    /// Keeps byte `b` of the token's text.
    fn keep(&mut self, b: u8) {
        // @gate 6
        if !self.dropping {
            self.text.push(b);
        }
        // @else
        //~ self.text.push(b);
        // @end
    }

    // @gate 3
    /// Moves the position past byte `b`: `here` becomes the character `b`
    /// belongs to.
    fn advance(&mut self, b: u8) {
        if b & 0xC0 != 0x80 {
            self.here = Pos { line: self.line, column: self.next_column };
            self.next_column += 1;
        }
        if b == b'\n' {
            self.line += 1;
            self.next_column = 1;
        }
    }
    // @end

    // @gate 2
    /// Counts the byte being looked at into the unfinished token; false
    /// (after reporting the fault) if that makes the token longer than the
    /// limit.
    fn join(&mut self, out: &mut Vec<Token>) -> bool {
        // @gate 6
        if self.dropping || (self.truncate && self.span >= self.limit) {
            // Truncated: this byte and every later one of the token are
            // dropped, only counted.
            self.span += 1;
            self.dropping = true;
            return true;
        }
        // @end
        self.span += 1;
        if self.span > self.limit {
            self.fault(Fault::TokenTooLong, out);
            return false;
        }
        true
    }
    // @end

    // @gate 6
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
            // @gate 3
            out.push(Token::truncated(self.span as u64).at(self.start.line, self.start.column));
            // @else
            //~ out.push(Token::truncated(self.span as u64));
            // @end
        }
    }
    // @end

    /// Emits the unfinished token as a token of `kind`, then goes back
    /// between tokens.
    fn emit(&mut self, kind: Kind, out: &mut Vec<Token>) {
        self.whole_characters(); // @gate 6
        let text = String::from_utf8_lossy(&self.text).into_owned();
        // @gate 3
        out.push(Token::new(kind, text).at(self.start.line, self.start.column));
        // @else
        //~ out.push(Token::new(kind, text));
        // @end
        self.flag(out); // @gate 6
        self.text.clear();
        self.span = 0; // @gate 2
        self.state = State::Between;
    }

    fn emit_bare(&mut self, out: &mut Vec<Token>) {
        let kind = if is_number(&self.text) { Kind::Number } else { Kind::Word };
        // @gate 6
        // Truncated, the kept text is not the whole token: its kind is.
        let kind = if self.dropping { number_or_word(self.shape) } else { kind };
        // @end
        self.emit(kind, out);
    }

    /// Reports `fault`, revealed by the byte being looked at, then breaks
    /// the stream.
    /// With recovery on, it starts a skip to the next line instead. // @gate 4
    fn fault(&mut self, fault: Fault, out: &mut Vec<Token>) {
        // @gate 3
        out.push(Token::error(fault).at(self.here.line, self.here.column));
        // @else
        //~ out.push(Token::error(fault));
        // @end
        self.text.clear();
        // @gate 4
        if self.recover {
            // The skip covers the broken token from its first byte.
            self.skipped = self.span as u64;
            self.state = State::Skipping;
            return;
        }
        // @end
        self.state = State::Broken;
    }

    // @gate 4
    /// The byte that revealed a fault without joining its token is the
    /// first byte of the skip: a newline ends it at once.
    fn skip_from(&mut self, b: u8, out: &mut Vec<Token>) {
        if self.state == State::Skipping {
            self.skip(b, out);
        }
    }

    fn skip(&mut self, b: u8, out: &mut Vec<Token>) {
        if b == b'\n' {
            self.end_skip(out);
        } else {
            self.skipped += 1;
        }
    }

    fn end_skip(&mut self, out: &mut Vec<Token>) {
        out.push(Token::gap(self.skipped).at(self.start.line, self.start.column));
        self.skipped = 0;
        self.state = State::Between;
    }
    // @end

    /// A byte seen between tokens.
    fn begin(&mut self, b: u8, out: &mut Vec<Token>) {
        if is_space(b) {
            return;
        }
        self.text.clear();
        self.start = self.here; // @gate 3
        // @gate 2
        self.span = 0;
        // @gate 6
        self.dropping = false;
        // @end
        if !self.join(out) {
            return;
        }
        // @end
        if is_punct(b) {
            // @gate 5
            if self.nesting && !self.nest(b, out) {
                return;
            }
            // @end
            self.keep(b);
            self.emit(Kind::Punct, out);
        } else if b == b'"' {
            self.state = State::InString;
        } else {
            self.keep(b);
            self.shape = shape_step(SHAPE_START, b); // @gate 6
            self.state = State::Bare;
        }
    }

    // @gate 5
    /// Opens or closes a container for punctuation `b`; false (after
    /// reporting the fault) if the nesting forbids it.
    fn nest(&mut self, b: u8, out: &mut Vec<Token>) -> bool {
        if b == b'[' || b == b'{' {
            if self.open.len() + 1 > self.max_depth {
                self.fault(Fault::TooDeep, out);
                return false;
            }
            self.open.push(b);
        } else if let Some(opener) = opener_of(b) {
            if self.open.last() != Some(&opener) {
                self.fault(Fault::MismatchedClose, out);
                return false;
            }
            self.open.pop();
        }
        true
    }
    // @end

    fn step(&mut self, b: u8, out: &mut Vec<Token>) {
        self.advance(b); // @gate 3
        match self.state {
            State::Between => self.begin(b, out),
            State::Bare => {
                if ends_bare(b) {
                    self.emit_bare(out);
                    self.begin(b, out);
                } else {
                    // @gate 2
                    if !self.join(out) {
                        return;
                    }
                    // @end
                    self.shape = shape_step(self.shape, b); // @gate 6
                    self.keep(b);
                }
            }
            State::InString => {
                // A string cannot span lines.
                if b == b'\n' {
                    self.fault(Fault::UnterminatedString, out);
                    self.skip_from(b, out); // @gate 4
                    return;
                }
                // @gate 2
                if !self.join(out) {
                    return;
                }
                // @end
                match b {
                    b'"' => self.emit(Kind::Str, out),
                    b'\\' => self.state = State::Escape,
                    _ => self.keep(b),
                }
            }
            State::Escape => match unescape(b) {
                Some(c) => {
                    // @gate 2
                    if !self.join(out) {
                        return;
                    }
                    // @end
                    self.keep(c);
                    self.state = State::InString;
                }
                None => {
                    self.fault(Fault::BadEscape, out);
                    self.skip_from(b, out); // @gate 4
                }
            },
            State::Skipping => self.skip(b, out), // @gate 4
            State::Broken | State::Closed => unreachable!("feed returns before stepping"),
        }
    }
}

impl StreamingTokenizer for Lexer {
    fn new() -> Self {
        Lexer {
            state: State::Between,
            text: Vec::new(),
            // @gate 2
            span: 0,
            limit: DEFAULT_LIMIT,
            // @end
            // @gate 3
            start: Pos::default(),
            line: 1,
            next_column: 1,
            here: Pos::default(),
            // @end
            // @gate 4
            recover: false,
            skipped: 0,
            // @end
            // @gate 5
            nesting: false,
            max_depth: 0,
            open: Vec::new(),
            // @end
            // @gate 6
            truncate: false,
            dropping: false,
            shape: SHAPE_START,
            // @end
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
        if self.state == State::Closed {
            return Err(Refusal::Closed);
        }
        let mut out = Vec::new();
        // @gate 3
        // A fault found by the end of the stream is placed just past its
        // last character.
        self.here = Pos { line: self.line, column: self.next_column };
        // @end
        match self.state {
            State::Bare => self.emit_bare(&mut out),
            State::InString | State::Escape => self.fault(Fault::UnterminatedString, &mut out),
            _ => {}
        }
        // @gate 4
        // The end of the stream ends a skip, even one that began just now.
        if self.state == State::Skipping {
            self.end_skip(&mut out);
        }
        // @end
        // @gate 5
        // The end of the stream closes no container: one still open is a
        // fault, after the pending token, unless the stream already broke.
        if self.nesting && !self.open.is_empty() && self.state != State::Broken {
            // @gate 3
            out.push(Token::error(Fault::Unclosed).at(self.here.line, self.here.column));
            // @else
            //~ out.push(Token::error(Fault::Unclosed));
            // @end
        }
        self.open = Vec::new();
        // @end
        self.state = State::Closed;
        Ok(out)
    }
    // @gate 2

    fn set_limit(&mut self, max_token_bytes: usize) {
        self.limit = max_token_bytes;
    }

    fn buffered(&self) -> usize {
        match self.state {
            State::Bare | State::InString | State::Escape => self.span,
            _ => 0,
        }
    }
    // @end
    // @gate 4

    fn set_recovery(&mut self, on: bool) {
        self.recover = on;
    }
    // @end
    // @gate 6

    fn set_truncate(&mut self, on: bool) {
        self.truncate = on;
    }
    // @end
    // @gate 5

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
    // @end
}

harness_contract::export!(streaming_tokenizer, Lexer);
