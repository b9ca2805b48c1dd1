//! Statements as styled lines: CommonMark parsed by pulldown-cmark
//! (headings, paragraphs, bullet and numbered lists, fenced code, inline
//! `code`, **bold** and *emphasis*), wrapped to the pane's width with
//! hanging indents, so a list item's continuation lines up under its text
//! and a long example line under its own indentation.

use crate::ui::theme::{self, dim};
use pulldown_cmark::{Event, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::ui::wrap;

/// The renderer's state while it walks the events.
struct Render {
    width: usize,
    out: Vec<Line<'static>>,
    /// The inline text of the block being read.
    spans: Vec<Span<'static>>,
    /// Bold and emphasis in force.
    style: Style,
    /// Open lists: the next number of a numbered one, None for bullets.
    lists: Vec<Option<u64>>,
    /// The marker of an item whose first text is still to come.
    marker: Option<String>,
    heading: bool,
    code: bool,
}

impl Render {
    /// Where an item's text starts: two columns per list level, plus the
    /// marker of the innermost one.
    fn indent(&self) -> usize {
        match self.lists.len() {
            0 => 0,
            n => 2 * n + if self.lists[n - 1].is_some() { 3 } else { 2 },
        }
    }

    /// A blank line between top-level blocks (none after a heading).
    fn separate(&mut self) {
        if self.lists.is_empty() && self.out.last().is_some_and(|l| l.width() > 0) && !self.heading {
            self.out.push(Line::default());
        }
    }

    fn flush(&mut self) {
        let spans = std::mem::take(&mut self.spans);
        let indent = self.indent();
        let first = match self.marker.take() {
            Some(m) => vec![Span::styled(format!("{:>w$}", m, w = indent), dim())],
            None if spans.is_empty() => return,
            None => vec![Span::raw(" ".repeat(indent))],
        };
        self.out.extend(wrap::hanging(first, indent, &spans, self.width));
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(Tag::Heading { .. }) => {
                self.separate();
                self.heading = true;
                self.style = theme::heading();
            }
            Event::End(TagEnd::Heading(_)) => {
                self.flush();
                self.style = Style::default();
                // `heading` stays set until the next block starts: no blank after it.
            }
            Event::Start(Tag::Paragraph) => {
                if self.marker.is_none() {
                    self.separate();
                }
                self.heading = false;
            }
            Event::End(TagEnd::Paragraph) => self.flush(),
            Event::Start(Tag::List(first)) => {
                self.flush();
                self.separate();
                self.heading = false;
                self.lists.push(first);
            }
            Event::End(TagEnd::List(_)) => {
                self.flush();
                self.lists.pop();
            }
            Event::Start(Tag::Item) => {
                self.flush();
                let depth = self.lists.len();
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        format!("{}. ", *n - 1)
                    }
                    _ => (if depth <= 1 { "• " } else { "◦ " }).to_string(),
                };
                self.marker = Some(marker);
            }
            Event::End(TagEnd::Item) => self.flush(),
            Event::Start(Tag::CodeBlock(_)) => {
                self.flush();
                self.separate();
                self.heading = false;
                self.code = true;
            }
            Event::End(TagEnd::CodeBlock) => self.code = false,
            Event::Start(Tag::Strong) => self.style = self.style.add_modifier(Modifier::BOLD),
            Event::End(TagEnd::Strong) => self.style = self.style.remove_modifier(Modifier::BOLD),
            Event::Start(Tag::Emphasis) => self.style = self.style.add_modifier(Modifier::ITALIC),
            Event::End(TagEnd::Emphasis) => self.style = self.style.remove_modifier(Modifier::ITALIC),
            Event::Text(text) if self.code => {
                let indent = self.indent() + 2;
                for line in text.lines() {
                    let code =
                        Line::from(vec![Span::raw(" ".repeat(indent)), Span::styled(line.to_string(), theme::info())]);
                    // A long example line continues under its own text.
                    self.out.extend(wrap::under_itself(&code, 2, self.width));
                }
            }
            Event::Text(text) => self.spans.push(Span::styled(text.into_string(), self.style)),
            Event::Code(code) => self.spans.push(Span::styled(code.into_string(), self.style.patch(theme::info()))),
            Event::SoftBreak => self.spans.push(Span::styled(" ", self.style)),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.flush();
                self.out.push(Line::styled("─".repeat(self.width.min(40)), dim()));
            }
            // HTML, footnotes, tables and the rest: their text, plainly.
            Event::Html(t) | Event::InlineHtml(t) => self.spans.push(Span::raw(t.into_string())),
            _ => {}
        }
    }
}

/// Renders Markdown into lines at most `width` columns wide.
pub fn render(md: &str, width: usize) -> Vec<Line<'static>> {
    let mut r = Render {
        width: width.max(12),
        out: Vec::new(),
        spans: Vec::new(),
        style: Style::default(),
        lists: Vec::new(),
        marker: None,
        heading: false,
        code: false,
    };
    for event in Parser::new(md) {
        r.event(event);
    }
    r.flush();
    while r.out.last().is_some_and(|l| l.width() == 0) {
        r.out.pop();
    }
    r.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>()).collect()
    }

    #[test]
    fn paragraphs_join_and_lists_and_code_keep_their_shape() {
        let md = "Intro line one\nline two.\n\n- `put(k)` does\n  a thing\n  - nested\n- **bold** item\n\n1. first\n2. second\n\n### Example\n```text\nput(\"a\", 1) -> 1\n```\n";
        assert_eq!(
            text(&render(md, 80)),
            vec![
                "Intro line one line two.",
                "",
                "  • put(k) does a thing",
                "    ◦ nested",
                "  • bold item",
                "",
                "  1. first",
                "  2. second",
                "",
                "Example",
                "  put(\"a\", 1) -> 1",
            ]
        );
    }

    #[test]
    fn wrapped_items_and_example_lines_hang_under_their_text() {
        let md = "- `get(key) -> Option<i64>`: the value most recently put under `key`\n\n\
                  ```text\nput(\"a\", 10) -> 1   # the first write of the store\n```\n";
        assert_eq!(
            text(&render(md, 30)),
            vec![
                "  • get(key) -> Option<i64>:",
                "    the value most recently",
                "    put under key",
                "",
                "  put(\"a\", 10) -> 1   # the",
                "    first write of the store",
            ]
        );
    }

    #[test]
    fn styles_are_kept_and_unmatched_markers_stay_literal() {
        let lines = render("2 * 3 and a `tick, **bold**", 80);
        assert_eq!(text(&lines), vec!["2 * 3 and a `tick, bold"]);
        assert!(lines[0].spans.iter().any(|s| s.content == "bold" && s.style.add_modifier.contains(Modifier::BOLD)));
    }
}
