//! Every shipped problem is honest: its reference passes every gate, its
//! starter compiles and fails gate 1 with `not_implemented` only, and each
//! mutant passes every gate before its own and is caught at its own gate
//! (by the named case, when the problem names one).
//!
//! Problems are discovered from `problems/`, so a new problem is covered
//! without touching this file. `HARNESS_TEST_PROBLEM=<id>` narrows the run
//! to one problem while writing it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn check(problem: &str, solution: &Path, gate: Option<usize>) -> (i32, Value) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.current_dir(root()).args(["check", problem, "--json", "--no-shrink", "--solution"]).arg(solution);
    if let Some(g) = gate {
        cmd.args(["--gate", &g.to_string()]);
    }
    let out = cmd.output().expect("run harness");
    let code = out.status.code().unwrap_or(-1);
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{problem} {}: no JSON ({e}), exit {code}\nstderr: {}",
            solution.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (code, json)
}

fn gate_passed(report: &Value, gate: usize) -> bool {
    report["gates"][gate - 1]["passed"].as_bool().unwrap_or(false)
}

fn failure_names(report: &Value, gate: usize) -> Vec<String> {
    report["gates"][gate - 1]["failures"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| f["case"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Checks one problem; returns every way it is dishonest.
fn audit(id: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let dir = root().join("problems").join(id);
    let manifest: toml::Table = toml::from_str(&std::fs::read_to_string(dir.join("problem.toml")).unwrap()).unwrap();
    let gates = manifest["gate"].as_array().map_or(0, |g| g.len());

    let (code, report) = check(id, &dir.join("reference"), None);
    if code != 0 {
        problems.push(format!("{id}: the reference does not pass every gate (exit {code}): {report:#}"));
    }

    let (code, report) = check(id, &dir.join("starter"), Some(1));
    if code != 1 || !report["build"]["ok"].as_bool().unwrap_or(false) {
        problems.push(format!("{id}: the starter must build and fail (exit {code}): {:#}", report["build"]));
    } else {
        let failures = report["gates"][0]["failures"].as_array().cloned().unwrap_or_default();
        if failures.is_empty() || failures.iter().any(|f| f["verdict"] != "not_implemented") {
            problems.push(format!("{id}: the starter must fail gate 1 with not_implemented only"));
        }
    }

    for m in manifest.get("mutant").and_then(|m| m.as_array()).into_iter().flatten() {
        let name = m["name"].as_str().unwrap();
        let gate = m["gate"].as_integer().unwrap() as usize;
        assert!(gate <= gates);
        let (_, report) = check(id, &dir.join("mutants").join(name), Some(gate));
        if !report["build"]["ok"].as_bool().unwrap_or(false) {
            problems.push(format!("{id}: mutant {name} does not build: {:#}", report["build"]));
            continue;
        }
        for earlier in 1..gate {
            if !gate_passed(&report, earlier) {
                problems.push(format!(
                    "{id}: mutant {name} belongs to gate {gate} but already fails gate {earlier}: {:?}",
                    failure_names(&report, earlier)
                ));
            }
        }
        if gate_passed(&report, gate) {
            problems.push(format!("{id}: mutant {name} survives gate {gate}: the hidden tests have a hole"));
        } else if let Some(case) = m.get("caught_by").and_then(|c| c.as_str())
            && !failure_names(&report, gate).iter().any(|n| n == case)
        {
            problems.push(format!(
                "{id}: mutant {name} is not caught by `{case}` (caught by {:?})",
                failure_names(&report, gate)
            ));
        }
    }
    problems
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
    // Two problems at a time: each check already runs its cases in parallel.
    let findings: Vec<String> = std::thread::scope(|s| {
        let chunks: Vec<Vec<String>> = ids.chunks(ids.len().div_ceil(2)).map(|c| c.to_vec()).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| s.spawn(move || chunk.iter().flat_map(|id| audit(id)).collect::<Vec<_>>()))
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(findings.is_empty(), "{} finding(s):\n{}", findings.len(), findings.join("\n"));
}
