//! `harness drill`: the drill's logic through `Drill::update` and its
//! screens on ratatui's `TestBackend` (insta snapshots at 80×24 and at the
//! minimum size), `--list` on a state file, and one short drill driven in a
//! real pseudo-terminal.

use crate::common;

use std::io::Write;
use std::time::Duration;

use common::{Pty, harness, root, scratch, text};
use harness::session::drill::{Card, DrillState, Grade};
use harness::ui::drill::{Drill, Effect, MIN_HEIGHT, MIN_WIDTH, Phase, draw};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

const T0: u64 = 1_800_000_000_000;

fn cards() -> Vec<Card> {
    let card = |id: &str, q: &str, a: &str| Card {
        id: id.into(),
        source: "The Thirty Questions".into(),
        chapter: Some(3),
        problem: None,
        question: q.into(),
        answer: a.into(),
    };
    vec![
        card(
            "thirty_questions/lru-doubly-linked",
            "Why must an LRU's list be doubly linked?",
            "Unlinking a node you hold needs its predecessor; double links give it in O(1).",
        ),
        card("thirty_questions/sentinels", "What do sentinel nodes buy you?", "No empty-list special cases."),
    ]
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

fn screen(app: &Drill, w: u16, h: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| draw(f, app)).unwrap();
    terminal.backend().to_string()
}

#[test]
fn space_reveals_a_grade_saves_and_a_late_answer_counts_as_slow() {
    let mut app = Drill::new(cards(), DrillState::default(), 0, 2, T0);
    assert_eq!(app.update(key('1'), T0 + 1_000), Effect::None, "no grade before the answer is shown");
    assert_eq!(app.update(key(' '), T0 + 4_000), Effect::None);
    assert_eq!(app.phase, Phase::Revealed { elapsed_ms: 4_000 });
    app.tick(T0 + 60_000);
    assert_eq!(app.elapsed_ms(), 4_000, "the clock stops at the reveal");
    assert!(screen(&app, 80, 24).contains("0 due · 2 new"));
    assert_eq!(app.update(key('1'), T0 + 9_000), Effect::Save);
    assert_eq!(app.phase, Phase::Asking { shown_ms: T0 + 9_000 });
    assert!(screen(&app, 80, 24).contains("0 due · 1 new"), "the header counts what is left");
    app.update(key(' '), T0 + 9_000 + 16_000);
    assert_eq!(app.update(key('1'), T0 + 30_000), Effect::Save);
    assert_eq!(app.phase, Phase::Done);
    assert_eq!(app.tally(), (1, 1, 0), "the second took 16 s: knowing it is knowing it slowly");
    assert_eq!(app.state.cards["thirty_questions/sentinels"].last_grade, Grade::Slowly);
    assert_eq!(app.update(key('q'), T0 + 31_000), Effect::Quit);
    // A card answered before counts as due, not new.
    let mut again = Drill::new(cards(), app.state.clone(), 2, 0, T0 + 9 * 86_400_000);
    again.update(key(' '), T0 + 9 * 86_400_000);
    again.update(key('1'), T0 + 9 * 86_400_000);
    assert_eq!((again.due, again.fresh), (1, 0));
}

#[test]
fn drill_screens() {
    let mut app = Drill::new(cards(), DrillState::default(), 0, 2, T0);
    app.tick(T0 + 6_000);
    insta::assert_snapshot!("drill_question", screen(&app, 80, 24));
    app.update(key(' '), T0 + 17_000);
    insta::assert_snapshot!("drill_answer_late", screen(&app, 80, 24));
    insta::assert_snapshot!("drill_answer_minimum", screen(&app, MIN_WIDTH, MIN_HEIGHT));
    app.update(key('3'), T0 + 18_000);
    app.update(key(' '), T0 + 20_000);
    app.update(key('1'), T0 + 21_000);
    insta::assert_snapshot!("drill_summary", screen(&app, 80, 24));
}

#[test]
fn list_shows_the_study_items_by_chapter() {
    let dir = scratch(true);
    std::fs::create_dir_all(dir.path().join("drill")).unwrap();
    std::fs::copy(root().join("drill/thirty_questions.toml"), dir.path().join("drill/thirty_questions.toml")).unwrap();
    let mut state = DrillState::load(&dir.path().join("reports")).unwrap();
    state.record("thirty_questions/heap-vs-sorted", Grade::InTime, 20_000, T0);
    state.record("thirty_questions/bisect-right", Grade::Missed, 3_000, T0);
    state.record("thirty_questions/tombstone", Grade::InTime, 3_000, T0);
    state.save(&dir.path().join("reports")).unwrap();
    let out = harness(dir.path(), &["drill", "--list"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("chapter 1") && t.contains("chapter 5"), "{t}");
    assert!(t.contains("missed") && t.contains("Write bisect_right"), "{t}");
    assert!(t.contains("slowly") && t.contains("20.0 s") && t.contains("heap beat a sorted list"), "{t}");
    assert!(!t.contains("tombstone rather than"), "a card known in time is no study item:\n{t}");
    let out = harness(dir.path(), &["drill", "--list", "--json", "--chapter", "5"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["study_items"][0]["chapter"], 5);
    assert_eq!(json["study_items"][0]["cards"][0]["last"], "slowly");
    std::fs::write(dir.path().join("drill/broken.toml"), "format_version = 1\nsource = 3\n").unwrap();
    let out = harness(dir.path(), &["drill", "--list"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("broken.toml") && text(&out).contains("line 2"), "{}", text(&out));
}

#[test]
fn a_short_drill_in_a_real_terminal_saves_each_grade() {
    let dir = scratch(false);
    std::fs::create_dir_all(dir.path().join("problems")).unwrap();
    std::fs::create_dir_all(dir.path().join("drill")).unwrap();
    std::fs::copy(root().join("drill/thirty_questions.toml"), dir.path().join("drill/thirty_questions.toml")).unwrap();
    let mut pty = Pty::spawn(dir.path(), &["drill", "--limit", "2", "--chapter", "3"], 24, 80);
    let wait = Duration::from_secs(10);
    pty.wait_for("card 1/2", wait);
    pty.wait_for("Why must an LRU's list be doubly linked?", wait);
    pty.writer.write_all(b" ").unwrap();
    pty.wait_for("1 knew it", wait);
    pty.writer.write_all(b"3").unwrap();
    pty.wait_for("card 2/2", wait);
    pty.writer.write_all(b" ").unwrap();
    pty.wait_for("1 knew it", wait);
    pty.writer.write_all(b"1").unwrap();
    let summary = pty.wait_for("Done for now", wait);
    assert!(summary.contains("1 in time · 0 slowly · 1 missed"), "{summary}");
    pty.writer.write_all(b"q").unwrap();
    assert!(pty.wait_exit(wait).success());
    let state = DrillState::load(&dir.path().join("reports")).unwrap();
    assert_eq!(state.cards["thirty_questions/lru-doubly-linked"].last_grade, Grade::Missed);
    assert_eq!(state.cards["thirty_questions/sentinels"].last_grade, Grade::InTime);
}

#[test]
fn first_ninety_seconds_screen() {
    use harness::ui::ninety::{Ninety, draw as draw_ninety};
    let p = common::versioned_kv();
    let mut n = Ninety::for_problem(&p, T0);
    assert_eq!(n.questions[0].0, p.first_ninety[0].question, "the problem's own questions");
    for c in "yes: a log".chars() {
        n.update(key(c), T0 + 5_000);
    }
    n.update(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), T0 + 6_000);
    n.update(key('g'), T0 + 31_000);
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|f| draw_ninety(f, &n)).unwrap();
    insta::assert_snapshot!("first_ninety", terminal.backend().to_string());
    let mut small = Terminal::new(TestBackend::new(60, 16)).unwrap();
    small.draw(|f| draw_ninety(f, &n)).unwrap();
    insta::assert_snapshot!("first_ninety_minimum", small.backend().to_string());
}
