//! Word wrapping of styled text with a hanging indent, so that a wrapped
//! list item continues under its text rather than under its bullet, and a
//! wrapped compiler line under its own indentation. The line breaking is
//! textwrap's first-fit algorithm over styled words.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use textwrap::core::{Fragment, display_width};
use textwrap::wrap_algorithms::wrap_first_fit;

/// One word of styled text and the spaces after it.
#[derive(Debug)]
struct Word {
    text: String,
    style: Style,
    width: usize,
    space: usize,
}

impl Fragment for Word {
    fn width(&self) -> f64 {
        self.width as f64
    }
    fn whitespace_width(&self) -> f64 {
        self.space as f64
    }
    fn penalty_width(&self) -> f64 {
        0.0
    }
}

/// Splits spans into words (a word may continue across a style change),
/// cutting any word wider than `max` into pieces that fit.
fn words(spans: &[Span<'_>], max: usize) -> Vec<Word> {
    let mut out: Vec<Word> = Vec::new();
    for span in spans {
        let mut rest: &str = span.content.as_ref();
        while !rest.is_empty() {
            let spaces = rest.len() - rest.trim_start_matches(' ').len();
            if spaces > 0 {
                match out.last_mut() {
                    Some(w) => w.space += spaces,
                    // Leading spaces of a line are kept as a word of their own.
                    None => out.push(Word { text: " ".repeat(spaces), style: span.style, width: spaces, space: 0 }),
                }
                rest = &rest[spaces..];
                continue;
            }
            let end = rest.find(' ').unwrap_or(rest.len());
            let mut word = &rest[..end];
            rest = &rest[end..];
            while !word.is_empty() {
                let mut cut = word.len();
                if display_width(word) > max {
                    let mut w = 0;
                    cut = word
                        .char_indices()
                        .find(|&(_, c)| {
                            w += display_width(c.encode_utf8(&mut [0; 4]));
                            w > max
                        })
                        .map_or(word.len(), |(i, _)| i.max(word.chars().next().map_or(1, char::len_utf8)));
                }
                let piece = &word[..cut];
                out.push(Word { text: piece.to_string(), style: span.style, width: display_width(piece), space: 0 });
                word = &word[cut..];
            }
        }
    }
    out
}

/// Wraps `spans` to `width` columns: the first row starts with `first`,
/// every later row with `indent` spaces (a hanging indent).
pub fn hanging(first: Vec<Span<'static>>, indent: usize, spans: &[Span<'_>], width: usize) -> Vec<Line<'static>> {
    let first_width: usize = first.iter().map(Span::width).sum();
    let width = width.max(first_width.max(indent) + 8);
    let words = words(spans, width - first_width.max(indent));
    if words.is_empty() {
        return vec![Line::from(first)];
    }
    let widths = [(width - first_width) as f64, (width - indent) as f64];
    let mut lines = Vec::new();
    for (i, row) in wrap_first_fit(&words, &widths).into_iter().enumerate() {
        let mut out = if i == 0 { first.clone() } else { vec![Span::raw(" ".repeat(indent))] };
        for (j, w) in row.iter().enumerate() {
            let last = j + 1 == row.len();
            let text = if last { w.text.clone() } else { format!("{}{}", w.text, " ".repeat(w.space)) };
            let on_indent = i > 0 && out.len() == 1;
            match out.last_mut() {
                Some(prev) if prev.style == w.style && !on_indent => {
                    prev.content = format!("{}{text}", prev.content).into();
                }
                _ => out.push(Span::styled(text, w.style)),
            }
        }
        lines.push(Line::from(out));
    }
    lines
}

/// A styled line wrapped under its own leading whitespace (plus `extra`).
pub fn under_itself(line: &Line<'_>, extra: usize, width: usize) -> Vec<Line<'static>> {
    let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
    let lead = text.len() - text.trim_start_matches(' ').len();
    hanging(Vec::new(), lead + extra, &line.spans, width)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    #[test]
    fn wrapped_rows_hang_under_the_text() {
        let spans = [Span::raw("sets key to value and returns the version")];
        let lines = hanging(vec![Span::raw("  • ")], 4, &spans, 24);
        assert_eq!(text(&lines), vec!["  • sets key to value", "    and returns the", "    version"]);
    }

    #[test]
    fn styles_survive_and_long_words_are_cut() {
        let spans = [Span::raw("a "), Span::styled("put(\"key\")", Style::default().bold()), Span::raw(" b")];
        let lines = hanging(Vec::new(), 0, &spans, 9);
        assert_eq!(text(&lines), vec!["a", "put(\"key\"", ") b"]);
        assert!(lines[1].spans.iter().any(|s| s.style == Style::default().bold()));
    }

    #[test]
    fn a_line_wraps_under_its_own_indentation() {
        let line = Line::from("   |   ^^^ expected `u64`, found `i64`");
        assert_eq!(text(&under_itself(&line, 2, 24)), vec!["   |   ^^^ expected", "     `u64`, found `i64`"]);
    }
}
