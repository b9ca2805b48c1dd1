//! End to end in a real pseudo-terminal: `harness start versioned_kv` on a
//! scratch copy of the project, a gate-1 solution written as an editor
//! would, gate 2 unlocking on screen, quit with confirmation, and the
//! session and report files on disk.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::Pty;

const GATE_1: &str = r#"
use std::collections::HashMap;
use harness_contract::versioned_kv::VersionedKv;

pub struct Store { data: HashMap<String, i64>, version: u64 }

impl VersionedKv for Store {
    fn new() -> Self { Store { data: HashMap::new(), version: 0 } }
    fn put(&mut self, key: String, value: i64) -> u64 { self.version += 1; self.data.insert(key, value); self.version }
    fn get(&self, key: String) -> Option<i64> { self.data.get(&key).copied() }
    fn version(&self) -> u64 { self.version }
}

harness_contract::export!(versioned_kv, Store);
"#;

/// `harness start versioned_kv` in an 80×24 pseudo-terminal.
fn spawn(dir: &Path) -> Pty {
    Pty::start(dir, "versioned_kv", 24, 80)
}

fn state(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("reports/sessions/versioned_kv.json")).unwrap()).unwrap()
}

#[test]
fn a_killed_session_resumes_with_the_clock_still_running() {
    let project = common::versioned_kv_project("harness-e2e");
    let dir = project.path();
    let mut first = spawn(dir);
    first.wait_for("not_implemented", Duration::from_secs(120));
    let before = state(dir);
    // As hard as it gets: no chance to save anything on the way out.
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(1100));

    let mut second = spawn(dir);
    second.wait_for("Gate 1: Store and read", Duration::from_secs(60));
    second.wait_for("not_implemented", Duration::from_secs(60));
    let after = state(dir);
    assert_eq!(after["id"], before["id"], "the same session");
    assert_eq!(after["started_at_ms"], before["started_at_ms"], "the clock was not reset");
    let kinds: Vec<&str> = after["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"resumed"), "{kinds:?}");
    // The countdown on screen counts from the original start.
    let budget_ms = after["budget_ms"].as_u64().unwrap();
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    let left_ms = budget_ms - (now_ms - after["started_at_ms"].as_u64().unwrap());
    let text = second.contents();
    let shown = text.lines().next().unwrap_or("").to_string();
    // The screen redraws once a second: it may still show a minute later.
    let clock = |ms: u64| format!("{}:{:02}:", ms / 3_600_000, ms / 60_000 % 60);
    let (now, then) = (clock(left_ms), clock(left_ms + 2_000));
    assert!(
        (shown.contains(&now) || shown.contains(&then)) && shown.contains("left"),
        "header {shown:?}, expected about {now}"
    );
    second.writer.write_all(b"qy").unwrap();
    second.writer.flush().unwrap();
    second.wait_exit(Duration::from_secs(20));
}

#[test]
fn practice_session_from_start_to_gate_2_and_quit() {
    let project = common::versioned_kv_project("harness-e2e");
    let dir = project.path();
    let mut session = spawn(dir);

    session.wait_for("Gate 1: Store and read", Duration::from_secs(60));
    session.wait_for("not_implemented", Duration::from_secs(120));
    let lib = dir.join("solutions/versioned_kv/src/lib.rs");
    assert!(lib.is_file(), "the starter was copied");
    // Save as an editor that writes a temporary file and renames it does.
    let tmp = dir.join("solutions/versioned_kv/src/.lib.rs.tmp");
    std::fs::write(&tmp, GATE_1).unwrap();
    std::fs::rename(&tmp, &lib).unwrap();

    session.wait_for("Gate 2/4", Duration::from_secs(120));
    // At 80 columns the long title stands inside the pane, under "Gate 2".
    session.wait_for("Gate 2 ◀", Duration::from_secs(10));
    session.wait_for("Point-in-time reads and deletes", Duration::from_secs(10));
    session.wait_for("The store must now answer", Duration::from_secs(10));

    session.writer.write_all(b"q").unwrap();
    session.writer.flush().unwrap();
    session.wait_for("Quit?", Duration::from_secs(10));
    session.writer.write_all(b"y").unwrap();
    session.writer.flush().unwrap();

    let status = session.wait_exit(Duration::from_secs(20));
    assert!(status.success(), "exit status {status:?}");

    let state = state(dir);
    assert_eq!(state["gate"], 2);
    assert_eq!(state["status"], "running", "a quit practice session is kept for resuming");
    assert!(state["gates"][0]["passed_at_ms"].as_u64().is_some());

    let reports: Vec<PathBuf> = std::fs::read_dir(dir.join("reports"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&reports[0]).unwrap()).unwrap();
    assert_eq!(report["format_version"], 1);
    assert_eq!(report["gates_passed"], 1);
    assert_eq!(report["gates"][0]["passed"], true);
    let snapshot = report["gates"][0]["snapshot"].as_array().unwrap();
    assert!(
        snapshot
            .iter()
            .any(|f| f["path"] == "src/lib.rs" && f["content"].as_str().unwrap().contains("self.version += 1"))
    );
    assert!(reports[0].with_extension("md").is_file());
}

#[test]
fn a_second_terminal_is_refused_and_sigterm_ends_the_session_cleanly() {
    let project = common::versioned_kv_project("harness-e2e");
    let dir = project.path();
    let mut first = spawn(dir);
    first.wait_for("Gate 1: Store and read", Duration::from_secs(120));

    // The same session in a second terminal would fight over its state.
    let mut second = spawn(dir);
    assert_eq!(second.wait_exit(Duration::from_secs(20)).exit_code(), 2, "the second start gives up");
    second.wait_for("already open in another terminal", Duration::from_secs(5));

    let pid = first.child.process_id().unwrap();
    rustix::process::kill_process(rustix::process::Pid::from_raw(pid as i32).unwrap(), rustix::process::Signal::TERM)
        .unwrap();
    let status = first.wait_exit(Duration::from_secs(20));
    assert!(status.success(), "SIGTERM ends the session cleanly: {status:?}");
    let state = state(dir);
    assert_eq!(state["status"], "running", "kept for resuming");
    assert_eq!(state["events"].as_array().unwrap().last().unwrap()["kind"], "quit");
    assert!(
        std::fs::read_dir(dir.join("reports"))
            .unwrap()
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "md"))
    );
}

#[test]
fn start_after_a_completed_session_records_nothing() {
    let project = common::versioned_kv_project("harness-e2e");
    let dir = project.path();
    let mut first = spawn(dir);
    first.wait_for("not_implemented", Duration::from_secs(120));
    // The reference passes every gate: the session completes.
    let lib = dir.join("solutions/versioned_kv/src/lib.rs");
    let reference = std::fs::read_to_string(common::root().join("problems/versioned_kv/reference/src/lib.rs")).unwrap();
    let tmp = dir.join("solutions/versioned_kv/src/.lib.rs.tmp");
    std::fs::write(&tmp, reference).unwrap();
    std::fs::rename(&tmp, &lib).unwrap();
    first.wait_for("All 4 gates passed", Duration::from_secs(240));
    first.writer.write_all(b"q").unwrap();
    first.writer.flush().unwrap();
    assert!(first.wait_exit(Duration::from_secs(20)).success());
    let done = state(dir);
    assert_eq!(done["status"], "completed");
    let files = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("reports")).unwrap().flatten().map(|e| e.path()).collect();
        v.sort();
        v
    };
    let before = files(dir);

    // A new user's next move: `start` again.
    let mut second = spawn(dir);
    let status = second.wait_exit(Duration::from_secs(30));
    assert!(status.success(), "{status:?}");
    let screen = second.wait_for("is complete", Duration::from_secs(5));
    assert!(screen.contains("--fresh") && screen.contains("harness report"), "{screen}");
    assert_eq!(state(dir), done, "the session state is untouched");
    assert_eq!(files(dir), before, "no new report: no attempt was recorded");
    let list = common::harness(dir, &["report", "--list"]);
    let listed = common::text(&list);
    assert_eq!(listed.lines().filter(|l| l.contains("versioned_kv")).count(), 1, "one attempt: {listed}");
}

#[test]
fn a_new_session_opens_on_the_first_ninety_seconds_and_keeps_the_answers() {
    let project = common::versioned_kv_project("harness-e2e");
    let dir = project.path();
    let config = dir.join("harness.toml");
    let toml = std::fs::read_to_string(&config).unwrap().replace("first_ninety = false", "first_ninety = true");
    std::fs::write(&config, toml).unwrap();
    let mut session = spawn(dir);
    session.wait_for("the first ninety seconds", Duration::from_secs(60));
    session.wait_for("Is a read an exact lookup", Duration::from_secs(10));
    for answer in ["yes, a log", "global", "no undo"] {
        session.writer.write_all(answer.as_bytes()).unwrap();
        session.writer.write_all(b"\r").unwrap();
        session.writer.flush().unwrap();
    }
    session.wait_for("Gate 1: Store and read", Duration::from_secs(30));
    let answers = state(dir)["first_ninety"].clone();
    assert_eq!(answers[0]["answer"], "yes, a log", "{answers}");
    assert_eq!(answers[1]["answer"], "global");
    assert_eq!(answers[2]["question"], "Will history ever have to be forgotten or rolled back?");
    session.writer.write_all(b"q").unwrap();
    session.writer.flush().unwrap();
    session.wait_for("Quit?", Duration::from_secs(10));
    session.writer.write_all(b"y").unwrap();
    session.writer.flush().unwrap();
    assert!(session.wait_exit(Duration::from_secs(20)).success());
    // Resuming never asks again.
    let again = spawn(dir);
    again.wait_for("Gate 1: Store and read", Duration::from_secs(30));
    assert!(!again.contents().contains("the first ninety seconds"));
}

#[test]
fn a_mock_waits_on_a_ready_screen_that_hides_the_problem_and_leaving_it_records_nothing() {
    let project = common::scratch(true);
    let dir = project.path();
    let mut mock = Pty::spawn(dir, &["mock", "--problem", "wal"], 24, 80);
    let screen = mock.wait_for("Enter start the clock", Duration::from_secs(30));
    assert!(!screen.contains("Write-ahead") && !screen.contains("wal"), "the problem is hidden:\n{screen}");
    assert!(screen.contains("90 minutes"), "{screen}");
    mock.writer.write_all(b"q").unwrap();
    mock.writer.flush().unwrap();
    assert!(mock.wait_exit(Duration::from_secs(20)).success());
    assert!(!dir.join("solutions").exists(), "no solution folder was made");
    let reports = std::fs::read_dir(dir.join("reports")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(reports, 0, "nothing recorded");
}
