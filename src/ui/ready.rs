//! The mock's ready screen: what is about to happen, before the clock
//! starts. The problem is drawn already but not shown (an interviewer
//! does not hand over the question before the interview begins), so this
//! screen is drawn from the budget alone and cannot name it.
//!
//! [`Ready::update`] takes a key; [`draw`] is pure.

use crate::ui::theme;
use anyhow::Result;
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

/// The screen's state: the budget, and what the candidate chose.
#[derive(Debug, PartialEq, Eq)]
pub struct Ready {
    pub minutes: u64,
    /// The candidate named the problem (`--problem`) rather than drawing one.
    pub chosen: bool,
    /// `Some(true)`: start the clock; `Some(false)`: leave, nothing recorded.
    pub decided: Option<bool>,
}

impl Ready {
    pub fn new(minutes: u64, chosen: bool) -> Ready {
        Ready { minutes, chosen, decided: None }
    }

    pub fn update(&mut self, key: KeyEvent) {
        if key.kind != KeyEventKind::Press {
            return;
        }
        let ctrl_c = key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Enter | KeyCode::Char(' ') => self.decided = Some(true),
            KeyCode::Char('q') | KeyCode::Esc => self.decided = Some(false),
            _ if ctrl_c => self.decided = Some(false),
            _ => {}
        }
    }
}

pub fn draw(frame: &mut Frame, app: &Ready) {
    if crate::ui::practice::view::too_small(frame, 60, 16) {
        return;
    }
    let [header, body, footer] =
        Layout::vertical([Constraint::Length(2), Constraint::Min(5), Constraint::Length(1)]).areas(frame.area());
    frame.render_widget(
        Paragraph::new(Line::styled(
            " Mock interview · ready when you are",
            Style::default().add_modifier(Modifier::BOLD),
        )),
        header,
    );
    let which = if app.chosen {
        "The problem you named is waiting; its statement appears when you start."
    } else {
        "A problem has been drawn for you (weighted toward what you have practised least and the follow-ups you \
         have not met). It stays hidden until you start, as in an interview."
    };
    let lines = vec![
        Line::from(which),
        Line::default(),
        Line::from(format!(
            "Budget: {} minutes, one gate at a time. No hints, no overtime; the gates' follow-ups are drawn as you \
             pass them.",
            app.minutes
        )),
        Line::from(
            "The clock starts when you press Enter, and runs through the first ninety seconds' three questions.",
        ),
        Line::default(),
        Line::from(
            "Quitting a started mock records it as abandoned, scored as it stands (in its first minute you may \
             discard it instead).",
        ),
    ];
    let block = Block::default().borders(Borders::ALL).border_style(theme::info());
    frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: true }), body);
    frame.render_widget(
        Paragraph::new(Line::styled(" Enter start the clock · q leave (nothing is recorded)", theme::dim())),
        footer,
    );
}

/// Shows the screen until the candidate starts (true) or leaves (false).
pub fn run(minutes: u64, chosen: bool) -> Result<bool> {
    let mut app = Ready::new(minutes, chosen);
    crate::ui::screen::run(&mut app, draw, |_| {}, |app, key| app.update(key), |app| app.decided.is_some())?;
    Ok(app.decided == Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enter_starts_and_q_leaves() {
        let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
        let mut r = Ready::new(90, false);
        r.update(key(KeyCode::Char('x')));
        assert_eq!(r.decided, None);
        r.update(key(KeyCode::Enter));
        assert_eq!(r.decided, Some(true));
        let mut r = Ready::new(90, false);
        r.update(key(KeyCode::Char('q')));
        assert_eq!(r.decided, Some(false));
    }
}
