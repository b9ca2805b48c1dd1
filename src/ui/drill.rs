//! The drill's terminal UI: one card at a time with a visible 15-second
//! clock; Space reveals the answer, then 1 / 2 / 3 grade it. Each grade is
//! saved at once, so quitting loses nothing.
//!
//! [`Drill::update`] takes a key and the time and returns what to do;
//! [`draw`] is a pure function of the state, so both are tested without a
//! terminal.

use crate::ui::theme;
use std::path::PathBuf;

use anyhow::Result;
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Gauge, Paragraph, Wrap};

use crate::base::fsio;
use crate::session::drill::{Card, DrillState, Grade, LIMIT_MS};

pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 16;

/// One graded card of this sitting.
#[derive(Clone, Debug, PartialEq)]
pub struct Graded {
    pub card: String,
    pub grade: Grade,
    pub elapsed_ms: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    /// The question, the clock running since `shown_ms`.
    Asking { shown_ms: u64 },
    /// The answer, revealed `elapsed_ms` after the question was shown.
    Revealed { elapsed_ms: u64 },
    /// Every card of the queue is graded (or the candidate stopped).
    Done,
}

pub struct Drill {
    pub queue: Vec<Card>,
    pub index: usize,
    pub phase: Phase,
    pub state: DrillState,
    pub graded: Vec<Graded>,
    /// Due and never-seen cards of the whole (filtered) deck not yet
    /// answered in this sitting: the header's counts, which go down as
    /// cards are graded.
    pub due: usize,
    pub fresh: usize,
    pub now_ms: u64,
    /// Where `state` is saved; `None` in tests.
    pub reports_dir: Option<PathBuf>,
    pub error: Option<String>,
}

/// What the loop does after an update.
#[derive(Debug, PartialEq, Eq)]
pub enum Effect {
    None,
    Save,
    Quit,
}

impl Drill {
    pub fn new(queue: Vec<Card>, state: DrillState, due: usize, fresh: usize, now_ms: u64) -> Drill {
        let phase = if queue.is_empty() { Phase::Done } else { Phase::Asking { shown_ms: now_ms } };
        Drill { queue, index: 0, phase, state, graded: Vec::new(), due, fresh, now_ms, reports_dir: None, error: None }
    }

    pub fn current(&self) -> Option<&Card> {
        self.queue.get(self.index)
    }

    /// Milliseconds on the clock: running while asking, frozen once revealed.
    pub fn elapsed_ms(&self) -> u64 {
        match self.phase {
            Phase::Asking { shown_ms } => self.now_ms.saturating_sub(shown_ms),
            Phase::Revealed { elapsed_ms } => elapsed_ms,
            Phase::Done => 0,
        }
    }

    pub fn tick(&mut self, now_ms: u64) {
        self.now_ms = now_ms;
    }

    pub fn update(&mut self, key: KeyEvent, now_ms: u64) -> Effect {
        self.now_ms = now_ms;
        if key.kind != KeyEventKind::Press {
            return Effect::None;
        }
        if key.code == KeyCode::Char('q')
            || key.code == KeyCode::Esc
            || (key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL))
        {
            return Effect::Quit;
        }
        match (&self.phase, key.code) {
            (Phase::Asking { shown_ms }, KeyCode::Char(' ') | KeyCode::Enter) => {
                self.phase = Phase::Revealed { elapsed_ms: now_ms.saturating_sub(*shown_ms) };
                Effect::None
            }
            (Phase::Revealed { elapsed_ms }, KeyCode::Char(c @ ('1' | '2' | '3'))) => {
                let grade = match c {
                    '1' => Grade::InTime,
                    '2' => Grade::Slowly,
                    _ => Grade::Missed,
                };
                let elapsed_ms = *elapsed_ms;
                let id = self.queue[self.index].id.clone();
                let counter = if self.state.cards.contains_key(&id) { &mut self.due } else { &mut self.fresh };
                *counter = counter.saturating_sub(1);
                let grade = self.state.record(&id, grade, elapsed_ms, now_ms).last_grade;
                self.graded.push(Graded { card: id, grade, elapsed_ms });
                self.index += 1;
                self.phase =
                    if self.index < self.queue.len() { Phase::Asking { shown_ms: now_ms } } else { Phase::Done };
                Effect::Save
            }
            _ => Effect::None,
        }
    }

    /// In time, slowly, missed: this sitting's counts.
    pub fn tally(&self) -> (usize, usize, usize) {
        let n = |g: Grade| self.graded.iter().filter(|x| x.grade == g).count();
        (n(Grade::InTime), n(Grade::Slowly), n(Grade::Missed))
    }
}

fn clock(ms: u64) -> String {
    let s = ms / 1000;
    format!("{:02}:{:02}", s / 60, s % 60)
}

pub fn draw(frame: &mut Frame, app: &Drill) {
    if crate::ui::practice::view::too_small(frame, MIN_WIDTH, MIN_HEIGHT) {
        return;
    }
    let [header, body, footer] =
        Layout::vertical([Constraint::Length(2), Constraint::Min(6), Constraint::Length(1)]).areas(frame.area());
    let position = if app.phase == Phase::Done {
        format!("{} graded", app.graded.len())
    } else {
        format!("card {}/{}", app.index + 1, app.queue.len())
    };
    let title = Line::from(vec![
        Span::styled(" harness drill ", Style::default().add_modifier(Modifier::BOLD)),
        Span::raw(format!("· {position} · {} due · {} new", app.due, app.fresh)),
    ]);
    let [title_area, gauge_area] = Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(header);
    frame.render_widget(Paragraph::new(title), title_area);
    if app.phase != Phase::Done {
        let elapsed = app.elapsed_ms();
        let over = elapsed > LIMIT_MS;
        let ratio = (elapsed as f64 / LIMIT_MS as f64).min(1.0);
        let style = if over {
            theme::bad()
        } else if elapsed > LIMIT_MS * 2 / 3 {
            theme::pending()
        } else {
            theme::ok()
        };
        let label = if over {
            format!("{} — past 15 s: this one counts as slow", clock(elapsed))
        } else {
            format!("{} / 00:15", clock(elapsed))
        };
        frame.render_widget(Gauge::default().gauge_style(style).ratio(ratio).label(label), gauge_area);
    }
    match (&app.phase, app.current()) {
        (Phase::Done, _) => draw_summary(frame, app, body),
        (phase, Some(card)) => {
            let chapter = card.chapter.map(|c| format!(" · chapter {c}")).unwrap_or_default();
            let block = Block::default().borders(Borders::ALL).title(format!(" {}{chapter} ", card.source));
            let mut lines = vec![Line::styled(card.question.clone(), Style::default().add_modifier(Modifier::BOLD))];
            lines.push(Line::raw(""));
            if let Phase::Revealed { .. } = phase {
                lines.push(Line::styled("Answer", theme::info()));
                lines.extend(card.answer.lines().map(|l| Line::raw(l.to_string())));
            } else {
                lines.push(Line::styled("Say your answer out loud, then press Space.", theme::dim()));
            }
            frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }), body);
        }
        (_, None) => {}
    }
    let keys = match app.phase {
        Phase::Asking { .. } => " Space reveal · q quit",
        Phase::Revealed { .. } => " 1 knew it · 2 knew it slowly · 3 did not know · q quit",
        Phase::Done => " q quit · harness drill --list shows your study items",
    };
    frame.render_widget(Paragraph::new(Line::styled(keys, theme::dim())), footer);
    if let Some(e) = &app.error {
        let area = footer;
        frame.render_widget(Paragraph::new(Line::styled(format!(" {e}"), theme::bad())), area);
    }
}

fn draw_summary(frame: &mut Frame, app: &Drill, area: ratatui::layout::Rect) {
    let (in_time, slowly, missed) = app.tally();
    let mut lines = vec![
        Line::styled(
            if app.queue.is_empty() { "Nothing is due: every card is scheduled for later." } else { "Done for now." },
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Line::raw(""),
    ];
    if !app.graded.is_empty() {
        lines.push(Line::raw(format!("{in_time} in time · {slowly} slowly · {missed} missed")));
        let study: Vec<&Graded> = app.graded.iter().filter(|g| g.grade != Grade::InTime).collect();
        if !study.is_empty() {
            lines.push(Line::raw(""));
            lines.push(Line::styled("Your next study items:", theme::pending()));
            for g in study {
                let question = app.queue.iter().find(|c| c.id == g.card).map_or("", |c| c.question.as_str());
                lines.push(Line::raw(format!(
                    "  {} ({}, {}): {question}",
                    g.card,
                    g.grade.label(),
                    clock(g.elapsed_ms)
                )));
            }
        }
    }
    let block = Block::default().borders(Borders::ALL).title(" Summary ");
    frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }), area);
}

/// Runs the drill in the terminal until every card is graded and `q`.
pub fn run(app: Drill) -> Result<Drill> {
    // The drill, and whether it asked to quit.
    let mut state = (app, false);
    crate::ui::screen::run(
        &mut state,
        |f, (app, _)| draw(f, app),
        |(app, _)| app.tick(fsio::now_ms()),
        |(app, quit), key| match app.update(key, fsio::now_ms()) {
            Effect::None => {}
            Effect::Save => {
                if let Some(dir) = &app.reports_dir
                    && let Err(e) = app.state.save(dir)
                {
                    app.error = Some(format!("{e:#}"));
                }
            }
            Effect::Quit => *quit = true,
        },
        |(_, quit)| *quit,
    )?;
    Ok(state.0)
}
