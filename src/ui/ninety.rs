//! The first ninety seconds: before gate 1's statement, the problem's
//! summary and three questions that pick the structure (the problem's own
//! `[[first_ninety]]`, else the seed's three), with a line for the
//! candidate's answer to each and a 90-second clock.
//!
//! "Ask these out loud in the first ninety seconds of any of these
//! problems. Each one has, historically, been the question that determined
//! whether gate 3 was additive or a rewrite." The answers go into the
//! session, and the report shows them next to how gate 3 went.
//!
//! [`Ninety::update`] takes a key and the time; [`draw`] is pure.

use crate::ui::theme;
use anyhow::Result;
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Gauge, Paragraph, Wrap};

use crate::base::fsio;
use crate::problem::model::Problem;

/// The screen's length.
pub const LIMIT_MS: u64 = 90_000;
/// The longest answer kept, in characters.
const MAX_ANSWER: usize = 200;

/// The seed's three questions, in this project's words, each with why it
/// matters.
pub const QUESTIONS: [(&str, &str); 3] = [
    (
        "Is the input replayable, or immutable?",
        "If so, store positions into it rather than copies: an O(1) checkpoint instead of an O(n) one.",
    ),
    (
        "Are identifiers global, or per entity?",
        "A global counter makes a snapshot one integer; per-entity counters make it a vector.",
    ),
    ("Will I ever need to undo?", "If there is any chance, store deltas rather than states: deltas compose."),
];

pub struct Ninety {
    pub title: String,
    pub summary: String,
    /// (question, why it matters): the problem's own, or [`QUESTIONS`].
    pub questions: Vec<(String, String)>,
    pub answers: [String; 3],
    pub focus: usize,
    pub started_ms: u64,
    pub now_ms: u64,
    pub done: bool,
}

impl Ninety {
    /// The screen for `problem`: its own three questions where it has them.
    pub fn for_problem(problem: &Problem, now_ms: u64) -> Ninety {
        let mut n = Ninety::new(&problem.title, &problem.summary, now_ms);
        if !problem.first_ninety.is_empty() {
            n.questions = problem.first_ninety.iter().map(|q| (q.question.clone(), q.why.clone())).collect();
        }
        n
    }

    pub fn new(title: &str, summary: &str, now_ms: u64) -> Ninety {
        Ninety {
            title: title.to_string(),
            summary: summary.to_string(),
            questions: QUESTIONS.iter().map(|(q, w)| (q.to_string(), w.to_string())).collect(),
            answers: Default::default(),
            focus: 0,
            started_ms: now_ms,
            now_ms,
            done: false,
        }
    }

    pub fn remaining_ms(&self) -> u64 {
        LIMIT_MS.saturating_sub(self.now_ms.saturating_sub(self.started_ms))
    }

    /// The clock moves; at ninety seconds the screen ends by itself.
    pub fn tick(&mut self, now_ms: u64) {
        self.now_ms = now_ms;
        if self.remaining_ms() == 0 {
            self.done = true;
        }
    }

    pub fn update(&mut self, key: KeyEvent, now_ms: u64) {
        self.tick(now_ms);
        if key.kind != KeyEventKind::Press || self.done {
            return;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => self.done = true,
            KeyCode::Char('c') if ctrl => self.done = true,
            KeyCode::Enter if self.focus == 2 => self.done = true,
            KeyCode::Enter | KeyCode::Tab | KeyCode::Down => self.focus = (self.focus + 1).min(2),
            KeyCode::BackTab | KeyCode::Up => self.focus = self.focus.saturating_sub(1),
            KeyCode::Backspace => {
                self.answers[self.focus].pop();
            }
            KeyCode::Char(c) if !ctrl && self.answers[self.focus].chars().count() < MAX_ANSWER => {
                self.answers[self.focus].push(c);
            }
            _ => {}
        }
    }

    /// (question, answer) pairs, answers trimmed.
    pub fn result(&self) -> Vec<(String, String)> {
        self.questions.iter().zip(&self.answers).map(|((q, _), a)| (q.clone(), a.trim().to_string())).collect()
    }
}

pub fn draw(frame: &mut Frame, app: &Ninety) {
    if crate::ui::practice::view::too_small(frame, 60, 16) {
        return;
    }
    let [header, gauge, body, footer] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(1), Constraint::Min(8), Constraint::Length(1)])
            .areas(frame.area());
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(format!(" {} ", app.title), Style::default().add_modifier(Modifier::BOLD)),
            Span::styled("· the first ninety seconds", theme::dim()),
        ])),
        header,
    );
    let left = app.remaining_ms();
    let label = format!("{}:{:02} left, then gate 1", left / 60_000, left / 1000 % 60);
    frame.render_widget(
        Gauge::default()
            .gauge_style(if left < 20_000 { theme::pending() } else { theme::info() })
            .ratio(left as f64 / LIMIT_MS as f64)
            .label(label),
        gauge,
    );
    // A short window keeps the questions and answers, and drops the rest.
    let roomy = body.height >= 22;
    let mut lines = Vec::new();
    if roomy {
        lines.push(Line::raw(app.summary.clone()));
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            "Before the statement, ask yourself these out loud. Each decides whether gate 3 is additive or a rewrite.",
            theme::dim(),
        ));
    }
    for (i, (q, why)) in app.questions.iter().enumerate() {
        let focused = i == app.focus;
        if roomy || i > 0 {
            lines.push(Line::raw(""));
        }
        lines.push(Line::styled(format!("{}. {q}", i + 1), Style::default().add_modifier(Modifier::BOLD)));
        if roomy {
            lines.push(Line::styled(format!("   {why}"), theme::dim()));
        }
        let cursor = if focused { "▏" } else { "" };
        let style = if focused { theme::info() } else { Style::default() };
        lines.push(Line::from(vec![
            Span::styled(if focused { " › " } else { "   " }, style),
            Span::styled(format!("{}{cursor}", app.answers[i]), style),
        ]));
    }
    let block = Block::default().borders(Borders::ALL).title(" Your answers, a line each ");
    frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }), body);
    frame.render_widget(
        Paragraph::new(Line::styled(
            " type · Enter next (on the last: start) · ↑↓ move · Esc skip to gate 1",
            theme::dim(),
        )),
        footer,
    );
}

/// Runs the screen until the candidate continues or ninety seconds pass;
/// returns the (question, answer) pairs.
pub fn run(problem: &Problem) -> Result<Vec<(String, String)>> {
    let mut app = Ninety::for_problem(problem, fsio::now_ms());
    crate::ui::screen::run(
        &mut app,
        draw,
        |app| app.tick(fsio::now_ms()),
        |app, key| app.update(key, fsio::now_ms()),
        |app| app.done,
    )?;
    Ok(app.result())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn typing_fills_the_focused_line_and_enter_moves_on_then_starts() {
        let mut n = Ninety::new("T", "S", 0);
        for c in "yes".chars() {
            n.update(key(KeyCode::Char(c)), 1_000);
        }
        n.update(key(KeyCode::Enter), 2_000);
        n.update(key(KeyCode::Char('g')), 3_000);
        n.update(key(KeyCode::Backspace), 3_100);
        n.update(key(KeyCode::Char('G')), 3_200);
        n.update(key(KeyCode::Enter), 4_000);
        assert!(!n.done);
        n.update(key(KeyCode::Enter), 5_000);
        assert!(n.done, "Enter on the last line starts gate 1");
        let r = n.result();
        assert_eq!(r[0], (QUESTIONS[0].0.to_string(), "yes".to_string()));
        assert_eq!((r[1].1.as_str(), r[2].1.as_str()), ("G", ""));
    }

    #[test]
    fn the_screen_ends_by_itself_at_ninety_seconds_and_esc_skips() {
        let mut n = Ninety::new("T", "S", 10_000);
        n.tick(10_000 + LIMIT_MS - 1);
        assert!(!n.done);
        assert_eq!(n.remaining_ms(), 1);
        n.tick(10_000 + LIMIT_MS);
        assert!(n.done);
        let mut m = Ninety::new("T", "S", 0);
        m.update(key(KeyCode::Esc), 1);
        assert!(m.done);
    }
}
