//! Scale checks: what a gate claims about cost, as data.
//!
//! A `[[gate.scale]]` entry in `problem.toml` names a state of size `n`
//! (its `setup` script), the sizes to build it at, and either the
//! operations whose time is measured on it (`kind = "time"`, a `measure`
//! script with a fixed number of operations) or nothing more
//! (`kind = "memory"`: the library's live heap after the setup is read, or,
//! with a `measure` script, the heap those operations add to the state).
//! The judge (`judge::scale`) runs the candidate and the reference at each
//! size and compares how their costs grow.
//!
//! Scale scripts are case scripts without results, plus a repeat construct
//! so that a few lines build a large state:
//!
//! ```text
//! new(100)
//! repeat n { put("k{i}", i) }               # i counts 0, 1, …, n - 1
//! repeat 500 as j { get("k{rand(0, n)}") }  # rand(lo, hi): seeded, lo <= x < hi
//! ```
//!
//! Arguments are expressions: integers, `n`, loop variables (`i` unless
//! named with `as`), `rep` (which batch of a measure script this is, from
//! 0), `rand(lo, hi)`, `+ - * / %` with parentheses, strings
//! with `{expr}` interpolation, lists of expressions (`["k{i}", "x"]`),
//! lists of a length (`list(n, "t{i}")`, `list(2 * n as j, j % 7)`: the
//! element expression once per index, `i` unless named with `as`), and any
//! case-script literal (`None`, `true`, `1.5`).

use std::fmt;

use harness_contract::Value;
use serde::Deserialize;

use crate::problem::rng::Rng;
use crate::problem::script::Call;
use crate::problem::signature::Signature;
use crate::problem::ty::parse_literal;

/// The most operations one expanded script may have: a guard against a
/// nested repeat that would take minutes to run.
pub const MAX_CALLS: usize = 400_000;
/// The most list elements `list(count, …)` may build in one expansion: the
/// same guard for a state built inside arguments.
pub const MAX_ELEMENTS: u64 = 4_000_000;

/// What is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// CPU time per operation of the `measure` script.
    Time,
    /// Live heap bytes after the `setup` script.
    Memory,
}

/// The class a gate claims; the judge decides from growth relative to the
/// reference, the claim says what the statement asks and bounds what the
/// reference itself may show (`harness audit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    Constant,
    Log,
    Linear,
    Linearithmic,
    Bounded,
    LinearMemory,
}

impl Claim {
    fn parse(kind: Kind, s: &str) -> Result<Claim, String> {
        match (kind, s.trim()) {
            (Kind::Time, "1") => Ok(Claim::Constant),
            (Kind::Time, "log n") => Ok(Claim::Log),
            (Kind::Time, "n") => Ok(Claim::Linear),
            (Kind::Time, "n log n") => Ok(Claim::Linearithmic),
            (Kind::Memory, "bounded") => Ok(Claim::Bounded),
            (Kind::Memory, "linear") => Ok(Claim::LinearMemory),
            (Kind::Time, other) => {
                Err(format!("claim `{other}` is not a time class: use \"1\", \"log n\", \"n\" or \"n log n\""))
            }
            (Kind::Memory, other) => {
                Err(format!("claim `{other}` is not a memory class: use \"bounded\" or \"linear\""))
            }
        }
    }

    /// As the big-O the statement would write, in `n`.
    pub fn big_o(self) -> &'static str {
        match self {
            Claim::Constant => "O(1)",
            Claim::Log => "O(log n)",
            Claim::Linear => "O(n)",
            Claim::Linearithmic => "O(n log n)",
            Claim::Bounded => "bounded memory",
            Claim::LinearMemory => "memory linear in n",
        }
    }

    /// The highest growth exponent the reference may show for this claim
    /// (measured between the smallest and largest size). Generous: it only
    /// catches a reference, or a setup, that does not do what it claims.
    pub fn reference_exponent_limit(self) -> f64 {
        match self {
            Claim::Constant | Claim::Log => 0.4,
            Claim::Bounded => 0.25,
            Claim::Linear | Claim::LinearMemory | Claim::Linearithmic => 1.4,
        }
    }
}

/// One scale check of a gate.
#[derive(Clone, Debug)]
pub struct ScaleCheck {
    pub name: String,
    pub kind: Kind,
    pub claim: Claim,
    /// The statement's own words for the claim ("O(log w)"); the claim's
    /// big-O when absent.
    pub says: String,
    pub sizes: Vec<u64>,
    pub setup: Script,
    /// The operations whose time is measured (time), or whose added heap
    /// is measured (memory; without it, the state's own heap is).
    pub measure: Option<Script>,
}

/// `[[gate.scale]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScale {
    pub name: toml::Spanned<String>,
    pub kind: toml::Spanned<String>,
    pub claim: toml::Spanned<String>,
    #[serde(default)]
    pub says: Option<String>,
    pub sizes: toml::Spanned<Vec<u64>>,
    pub setup: toml::Spanned<String>,
    #[serde(default)]
    pub measure: Option<toml::Spanned<String>>,
}

/// An error at a byte offset of a TOML string (`span` of the string) or at
/// a byte offset into one of its scripts.
#[derive(Debug)]
pub enum ScaleError {
    /// At the start of a TOML value.
    Field(std::ops::Range<usize>, String),
    /// In a script: the script's TOML span, the line and the column in it.
    Script(std::ops::Range<usize>, usize, usize, String),
}

impl RawScale {
    /// Validates one entry of gate `gate`: known kind and claim, sizes
    /// spanning at least 16×, scripts that parse against the signature and
    /// use only operations unlocked by this gate, and expand at the
    /// smallest size.
    pub fn validate(
        &self,
        sig: &Signature,
        gate: usize,
        requires: &std::collections::BTreeSet<usize>,
    ) -> Result<ScaleCheck, ScaleError> {
        let field = |span: std::ops::Range<usize>, m: String| ScaleError::Field(span, m);
        let name = self.name.get_ref().trim().to_string();
        if name.is_empty() {
            return Err(field(self.name.span(), "a scale check needs a name".into()));
        }
        let kind = match self.kind.get_ref().as_str() {
            "time" => Kind::Time,
            "memory" => Kind::Memory,
            other => {
                return Err(field(self.kind.span(), format!("kind `{other}`: use \"time\" or \"memory\"")));
            }
        };
        let claim = Claim::parse(kind, self.claim.get_ref()).map_err(|m| field(self.claim.span(), m))?;
        let sizes = self.sizes.get_ref().clone();
        if sizes.len() < 2
            || sizes.windows(2).any(|w| w[0] >= w[1])
            || sizes[0] == 0
            || sizes[sizes.len() - 1] < 16 * sizes[0]
        {
            return Err(field(
                self.sizes.span(),
                "sizes must be at least two increasing sizes, the largest at least 16× the smallest \
                 (e.g. [1000, 4000, 16000, 64000])"
                    .into(),
            ));
        }
        let script = |s: &toml::Spanned<String>, is_setup: bool| -> Result<Script, ScaleError> {
            let at = |offset: usize, m: String| {
                let (line, col) = line_col(s.get_ref(), offset);
                ScaleError::Script(s.span(), line, col, m)
            };
            let parsed = parse(s.get_ref(), sig).map_err(|(o, m)| at(o, m))?;
            for (offset, op) in parsed.ops() {
                let op_gate = sig.ops.get(op).map_or(1, |d| d.gate);
                if !crate::problem::signature::may_use(requires, gate, op_gate) {
                    return Err(at(
                        offset,
                        format!("`{op}` is introduced by gate {op_gate}, not unlocked at gate {gate}"),
                    ));
                }
                if op == "new" && !is_setup {
                    return Err(at(offset, "`new` belongs in `setup`, not in `measure`".into()));
                }
            }
            let calls = parsed.expand(sizes[0], 1, sig).map_err(|(o, m)| at(o, m))?;
            if is_setup && !sig.ctor.is_empty() && calls.first().is_none_or(|c| c.op != "new") {
                return Err(at(0, format!("the setup must construct the instance first: `{}`", sig.ctor_template())));
            }
            if !is_setup && calls.is_empty() {
                return Err(at(0, "the measure script has no operations".into()));
            }
            Ok(parsed)
        };
        let setup = script(&self.setup, true)?;
        let measure = match (&self.measure, kind) {
            (Some(m), Kind::Time) => Some(script(m, false)?),
            (None, Kind::Time) => {
                return Err(field(
                    self.kind.span(),
                    "a time check needs `measure`: the operations to time, a fixed number of them".into(),
                ));
            }
            (Some(m), Kind::Memory) => Some(script(m, false)?),
            (None, Kind::Memory) => None,
        };
        let says = self.says.clone().unwrap_or_else(|| claim.big_o().to_string());
        Ok(ScaleCheck { name, kind, claim, says, sizes, setup, measure })
    }
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count();
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1);
    (line, col)
}

/// A parsed scale script.
#[derive(Clone, Debug, PartialEq)]
pub struct Script {
    stmts: Vec<Stmt>,
}

#[derive(Clone, Debug, PartialEq)]
enum Stmt {
    Call { at: usize, op: String, args: Vec<(usize, Expr)> },
    Repeat { at: usize, count: Expr, var: String, body: Vec<Stmt> },
}

#[derive(Clone, Debug, PartialEq)]
enum Expr {
    Lit(Value),
    Var(String),
    Rand(Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
    Bin(char, Box<Expr>, Box<Expr>),
    Str(Vec<Part>),
    /// `[a, b, …]`: a list of expressions.
    List(Vec<Expr>),
    /// `list(count as var, element)`: `element` once per index.
    Gen {
        count: Box<Expr>,
        var: String,
        element: Box<Expr>,
    },
}

#[derive(Clone, Debug, PartialEq)]
enum Part {
    Text(String),
    Expr(Expr),
}

impl fmt::Display for Script {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} statement(s)", self.stmts.len())
    }
}

impl Script {
    /// Every operation named, with its offset.
    fn ops(&self) -> Vec<(usize, &str)> {
        fn walk<'a>(stmts: &'a [Stmt], out: &mut Vec<(usize, &'a str)>) {
            for s in stmts {
                match s {
                    Stmt::Call { at, op, .. } => out.push((*at, op)),
                    Stmt::Repeat { body, .. } => walk(body, out),
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.stmts, &mut out);
        out
    }

    /// The calls of this script at size `n`, with `rand` seeded by `seed`.
    /// Arguments are checked against the signature; `new()` is added in
    /// front of a setup when the constructor takes nothing and the script
    /// does not construct. Errors carry the offset of the argument.
    pub fn expand(&self, n: u64, seed: u64, sig: &Signature) -> Result<Vec<Call>, (usize, String)> {
        self.expand_batch(n, 0, seed, sig)
    }

    /// [`Script::expand`] for batch `rep` of a measure script (`rep` counts
    /// the batches from 0: a warm-up, then the timed ones), so that times
    /// can keep moving forward from one batch to the next.
    pub fn expand_batch(&self, n: u64, rep: u64, seed: u64, sig: &Signature) -> Result<Vec<Call>, (usize, String)> {
        let mut env = Env {
            n,
            vars: vec![("rep".to_string(), rep as i128)],
            rng: Rng::new(seed ^ n.wrapping_mul(0x9e37_79b9)),
            elements: 0,
        };
        let mut out = Vec::new();
        run(&self.stmts, &mut env, sig, &mut out)?;
        Ok(out)
    }

    /// The setup's calls: [`Script::expand`] with a leading `new()` when the
    /// constructor takes nothing and the script does not construct.
    pub fn expand_setup(&self, n: u64, seed: u64, sig: &Signature) -> Result<Vec<Call>, (usize, String)> {
        let mut calls = self.expand(n, seed, sig)?;
        if calls.first().is_none_or(|c| c.op != "new") {
            calls.insert(0, Call { op: "new".into(), args: Vec::new() });
        }
        Ok(calls)
    }
}

struct Env {
    n: u64,
    vars: Vec<(String, i128)>,
    rng: Rng,
    /// Elements built by `list(count, …)` so far, against [`MAX_ELEMENTS`].
    elements: u64,
}

fn run(stmts: &[Stmt], env: &mut Env, sig: &Signature, out: &mut Vec<Call>) -> Result<(), (usize, String)> {
    for s in stmts {
        match s {
            Stmt::Call { at, op, args } => {
                if out.len() >= MAX_CALLS {
                    return Err((*at, format!("the script expands to more than {MAX_CALLS} operations")));
                }
                let params: &[(String, crate::problem::ty::Ty)] = if op == "new" {
                    &sig.ctor
                } else {
                    sig.lookup(op).map(|(p, _)| p).ok_or((*at, format!("unknown operation `{op}`")))?
                };
                let mut values = Vec::with_capacity(args.len());
                for ((a_at, e), (pname, pty)) in args.iter().zip(params) {
                    let v = eval(e, env).map_err(|m| (*a_at, m))?;
                    let v =
                        pty.check(v, &sig.errors, false).map_err(|m| (*a_at, format!("argument `{pname}`: {m}")))?;
                    values.push(v);
                }
                out.push(Call { op: op.clone(), args: values });
            }
            Stmt::Repeat { at, count, var, body } => {
                let count = match eval(count, env).map_err(|m| (*at, m))? {
                    Value::Int(c) if c >= 0 => c,
                    other => return Err((*at, format!("repeat needs a count of 0 or more, got {other}"))),
                };
                for i in 0..count {
                    env.vars.push((var.clone(), i));
                    let r = run(body, env, sig, out);
                    env.vars.pop();
                    r?;
                }
            }
        }
    }
    Ok(())
}

fn int(v: Value) -> Result<i128, String> {
    match v {
        Value::Int(i) => Ok(i),
        other => Err(format!("expected a number, got {other}")),
    }
}

fn eval(e: &Expr, env: &mut Env) -> Result<Value, String> {
    Ok(match e {
        Expr::Lit(v) => v.clone(),
        Expr::Var(name) if name == "n" => Value::Int(env.n as i128),
        Expr::Var(name) => match env.vars.iter().rev().find(|(v, _)| v == name) {
            Some((_, i)) => Value::Int(*i),
            None => return Err(format!("`{name}` is used outside a `repeat … as {name}`")),
        },
        Expr::Rand(lo, hi) => {
            let (lo, hi) = (int(eval(lo, env)?)?, int(eval(hi, env)?)?);
            if hi <= lo {
                return Err(format!("rand({lo}, {hi}) is empty: it draws lo <= x < hi"));
            }
            let span = u64::try_from(hi - lo).map_err(|_| "rand's range is too large".to_string())?;
            Value::Int(lo + env.rng.below(span) as i128)
        }
        Expr::Neg(x) => Value::Int(-int(eval(x, env)?)?),
        Expr::Bin(op, l, r) => {
            let (l, r) = (int(eval(l, env)?)?, int(eval(r, env)?)?);
            let v = match op {
                '+' => l.checked_add(r),
                '-' => l.checked_sub(r),
                '*' => l.checked_mul(r),
                '/' => l.checked_div(r),
                _ => l.checked_rem(r),
            };
            Value::Int(v.ok_or_else(|| format!("`{l} {op} {r}` overflows or divides by zero"))?)
        }
        Expr::Str(parts) => {
            let mut s = String::new();
            for p in parts {
                match p {
                    Part::Text(t) => s.push_str(t),
                    Part::Expr(e) => match eval(e, env)? {
                        Value::Str(t) => s.push_str(&t),
                        other => s.push_str(&other.to_string()),
                    },
                }
            }
            Value::Str(s)
        }
        Expr::List(items) => Value::List(items.iter().map(|e| eval(e, env)).collect::<Result<_, _>>()?),
        Expr::Gen { count, var, element } => {
            let count = match eval(count, env)? {
                Value::Int(c) if c >= 0 => c,
                other => return Err(format!("list needs a length of 0 or more, got {other}")),
            };
            env.elements = env.elements.saturating_add(u64::try_from(count).unwrap_or(u64::MAX));
            if env.elements > MAX_ELEMENTS {
                return Err(format!("the script builds lists of more than {MAX_ELEMENTS} elements in all"));
            }
            let mut items = Vec::with_capacity(count as usize);
            for i in 0..count {
                env.vars.push((var.clone(), i));
                let v = eval(element, env);
                env.vars.pop();
                items.push(v?);
            }
            Value::List(items)
        }
    })
}

/// Parses a scale script. Errors carry a byte offset into `text`.
pub fn parse(text: &str, sig: &Signature) -> Result<Script, (usize, String)> {
    let mut p = Parser { text, pos: 0, sig, vars: vec!["n".to_string(), "rep".to_string()] };
    let stmts = p.stmts(false)?;
    Ok(Script { stmts })
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    sig: &'a Signature,
    vars: Vec<String>,
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    /// Skips spaces, newlines, `;` and `#` comments.
    fn skip(&mut self) {
        loop {
            let r = self.rest();
            let t = r.trim_start_matches(|c: char| c.is_whitespace() || c == ';');
            self.pos += r.len() - t.len();
            if t.starts_with('#') {
                self.pos += t.find('\n').unwrap_or(t.len());
            } else {
                return;
            }
        }
    }

    fn skip_inline(&mut self) {
        let r = self.rest();
        self.pos += r.len() - r.trim_start_matches([' ', '\t']).len();
    }

    fn ident(&mut self) -> Option<&'a str> {
        let r = self.rest();
        let end = r.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(r.len());
        if end == 0 || r.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        self.pos += end;
        Some(&r[..end])
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), (usize, String)> {
        self.skip_inline();
        if self.rest().starts_with(c) {
            self.pos += c.len_utf8();
            Ok(())
        } else {
            Err((self.pos, format!("expected `{c}` {what}")))
        }
    }

    fn stmts(&mut self, in_block: bool) -> Result<Vec<Stmt>, (usize, String)> {
        let mut out = Vec::new();
        loop {
            self.skip();
            if self.rest().is_empty() {
                if in_block {
                    return Err((self.pos, "expected `}` to close the `repeat`".into()));
                }
                return Ok(out);
            }
            if self.rest().starts_with('}') {
                if in_block {
                    self.pos += 1;
                    return Ok(out);
                }
                return Err((self.pos, "`}` without a `repeat`".into()));
            }
            out.push(self.stmt()?);
        }
    }

    fn stmt(&mut self) -> Result<Stmt, (usize, String)> {
        let at = self.pos;
        let Some(word) = self.ident() else {
            return Err((at, "expected an operation or `repeat`".into()));
        };
        if word == "repeat" {
            let (count, var) = self.count_as()?;
            self.expect('{', "to open the repeated block")?;
            self.vars.push(var.clone());
            let body = self.stmts(true);
            self.vars.pop();
            return Ok(Stmt::Repeat { at, count, var, body: body? });
        }
        let op = word.to_string();
        let params = if op == "new" {
            self.sig.ctor.len()
        } else {
            match self.sig.lookup(&op) {
                Some((p, _)) => p.len(),
                None => return Err((at, format!("unknown operation `{op}` (known: {})", self.sig.op_names()))),
            }
        };
        self.expect('(', &format!("after `{op}`"))?;
        let mut args = Vec::new();
        loop {
            self.skip_inline();
            if self.rest().starts_with(')') {
                self.pos += 1;
                break;
            }
            let a_at = self.pos;
            args.push((a_at, self.expr()?));
            self.skip_inline();
            if self.rest().starts_with(',') {
                self.pos += 1;
            } else if !self.rest().starts_with(')') {
                return Err((self.pos, "expected `,` or `)`".into()));
            }
        }
        if args.len() != params {
            return Err((at, format!("`{op}` takes {params} argument(s), given {}", args.len())));
        }
        self.skip_inline();
        if self.rest().starts_with("->") {
            return Err((
                self.pos,
                "results are not compared in scale scripts (the cases do that): drop `-> …`".into(),
            ));
        }
        Ok(Stmt::Call { at, op, args })
    }

    /// The name after `as`: not one the language already gives a meaning.
    fn loop_var(&mut self) -> Result<String, (usize, String)> {
        self.skip_inline();
        let at = self.pos;
        let var = self.ident().ok_or((at, "expected a name after `as`".to_string()))?;
        if matches!(var, "n" | "rand" | "rep" | "list") {
            return Err((at, format!("`{var}` is reserved; choose another name")));
        }
        Ok(var.to_string())
    }

    /// `count [as var]`, as `repeat` and `list` take it; the index is `i`
    /// unless named.
    fn count_as(&mut self) -> Result<(Expr, String), (usize, String)> {
        let count = self.expr()?;
        self.skip_inline();
        let save = self.pos;
        if self.ident() == Some("as") {
            return Ok((count, self.loop_var()?));
        }
        self.pos = save;
        Ok((count, "i".to_string()))
    }

    /// After `list`: `(count [as var], element)`.
    fn generator(&mut self) -> Result<Expr, (usize, String)> {
        self.expect('(', "after `list`: `list(count, element)`")?;
        let (count, var) = self.count_as()?;
        self.expect(',', "after the list's length: `list(count, element)`")?;
        self.vars.push(var.clone());
        let element = self.expr();
        self.vars.pop();
        let element = element?;
        self.expect(')', "to close `list(`")?;
        Ok(Expr::Gen { count: Box::new(count), var, element: Box::new(element) })
    }

    /// After `[`: expressions separated by commas, then `]`.
    fn list(&mut self) -> Result<Expr, (usize, String)> {
        let start = self.pos;
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_inline();
            if self.rest().starts_with(']') {
                self.pos += 1;
                return Ok(Expr::List(items));
            }
            if self.rest().is_empty() || self.rest().starts_with('\n') {
                return Err((start, "expected `]` to close the list".into()));
            }
            items.push(self.expr()?);
            self.skip_inline();
            if self.rest().starts_with(',') {
                self.pos += 1;
            } else if !self.rest().starts_with(']') {
                return Err((self.pos, "expected `,` or `]` in the list".into()));
            }
        }
    }

    fn expr(&mut self) -> Result<Expr, (usize, String)> {
        let mut left = self.term()?;
        loop {
            self.skip_inline();
            let Some(op) = self.rest().chars().next().filter(|c| matches!(c, '+' | '-')) else {
                return Ok(left);
            };
            if self.rest().starts_with("->") {
                return Ok(left);
            }
            self.pos += 1;
            let right = self.term()?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn term(&mut self) -> Result<Expr, (usize, String)> {
        let mut left = self.unary()?;
        loop {
            self.skip_inline();
            let Some(op) = self.rest().chars().next().filter(|c| matches!(c, '*' | '/' | '%')) else {
                return Ok(left);
            };
            self.pos += 1;
            let right = self.unary()?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Expr, (usize, String)> {
        self.skip_inline();
        if self.rest().starts_with('-') && !self.rest()[1..].starts_with(|c: char| c.is_ascii_digit()) {
            self.pos += 1;
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, (usize, String)> {
        self.skip_inline();
        let at = self.pos;
        let r = self.rest();
        if r.starts_with('(') {
            self.pos += 1;
            let e = self.expr()?;
            self.expect(')', "to close `(`")?;
            return Ok(e);
        }
        if r.starts_with('"') {
            return self.string();
        }
        if r.starts_with('[') {
            return self.list();
        }
        if r.starts_with(|c: char| c.is_alphabetic() || c == '_') {
            let save = self.pos;
            let word = self.ident().unwrap_or("");
            if word == "rand" {
                self.expect('(', "after `rand`")?;
                let lo = self.expr()?;
                self.expect(',', "between rand's bounds")?;
                let hi = self.expr()?;
                self.expect(')', "to close `rand(`")?;
                return Ok(Expr::Rand(Box::new(lo), Box::new(hi)));
            }
            if word == "list" {
                return self.generator();
            }
            if self.vars.iter().any(|v| v == word) {
                return Ok(Expr::Var(word.to_string()));
            }
            if word == "i" || word.len() == 1 {
                return Err((at, format!("`{word}` is not defined here (known: {})", self.vars.join(", "))));
            }
            self.pos = save;
        }
        // Any case-script literal: numbers, None, true, lists, …
        let (v, rest) = parse_literal(r).map_err(|m| (at, m))?;
        self.pos += r.len() - rest.len();
        Ok(Expr::Lit(v))
    }

    fn string(&mut self) -> Result<Expr, (usize, String)> {
        let start = self.pos;
        self.pos += 1;
        let mut parts = Vec::new();
        let mut text = String::new();
        loop {
            let r = self.rest();
            let Some(c) = r.chars().next() else {
                return Err((start, "unterminated string".into()));
            };
            self.pos += c.len_utf8();
            match c {
                '"' => break,
                '\\' => {
                    let Some(e) = self.rest().chars().next() else {
                        return Err((start, "unterminated string".into()));
                    };
                    self.pos += e.len_utf8();
                    text.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                }
                '{' => {
                    if !text.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut text)));
                    }
                    let e = self.expr()?;
                    self.expect('}', "to close `{` in the string")?;
                    parts.push(Part::Expr(e));
                }
                '\n' => return Err((start, "unterminated string".into())),
                c => text.push(c),
            }
        }
        if !text.is_empty() || parts.is_empty() {
            parts.push(Part::Text(text));
        }
        Ok(Expr::Str(parts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig() -> Signature {
        Signature::parse_for_tests(
            &[("capacity", "usize")],
            &[
                ("put", "key: str, value: i64", "u64"),
                ("get", "key: str", "option<i64>"),
                ("ttl", "t: option<u64>", "unit"),
            ],
            &[],
        )
    }

    fn texts(calls: &[Call]) -> Vec<String> {
        calls.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn repeat_interpolation_and_arithmetic() {
        let s = parse("new(n / 2)\nrepeat n { put(\"k{i % 2}\", i * 10 - 1) }\nttl(None)", &sig()).unwrap();
        let calls = s.expand(4, 1, &sig()).unwrap();
        assert_eq!(
            texts(&calls),
            ["new(2)", "put(\"k0\", -1)", "put(\"k1\", 9)", "put(\"k0\", 19)", "put(\"k1\", 29)", "ttl(None)"]
        );
    }

    #[test]
    fn nested_repeats_with_names_and_seeded_rand() {
        let s = parse("new(1)\nrepeat 2 as a {\n  repeat 2 { put(\"{a}.{i}\", rand(0, n)) }\n}", &sig()).unwrap();
        let one = s.expand(100, 7, &sig()).unwrap();
        assert_eq!(one.len(), 5);
        assert_eq!(one[4].args[0], Value::Str("1.1".into()));
        assert_eq!(one, s.expand(100, 7, &sig()).unwrap(), "seeded: the same calls every time");
        for c in &one[1..] {
            let Value::Int(v) = c.args[1] else { panic!() };
            assert!((0..100).contains(&v));
        }
    }

    #[test]
    fn errors_have_offsets() {
        let e = parse("new(1)\nput(\"a\", j)", &sig()).unwrap_err();
        assert_eq!(e.0, 16);
        assert!(e.1.contains("`j` is not defined"), "{}", e.1);
        let e = parse("new(1)\nput(\"a\", 1) -> 1", &sig()).unwrap_err();
        assert!(e.1.contains("not compared"), "{}", e.1);
        let e = parse("repeat n { get(\"a\")", &sig()).unwrap_err();
        assert!(e.1.contains("close the `repeat`"), "{}", e.1);
        let e = parse("nope(1)", &sig()).unwrap_err();
        assert!(e.1.contains("unknown operation"), "{}", e.1);
        let s = parse("new(1)\nput(\"a\", \"x\")", &sig()).unwrap();
        let e = s.expand(4, 1, &sig()).unwrap_err();
        assert_eq!(e.0, 16);
        assert!(e.1.contains("argument `value`"), "{}", e.1);
        let s = parse("new(1)\nput(\"a\", rand(5, 5))", &sig()).unwrap();
        assert!(s.expand(4, 1, &sig()).unwrap_err().1.contains("empty"));
    }

    fn list_sig() -> Signature {
        Signature::parse_for_tests(
            &[("baseline", "list<str>"), ("lookahead", "usize")],
            &[("feed", "tokens: list<str>", "list<str>"), ("weights", "w: list<i64>", "unit")],
            &[],
        )
    }

    #[test]
    fn lists_of_expressions_and_lists_of_a_length() {
        let sig = list_sig();
        let s = parse(
            "new(list(n + 1, \"b{i % 2}\"), 2)\nrepeat 2 { feed([\"t{i}\", \"x\"]) }\nweights(list(3 as j, j * n))\nweights([])",
            &sig,
        )
        .unwrap();
        assert_eq!(
            texts(&s.expand(3, 1, &sig).unwrap()),
            [
                "new([\"b0\", \"b1\", \"b0\", \"b1\"], 2)",
                "feed([\"t0\", \"x\"])",
                "feed([\"t1\", \"x\"])",
                "weights([0, 3, 6])",
                "weights([])",
            ]
        );
        // The element sees the enclosing loop's variable and its own.
        let s = parse("new([], 0)\nrepeat 2 as r { feed(list(r + 1, \"{r}.{i}\")) }", &sig).unwrap();
        assert_eq!(texts(&s.expand(1, 1, &sig).unwrap())[1..], ["feed([\"0.0\"])", "feed([\"1.0\", \"1.1\"])"]);
        // Seeded values inside a list are the same on every expansion.
        let s = parse("new(list(50, \"{rand(0, 9)}\"), 1)", &sig).unwrap();
        assert_eq!(s.expand(8, 3, &sig).unwrap(), s.expand(8, 3, &sig).unwrap());
    }

    #[test]
    fn list_misuse_is_reported_where_it_is() {
        let sig = list_sig();
        // The loop variable of a list lives inside the list only.
        let e = parse("new(list(3, \"b{i}\"), i)", &sig).unwrap_err();
        assert_eq!(e.0, 21);
        assert!(e.1.contains("`i` is not defined"), "{}", e.1);
        let e = parse("new(list(3 as n, \"b\"), 1)", &sig).unwrap_err();
        assert_eq!(e.0, 14);
        assert!(e.1.contains("reserved"), "{}", e.1);
        let e = parse("new(list(3 \"b\"), 1)", &sig).unwrap_err();
        assert_eq!(e.0, 11);
        assert!(e.1.contains("list(count, element)"), "{}", e.1);
        let e = parse("new([\"a\" \"b\"], 1)", &sig).unwrap_err();
        assert_eq!(e.0, 9);
        assert!(e.1.contains("`,` or `]`"), "{}", e.1);
        let e = parse("new([\"a\", 1)", &sig).unwrap_err();
        assert!(e.1.contains("`,` or `]`"), "{}", e.1);
        let e = parse("new([\"a\",\n\"b\"], 1)", &sig).unwrap_err();
        assert_eq!(e.0, 4);
        assert!(e.1.contains("close the list"), "{}", e.1);
        // Evaluation errors point at the argument.
        let s = parse("new([], 0)\nfeed(list(n - 9, \"t\"))", &sig).unwrap();
        let e = s.expand(4, 1, &sig).unwrap_err();
        assert_eq!(e.0, 16);
        assert!(e.1.contains("length of 0 or more, got -5"), "{}", e.1);
        let s = parse("new([], 0)\nfeed(list(3, i))", &sig).unwrap();
        let e = s.expand(4, 1, &sig).unwrap_err();
        assert!(e.1.contains("argument `tokens`"), "{}", e.1);
        let s = parse("new([], 0)\nfeed(list(4000001, \"t\"))", &sig).unwrap();
        let e = s.expand(4, 1, &sig).unwrap_err();
        assert!(e.1.contains("more than 4000000 elements"), "{}", e.1);
    }

    #[test]
    fn validation_of_an_entry() {
        let raw: RawScale = toml::from_str(
            "name = 'get'\nkind = 'time'\nclaim = 'log n'\nsizes = [10, 160]\nsetup = 'new(n)'\nmeasure = 'repeat 3 { get(\"a\") }'",
        )
        .unwrap();
        let c = raw.validate(&sig(), 1, &Default::default()).unwrap();
        assert_eq!((c.kind, c.claim, c.says.as_str()), (Kind::Time, Claim::Log, "O(log n)"));
        let raw: RawScale = toml::from_str(
            "name = 'x'\nkind = 'time'\nclaim = 'log n'\nsizes = [10, 80]\nsetup = 'new(n)'\nmeasure = 'get(\"a\")'",
        )
        .unwrap();
        assert!(
            matches!(raw.validate(&sig(), 1, &Default::default()), Err(ScaleError::Field(_, m)) if m.contains("16×"))
        );
        let raw: RawScale =
            toml::from_str("name = 'x'\nkind = 'memory'\nclaim = 'log n'\nsizes = [10, 160]\nsetup = 'new(n)'")
                .unwrap();
        assert!(
            matches!(raw.validate(&sig(), 1, &Default::default()), Err(ScaleError::Field(_, m)) if m.contains("memory class"))
        );
        let raw: RawScale =
            toml::from_str("name = 'x'\nkind = 'memory'\nclaim = 'bounded'\nsizes = [10, 160]\nsetup = 'get(\"a\")'")
                .unwrap();
        assert!(
            matches!(raw.validate(&sig(), 1, &Default::default()), Err(ScaleError::Script(_, 0, 0, m)) if m.contains("construct"))
        );
    }
}
