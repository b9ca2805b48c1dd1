//! The practice TUI without a terminal: the session logic through
//! `App::update`, and the main screens drawn on ratatui's `TestBackend`
//! and compared with committed insta snapshots.

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use common::{MIN, T0, evaluation, failing_case, versioned_kv};
use harness::judge::evaluate::BuildInfo;
use harness::session::state::{Mode, Session, Status};
use harness::ui::practice::app::{App, Effect, Msg, Overlay, Runner, RunnerMsg};
use harness::ui::practice::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

fn app() -> App {
    let p = versioned_kv();
    let mut session = Session::new("versioned_kv", Mode::Practice, p.path_length, 90 * MIN, T0);
    session.path = p.default_path();
    App::new(p, session, PathBuf::from("/home/you/harness/solutions/versioned_kv"), T0)
}

fn key(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| view::draw(f, app)).unwrap();
    terminal.backend().to_string()
}

/// Brings the app to the point where gate 1 passed and gate 2 is judged.
fn at_gate_2(app: &mut App) {
    app.update(Msg::Runner(RunnerMsg::Ready));
    app.update(Msg::Runner(RunnerMsg::Built { ok: true, duration_ms: 200, errors: 0 }));
    app.now_ms = T0 + 11 * MIN;
    app.update(Msg::Runner(RunnerMsg::Finished(Box::new(evaluation(&[(1, 27, 27)], vec![])), vec![])));
}

#[test]
fn a_save_during_a_run_cancels_it_and_queues_exactly_one_rerun() {
    let mut app = app();
    assert_eq!(app.update(Msg::Runner(RunnerMsg::Ready)), vec![Effect::Run { path: vec![1] }]);
    assert!(app.busy());
    assert_eq!(app.update(Msg::Changed), vec![Effect::Persist, Effect::Cancel]);
    assert_eq!(app.update(Msg::Changed), vec![Effect::Persist, Effect::Cancel]);
    assert!(app.rerun_queued);
    assert_eq!(app.update(Msg::Runner(RunnerMsg::Cancelled)), vec![Effect::Run { path: vec![1] }]);
    assert!(!app.rerun_queued, "two saves, one rerun");
}

#[test]
fn passing_a_gate_records_the_split_unlocks_the_next_and_judges_it() {
    let mut app = app();
    app.update(Msg::Runner(RunnerMsg::Ready));
    app.now_ms = T0 + 11 * MIN;
    let fx = app.update(Msg::Runner(RunnerMsg::Finished(Box::new(evaluation(&[(1, 27, 27)], vec![])), vec![])));
    assert_eq!(fx, vec![Effect::Persist, Effect::Report, Effect::Run { path: vec![1, 2] }]);
    assert_eq!(app.session.gate, 2);
    assert_eq!(app.statement_gate, 2);
    assert_eq!(app.session.gates[0].passed_at_ms, Some(11 * MIN));
    assert!(app.session.snapshots.contains_key(&1));
}

#[test]
fn time_up_waits_for_the_run_in_flight_then_freezes() {
    let mut app = app();
    app.update(Msg::Runner(RunnerMsg::Ready));
    app.now_ms = T0 + 91 * MIN;
    assert!(app.update(Msg::Tick).is_empty(), "a run is in flight");
    assert!(app.time_up_pending);
    let fx = app.update(Msg::Runner(RunnerMsg::Finished(Box::new(evaluation(&[(1, 3, 27)], vec![])), vec![])));
    assert!(fx.contains(&Effect::Report));
    assert_eq!(app.session.status, Status::TimeUp);
    assert_eq!(app.session.gates[0].test_runs, 1, "the last save was judged");
    assert_eq!(app.overlay, Some(Overlay::Summary));
    assert!(app.update(Msg::Changed).is_empty(), "frozen sessions do not judge saves");
    // Practice may go on in overtime.
    let fx = app.update(key('o'));
    assert!(fx.contains(&Effect::Run { path: vec![1] }));
    assert!(app.session.overtime);
}

#[test]
fn quitting_asks_first_while_the_session_runs() {
    let mut app = app();
    assert!(app.update(key('q')).is_empty());
    assert_eq!(app.overlay, Some(Overlay::ConfirmQuit));
    assert!(app.update(key('n')).is_empty());
    assert_eq!(app.overlay, None);
    app.update(key('q'));
    assert_eq!(app.update(key('y')), vec![Effect::Cancel, Effect::Persist, Effect::Report, Effect::Quit]);
    assert!(app.session.resumable());
}

#[test]
fn hints_are_revealed_one_at_a_time_and_counted() {
    let mut app = app();
    assert_eq!(app.update(key('h')), vec![Effect::Persist]);
    assert_eq!(app.session.hints_used(1), 1);
    let text = screen(&app, 100, 40);
    assert!(text.contains("Hint 1:"), "{text}");
    for _ in 0..5 {
        app.update(key('h'));
    }
    assert_eq!(app.session.hints_used(1), app.hints().len());
}

#[test]
fn a_regression_is_flagged() {
    let mut app = app();
    at_gate_2(&mut app);
    let (case, result) = failing_case(2, "debug: deleting a\n");
    let mut case1 = case.clone();
    case1.gate = 1;
    app.update(Msg::Runner(RunnerMsg::Finished(
        Box::new(evaluation(&[(1, 26, 27), (2, 0, 36)], vec![(case1, result)])),
        vec![],
    )));
    assert_eq!(app.session.gates[0].regressions, 1);
    assert!(screen(&app, 110, 32).contains("regression"));
}

#[test]
fn snapshot_fresh_session() {
    let app = app();
    insta::assert_snapshot!("fresh", screen(&app, 100, 30));
}

#[test]
fn snapshot_compiling() {
    let mut app = app();
    app.update(Msg::Runner(RunnerMsg::Ready));
    app.now_ms = T0 + 1_400;
    assert!(matches!(app.runner, Runner::Compiling { .. }));
    insta::assert_snapshot!("compiling", screen(&app, 100, 30));
}

#[test]
fn snapshot_compile_error() {
    let mut app = app();
    app.update(Msg::Runner(RunnerMsg::Ready));
    let mut e = evaluation(&[], vec![]);
    e.build = BuildInfo {
        ok: false,
        duration: Duration::from_millis(350),
        diagnostics: vec![harness::judge::compile::Diagnostic {
            level: "error".into(),
            message: "mismatched types".into(),
            file: Some("src/lib.rs".into()),
            line: Some(9),
            column: Some(58),
            rendered: "\x1b[0m\x1b[1m\x1b[38;5;9merror[E0308]\x1b[0m\x1b[0m\x1b[1m: mismatched types\x1b[0m\n  \x1b[0m\x1b[1m\x1b[38;5;12m--> \x1b[0m\x1b[0msrc/lib.rs:9:58\n   |\n 9 |     fn version(&self) -> u64 { self.version as i64 }\n   |                                ^^^^^^^^^^^^^^^^^^^ expected `u64`, found `i64`\n".into(),
        }],
        failure: None,
    };
    app.update(Msg::Runner(RunnerMsg::Finished(Box::new(e), vec![])));
    insta::assert_snapshot!("compile_error", screen(&app, 100, 30));
}

#[test]
fn snapshot_failing_gate_with_a_diff() {
    let mut app = app();
    at_gate_2(&mut app);
    app.update(Msg::Runner(RunnerMsg::Finished(
        Box::new(evaluation(&[(1, 27, 27), (2, 35, 36)], vec![failing_case(2, "debug: deleting a\n")])),
        vec![],
    )));
    app.now_ms = T0 + 14 * MIN;
    insta::assert_snapshot!("failing_gate", screen(&app, 110, 34));
}

#[test]
fn snapshot_gate_passed() {
    let mut app = app();
    at_gate_2(&mut app);
    insta::assert_snapshot!("gate_passed", screen(&app, 100, 30));
}

#[test]
fn snapshot_time_up() {
    let mut app = app();
    at_gate_2(&mut app);
    app.update(Msg::Runner(RunnerMsg::Finished(
        Box::new(evaluation(&[(1, 27, 27), (2, 35, 36)], vec![failing_case(2, "debug: deleting a\n")])),
        vec![],
    )));
    app.now_ms = T0 + 90 * MIN;
    app.update(Msg::Tick);
    assert_eq!(app.session.status, Status::TimeUp);
    app.report_path = Some(PathBuf::from("/home/you/harness/reports/20261129T082000Z-versioned_kv.json"));
    insta::assert_snapshot!("time_up", screen(&app, 100, 30));
}

#[test]
fn snapshot_help() {
    let mut app = app();
    app.update(key('?'));
    insta::assert_snapshot!("help", screen(&app, 100, 30));
}

#[test]
fn snapshot_warning_clock_and_too_small_terminal() {
    let mut app = app();
    app.now_ms = T0 + 85 * MIN;
    let text = screen(&app, 100, 30);
    assert!(text.contains("05:00 left"), "{text}");
    insta::assert_snapshot!("too_small", screen(&app, 40, 10));
}

/// Gates 1–3 passed, gate 4 judged with two failing cases.
fn at_gate_4_failing(app: &mut App) {
    app.update(Msg::Runner(RunnerMsg::Ready));
    let passed = [(1, 27, 27), (2, 36, 36), (3, 40, 40)];
    for g in 1..=3 {
        app.now_ms = T0 + g as u64 * 12 * MIN;
        app.update(Msg::Runner(RunnerMsg::Finished(Box::new(evaluation(&passed[..g], vec![])), vec![])));
    }
    assert_eq!(app.session.gate, 4);
    let (mut case, result) = failing_case(4, "debug: deleting a\n");
    let mut other = case.clone();
    other.name = "a conflicted commit leaves the store as it was".into();
    case.gate = 4;
    app.now_ms = T0 + 40 * MIN;
    app.update(Msg::Runner(RunnerMsg::Finished(
        Box::new(evaluation(
            &[(1, 27, 27), (2, 36, 36), (3, 40, 40), (4, 37, 39)],
            vec![(case, result.clone()), (other, result)],
        )),
        vec![],
    )));
}

fn with_intro(app: &mut App) {
    app.intro = vec![
        "resumed the session started 2026-11-30T00:53:20Z (12:00 elapsed; the clock kept running)".into(),
        "your solution: solutions/versioned_kv/src/lib.rs (every save is judged)".into(),
    ];
}

#[test]
fn snapshot_80x24_first_screen_shows_what_start_said() {
    let mut app = app();
    with_intro(&mut app);
    let text = screen(&app, 80, 24);
    assert!(text.contains("resumed the session") && text.contains("solutions/versioned_kv/src/lib.rs"), "{text}");
    insta::assert_snapshot!("80x24_fresh", text);
    // The first key (or save) clears it.
    app.update(key('j'));
    assert!(!screen(&app, 80, 24).contains("resumed the session"));
}

#[test]
fn snapshot_80x24_failing_keeps_counts_status_and_export() {
    let mut app = app();
    at_gate_4_failing(&mut app);
    let text = screen(&app, 80, 24);
    for wanted in ["37/39", "27/27", "cases in", "x ", "export", "Failing cases (2)", "get_at"] {
        assert!(text.contains(wanted), "{wanted:?} missing:\n{text}");
    }
    insta::assert_snapshot!("80x24_failing", text);
}

#[test]
fn snapshot_80x24_passing() {
    let mut app = app();
    at_gate_2(&mut app);
    insta::assert_snapshot!("80x24_gate_passed", screen(&app, 80, 24));
}

#[test]
fn snapshot_minimum_size_keeps_every_pane_useful() {
    let (w, h) = (view::MIN_WIDTH, view::MIN_HEIGHT);
    let mut app = app();
    at_gate_4_failing(&mut app);
    let text = screen(&app, w, h);
    // Whole words in the header, never a cut `· pr`.
    assert!(text.contains("Versioned key-value store · practice "), "{text}");
    assert!(text.contains("› g4"), "the selected case is listed:\n{text}");
    assert!(text.contains("get_at"), "the case's transcript shows:\n{text}");
    insta::assert_snapshot!("min_failing", text);
    let mut app = self::app();
    at_gate_2(&mut app);
    insta::assert_snapshot!("min_gate_passed", screen(&app, w, h));
}

#[test]
fn after_a_hint_j_and_k_still_select_cases() {
    let mut app = app();
    at_gate_4_failing(&mut app);
    app.update(key('h'));
    assert_eq!(app.selected, 0);
    app.update(key('j'));
    assert_eq!(app.selected, 1, "j moves to the next failing case");
    let text = screen(&app, 100, 30);
    assert!(text.contains("above the statement"), "{text}");
}

#[test]
fn the_summary_names_its_columns_and_the_followups() {
    let mut app = app();
    at_gate_2(&mut app);
    app.update(Msg::Runner(RunnerMsg::Finished(Box::new(evaluation(&[(1, 27, 27), (2, 35, 36)], vec![])), vec![])));
    app.now_ms = T0 + 90 * MIN;
    app.update(Msg::Tick);
    let text = screen(&app, 80, 24);
    assert!(text.contains("passed at") && text.contains("target"), "{text}");
    assert!(text.contains("follow-up question"), "{text}");
    let first = &app.problem.gates[0].followups[0].question;
    assert!(text.contains(&format!("g1 {}", &first[..30])), "the questions themselves are listed:\n{text}");
    assert!(text.contains("more in the report"), "{text}");
    insta::assert_snapshot!("80x24_time_up", text);
}

#[test]
fn the_summary_and_help_fit_the_minimum_size() {
    let (w, h) = (view::MIN_WIDTH, view::MIN_HEIGHT);
    let mut app = app();
    at_gate_2(&mut app);
    app.update(Msg::Runner(RunnerMsg::Finished(Box::new(evaluation(&[(1, 27, 27), (2, 35, 36)], vec![])), vec![])));
    app.now_ms = T0 + 90 * MIN;
    app.update(Msg::Tick);
    let summary = screen(&app, w, h);
    assert!(summary.contains("[q] quit") && summary.contains("11:00     12 min"), "{summary}");
    insta::assert_snapshot!("min_summary", summary);
    let mut app = self::app();
    app.update(key('?'));
    let help = screen(&app, w, h);
    assert!(help.contains("o  after time is up"), "every key keeps a row:\n{help}");
    insta::assert_snapshot!("min_help", help);
}

#[test]
fn snapshot_failing_scale_check_with_its_chart() {
    use harness::judge::scale::{Point, ScaleResult};
    use harness::judge::verdict::Verdict;
    let mut app = app();
    at_gate_2(&mut app);
    let mut eval = evaluation(&[(1, 27, 27), (2, 36, 37)], vec![]);
    let points =
        [(500, 5_000.0, 1_100.0), (2000, 17_800.0, 1_150.0), (8000, 67_500.0, 1_200.0), (32000, 268_900.0, 1_250.0)];
    eval.gates[1].scale.push(ScaleResult {
        name: "get_at on a key with n writes".into(),
        kind: "time".into(),
        says: "O(log w), w the writes to that key".into(),
        verdict: Verdict::TooSlow,
        message: "get_at on a key with n writes: yours grows ~n^1.0 per call (500 → 32k: ×54), the reference ~n^0.0 \
                  (×1.1); the statement asks O(log w), w the writes to that key"
            .into(),
        unit: "ns/op".into(),
        points: points.iter().map(|&(n, y, r)| Point { n, yours: Some(y), reference: r }).collect(),
        yours_growth: Some(54.0),
        reference_growth: Some(1.1),
        elapsed_ms: 900,
    });
    app.update(Msg::Runner(RunnerMsg::Built { ok: true, duration_ms: 200, errors: 0 }));
    app.update(Msg::Runner(RunnerMsg::Finished(Box::new(eval), vec![])));
    let text = screen(&app, 110, 34);
    assert!(text.contains("too_slow"), "{text}");
    insta::assert_snapshot!("failing_scale_check", text);
    // At 80x24 the results pane is narrow: the table keeps every column
    // (n, yours and the reference's) and the chart goes below it.
    let text = screen(&app, 80, 24);
    let row = text.lines().find(|l| l.contains("8k ") && l.contains("67.5 µs")).unwrap_or_default();
    assert!(row.contains("1.2 µs"), "the reference column stays:\n{text}");
    assert!(text.contains("yours · ") && text.contains("reference "), "the legend is whole:\n{text}");
    insta::assert_snapshot!("80x24_failing_scale_check", text);
}

#[test]
fn a_gate_with_failing_cases_counts_its_cases_alone_not_its_unmeasured_cost() {
    let mut app = app();
    at_gate_2(&mut app);
    // 30 of 36 cases pass; the one cost check waits for the cases.
    let mut eval = evaluation(&[(1, 27, 27), (2, 30, 37)], vec![]);
    eval.gates[1].scale_skipped.push("get_at on a key with n writes".into());
    app.update(Msg::Runner(RunnerMsg::Built { ok: true, duration_ms: 200, errors: 0 }));
    app.update(Msg::Runner(RunnerMsg::Finished(Box::new(eval), vec![])));
    let text = screen(&app, 110, 34);
    assert!(text.contains("30/36"), "{text}");
    assert!(!text.contains("30/37"), "{text}");
    assert!(text.contains("get_at on a key with n writes · measured"), "{text}");
}

/// Gate 2's cases all pass, its one scale check not measured yet.
fn measuring_gate_2() -> harness::judge::evaluate::Evaluation {
    let mut eval = evaluation(&[(1, 27, 27), (2, 36, 37)], vec![]);
    eval.gates[1].scale_pending.push("get_at on a key with n writes".into());
    eval
}

fn measured_gate_2(passes: bool) -> harness::judge::evaluate::Evaluation {
    use harness::judge::scale::{Point, ScaleResult};
    use harness::judge::verdict::Verdict;
    let mut eval = evaluation(&[(1, 27, 27), (2, 36 + usize::from(passes), 37)], vec![]);
    eval.gates[1].scale.push(ScaleResult {
        name: "get_at on a key with n writes".into(),
        kind: "time".into(),
        says: "O(log w), w the writes to that key".into(),
        verdict: if passes { Verdict::Pass } else { Verdict::TooSlow },
        message: "get_at on a key with n writes".into(),
        unit: "ns/op".into(),
        points: vec![Point { n: 500, yours: Some(1_000.0), reference: 1_000.0 }],
        yours_growth: Some(1.0),
        reference_growth: Some(1.0),
        elapsed_ms: 300,
    });
    eval
}

#[test]
fn a_verdict_shows_before_its_cost_and_the_gate_passes_only_once_the_cost_does() {
    for passes in [true, false] {
        let mut app = app();
        at_gate_2(&mut app);
        app.update(Msg::Runner(RunnerMsg::Built { ok: true, duration_ms: 200, errors: 0 }));
        app.now_ms = T0 + 20 * MIN;
        // The cases' verdict: on screen at once, nothing decided yet.
        let fx = app.update(Msg::Runner(RunnerMsg::Finished(Box::new(measuring_gate_2()), vec![])));
        assert!(fx.is_empty(), "{fx:?}");
        assert!(matches!(app.runner, Runner::Measuring { checks: 1, .. }));
        assert!(app.busy());
        assert_eq!(app.session.gate, 2);
        let text = screen(&app, 110, 32);
        assert!(text.contains("measuring cost: 1 check"), "{text}");
        assert!(text.contains("get_at on a key with n writes · measuring…"), "{text}");
        // The cost settles the outcome.
        app.now_ms = T0 + 20 * MIN + 500;
        let fx = app.update(Msg::Runner(RunnerMsg::Settled(Box::new(measured_gate_2(passes)))));
        assert!(!matches!(app.runner, Runner::Measuring { .. }));
        assert_eq!(app.session.gates[1].passed_at_ms.is_some(), passes, "{fx:?}");
        assert_eq!(app.session.gate, if passes { 3 } else { 2 });
        assert_eq!(fx.contains(&Effect::Report), passes, "{fx:?}");
    }
}

#[test]
fn a_save_while_measuring_cancels_the_measuring_and_reruns() {
    let mut app = app();
    at_gate_2(&mut app);
    app.update(Msg::Runner(RunnerMsg::Built { ok: true, duration_ms: 200, errors: 0 }));
    app.update(Msg::Runner(RunnerMsg::Finished(Box::new(measuring_gate_2()), vec![])));
    assert_eq!(app.update(Msg::Changed), vec![Effect::Persist, Effect::Cancel]);
    assert_eq!(app.update(Msg::Runner(RunnerMsg::Cancelled)), vec![Effect::Run { path: vec![1, 2] }]);
    // A late settlement of the cancelled run decides nothing.
    app.update(Msg::Runner(RunnerMsg::Settled(Box::new(measured_gate_2(true)))));
    assert_eq!(app.session.gate, 2);
    assert!(app.session.gates[1].passed_at_ms.is_none());
}

#[test]
fn snapshot_measuring_cost() {
    let mut app = app();
    at_gate_2(&mut app);
    app.update(Msg::Runner(RunnerMsg::Built { ok: true, duration_ms: 200, errors: 0 }));
    app.update(Msg::Runner(RunnerMsg::Finished(Box::new(measuring_gate_2()), vec![])));
    insta::assert_snapshot!("measuring_cost", screen(&app, 110, 24));
}

fn page(k: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(k, KeyModifiers::NONE))
}

#[test]
fn the_statement_stops_at_its_last_line_and_pages_back_at_once() {
    let mut app = app();
    app.update(page(KeyCode::Tab));
    screen(&app, 80, 24);
    for _ in 0..9 {
        app.update(page(KeyCode::PageDown));
        screen(&app, 80, 24);
    }
    let end = screen(&app, 80, 24);
    // The statement's last paragraph is on screen, not a blank pane.
    let last_words = "Locked: gate 2";
    assert!(end.contains(last_words), "scrolled past the end:\n{end}");
    // A larger terminal shows text at once, and one PgUp moves.
    let big = screen(&app, 160, 45);
    assert!(big.contains(last_words), "{big}");
    let before = app.statement_scroll.offset();
    app.update(page(KeyCode::PageUp));
    assert!(app.statement_scroll.offset() < before || before == 0);
    let up = screen(&app, 160, 45);
    assert!(up.contains("Gate 1"), "{up}");
}

#[test]
fn on_a_too_small_screen_quitting_asks_where_it_can_be_seen() {
    let mut app = app();
    assert!(screen(&app, 40, 12).contains("q quits."));
    app.update(key('q'));
    assert_eq!(app.overlay, Some(Overlay::ConfirmQuit));
    let asked = screen(&app, 40, 12);
    assert!(asked.contains("Quit? [y] yes"), "{asked}");
    let fx = app.update(key('y'));
    assert!(fx.contains(&Effect::Quit), "{fx:?}");
}

#[test]
fn z_shows_the_focused_pane_full_screen_and_esc_brings_both_back() {
    let mut app = app();
    at_gate_4_failing(&mut app);
    app.update(key('z'));
    assert!(app.zoom);
    let detail = screen(&app, 80, 24);
    insta::assert_snapshot!("80x24_zoomed_case", detail);
    assert!(!detail.contains("Gate 4: "), "the statement pane is not drawn:\n{detail}");
    app.update(page(KeyCode::Tab));
    let statement = screen(&app, 80, 24);
    insta::assert_snapshot!("80x24_zoomed_statement", statement);
    assert!(!statement.contains("Results"), "{statement}");
    let fx = app.update(page(KeyCode::Esc));
    assert!(fx.is_empty() && !app.zoom && app.overlay.is_none(), "Esc leaves full screen, it does not quit");
}

#[test]
fn in_the_first_minute_quitting_offers_to_discard_the_session() {
    let mut app = app();
    app.now_ms = T0 + 30_000;
    app.update(key('q'));
    let asked = screen(&app, 80, 24);
    assert!(asked.contains("[d] discard"), "{asked}");
    assert_eq!(app.update(key('d')), vec![Effect::Cancel, Effect::Discard, Effect::Quit]);
    assert!(app.session.discarded);

    // After the first minute (or a gate passed) there is no such offer.
    let mut later = self::app();
    later.now_ms = T0 + 61_000;
    later.update(key('q'));
    assert!(!screen(&later, 80, 24).contains("discard"));
    assert!(later.update(key('d')).is_empty(), "d only closes the question");
    assert!(!later.session.discarded);
}

#[test]
fn the_case_count_shows_only_once_it_is_known() {
    let mut app = app();
    app.update(Msg::Runner(RunnerMsg::Ready));
    app.update(Msg::Runner(RunnerMsg::Built { ok: true, duration_ms: 200, errors: 0 }));
    let before = screen(&app, 80, 24);
    assert!(before.contains("running the cases…") && !before.contains("0/0"), "{before}");
    app.update(Msg::Runner(RunnerMsg::Progress { done: 3, total: 27 }));
    assert!(screen(&app, 80, 24).contains("running 3/27 cases…"));
}
