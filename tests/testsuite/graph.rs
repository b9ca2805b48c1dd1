//! Gates that form a graph, on the fixture problem `tally` (gate 1; 2 and
//! 3 build on it; 4 on 2; 5 on 3; sessions of three gates): what the
//! candidate sees before a gate unlocks, `check --path`, the audit of every
//! path, and sessions drawing their follow-ups in a real terminal.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{MIN, T0, copy_dir, harness, text};
use harness::judge::evaluate::{BuildInfo, Evaluation, GateResult};
use harness::problem::model::Problem;
use harness::session::report::Report;
use harness::session::state::{Mode, Session};
use harness::ui::practice::app::{App, Msg, Overlay, RunnerMsg};
use harness::ui::practice::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn fixture() -> PathBuf {
    common::root().join("tests/fixtures/project")
}

fn tally() -> Problem {
    Problem::load(&fixture().join("problems"), &fixture().join("contract"), "tally").unwrap()
}

/// A project holding only `tally`, building into `target/harness-graph`.
fn tally_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let dst = dir.path().join("problems/tally");
    copy_dir(&fixture().join("problems/tally"), &dst);
    for krate in ["reference", "starter"] {
        let manifest = dst.join(krate).join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        let text =
            harness::judge::compile::point_at_contract(&text, &dst.join(krate), &common::root().join("contract"));
        std::fs::write(&manifest, text).unwrap();
    }
    std::fs::write(
        dir.path().join("harness.toml"),
        format!(
            "[paths]\ncontract = {:?}\ntarget = {:?}\n[practice]\nfirst_ninety = false\n",
            common::root().join("contract"),
            common::root().join("target/harness-graph")
        ),
    )
    .unwrap();
    dir
}

/// What would name or describe gate `n`: its title, the start of its
/// statement, its follow-up questions.
fn tells(p: &Problem, n: usize) -> Vec<String> {
    let g = &p.gates[n - 1];
    let mut out = vec![g.title.clone(), g.statement.chars().take(24).collect()];
    out.extend(g.followups.iter().map(|f| f.question.clone()));
    out
}

/// Asserts that `seen` gives away none of `gates`.
fn gives_away_none(p: &Problem, seen: &str, gates: &[usize], what: &str) {
    for &n in gates {
        for tell in tells(p, n) {
            assert!(!seen.contains(&tell), "{what} gives gate {n} away ({tell:?}):\n{seen}");
        }
    }
}

fn screen(app: &App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    terminal.draw(|f| view::draw(f, app)).unwrap();
    terminal.backend().to_string()
}

/// A run of `tally` in which each of `gates` passed all its `cases`.
fn passing(p: &Problem, gates: &[usize]) -> Evaluation {
    Evaluation {
        build: BuildInfo { ok: true, duration: Duration::from_millis(200), diagnostics: vec![], failure: None },
        gates: gates
            .iter()
            .map(|&g| GateResult {
                gate: g,
                title: p.gates[g - 1].title.clone(),
                total: 3,
                passed: 3,
                failures: vec![],
                scale: vec![],
                scale_skipped: vec![],
                scale_pending: vec![],
            })
            .collect(),
        run_time: Duration::from_millis(100),
    }
}

#[test]
fn nothing_names_a_gate_before_it_unlocks() {
    let p = tally();
    let follow_ups: Vec<usize> = (2..=5).collect();
    // The starter (the candidate opens it first).
    for file in ["src/lib.rs", "Cargo.toml"] {
        let text = std::fs::read_to_string(p.starter_dir().join(file)).unwrap();
        gives_away_none(&p, &text, &follow_ups, "the starter");
    }
    // `harness list`, and `list --json` without --spoilers.
    for args in [&["list"][..], &["list", "--json"]] {
        let out = harness(&fixture(), args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        gives_away_none(&p, &text(&out), &follow_ups, "harness list");
    }
    let spoilers = text(&harness(&fixture(), &["list", "--json", "--spoilers"]));
    assert!(spoilers.contains(&p.gates[4].title), "--spoilers names the gates:\n{spoilers}");

    // The header and the statement pane of a new session.
    let session = Session::new("tally", Mode::Practice, p.path_length, 15 * MIN, T0);
    let mut app = App::new(p.clone(), session, PathBuf::from("/tmp/tally"), T0);
    let first = screen(&app);
    assert!(first.contains("Gate 1: Running total"), "{first}");
    assert!(first.contains("Gate 1/3"), "{first}");
    gives_away_none(&p, &first, &follow_ups, "the first screen");

    // Gate 1 passes: one follow-up is drawn and shown, the others are not.
    app.update(Msg::Runner(RunnerMsg::Ready));
    app.update(Msg::Runner(RunnerMsg::Built { ok: true, duration_ms: 200, errors: 0 }));
    app.now_ms = T0 + 3 * MIN;
    app.update(Msg::Runner(RunnerMsg::Finished(Box::new(passing(&p, &[1])), vec![])));
    assert_eq!(app.session.gate, 2);
    let drawn = app.session.path[1];
    assert!([2, 3].contains(&drawn), "{:?}", app.session.path);
    let now = screen(&app);
    assert!(now.contains(&format!("Gate 2: {}", p.gates[drawn - 1].title)), "{now}");
    let hidden: Vec<usize> = follow_ups.iter().copied().filter(|&g| g != drawn).collect();
    gives_away_none(&p, &now, &hidden, "the screen at gate 2");

    // The summary, and the report written at the gate pass.
    app.overlay = Some(Overlay::Summary);
    gives_away_none(&p, &screen(&app), &hidden, "the summary");
    let report = Report::from_session(&app.session, &p, app.now_ms, None);
    assert_eq!(report.path, vec![1, drawn]);
    assert_eq!(report.gates[1].gate, drawn);
    assert_eq!(report.gates[2].gate, 0, "the third position is not drawn yet");
    gives_away_none(&p, &report.to_markdown(), &hidden, "the report");
    gives_away_none(&p, &serde_json::to_string(&report).unwrap(), &hidden, "the report's JSON");

    // A mock draws its path whole before it starts: still nothing ahead
    // is named, in the summary or the report.
    let mut mock = harness::cmd::mock::new_session(&p, vec![1, 3, 5], 15 * MIN, T0);
    mock.gate = 1;
    let mut app = App::new(p.clone(), mock, PathBuf::from("/tmp/tally"), T0);
    app.overlay = Some(Overlay::Summary);
    gives_away_none(&p, &screen(&app), &follow_ups, "a mock's summary");
    let report = Report::from_session(&app.session, &p, T0, None);
    assert_eq!(report.path, vec![1]);
    gives_away_none(&p, &report.to_markdown(), &follow_ups, "a mock's report");
}

#[test]
fn check_judges_the_path_asked_for() {
    let dir = fixture();
    let reference = "problems/tally/reference";
    let out = harness(&dir, &["check", "tally", "--solution", reference, "--path", "1,3,5", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["path"], serde_json::json!([1, 3, 5]));
    let judged: Vec<(u64, u64)> = json["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["gate"].as_u64().unwrap(), g["position"].as_u64().unwrap()))
        .collect();
    assert_eq!(judged, [(1, 1), (3, 2), (5, 3)]);

    // The default: the first path in order.
    let out = harness(&dir, &["check", "tally", "--solution", reference]);
    let said = text(&out);
    assert!(said.contains("path: 1,2,3") && said.contains("result: all gates passed"), "{said}");

    // A gate before what it builds on, and nonsense, are refused plainly.
    let out = harness(&dir, &["check", "tally", "--solution", reference, "--path", "1,4,2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("gate 4 builds on gate 2, which must come before it"), "{}", text(&out));
    let out = harness(&dir, &["check", "tally", "--solution", reference, "--path", "1,x"]);
    assert!(text(&out).contains("`x` is not a gate number"), "{}", text(&out));
}

#[test]
fn audit_names_the_paths_a_mutant_breaks() {
    let project = tally_project();
    let dir = project.path();
    // A gate-3 mutant that also breaks undo (gate 2): on 1,2,3 it fails
    // gate 2 before its own; on 1,3,2 gate 2 comes after it.
    let file = dir.join("problems/tally/problem.toml");
    let mut toml = std::fs::read_to_string(&file).unwrap();
    toml.push_str(
        r#"
[[mutant]]
name = "max_breaks_undo"
gate = 3
mistake = "max starts from 0, and undo forgets to lower the total"
[[mutant.edit]]
from = "self.done.iter().copied().max()"
to = "Some(self.done.iter().copied().fold(0, i64::max)).filter(|_| !self.done.is_empty())"
[[mutant.edit]]
from = '''
        let n = self.done.pop()?;'''
to = '''
        let n = *self.done.last()?;'''
"#,
    );
    std::fs::write(&file, toml).unwrap();
    let out = harness(dir, &["audit", "tally"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("✓ reference") && said.contains("every one of its 4 paths"), "{said}");
    assert!(said.contains("path 1,2,3: mutant max_breaks_undo fails gate 2 before its gate 3"), "{said}");
    assert!(!said.contains("path 1,3,2: mutant max_breaks_undo"), "on 1,3,2 gate 2 comes later:\n{said}");
    assert!(!said.contains("path 1,3,5: mutant max_breaks_undo"), "{said}");
    assert!(!said.contains("passes gate 3"), "caught at gate 3 on every path:\n{said}");
    assert!(said.contains("✓ mutant undo_keeps_total"), "{said}");
    // The reference's gate markers: each set of gates a session can reach
    // (1; 1,2; 1,3; 1,2,3; 1,2,4; 1,3,5) gives a cut that passes them.
    assert!(said.contains("✓ reference cuts") && said.contains("each of the 6 sets of gates"), "{said}");
}

#[test]
fn audit_fails_a_reference_cut_that_drops_a_gate_it_needs() {
    let project = tally_project();
    let dir = project.path();
    // max marked as gate 5's: a session that reached gate 3 but not 5
    // would be shown a reference without it.
    let lib = dir.join("problems/tally/reference/src/lib.rs");
    let original = std::fs::read_to_string(&lib).unwrap();
    let marked = original.replacen("    // @gate 3\n    fn max", "    // @gate 5\n    fn max", 1);
    assert_ne!(marked, original);
    std::fs::write(&lib, marked).unwrap();
    let out = harness(dir, &["audit", "tally"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("✗ reference cuts"), "{said}");
    assert!(said.contains("gates 1,3 (path 1,3,2, first 2): fails gate 3"), "{said}");
    assert!(!said.contains("gates 1,2 (path"), "the cut for 1,2 needs no max:\n{said}");
    // A malformed marker is named by file and line.
    std::fs::write(&lib, original.replacen("    // @end\n    // @gate 4", "    // @gate 4", 1)).unwrap();
    let out = harness(dir, &["audit", "tally"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("reference/src/lib.rs:") && said.contains("has no @end"), "{said}");
}

fn state(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("reports/sessions/tally.json")).unwrap()).unwrap()
}

fn path_of(state: &serde_json::Value) -> Vec<usize> {
    state["path"].as_array().unwrap().iter().map(|g| g.as_u64().unwrap() as usize).collect()
}

/// The session's path once its saved state says `done` of it (the state
/// is saved off the event loop, a moment after the screen changes).
fn saved_path(dir: &Path, done: impl Fn(&serde_json::Value) -> bool) -> Vec<usize> {
    let start = std::time::Instant::now();
    loop {
        let s = std::fs::read_to_string(dir.join("reports/sessions/tally.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
        if let Some(s) = s.filter(|s| done(s)) {
            return path_of(&s);
        }
        assert!(start.elapsed() < Duration::from_secs(10), "the session state never got there");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Saves `src` as the solution, as an editor that renames a file does.
fn save(dir: &Path, src: &str) {
    let lib = dir.join("solutions/tally/src/lib.rs");
    let tmp = dir.join("solutions/tally/src/.lib.rs.tmp");
    std::fs::write(&tmp, src).unwrap();
    std::fs::rename(&tmp, &lib).unwrap();
}

fn quit(pty: &mut common::Pty) {
    pty.writer.write_all(b"q").unwrap();
    pty.writer.flush().unwrap();
    pty.wait_for("Quit?", Duration::from_secs(10));
    pty.writer.write_all(b"y").unwrap();
    pty.writer.flush().unwrap();
    assert!(pty.wait_exit(Duration::from_secs(20)).success());
}

#[test]
fn sessions_draw_unseen_follow_ups_keep_their_path_and_take_a_forced_one() {
    let p = tally();
    let project = tally_project();
    let dir = project.path();
    let reference = std::fs::read_to_string(p.reference_dir().join("src/lib.rs")).unwrap();
    // Gate 1 only: `add` and `total`; the rest stay the contract's defaults.
    let starter = std::fs::read_to_string(p.starter_dir().join("src/lib.rs")).unwrap();
    let gate_1 = starter.replace(
        "pub struct Solution {}\n\nimpl Tally for Solution {\n    fn new() -> Self {\n        Solution {}\n    }\n}",
        "pub struct Solution { sum: i64 }\n\nimpl Tally for Solution {\n    fn new() -> Self { Solution { sum: 0 } }\n    \
         fn add(&mut self, n: i64) -> i64 { self.sum += n; self.sum }\n    fn total(&self) -> i64 { self.sum }\n}",
    );
    assert_ne!(gate_1, starter, "the starter's impl is where the test expects it");

    // A first session passes gate 1 and meets a follow-up.
    let mut first = common::Pty::start(dir, "tally", 24, 80);
    first.wait_for("Gate 1: Running total", Duration::from_secs(120));
    first.wait_for("not_implemented", Duration::from_secs(120));
    save(dir, &gate_1);
    first.wait_for("Gate 2/3", Duration::from_secs(120));
    let path = saved_path(dir, |s| s["gate"] == 2);
    assert_eq!(path.len(), 2, "{path:?}");
    let met = path[1];
    first.wait_for(&format!("Gate 2: {}", p.gates[met - 1].title), Duration::from_secs(10));
    quit(&mut first);

    // Resumed, it keeps its path.
    let mut again = common::Pty::start(dir, "tally", 24, 80);
    again.wait_for(&format!("Gate 2: {}", p.gates[met - 1].title), Duration::from_secs(60));
    assert_eq!(path_of(&state(dir)), path);
    quit(&mut again);

    // `check` judges the session's path so far, and names nothing beyond.
    let out = harness(dir, &["check", "tally", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["path"], serde_json::json!(path), "{}", text(&out));
    assert_eq!(json["gates"].as_array().unwrap().len(), 2);

    // After --fresh, the choice point draws the follow-up not seen yet;
    // the whole reference passes it and the session completes.
    let mut second = common::Pty::spawn(dir, &["start", "tally", "--fresh"], 24, 80);
    second.wait_for("not_implemented", Duration::from_secs(120));
    save(dir, &reference);
    second.wait_for("All 3 gates passed", Duration::from_secs(120));
    let walked = saved_path(dir, |s| s["status"] == "completed");
    assert_eq!(walked.len(), 3);
    assert_ne!(walked[1], met, "the second session drew the follow-up the first had met: {walked:?}");
    assert_eq!(p.check_path(&walked), Ok(()));
    second.writer.write_all(b"q").unwrap();
    second.writer.flush().unwrap();
    assert!(second.wait_exit(Duration::from_secs(20)).success());

    // --path forces one; a path that is none is refused before anything starts.
    let out = harness(dir, &["start", "tally", "--path", "1,5,3"]);
    assert!(text(&out).contains("gate 5 builds on gate 3, which must come before it"), "{}", text(&out));
    let mut forced = common::Pty::spawn(dir, &["start", "tally", "--fresh", "--path", "1,3,5"], 24, 80);
    forced.wait_for("Gate 1: Running total", Duration::from_secs(60));
    forced.wait_for("not_implemented", Duration::from_secs(120));
    assert_eq!(path_of(&state(dir)), vec![1, 3, 5]);
    save(dir, &reference);
    forced.wait_for("All 3 gates passed", Duration::from_secs(120));
    assert_eq!(saved_path(dir, |s| s["status"] == "completed"), vec![1, 3, 5], "a forced path is walked, not drawn");
    forced.writer.write_all(b"q").unwrap();
    forced.writer.flush().unwrap();
    assert!(forced.wait_exit(Duration::from_secs(20)).success());
}
