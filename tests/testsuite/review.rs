//! The review TUI without a terminal: reports built from scripted sessions
//! (fake times, real problems), keys fed to the `Review` state, and the
//! screens drawn on ratatui's `TestBackend` and compared with committed
//! insta snapshots.

use std::path::PathBuf;

use harness::judge::verdict::Verdict;
use harness::problem::model::Problem;
use harness::session::report::Report;
use harness::session::score::score_of;
use harness::session::state::{FailureSummary, GateOutcome, Mode, RunSummary, Session, SourceFile};
use harness::ui::review::app::{Action, Review, Screen, Tab};
use harness::ui::review::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// 2026-11-29T08:53:20Z.
const T0: u64 = 1_796_000_000_000;
const MIN: u64 = 60_000;
const DAY: u64 = 24 * 60 * MIN;

fn problem(id: &str) -> Problem {
    Problem::load(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("problems"),
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("contract"),
        id,
    )
    .unwrap()
}

fn outcomes(gates: &[(usize, usize)]) -> Vec<GateOutcome> {
    gates.iter().enumerate().map(|(i, &(passed, total))| GateOutcome { gate: i + 1, passed, total }).collect()
}

fn lib_rs(body: &str) -> Vec<SourceFile> {
    vec![
        SourceFile { path: "Cargo.toml".into(), content: "[package]\nname = \"versioned_kv_solution\"\n".into() },
        SourceFile { path: "src/lib.rs".into(), content: body.into() },
    ]
}

const GATE_1_SOURCE: &str = "use std::collections::HashMap;

pub struct Store {
    data: HashMap<String, i64>,
    version: u64,
}

impl Store {
    pub fn put(&mut self, key: String, value: i64) -> u64 {
        self.version += 1;
        self.data.insert(key, value);
        self.version
    }

    pub fn get(&self, key: String) -> Option<i64> {
        self.data.get(&key).copied()
    }
}
";

const GATE_2_SOURCE: &str = "use std::collections::HashMap;

pub struct Store {
    data: HashMap<String, Vec<(u64, Option<i64>)>>,
    version: u64,
}

impl Store {
    pub fn put(&mut self, key: String, value: i64) -> u64 {
        self.version += 1;
        self.data.entry(key).or_default().push((self.version, Some(value)));
        self.version
    }

    pub fn get(&self, key: String) -> Option<i64> {
        self.get_at(key, self.version)
    }
}
";

/// A 60-minute mock of versioned_kv: a compile error, gates 1 and 2, a
/// regression, gate 3 failing one case when time runs out.
fn mock_report() -> Report {
    let p = problem("versioned_kv");
    let start = T0 + 2 * DAY;
    let at = |m: u64| start + m * MIN;
    let mut s = harness::cmd::mock::new_session(&p, p.default_path(), 60 * MIN, start);
    s.on_save(at(2));
    s.on_build(at(2), false, 300, 2);
    s.on_save(at(4));
    s.on_build(at(4), true, 250, 0);
    s.on_run(at(4), &outcomes(&[(20, 27)]));
    s.on_save(at(9));
    s.on_build(at(9), true, 240, 0);
    s.on_run(at(9), &outcomes(&[(27, 27)]));
    s.snapshots.insert(1, lib_rs(GATE_1_SOURCE));
    s.on_save(at(14));
    s.on_build(at(14), true, 240, 0);
    s.on_run(at(14), &outcomes(&[(27, 27), (30, 36)]));
    s.on_save(at(23));
    s.on_build(at(23), true, 240, 0);
    s.on_run(at(23), &outcomes(&[(27, 27), (36, 36)]));
    s.snapshots.insert(2, lib_rs(GATE_2_SOURCE));
    s.on_save(at(30));
    s.on_build(at(30), true, 240, 0);
    s.on_run(at(30), &outcomes(&[(26, 27), (36, 36), (0, 40)]));
    s.on_save(at(41));
    s.on_build(at(41), true, 240, 0);
    s.on_run(at(41), &outcomes(&[(27, 27), (36, 36), (39, 40)]));
    s.last_run = Some(RunSummary {
        build_ok: true,
        build_errors: vec![],
        gates: vec![(1, 27, 27), (2, 36, 36), (3, 39, 40)],
        failures: vec![FailureSummary {
            gate: 3,
            case: "compaction keeps what a live snapshot sees".into(),
            verdict: Verdict::WrongAnswer,
            message: "`get_at(\"a\", 1)` expected 10, got None".into(),
            diff: vec![
                "  put(\"a\", 10) -> 1".into(),
                "  snapshot() -> 0".into(),
                "  compact(2) -> ()".into(),
                "- get_at(\"a\", 1) -> 10".into(),
                "+ get_at(\"a\", 1) -> None".into(),
            ],
            ops: vec![],
            shrunk_from: None,
        }],
    });
    s.on_time_up(at(60));
    Report::from_session(&s, &p, at(60), score_of(&s))
}

/// Earlier practice of versioned_kv: quit after gate 2, still resumable.
fn practice_report() -> Report {
    let p = problem("versioned_kv");
    let at = |m: u64| T0 + m * MIN;
    let mut s = Session::new("versioned_kv", Mode::Practice, p.path_length, 90 * MIN, T0);
    s.path = p.default_path();
    s.on_hint(at(3), 2);
    s.on_run(at(14), &outcomes(&[(27, 27)]));
    s.on_run(at(38), &outcomes(&[(27, 27), (36, 36)]));
    s.on_quit(at(50));
    Report::from_session(&s, &p, at(50), None)
}

/// Later practice of versioned_kv: every gate.
fn completed_report() -> Report {
    let p = problem("versioned_kv");
    let start = T0 + 3 * DAY;
    let at = |m: u64| start + m * MIN;
    let mut s = Session::new("versioned_kv", Mode::Practice, p.path_length, 90 * MIN, start);
    s.path = p.default_path();
    for (g, m) in [(1, 7), (2, 18), (3, 35), (4, 52)] {
        let all: Vec<(usize, usize)> = (0..g).map(|_| (5, 5)).collect();
        s.on_run(at(m), &outcomes(&all));
    }
    s.last_run = Some(RunSummary {
        build_ok: true,
        gates: vec![(1, 5, 5), (2, 5, 5), (3, 5, 5), (4, 5, 5)],
        ..Default::default()
    });
    Report::from_session(&s, &p, at(52), None)
}

/// A mock of lru_cache abandoned after five minutes.
fn abandoned_report() -> Report {
    let p = problem("lru_cache");
    let start = T0 + DAY;
    let mut s = harness::cmd::mock::new_session(&p, p.default_path(), 90 * MIN, start);
    s.on_quit(start + 5 * MIN);
    Report::from_session(&s, &p, start + 5 * MIN, score_of(&s))
}

fn review() -> Review {
    Review::new(
        vec![practice_report(), mock_report(), abandoned_report(), completed_report()],
        vec![(
            PathBuf::from("/home/you/harness/reports/20261128T090000Z-rate_limiter.json"),
            "line 1, column 2: expected value at line 1 column 2".into(),
        )],
    )
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn press(app: &mut Review, keys: &[KeyCode]) {
    for &k in keys {
        assert_eq!(app.on_key(key(k)), Action::Continue, "{k:?}");
    }
}

fn screen(app: &Review, w: u16, h: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| view::draw(f, app)).unwrap();
    terminal.backend().to_string()
}

/// The review opened on the mock (second newest).
fn on_mock() -> Review {
    let mut app = review();
    press(&mut app, &[KeyCode::Down, KeyCode::Enter]);
    assert_eq!(app.current().unwrap().mode, Mode::Mock);
    app
}

#[test]
fn the_list_is_newest_first_and_enter_opens_esc_returns_q_quits() {
    let mut app = review();
    let problems: Vec<&str> = app.reports.iter().map(|r| r.problem.as_str()).collect();
    assert_eq!(problems, ["versioned_kv", "versioned_kv", "lru_cache", "versioned_kv"]);
    assert_eq!(app.reports[0].gates_passed, 4);
    press(&mut app, &[KeyCode::Down, KeyCode::Down, KeyCode::Down, KeyCode::Down]);
    assert_eq!(app.selected, 3, "stops at the last");
    press(&mut app, &[KeyCode::Enter]);
    assert_eq!(app.screen, Screen::Detail);
    press(&mut app, &[KeyCode::Tab, KeyCode::Tab]);
    assert_eq!(app.tab, Tab::Code);
    press(&mut app, &[KeyCode::Esc]);
    assert_eq!(app.screen, Screen::List);
    assert_eq!(app.on_key(key(KeyCode::Char('q'))), Action::Quit);
}

#[test]
fn answers_stay_hidden_until_revealed_and_hide_again_on_reopening() {
    let mut app = on_mock();
    press(&mut app, &[KeyCode::Char('4')]);
    let followups = app.followups();
    assert!(followups.iter().all(|(gate, _)| *gate <= 3), "only the gates the session reached");
    let (_, first) = followups[0];
    let answer_start: String = first.answer.chars().take(40).collect();
    let text = screen(&app, 100, 40);
    assert!(!text.contains(&answer_start), "hidden at first:\n{text}");
    press(&mut app, &[KeyCode::Char(' ')]);
    assert!(screen(&app, 100, 40).contains(&answer_start));
    press(&mut app, &[KeyCode::Esc, KeyCode::Enter, KeyCode::Char('4')]);
    assert!(!screen(&app, 100, 40).contains(&answer_start), "a new review starts hidden");
}

#[test]
fn the_code_tab_steps_through_snapshots() {
    let mut app = on_mock();
    press(&mut app, &[KeyCode::Char('3')]);
    assert_eq!(app.code_index, 1, "the latest snapshot first");
    let text = screen(&app, 100, 30);
    assert!(text.contains("What changed from gate 1 to gate 2"), "{text}");
    press(&mut app, &[KeyCode::Left]);
    assert!(screen(&app, 100, 30).contains("The solution when gate 1 passed"));
    press(&mut app, &[KeyCode::Right, KeyCode::Char('d')]);
    assert!(screen(&app, 100, 30).contains("The solution when gate 2 passed"));
}

#[test]
fn progress_switches_between_problems() {
    let mut app = review();
    press(&mut app, &[KeyCode::Char('p')]);
    assert_eq!((app.screen, app.progress_problem.as_str()), (Screen::Progress, "versioned_kv"));
    press(&mut app, &[KeyCode::Left]);
    assert_eq!(app.progress_problem, "lru_cache");
    press(&mut app, &[KeyCode::Left, KeyCode::Esc]);
    assert_eq!(app.progress_problem, "lru_cache", "no problem before the first");
    assert_eq!(app.screen, Screen::List);
}

#[test]
fn snapshot_list() {
    insta::assert_snapshot!("list", screen(&review(), 100, 20));
}

#[test]
fn snapshot_detail_overview() {
    insta::assert_snapshot!("overview", screen(&on_mock(), 110, 42));
}

#[test]
fn snapshot_detail_failures() {
    let mut app = on_mock();
    press(&mut app, &[KeyCode::Char('2')]);
    insta::assert_snapshot!("failures", screen(&app, 100, 24));
}

#[test]
fn snapshot_code_diff_between_gates() {
    let mut app = on_mock();
    press(&mut app, &[KeyCode::Char('3')]);
    insta::assert_snapshot!("code_diff", screen(&app, 100, 30));
}

#[test]
fn snapshot_followups_hidden_then_revealed() {
    let mut app = on_mock();
    press(&mut app, &[KeyCode::Char('4')]);
    insta::assert_snapshot!("followups_hidden", screen(&app, 100, 30));
    press(&mut app, &[KeyCode::Down, KeyCode::Char(' ')]);
    insta::assert_snapshot!("followups_revealed", screen(&app, 100, 30));
}

#[test]
fn snapshot_progress() {
    let mut app = review();
    press(&mut app, &[KeyCode::Char('p')]);
    insta::assert_snapshot!("progress", screen(&app, 100, 34));
}

#[test]
fn snapshot_practice_overview_with_hints_and_no_score() {
    let mut app = review();
    press(&mut app, &[KeyCode::End, KeyCode::Enter]);
    assert_eq!(app.current().unwrap().mode, Mode::Practice);
    insta::assert_snapshot!("practice_overview", screen(&app, 100, 34));
}

#[test]
fn empty_and_too_small() {
    let app = Review::new(vec![], vec![]);
    assert!(screen(&app, 80, 20).contains("No reports yet"));
    insta::assert_snapshot!("review_too_small", screen(&review(), 40, 10));
}

#[test]
fn snapshot_review_at_80x24_and_the_minimum_size() {
    let (w, h) = (view::MIN_WIDTH, view::MIN_HEIGHT);
    insta::assert_snapshot!("review_80x24_list", screen(&review(), 80, 24));
    insta::assert_snapshot!("review_min_list", screen(&review(), w, h));
    // The mock has a failing case; the completed practice has none.
    let mut app = on_mock();
    insta::assert_snapshot!("review_80x24_overview", screen(&app, 80, 24));
    press(&mut app, &[KeyCode::Char('2')]);
    let failing = screen(&app, 80, 24);
    assert!(failing.contains("get_at(\"a\", 1) -> None"), "{failing}");
    insta::assert_snapshot!("review_80x24_failures", failing);
    insta::assert_snapshot!("review_min_failures", screen(&app, w, h));
    let mut done = review();
    press(&mut done, &[KeyCode::Enter, KeyCode::Char('2')]);
    let clean = screen(&done, 80, 24);
    insta::assert_snapshot!("review_80x24_no_failures", clean);
    insta::assert_snapshot!("review_min_overview_no_failures", screen(&done, w, h));
}

/// The mock with a reference kept for gates 1 and 1,2 (written by hand, so
/// the screen does not follow edits of the real reference).
fn with_reference() -> Review {
    let mut app = on_mock();
    let r = &mut app.reports[app.selected];
    r.reference = vec![
        harness::session::report::ReferenceCut { position: 1, gates: vec![1], source: GATE_1_SOURCE.into() },
        harness::session::report::ReferenceCut {
            position: 2,
            gates: vec![1, 2],
            source: GATE_2_SOURCE.replace("self.get_at(key, self.version)", "self.data.get(&key)?.last()?.1"),
        },
    ];
    app
}

#[test]
fn the_reference_tab_shows_the_reference_then_each_gate_against_it() {
    let mut app = with_reference();
    press(&mut app, &[KeyCode::Char('5')]);
    assert_eq!(app.tab, Tab::Reference);
    let text = screen(&app, 100, 30);
    assert!(text.contains("The reference solution of gates 1, 2"), "{text}");
    assert!(text.contains("yours at gate 1") && text.contains("yours at gate 2"), "{text}");
    insta::assert_snapshot!("reference_whole", text);
    press(&mut app, &[KeyCode::Right]);
    assert!(screen(&app, 100, 30).contains("The same source as the reference."), "gate 1 is the reference's own");
    press(&mut app, &[KeyCode::Right]);
    let text = screen(&app, 100, 30);
    assert!(text.contains("Yours at gate 2 against the reference"), "{text}");
    let line_of = |needle: &str| text.lines().find(|l| l.contains(needle)).unwrap_or_default().to_string();
    assert!(line_of("self.data.get(&key)?.last()?.1").contains("│-"), "the reference's line:\n{text}");
    assert!(line_of("self.get_at(key, self.version)").contains("│+"), "the candidate's line:\n{text}");
    press(&mut app, &[KeyCode::Right]);
    assert_eq!(app.reference_index, 2, "no entry past the last");
    // The Markdown has the same.
    let md = harness::ui::review::text::markdown(app.current().unwrap(), &app.reports);
    assert!(md.contains("## The reference solution") && md.contains("(1, 2)"), "{md}");
    assert!(
        md.contains("### Yours at gate 2 against the reference of its gates (+1 yours, −1 the reference's)"),
        "{md}"
    );
}

#[test]
fn a_session_that_can_go_on_shows_no_reference() {
    let mut app = review();
    // The oldest is the practice session quit after gate 2.
    press(&mut app, &[KeyCode::End, KeyCode::Enter, KeyCode::Char('5')]);
    assert!(app.current().unwrap().in_progress);
    assert!(app.current().unwrap().reference.is_empty());
    assert!(screen(&app, 100, 20).contains("shows once the session is over"));
}

#[test]
fn a_finished_session_keeps_the_reference_cut_to_the_gates_it_reached() {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/project/problems");
    let p = Problem::load(&fixture, &fixture.join("../../../../contract"), "tally").unwrap();
    let at = |m: u64| T0 + m * MIN;
    let mut s = Session::new("tally", Mode::Practice, p.path_length, 30 * MIN, T0);
    s.path = vec![1, 3, 5];
    s.on_run(at(5), &outcomes(&[(1, 1)]));
    s.snapshots.insert(1, lib_rs("// gate 1\n"));
    let quit = Report::from_session(&s, &p, at(6), None);
    assert!(quit.reference.is_empty(), "not while the session can go on");
    s.on_time_up(at(30));
    let r = Report::from_session(&s, &p, at(30), None);
    let gates: Vec<&[usize]> = r.reference.iter().map(|c| c.gates.as_slice()).collect();
    assert_eq!(gates, [&[1][..], &[1, 3]], "one cut per position reached");
    // The fixture declares its contract (every op) in its reference: look
    // at the solution's own code.
    let own = |c: &harness::session::report::ReferenceCut| {
        c.source.split("impl Tally for Solution").nth(1).unwrap().to_string()
    };
    let (first, second) = (own(&r.reference[0]), own(&r.reference[1]));
    assert!(first.contains("fn add") && !first.contains("fn max") && !first.contains("undone"), "{first}");
    assert!(second.contains("fn max") && !second.contains("fn undo") && !second.contains("fn min"), "{second}");
    assert!(!r.reference[1].source.contains("@gate") && !r.reference[1].source.contains("//~"), "no marker is left");
    // The JSON keeps it, and reads back.
    let back: Report = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(back.reference, r.reference);
}
