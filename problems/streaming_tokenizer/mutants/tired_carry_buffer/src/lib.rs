// A tired candidate's carry buffer: append the chunk, consume complete
// tokens from the front, keep the rest. The limit is checked on the whole
// buffer as soon as the chunk is appended.

use harness_contract::streaming_tokenizer::{Fault, Kind, Refusal, StreamingTokenizer, Token};

pub struct Lex {
    buf: Vec<u8>,
    limit: usize,
    closed: bool,
    broken: bool,
    max_depth: Option<usize>,
    open: Vec<u8>,
}

enum Step {
    Tok(Token, usize),
    Skip(usize),
    Need,
    Bad(Fault),
}

fn delim(b: u8) -> bool {
    b" \t\n\r{}[]:,\"".contains(&b)
}

fn bare(bytes: &[u8]) -> Token {
    let text = String::from_utf8_lossy(bytes).to_string();
    let t = text.strip_prefix('-').unwrap_or(&text);
    let (int, frac) = match t.find('.') {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let digits = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit());
    let num = digits(int) && frac.is_none_or(digits);
    Token::new(if num { Kind::Number } else { Kind::Word }, text)
}

fn try_consume(buf: &[u8]) -> Step {
    match buf[0] {
        b' ' | b'\t' | b'\n' | b'\r' => Step::Skip(1),
        c @ (b'{' | b'}' | b'[' | b']' | b':' | b',') => Step::Tok(Token::new(Kind::Punct, (c as char).to_string()), 1),
        b'"' => {
            let mut s = Vec::new();
            let mut i = 1;
            while i < buf.len() {
                match buf[i] {
                    b'"' => return Step::Tok(Token::new(Kind::Str, String::from_utf8_lossy(&s).to_string()), i + 1),
                    b'\n' => return Step::Bad(Fault::UnterminatedString),
                    b'\\' => {
                        if i + 1 >= buf.len() {
                            return Step::Need;
                        }
                        s.push(match buf[i + 1] {
                            b'"' => b'"',
                            b'\\' => b'\\',
                            b'n' => b'\n',
                            b't' => b'\t',
                            _ => return Step::Bad(Fault::BadEscape),
                        });
                        i += 2;
                    }
                    c => {
                        s.push(c);
                        i += 1;
                    }
                }
            }
            Step::Need
        }
        _ => match buf.iter().position(|&b| delim(b)) {
            Some(end) => Step::Tok(bare(&buf[..end]), end),
            None => Step::Need,
        },
    }
}

impl Lex {
    fn nesting(&mut self, t: &Token) -> Option<Fault> {
        let max = self.max_depth?;
        if t.kind != Kind::Punct {
            return None;
        }
        match t.text.as_str() {
            "[" | "{" => {
                if self.open.len() == max {
                    return Some(Fault::TooDeep);
                }
                self.open.push(t.text.as_bytes()[0]);
            }
            "]" | "}" => {
                let want = if t.text == "]" { b'[' } else { b'{' };
                if self.open.pop() != Some(want) {
                    return Some(Fault::MismatchedClose);
                }
            }
            _ => {}
        }
        None
    }
}

impl StreamingTokenizer for Lex {
    fn new() -> Self {
        Lex { buf: Vec::new(), limit: 1 << 20, closed: false, broken: false, max_depth: None, open: Vec::new() }
    }

    fn feed(&mut self, chunk: &[u8]) -> Result<Vec<Token>, Refusal> {
        if self.closed {
            return Err(Refusal::Closed);
        }
        let mut out = Vec::new();
        if self.broken {
            return Ok(out);
        }
        self.buf.extend_from_slice(chunk);
        if self.buf.len() > self.limit {
            out.push(Token::error(Fault::TokenTooLong));
            self.broken = true;
            self.buf.clear();
            return Ok(out);
        }
        while !self.buf.is_empty() {
            match try_consume(&self.buf) {
                Step::Tok(t, n) => {
                    if let Some(f) = self.nesting(&t) {
                        out.push(Token::error(f));
                        self.broken = true;
                        self.buf.clear();
                        break;
                    }
                    out.push(t);
                    self.buf.drain(..n);
                }
                Step::Skip(n) => {
                    self.buf.drain(..n);
                }
                Step::Need => break,
                Step::Bad(f) => {
                    out.push(Token::error(f));
                    self.broken = true;
                    self.buf.clear();
                    break;
                }
            }
        }
        Ok(out)
    }

    fn close(&mut self) -> Result<Vec<Token>, Refusal> {
        if self.closed {
            return Err(Refusal::Closed);
        }
        self.closed = true;
        let mut out = Vec::new();
        if !self.broken && !self.buf.is_empty() {
            if self.buf[0] == b'"' {
                out.push(Token::error(Fault::UnterminatedString));
                self.broken = true;
            } else {
                out.push(bare(&self.buf));
            }
        }
        if !self.broken && self.max_depth.is_some() && !self.open.is_empty() {
            out.push(Token::error(Fault::Unclosed));
        }
        self.buf.clear();
        Ok(out)
    }

    fn set_limit(&mut self, max_token_bytes: usize) {
        self.limit = max_token_bytes;
    }

    fn buffered(&self) -> usize {
        if self.broken || self.closed { 0 } else { self.buf.len() }
    }

    fn set_recovery(&mut self, _on: bool) {}

    fn set_max_depth(&mut self, max_depth: usize) {
        self.max_depth = Some(max_depth);
    }

    fn depth(&self) -> usize {
        if self.broken || self.closed { 0 } else { self.open.len() }
    }
}

harness_contract::export!(streaming_tokenizer, Lex);
