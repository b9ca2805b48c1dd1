//! Case scripts: one operation per line, `put("a", 1) -> 1`.
//!
//! The same text form is what a transcript shows, so an author writes a
//! case exactly as a candidate later sees it fail.

use std::fmt;

use harness_contract::Value;

use crate::problem::signature::Signature;
use crate::problem::ty::parse_literal;

/// One operation with its arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub op: String,
    pub args: Vec<Value>,
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.op)?;
        for (i, a) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{a}")?;
        }
        f.write_str(")")
    }
}

/// An operation and the result the statement requires of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub call: Call,
    pub expect: Value,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} -> {}", self.call, self.expect)
    }
}

/// An error in one line of a script: `line` counts from 0 within the
/// script, `column` is a byte offset within that line.
#[derive(Debug, PartialEq)]
pub struct ScriptError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Parses a script against the problem's signatures. Blank lines and
/// `#` comments are skipped. A line without `->` expects `()`.
pub fn parse(text: &str, sig: &Signature) -> Result<Vec<Step>, ScriptError> {
    let mut steps = Vec::new();
    for (n, indent, body) in lines(text) {
        let err = |column: usize, message: String| ScriptError { line: n, column: indent + column, message };
        let step = parse_line_with(body, sig, true).map_err(|(col, msg)| err(col, msg))?;
        if steps.is_empty() && step.call.op != "new" {
            if !sig.ctor.is_empty() {
                return Err(err(0, format!("the first line must construct the instance: `{}`", sig.ctor_template())));
            }
            steps.push(Step { call: Call { op: "new".into(), args: vec![] }, expect: Value::Unit });
        } else if !steps.is_empty() && step.call.op == "new" {
            return Err(err(0, "`new` may only be the first line of a case".into()));
        }
        steps.push(step);
    }
    if steps.is_empty() {
        return Err(ScriptError { line: 0, column: 0, message: "the case has no operations".into() });
    }
    Ok(steps)
}

/// Calls without results, one per line (a concurrent case's thread: which
/// result each call should have depends on the order the calls took,
/// which the judge finds out). No constructor; `#` comments as in cases.
pub fn parse_calls(text: &str, sig: &Signature) -> Result<Vec<Call>, ScriptError> {
    let mut calls = Vec::new();
    for (n, indent, body) in lines(text) {
        let err = |column: usize, message: String| ScriptError { line: n, column: indent + column, message };
        let step = parse_line_with(body, sig, false).map_err(|(col, msg)| err(col, msg))?;
        if step.call.op == "new" {
            return Err(err(0, "`new` belongs in the case's setup (`run`), not in a thread".into()));
        }
        calls.push(step.call);
    }
    if calls.is_empty() {
        return Err(ScriptError { line: 0, column: 0, message: "a thread without calls".into() });
    }
    Ok(calls)
}

/// The lines of a script that hold something: (0-based line, indent, the
/// line without its indent or trailing space); blank and `#` lines skipped.
fn lines(text: &str) -> impl Iterator<Item = (usize, usize, &str)> {
    text.lines().enumerate().filter_map(|(n, raw)| {
        let line = raw.trim_end();
        let body = line.trim_start();
        (!body.is_empty() && !body.starts_with('#')).then(|| (n, line.len() - body.len(), body))
    })
}

fn parse_line_with(line: &str, sig: &Signature, results: bool) -> Result<Step, (usize, String)> {
    let at = |rest: &str| line.len() - rest.len();
    let name_end = line.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(line.len());
    let op = &line[..name_end];
    if op.is_empty() {
        return Err((0, "expected an operation name".into()));
    }
    let (params, ret) =
        sig.lookup(op).ok_or_else(|| (0, format!("unknown operation `{op}` (known: {})", sig.op_names())))?;
    let mut rest = line[name_end..].trim_start();
    rest = rest.strip_prefix('(').ok_or_else(|| (at(rest), format!("expected `(` after `{op}`")))?;
    let mut args = Vec::new();
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix(')') {
            rest = r;
            break;
        }
        let start = at(rest);
        let (v, r) = parse_literal(rest).map_err(|e| (start, e))?;
        let index = args.len();
        let Some((pname, pty)) = params.get(index) else {
            return Err((start, format!("`{op}` takes {} argument(s)", params.len())));
        };
        let v = pty.check(v, &sig.errors, false).map_err(|e| (start, format!("argument `{pname}`: {e}")))?;
        args.push(v);
        rest = r.trim_start();
        if let Some(r) = rest.strip_prefix(',') {
            rest = r;
        } else if !rest.starts_with(')') {
            return Err((at(rest), "expected `,` or `)`".into()));
        }
    }
    if args.len() != params.len() {
        let names: Vec<String> = params.iter().map(|(n, t)| format!("{n}: {t}")).collect();
        return Err((0, format!("`{op}` takes ({}), given {} argument(s)", names.join(", "), args.len())));
    }
    rest = rest.trim_start();
    if !results {
        if !rest.is_empty() && !rest.starts_with('#') {
            return Err((
                at(rest),
                "a thread's calls have no expected results: the judge checks that some order of the calls \
                 explains what they returned"
                    .into(),
            ));
        }
        return Ok(Step { call: Call { op: op.to_string(), args }, expect: Value::Any });
    }
    let expect = if rest.is_empty() {
        ret.check(Value::Unit, &sig.errors, true)
            .map_err(|_| (line.len(), format!("`{op}` returns {ret}: write `-> <expected result>`")))?
    } else {
        let r = rest.strip_prefix("->").ok_or_else(|| (at(rest), "expected `->` and the expected result".into()))?;
        let start = at(r.trim_start());
        let (v, tail) = parse_literal(r).map_err(|e| (start, e))?;
        let tail = tail.trim_start();
        if !tail.is_empty() && !tail.starts_with('#') {
            return Err((at(tail), format!("unexpected `{tail}` after the result")));
        }
        ret.check(v, &sig.errors, true).map_err(|e| (start, format!("result: {e}")))?
    };
    Ok(Step { call: Call { op: op.to_string(), args }, expect })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::signature::Signature;

    fn sig() -> Signature {
        Signature::parse_for_tests(
            &[],
            &[
                ("put", "key: str, value: i64", "u64"),
                ("get", "key: str", "option<i64>"),
                ("commit", "txn: u64", "result<u64>"),
                ("abort", "txn: u64", "result<unit>"),
            ],
            &["conflict"],
        )
    }

    #[test]
    fn parses_a_script_and_adds_the_constructor() {
        let steps =
            parse("# comment\nput(\"a\", 1) -> 1\n\n  get(\"a\") -> 1\ncommit(3) -> err(conflict)\nabort(1)\n", &sig())
                .unwrap();
        let text: Vec<String> = steps.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            text,
            ["new() -> ()", "put(\"a\", 1) -> 1", "get(\"a\") -> 1", "commit(3) -> err(conflict)", "abort(1) -> ()"]
        );
    }

    #[test]
    fn a_thread_is_calls_without_results() {
        let calls = parse_calls("put(\"a\", 1)\n  # c\nget(\"a\")\n", &sig()).unwrap();
        assert_eq!(calls.iter().map(|c| c.to_string()).collect::<Vec<_>>(), ["put(\"a\", 1)", "get(\"a\")"]);
        let e = parse_calls("put(\"a\", 1)\nget(\"a\") -> 1", &sig()).unwrap_err();
        assert_eq!((e.line, e.column), (1, 9));
        assert!(e.message.contains("no expected results"), "{}", e.message);
        assert!(parse_calls("# nothing\n", &sig()).is_err());
    }

    #[test]
    fn errors_point_at_the_column() {
        let e = parse("put(\"a\", 1) -> 1\n  put(\"a\", \"x\") -> 2", &sig()).unwrap_err();
        assert_eq!((e.line, e.column), (1, 11));
        assert!(e.message.contains("argument `value`"), "{}", e.message);
        let e = parse("gett(\"a\")", &sig()).unwrap_err();
        assert!(e.message.contains("unknown operation `gett`"));
        let e = parse("get(\"a\")", &sig()).unwrap_err();
        assert!(e.message.contains("returns option<i64>"), "{}", e.message);
        let e = parse("commit(1) -> err(nope)", &sig()).unwrap_err();
        assert!(e.message.contains("unknown error kind"), "{}", e.message);
        let e = parse("put(\"a\") -> 1", &sig()).unwrap_err();
        assert!(e.message.contains("takes (key: str, value: i64)"), "{}", e.message);
    }
}
