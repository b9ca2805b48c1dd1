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

/// `style`, in bold.
pub fn strong(style: Style) -> Style {
    style.add_modifier(Modifier::BOLD)
}

/// Hints, which the candidate asked to see.
pub fn hint() -> Style {
    Style::default().fg(Color::Magenta)
}

/// A heading: a statement's, or a file's name over its diff.
pub fn heading() -> Style {
    strong(pending())
}

/// A key's cap in a key bar (` q `).
pub fn key_cap() -> Style {
    Style::default().fg(Color::Black).bg(Color::DarkGray)
}

/// What must not be missed, white on red: a regression, a flag on a
/// failure.
pub fn alarm() -> Style {
    Style::default().fg(Color::White).bg(Color::Red)
}

/// A status badge that is good news (all gates passed).
pub fn badge_ok() -> Style {
    Style::default().fg(Color::Black).bg(Color::Green)
}

/// A status badge that warns (paused, a deadline near).
pub fn badge_pending() -> Style {
    strong(Style::default().fg(Color::Black).bg(Color::Yellow))
}

/// A status badge of a session that ended without a verdict.
pub fn badge_dim() -> Style {
    Style::default().fg(Color::White).bg(Color::DarkGray)
}

/// Gate `g`'s colour in the review's charts: one per gate, in turn.
pub fn gate_color(g: usize) -> Color {
    const GATES: [Color; 6] = [Color::Cyan, Color::Green, Color::Yellow, Color::Magenta, Color::Blue, Color::Red];
    GATES[g % GATES.len()]
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
