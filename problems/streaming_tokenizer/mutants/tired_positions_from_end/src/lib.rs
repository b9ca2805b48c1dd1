// A tired candidate who does not store where a token starts: its column is
// worked out when it is emitted, from the current column and the length of
// its text.

use harness_contract::streaming_tokenizer::{Fault, Kind, Refusal, StreamingTokenizer, Token};

pub struct Lex {
    buf: Vec<u8>,
    in_str: bool,
    esc: bool,
    in_bare: bool,
    size: usize,
    limit: usize,
    recovery: bool,
    skipping: bool,
    skipped: u64,
    broken: bool,
    closed: bool,
    line: u64,
    col: u64,
    start: (u64, u64),
    cur: (u64, u64),
    max_depth: Option<usize>,
    stack: Vec<u8>,
    truncate: bool,
    dropping: bool,
    shape: u8,
}

fn delim(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'{' | b'}' | b'[' | b']' | b':' | b',' | b'"')
}

fn number(s: &[u8]) -> bool {
    let s = if s.first() == Some(&b'-') { &s[1..] } else { s };
    let dot = s.iter().position(|&c| c == b'.');
    let (a, b) = match dot {
        Some(d) => (&s[..d], Some(&s[d + 1..])),
        None => (s, None),
    };
    let ok = |p: &[u8]| !p.is_empty() && p.iter().all(|c| c.is_ascii_digit());
    ok(a) && b.is_none_or(ok)
}

impl Lex {
    fn tok(&self, kind: Kind, text: String, at: (u64, u64)) -> Token {
        Token::new(kind, text).at(at.0, at.1)
    }

    fn gap(&mut self, out: &mut Vec<Token>) {
        out.push(self.tok(Kind::Gap, self.skipped.to_string(), self.start));
        self.skipped = 0;
        self.skipping = false;
    }

    fn fault(&mut self, f: Fault, at: (u64, u64), by_newline: bool, out: &mut Vec<Token>) {
        out.push(Token::error(f).at(at.0, at.1));
        self.buf.clear();
        self.in_str = false;
        self.esc = false;
        self.in_bare = false;
        if self.recovery {
            self.skipping = true;
            self.skipped = self.size as u64;
            if by_newline {
                self.gap(out);
            }
        } else {
            self.broken = true;
        }
    }

    // Returns false if the byte made the token too long.
    fn grow(&mut self, out: &mut Vec<Token>) -> bool {
        if self.dropping || (self.truncate && self.size >= self.limit) {
            self.size += 1;
            self.dropping = true;
            return true;
        }
        self.size += 1;
        if self.size > self.limit {
            let at = self.cur;
            self.fault(Fault::TokenTooLong, at, false, out);
            return false;
        }
        true
    }

    fn keep(&mut self, b: u8) {
        if !self.dropping {
            self.buf.push(b);
        }
    }

    fn bare_byte(&mut self, b: u8) {
        self.shape = match (self.shape, b) {
            (0, b'-') => 1,
            (0..=2, b'0'..=b'9') => 2,
            (2, b'.') => 3,
            (3 | 4, b'0'..=b'9') => 4,
            _ => 5,
        };
        self.keep(b);
    }

    fn cut_text(&mut self) -> String {
        if self.dropping {
            if let Err(e) = std::str::from_utf8(&self.buf) {
                self.buf.truncate(e.valid_up_to());
            }
        }
        String::from_utf8_lossy(&self.buf).to_string()
    }

    fn marker(&mut self, out: &mut Vec<Token>) {
        if self.dropping {
            out.push(Token::truncated(self.size as u64));
            self.dropping = false;
        }
    }

    fn emit_bare(&mut self, out: &mut Vec<Token>) {
        let kind = if self.dropping {
            if matches!(self.shape, 2 | 4) { Kind::Number } else { Kind::Word }
        } else if number(&self.buf) {
            Kind::Number
        } else {
            Kind::Word
        };
        let text = self.cut_text();
        // The delimiter (or the end) is just after the token.
        let (line, col) = if self.closed { (self.line, self.col) } else { self.cur };
        let at = (line, col - text.chars().count() as u64);
        out.push(self.tok(kind, text, at));
        self.marker(out);
        self.buf.clear();
        self.in_bare = false;
        self.size = 0;
    }

    fn byte(&mut self, b: u8, out: &mut Vec<Token>) {
        if b & 0xC0 != 0x80 {
            self.cur = (self.line, self.col);
            self.col += 1;
        }
        if b == b'\n' {
            self.line += 1;
            self.col = 1;
        }
        if self.skipping {
            if b == b'\n' {
                self.gap(out);
            } else {
                self.skipped += 1;
            }
            return;
        }
        if self.in_str {
            if self.esc {
                let c = match b {
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'n' => b'\n',
                    b't' => b'\t',
                    _ => {
                        if b != b'\n' {
                            self.size += 1;
                        }
                        let at = self.cur;
                        self.fault(Fault::BadEscape, at, b == b'\n', out);
                        return;
                    }
                };
                if self.grow(out) {
                    self.keep(c);
                    self.esc = false;
                }
            } else if b == b'"' {
                if self.grow(out) {
                    let text = self.cut_text();
                    // Back from the closing quote over the text and the opening quote.
                    let at = (self.cur.0, self.cur.1.saturating_sub(text.chars().count() as u64 + 1));
                    out.push(self.tok(Kind::Str, text, at));
                    self.marker(out);
                    self.buf.clear();
                    self.in_str = false;
                    self.size = 0;
                }
            } else if b == b'\\' {
                if self.grow(out) {
                    self.esc = true;
                }
            } else if b == b'\n' {
                let at = self.cur;
                self.fault(Fault::UnterminatedString, at, true, out);
            } else if self.grow(out) {
                self.keep(b);
            }
            return;
        }
        if self.in_bare {
            if !delim(b) {
                if self.grow(out) {
                    self.bare_byte(b);
                }
                return;
            }
            self.emit_bare(out);
        }
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => {}
            b'{' | b'}' | b'[' | b']' | b':' | b',' => {
                self.start = self.cur;
                self.size = 0;
                self.dropping = false;
                self.shape = 0;
                if self.grow(out) {
                    if let Some(max) = self.max_depth {
                        let bad = match b {
                            b'[' | b'{' => self.stack.len() >= max,
                            b']' => self.stack.last() != Some(&b'['),
                            b'}' => self.stack.last() != Some(&b'{'),
                            _ => false,
                        };
                        if bad {
                            let f = if matches!(b, b'[' | b'{') { Fault::TooDeep } else { Fault::MismatchedClose };
                            let at = self.cur;
                            self.fault(f, at, false, out);
                            return;
                        }
                        match b {
                            b'[' | b'{' => self.stack.push(b),
                            b']' | b'}' => {
                                self.stack.pop();
                            }
                            _ => {}
                        }
                    }
                    let text = if self.dropping { String::new() } else { (b as char).to_string() };
                    out.push(self.tok(Kind::Punct, text, self.start));
                    self.marker(out);
                    self.size = 0;
                }
            }
            b'"' => {
                self.start = self.cur;
                self.size = 0;
                self.dropping = false;
                self.shape = 0;
                if self.grow(out) {
                    self.in_str = true;
                }
            }
            _ => {
                self.start = self.cur;
                self.size = 0;
                self.dropping = false;
                self.shape = 0;
                if self.grow(out) {
                    self.bare_byte(b);
                    self.in_bare = true;
                }
            }
        }
    }
}

impl StreamingTokenizer for Lex {
    fn new() -> Self {
        Lex {
            buf: Vec::new(),
            in_str: false,
            esc: false,
            in_bare: false,
            size: 0,
            limit: 1048576,
            recovery: false,
            skipping: false,
            skipped: 0,
            broken: false,
            closed: false,
            line: 1,
            col: 1,
            start: (1, 1),
            cur: (1, 1),
            max_depth: None,
            stack: Vec::new(),
            truncate: false,
            dropping: false,
            shape: 0,
        }
    }

    fn feed(&mut self, chunk: &[u8]) -> Result<Vec<Token>, Refusal> {
        if self.closed {
            return Err(Refusal::Closed);
        }
        let mut out = Vec::new();
        for &b in chunk {
            if self.broken {
                break;
            }
            self.byte(b, &mut out);
        }
        Ok(out)
    }

    fn close(&mut self) -> Result<Vec<Token>, Refusal> {
        if self.closed {
            return Err(Refusal::Closed);
        }
        self.closed = true;
        let mut out = Vec::new();
        if self.broken {
            return Ok(out);
        }
        if self.skipping {
            self.gap(&mut out);
        } else if self.in_str {
            let end = (self.line, self.col);
            self.fault(Fault::UnterminatedString, end, false, &mut out);
            if self.skipping {
                self.gap(&mut out);
            }
        } else if self.in_bare {
            self.emit_bare(&mut out);
        }
        if self.max_depth.is_some() && !self.stack.is_empty() && !self.broken {
            out.push(Token::error(Fault::Unclosed).at(self.line, self.col));
        }
        Ok(out)
    }

    fn set_limit(&mut self, max_token_bytes: usize) {
        self.limit = max_token_bytes;
    }

    fn buffered(&self) -> usize {
        if self.broken || self.closed || self.skipping {
            0
        } else if self.in_str || self.in_bare {
            self.size
        } else {
            0
        }
    }

    fn set_recovery(&mut self, on: bool) {
        self.recovery = on;
    }

    fn set_truncate(&mut self, on: bool) {
        self.truncate = on;
    }

    fn set_max_depth(&mut self, max_depth: usize) {
        self.max_depth = Some(max_depth);
    }

    fn depth(&self) -> usize {
        if self.broken || self.closed { 0 } else { self.stack.len() }
    }
}

harness_contract::export!(streaming_tokenizer, Lex);
