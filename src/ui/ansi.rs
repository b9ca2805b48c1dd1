//! rustc's ANSI-coloured diagnostics as styled lines: the escape codes
//! parsed by ansi-to-tui, each line wrapped to the pane under its own
//! indentation, so a long `-->` or `|` line continues where it began.

use ansi_to_tui::IntoText;
use ratatui::text::Line;

use crate::ui::{results, wrap};

/// Styled lines at most `width` columns wide.
pub fn to_lines(text: &str, width: usize) -> Vec<Line<'static>> {
    let lines: Vec<Line<'static>> = match text.as_bytes().into_text() {
        Ok(t) => t.lines,
        // Not expected from rustc; its text is still worth showing.
        Err(_) => results::strip_ansi(text).lines().map(|l| Line::from(l.to_string())).collect(),
    };
    lines.iter().flat_map(|l| wrap::under_itself(l, 2, width)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Modifier};

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>()).collect()
    }

    #[test]
    fn colours_and_text_survive() {
        let lines =
            to_lines("\x1b[0m\x1b[1m\x1b[38;5;9merror[E0308]\x1b[0m\x1b[0m\x1b[1m: mismatched\x1b[0m\nplain", 80);
        assert_eq!(text(&lines), vec!["error[E0308]: mismatched", "plain"]);
        let first = lines[0].spans.iter().find(|s| s.content.contains("error")).unwrap();
        assert_eq!(first.style.fg, Some(Color::Indexed(9)));
        assert!(first.style.add_modifier.contains(Modifier::BOLD));
    }

    #[test]
    fn a_wrapped_line_continues_under_its_own_indentation() {
        let lines = to_lines("  \x1b[1m-->\x1b[0m src/lib.rs:9:58 in the function version of the store", 30);
        assert_eq!(text(&lines), vec!["  --> src/lib.rs:9:58 in the", "    function version of the", "    store"]);
    }
}
