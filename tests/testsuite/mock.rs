//! A mock interview without a terminal, and the headless review.
//!
//! The scripted mocks drive the TUI's `App` with a mock `Session` through
//! fake times (no waiting: the clock is `now_ms`), perform its effects as
//! the TUI loop does (the report written the same way), and check what
//! ends up on disk. The CLI tests run the real binary: `report --list`,
//! `--markdown` and `--json` on a scratch reports folder holding a corrupt
//! file, and `mock` without a terminal.

use crate::common;

use std::path::{Path, PathBuf};

use common::{MIN, T0, evaluation, failing_case, harness, scratch, text, versioned_kv};
use harness::session::report::{self, Report};
use harness::session::state::{Mode, SourceFile, Status};
use harness::ui::practice::app::{App, Effect, Msg, Overlay, RunnerMsg};
use harness::ui::practice::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

fn key(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

fn screen(app: &App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(110, 34)).unwrap();
    terminal.draw(|f| view::draw(f, app)).unwrap();
    terminal.backend().to_string()
}

/// A judged run: (gate, passed, total) each, with one failing case in
/// every gate that does not pass.
fn finished(gates: &[(usize, usize, usize)], source: &str) -> Msg {
    let failures =
        gates.iter().filter(|&&(_, passed, total)| passed < total).map(|&(gate, ..)| failing_case(gate, "")).collect();
    let sources = vec![SourceFile { path: "src/lib.rs".into(), content: source.into() }];
    Msg::Runner(RunnerMsg::Finished(Box::new(evaluation(gates, failures)), sources))
}

/// The TUI loop's side of the effects that touch the disk: state and
/// reports, through the loop's own `Writes` (without its saving thread,
/// so the files are there when this returns).
fn perform(app: &mut App, reports: &Path, effects: Vec<Effect>) -> Vec<Effect> {
    let mut writes = harness::ui::practice::Writes::synchronous();
    for e in &effects {
        writes.ask(e);
    }
    assert!(writes.flush(reports, app), "a write failed: {:?}", app.notice.as_ref().map(|n| &n.text));
    effects
}

fn step(app: &mut App, reports: &Path, at_min: u64, msg: Msg) -> Vec<Effect> {
    app.now_ms = T0 + at_min * MIN;
    let fx = app.update(msg);
    perform(app, reports, fx)
}

/// A 60-minute mock of versioned_kv (pace targets 8:00, 21:20, 40:00,
/// 60:00), the solution judged at the given fake times.
fn mock_app() -> App {
    let p = versioned_kv();
    let session = harness::cmd::mock::new_session(&p, p.default_path(), 60 * MIN, T0);
    App::new(p, session, PathBuf::from("/home/you/harness/solutions/mock/versioned_kv"), T0)
}

fn load(reports: &Path) -> Report {
    let (mut all, broken) = report::load_all(reports);
    assert!(broken.is_empty(), "{broken:?}");
    assert_eq!(all.len(), 1);
    all.pop().unwrap()
}

/// Gate 1 at 6:00, gate 2 failing one case at 25:00, time up at 60:00.
fn run_to_time_up(app: &mut App, reports: &Path) {
    assert_eq!(step(app, reports, 0, Msg::Runner(RunnerMsg::Ready)), vec![Effect::Run { path: vec![1] }]);
    let fx = step(app, reports, 6, finished(&[(1, 27, 27)], "// gate 1\n"));
    assert!(fx.contains(&Effect::Report), "a gate pass writes the report");
    step(app, reports, 25, finished(&[(1, 27, 27), (2, 20, 36)], "// gate 1\n// working on gate 2\n"));
    assert_eq!(app.session.gate, 2);
    let fx = step(app, reports, 60, Msg::Tick);
    assert!(fx.contains(&Effect::Report));
}

#[test]
fn a_scripted_mock_runs_to_time_up_and_its_report_is_a_scored_mock() {
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path();
    let mut app = mock_app();
    app.now_ms = T0 + 5 * MIN;
    let top = screen(&app);
    assert!(top.contains("mock interview"), "{top}");
    assert!(top.contains("on pace (03:00 to gate target)"), "{top}");

    assert_eq!(step(&mut app, reports, 0, Msg::Runner(RunnerMsg::Ready)), vec![Effect::Run { path: vec![1] }]);
    step(&mut app, reports, 6, finished(&[(1, 27, 27)], "// gate 1\n"));
    step(&mut app, reports, 25, finished(&[(1, 27, 27), (2, 20, 36)], "// gate 2 next\n"));
    let mid = screen(&app);
    assert!(mid.contains("behind pace by 03:40"), "gate 2's target is 21:20:\n{mid}");

    // No hints, no peeking past the unlocked gate, no pause or overtime.
    assert!(step(&mut app, reports, 26, key('h')).is_empty());
    assert_eq!(app.session.hints_used(2), 0);
    assert_eq!(app.notice.as_ref().map(|n| n.text.as_str()), Some("no hints in a mock interview"));
    for _ in 0..3 {
        step(&mut app, reports, 26, Msg::Key(KeyEvent::new(KeyCode::Right, KeyModifiers::NONE)));
    }
    assert_eq!(app.statement_gate, 2, "gate 3's statement stays locked");

    step(&mut app, reports, 60, Msg::Tick);
    assert_eq!(app.session.status, Status::TimeUp);
    assert_eq!(app.overlay, Some(Overlay::Summary));
    assert!(step(&mut app, reports, 61, key('o')).is_empty(), "a mock has no overtime");
    let summary = screen(&app);
    assert!(summary.contains("Score 31.9"), "the score is explained where the mock ends:\n{summary}");

    let r = load(reports);
    assert_eq!(r.id, app.session.id);
    assert_eq!((r.mode, r.status, r.in_progress), (Mode::Mock, Status::TimeUp, false));
    assert_eq!(r.gates_passed, 1);
    let score = r.score.as_ref().expect("a mock is scored");
    assert_eq!(score.total, 31.9);
    assert_eq!(
        score.breakdown,
        ["1 of 4 gates passed × 25.0: 25.0", "gate 2 in progress, 20/36 cases passing × 12.5: 6.9"]
    );
    let pace: Vec<Option<u64>> = r.gates.iter().map(|g| g.pace_target_ms).collect();
    assert_eq!(pace, [Some(8 * MIN), Some(21 * MIN + 20_000), Some(40 * MIN), Some(60 * MIN)]);
    assert_eq!(r.gates[0].time_to_pass_ms, Some(6 * MIN));
    assert!(r.gates[0].snapshot.is_some());
    assert_eq!(r.gates.iter().map(|g| g.hints_used).sum::<u32>(), 0);
    let failures = &r.last_run.as_ref().unwrap().failures;
    assert_eq!(failures.len(), 1);
    assert!(failures[0].diff.iter().any(|l| l.starts_with("- get_at")), "{:?}", failures[0].diff);
    let json = std::fs::read_to_string(reports.join(format!("{}.json", r.id))).unwrap();
    assert!(json.contains("\"mode\": \"mock\""), "{json}");
    let md = std::fs::read_to_string(reports.join(format!("{}.md", r.id))).unwrap();
    assert!(md.contains("- mock session") && md.contains("- score: 31.9"), "{md}");
    assert!(
        md.contains("| by 08:00 |") && !md.contains("12 min"),
        "a mock shows its own pace, not practice minutes: {md}"
    );
    let metrics = r.metrics.as_ref().expect("the report carries its numbers");
    let g1 = &metrics.gates[0];
    assert_eq!(g1.shape, Some(harness::session::metrics::Shape::First));
    assert_eq!(g1.duration_ms, 6 * MIN);
    // This script's "solution" is one comment: every code line of the starter is gone.
    assert_eq!((g1.code_lines, g1.added, g1.changed), (Some(0), 0, 0), "{g1:?}");
    assert!(g1.removed > 5, "{g1:?}");
    assert_eq!(metrics.gates[1].shape, None, "gate 2 did not pass");
    assert!(json.contains("\"metrics\"") && json.contains("\"lines_per_10_min\""), "{json}");
    assert!(md.contains("## Numbers") && md.contains("| 1 | +0 ~0 −") && md.contains("| first |"), "{md}");

    // The mock's state never replaces a practice session of the problem.
    assert!(report::load_state(reports, "versioned_kv").unwrap().is_none());
    assert!(report::mock_state_path(reports, "versioned_kv").is_file());
}

#[test]
fn quitting_a_mock_asks_first_and_records_it_as_abandoned() {
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path();
    let mut app = mock_app();
    step(&mut app, reports, 0, Msg::Runner(RunnerMsg::Ready));
    step(&mut app, reports, 6, finished(&[(1, 27, 27)], "// gate 1\n"));
    assert!(step(&mut app, reports, 7, key('q')).is_empty());
    assert_eq!(app.overlay, Some(Overlay::ConfirmQuit));
    assert!(screen(&app).contains("quitting records it as abandoned"));
    step(&mut app, reports, 7, key('n'));
    assert_eq!(app.session.status, Status::Running, "no: the mock goes on");
    step(&mut app, reports, 8, key('q'));
    let fx = step(&mut app, reports, 8, key('y'));
    assert_eq!(fx, vec![Effect::Cancel, Effect::Persist, Effect::Report, Effect::Quit]);
    assert!(!app.session.resumable());
    let r = load(reports);
    assert_eq!((r.mode, r.status), (Mode::Mock, Status::Abandoned));
    assert_eq!(r.elapsed_ms, 8 * MIN);
    assert_eq!(r.score.unwrap().total, 25.0);
}

#[test]
fn finishing_early_earns_the_time_bonus() {
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path();
    let mut app = mock_app();
    step(&mut app, reports, 0, Msg::Runner(RunnerMsg::Ready));
    for (gate, at) in [(1, 5), (2, 12), (3, 20), (4, 30)] {
        let all: Vec<(usize, usize, usize)> = (1..=gate).map(|g| (g, 10, 10)).collect();
        step(&mut app, reports, at, finished(&all, &format!("// gate {gate}\n")));
    }
    assert_eq!(app.session.status, Status::Completed);
    let r = load(reports);
    let score = r.score.unwrap();
    assert_eq!(score.total, 105.0);
    assert_eq!(score.breakdown[1], "finished with 50% of the budget left: +5.0");
    assert_eq!(r.gates.iter().filter(|g| g.snapshot.is_some()).count(), 4);
}

#[test]
fn the_help_of_a_mock_offers_no_hints_or_overtime() {
    let mut app = mock_app();
    app.update(key('?'));
    let help = screen(&app);
    assert!(!help.contains("reveal the next hint"), "{help}");
    assert!(!help.contains("keep going in overtime"), "{help}");
    assert!(help.contains("the mock is recorded as abandoned"), "{help}");
}

// ---------------------------------------------------------------- the CLI

/// Two reports (a mock that ran out of time, an earlier practice session)
/// and a corrupt file, in `<project>/reports`.
fn reports_with_a_corrupt_file(project: &Path) -> (Report, Report) {
    let reports = project.join("reports");
    let mut app = mock_app();
    app.session.id = "20261130T005320Z-versioned_kv".into();
    run_to_time_up(&mut app, &reports);
    let mock = load(&reports);

    let p = versioned_kv();
    let mut s =
        harness::session::state::Session::new("versioned_kv", Mode::Practice, p.path_length, 90 * MIN, T0 - 60 * MIN);
    s.path = p.default_path();
    s.id = "20261129T235320Z-versioned_kv".into();
    s.on_quit(T0 - 30 * MIN);
    let practice = Report::from_session(&s, &p, T0 - 30 * MIN, None);
    report::write(&reports, &practice).unwrap();
    std::fs::write(reports.join("20261201T000000Z-lru_cache.json"), "{ \"format_version\": 1, ").unwrap();
    // Session state is not a report.
    report::save_state(&reports, &s).unwrap();
    (mock, practice)
}

#[test]
fn report_list_markdown_and_json_skip_and_name_a_corrupt_file() {
    let project = scratch(true);
    let dir = project.path();
    let (mock, practice) = reports_with_a_corrupt_file(dir);

    let out = harness(dir, &["report", "--list"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "a header and two sessions:\n{stdout}");
    assert!(lines[0].starts_with("date") && lines[0].contains("score"), "{stdout}");
    assert!(lines[1].contains("mock") && lines[1].contains("time up") && lines[1].contains("31.9"), "{stdout}");
    assert!(lines[1].ends_with(&mock.id), "newest first:\n{stdout}");
    assert!(lines[2].contains("practice") && lines[2].ends_with(&practice.id), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("skipped") && stderr.contains("20261201T000000Z-lru_cache.json"), "{stderr}");

    let out = harness(dir, &["report", "--list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["id"], mock.id.as_str());
    assert_eq!(list[0]["mode"], "mock");
    assert_eq!(list[0]["status"], "time_up");
    assert_eq!(list[0]["score"], 31.9);
    assert_eq!(list[1]["score"], serde_json::Value::Null);

    let out = harness(dir, &["report", &mock.id, "--markdown"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let md = String::from_utf8_lossy(&out.stdout);
    for section in [
        "# versioned_kv — Versioned key-value store",
        "- score: 31.9",
        "## Timeline",
        "## Time per gate",
        "## Progress on versioned_kv",
        "## Follow-up questions",
    ] {
        assert!(md.contains(section), "missing {section:?}:\n{md}");
    }
    assert!(md.find("## Timeline") < md.find("## Follow-up questions"), "follow-ups come last");
    assert!(md.contains("| 1 Store and read | 06:00 | 08:00 | 02:00 under | 06:00 | 08:00 |"), "{md}");

    // A unique prefix is enough; the JSON is the report itself.
    let out = harness(dir, &["report", "20261130", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let back: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(back, mock);

    let out = harness(dir, &["report", "2026", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("matches 2 reports"), "{}", text(&out));
    let out = harness(dir, &["report", "nope", "--markdown"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("no report `nope`"), "{}", text(&out));
    let out = harness(dir, &["report", "20261201T000000Z-lru_cache", "--json"]);
    assert_eq!(out.status.code(), Some(2), "a corrupt report is named, not shown");
    assert!(text(&out).contains("20261201T000000Z-lru_cache.json: line 1"), "{}", text(&out));
    // Without an id, --markdown prints the newest session's report.
    let out = harness(dir, &["report", "--markdown"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let list = harness(dir, &["report", "--list", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let newest = listed[0]["id"].as_str().unwrap().to_string();
    let by_id = harness(dir, &["report", &newest, "--markdown"]);
    assert_eq!(out.stdout, by_id.stdout, "the newest report is {newest}");
    // An unknown id is named as such before the terminal is asked for.
    let out = harness(dir, &["report", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("no report `nope`"), "{}", text(&out));
    let out = harness(dir, &["report"]);
    assert_eq!(out.status.code(), Some(2), "the review TUI needs a terminal");
    assert!(text(&out).contains("harness report --list"), "{}", text(&out));
}

#[test]
fn report_list_in_a_project_without_reports() {
    let project = scratch(true);
    let out = harness(project.path(), &["report", "--list"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("no reports in "));
    let out = harness(project.path(), &["report", "--list", "--json"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
}

#[test]
fn mock_without_a_terminal_exits_2_before_drawing_or_naming_anything() {
    let project = scratch(true);
    let dir = project.path();
    let out = harness(dir, &["mock"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(out.stdout.is_empty(), "nothing printed, least of all the problem: {}", text(&out));
    assert!(text(&out).contains("harness check <problem>"), "{}", text(&out));
    assert!(!dir.join("solutions").exists(), "nothing created");

    let out = harness(dir, &["mock", "--problem", "no_such_problem"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("no problem `no_such_problem`"), "{}", text(&out));
    let out = harness(dir, &["mock", "--minutes", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("--minutes must be at least 1"), "{}", text(&out));
}

fn screen_at(app: &App, w: u16, h: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| view::draw(f, app)).unwrap();
    terminal.backend().to_string()
}

#[test]
fn snapshot_mock_at_80x24_and_the_minimum_size() {
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path();
    let mut app = mock_app();
    app.intro = vec!["your solution: solutions/mock/versioned_kv/src/lib.rs (every save is judged)".into()];
    let first = screen_at(&app, 80, 24);
    assert!(first.contains("solutions/mock/versioned_kv/src/lib.rs"), "the mock says where to work:\n{first}");
    insta::assert_snapshot!("mock_80x24_first_screen", first);
    step(&mut app, reports, 0, Msg::Runner(RunnerMsg::Ready));
    step(&mut app, reports, 6, finished(&[(1, 27, 27)], "// gate 1\n"));
    insta::assert_snapshot!("mock_80x24_passing", screen_at(&app, 80, 24));
    step(&mut app, reports, 25, finished(&[(1, 27, 27), (2, 20, 36)], "// gate 2 next\n"));
    let failing = screen_at(&app, 80, 24);
    assert!(failing.contains("behind pace") && failing.contains("20/36"), "{failing}");
    insta::assert_snapshot!("mock_80x24_failing", failing);
    let (w, h) = (view::MIN_WIDTH, view::MIN_HEIGHT);
    let small = screen_at(&app, w, h);
    assert!(small.contains("behind pace") && small.contains("20/36"), "{small}");
    insta::assert_snapshot!("mock_min_failing", small);
    step(&mut app, reports, 60, Msg::Tick);
    app.report_path = Some(PathBuf::from("/home/you/harness/reports/20261130T005320Z-versioned_kv.json"));
    let summary = screen_at(&app, 80, 24);
    assert!(summary.contains("Score 31.9 of 100"), "{summary}");
    insta::assert_snapshot!("mock_80x24_summary", summary);
}

#[test]
fn snapshot_mock_ready_screen() {
    let ready = harness::ui::ready::Ready::new(90, false);
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|f| harness::ui::ready::draw(f, &ready)).unwrap();
    insta::assert_snapshot!("mock_ready_80x24", terminal.backend().to_string());
}
