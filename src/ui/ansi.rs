//! Turning rustc's ANSI-coloured diagnostics into styled lines.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

/// Parses SGR escape sequences (colours, bold); drops any other escape.
pub fn to_lines(text: &str) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let mut style = Style::default();
    for raw in text.lines() {
        let mut spans = Vec::new();
        let mut buf = String::new();
        let mut chars = raw.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\x1b' {
                buf.push(c);
                continue;
            }
            if chars.peek() != Some(&'[') {
                continue;
            }
            chars.next();
            let mut params = String::new();
            let mut end = ' ';
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    end = c;
                    break;
                }
                params.push(c);
            }
            if end != 'm' {
                continue;
            }
            if !buf.is_empty() {
                spans.push(Span::styled(std::mem::take(&mut buf), style));
            }
            style = apply(style, &params);
        }
        if !buf.is_empty() {
            spans.push(Span::styled(buf, style));
        }
        lines.push(Line::from(spans));
    }
    lines
}

fn apply(mut style: Style, params: &str) -> Style {
    let codes: Vec<u16> = params.split(';').filter_map(|p| p.parse().ok()).collect();
    if codes.is_empty() {
        return Style::default();
    }
    let mut i = 0;
    while i < codes.len() {
        let code = codes[i];
        style = match code {
            0 => Style::default(),
            1 => style.add_modifier(Modifier::BOLD),
            2 => style.add_modifier(Modifier::DIM),
            3 => style.add_modifier(Modifier::ITALIC),
            4 => style.add_modifier(Modifier::UNDERLINED),
            22 => style.remove_modifier(Modifier::BOLD | Modifier::DIM),
            30..=37 => style.fg(Color::Indexed((code - 30) as u8)),
            90..=97 => style.fg(Color::Indexed((code - 90 + 8) as u8)),
            39 => style.fg(Color::Reset),
            38 if codes.get(i + 1) == Some(&5) => {
                i += 2;
                style.fg(Color::Indexed(codes.get(i).copied().unwrap_or(7) as u8))
            }
            _ => style,
        };
        i += 1;
    }
    style
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_and_text_survive() {
        let lines = to_lines("\x1b[0m\x1b[1m\x1b[38;5;9merror[E0308]\x1b[0m\x1b[0m\x1b[1m: mismatched\x1b[0m\nplain");
        assert_eq!(lines.len(), 2);
        let first: String = lines[0].spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(first, "error[E0308]: mismatched");
        assert_eq!(lines[0].spans[0].style.fg, Some(Color::Indexed(9)));
        assert!(lines[0].spans[0].style.add_modifier.contains(Modifier::BOLD));
    }
}
