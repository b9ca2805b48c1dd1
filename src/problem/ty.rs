//! Types in a problem's schema (`i64`, `option<str>`, `result<u64>`, …) and
//! typed literals: the value syntax of case scripts and of `replay` JSON.

use std::fmt;

use harness_contract::Value;
use serde_json::Value as Json;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    Unit,
    Bool,
    Int(IntTy),
    Float,
    Str,
    Option(Box<Ty>),
    List(Box<Ty>),
    Tuple(Vec<Ty>),
    Result(Box<Ty>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntTy {
    I32,
    I64,
    U8,
    U32,
    U64,
    Usize,
}

impl IntTy {
    fn name(self) -> &'static str {
        match self {
            IntTy::I32 => "i32",
            IntTy::I64 => "i64",
            IntTy::U8 => "u8",
            IntTy::U32 => "u32",
            IntTy::U64 => "u64",
            IntTy::Usize => "usize",
        }
    }

    fn range(self) -> (i128, i128) {
        match self {
            IntTy::I32 => (i32::MIN as i128, i32::MAX as i128),
            IntTy::I64 => (i64::MIN as i128, i64::MAX as i128),
            IntTy::U8 => (0, u8::MAX as i128),
            IntTy::U32 => (0, u32::MAX as i128),
            IntTy::U64 | IntTy::Usize => (0, u64::MAX as i128),
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Unit => f.write_str("unit"),
            Ty::Bool => f.write_str("bool"),
            Ty::Int(i) => f.write_str(i.name()),
            Ty::Float => f.write_str("f64"),
            Ty::Str => f.write_str("str"),
            Ty::Option(t) => write!(f, "option<{t}>"),
            Ty::List(t) => write!(f, "list<{t}>"),
            Ty::Result(t) => write!(f, "result<{t}>"),
            Ty::Tuple(ts) => {
                f.write_str("tuple<")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(">")
            }
        }
    }
}

impl std::str::FromStr for Ty {
    type Err = String;

    fn from_str(s: &str) -> Result<Ty, String> {
        let s = s.trim();
        let generic = |name: &str| {
            s.strip_prefix(name).and_then(|r| r.trim_start().strip_prefix('<')).and_then(|r| r.strip_suffix('>'))
        };
        Ok(match s {
            "unit" | "()" => Ty::Unit,
            "bool" => Ty::Bool,
            "i32" => Ty::Int(IntTy::I32),
            "i64" => Ty::Int(IntTy::I64),
            "u8" => Ty::Int(IntTy::U8),
            "u32" => Ty::Int(IntTy::U32),
            "u64" => Ty::Int(IntTy::U64),
            "usize" => Ty::Int(IntTy::Usize),
            "f64" => Ty::Float,
            "str" | "string" => Ty::Str,
            _ => {
                if let Some(inner) = generic("option") {
                    Ty::Option(Box::new(inner.parse()?))
                } else if let Some(inner) = generic("list") {
                    Ty::List(Box::new(inner.parse()?))
                } else if let Some(inner) = generic("result") {
                    Ty::Result(Box::new(inner.parse()?))
                } else if let Some(inner) = generic("tuple") {
                    Ty::Tuple(split_top_level(inner).iter().map(|p| p.parse()).collect::<Result<_, _>>()?)
                } else {
                    return Err(format!(
                        "unknown type `{s}` (known: unit, bool, i32, i64, u8, u32, u64, usize, f64, \
                         str, option<T>, list<T>, tuple<T, U, ...>, result<T>)"
                    ));
                }
            }
        })
    }
}

fn split_top_level(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

impl Ty {
    /// Checks (and normalises) `v` against this type. `errors` are the
    /// problem's error kinds; `expectation` allows `_`.
    pub fn check(&self, v: Value, errors: &[String], expectation: bool) -> Result<Value, String> {
        match (self, v) {
            (_, Value::Any) if expectation => Ok(Value::Any),
            (Ty::Result(_), Value::Err(kind)) => {
                if errors.contains(&kind) {
                    Ok(Value::Err(kind))
                } else {
                    Err(format!("unknown error kind `{kind}` (known: {})", errors.join(", ")))
                }
            }
            (Ty::Result(t), v) => t.check(v, errors, expectation),
            (Ty::Option(_), Value::Nil) => Ok(Value::Nil),
            (Ty::Option(t), v) => t.check(v, errors, expectation),
            (Ty::Unit, Value::Unit) => Ok(Value::Unit),
            (Ty::Bool, Value::Bool(b)) => Ok(Value::Bool(b)),
            (Ty::Int(it), Value::Int(i)) => {
                let (lo, hi) = it.range();
                if (lo..=hi).contains(&i) {
                    Ok(Value::Int(i))
                } else {
                    Err(format!("{i} does not fit in {}", it.name()))
                }
            }
            (Ty::Float, Value::Float(x)) => Ok(Value::Float(x)),
            (Ty::Float, Value::Int(i)) => Ok(Value::Float(i as f64)),
            (Ty::Str, Value::Str(s)) => Ok(Value::Str(s)),
            (Ty::List(t), Value::List(items)) => {
                Ok(Value::List(items.into_iter().map(|v| t.check(v, errors, expectation)).collect::<Result<_, _>>()?))
            }
            (Ty::Tuple(ts), Value::List(items)) if ts.len() == items.len() => Ok(Value::List(
                ts.iter().zip(items).map(|(t, v)| t.check(v, errors, expectation)).collect::<Result<_, _>>()?,
            )),
            (t, v) => Err(format!("expected {t}, found `{v}`")),
        }
    }

    /// Reads a `replay` argument or result from JSON.
    pub fn from_json(&self, j: &Json, errors: &[String]) -> Result<Value, String> {
        let v = match (self, j) {
            (Ty::Result(_), Json::Object(m)) if m.len() == 1 && m.contains_key("err") => match &m["err"] {
                Json::String(k) => Value::Err(k.clone()),
                other => return Err(format!("`err` must name an error kind, found {other}")),
            },
            (Ty::Result(t), j) => return t.from_json(j, errors),
            (Ty::Option(_), Json::Null) => Value::Nil,
            (Ty::Option(t), j) => return t.from_json(j, errors),
            (Ty::Unit, Json::Null) => Value::Unit,
            (Ty::Bool, Json::Bool(b)) => Value::Bool(*b),
            (Ty::Int(_), Json::Number(n)) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Value::Int(i as i128),
                (_, Some(u)) => Value::Int(u as i128),
                _ => return Err(format!("expected an integer, found {n}")),
            },
            (Ty::Float, Json::Number(n)) => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            (Ty::Str, Json::String(s)) => Value::Str(s.clone()),
            (Ty::List(t), Json::Array(items)) => {
                Value::List(items.iter().map(|j| t.from_json(j, errors)).collect::<Result<_, _>>()?)
            }
            (Ty::Tuple(ts), Json::Array(items)) if ts.len() == items.len() => {
                Value::List(ts.iter().zip(items).map(|(t, j)| t.from_json(j, errors)).collect::<Result<_, _>>()?)
            }
            (t, j) => return Err(format!("expected {t}, found {j}")),
        };
        self.check(v, errors, false)
    }
}

/// A result or argument as JSON: `null` for `None` and `()`,
/// `{"err": "<kind>"}` for an error, `"_"`-free since `Any` becomes
/// `{"any": true}`.
pub fn to_json(v: &Value) -> Json {
    match v {
        Value::Unit | Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => {
            if let Ok(x) = i64::try_from(*i) {
                Json::from(x)
            } else if let Ok(x) = u64::try_from(*i) {
                Json::from(x)
            } else {
                Json::String(i.to_string())
            }
        }
        Value::Float(x) => serde_json::Number::from_f64(*x).map(Json::Number).unwrap_or(Json::Null),
        Value::Str(s) => Json::String(s.clone()),
        Value::List(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Err(kind) => serde_json::json!({ "err": kind }),
        Value::Any => serde_json::json!({ "any": true }),
    }
}

/// Parses one untyped literal from the front of `s`; returns the value and
/// the rest. Syntax: `12`, `-3`, `1.5`, `"text"` (Rust escapes), `true`,
/// `false`, `None`, `()`, `[a, b]`, `(a, b)`, `err(kind)`, `_`.
pub fn parse_literal(s: &str) -> Result<(Value, &str), String> {
    let s = s.trim_start();
    let mut chars = s.chars();
    let first = chars.next().ok_or("expected a value, found the end of the line")?;
    match first {
        '"' => parse_string(s),
        '[' => {
            let (items, rest) = parse_seq(&s[1..], ']')?;
            Ok((Value::List(items), rest))
        }
        '(' => {
            let (items, rest) = parse_seq(&s[1..], ')')?;
            Ok((if items.is_empty() { Value::Unit } else { Value::List(items) }, rest))
        }
        '_' if !s[1..].starts_with(|c: char| c.is_alphanumeric()) => Ok((Value::Any, &s[1..])),
        c if c == '-' || c.is_ascii_digit() => {
            let end = s[1..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-' || c == '+'))
                .map_or(s.len(), |i| i + 1);
            let text: String = s[..end].chars().filter(|&c| c != '_').collect();
            if let Ok(i) = text.parse::<i128>() {
                Ok((Value::Int(i), &s[end..]))
            } else if let Ok(x) = text.parse::<f64>() {
                Ok((Value::Float(x), &s[end..]))
            } else {
                Err(format!("`{}` is not a number", &s[..end]))
            }
        }
        c if c.is_alphabetic() => {
            let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
            let word = &s[..end];
            let rest = &s[end..];
            match word {
                "true" => Ok((Value::Bool(true), rest)),
                "false" => Ok((Value::Bool(false), rest)),
                "None" | "none" | "null" => Ok((Value::Nil, rest)),
                "err" => {
                    let rest = rest.trim_start().strip_prefix('(').ok_or("expected `(` after `err`")?;
                    let close = rest.find(')').ok_or("expected `)` to close `err(`")?;
                    let kind = rest[..close].trim();
                    if kind.is_empty() {
                        return Err("`err()` needs an error kind, e.g. `err(conflict)`".into());
                    }
                    Ok((Value::Err(kind.to_string()), &rest[close + 1..]))
                }
                _ => Err(format!("unexpected `{word}`: strings are written in double quotes")),
            }
        }
        c => Err(format!("unexpected `{c}`")),
    }
}

fn parse_seq(mut s: &str, close: char) -> Result<(Vec<Value>, &str), String> {
    let mut items = Vec::new();
    loop {
        s = s.trim_start();
        if let Some(rest) = s.strip_prefix(close) {
            return Ok((items, rest));
        }
        let (v, rest) = parse_literal(s)?;
        items.push(v);
        s = rest.trim_start();
        if let Some(rest) = s.strip_prefix(',') {
            s = rest;
        } else if !s.starts_with(close) {
            return Err(format!("expected `,` or `{close}`"));
        }
    }
}

fn parse_string(s: &str) -> Result<(Value, &str), String> {
    let mut out = String::new();
    let mut chars = s.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((Value::Str(out), &s[i + 1..])),
            '\\' => match chars.next().map(|(_, c)| c) {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('0') => out.push('\0'),
                Some('\\') => out.push('\\'),
                Some('"') => out.push('"'),
                Some(c) => return Err(format!("unknown escape `\\{c}`")),
                None => break,
            },
            c => out.push(c),
        }
    }
    Err("unterminated string".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> Value {
        let (v, rest) = parse_literal(s).unwrap();
        assert!(rest.trim().is_empty(), "left over: {rest:?}");
        v
    }

    #[test]
    fn types_round_trip_through_text() {
        for t in ["i64", "option<i64>", "list<str>", "result<option<i64>>", "tuple<str, list<u64>>"] {
            assert_eq!(t.parse::<Ty>().unwrap().to_string(), t);
        }
        assert!("map<str>".parse::<Ty>().is_err());
    }

    #[test]
    fn literals() {
        assert_eq!(lit("-12"), Value::Int(-12));
        assert_eq!(lit("1_000"), Value::Int(1000));
        assert_eq!(lit("2.5"), Value::Float(2.5));
        assert_eq!(lit(r#""a \"q\"""#), Value::Str("a \"q\"".into()));
        assert_eq!(lit("None"), Value::Nil);
        assert_eq!(lit("()"), Value::Unit);
        assert_eq!(lit("err(conflict)"), Value::Err("conflict".into()));
        assert_eq!(lit("_"), Value::Any);
        assert_eq!(lit(r#"["a", [1, 2], ()]"#).to_string(), r#"["a", [1, 2], ()]"#);
        assert!(parse_literal("abc").unwrap_err().contains("double quotes"));
        assert!(parse_literal("\"open").is_err());
        assert!(parse_literal("[1 2]").is_err());
    }

    #[test]
    fn checking_against_types() {
        let errors = vec!["released".to_string()];
        let t: Ty = "result<option<i64>>".parse().unwrap();
        assert_eq!(t.check(Value::Nil, &errors, false), Ok(Value::Nil));
        assert_eq!(t.check(Value::Int(3), &errors, false), Ok(Value::Int(3)));
        assert!(t.check(Value::Err("nope".into()), &errors, false).is_err());
        assert!(t.check(Value::Str("x".into()), &errors, false).is_err());
        assert!("u64".parse::<Ty>().unwrap().check(Value::Int(-1), &errors, false).is_err());
        assert!("u64".parse::<Ty>().unwrap().check(Value::Any, &errors, false).is_err());
    }

    #[test]
    fn json_both_ways() {
        let errors = vec!["conflict".to_string()];
        let t: Ty = "result<u64>".parse().unwrap();
        let v = t.from_json(&serde_json::json!({"err": "conflict"}), &errors).unwrap();
        assert_eq!(to_json(&v), serde_json::json!({"err": "conflict"}));
        let t: Ty = "list<option<str>>".parse().unwrap();
        let v = t.from_json(&serde_json::json!(["a", null]), &errors).unwrap();
        assert_eq!(to_json(&v), serde_json::json!(["a", null]));
    }
}
