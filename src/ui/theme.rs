//! The TUIs' palette and the widgets they share: a style per role, not
//! per colour, so that what green or red means is decided here once.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Borders};

/// What passes, what is done, on pace.
pub fn ok() -> Style {
    Style::default().fg(Color::Green)
}

/// What fails, an error, behind pace.
pub fn bad() -> Style {
    Style::default().fg(Color::Red)
}

/// What is still running or being measured; a warning.
pub fn pending() -> Style {
    Style::default().fg(Color::Yellow)
}

/// Notes and pointers: the intro, the focused pane, where to look next.
pub fn info() -> Style {
    Style::default().fg(Color::Cyan)
}

/// Secondary text: column heads, borders, hints.
pub fn dim() -> Style {
    Style::default().fg(Color::DarkGray)
}

pub fn bold() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

/// A rounded pane, its border [`info`] when focused, else [`dim`].
pub fn pane(title: Line<'static>, focused: bool) -> Block<'static> {
    let style = if focused { info() } else { dim() };
    Block::default().borders(Borders::ALL).border_type(BorderType::Rounded).border_style(style).title(title)
}

/// `s` cut to `n` characters, the last one `…` when cut.
pub fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n.saturating_sub(1)).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_counts_characters_and_marks_a_cut() {
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("abcd", 3), "ab…");
        assert_eq!(truncate("ééé", 2), "é…");
        assert_eq!(truncate("abc", 0), "…");
    }
}
