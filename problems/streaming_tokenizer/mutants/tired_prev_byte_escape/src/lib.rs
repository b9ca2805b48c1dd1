// A tired candidate's gate 1: flags instead of a state enum, and "is this
// quote escaped?" answered by looking at the previous byte.

use harness_contract::streaming_tokenizer::{Fault, Kind, Refusal, StreamingTokenizer, Token};

pub struct Lex {
    buf: Vec<u8>,
    in_str: bool,
    in_bare: bool,
    prev: u8,
    closed: bool,
    broken: bool,
}

fn is_num(s: &str) -> bool {
    let s = s.strip_prefix('-').unwrap_or(s);
    let mut parts = s.splitn(2, '.');
    let a = parts.next().unwrap_or("");
    let ok = |p: &str| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit());
    match parts.next() {
        Some(b) => ok(a) && ok(b),
        None => ok(a),
    }
}

impl Lex {
    fn bare(&mut self, out: &mut Vec<Token>) {
        if self.in_bare {
            let text = String::from_utf8_lossy(&self.buf).to_string();
            let kind = if is_num(&text) { Kind::Number } else { Kind::Word };
            out.push(Token::new(kind, text));
            self.buf.clear();
            self.in_bare = false;
        }
    }

    fn string(&mut self, out: &mut Vec<Token>) {
        let mut s = Vec::new();
        let mut i = 0;
        while i < self.buf.len() {
            if self.buf[i] == b'\\' && i + 1 < self.buf.len() {
                s.push(match self.buf[i + 1] {
                    b'n' => b'\n',
                    b't' => b'\t',
                    c => c,
                });
                i += 2;
            } else {
                s.push(self.buf[i]);
                i += 1;
            }
        }
        out.push(Token::new(Kind::Str, String::from_utf8_lossy(&s).to_string()));
        self.buf.clear();
        self.in_str = false;
    }
}

impl StreamingTokenizer for Lex {
    fn new() -> Self {
        Lex { buf: vec![], in_str: false, in_bare: false, prev: 0, closed: false, broken: false }
    }

    fn feed(&mut self, chunk: &[u8]) -> Result<Vec<Token>, Refusal> {
        if self.closed {
            return Err(Refusal::Closed);
        }
        let mut out = vec![];
        for &b in chunk {
            if self.broken {
                break;
            }
            if self.in_str {
                if b == b'"' && self.prev != b'\\' {
                    self.string(&mut out);
                } else if b == b'\n' && self.prev != b'\\' {
                    out.push(Token::error(Fault::UnterminatedString));
                    self.broken = true;
                } else if self.prev == b'\\' && !matches!(b, b'"' | b'\\' | b'n' | b't') {
                    out.push(Token::error(Fault::BadEscape));
                    self.broken = true;
                } else {
                    self.buf.push(b);
                }
            } else {
                match b {
                    b' ' | b'\t' | b'\n' | b'\r' => self.bare(&mut out),
                    b'{' | b'}' | b'[' | b']' | b':' | b',' => {
                        self.bare(&mut out);
                        out.push(Token::new(Kind::Punct, (b as char).to_string()));
                    }
                    b'"' => {
                        self.bare(&mut out);
                        self.in_str = true;
                    }
                    _ => {
                        self.in_bare = true;
                        self.buf.push(b);
                    }
                }
            }
            self.prev = b;
        }
        Ok(out)
    }

    fn close(&mut self) -> Result<Vec<Token>, Refusal> {
        if self.closed {
            return Err(Refusal::Closed);
        }
        self.closed = true;
        let mut out = vec![];
        if self.broken {
            return Ok(out);
        }
        if self.in_str {
            out.push(Token::error(Fault::UnterminatedString));
        } else {
            self.bare(&mut out);
        }
        Ok(out)
    }
}

harness_contract::export!(streaming_tokenizer, Lex);
