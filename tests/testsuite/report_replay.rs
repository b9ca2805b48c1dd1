//! A failure recorded in a report rebuilds, from the report alone, into
//! the same transcript through `harness replay`: the report keeps every
//! failing case's operations and its whole (shrunk) transcript.

use crate::common;

use std::io::Write;
use std::time::{Duration, Instant};

use common::{Pty, harness, text};

const MUTANT: &str = "delete_erases_history";

fn state(dir: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("reports/sessions/versioned_kv.json")).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or_default()
}

/// A practice session in a pseudo-terminal whose solution is `MUTANT`
/// (right on gate 1, wrong from gate 2), quit once the run's failing
/// cases are shrunk; returns the report's JSON path.
fn recorded(dir: &std::path::Path) -> std::path::PathBuf {
    let problem = common::versioned_kv();
    let m = problem.mutants.iter().find(|m| m.name == MUTANT).unwrap();
    let reference = std::fs::read_to_string(problem.reference_dir().join("src/lib.rs")).unwrap();
    let source = m.apply(&reference).unwrap().replace(", oracle);", ");");
    let mut session = Pty::start(dir, "versioned_kv", 24, 80);
    session.wait_for("not_implemented", Duration::from_secs(120));
    let lib = dir.join("solutions/versioned_kv/src/lib.rs");
    std::fs::write(dir.join("solutions/versioned_kv/src/.tmp"), source).unwrap();
    std::fs::rename(dir.join("solutions/versioned_kv/src/.tmp"), &lib).unwrap();
    // Gate 1 passes, gate 2 fails; its generated failures are then shrunk.
    let start = Instant::now();
    while !state(dir)["last_run"]["failures"]
        .as_array()
        .is_some_and(|f| f.iter().any(|f| f["gate"] == 2 && f["shrunk_from"].is_u64()))
    {
        assert!(start.elapsed() < Duration::from_secs(240), "no shrunk failure recorded: {}", session.contents());
        std::thread::sleep(Duration::from_millis(100));
    }
    session.writer.write_all(b"qy").unwrap();
    session.writer.flush().unwrap();
    assert!(session.wait_exit(Duration::from_secs(20)).success());
    let id = state(dir)["id"].as_str().unwrap().to_string();
    dir.join("reports").join(format!("{id}.json"))
}

#[test]
fn a_recorded_failure_replays_from_the_report_into_the_same_transcript() {
    let project = common::versioned_kv_project("harness-e2e");
    let dir = project.path();
    let path = recorded(dir);

    // From here on, only the report.
    let saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let failures = saved["last_run"]["failures"].as_array().unwrap();
    assert!(failures.iter().all(|f| !f["ops"].as_array().unwrap().is_empty()), "every failure keeps its ops");
    // A shrunk case is kept whole, however far its cause is from the line that fails.
    let long = failures
        .iter()
        .filter(|f| f["shrunk_from"].is_u64())
        .max_by_key(|f| f["ops"].as_array().unwrap().len())
        .unwrap();
    let ops = long["ops"].as_array().unwrap().len();
    let diff_of = |f: &serde_json::Value| -> Vec<String> {
        f["diff"].as_array().unwrap().iter().map(|d| d.as_str().unwrap().to_string()).collect()
    };
    assert_eq!(diff_of(long).iter().filter(|d| !d.starts_with('-')).count(), ops, "{:#?}", diff_of(long));
    let md = std::fs::read_to_string(path.with_extension("md")).unwrap();
    assert!(md.contains(&format!("(shrunk from {} to {} operations)", long["shrunk_from"], ops - 1)), "{md}");
    let fixed = failures.iter().find(|f| f["shrunk_from"].is_null()).unwrap();

    for f in [fixed, long] {
        let file = dir.join("ops.json");
        std::fs::write(&file, serde_json::to_string(&f["ops"]).unwrap()).unwrap();
        let out = harness(dir, &["replay", "versioned_kv", "--ops", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "the solution still fails: {}", text(&out));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let lines: Vec<&str> = stdout.lines().take_while(|l| !l.starts_with("--- output ---")).collect();
        let diff = diff_of(f);
        // The solution's side of the recorded transcript (equal and `+`
        // lines) is what replay prints, up to the failing operation.
        let actual: Vec<&str> = diff.iter().filter(|d| !d.starts_with('-')).map(|d| &d[2..]).collect();
        let replayed: Vec<&str> = lines.iter().map(|l| l.split("   ✗ reference: ").next().unwrap()).collect();
        assert_eq!(&replayed[..actual.len()], &actual[..], "case {}:\n{stdout}", f["case"]);
        // The reference's side (`-` lines) is what replay names as the reference's answer.
        let wanted: Vec<&str> = diff.iter().filter(|d| d.starts_with('-')).map(|d| &d[2..]).collect();
        let marked: Vec<String> = lines
            .iter()
            .filter_map(|l| l.split_once("   ✗ reference: "))
            .map(|(line, e)| format!("{} -> {e}", line.rsplit_once(" -> ").unwrap().0))
            .take(wanted.len())
            .collect();
        assert_eq!(marked, wanted, "case {}:\n{stdout}", f["case"]);
    }
}
