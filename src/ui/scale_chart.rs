//! A failing scale check on screen: what was measured against what the
//! statement asks, a log-log chart of cost per operation (or live bytes)
//! against `n`, yours against the reference's, and the numbers.
//!
//! On log-log axes a cost that grows like n^k is a straight line of slope
//! k, so "yours climbs, the reference stays flat" is visible at a glance.

use crate::ui::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Borders, Chart, Dataset, GraphType, Paragraph, Wrap};

use crate::judge::evaluate::GateResult;
use crate::judge::scale::{ScaleResult, size_text};
use crate::ui::results::cost_text;

/// The lines a gate shows for its scale checks, under its own line.
pub fn gate_lines(gate: &GateResult, width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for s in &gate.scale {
        let (mark, style) = if s.passed() { ("✓", theme::ok()) } else { ("✗", theme::bad()) };
        // Read as a sentence, as `check` prints it.
        let text = if s.passed() {
            format!("    {}", crate::ui::results::cost_sentence(s))
        } else {
            format!("    cost: {}: {}", s.name, s.says)
        };
        let mut spans = vec![Span::raw(clip(&text, width.saturating_sub(20))), Span::styled(format!(" {mark}"), style)];
        if !s.passed() {
            spans.push(Span::styled(format!(" {}", s.verdict), style.add_modifier(Modifier::BOLD)));
        }
        lines.push(Line::from(spans));
    }
    for name in &gate.scale_pending {
        lines.push(Line::styled(clip(&format!("    cost: {name} · measuring…"), width), theme::pending()));
    }
    for name in &gate.scale_skipped {
        lines
            .push(Line::styled(clip(&format!("    cost: {name} · measured once the cases pass"), width), theme::dim()));
    }
    lines
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n.saturating_sub(1)).collect::<String>())
    }
}

/// The detail of one failing scale check: message, chart and table.
pub fn draw(frame: &mut Frame, area: Rect, s: &ScaleResult) {
    let block = Block::default().borders(Borders::TOP).border_style(theme::dim()).title(" cost ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let head = vec![
        Line::styled(format!("cost: {}", s.name), Style::default().add_modifier(Modifier::BOLD)),
        Line::from(vec![
            Span::styled(format!("{} ", s.verdict), theme::bad().add_modifier(Modifier::BOLD)),
            Span::raw(s.message.clone()),
        ]),
        Line::from(vec![
            Span::styled(if s.unit == "bytes" { "live bytes" } else { "cost per call" }, theme::dim()),
            Span::styled(" against n, log-log: ", theme::dim()),
            Span::styled("yours", theme::bad()),
            Span::styled(" · ", theme::dim()),
            Span::styled("reference", theme::ok()),
        ]),
    ];
    let table = table_lines(s);
    let head = Paragraph::new(head).wrap(Wrap { trim: false });
    let msg_rows = head.line_count(inner.width) as u16 + 1;
    let [text_area, rest] = Layout::vertical([Constraint::Length(msg_rows), Constraint::Min(0)]).areas(inner);
    frame.render_widget(head, text_area);
    let table_width = table.iter().map(|l| l.width() as u16).max().unwrap_or(0) + 2;
    let table_height = table.len() as u16;
    // The table holds the figures, the chart only draws them: in a narrow
    // pane the chart goes below the table, or goes, and no column is cut.
    if rest.width >= table_width + 20 {
        let [chart_area, table_area] =
            Layout::horizontal([Constraint::Min(20), Constraint::Length(table_width)]).areas(rest);
        frame.render_widget(Paragraph::new(table), table_area);
        draw_chart(frame, chart_area, s);
    } else {
        let [table_area, chart_area] =
            Layout::vertical([Constraint::Length(table_height), Constraint::Min(0)]).areas(rest);
        frame.render_widget(Paragraph::new(table), table_area);
        draw_chart(frame, chart_area, s);
    }
}

fn table_lines(s: &ScaleResult) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(format!("{:>6} {:>10} {:>10}", "n", "yours", "ref"), theme::dim())];
    for p in &s.points {
        let yours = p.yours.map_or("stopped".to_string(), |y| cost_text(&s.unit, y));
        lines.push(Line::from(format!("{:>6} {:>10} {:>10}", size_text(p.n), yours, cost_text(&s.unit, p.reference))));
    }
    lines.push(Line::styled(format!("({})", s.unit), theme::dim()));
    lines
}

fn draw_chart(frame: &mut Frame, area: Rect, s: &ScaleResult) {
    if area.height < 5 || area.width < 20 || s.points.is_empty() {
        return;
    }
    let log = |v: f64| v.max(1.0).log10();
    let yours: Vec<(f64, f64)> = s.points.iter().filter_map(|p| p.yours.map(|y| (log(p.n as f64), log(y)))).collect();
    let reference: Vec<(f64, f64)> = s.points.iter().map(|p| (log(p.n as f64), log(p.reference))).collect();
    let xs: Vec<f64> = reference.iter().map(|p| p.0).collect();
    let ys: Vec<f64> = yours.iter().chain(&reference).map(|p| p.1).collect();
    let (x0, x1) = (xs.iter().copied().fold(f64::MAX, f64::min), xs.iter().copied().fold(f64::MIN, f64::max));
    let (mut y0, mut y1) = (ys.iter().copied().fold(f64::MAX, f64::min), ys.iter().copied().fold(f64::MIN, f64::max));
    if y1 - y0 < 1.0 {
        y1 = y0 + 1.0;
    }
    y0 = (y0 - 0.1).max(0.0);
    let first = s.points.first().map_or(1, |p| p.n);
    let last = s.points.last().map_or(1, |p| p.n);
    let datasets = vec![
        Dataset::default()
            .name("yours")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme::bad())
            .data(&yours),
        Dataset::default()
            .name("reference")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme::ok())
            .data(&reference),
    ];
    let label = |v: f64| cost_text(&s.unit, 10f64.powf(v));
    let chart = Chart::new(datasets)
        .x_axis(
            Axis::default()
                .bounds([x0, x1.max(x0 + 0.1)])
                .labels([size_text(first), size_text(last)])
                .style(theme::dim()),
        )
        .y_axis(Axis::default().bounds([y0, y1]).labels([label(y0), label(y1)]).style(theme::dim()));
    frame.render_widget(chart, area);
}

#[cfg(test)]
mod tests {
    use crate::judge::verdict::Verdict;
    use crate::ui::results::cost_sentence;
    use crate::ui::results::tests::{gate, scale};

    #[test]
    fn a_passing_cost_line_under_its_gate_reads_as_checks_sentence() {
        let s = scale("memory after n jobs", "memory holds at most capacity queued jobs", Verdict::Pass);
        let g = gate(3, 3, vec![s], &[]);
        let text: String = super::gate_lines(&g, 200)[0].spans.iter().map(|s| s.content.as_ref()).collect();
        assert!(text.contains(&cost_sentence(&g.scale[0])), "{text}");
    }
}
