//! A problem's operations, read from the source of its contract module:
//! the one place each operation is declared (`contract!` in
//! `contract/src/<id>.rs`; with `dispatch = custom`, its `harness { ... }`
//! block adds the module's own operations and the wire's constructor).
//!
//! The harness reads the text rather than linking the module, so that
//! loading a problem builds nothing and a new problem needs no rebuild of
//! the harness. The declaration gives each operation's name, parameters
//! and types; a `// Gate N: ...` comment before a group of methods says
//! which gate introduces them (the shared trait's methods belong to the
//! problem's concurrent gate unless a comment says otherwise). The compiled
//! module's `schema()` must agree with what is read here, and a library
//! built against any other declaration is refused at its handshake.

use std::path::Path;

use crate::base::diag::Located;
use crate::problem::ty::Ty;

/// One operation as its declaration gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct ContractOp {
    pub name: String,
    /// From the `// Gate N` comment before it; `None` in a shared trait
    /// without one (the concurrent gate).
    pub gate: Option<usize>,
    pub params: Vec<(String, Ty)>,
    pub ret: Ty,
    /// Declared in the shared trait (`&self`, called from many threads).
    pub shared: bool,
    /// Where its name is, for error messages.
    pub offset: usize,
}

/// What a contract module declares.
#[derive(Clone, Debug, PartialEq)]
pub struct Contract {
    pub problem: String,
    pub problem_offset: usize,
    /// The error kinds, in declaration order (the schema hashes them).
    pub errors: Vec<String>,
    pub ctor: Vec<(String, Ty)>,
    pub ops: Vec<ContractOp>,
}

/// Reads the `contract!` declaration in `text`; `file` is
/// used in error messages only.
pub fn parse(file: &Path, text: &str) -> Result<Contract, Located> {
    let toks = tokenize(text).map_err(|(at, m)| Located::at(file, text, at, m))?;
    let mut p = Parser { toks, pos: 0, gate: None };
    p.contract().map_err(|(at, m)| Located::at(file, text, at, m))
}

type Failed = (usize, String);
/// Named, typed parameters.
type Params = Vec<(String, Ty)>;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Punct(char),
    Str(String),
    /// A line comment's text, without its `//`, `///` or `//!`.
    Comment(String),
    /// A number or char literal: never part of a declaration's shape.
    Lit,
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    at: usize,
}

/// Rust tokens, coarsely: enough to read declarations and to skip bodies.
fn tokenize(text: &str) -> Result<Vec<Token>, Failed> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"//") {
            let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
            let body = text[i + 2..end].trim_start_matches(['/', '!']).trim().to_string();
            out.push(Token { tok: Tok::Comment(body), at: start });
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'"' || (c == b'r' && matches!(b.get(i + 1), Some(b'"' | b'#'))) {
            let (value, end) = string(text, i).ok_or((start, "this string never ends".to_string()))?;
            out.push(Token { tok: Tok::Str(value), at: start });
            i = end;
        } else if c == b'\'' {
            // A char literal ('x', '\n') or a lifetime ('a).
            if b.get(i + 1) == Some(&b'\\') {
                i = text[i + 2..].find('\'').map_or(b.len(), |n| i + 2 + n + 1);
                out.push(Token { tok: Tok::Lit, at: start });
            } else if let Some(ch) = text[i + 1..].chars().next()
                && text[i + 1 + ch.len_utf8()..].starts_with('\'')
            {
                i += 1 + ch.len_utf8() + 1;
                out.push(Token { tok: Tok::Lit, at: start });
            } else {
                i += 1;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                out.push(Token { tok: Tok::Lit, at: start });
            }
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            out.push(Token { tok: Tok::Lit, at: start });
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Token { tok: Tok::Ident(text[start..i].to_string()), at: start });
        } else {
            let ch = text[i..].chars().next().unwrap_or('?');
            i += ch.len_utf8();
            out.push(Token { tok: Tok::Punct(ch), at: start });
        }
    }
    Ok(out)
}

/// The string literal starting at `i` (plain or raw): its contents, with
/// the simple escapes undone, and where it ends.
fn string(text: &str, i: usize) -> Option<(String, usize)> {
    let b = text.as_bytes();
    if b[i] == b'r' {
        let hashes = text[i + 1..].bytes().take_while(|&c| c == b'#').count();
        let open = i + 1 + hashes;
        if b.get(open) != Some(&b'"') {
            return None;
        }
        let close = format!("\"{}", "#".repeat(hashes));
        let end = text[open + 1..].find(&close)? + open + 1;
        return Some((text[open + 1..end].to_string(), end + close.len()));
    }
    let mut value = String::new();
    let mut chars = text[i + 1..].char_indices();
    while let Some((n, ch)) = chars.next() {
        match ch {
            '"' => return Some((value, i + 1 + n + 1)),
            '\\' => match chars.next()?.1 {
                'n' => value.push('\n'),
                't' => value.push('\t'),
                other => value.push(other),
            },
            other => value.push(other),
        }
    }
    None
}

/// The gate a `// Gate N: ...` comment names (also `/// Gate N.`).
fn gate_of(comment: &str) -> Option<usize> {
    let rest = comment.strip_prefix("Gate ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let after = rest[digits.len()..].chars().next();
    if digits.is_empty() || !matches!(after, None | Some(':' | '.' | ' ')) {
        return None;
    }
    digits.parse().ok()
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    /// The gate the last `// Gate N` comment named.
    gate: Option<usize>,
}

impl Parser {
    /// The next token that is not a comment, noting gate comments passed.
    fn peek(&mut self) -> Option<&Tok> {
        while let Some(t) = self.toks.get(self.pos) {
            match &t.tok {
                Tok::Comment(c) => {
                    if let Some(g) = gate_of(c) {
                        self.gate = Some(g);
                    }
                    self.pos += 1;
                }
                _ => break,
            }
        }
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn at(&mut self) -> usize {
        self.peek();
        self.toks.get(self.pos).or(self.toks.last()).map_or(0, |t| t.at)
    }

    fn bump(&mut self) -> Option<Tok> {
        self.peek()?;
        self.pos += 1;
        Some(self.toks[self.pos - 1].tok.clone())
    }

    fn fail<T>(&mut self, message: impl Into<String>) -> Result<T, Failed> {
        Err((self.at(), message.into()))
    }

    fn is_punct(&mut self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }

    fn is_ident(&mut self, word: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(w)) if w == word)
    }

    fn punct(&mut self, c: char, what: &str) -> Result<(), Failed> {
        if self.is_punct(c) {
            self.pos += 1;
            return Ok(());
        }
        self.fail(format!("expected `{c}` {what}"))
    }

    fn keyword(&mut self, word: &str, what: &str) -> Result<(), Failed> {
        if self.is_ident(word) {
            self.pos += 1;
            return Ok(());
        }
        self.fail(format!("expected `{word}` {what}"))
    }

    fn ident(&mut self, what: &str) -> Result<String, Failed> {
        match self.peek() {
            Some(Tok::Ident(w)) => {
                let w = w.clone();
                self.pos += 1;
                Ok(w)
            }
            _ => self.fail(format!("expected {what}")),
        }
    }

    /// Skips one balanced group whose opening `open` is next.
    fn skip_group(&mut self, open: char, close: char) -> Result<(), Failed> {
        let start = self.at();
        self.punct(open, "")?;
        let mut depth = 1;
        while depth > 0 {
            match self.bump() {
                Some(Tok::Punct(c)) if c == open => depth += 1,
                Some(Tok::Punct(c)) if c == close => depth -= 1,
                Some(_) => {}
                None => return Err((start, format!("this `{open}` is never closed"))),
            }
        }
        Ok(())
    }

    /// Skips attributes (`#[...]`); doc comments are comments already.
    fn skip_attributes(&mut self) -> Result<(), Failed> {
        while self.is_punct('#') {
            self.pos += 1;
            self.skip_group('[', ']')?;
        }
        Ok(())
    }

    /// Where the `contract! {` declaration's body starts.
    fn find_declaration(&mut self) -> Result<(), Failed> {
        // A `contract!` without `problem` declares a trait off the wire.
        let found = self.toks.windows(4).position(|w| {
            w[0].tok == Tok::Ident("contract".into())
                && w[1].tok == Tok::Punct('!')
                && w[2].tok == Tok::Punct('{')
                && w[3].tok == Tok::Ident("problem".into())
        });
        match found {
            Some(i) => {
                self.pos = i + 3;
                Ok(())
            }
            None => {
                Err((0, "no `contract! { ... }` declaration in this file: it declares the problem's operations".into()))
            }
        }
    }

    fn contract(&mut self) -> Result<Contract, Failed> {
        self.find_declaration()?;
        self.keyword("problem", "first in the declaration: `problem = \"<id>\";`")?;
        self.punct('=', "after `problem`")?;
        let problem_offset = self.at();
        let problem = match self.bump() {
            Some(Tok::Str(s)) => s,
            _ => return Err((problem_offset, "expected the problem's id as a string".into())),
        };
        self.punct(';', "after the problem's id")?;
        self.keyword("errors", "after the problem: `errors = <error enum>;`")?;
        self.punct('=', "after `errors`")?;
        let errors_at = self.at();
        let errors_name = self.path_tail()?;
        self.punct(';', "after the error type")?;
        let errors = if errors_name == "NoError" { Vec::new() } else { self.error_kinds(&errors_name, errors_at)? };
        let custom = self.is_ident("dispatch");
        if custom {
            self.pos += 1;
            self.punct('=', "after `dispatch`")?;
            self.keyword("custom", "after `dispatch =`")?;
            self.punct(';', "after `dispatch = custom`")?;
        }

        self.skip_attributes()?;
        let (mut ctor, mut ops) = self.main_trait(custom)?;
        // A `Gate N` comment on the next block itself names its gate.
        self.gate = None;
        self.skip_attributes()?;
        if custom {
            let (wire_ctor, more) = self.harness_block()?;
            ctor = wire_ctor;
            ops.extend(more);
        } else if !self.is_punct('}') {
            ops.extend(self.shared_trait()?);
        }
        self.punct('}', "after the traits: the declaration holds at most two")?;
        Ok(Contract { problem, problem_offset, errors, ctor, ops })
    }

    /// `harness { fn new(...) -> Self; <methods> }`: with `dispatch =
    /// custom`, the wire's constructor and the operations the module adds.
    fn harness_block(&mut self) -> Result<(Params, Vec<ContractOp>), Failed> {
        self.keyword("harness", "after the trait: `dispatch = custom` declares the wire's own operations there")?;
        self.punct('{', "to open the harness block")?;
        self.gate = None;
        self.constructor()?;
        let (_, ctor) = self.params()?;
        self.punct('-', "then `-> Self` after `new`'s parameters")?;
        self.punct('>', "")?;
        self.keyword("Self", "as `new`'s return type")?;
        self.punct(';', "after `new`")?;
        Ok((ctor, self.methods(false)?))
    }

    /// `fn new`, first in a block.
    fn constructor(&mut self) -> Result<(), Failed> {
        self.skip_attributes()?;
        self.keyword("fn", "first in the block: `fn new(...) -> Self;`")?;
        if !self.is_ident("new") {
            return self.fail("the block's first method is the constructor, `fn new(...) -> Self;`");
        }
        self.pos += 1;
        Ok(())
    }

    /// The last segment of a path such as `crate::NoError`.
    fn path_tail(&mut self) -> Result<String, Failed> {
        let mut name = self.ident("a type")?;
        while self.is_punct(':') {
            self.punct(':', "")?;
            self.punct(':', "in a path")?;
            name = self.ident("a path segment")?;
        }
        Ok(name)
    }

    /// The candidate's trait: its constructor's parameters (none from a
    /// `custom` one, whose constructor is not on the wire) and methods.
    fn main_trait(&mut self, custom: bool) -> Result<(Params, Vec<ContractOp>), Failed> {
        if self.is_ident("pub") {
            self.pos += 1;
        }
        self.keyword("trait", "(the candidate's trait)")?;
        self.ident("the trait's name")?;
        self.punct('{', "to open the trait")?;
        self.gate = None;
        let ctor = if custom {
            self.skip_attributes()?;
            self.keyword("fn", "first in the trait: its constructor")?;
            self.ident("the constructor's name")?;
            self.skip_group('(', ')')?;
            Vec::new()
        } else {
            self.constructor()?;
            let (receiver, ctor) = self.params()?;
            if receiver {
                return self.fail("`new` takes no `self`");
            }
            ctor
        };
        self.punct('-', "then `-> Self` after the constructor's parameters")?;
        self.punct('>', "")?;
        self.keyword("Self", "as `new`'s return type")?;
        self.punct(';', "after `new`")?;
        let ops = self.methods(false)?;
        Ok((ctor, ops))
    }

    fn shared_trait(&mut self) -> Result<Vec<ContractOp>, Failed> {
        if self.is_ident("pub") {
            self.pos += 1;
        }
        self.keyword("trait", "(the shared trait) or `}`")?;
        self.ident("the shared trait's name")?;
        self.punct(':', "then `: Send + Sync` after the shared trait's name")?;
        while !self.is_punct('{') {
            if self.bump().is_none() {
                return self.fail("the shared trait has no body");
            }
        }
        self.punct('{', "")?;
        self.methods(true)
    }

    /// Methods up to the trait's closing brace.
    fn methods(&mut self, shared: bool) -> Result<Vec<ContractOp>, Failed> {
        let mut ops: Vec<ContractOp> = Vec::new();
        loop {
            self.skip_attributes()?;
            if self.is_punct('}') {
                self.pos += 1;
                return Ok(ops);
            }
            self.keyword("fn", "(a method) or `}`")?;
            let offset = self.at();
            let name = self.ident("the method's name")?;
            if ops.iter().any(|o| o.name == name) {
                return Err((offset, format!("`{name}` is declared twice")));
            }
            let (receiver, params) = self.params()?;
            if !receiver {
                return Err((offset, format!("`{name}` needs `&self` or `&mut self` first")));
            }
            let ret = if self.is_punct('-') {
                self.pos += 1;
                self.punct('>', "")?;
                self.ty()?
            } else {
                Ty::Unit
            };
            if self.is_punct('{') {
                self.skip_group('{', '}')?;
            } else {
                self.punct(';', "or a body after the method's signature")?;
            }
            if !shared && self.gate.is_none() {
                return Err((offset, format!("`{name}` has no gate: put a `// Gate N: ...` comment before it")));
            }
            ops.push(ContractOp { name, gate: self.gate, params, ret, shared, offset });
        }
    }

    /// A parameter list: whether it starts with a receiver, and the rest.
    fn params(&mut self) -> Result<(bool, Params), Failed> {
        self.punct('(', "to open the parameters")?;
        let mut receiver = false;
        let mut params = Vec::new();
        if self.is_punct('&') {
            self.pos += 1;
            if self.is_ident("mut") {
                self.pos += 1;
            }
            self.keyword("self", "after `&`")?;
            receiver = true;
            if self.is_punct(',') {
                self.pos += 1;
            }
        }
        while !self.is_punct(')') {
            let name = self.ident("a parameter's name")?;
            self.punct(':', "after a parameter's name")?;
            params.push((name, self.ty()?));
            if !self.is_punct(')') {
                self.punct(',', "between parameters")?;
            }
        }
        self.pos += 1;
        Ok((receiver, params))
    }

    /// A Rust type, read as the wire type `Wire::type_name` gives it.
    fn ty(&mut self) -> Result<Ty, Failed> {
        let at = self.at();
        let text = self.wire_type(0)?;
        text.parse::<Ty>().map_err(|e| (at, e))
    }

    fn wire_type(&mut self, depth: usize) -> Result<String, Failed> {
        if depth > 16 {
            return self.fail("type aliases nest too deep (a cycle?)");
        }
        if self.is_punct('(') {
            self.pos += 1;
            let mut items = Vec::new();
            let mut trailing_comma = false;
            while !self.is_punct(')') {
                items.push(self.wire_type(depth)?);
                trailing_comma = self.is_punct(',');
                if trailing_comma {
                    self.pos += 1;
                } else if !self.is_punct(')') {
                    return self.fail("expected `,` or `)` in a tuple");
                }
            }
            self.pos += 1;
            return Ok(match items.len() {
                0 => "unit".into(),
                1 if !trailing_comma => items.remove(0),
                _ => format!("tuple<{}>", items.join(", ")),
            });
        }
        let at = self.at();
        let name = self.path_tail()?;
        let mut args = Vec::new();
        if self.is_punct('<') {
            self.pos += 1;
            while !self.is_punct('>') {
                if name == "Result" && args.len() == 1 {
                    // The error type: its kinds are the declaration's `errors`.
                    self.skip_type_argument()?;
                } else {
                    args.push(self.wire_type(depth)?);
                }
                if !self.is_punct('>') {
                    self.punct(',', "between type arguments")?;
                }
            }
            self.pos += 1;
        }
        let one = |args: &[String]| args.first().cloned().ok_or((at, format!("`{name}` needs a type argument")));
        Ok(match name.as_str() {
            "String" => "str".into(),
            "i32" | "i64" | "u8" | "u32" | "u64" | "usize" | "bool" | "f64" => name,
            "Option" => format!("option<{}>", one(&args)?),
            "Vec" => format!("list<{}>", one(&args)?),
            "Result" => format!("result<{}>", one(&args)?),
            _ => {
                let resume = self.pos;
                let Some(start) = self.definition(&name) else {
                    return Err((
                        at,
                        format!(
                            "cannot tell `{name}`'s wire type: declare it in this file as `type {name} = ...;`, or \
                             write its `Wire::type_name` as `<T as Wire>::type_name()`"
                        ),
                    ));
                };
                self.pos = start;
                let text = self.wire_type(depth + 1)?;
                self.pos = resume;
                text
            }
        })
    }

    /// Skips one type argument, up to the `,` or `>` that ends it.
    fn skip_type_argument(&mut self) -> Result<(), Failed> {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                Some(Tok::Punct('<' | '(')) => depth += 1,
                Some(Tok::Punct('>' | ')')) if depth == 0 => return Ok(()),
                Some(Tok::Punct(',')) if depth == 0 => return Ok(()),
                Some(Tok::Punct('>' | ')')) => depth -= 1,
                Some(_) => {}
                None => return self.fail("a type argument never ends"),
            }
            self.pos += 1;
        }
    }

    /// Where the type that `name` stands for starts: the right side of
    /// `type name = ...;`, or the `T` of `<T as Wire>::type_name()` in
    /// `impl Wire for name`.
    fn definition(&self, name: &str) -> Option<usize> {
        let t = &self.toks;
        let is = |i: usize, tok: &Tok| t.get(i).is_some_and(|x| &x.tok == tok);
        let ident = |i: usize, w: &str| is(i, &Tok::Ident(w.into()));
        if let Some(i) = (0..t.len()).find(|&i| ident(i, "type") && ident(i + 1, name) && is(i + 2, &Tok::Punct('='))) {
            return Some(i + 3);
        }
        let imp = (0..t.len()).find(|&i| ident(i, "Wire") && ident(i + 1, "for") && ident(i + 2, name))?;
        let f = (imp..t.len()).find(|&i| ident(i, "fn") && ident(i + 1, "type_name"))?;
        let body = (f..t.len()).find(|&i| is(i, &Tok::Punct('{')))?;
        (is(body + 1, &Tok::Punct('<'))).then_some(body + 2)
    }

    /// The kinds of `error_kinds! { ... enum name { Variant = "kind", ... } }`
    /// in this file, in order.
    fn error_kinds(&mut self, name: &str, at: usize) -> Result<Vec<String>, Failed> {
        let t = &self.toks;
        let ident = |i: usize, w: &str| t.get(i).is_some_and(|x| x.tok == Tok::Ident(w.into()));
        let Some(start) = (0..t.len()).find(|&i| ident(i, "enum") && ident(i + 1, name)) else {
            return Err((at, format!("no `enum {name}` in this file: declare it with `error_kinds!`")));
        };
        let resume = self.pos;
        self.pos = start + 2;
        self.punct('{', "to open the error enum")?;
        let mut kinds = Vec::new();
        loop {
            self.skip_attributes()?;
            if self.is_punct('}') {
                break;
            }
            self.ident("a variant")?;
            self.punct('=', "then `= \"kind\"` after the variant")?;
            match self.bump() {
                Some(Tok::Str(kind)) => kinds.push(kind),
                _ => return self.fail("expected the variant's kind as a string"),
            }
            if !self.is_punct('}') {
                self.punct(',', "between variants")?;
            }
        }
        self.pos = resume;
        Ok(kinds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#"
//! A problem.
crate::error_kinds! {
    /// Why.
    pub enum CounterError {
        /// Gate 2: nothing to take.
        Empty = "empty",
        Odd = "odd",
    }
}

pub type Pair = (String, i64);

impl Wire for Stamp {
    fn type_name() -> String {
        <(u64, Option<u64>) as Wire>::type_name()
    }
}

crate::contract! {
    problem = "counter";
    errors = CounterError;

    /// The counter.
    #[allow(clippy::len_without_is_empty)]
    pub trait Counter {
        /// A counter starting at `start`.
        fn new(start: i64, name: String) -> Self;

        // Gate 1: adding.

        /// Adds; a brace in a comment } does not end the trait.
        fn add(&mut self, n: i64) -> i64;
        fn pairs(&self) -> Vec<Pair>;
        fn reset(&mut self);

        // Gate 2: taking.
        fn take(&mut self, n: Option<u32>) -> Result<(i64, Stamp), CounterError>;
        fn provided(&self, k: usize) -> Vec<String> {
            let s = "}"; let c = '}';
            vec![format!("{s}{c}{k}")]
        }
    }

    pub trait SharedCounter: Send + Sync {
        fn shared_add(&self, n: i64) -> i64;
    }
}
"#;

    fn ty(s: &str) -> Ty {
        s.parse().unwrap()
    }

    #[test]
    fn reads_every_part_of_a_declaration() {
        let c = parse(Path::new("counter.rs"), SOURCE).unwrap();
        assert_eq!(c.problem, "counter");
        assert_eq!(c.errors, ["empty", "odd"]);
        assert_eq!(c.ctor, [("start".to_string(), ty("i64")), ("name".to_string(), ty("str"))]);
        let got: Vec<(&str, Option<usize>, String, bool)> =
            c.ops.iter().map(|o| (o.name.as_str(), o.gate, o.ret.to_string(), o.shared)).collect();
        assert_eq!(
            got,
            [
                ("add", Some(1), "i64".to_string(), false),
                ("pairs", Some(1), "list<tuple<str, i64>>".to_string(), false),
                ("reset", Some(1), "unit".to_string(), false),
                ("take", Some(2), "result<tuple<i64, tuple<u64, option<u64>>>>".to_string(), false),
                ("provided", Some(2), "list<str>".to_string(), false),
                ("shared_add", None, "i64".to_string(), true),
            ]
        );
        assert_eq!(c.ops[3].params, [("n".to_string(), ty("option<u32>"))]);
    }

    #[test]
    fn no_error_means_no_kinds_and_a_shared_trait_is_optional() {
        // A trait off the wire comes first and is not the declaration.
        let text = "contract! { pub trait Off { fn new() -> Self; fn b(&self) -> u8; } }\n\
                    harness_contract::contract! { problem = \"t\"; errors = harness_contract::NoError;\n\
                    pub trait T { fn new() -> Self; /// Gate 1.\n fn a(&self) -> u64; } }";
        let c = parse(Path::new("t.rs"), text).unwrap();
        assert!(c.errors.is_empty() && c.ctor.is_empty());
        assert_eq!(c.ops.len(), 1);
        assert_eq!(c.ops[0].gate, Some(1));
    }

    #[test]
    fn a_custom_dispatch_puts_the_harness_blocks_constructor_and_operations_on_the_wire() {
        let text = "contract! { problem = \"w\"; errors = NoError; dispatch = custom;\n\
                    pub trait W { fn open(disk: Disk) -> Self;\n// Gate 1: a log.\nfn put(&mut self, v: i64); }\n\
                    /// Around the store.\nharness { fn new() -> Self;\n// Gate 2: crashes.\n\
                    fn crash(&mut self, keep: u64) -> bool; } }";
        let c = parse(Path::new("w.rs"), text).unwrap();
        assert!(c.ctor.is_empty(), "the trait's own constructor is not on the wire");
        let got: Vec<(&str, Option<usize>)> = c.ops.iter().map(|o| (o.name.as_str(), o.gate)).collect();
        assert_eq!(got, [("put", Some(1)), ("crash", Some(2))]);
        let e = error(&text.replace("/// Around the store.\nharness", "pub trait Shared: Send + Sync"));
        assert!(e.contains("expected `harness` after the trait"), "{e}");
    }

    fn error(text: &str) -> String {
        parse(Path::new("bad.rs"), text).unwrap_err().to_string()
    }

    #[test]
    fn mistakes_are_named_with_their_place() {
        let e = error("pub trait T {}");
        assert!(e.contains("no `contract! { ... }` declaration"), "{e}");
        let e = error(&SOURCE.replace("        // Gate 1: adding.\n", ""));
        assert!(e.contains("`add` has no gate"), "{e}");
        assert!(e.starts_with("bad.rs:32:12:"), "{e}");
        let e = error(&SOURCE.replace("Vec<Pair>", "Vec<Mystery>"));
        assert!(e.contains("cannot tell `Mystery`'s wire type"), "{e}");
        let e = error(&SOURCE.replace("errors = CounterError", "errors = OtherError"));
        assert!(e.contains("no `enum OtherError`"), "{e}");
        let e = error(&SOURCE.replace("fn reset(&mut self)", "fn reset()"));
        assert!(e.contains("`reset` needs `&self`"), "{e}");
        let e = error(&SOURCE.replace("fn pairs(", "fn add("));
        assert!(e.contains("`add` is declared twice"), "{e}");
        let e = error(&SOURCE.replace("-> Vec<Pair>", "-> HashMap<String, u64>"));
        assert!(e.contains("`HashMap`"), "{e}");
    }

    #[test]
    fn gate_comments_are_recognised_and_others_are_not() {
        assert_eq!(gate_of("Gate 3: a cost budget."), Some(3));
        assert_eq!(gate_of("Gate 12."), Some(12));
        assert_eq!(gate_of("Gate 1"), Some(1));
        assert_eq!(gate_of("Gate 5's rules"), None);
        assert_eq!(gate_of("The concurrent gate"), None);
        assert_eq!(gate_of("Gates 1 and 2"), None);
    }
}
