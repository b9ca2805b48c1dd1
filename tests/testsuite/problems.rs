//! Every shipped problem is honest (`harness audit`): its reference passes
//! every gate, its starter compiles and fails gate 1 with `not_implemented`
//! only, and each mutant passes every gate before its own and is caught at
//! its own gate by the case the problem names.
//!
//! Problems are discovered from `problems/`, so a new problem is covered
//! without touching this file. `HARNESS_TEST_PROBLEM=<id>` narrows the run
//! to one problem while writing it.

use crate::common;

use std::process::Command;

use common::root;
use serde_json::Value;

/// Runs `harness audit --json` on some problems; returns the failed findings.
fn audit(ids: &[String]) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .current_dir(root())
        .args(["audit", "--json"])
        .args(ids)
        .output()
        .expect("run harness");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "audit {ids:?}: no JSON ({e}), exit {:?}\nstderr: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let mut findings = Vec::new();
    for p in report["problems"].as_array().unwrap() {
        let findings_of = p["findings"].as_array().unwrap();
        let mutants = findings_of.iter().filter(|f| f["subject"].as_str().unwrap().starts_with("mutant ")).count();
        assert!(mutants > 0, "{}: a problem ships mutants", p["problem"]);
        // The alternate is judged on the generated cases of many more seeds.
        let id = p["problem"].as_str().unwrap();
        if root().join("problems").join(id).join("alternate/Cargo.toml").is_file() {
            assert!(
                findings_of.iter().any(|f| f["subject"].as_str().unwrap().starts_with("alternate over seeds 1..=50")),
                "{id}: the alternate is swept over 50 seeds"
            );
        }
        for f in findings_of.iter().filter(|f| f["ok"] != true) {
            findings.push(format!("{} {}: {}", p["problem"], f["subject"], f["detail"].as_str().unwrap()));
        }
    }
    assert_eq!(out.status.code(), Some(if findings.is_empty() { 0 } else { 1 }), "exit status matches findings");
    findings
}

#[test]
fn every_problem_is_honest() {
    let only = std::env::var("HARNESS_TEST_PROBLEM").ok();
    let mut ids: Vec<String> = std::fs::read_dir(root().join("problems"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("problem.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|id| only.as_ref().is_none_or(|o| o == id))
        .collect();
    ids.sort();
    assert!(!ids.is_empty(), "no problems found");
    // Two audits at a time: one builds while the other judges.
    let halves: Vec<Vec<String>> = ids.chunks(ids.len().div_ceil(2)).map(|c| c.to_vec()).collect();
    let findings: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = halves.iter().map(|half| s.spawn(move || audit(half))).collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(findings.is_empty(), "{} finding(s):\n{}", findings.len(), findings.join("\n"));
}

#[test]
fn audit_reports_a_surviving_mutant_as_a_hole() {
    // A scratch copy of versioned_kv whose gate-2 cases lost the rule that
    // deletes keep history: the mutant that erases history survives.
    let dir = common::versioned_kv_project("harness-audit");
    let p = dir.path();
    let src = root().join("problems/versioned_kv");
    let dst = p.join("problems/versioned_kv");
    let toml = std::fs::read_to_string(src.join("problem.toml")).unwrap();
    // Keep one mutant, with its edits, and drop the cases and generators
    // that catch it.
    let cut = toml.find("[[mutant]]").unwrap();
    let start = toml.find("[[mutant]]\nname = \"delete_erases_history\"").unwrap();
    let end = toml[start + 1..].find("[[mutant]]").map_or(toml.len(), |i| start + 1 + i);
    let toml = format!("{}{}", &toml[..cut], &toml[start..end]);
    let weak = toml
        .replace("get_at(\"a\", 1) -> 10\nget_at(\"a\", 2) -> 20\nget_at(\"a\", 3) -> None", "get_at(\"a\", 3) -> None")
        .replace("get_at(\"a\", 2) -> None\nget_at(\"a\", 1) -> 1\n", "get_at(\"a\", 2) -> None\n")
        .replace("get_at(\"a\", 1) -> 1\n'''", "'''")
        .replace("keys_at(3) -> [\"a\", \"b\", \"c\"]\n", "")
        .replace("cases = 25\nlength = [20, 120]\nseed = 2", "cases = 0\nlength = [20, 120]\nseed = 2");
    std::fs::write(dst.join("problem.toml"), weak).unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_harness")).current_dir(p).args(["audit", "versioned_kv"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("✗ mutant delete_erases_history") && text.contains("survives gate 2"), "{text}");
}

#[test]
fn a_later_check_of_the_same_library_measures_its_cost_afresh_and_in_full() {
    // `audit` gives a time-cost mutant several checks; each must measure,
    // not answer from the first check's verdict for the same bytes.
    use harness::judge::evaluate::Judge;
    use std::sync::atomic::{AtomicBool, Ordering};
    harness::judge::sandbox::use_worker_exe(std::path::Path::new(env!("CARGO_BIN_EXE_harness")));
    let project = common::versioned_kv_project("harness-test-remeasure");
    let config = harness::base::config::Config::discover(project.path()).unwrap();
    let problem = common::versioned_kv();
    let reference = problem.reference_dir();
    let gate = 2;
    let sizes = problem.gates[gate - 1].scale[0].sizes.len();
    assert!(sizes > 2, "gate {gate}'s first check has more sizes than a quick pass's two ends");
    let judge = Judge::new(&config, problem, &[1, 2], None).unwrap();
    let never = AtomicBool::new(false);
    let check = |judge: &Judge| {
        let build = harness::judge::compile::build(&config, &reference).unwrap();
        let eval = judge.evaluate_build(build, &[1, 2], &never, &|_, _| {}, None).unwrap();
        let g = eval.gates.iter().find(|g| g.gate == gate).unwrap();
        assert_eq!(g.scale.len(), 1, "gate {gate} has one scale check, measured");
        g.scale[0].clone()
    };
    let first = check(&judge);
    let kept = check(&judge);
    assert_eq!(
        (kept.elapsed_ms, kept.message.as_str()),
        (first.elapsed_ms, first.message.as_str()),
        "the same bytes: the first verdict is kept"
    );
    judge.forget_scale_results();
    judge.quick.store(false, Ordering::Relaxed);
    let again = check(&judge);
    assert_eq!(again.points.len(), sizes, "measured in full, every size: {}", again.message);
    assert!(again.points.iter().all(|p| p.yours.is_some()), "{}", again.message);
}

#[test]
fn every_problems_contract_source_reads_as_its_compiled_schema() {
    // The harness reads a problem's operations from the text of its
    // contract module, a solution gets them from the same declaration
    // compiled; a library built against another declaration is refused at
    // its handshake. This finds a reading that differs from the compiler's
    // (a type mapped wrongly, an alias missed) in a second.
    type SchemaOf = fn() -> harness_contract::Schema;
    let modules: [(&str, SchemaOf); 10] = [
        ("bounded_pipeline", harness_contract::bounded_pipeline::schema),
        ("dedupe", harness_contract::dedupe::schema),
        ("lru_cache", harness_contract::lru_cache::schema),
        ("rate_limiter", harness_contract::rate_limiter::schema),
        ("scheduler", harness_contract::scheduler::schema),
        ("spreadsheet", harness_contract::spreadsheet::schema),
        ("streaming_tokenizer", harness_contract::streaming_tokenizer::schema),
        ("token_stream_differ", harness_contract::token_stream_differ::schema),
        ("versioned_kv", harness_contract::versioned_kv::schema),
        ("wal", harness_contract::wal::schema),
    ];
    let shipped: std::collections::BTreeSet<String> = std::fs::read_dir(root().join("problems"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("problem.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let listed: std::collections::BTreeSet<String> = modules.iter().map(|(id, _)| id.to_string()).collect();
    assert_eq!(shipped, listed, "every shipped problem is listed here, and only those");
    for (id, schema) in modules {
        let problem =
            harness::problem::model::Problem::load(&root().join("problems"), &root().join("contract"), id).unwrap();
        let declared = problem.signature.schema().canonical_text();
        let contract = schema().canonical_text();
        assert_eq!(declared, contract, "{id}: contract/src/{id}.rs reads otherwise than it compiles");
    }
}

/// A concurrent case's own `repeat` is how often the judge runs it; the
/// other cases of its gate run the gate's `repeat`.
#[test]
fn a_concurrent_case_runs_as_often_as_it_says() {
    use harness::judge::{suite, threads};
    let config = harness::base::config::Config::discover(&root()).unwrap();
    let problem =
        harness::problem::model::Problem::load(&config.problems_dir, &config.contract_dir, "lru_cache").unwrap();
    let gate = problem.gates.iter().find(|g| g.concurrency.is_some()).expect("a concurrent gate");
    let (cases, _) = suite::collect_cases(&problem, &[gate.number], None);
    let runs = |name: &str| {
        let case = cases.iter().find(|c| c.name == name).expect(name);
        threads::Plan::from_calls(&case.steps.iter().map(|s| s.call.clone()).collect::<Vec<_>>()).expect("a plan").runs
    };
    let own = gate.cases.iter().find(|c| c.repeat.is_some()).expect("a case with its own repeat");
    let other = gate.cases.iter().find(|c| c.repeat.is_none() && !c.threads.is_empty()).expect("one without");
    assert_eq!(runs(&own.name), own.repeat.unwrap());
    assert_eq!(runs(&other.name), gate.concurrency.as_ref().unwrap().repeat);
    assert_ne!(own.repeat.unwrap(), gate.concurrency.as_ref().unwrap().repeat);
}
