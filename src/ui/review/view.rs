//! Drawing the review: a pure function of the [`Review`] state.

use crate::ui::theme::{self, bold, dim, truncate};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Cell, Chart, Dataset, GraphType, Paragraph, Row, Table, TableState, Tabs, Wrap};

use super::app::{Review, Screen, TABS, Tab};
use super::data::{self, DiffKind, Mark};
use crate::base::fsio::clock;
use crate::session::report::Report;
use crate::session::state::SourceFile;
use crate::ui::scroll::Scroll;

pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 16;
/// Width of the lane labels of the timeline.
const LABEL_WIDTH: usize = 13;

pub fn draw(frame: &mut Frame, app: &Review) {
    if crate::ui::practice::view::too_small(frame, MIN_WIDTH, MIN_HEIGHT) {
        return;
    }
    let area = frame.area();
    match (app.screen, app.current()) {
        (Screen::Detail, Some(r)) => draw_detail(frame, app, r, area),
        (Screen::Progress, _) => draw_progress(frame, app, area),
        _ => draw_list(frame, app, area),
    }
}

fn pane(title: String) -> Block<'static> {
    theme::pane(Line::from(Span::styled(format!(" {title} "), bold())), false)
}

fn footer(frame: &mut Frame, area: Rect, keys: &[(&str, &str)]) {
    // Too narrow for all: the keys before the last (quit) go, from the end.
    let mut keys = keys.to_vec();
    let width =
        |keys: &[(&str, &str)]| keys.iter().map(|(k, l)| k.chars().count() + l.chars().count() + 4).sum::<usize>();
    while width(&keys) > area.width as usize && keys.len() > 2 {
        keys.remove(keys.len() - 2);
    }
    let mut spans = Vec::new();
    for (k, label) in keys {
        spans.push(Span::styled(format!(" {k} "), theme::key_cap()));
        spans.push(Span::raw(format!(" {label}  ")));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn score_text(score: Option<f64>) -> String {
    score.map_or_else(|| "—".to_string(), |s| format!("{s:.1}"))
}

fn draw_list(frame: &mut Frame, app: &Review, area: Rect) {
    let skipped = app.broken.len().min(4) as u16;
    let skipped_height = if skipped > 0 { skipped + 2 } else { 0 };
    let [header, body, skipped_area, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(skipped_height),
        Constraint::Length(1),
    ])
    .areas(area);
    let count = match app.reports.len() {
        1 => "1 session".to_string(),
        n => format!("{n} sessions"),
    };
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(" Reports ", bold()),
            Span::styled(format!("· {count}, newest first"), dim()),
        ])),
        header,
    );
    let block = pane("Sessions".into());
    if app.reports.is_empty() {
        let text = "No reports yet: every `harness start` or `harness mock` session writes one.";
        frame.render_widget(Paragraph::new(text).block(block).wrap(Wrap { trim: true }), body);
    } else {
        let pw = app.reports.iter().map(|r| r.problem.len()).max().unwrap_or(0).max(7) as u16;
        // Every column at its full width when it fits (borders and the
        // highlight mark take 4); else a date without the year and single
        // spacing; else no time or score columns, and the problem takes what
        // is left (the detail has the rest). Never a cut "in progres".
        let columns = 8 + 11 + 5 + 8 + 5 + pw;
        let wide = body.width >= 16 + columns + 2 * 6 + 4;
        let narrow = !wide && body.width < 11 + columns + 6 + 4;
        let rows: Vec<Row> = app
            .reports
            .iter()
            .map(|r| {
                let row = data::row(r);
                let status_style = match row.status {
                    "completed" => theme::ok(),
                    "abandoned" => dim(),
                    "time up" => theme::bad(),
                    _ => theme::pending(),
                };
                let mut cells = vec![
                    Cell::from(if wide { row.date } else { row.date[5..].to_string() }),
                    Cell::from(row.problem),
                    Cell::from(row.mode),
                    Cell::from(Span::styled(row.status, status_style)),
                    Cell::from(Line::from(row.gates).right_aligned()),
                    Cell::from(Line::from(row.time).right_aligned()),
                    Cell::from(Line::from(score_text(row.score)).right_aligned()),
                ];
                if narrow {
                    cells.truncate(5);
                }
                Row::new(cells)
            })
            .collect();
        let mut names = vec!["date", "problem", "mode", "status", "gates", "time", "score"];
        let widths = if narrow {
            names.truncate(5);
            vec![
                Constraint::Length(11),
                Constraint::Fill(1),
                Constraint::Length(8),
                Constraint::Length(11),
                Constraint::Length(5),
            ]
        } else {
            vec![
                Constraint::Length(if wide { 16 } else { 11 }),
                Constraint::Length(pw),
                Constraint::Length(8),
                Constraint::Length(11),
                Constraint::Length(5),
                Constraint::Length(8),
                Constraint::Length(5),
            ]
        };
        let header_row = Row::new(names).style(dim());
        let table = Table::new(rows, widths)
            .header(header_row)
            .block(block)
            .column_spacing(if wide { 2 } else { 1 })
            .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED))
            .highlight_symbol("› ");
        let mut state = TableState::default().with_selected(Some(app.selected));
        frame.render_stateful_widget(table, body, &mut state);
    }
    if skipped > 0 {
        draw_skipped(frame, app, skipped_area);
    }
    footer(frame, foot, &[("↑↓", "select"), ("Enter", "open"), ("p", "progress"), ("q", "quit")]);
}

/// The report files that could not be read, named with the reason; at
/// most four rows.
fn draw_skipped(frame: &mut Frame, app: &Review, area: Rect) {
    let mut lines: Vec<Line> = app
        .broken
        .iter()
        .take(if app.broken.len() > 4 { 3 } else { 4 })
        .map(|(path, why)| {
            let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into());
            Line::from(vec![Span::styled(name, theme::pending()), Span::styled(format!(" — {why}"), dim())])
        })
        .collect();
    if app.broken.len() > 4 {
        lines.push(Line::styled(format!("… and {} more (see `harness report --list`)", app.broken.len() - 3), dim()));
    }
    frame.render_widget(Paragraph::new(lines).block(pane("Skipped: unreadable report files".into())), area);
}

fn draw_detail(frame: &mut Frame, app: &Review, r: &Report, area: Rect) {
    let [header, tabs_area, body, foot] =
        Layout::vertical([Constraint::Length(2), Constraint::Length(1), Constraint::Min(5), Constraint::Length(1)])
            .areas(area);
    let [top, bottom] = Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(header);
    let started = format!("{} UTC ", data::date(r.started_at_ms));
    let [left, right] =
        Layout::horizontal([Constraint::Min(10), Constraint::Length(started.chars().count() as u16)]).areas(top);
    // The title, then mode and status, then the id: whatever fits whole.
    let room = left.width as usize;
    let name = format!(" {} ", r.title);
    let mut used = name.chars().count();
    let mut spans = vec![Span::styled(truncate(&name, room), bold())];
    for extra in [format!("· {} · {} ", data::mode_label(r.mode), data::status_label(r)), format!("· {} ", r.problem)]
    {
        if used + extra.chars().count() <= room {
            used += extra.chars().count();
            spans.push(Span::styled(extra, dim()));
        }
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), left);
    frame.render_widget(Paragraph::new(Span::styled(started, dim())), right);
    let mut facts = vec![Span::styled(format!(" gates {}/{} ", r.gates_passed, r.gate_count), bold())];
    facts.push(Span::raw(format!(
        "· {} of {}{}",
        clock(r.elapsed_ms),
        clock(r.budget_ms),
        if r.overtime { " (went into overtime)" } else { "" }
    )));
    if let Some(s) = &r.score {
        facts.push(Span::raw(" · "));
        facts.push(Span::styled(format!("score {:.1}", s.total), theme::strong(theme::info())));
    }
    frame.render_widget(Paragraph::new(Line::from(facts)), bottom);

    let selected = TABS.iter().position(|(t, _)| *t == app.tab).unwrap_or(0);
    let titles: Vec<String> = TABS.iter().enumerate().map(|(i, (_, name))| format!("{} {name}", i + 1)).collect();
    // Each title padded by a space each side, and a divider between: in a
    // narrow window the left spaces go, so every title stays whole.
    let full: usize = titles.iter().map(|t| t.chars().count() + 3).sum::<usize>() - 1;
    let mut tabs = Tabs::new(titles)
        .select(selected)
        .highlight_style(theme::strong(theme::info()).add_modifier(Modifier::REVERSED));
    if (tabs_area.width as usize) < full {
        tabs = tabs.padding("", " ");
    }
    frame.render_widget(tabs, tabs_area);
    let mut keys: Vec<(&str, &str)> = vec![("Tab", "next tab")];
    match app.tab {
        Tab::Overview => {
            draw_overview(frame, app, r, body);
            keys.push(("j/k", "scroll"));
        }
        Tab::Failures => {
            draw_failures(frame, app, r, body);
            keys.push(("j/k", "scroll"));
        }
        Tab::Code => {
            draw_code(frame, app, r, body);
            keys.extend([("←→", "gate"), ("d", if app.show_source { "diff" } else { "source" }), ("j/k", "scroll")]);
        }
        Tab::Followups => {
            draw_followups(frame, app, body);
            keys.extend([("j/k", "question"), ("Space", "reveal answer")]);
        }
        Tab::Reference => {
            draw_reference(frame, app, r, body);
            keys.extend([("←→", "gate"), ("j/k", "scroll")]);
        }
    }
    keys.extend([("p", "progress"), ("Esc", "back"), ("q", "quit")]);
    footer(frame, foot, &keys);
}

/// Renders `lines` in a pane, scrolled, without scrolling past the end.
fn scrolled(frame: &mut Frame, area: Rect, title: String, lines: Vec<Line<'static>>, scroll: &Scroll) {
    scroll.render(frame, area, lines, Some(pane(title)));
}

fn mark_style(m: Mark) -> Style {
    match m {
        Mark::Save => dim(),
        Mark::BuildOk => theme::ok(),
        Mark::BuildFailed => theme::bad().add_modifier(Modifier::BOLD),
        Mark::Run { share } if share >= 1.0 => theme::ok(),
        Mark::Run { .. } => theme::pending(),
        Mark::GatePassed(_) => theme::ok().add_modifier(Modifier::BOLD),
        Mark::Regression(_) => theme::alarm(),
        Mark::Hint => theme::hint(),
        Mark::Target(_) => theme::info(),
        Mark::BudgetEnd | Mark::Closed => dim(),
        Mark::Interrupted => theme::bad().add_modifier(Modifier::BOLD),
    }
}

/// The timeline chart, `width` columns including the lane labels.
pub fn timeline_lines(r: &Report, width: usize) -> Vec<Line<'static>> {
    let chart = width.saturating_sub(LABEL_WIDTH).max(10);
    let t = data::timeline(r, chart);
    let mut lines: Vec<Line<'static>> = t
        .lanes
        .iter()
        .map(|lane| {
            let mut spans = vec![Span::styled(format!("{:<LABEL_WIDTH$}", lane.label), dim())];
            for cell in &lane.cells {
                spans.push(match cell {
                    Some(m) => Span::styled(m.symbol().to_string(), mark_style(*m)),
                    None => Span::raw(" "),
                });
            }
            Line::from(spans)
        })
        .collect();
    let (rule, labels) = data::axis(&t, chart);
    lines.push(Line::styled(format!("{:LABEL_WIDTH$}{rule}", ""), dim()));
    lines.push(Line::styled(format!("{:LABEL_WIDTH$}{labels}", ""), dim()));
    lines
}

/// Each gate's time against its target as a bar: `█` the time spent on
/// the gate, `│` where its target falls.
pub fn gate_lines(r: &Report, width: usize) -> Vec<Line<'static>> {
    let timings = data::gate_timings(r);
    let scale = timings.iter().map(|t| t.spent_ms.unwrap_or(0).max(t.target_spent_ms)).max().unwrap_or(0);
    let title_width = 22;
    let bar_width = width.saturating_sub(title_width + 5 + 30).clamp(8, 40);
    timings
        .iter()
        .map(|t| {
            let mut spans = vec![
                Span::styled(format!("g{} ", t.gate), bold()),
                Span::raw(format!("{:<title_width$} ", truncate(&t.title, title_width))),
            ];
            let Some(spent) = t.spent_ms else {
                // A gate never drawn has no target to show (and no title).
                let text = if t.target_spent_ms == 0 {
                    "not reached".to_string()
                } else {
                    format!("not reached (target {})", clock(t.target_spent_ms))
                };
                spans.push(Span::styled(text, dim()));
                return Line::from(spans);
            };
            let bar = match (t.passed, spent <= t.target_spent_ms) {
                (true, true) => theme::ok(),
                (true, false) => theme::bad(),
                (false, _) => theme::pending(),
            };
            let (filled, target_col) = data::bar(spent, t.target_spent_ms, scale, bar_width);
            for c in 0..bar_width {
                spans.push(if c == target_col {
                    Span::styled("│", theme::strong(theme::info()))
                } else if c < filled {
                    Span::styled("█", bar)
                } else {
                    Span::styled("░", dim())
                });
            }
            spans.push(Span::raw(format!(" {} / {}", clock(spent), clock(t.target_spent_ms))));
            let verdict = if t.passed { data::against_target(t).unwrap_or_default() } else { "not passed".to_string() };
            spans.push(Span::styled(format!("  {verdict}"), bar));
            Line::from(spans)
        })
        .collect()
}

fn draw_overview(frame: &mut Frame, app: &Review, r: &Report, area: Rect) {
    let width = area.width.saturating_sub(2) as usize;
    let mut lines: Vec<Line<'static>> = Vec::new();
    if let Some(score) = &r.score {
        lines.push(Line::styled(
            format!("Score {:.1} of 100 (+ up to 10 for finishing early)", score.total),
            theme::strong(theme::info()),
        ));
        for l in &score.breakdown {
            lines.push(Line::from(format!("  • {l}")));
        }
        lines.push(Line::default());
    }
    lines.push(Line::styled("Timeline", bold()));
    lines.extend(timeline_lines(r, width));
    lines.push(Line::default());
    lines
        .push(Line::from(vec![Span::styled("Time on each gate ", bold()), Span::styled("(█ spent, │ target)", dim())]));
    lines.extend(gate_lines(r, width));
    lines.push(Line::default());
    lines.push(Line::styled("Work per gate", bold()));
    let plural = |n: u32, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    for g in r.gates.iter().filter(|g| g.reached) {
        lines.push(Line::from(vec![
            Span::styled(format!("g{} ", g.shown()), bold()),
            Span::raw(format!(
                "{} ({} failed) · {} · {} · {}",
                plural(g.builds, "build", "builds"),
                g.failed_builds,
                plural(g.test_runs, "test run", "test runs"),
                plural(g.hints_used, "hint", "hints"),
                plural(g.regressions, "regression", "regressions"),
            )),
        ]));
    }
    lines.extend(number_lines(r));
    lines.extend(ninety_lines(r));
    scrolled(frame, area, "Overview".into(), lines, &app.scroll);
}

/// The answers of the first ninety seconds, next to how gate 3 went.
pub fn ninety_lines(r: &Report) -> Vec<Line<'static>> {
    let Some(answers) = &r.first_ninety else { return Vec::new() };
    let mut lines = vec![Line::default(), Line::styled("The first ninety seconds", bold())];
    for a in answers {
        let said = if a.answer.is_empty() { "(no answer)".to_string() } else { a.answer.clone() };
        lines.push(Line::from(vec![Span::styled(format!("  {} ", a.question), dim()), Span::raw(said)]));
    }
    if let Some(outcome) = r.gate_3_outcome() {
        lines.push(Line::from(format!("  and then {outcome}")));
    }
    lines
}

/// The seed's yardsticks for this session: throughput, size, and per gate
/// additive or rewrite and where the time went.
pub fn number_lines(r: &Report) -> Vec<Line<'static>> {
    use crate::session::metrics::{self, Shape};
    let Some(m) = &r.metrics else { return Vec::new() };
    let (lo, hi) = metrics::YARDSTICK_SIZE;
    let mut lines = vec![
        Line::default(),
        Line::styled("Numbers", bold()),
        Line::from(format!(
            "  throughput {} · size {}",
            metrics::throughput_text(m.lines_per_10_min),
            m.solution_lines.map_or("—".to_string(), |n| format!("{n} lines ({lo}–{hi} typical)"))
        )),
    ];
    let t = |ms: Option<u64>| ms.map_or("—".to_string(), clock);
    for g in &m.gates {
        let shape = match g.shape {
            Some(Shape::Rewrite) => Span::styled("rewrite  ", theme::bad()),
            Some(s) => Span::styled(format!("{:<9}", s.label()), theme::ok()),
            None => Span::styled("—        ", dim()),
        };
        lines.push(Line::from(vec![
            Span::styled(format!("g{} ", g.gate), bold()),
            shape,
            Span::raw(format!(
                "{} · {} · builds {} · first pass {} · failing {}",
                if g.shape.is_some() {
                    format!("+{} ~{} −{} lines", g.added, g.changed, g.removed)
                } else {
                    "—".into()
                },
                g.lines_per_10_min.map_or("—".to_string(), |r| format!("{r:.0}/10 min")),
                t(g.first_build_ok_ms),
                t(g.first_case_ms),
                clock(g.failing_build_ms)
            )),
        ]));
    }
    lines.push(Line::styled(
        format!(
            "  lines +added ~changed −removed since the gate before, and per 10 minutes (the seed's pace: {1:.0}) · \
             builds, first pass: the first compiling build and passing case, from the gate's start · failing: time \
             spent with the build failing · rewrite: more than {0:.0} % of the previous gate's code changed or removed",
            metrics::REWRITE_SHARE * 100.0,
            metrics::YARDSTICK_LINES_PER_10_MIN
        ),
        dim(),
    ));
    lines
}

/// The last run: build errors, per-gate counts, and each failing case
/// with its transcript diff.
pub fn failure_lines(r: &Report) -> Vec<Line<'static>> {
    let mut lines = last_run_lines(r);
    lines.extend(met_lines(r));
    lines
}

/// Every distinct failure the session met, first met first: gate, case,
/// verdict, when, how many runs showed it, and whether it is fixed.
fn met_lines(r: &Report) -> Vec<Line<'static>> {
    if r.met.is_empty() {
        return Vec::new();
    }
    let fixed = r.met.iter().filter(|m| m.fixed(r.last_run.as_ref())).count();
    let mut lines = vec![
        Line::default(),
        Line::styled(
            format!(
                "Met on the way: {} distinct failure{}, {fixed} fixed by the end",
                r.met.len(),
                if r.met.len() == 1 { "" } else { "s" }
            ),
            bold(),
        ),
    ];
    for m in &r.met {
        let f = &m.failure;
        let ok = m.fixed(r.last_run.as_ref());
        let runs = if m.runs == 1 { "1 run".to_string() } else { format!("{} runs", m.runs) };
        lines.push(Line::from(vec![
            Span::styled(
                format!("{} g{} ", if ok { "✓" } else { "✗" }, f.gate),
                theme::strong(if ok { theme::ok() } else { theme::bad() }),
            ),
            Span::styled(f.case.clone(), bold()),
            Span::styled(format!(" — {}", f.verdict), theme::bad()),
            Span::styled(
                format!(
                    "  at {} · {runs}{}",
                    crate::base::fsio::clock(m.first_at_ms.saturating_sub(r.started_at_ms)),
                    if ok { " · fixed" } else { "" }
                ),
                dim(),
            ),
        ]));
        lines.push(Line::styled(format!("  {}", f.message), dim()));
    }
    lines
}

fn last_run_lines(r: &Report) -> Vec<Line<'static>> {
    let Some(run) = &r.last_run else {
        return vec![Line::styled("No run was judged in this session.", dim())];
    };
    let mut lines = Vec::new();
    if !run.build_ok {
        lines.push(Line::styled("✗ The build failed", theme::strong(theme::bad())));
        for e in &run.build_errors {
            lines.extend(e.lines().map(|l| Line::from(l.to_string())));
        }
        lines.push(Line::default());
    }
    for &(gate, passed, total) in &run.gates {
        let ok = total > 0 && passed == total;
        let style = if ok { theme::ok() } else { theme::bad() };
        lines.push(Line::from(vec![
            Span::styled(format!("{} gate {gate} ", if ok { "✓" } else { "✗" }), style.add_modifier(Modifier::BOLD)),
            Span::styled(format!("{passed}/{total}"), style),
        ]));
    }
    if run.failures.is_empty() {
        if run.build_ok {
            lines.push(Line::default());
            lines.push(Line::styled("No failing case in the last run.", theme::ok()));
        }
        return lines;
    }
    for f in &run.failures {
        lines.push(Line::default());
        lines.push(Line::from(vec![
            Span::styled(format!("✗ g{} ", f.gate), theme::strong(theme::bad())),
            Span::styled(f.case.clone(), bold()),
            Span::styled(format!(" — {}", f.verdict), theme::bad()),
        ]));
        lines.push(Line::from(format!("  {}", f.message)));
        if let Some(n) = f.shrunk_from {
            lines.push(Line::styled(
                format!("  shrunk from {n} to {} operations", f.ops.len().saturating_sub(1)),
                dim(),
            ));
        }
        for d in &f.diff {
            let style = if d.starts_with('-') {
                theme::bad()
            } else if d.starts_with('+') {
                theme::ok()
            } else {
                Style::default()
            };
            lines.push(Line::styled(format!("    {d}"), style));
        }
    }
    lines.push(Line::default());
    lines.push(Line::styled("(- expected, + the solution's)", dim()));
    lines
}

fn draw_failures(frame: &mut Frame, app: &Review, r: &Report, area: Rect) {
    let title = match r.last_run.as_ref().map(|run| run.failures.len()) {
        Some(n) if n > 0 => format!("The last run: {n} failing case{}", if n == 1 { "" } else { "s" }),
        _ => "The last run".to_string(),
    };
    // Wrapped rows hang under their own text: a long case name under the
    // name, a long transcript line under its operation.
    let width = area.width.saturating_sub(2) as usize;
    let lines = failure_lines(r).iter().flat_map(|l| crate::ui::wrap::under_itself(l, 2, width)).collect();
    scrolled(frame, area, title, lines, &app.scroll);
}

fn diff_line(kind: DiffKind, text: &str) -> Line<'static> {
    match kind {
        DiffKind::File => Line::styled(text.to_string(), theme::heading()),
        DiffKind::Hunk => Line::styled(text.to_string(), theme::info()),
        DiffKind::Context => Line::from(format!("  {text}")),
        DiffKind::Removed => Line::styled(format!("- {text}"), theme::bad()),
        DiffKind::Added => Line::styled(format!("+ {text}"), theme::ok()),
    }
}

fn draw_code(frame: &mut Frame, app: &Review, r: &Report, area: Rect) {
    let snaps = data::snapshots(r);
    if snaps.is_empty() {
        let text = "No gate passed, so the report keeps no snapshot of the solution.";
        frame.render_widget(Paragraph::new(text).block(pane("Code".into())).wrap(Wrap { trim: true }), area);
        return;
    }
    let index = app.code_index.min(snaps.len() - 1);
    let [list_area, content_area] = Layout::horizontal([Constraint::Length(24), Constraint::Min(20)]).areas(area);
    let mut items = Vec::new();
    for (i, (gate, at, files)) in snaps.iter().enumerate() {
        let stat = match i.checked_sub(1).map(|p| data::diff_stat(&data::source_diff(snaps[p].2, files))) {
            Some((added, removed)) => format!("+{added} −{removed}"),
            None => "whole source".to_string(),
        };
        let style = if i == index { Style::default().add_modifier(Modifier::REVERSED) } else { Style::default() };
        items.push(Line::from(vec![
            Span::styled(if i == index { "› " } else { "  " }, style),
            Span::styled(format!("gate {gate} {}", at.map_or_else(String::new, clock)), style),
        ]));
        items.push(Line::styled(format!("    {stat}"), dim()));
    }
    frame.render_widget(Paragraph::new(items).block(pane("Gate passes".into())), list_area);

    let (gate, _, files) = snaps[index];
    let previous = index.checked_sub(1).map(|p| snaps[p]);
    let (title, lines) = match previous {
        Some((from, _, old)) if !app.show_source => {
            let diff = data::source_diff(old, files);
            let mut lines: Vec<Line<'static>> = diff.iter().map(|l| diff_line(l.kind, &l.text)).collect();
            if lines.is_empty() {
                lines.push(Line::styled("No change: the same source passed both gates.", dim()));
            }
            (format!("What changed from gate {from} to gate {gate}"), lines)
        }
        _ => {
            let mut lines = Vec::new();
            // The Rust sources first: the manifest rarely changes.
            let mut files: Vec<&SourceFile> = files.iter().collect();
            files.sort_by_key(|f| (!f.path.ends_with(".rs"), f.path.clone()));
            for f in files {
                lines.push(Line::styled(f.path.clone(), theme::heading()));
                for (n, l) in f.content.lines().enumerate() {
                    lines.push(Line::from(vec![
                        Span::styled(format!("{:>4} │ ", n + 1), dim()),
                        Span::raw(l.to_string()),
                    ]));
                }
                lines.push(Line::default());
            }
            (format!("The solution when gate {gate} passed"), lines)
        }
    };
    // Code is clipped, not wrapped: a wrapped line would lose its indentation and its diff sign.
    app.scroll.render_clipped(frame, content_area, lines, pane(title));
}

fn draw_reference(frame: &mut Frame, app: &Review, r: &Report, area: Rect) {
    let entries = data::reference_entries(r);
    if entries.is_empty() {
        let text = data::no_reference_reason(r);
        frame.render_widget(Paragraph::new(text).block(pane("Reference".into())).wrap(Wrap { trim: true }), area);
        return;
    }
    let index = app.reference_index.min(entries.len() - 1);
    let [list_area, content_area] = Layout::horizontal([Constraint::Length(24), Constraint::Min(20)]).areas(area);
    let mut items = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let style = if i == index { Style::default().add_modifier(Modifier::REVERSED) } else { Style::default() };
        let (label, note) = match entry {
            data::ReferenceEntry::Whole => ("the reference".to_string(), "    gates reached".to_string()),
            data::ReferenceEntry::AtGate(p) => {
                let (added, removed) = data::against_reference(r, *p).map_or((0, 0), |d| data::diff_stat(&d));
                (format!("yours at gate {p}"), format!("    +{added} −{removed}"))
            }
        };
        items.push(Line::from(vec![
            Span::styled(if i == index { "› " } else { "  " }, style),
            Span::styled(label, style),
        ]));
        items.push(Line::styled(note, dim()));
    }
    frame.render_widget(Paragraph::new(items).block(pane("Reference".into())), list_area);
    let (title, lines) = match entries[index] {
        data::ReferenceEntry::Whole => {
            let cut = r.reference.last().expect("entries come from a kept reference");
            let gates: Vec<String> = cut.gates.iter().map(usize::to_string).collect();
            let mut lines = Vec::new();
            for (n, l) in cut.source.lines().enumerate() {
                lines.push(Line::from(vec![Span::styled(format!("{:>4} │ ", n + 1), dim()), Span::raw(l.to_string())]));
            }
            (format!("The reference solution of gates {}", gates.join(", ")), lines)
        }
        data::ReferenceEntry::AtGate(p) => {
            let diff = data::against_reference(r, p).unwrap_or_default();
            let mut lines: Vec<Line<'static>> = diff.iter().map(|l| diff_line(l.kind, &l.text)).collect();
            if lines.is_empty() {
                lines.push(Line::styled("The same source as the reference.", dim()));
            }
            (format!("Yours at gate {p} against the reference (- the reference's, + yours)"), lines)
        }
    };
    app.scroll.render_clipped(frame, content_area, lines, pane(title));
}

/// Word-wraps `text` into lines of at most `width` columns (a longer word
/// gets a line of its own).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || out.is_empty() {
        out.push(line);
    }
    out
}

fn draw_followups(frame: &mut Frame, app: &Review, area: Rect) {
    let items = app.followups();
    let block = pane("Follow-up questions: answer out loud, then reveal".into());
    if items.is_empty() {
        let text = "No follow-up questions for the gates this session reached.";
        frame.render_widget(Paragraph::new(text).block(block).wrap(Wrap { trim: true }), area);
        return;
    }
    let inner = block.inner(area);
    let width = inner.width.max(1) as usize;
    // Wrapped by hand so continuation lines keep their indentation.
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut selected_row = 0;
    for (i, (gate, f)) in items.iter().enumerate() {
        let selected = i == app.followup;
        if selected {
            selected_row = lines.len();
        }
        let style = if selected { theme::strong(theme::info()) } else { bold() };
        let label = format!("Gate {gate} · ");
        let indent = 2 + label.chars().count();
        for (n, chunk) in wrap(&f.question, width.saturating_sub(indent).max(10)).into_iter().enumerate() {
            let mut spans = if n == 0 {
                vec![Span::styled(if selected { "› " } else { "  " }, style), Span::styled(label.clone(), dim())]
            } else {
                vec![Span::raw(" ".repeat(indent))]
            };
            spans.push(Span::styled(chunk, style));
            lines.push(Line::from(spans));
        }
        if app.revealed.contains(&i) {
            for chunk in wrap(&f.answer, width.saturating_sub(4).max(10)) {
                lines.push(Line::from(format!("    {chunk}")));
            }
        } else {
            let hint =
                if selected { "    (model answer hidden: Space reveals it)" } else { "    (model answer hidden)" };
            lines.push(Line::styled(hint, dim()));
        }
        lines.push(Line::default());
    }
    // Keep the selected question in view, a third of the way down.
    let height = inner.height as usize;
    let scroll = if selected_row + 4 > height { selected_row.saturating_sub(height / 3) } else { 0 };
    frame.render_widget(Paragraph::new(lines).block(block).scroll((scroll as u16, 0)), area);
}

fn draw_progress(frame: &mut Frame, app: &Review, area: Rect) {
    let problem = &app.progress_problem;
    let attempts = data::attempts(&app.reports, problem);
    let problems = app.problems();
    let [header, chart_area, table_area, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Percentage(60),
        Constraint::Min(4),
        Constraint::Length(1),
    ])
    .areas(area);
    let position = problems.iter().position(|p| p == problem).map_or(0, |i| i + 1);
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(format!(" Progress · {problem} "), bold()),
            Span::styled(
                format!(
                    "· {} attempt{} · problem {position} of {}",
                    attempts.len(),
                    if attempts.len() == 1 { "" } else { "s" },
                    problems.len()
                ),
                dim(),
            ),
        ])),
        header,
    );
    let gates = attempts.iter().map(|a| a.passed_at.len()).max().unwrap_or(0);
    let series: Vec<Vec<(f64, f64)>> = (0..gates)
        .map(|g| {
            attempts
                .iter()
                .enumerate()
                .filter_map(|(i, a)| {
                    a.passed_at.get(g).copied().flatten().map(|ms| ((i + 1) as f64, ms as f64 / 60_000.0))
                })
                .collect()
        })
        .collect();
    let top = series.iter().flatten().map(|&(_, m)| m).fold(0.0, f64::max);
    let y_max = ((top / 5.0).ceil() * 5.0).max(5.0);
    let n = attempts.len().max(2);
    let minutes = |m: f64| if m.fract() == 0.0 { format!("{m:.0}") } else { format!("{m:.1}") };
    let datasets: Vec<Dataset> = series
        .iter()
        .enumerate()
        .map(|(g, data)| {
            Dataset::default()
                .name(format!("gate {}", g + 1))
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(Style::default().fg(theme::gate_color(g)))
                .data(data)
        })
        .collect();
    // One attempt still gets an axis of two; only real attempts are labelled.
    let x_labels: Vec<String> = if n <= 10 {
        (1..=n).map(|i| if i <= attempts.len() { i.to_string() } else { String::new() }).collect()
    } else {
        vec!["1".into(), n.to_string()]
    };
    // The legend goes above the chart: inside, it would hide the points
    // of the latest attempt, the ones that matter most.
    let mut legend = vec![Span::raw(" ")];
    for g in 0..gates {
        legend.push(Span::styled("━━ ", Style::default().fg(theme::gate_color(g))));
        legend.push(Span::raw(format!("gate {}   ", g + 1)));
    }
    let [legend_area, chart_area] = Layout::vertical([Constraint::Length(1), Constraint::Min(3)]).areas(chart_area);
    if attempts.len() < 2 {
        // A line needs two points: one attempt is shown as bars instead.
        frame.render_widget(
            Paragraph::new(single_attempt(attempts.first(), chart_area.width.saturating_sub(2) as usize))
                .block(pane("Time to pass each gate (minutes from the start)".into())),
            chart_area,
        );
        draw_attempts_table(frame, &attempts, gates, table_area);
        footer(frame, foot, &[("←→", "problem"), ("Esc", "back"), ("q", "quit")]);
        return;
    }
    frame.render_widget(Paragraph::new(Line::from(legend)), legend_area);
    let chart = Chart::new(datasets)
        .legend_position(None)
        .block(pane("Time to pass each gate (minutes from the start), by attempt".into()))
        .x_axis(Axis::default().title("attempt").style(dim()).bounds([1.0, n as f64]).labels(x_labels))
        .y_axis(Axis::default().title("min").style(dim()).bounds([0.0, y_max]).labels([
            "0".to_string(),
            minutes(y_max / 2.0),
            minutes(y_max),
        ]));
    frame.render_widget(chart, chart_area);
    draw_attempts_table(frame, &attempts, gates, table_area);
    footer(frame, foot, &[("←→", "problem"), ("Esc", "back"), ("q", "quit")]);
}

/// The one attempt there is: a bar per gate, its time to pass.
fn single_attempt(attempt: Option<&data::Attempt>, width: usize) -> Vec<Line<'static>> {
    let Some(a) = attempt else {
        return vec![Line::styled("No attempt of this problem yet.", dim())];
    };
    let mut lines =
        vec![Line::styled("One attempt so far: the chart of attempts starts with the second.", dim()), Line::default()];
    let scale = a.passed_at.iter().flatten().copied().max().unwrap_or(0);
    let room = width.saturating_sub(8 + 1 + 9);
    for (g, at) in a.passed_at.iter().enumerate() {
        let color = theme::gate_color(g);
        let mut spans = vec![Span::raw(format!("gate {:<3}", g + 1))];
        match at {
            Some(ms) => {
                let (filled, _) = data::bar(*ms, 0, scale, room);
                spans.push(Span::styled("█".repeat(filled.max(1)), Style::default().fg(color)));
                spans.push(Span::raw(format!(" {}", clock(*ms))));
            }
            None => spans.push(Span::styled("not passed", dim())),
        }
        lines.push(Line::from(spans));
    }
    lines
}

fn draw_attempts_table(frame: &mut Frame, attempts: &[data::Attempt], gates: usize, table_area: Rect) {
    let mut header_cells = vec!["#".to_string(), "date".into(), "mode".into(), "status".into()];
    header_cells.extend((1..=gates).map(|g| format!("gate {g}")));
    header_cells.push("score".into());
    header_cells.push("lines/10m".into());
    header_cells.push("rewrites".into());
    let rows: Vec<Row> = attempts
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let mut cells = vec![(i + 1).to_string(), a.date.clone(), a.mode.to_string(), a.status.to_string()];
            cells.extend((0..gates).map(|g| a.passed_at.get(g).copied().flatten().map_or_else(|| "—".into(), clock)));
            cells.push(score_text(a.score));
            cells.push(a.lines_per_10_min.map_or_else(|| "—".into(), |r| format!("{r:.0}")));
            cells.push(a.rewrites.to_string());
            Row::new(cells)
        })
        .collect();
    let mut widths = vec![Constraint::Length(3), Constraint::Length(16), Constraint::Length(8), Constraint::Length(11)];
    widths.extend((0..gates).map(|_| Constraint::Length(7)));
    widths.push(Constraint::Length(5));
    widths.push(Constraint::Length(9));
    widths.push(Constraint::Length(8));
    let table = Table::new(rows, widths).header(Row::new(header_cells).style(dim())).block(pane("Attempts".into()));
    // The newest attempts matter most: show the end of a long table.
    let mut state = TableState::default().with_selected(attempts.len().checked_sub(1));
    frame.render_stateful_widget(table, table_area, &mut state);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_failures_tab_lists_every_failure_met_and_which_are_fixed() {
        use crate::judge::verdict::Verdict;
        use crate::session::state::{FailureSummary, Mode, RunSummary, Session};
        let problems = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("problems");
        let problem =
            crate::problem::model::Problem::load(&problems, &problems.join("../contract"), "versioned_kv").unwrap();
        let t0 = 1_000_000;
        let mut s = Session::new("versioned_kv", Mode::Practice, 4, 3_600_000, t0);
        let fail = |case: &str, verdict| FailureSummary {
            gate: 1,
            case: case.into(),
            verdict,
            message: format!("{case} went wrong"),
            diff: vec!["- 1".into(), "+ 2".into()],
            ops: Vec::new(),
            shrunk_from: None,
        };
        let first = RunSummary {
            build_ok: true,
            gates: vec![(1, 2, 4)],
            failures: vec![fail("get of a missing key", Verdict::WrongAnswer), fail("delete twice", Verdict::Panic)],
            ..Default::default()
        };
        s.meet(&first, 1, t0 + 90_000);
        let last = RunSummary {
            build_ok: true,
            gates: vec![(1, 3, 4)],
            failures: vec![fail("delete twice", Verdict::Panic)],
            ..Default::default()
        };
        s.meet(&last, 2, t0 + 200_000);
        s.last_run = Some(last);
        let report = crate::session::report::Report::from_session(&s, &problem, t0 + 300_000, None);
        let text: Vec<String> =
            failure_lines(&report).iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect();
        let text = text.join("\n");
        assert!(text.contains("Met on the way: 2 distinct failures, 1 fixed by the end"), "{text}");
        assert!(text.contains("✓ g1 get of a missing key — wrong_answer  at 01:30 · 1 run · fixed"), "{text}");
        assert!(text.contains("✗ g1 delete twice — panic  at 01:30 · 2 runs"), "{text}");
        assert!(report.to_markdown().contains("| 01:30 | 1 | delete twice | `panic` | 2 | still failing |"));
    }

    #[test]
    fn wrap_breaks_between_words() {
        assert_eq!(wrap("one two three four", 9), ["one two", "three", "four"]);
        assert_eq!(wrap("a verylongword b", 4), ["a", "verylongword", "b"]);
        assert_eq!(wrap("", 5), [""]);
    }
}
