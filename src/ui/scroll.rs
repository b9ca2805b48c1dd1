//! Scrolled panes that stop at their last line.
//!
//! A pane's offset lives in the app's state, but only the view knows how
//! many lines the pane's text wraps to at the current size. So each draw
//! records the furthest the pane may scroll (its last line at the bottom),
//! and keys move the offset within that: PgDn past the end stays on the
//! last page, and PgUp after it moves at once, whatever the terminal's
//! size was when the keys were pressed.

use std::cell::Cell;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Wrap};

/// One pane's scroll offset, clamped to what its last draw could show.
#[derive(Debug)]
pub struct Scroll {
    offset: u16,
    /// The largest useful offset at the last draw (unbounded before one).
    max: Cell<u16>,
}

impl Default for Scroll {
    fn default() -> Self {
        Scroll { offset: 0, max: Cell::new(u16::MAX) }
    }
}

impl Scroll {
    /// The offset to draw with.
    pub fn offset(&self) -> u16 {
        self.offset.min(self.max.get())
    }

    /// Moves by `d` lines, within `0..=max`.
    pub fn by(&mut self, d: i32) {
        let max = self.max.get() as i32;
        self.offset = (self.offset() as i32 + d).clamp(0, max) as u16;
    }

    /// Back to the first line.
    pub fn top(&mut self) {
        self.offset = 0;
    }

    /// Records that `lines` lines are shown `height` at a time.
    pub fn fit(&self, lines: usize, height: u16) {
        let max = lines.saturating_sub(height as usize).min(u16::MAX as usize) as u16;
        self.max.set(max);
    }

    /// Draws `lines` word-wrapped in `area` (inside `block`, if any) at this
    /// offset, and records how far the pane can scroll.
    pub fn render(&self, frame: &mut Frame, area: Rect, lines: Vec<Line<'static>>, block: Option<Block<'static>>) {
        let inner = block.as_ref().map_or(area, |b| b.inner(area));
        let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
        self.fit(paragraph.line_count(inner.width), inner.height);
        let paragraph = match block {
            Some(b) => paragraph.block(b),
            None => paragraph,
        };
        frame.render_widget(paragraph.scroll((self.offset(), 0)), area);
    }
}

impl Scroll {
    /// As [`Scroll::render`], but lines are clipped rather than wrapped
    /// (code, whose indentation and diff signs a wrap would lose).
    pub fn render_clipped(&self, frame: &mut Frame, area: Rect, lines: Vec<Line<'static>>, block: Block<'static>) {
        self.fit(lines.len(), block.inner(area).height);
        frame.render_widget(Paragraph::new(lines).block(block).scroll((self.offset(), 0)), area);
    }
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::widgets::Borders;

    use super::*;

    fn draw(scroll: &Scroll, width: u16, height: u16, lines: usize) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        let text: Vec<Line<'static>> = (1..=lines).map(|i| Line::from(format!("line {i}"))).collect();
        terminal.draw(|f| scroll.render(f, f.area(), text, Some(Block::default().borders(Borders::ALL)))).unwrap();
        let buffer = terminal.backend().buffer().clone();
        let rows: Vec<String> =
            (0..height).map(|y| (0..width).map(|x| buffer[(x, y)].symbol().to_string()).collect::<String>()).collect();
        rows.join("\n")
    }

    #[test]
    fn paging_down_stops_at_the_last_line() {
        // 30 lines, 8 visible inside the borders: the last offset is 22.
        let mut s = Scroll::default();
        draw(&s, 20, 10, 30);
        for _ in 0..9 {
            s.by(10);
        }
        assert_eq!(s.offset(), 22);
        let screen = draw(&s, 20, 10, 30);
        assert!(screen.contains("line 30"), "{screen}");
        assert!(screen.contains("line 23"), "{screen}");
        // One PgUp after overshooting moves at once.
        s.by(-10);
        assert_eq!(s.offset(), 12);
    }

    #[test]
    fn a_larger_screen_after_scrolling_still_shows_text() {
        let mut s = Scroll::default();
        draw(&s, 20, 10, 30);
        s.by(100);
        // Grown to 45 rows: everything fits, so the pane shows from the top.
        let screen = draw(&s, 20, 45, 30);
        assert!(screen.contains("line 1 "), "{screen}");
        assert_eq!(s.offset(), 0);
        s.by(-1);
        assert_eq!(s.offset(), 0);
    }

    #[test]
    fn wrapped_lines_count_at_the_inner_width() {
        let s = Scroll::default();
        // "line N" is 6-7 wide; inside borders of a 6-wide pane the inner
        // width is 4, so every line wraps into two.
        draw(&s, 6, 6, 5);
        assert_eq!(s.max.get(), 10 - 4);
    }
}
