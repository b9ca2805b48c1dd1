//! A small Markdown renderer for statements: headings, paragraphs (joined,
//! so the terminal wraps them to the pane), bullet and numbered lists,
//! fenced code, and inline `code`, **bold** and *emphasis*.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

/// Renders Markdown into lines for a `Paragraph` with wrapping on.
pub fn render(md: &str) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = Vec::new();
    let mut para: Option<(String, String)> = None; // (prefix, text)
    let mut in_code = false;
    let flush = |para: &mut Option<(String, String)>, out: &mut Vec<Line<'static>>| {
        if let Some((prefix, text)) = para.take() {
            let mut spans = vec![Span::styled(prefix, Style::default().fg(Color::DarkGray))];
            spans.extend(inline(&text));
            out.push(Line::from(spans));
        }
    };
    for raw in md.lines() {
        let line = raw.trim_end();
        if line.trim_start().starts_with("```") {
            flush(&mut para, &mut out);
            in_code = !in_code;
            continue;
        }
        if in_code {
            out.push(Line::from(Span::styled(format!("  {line}"), Style::default().fg(Color::Cyan))));
            continue;
        }
        let trimmed = line.trim_start();
        if trimmed.is_empty() {
            flush(&mut para, &mut out);
            if out.last().is_some_and(|l| !l.spans.is_empty()) {
                out.push(Line::default());
            }
            continue;
        }
        if let Some(level) = heading_level(trimmed) {
            flush(&mut para, &mut out);
            let text = trimmed[level..].trim().to_string();
            let style = Style::default().add_modifier(Modifier::BOLD).fg(Color::Yellow);
            out.push(Line::from(Span::styled(text, style)));
            continue;
        }
        // Nested items (indented by two or more spaces) are indented more.
        let depth = (line.len() - trimmed.len()) / 2;
        let indent = "  ".repeat(depth + 1);
        if let Some(rest) = trimmed.strip_prefix("- ").or_else(|| trimmed.strip_prefix("* ")) {
            flush(&mut para, &mut out);
            let bullet = if depth == 0 { "•" } else { "◦" };
            para = Some((format!("{indent}{bullet} "), rest.to_string()));
            continue;
        }
        if let Some((num, rest)) = numbered(trimmed) {
            flush(&mut para, &mut out);
            para = Some((format!("{indent}{num}. "), rest.to_string()));
            continue;
        }
        match &mut para {
            Some((_, text)) => {
                text.push(' ');
                text.push_str(trimmed);
            }
            None => para = Some((String::new(), trimmed.to_string())),
        }
    }
    flush(&mut para, &mut out);
    while out.last().is_some_and(|l| l.spans.is_empty()) {
        out.pop();
    }
    out
}

fn heading_level(s: &str) -> Option<usize> {
    let n = s.chars().take_while(|&c| c == '#').count();
    (1..=6).contains(&n).then_some(n).filter(|&n| s[n..].starts_with(' '))
}

fn numbered(s: &str) -> Option<(&str, &str)> {
    let digits = s.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    s[digits..].strip_prefix(". ").map(|rest| (&s[..digits], rest))
}

/// Inline markup: `code`, **bold**, *emphasis*.
pub fn inline(text: &str) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    let mut plain = String::new();
    let mut rest = text;
    let push_plain = |plain: &mut String, spans: &mut Vec<Span<'static>>| {
        if !plain.is_empty() {
            spans.push(Span::raw(std::mem::take(plain)));
        }
    };
    while let Some(c) = rest.chars().next() {
        let (marker, style) = match c {
            '`' => ("`", Style::default().fg(Color::Cyan)),
            '*' if rest.starts_with("**") => ("**", Style::default().add_modifier(Modifier::BOLD)),
            '*' => ("*", Style::default().add_modifier(Modifier::ITALIC)),
            _ => {
                plain.push(c);
                rest = &rest[c.len_utf8()..];
                continue;
            }
        };
        let body = &rest[marker.len()..];
        match body.find(marker) {
            Some(end) if end > 0 => {
                push_plain(&mut plain, &mut spans);
                spans.push(Span::styled(body[..end].to_string(), style));
                rest = &body[end + marker.len()..];
            }
            _ => {
                plain.push_str(marker);
                rest = body;
            }
        }
    }
    push_plain(&mut plain, &mut spans);
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    #[test]
    fn paragraphs_join_and_lists_and_code_keep_their_shape() {
        let md = "Intro line one\nline two.\n\n- `put(k)` does\n  a thing\n  - nested\n- **bold** item\n\n### Example\n```text\nput(\"a\", 1) -> 1\n```\n";
        assert_eq!(
            text(&render(md)),
            vec![
                "Intro line one line two.",
                "",
                "  • put(k) does a thing",
                "    ◦ nested",
                "  • bold item",
                "",
                "Example",
                "  put(\"a\", 1) -> 1",
            ]
        );
    }

    #[test]
    fn unmatched_markers_stay_literal() {
        let spans = inline("2 * 3 and a `tick");
        let joined: String = spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(joined, "2 * 3 and a `tick");
    }
}
