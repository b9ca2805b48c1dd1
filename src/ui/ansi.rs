//! rustc's ANSI-coloured diagnostics as styled lines: the escape codes
//! parsed by ansi-to-tui, each line wrapped to the pane under its own
//! indentation, so a long `-->` or `|` line continues where it began.
//!
//! A source snippet (the lines after a `|` gutter: code, then carets under
//! it) is never wrapped, which would move the carets off the code they
//! point at. Too wide for the pane, a snippet is shifted left as one block,
//! as rustc's own `--diagnostic-width` does, until its carets are in view;
//! code cut at either end shows `…`, and a caret's label wraps under the
//! gutter.

use ansi_to_tui::IntoText;
use ratatui::text::{Line, Span};

use crate::ui::wrap;

/// Styled lines at most `width` columns wide.
pub fn to_lines(text: &str, width: usize) -> Vec<Line<'static>> {
    let lines: Vec<Line<'static>> = match text.as_bytes().into_text() {
        Ok(t) => t.lines,
        // Not expected from rustc; its text is still worth showing.
        Err(_) => crate::base::diag::strip_ansi(text).lines().map(|l| Line::from(l.to_string())).collect(),
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(gutter) = gutter(&plain(&lines[i])) else {
            out.extend(wrap::under_itself(&lines[i], 2, width));
            i += 1;
            continue;
        };
        let mut end = i + 1;
        while end < lines.len() && gutter_of_width(&plain(&lines[end]), gutter) {
            end += 1;
        }
        out.extend(fit_snippet(&lines[i..end], gutter, width));
        i = end;
    }
    out
}

fn plain(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

/// The width of a snippet line's gutter (`  9 | `, `   | `), the columns
/// before its code.
fn gutter(text: &str) -> Option<usize> {
    let bar = text.find('|')?;
    let (head, rest) = (&text[..bar], &text[bar + 1..]);
    let numbered = head.trim().chars().all(|c| c.is_ascii_digit());
    (numbered && head.chars().all(|c| c == ' ' || c.is_ascii_digit()) && (rest.is_empty() || rest.starts_with(' ')))
        .then(|| head.chars().count() + 2)
}

fn gutter_of_width(text: &str, width: usize) -> bool {
    gutter(text) == Some(width)
}

/// Columns `from..from + len` of a styled line (characters as columns, as
/// rustc's snippets are).
fn slice(line: &Line<'_>, from: usize, len: usize) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut col = 0;
    for span in &line.spans {
        let mut taken = String::new();
        for c in span.content.chars() {
            if col >= from && col < from.saturating_add(len) {
                taken.push(c);
            }
            col += 1;
        }
        if !taken.is_empty() {
            out.push(Span::styled(taken, span.style));
        }
    }
    out
}

/// Whether a snippet line's code part is carets and labels, not code.
fn is_marks(code: &str) -> bool {
    code.trim_start().starts_with(['^', '-', '|', '_'])
}

fn fit_snippet(block: &[Line<'static>], gutter: usize, width: usize) -> Vec<Line<'static>> {
    let room = width.saturating_sub(gutter).max(8);
    let codes: Vec<String> = block.iter().map(|l| plain(l).chars().skip(gutter).collect()).collect();
    if codes.iter().all(|c| c.chars().count() <= room) {
        return block.to_vec();
    }
    let indent = |c: &String| c.chars().take_while(|&ch| ch == ' ').count();
    let common = codes.iter().filter(|c| !c.trim().is_empty()).map(indent).min().unwrap_or(0);
    // The primary carets in view (`^`; else any mark), with a little of
    // the code before them.
    let caret = codes.iter().filter_map(|c| c.find('^').map(|b| c[..b].chars().count())).min();
    let first_mark = caret.or_else(|| codes.iter().filter(|c| is_marks(c)).map(indent).min()).unwrap_or(common);
    let shift = common.max(first_mark.saturating_sub(room / 3));
    let mut out = Vec::new();
    for (line, code) in block.iter().zip(&codes) {
        let mut spans = slice(line, 0, gutter);
        let len = code.chars().count();
        if is_marks(code) {
            // A caret line keeps its alignment; its label goes after the
            // marks if it fits, else wraps under them.
            let chars: Vec<char> = code.chars().collect();
            let marks_end = chars.iter().rposition(|c| matches!(c, '^' | '-' | '_' | '|')).map_or(0, |p| p + 1);
            let label_start = marks_end + chars[marks_end..].iter().take_while(|c| **c == ' ').count();
            spans.extend(slice(line, gutter + shift, marks_end.saturating_sub(shift).min(room)));
            let label = slice(line, gutter + label_start, usize::MAX);
            let label_len: usize = label.iter().map(|s| s.content.chars().count()).sum();
            if label_len > 0 && marks_end.saturating_sub(shift) + 1 + label_len <= room {
                spans.push(Span::raw(" "));
                spans.extend(label);
                out.push(Line::from(spans));
            } else {
                out.push(Line::from(spans));
                if label_len > 0 {
                    let mut hung = vec![Span::raw(" ".repeat(gutter))];
                    hung.extend(label);
                    out.extend(wrap::under_itself(&Line::from(hung), 0, width));
                }
            }
            continue;
        }
        let cut_left = shift > common.min(indent(code)) && len > shift;
        let visible = if cut_left { room - 1 } else { room };
        if cut_left {
            spans.push(Span::raw("…"));
        }
        let from = gutter + shift + usize::from(cut_left);
        if len.saturating_sub(shift + usize::from(cut_left)) > visible {
            spans.extend(slice(line, from, visible - 1));
            spans.push(Span::raw("…"));
        } else {
            spans.extend(slice(line, from, usize::MAX));
        }
        out.push(Line::from(spans));
    }
    out
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
    fn a_snippet_too_wide_shifts_left_as_one_block_and_keeps_its_carets_under_the_code() {
        let rendered = "error[E0308]: mismatched types\n \x1b[1m-->\x1b[0m src/lib.rs:9:58\n  |\n9 |     fn version(&self) -> u64 { self.version as i64 }\n  |        -------                 ^^^^^^^^^^^^^^^^^^^ expected `u64`, found `i64`\n  |\n";
        let lines = text(&to_lines(rendered, 40));
        let code = lines.iter().find(|l| l.starts_with("9 |")).unwrap();
        let carets = lines.iter().find(|l| l.contains('^')).unwrap();
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{lines:#?}");
        // The carets stand under `self.version as i64`, as in the original.
        let col = |l: &str, pat: &str| l.find(pat).map(|b| l[..b].chars().count());
        assert_eq!(col(carets, "^"), col(code, "self.version"), "{lines:#?}");
        assert!(code.contains('…'), "the code cut on the left says so: {code}");
        // The label is kept whole, wrapped under the gutter.
        let all = lines.join("\n");
        assert!(all.contains("expected `u64`,") && all.contains("found `i64`"), "{all}");
        // A snippet that fits is left as it is.
        let narrow = text(&to_lines("  |\n9 |     let x = 1;\n  |         ^ here\n", 40));
        assert_eq!(narrow, vec!["  |", "9 |     let x = 1;", "  |         ^ here"]);
    }

    #[test]
    fn a_wrapped_line_continues_under_its_own_indentation() {
        let lines = to_lines("  \x1b[1m-->\x1b[0m src/lib.rs:9:58 in the function version of the store", 30);
        assert_eq!(text(&lines), vec!["  --> src/lib.rs:9:58 in the", "    function version of the", "    store"]);
    }
}
