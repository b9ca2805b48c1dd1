//! The real binary on fixture projects: verdicts for hostile code, exit
//! codes, positioned errors for bad input, and the JSON contracts.

use crate::common;

use std::process::Command;

use common::{copy_dir, harness, root, scratch, text};

use serde_json::Value;

#[test]
fn hostile_code_gets_named_verdicts_and_the_other_cases_still_run() {
    let project = root().join("tests/fixtures/project");
    let out = harness(&project, &["check", "hostile", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let gate = &report["gates"][0];
    let verdict = |case: &str| {
        gate["failures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["case"] == case)
            .map(|f| f["verdict"].as_str().unwrap().to_string())
            .unwrap_or_else(|| "pass".into())
    };
    let expected = [
        ("returns", "pass"),
        ("wrong", "wrong_answer"),
        ("panics", "panic"),
        ("loops", "timeout"),
        ("recurses", "stack_overflow"),
        ("aborts", "abort"),
        ("segfaults", "crash"),
        ("allocates", "memory_limit"),
        ("exits", "exited"),
        ("prints", "pass"),
        ("orphans", "refused"),
        ("unimplemented", "not_implemented"),
        ("todo", "not_implemented"),
    ];
    for (case, want) in expected {
        assert_eq!(verdict(case), want, "case `{case}`");
    }
    assert_eq!(gate["cases_total"], 13);
    assert_eq!(gate["cases_passed"], 2);
    let panic = gate["failures"].as_array().unwrap().iter().find(|f| f["case"] == "panics").unwrap();
    assert!(panic["message"].as_str().unwrap().contains("deliberate panic"), "{panic}");
    assert_eq!(panic["op_index"], 2, "the op that panicked, counting new()");
    assert_eq!(panic["actual"], serde_json::json!([null, 1]), "results before the panic are kept");
    // The process the candidate tried to spawn was refused (and would
    // have died with the worker's namespace).
    let orphan = gate["failures"].as_array().unwrap().iter().find(|f| f["case"] == "orphans").unwrap();
    assert!(orphan["message"].as_str().unwrap().contains("start a process"), "{orphan}");
    let orphans = Command::new("pgrep").args(["-f", "sleep 987"]).output().unwrap();
    assert!(orphans.stdout.is_empty(), "left behind: {}", String::from_utf8_lossy(&orphans.stdout));
}

#[test]
fn reference_passes_with_exit_0_and_the_json_has_the_documented_shape() {
    let out = harness(&root(), &["check", "versioned_kv", "--solution", "problems/versioned_kv/reference", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["format_version"], 1);
    assert_eq!(r["problem"], "versioned_kv");
    assert_eq!(r["build"]["ok"], true);
    assert_eq!(r["passed"], true);
    let gates = r["gates"].as_array().unwrap();
    assert_eq!(gates.len(), 4);
    for g in gates {
        assert_eq!(g["passed"], true);
        assert_eq!(g["cases_total"], g["cases_passed"]);
        assert!(g["failures"].as_array().unwrap().is_empty());
    }
}

#[test]
fn a_cost_mistake_fails_its_gate_with_too_slow_and_the_json_has_the_points() {
    let out = harness(&root(), &["check", "versioned_kv", "--mutant", "linear_scan_get_at", "--gate", "2", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let gate = &r["gates"][1];
    assert_eq!(gate["passed"], false);
    assert_eq!(gate["cases_total"], gate["cases_passed"], "every case passes: only the cost is wrong");
    let check = &gate["scale"][0];
    assert_eq!(check["verdict"], "too_slow");
    assert_eq!(check["kind"], "time");
    assert!(check["message"].as_str().unwrap().contains("the statement asks O(log w)"), "{check}");
    let points = check["points"].as_array().unwrap();
    assert!(points.len() >= 2);
    assert!(points.iter().all(|p| p["n"].as_u64().is_some() && p["reference"].as_f64().is_some()));
    assert!(check["yours_growth"].as_f64().unwrap() > 5.0 * check["reference_growth"].as_f64().unwrap());

    // The text output names the check and the verdict under its gate.
    let out = harness(&root(), &["check", "versioned_kv", "--mutant", "linear_scan_get_at", "--gate", "2"]);
    let t = text(&out);
    assert!(t.contains("✗ cost: get_at on a key with n writes — too_slow"), "{t}");
}

#[test]
fn a_failing_solution_exits_1_with_a_diff_and_gate_limits_the_run() {
    let out = harness(&root(), &["check", "versioned_kv", "--mutant", "delete_erases_history", "--gate", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("gate 1") && s.contains("gate 2") && !s.contains("gate 3"), "{s}");
    assert!(s.contains("delete keeps history: earlier versions still see the old value — wrong_answer"), "{s}");
    assert!(s.contains("- get_at(\"a\", 1) -> 10") && s.contains("+ get_at(\"a\", 1) -> None"), "{s}");
}

/// The keys of each object in `v`, by where the object is: the report,
/// `build`, a gate, a failure, an op.
fn key_sets(v: &Value) -> Vec<(&'static str, std::collections::BTreeSet<String>)> {
    let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    let gate = &v["gates"][0];
    let failure = &gate["failures"][0];
    vec![
        ("report", keys(v)),
        ("build", keys(&v["build"])),
        ("gate", keys(gate)),
        ("failure", keys(failure)),
        ("op", keys(&failure["ops"][0])),
    ]
}

#[test]
fn generated_failures_are_shrunk_and_carry_their_seed() {
    let out = harness(&root(), &["check", "versioned_kv", "--mutant", "per_key_versions", "--gate", "1", "--json"]);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    // docs/check.md's example has every key `check --json` prints, but for
    // the three it describes in prose below it.
    let docs = std::fs::read_to_string(root().join("docs/check.md")).unwrap();
    let example = docs.split("```json\n").nth(1).and_then(|rest| rest.split("```").next()).unwrap();
    let example: Value = serde_json::from_str(example).expect("docs/check.md's --json example is JSON");
    for ((what, real), (_, documented)) in key_sets(&r).into_iter().zip(key_sets(&example)) {
        let prose = ["scale", "scale_skipped", "sandbox"];
        let missing: Vec<&String> =
            real.iter().filter(|k| !documented.contains(*k) && !prose.contains(&k.as_str())).collect();
        let stale: Vec<&String> = documented.iter().filter(|k| !real.contains(*k)).collect();
        assert!(
            missing.is_empty() && stale.is_empty(),
            "{what}: not in the docs {missing:?}, only in the docs {stale:?}"
        );
    }
    let generated: Vec<&Value> =
        r["gates"][0]["failures"].as_array().unwrap().iter().filter(|f| f["kind"] == "generated").collect();
    assert!(generated.len() > harness::judge::suite::SHRUNK_PER_GATE, "enough failures to see the cap");
    for (i, f) in generated.iter().enumerate() {
        assert!(f["seed"].as_str().unwrap().starts_with("0x"));
        let ops = f["ops"].as_array().unwrap().len();
        if i < harness::judge::suite::SHRUNK_PER_GATE {
            assert!(ops <= 6, "shrunk to a short case, got {ops} ops: {f}");
            assert!(f["shrunk_from"].as_u64().unwrap() as usize >= ops);
        } else {
            assert!(f["shrunk_from"].is_null(), "only the first failures are shrunk: {f}");
        }
    }
}

#[test]
fn the_starter_fails_gate_1_cleanly() {
    let out = harness(
        &root(),
        &["check", "versioned_kv", "--solution", "problems/versioned_kv/starter", "--json", "--gate", "1"],
    );
    assert_eq!(out.status.code(), Some(1));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["build"]["ok"], true);
    let failures = r["gates"][0]["failures"].as_array().unwrap();
    assert!(!failures.is_empty());
    assert!(failures.iter().all(|f| f["verdict"] == "not_implemented"));
}

#[test]
fn harness_errors_exit_2() {
    let out = harness(&root(), &["check", "no_such_problem"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("no problem `no_such_problem`") && text(&out).contains("versioned_kv"),
        "{}",
        text(&out)
    );

    let out =
        harness(&root(), &["check", "versioned_kv", "--gate", "9", "--solution", "problems/versioned_kv/reference"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("--gate 9"), "{}", text(&out));

    let out = harness(&root(), &["check", "versioned_kv", "--solution", "/nonexistent/solution"]);
    assert_eq!(out.status.code(), Some(2));

    let out = harness(&root(), &["frobnicate"]);
    assert_eq!(out.status.code(), Some(2), "usage errors are harness errors");

    let empty = tempfile::tempdir().unwrap();
    let out = harness(empty.path(), &["list"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("no harness.toml"), "{}", text(&out));
}

#[test]
fn malformed_problem_toml_gets_a_positioned_error() {
    let dir = scratch(false);
    let problem = dir.path().join("problems/versioned_kv");
    copy_dir(&root().join("problems/versioned_kv"), &problem);
    let file = problem.join("problem.toml");
    let text_in = std::fs::read_to_string(&file).unwrap();
    // A typo in an expected value deep inside a case script.
    let bad = text_in.replacen("get_at(\"a\", 2) -> 10", "get_at(\"a\", 2) -> ten", 1);
    std::fs::write(&file, &bad).unwrap();
    let line = bad.lines().position(|l| l.contains("-> ten")).unwrap() + 1;
    let out = harness(dir.path(), &["check", "versioned_kv", "--solution", "problems/versioned_kv/reference"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out);
    assert!(err.contains(&format!("problem.toml:{line}:")), "{err}");
    assert!(err.contains("strings are written in double quotes"), "{err}");

    // A mutant edit that no longer matches the reference.
    let stale = text_in.replacen("pins.extend(self.txns", "pins.extend(self.transactions", 1);
    std::fs::write(&file, &stale).unwrap();
    let line = stale.lines().position(|l| l.contains("pins.extend(self.transactions")).unwrap();
    let out = harness(dir.path(), &["check", "versioned_kv", "--solution", "problems/versioned_kv/reference"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out);
    // The error points at the line that opens the `from` string, just above.
    assert!(err.contains(&format!("problem.toml:{line}:")), "{err}");
    assert!(err.contains("does not match the reference"), "{err}");

    // A scale script with an unknown name, and sizes spanning too little.
    let bad = text_in.replacen("repeat n { put(\"hot\", i) }", "repeat n { put(\"hot\", j) }", 1);
    std::fs::write(&file, &bad).unwrap();
    let line = bad.lines().position(|l| l.contains("put(\"hot\", j)")).unwrap() + 1;
    let out = harness(dir.path(), &["list"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out);
    assert!(err.contains(&format!("problem.toml:{line}:")), "{err}");
    assert!(err.contains("`j` is not defined here"), "{err}");
    // A list of a length whose index takes a reserved name: line and column.
    let bad = text_in.replacen("repeat n { put(\"hot\", i) }", "repeat n { put(list(2 as n, \"k\"), i) }", 1);
    std::fs::write(&file, &bad).unwrap();
    let (line, source) = bad.lines().enumerate().find(|(_, l)| l.contains("list(2 as n")).unwrap();
    let column = source.find("as n").unwrap() + 4;
    let out = harness(dir.path(), &["list"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out);
    assert!(err.contains(&format!("problem.toml:{}:{column}: `n` is reserved", line + 1)), "{err}");
    let bad = text_in.replacen("sizes = [250, 1000, 4000, 16000]", "sizes = [1000, 4000]", 1);
    std::fs::write(&file, &bad).unwrap();
    let out = harness(dir.path(), &["list"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("at least 16× the smallest"), "{}", text(&out));

    // Broken TOML syntax.
    std::fs::write(&file, "format_version = 1\ntitle = \"x\n").unwrap();
    let out = harness(dir.path(), &["list"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("problem.toml:2:"), "{}", text(&out));
}

#[test]
fn a_library_without_cdylib_is_refused_with_the_fix() {
    let dir = scratch(false);
    let crate_dir = dir.path().join("sol");
    copy_dir(&root().join("problems/versioned_kv/reference"), &crate_dir);
    let manifest = crate_dir.join("Cargo.toml");
    let m = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("crate-type = [\"cdylib\"]", "crate-type = [\"rlib\"]")
        .replace("../../../contract", root().join("contract").to_str().unwrap());
    std::fs::write(&manifest, m + "\n[workspace]\n").unwrap();
    let out = harness(&root(), &["check", "versioned_kv", "--solution", crate_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("crate-type = [\"cdylib\"]"), "{}", text(&out));
}

#[test]
fn a_solution_built_against_another_contract_is_refused_with_the_difference() {
    let dir = scratch(false);
    let crate_dir = dir.path().join("stale");
    std::fs::create_dir_all(crate_dir.join("src")).unwrap();
    std::fs::write(
        crate_dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"stale\"\nversion = \"0.1.0\"\nedition = \"2024\"\n[lib]\ncrate-type = [\"cdylib\"]\n\
             [dependencies]\nharness-contract = {{ path = {:?} }}\n[workspace]\n",
            root().join("contract")
        ),
    )
    .unwrap();
    // An older versioned_kv contract: `put` without a value.
    std::fs::write(
        crate_dir.join("src/lib.rs"),
        r#"
pub mod old {
    harness_contract::contract! {
        problem = "versioned_kv";
        errors = harness_contract::NoError;
        pub trait Kv { fn new() -> Self; fn put(&mut self, key: String) -> u64; }
    }
}
pub struct S;
impl old::Kv for S { fn new() -> Self { S } fn put(&mut self, _key: String) -> u64 { 1 } }
harness_contract::export!(in crate::old, S);
"#,
    )
    .unwrap();
    let out = harness(&root(), &["check", "versioned_kv", "--solution", crate_dir.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["build"]["ok"], false);
    let why = r["build"]["failure"].as_str().unwrap();
    assert!(why.contains("different `versioned_kv` contract"), "{why}");
    assert!(why.contains("+ put(key: str) -> u64"), "{why}");
}

#[test]
fn replay_prints_each_result_and_marks_disagreement_with_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let ops = dir.path().join("ops.json");
    std::fs::write(&ops, r#"[{"op":"put","args":["a",10]},{"op":"put","args":["a",20]},{"op":"get_at","args":["a",5]},{"op":"keys_at","args":[5]}]"#).unwrap();
    let out = harness(
        &root(),
        &[
            "replay",
            "versioned_kv",
            "--ops",
            ops.to_str().unwrap(),
            "--solution",
            "problems/versioned_kv/reference",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results: Vec<&Value> = rows.as_array().unwrap().iter().map(|r| &r["result"]).collect();
    assert_eq!(
        results,
        [&Value::Null, &serde_json::json!(1), &serde_json::json!(2), &serde_json::json!(20), &serde_json::json!(["a"])]
    );

    let out =
        harness(&root(), &["replay", "versioned_kv", "--ops", ops.to_str().unwrap(), "--mutant", "exact_match_lookup"]);
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("get_at(\"a\", 5) -> None   ✗ reference: 20"), "{s}");

    std::fs::write(&ops, r#"[{"op":"put","args":["a"]}]"#).unwrap();
    let out = harness(
        &root(),
        &["replay", "versioned_kv", "--ops", ops.to_str().unwrap(), "--solution", "problems/versioned_kv/reference"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("takes (key: str, value: i64)"), "{}", text(&out));
}

#[test]
fn list_shows_the_problems() {
    let out = harness(&root(), &["list", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let items: Value = serde_json::from_slice(&out.stdout).unwrap();
    let kv = items.as_array().unwrap().iter().find(|p| p["id"] == "versioned_kv").unwrap();
    assert_eq!((kv["gates"].as_u64(), kv["path_length"].as_u64(), kv["paths"].as_u64()), (Some(6), Some(4), Some(3)));
    // Every problem is a graph deep enough for three attempts that differ
    // in which follow-ups they meet (issue 22's floor).
    let total: u64 = items.as_array().unwrap().iter().map(|p| p["gates"].as_u64().unwrap()).sum();
    assert!(total >= 60, "{total} gates in all");
    for p in items.as_array().unwrap() {
        let id = p["id"].as_str().unwrap();
        let problem =
            harness::problem::model::Problem::load(&root().join("problems"), &root().join("contract"), id).unwrap();
        let sets: std::collections::BTreeSet<Vec<usize>> = problem
            .paths()
            .into_iter()
            .map(|mut path| {
                path.sort_unstable();
                path
            })
            .collect();
        assert!(problem.gates.len() >= 6 && sets.len() >= 3, "{id}: {} gates, gate sets {sets:?}", problem.gates.len());
    }
}

#[test]
fn an_exported_case_is_a_test_that_compiles_and_reproduces_the_failure() {
    let dir = scratch(false);
    let crate_dir = dir.path().join("sol");
    let config = harness::base::config::Config::discover(&root()).unwrap();
    let problem =
        harness::problem::model::Problem::load(&root().join("problems"), &root().join("contract"), "versioned_kv")
            .unwrap();
    let mutant = problem.mutants.iter().find(|m| m.name == "per_key_versions").unwrap();
    copy_dir(&harness::judge::compile::mutant_crate(&config, &problem, mutant).unwrap(), &crate_dir);
    let manifest = crate_dir.join("Cargo.toml");
    let m = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("crate-type = [\"cdylib\"]", "crate-type = [\"cdylib\", \"rlib\"]")
        .replace("[workspace]", "");
    let m = harness::judge::compile::point_at_contract(&m, &crate_dir, &root().join("contract"));
    std::fs::write(&manifest, m).unwrap();
    let case = problem.gates[0]
        .cases
        .iter()
        .find(|c| c.name == "the version counter is global: every key's write takes the next number")
        .unwrap();
    let harness::session::export::Exported { path, note, .. } =
        harness::session::export::write_test(&crate_dir, &problem.signature, &case.name, &case.steps).unwrap();
    assert!(note.is_none(), "the crate has an rlib: {note:?}");
    let out = Command::new(env!("CARGO"))
        .args(["test", "--quiet", "--test"])
        .arg(path.file_stem().unwrap())
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", root().join("target/harness-export"))
        .output()
        .unwrap();
    let text = text(&out);
    assert!(!out.status.success(), "the exported test must fail on the wrong solution:\n{text}");
    assert!(text.contains("operation 2: put(\"b\", 1)"), "{text}");
}

#[test]
fn start_without_a_terminal_exits_2_and_points_to_check() {
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .current_dir(root())
        .args(["start", "versioned_kv"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("harness check"), "{}", text(&out));
}

#[test]
fn start_without_a_problem_lists_what_there_is_to_practise() {
    let out = harness(&root(), &["start"]);
    assert_eq!(out.status.code(), Some(2));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("harness start <problem>") && s.contains("versioned_kv") && s.contains("lru_cache"), "{s}");
}

#[test]
fn a_new_problem_is_honest_from_the_start() {
    // A scratch project with its own copy of the contract crate, which
    // `harness new` extends.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    copy_dir(&root().join("contract"), &p.join("contract"));
    std::fs::create_dir_all(p.join("problems")).unwrap();
    std::fs::write(p.join("harness.toml"), format!("[paths]\ntarget = {:?}\n", root().join("target/harness-new")))
        .unwrap();
    // A root manifest whose tests enable the contract's problem modules, as
    // this repository's does: the new module's tests must run with them.
    let root_manifest = "[package]\nname = \"scratch\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
                         [workspace]\nmembers = [\"contract\"]\nexclude = [\"problems\"]\n\n[dev-dependencies]\n\
                         harness-contract = { path = \"contract\", features = [\n    \"dedupe\",\n] }\n";
    std::fs::write(p.join("Cargo.toml"), root_manifest).unwrap();
    std::fs::create_dir_all(p.join("src")).unwrap();
    std::fs::write(p.join("src/lib.rs"), "").unwrap();
    let out = harness(p, &["new", "ring_buffer", "--title", "Ring buffer"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let manifest = std::fs::read_to_string(p.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("    \"dedupe\",\n    \"ring_buffer\",\n] }"), "{manifest}");
    let out = harness(p, &["new", "ring_buffer"]);
    assert_eq!(out.status.code(), Some(2), "never overwrites: {}", text(&out));
    let out = harness(p, &["new", "Ring-Buffer"]);
    assert_eq!(out.status.code(), Some(2));
    let out = harness(p, &["audit", "ring_buffer"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("✓ mutant forgets_the_total"), "{}", text(&out));
    let out = harness(p, &["list"]);
    assert!(text(&out).contains("Ring buffer"), "{}", text(&out));
}

#[test]
fn a_solution_copied_away_from_its_contract_is_told_how_to_point_back() {
    let dir = scratch(false);
    let crate_dir = dir.path().join("elsewhere/sol");
    copy_dir(&root().join("problems/versioned_kv/starter"), &crate_dir);
    let out = harness(&root(), &["check", "versioned_kv", "--solution", crate_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("leads to no contract crate") && said.contains("harness-contract = { path = "), "{said}");
    assert!(said.contains(root().join("contract").to_str().unwrap()), "the absolute path to use: {said}");
}

#[test]
fn list_names_every_gate_of_a_linear_problem_but_only_gate_1_of_a_graph() {
    let out = harness(&root(), &["list"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = text(&out);
    for gate in ["gate 1 Store and read", "gate 1 A framed log"] {
        assert!(said.contains(gate), "{gate:?} missing:\n{said}");
    }
    for locked in ["Optimistic transactions", "Snapshots and compaction", "A change feed", "A crash in the middle"] {
        assert!(!said.contains(locked), "a follow-up of a graph problem is named: {locked:?}\n{said}");
    }
    // Every shipped problem is a graph now; the fixtures keep a linear one.
    let out = harness(&root().join("tests/fixtures/project"), &["list"]);
    let said = text(&out);
    assert!(said.contains("gate 1 Nothing gets out") && said.contains("gate 2 Hangs"), "{said}");
    assert!(said.contains("gate 1 Running total") && !said.contains("Take it back"), "{said}");
}

#[test]
fn a_check_of_some_gates_never_claims_all() {
    let p = common::versioned_kv();
    let some = common::evaluation(&[(1, 27, 27), (2, 36, 36)], vec![]);
    let path = p.default_path();
    let said = harness::ui::results::render_text(&p, &some, &path, false);
    assert!(said.ends_with("result: gates 1–2 passed (of 4)\n"), "{said}");
    let all = common::evaluation(&[(1, 27, 27), (2, 36, 36), (3, 40, 40), (4, 39, 39)], vec![]);
    assert!(harness::ui::results::render_text(&p, &all, &path, false).ends_with("result: all gates passed\n"));
}
