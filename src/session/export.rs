//! Exporting a failing case as an ordinary `#[test]` in the solution's
//! `tests/` folder, so it can be debugged with a debugger, `dbg!` and
//! `cargo test`, outside the harness.
//!
//! The test calls the solution through `HarnessSolution`, the alias that
//! `harness_contract::export!` defines, and the problem's trait, brought in
//! by a glob import. Errors are compared by kind, as the judge does.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use harness_contract::Value;

use crate::problem::script::Step;
use crate::problem::signature::Signature;
use crate::problem::ty::Ty;

/// A Rust expression of type `ty` for `v`.
fn expr(v: &Value, ty: &Ty) -> String {
    match (ty, v) {
        (Ty::Result(_), Value::Err(kind)) => format!("Err({kind:?})"),
        (Ty::Result(t), v) => format!("Ok({})", expr(v, t)),
        (Ty::Option(_), Value::Nil) => "None".into(),
        (Ty::Option(t), v) => format!("Some({})", expr(v, t)),
        (Ty::Str, Value::Str(s)) => format!("{s:?}.to_string()"),
        (Ty::Int(_), Value::Int(i)) => format!("{i}_{ty}"),
        (Ty::Float, Value::Float(x)) => format!("{x:?}_f64"),
        (Ty::Bool, Value::Bool(b)) => b.to_string(),
        (Ty::Unit, _) => "()".into(),
        (Ty::List(t), Value::List(items)) => {
            let parts: Vec<String> = items.iter().map(|i| expr(i, t)).collect();
            format!("vec![{}]", parts.join(", "))
        }
        (Ty::Tuple(ts), Value::List(items)) => {
            let parts: Vec<String> = ts.iter().zip(items).map(|(t, i)| expr(i, t)).collect();
            format!("({},)", parts.join(", "))
        }
        (_, v) => format!("/* {v} */ unreachable!()"),
    }
}

/// `some case name!` → `some_case_name`.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_matches('_').to_string();
    let out = if out.starts_with(|c: char| c.is_ascii_digit()) || out.is_empty() { format!("case_{out}") } else { out };
    out.chars().take(60).collect::<String>().trim_end_matches('_').to_string()
}

/// The source of a test file that replays `steps` against the solution.
pub fn test_source(sig: &Signature, lib_name: &str, case: &str, steps: &[Step]) -> String {
    let name = slug(case);
    let mut body = String::new();
    for (i, step) in steps.iter().enumerate() {
        let Some((params, ret)) = sig.lookup(&step.call.op) else { continue };
        let args: Vec<String> = params.iter().zip(&step.call.args).map(|((_, t), v)| expr(v, t)).collect();
        let args = args.join(", ");
        if step.call.op == "new" {
            body.push_str(&format!("    let mut s = HarnessSolution::new({args});\n"));
            continue;
        }
        let mut call = format!("s.{}({args})", step.call.op);
        if matches!(ret, Ty::Result(_)) {
            call.push_str(".map_err(|e| harness_contract::ErrorKind::kind(&e))");
        }
        let label = format!("operation {i}: {}", step.call).replace('{', "{{").replace('}', "}}");
        if step.expect == Value::Any {
            body.push_str(&format!("    let _ = {call}; // the statement leaves this result open\n"));
        } else {
            body.push_str(&format!("    assert_eq!({call}, {}, {label:?});\n", expr(&step.expect, ret)));
        }
    }
    format!(
        "//! Exported by harness from the failing case\n//! \"{case}\".\n//! Run it with `cargo test --test harness_{name}`.\n\n\
         #![allow(unused_mut, clippy::unit_cmp)]\n\n\
         use harness_contract::{problem}::*;\nuse {lib_name}::HarnessSolution;\n\n\
         #[test]\nfn {name}() {{\n{body}}}\n",
        problem = sig.problem,
    )
}

/// What `write_test` did.
#[derive(Debug, PartialEq)]
pub struct Exported {
    pub path: PathBuf,
    /// The same test was exported before: nothing was written.
    pub already: bool,
    /// What the crate needs for the test to run.
    pub note: Option<String>,
}

/// Writes the test into `<solution>/tests/harness_<slug>.rs`, never over an
/// existing file (another case of the same name goes to `…_2.rs`); the same
/// case exported again is found, not written twice.
pub fn write_test(solution: &Path, sig: &Signature, case: &str, steps: &[Step]) -> Result<Exported> {
    let manifest = solution.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).with_context(|| format!("cannot read {}", manifest.display()))?;
    let doc: toml::Table = toml::from_str(&text).with_context(|| format!("cannot parse {}", manifest.display()))?;
    let Some(package) = doc.get("package").and_then(|p| p.get("name")).and_then(|n| n.as_str()) else {
        bail!("{}: no [package] name", manifest.display());
    };
    let lib_name = doc
        .get("lib")
        .and_then(|l| l.get("name"))
        .and_then(|n| n.as_str())
        .map_or_else(|| package.replace('-', "_"), str::to_string);
    let has_rlib = doc
        .get("lib")
        .and_then(|l| l.get("crate-type"))
        .and_then(|t| t.as_array())
        .is_some_and(|t| t.iter().any(|k| k.as_str() == Some("rlib") || k.as_str() == Some("lib")));
    let dir = solution.join("tests");
    let base = format!("harness_{}", slug(case));
    let source = test_source(sig, &lib_name, case, steps);
    let note = (!has_rlib).then(|| {
        format!("to run it, add \"rlib\" to crate-type in {}: crate-type = [\"cdylib\", \"rlib\"]", manifest.display())
    });
    let mut path = dir.join(format!("{base}.rs"));
    let mut n = 2;
    while path.exists() {
        if std::fs::read_to_string(&path).is_ok_and(|old| old == source) {
            return Ok(Exported { path, already: true, note });
        }
        path = dir.join(format!("{base}_{n}.rs"));
        n += 1;
    }
    crate::base::fsio::write_atomic(&path, source.as_bytes())?;
    Ok(Exported { path, already: false, note })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::script;

    #[test]
    fn exported_source_reads_like_a_hand_written_test() {
        let sig = Signature::parse_for_tests(
            &[],
            &[("put", "key: str, value: i64", "u64"), ("commit", "txn: u64", "result<u64>"), ("keys", "", "list<str>")],
            &["conflict"],
        );
        let steps = script::parse(
            "put(\"a\", -1) -> 1\ncommit(1) -> err(conflict)\nkeys() -> [\"a\"]\nput(\"b\", 2) -> _",
            &sig,
        )
        .unwrap();
        let src = test_source(&sig, "kv_solution", "commit fails: {conflict}!", &steps);
        assert!(src.contains("use harness_contract::test::*;"), "{src}");
        assert!(src.contains("fn commit_fails_conflict()"), "{src}");
        assert!(src.contains("let mut s = HarnessSolution::new();"), "{src}");
        assert!(
            src.contains("assert_eq!(s.put(\"a\".to_string(), -1_i64), 1_u64, \"operation 1: put(\\\"a\\\", -1)\");"),
            "{src}"
        );
        assert!(
            src.contains("s.commit(1_u64).map_err(|e| harness_contract::ErrorKind::kind(&e)), Err(\"conflict\")"),
            "{src}"
        );
        assert!(src.contains("vec![\"a\".to_string()]"), "{src}");
        assert!(src.contains("let _ = s.put(\"b\".to_string(), 2_i64);"), "{src}");
    }

    #[test]
    fn the_same_case_twice_is_found_not_written_again() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"sol\"\n[lib]\ncrate-type = [\"cdylib\", \"rlib\"]\n",
        )
        .unwrap();
        let sig = Signature::parse_for_tests(&[], &[("put", "key: str, value: i64", "u64")], &[]);
        let one = script::parse("put(\"a\", 1) -> 1", &sig).unwrap();
        let two = script::parse("put(\"a\", 2) -> 1", &sig).unwrap();
        let first = write_test(dir.path(), &sig, "c", &one).unwrap();
        assert!(!first.already && first.path.ends_with("tests/harness_c.rs"));
        assert_eq!(write_test(dir.path(), &sig, "c", &one).unwrap(), Exported { already: true, ..first });
        let other = write_test(dir.path(), &sig, "c", &two).unwrap();
        assert!(!other.already && other.path.ends_with("tests/harness_c_2.rs"), "another case of the same name");
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("a read-your-own-writes case"), "a_read_your_own_writes_case");
        assert_eq!(slug("1 thing"), "case_1_thing");
    }
}
