//! Drawing: a pure function of the [`App`] state.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Wrap};

use super::app::{App, Focus, Overlay, Runner};
use crate::base::fsio::clock;
use crate::judge::suite::CaseResult;
use crate::session::state::{Mode, Status};
use crate::ui::results;
use crate::ui::{ansi, markdown};

pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 16;
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// The last minutes before the budget ends, shown in the warning colour.
const WARN_MS: i64 = 10 * 60_000;

/// Draws "make the window larger" instead of a layout that cannot fit;
/// returns whether it did.
pub fn too_small(frame: &mut Frame, min_width: u16, min_height: u16) -> bool {
    let area = frame.area();
    if area.width >= min_width && area.height >= min_height {
        return false;
    }
    let text = vec![
        Line::from("The window is too small."),
        Line::from(format!("Make it at least {min_width}×{min_height} (it is {}×{}).", area.width, area.height)),
        Line::from("q quits."),
    ];
    frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
    true
}

pub fn draw(frame: &mut Frame, app: &App) {
    if too_small(frame, MIN_WIDTH, MIN_HEIGHT) {
        return;
    }
    let area = frame.area();
    let [header, body, footer] =
        Layout::vertical([Constraint::Length(2), Constraint::Min(5), Constraint::Length(1)]).areas(area);
    draw_header(frame, app, header);
    let [left, right] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(body);
    draw_statement(frame, app, left);
    draw_results(frame, app, right);
    draw_footer(frame, app, footer);
    match app.overlay {
        Some(Overlay::Help) => draw_help(frame, app, area),
        Some(Overlay::ConfirmQuit) => draw_confirm(frame, app, area),
        Some(Overlay::Summary) => draw_summary(frame, app, area),
        None => {}
    }
}

fn timer(app: &App) -> Span<'static> {
    let s = &app.session;
    let remaining = s.remaining_ms(app.now_ms);
    match s.status {
        Status::TimeUp => {
            Span::styled(" TIME UP ", Style::default().fg(Color::White).bg(Color::Red).add_modifier(Modifier::BOLD))
        }
        Status::Completed => Span::styled(
            format!(" done in {} ", clock(s.elapsed_ms(app.now_ms))),
            Style::default().fg(Color::Black).bg(Color::Green),
        ),
        Status::Abandoned => Span::styled(" abandoned ", Style::default().fg(Color::White).bg(Color::DarkGray)),
        Status::Running if remaining < 0 => Span::styled(
            format!(" +{} overtime ", clock(remaining.unsigned_abs())),
            Style::default().fg(Color::White).bg(Color::Red).add_modifier(Modifier::BOLD),
        ),
        Status::Running if remaining <= WARN_MS => Span::styled(
            format!(" {} left ", clock(remaining as u64)),
            Style::default().fg(Color::Black).bg(Color::Yellow).add_modifier(Modifier::BOLD),
        ),
        Status::Running => {
            Span::styled(format!(" {} left ", clock(remaining as u64)), Style::default().add_modifier(Modifier::BOLD))
        }
    }
}

fn draw_header(frame: &mut Frame, app: &App, area: Rect) {
    let s = &app.session;
    let mode = match s.mode {
        Mode::Practice => "practice",
        Mode::Mock => "mock interview",
    };
    let [top, bottom] = Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(area);
    let title = Line::from(vec![
        Span::styled(format!(" {} ", app.problem.title), Style::default().add_modifier(Modifier::BOLD)),
        Span::styled(format!("· {} · {mode}", app.problem.id), Style::default().fg(Color::DarkGray)),
    ]);
    let t = timer(app);
    let t_width = t.width() as u16;
    let [left, right] = Layout::horizontal([Constraint::Min(10), Constraint::Length(t_width)]).areas(top);
    frame.render_widget(Paragraph::new(title), left);
    frame.render_widget(Paragraph::new(Line::from(t)), right);

    let mut spans = vec![Span::styled(
        format!(" Gate {}/{} ", s.gate.min(s.gate_count), s.gate_count),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    for (i, g) in s.gates.iter().enumerate() {
        let n = i + 1;
        let (mark, style) = if g.passed_at_ms.is_some() && s.passing[i] {
            ("●", Style::default().fg(Color::Green))
        } else if g.passed_at_ms.is_some() {
            ("●", Style::default().fg(Color::Red))
        } else if n == s.gate {
            ("◐", Style::default().fg(Color::Yellow))
        } else {
            ("○", Style::default().fg(Color::DarkGray))
        };
        spans.push(Span::styled(mark, style));
    }
    spans.push(Span::raw("  "));
    for (i, g) in s.gates.iter().enumerate() {
        if let Some(at) = g.passed_at_ms {
            spans.push(Span::styled(format!("g{} {}  ", i + 1, clock(at)), Style::default().fg(Color::Green)));
        }
    }
    if let Some(pace) = pace_label(app) {
        spans.push(pace);
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), bottom);
}

/// Mock pacing: ahead of or behind the target for the current gate.
fn pace_label(app: &App) -> Option<Span<'static>> {
    let s = &app.session;
    let target = *s.pace_ms.get(s.gate.checked_sub(1)?)?;
    if !s.is_running() {
        return None;
    }
    let elapsed = s.elapsed_ms(app.now_ms);
    Some(if elapsed <= target {
        Span::styled(format!("on pace ({} to gate target)", clock(target - elapsed)), Style::default().fg(Color::Green))
    } else {
        Span::styled(format!("behind pace by {}", clock(elapsed - target)), Style::default().fg(Color::Red))
    })
}

fn pane(title: Line<'static>, focused: bool) -> Block<'static> {
    let style = if focused { Style::default().fg(Color::Cyan) } else { Style::default().fg(Color::DarkGray) };
    Block::default().borders(Borders::ALL).border_type(BorderType::Rounded).border_style(style).title(title)
}

fn draw_statement(frame: &mut Frame, app: &App, area: Rect) {
    let n = app.statement_gate;
    let gate = &app.problem.gates[n - 1];
    let mut title =
        vec![Span::styled(format!(" Gate {n}: {} ", gate.title), Style::default().add_modifier(Modifier::BOLD))];
    if app.session.gate > 1 {
        title.push(Span::styled(
            format!("{}{} ", if n > 1 { "◀ " } else { "  " }, if n < app.session.gate { "▶" } else { " " }),
            Style::default().fg(Color::DarkGray),
        ));
    }
    let block = pane(Line::from(title), app.focus == Focus::Statement);
    // Revealed hints come first, where they are seen at once.
    let mut lines = Vec::new();
    for (i, hint) in gate.hints.iter().take(app.session.hints_used(n)).enumerate() {
        lines.push(Line::from(vec![
            Span::styled(format!("Hint {}: ", i + 1), Style::default().fg(Color::Magenta).add_modifier(Modifier::BOLD)),
            Span::styled(hint.clone(), Style::default().fg(Color::Magenta)),
        ]));
        lines.push(Line::default());
    }
    lines.extend(markdown::render(&gate.statement));
    let locked: Vec<String> =
        ((app.session.gate + 1)..=app.session.gate_count).map(|g| format!("gate {g} 🔒")).collect();
    if !locked.is_empty() && n == app.session.gate {
        lines.push(Line::default());
        lines.push(Line::styled(format!("Locked: {}", locked.join(" · ")), Style::default().fg(Color::DarkGray)));
    }
    frame.render_widget(
        Paragraph::new(lines).block(block).wrap(Wrap { trim: false }).scroll((app.statement_scroll, 0)),
        area,
    );
}

fn status_line(app: &App) -> Line<'static> {
    let spin = SPINNER[app.frame % SPINNER.len()];
    let secs = |since: u64| app.now_ms.saturating_sub(since) as f64 / 1000.0;
    match app.runner {
        Runner::Preparing => Line::styled(
            format!("{spin} preparing: building the reference and the hidden cases…"),
            Style::default().fg(Color::Yellow),
        ),
        Runner::Compiling { since_ms } => {
            Line::styled(format!("{spin} compiling… {:.1} s", secs(since_ms)), Style::default().fg(Color::Yellow))
        }
        Runner::Running { since_ms, done, total } => Line::styled(
            format!("{spin} running {done}/{total} cases… {:.1} s", secs(since_ms)),
            Style::default().fg(Color::Yellow),
        ),
        Runner::Idle => match &app.last {
            None if app.frozen() => Line::styled("the session has ended", Style::default().fg(Color::DarkGray)),
            None => {
                Line::styled("idle: save a file under the solution to judge it", Style::default().fg(Color::DarkGray))
            }
            Some(e) if !e.build.ok => Line::styled(
                format!("✗ build failed ({:.2} s)", e.build.duration.as_secs_f64()),
                Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
            ),
            Some(e) => {
                let cases: usize = e.gates.iter().map(|g| g.total).sum();
                Line::styled(
                    format!(
                        "idle · build {:.2} s · {cases} cases in {:.2} s{}",
                        e.build.duration.as_secs_f64(),
                        e.run_time.as_secs_f64(),
                        if app.rerun_queued { " · rerun queued" } else { "" }
                    ),
                    Style::default().fg(Color::DarkGray),
                )
            }
        },
    }
}

fn draw_results(frame: &mut Frame, app: &App, area: Rect) {
    let block = pane(
        Line::from(Span::styled(" Results ", Style::default().add_modifier(Modifier::BOLD))),
        app.focus == Focus::Results,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let mut top: Vec<Line<'static>> = vec![status_line(app)];
    if let Some(err) = &app.error {
        top.push(Line::styled(format!("error: {err}"), Style::default().fg(Color::Red)));
    }
    let Some(eval) = &app.last else {
        frame.render_widget(Paragraph::new(top).wrap(Wrap { trim: false }), inner);
        return;
    };
    if !eval.build.ok {
        let mut lines = top;
        lines.push(Line::default());
        if let Some(f) = &eval.build.failure {
            lines.extend(f.lines().map(|l| Line::from(l.to_string())));
        }
        for d in eval.build.diagnostics.iter().filter(|d| d.level == "error") {
            lines.extend(ansi::to_lines(&d.rendered));
        }
        frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }).scroll((app.detail_scroll, 0)), inner);
        return;
    }
    top.push(Line::default());
    for g in &eval.gates {
        let passed = g.all_passed();
        let regressed = !passed && app.session.gates.get(g.gate - 1).is_some_and(|s| s.passed_at_ms.is_some());
        let (mark, style) =
            if passed { ("✓", Style::default().fg(Color::Green)) } else { ("✗", Style::default().fg(Color::Red)) };
        let mut spans = vec![
            Span::styled(format!("{mark} gate {} ", g.gate), style.add_modifier(Modifier::BOLD)),
            Span::raw(format!("{:<28} ", truncate(&g.title, 28))),
            Span::styled(format!("{}/{}", g.passed, g.total), style),
        ];
        if regressed {
            spans.push(Span::styled("  regression", Style::default().fg(Color::White).bg(Color::Red)));
        }
        top.push(Line::from(spans));
    }
    let failures = app.failures();
    if !failures.is_empty() {
        top.push(Line::default());
        top.push(Line::styled(
            format!("Failing cases ({})", failures.len()),
            Style::default().add_modifier(Modifier::BOLD),
        ));
    }
    let list_room = (inner.height / 3).max(3) as usize;
    let start = app.selected.saturating_sub(list_room.saturating_sub(1));
    for (i, (case, r)) in failures.iter().enumerate().skip(start).take(list_room) {
        let selected = i == app.selected;
        let style = if selected { Style::default().add_modifier(Modifier::REVERSED) } else { Style::default() };
        top.push(Line::from(vec![
            Span::styled(if selected { "› " } else { "  " }, style),
            Span::styled(
                format!("g{} {} ", case.gate, truncate(&case.name, inner.width.saturating_sub(24) as usize)),
                style,
            ),
            Span::styled(format!("{}", r.verdict), style.fg(Color::Red)),
        ]));
    }
    let top_height = (top.len() as u16).min(inner.height.saturating_sub(3));
    let [summary_area, detail_area] =
        Layout::vertical([Constraint::Length(top_height), Constraint::Min(0)]).areas(inner);
    frame.render_widget(Paragraph::new(top), summary_area);
    if let Some((case, result)) = app.selected_failure() {
        let lines = detail_lines(&case.name, result);
        let block =
            Block::default().borders(Borders::TOP).border_style(Style::default().fg(Color::DarkGray)).title(" case ");
        frame.render_widget(
            Paragraph::new(lines).block(block).wrap(Wrap { trim: false }).scroll((app.detail_scroll, 0)),
            detail_area,
        );
    } else if eval.gates.iter().all(|g| g.all_passed()) {
        frame.render_widget(
            Paragraph::new(Line::styled("every unlocked gate passes", Style::default().fg(Color::Green))),
            detail_area,
        );
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n.saturating_sub(1)).collect::<String>())
    }
}

/// The selected case: message, transcript diff with the changed words
/// emphasised, and the captured output.
pub fn detail_lines(name: &str, r: &CaseResult) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::styled(name.to_string(), Style::default().add_modifier(Modifier::BOLD)),
        Line::from(vec![
            Span::styled(format!("{} ", r.verdict), Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)),
            Span::raw(r.message.clone()),
        ]),
    ];
    if let Some(n) = r.shrunk_from {
        lines.push(Line::styled(
            format!("shrunk from {} to {} operations", n - 1, r.steps.len() - 1),
            Style::default().fg(Color::DarkGray),
        ));
    }
    lines.push(Line::default());
    let (expected, actual) = results::transcripts(r);
    let (expected, actual) = (expected.join("\n") + "\n", actual.join("\n") + "\n");
    let diff = similar::TextDiff::from_lines(&expected, &actual);
    for op in diff.ops() {
        for change in diff.iter_inline_changes(op) {
            let (sign, base) = match change.tag() {
                similar::ChangeTag::Equal => ("  ", Style::default()),
                similar::ChangeTag::Delete => ("- ", Style::default().fg(Color::Red)),
                similar::ChangeTag::Insert => ("+ ", Style::default().fg(Color::Green)),
            };
            let mut spans = vec![Span::styled(sign, base)];
            for (emphasized, text) in change.iter_strings_lossy() {
                let text = text.trim_end_matches('\n').to_string();
                let style = if emphasized { base.add_modifier(Modifier::BOLD | Modifier::UNDERLINED) } else { base };
                spans.push(Span::styled(text, style));
            }
            lines.push(Line::from(spans));
        }
    }
    lines.push(Line::styled("  (- expected, + yours)", Style::default().fg(Color::DarkGray)));
    if !r.output.trim().is_empty() {
        lines.push(Line::default());
        lines.push(Line::styled("output:", Style::default().add_modifier(Modifier::BOLD)));
        for l in r.output.lines().take(200) {
            lines.push(Line::styled(format!("│ {l}"), Style::default().fg(Color::DarkGray)));
        }
        if r.output_dropped > 0 || r.output.lines().count() > 200 {
            lines.push(Line::styled(
                format!("│ … ({} more bytes not kept)", r.output_dropped),
                Style::default().fg(Color::DarkGray),
            ));
        }
    }
    lines
}

/// The keys that work right now.
fn footer_keys(app: &App) -> Vec<(&'static str, String)> {
    let mut keys = vec![("?", "help".to_string()), ("q", "quit".to_string())];
    if app.frozen() {
        keys.push(("s", "summary".into()));
        if app.session.mode == Mode::Practice && app.session.status == Status::TimeUp {
            keys.push(("o", "overtime".into()));
        }
        return keys;
    }
    keys.push(("e", "edit".into()));
    keys.push(("r", "rerun".into()));
    if app.session.mode == Mode::Practice {
        let (used, n) = (app.session.hints_used(app.session.gate), app.hints().len());
        keys.push(("h", format!("hint {used}/{n}")));
    }
    keys.push(("Tab", "pane".into()));
    if app.session.gate > 1 {
        keys.push(("←→", "gates".into()));
    }
    keys.push(("j/k", if app.focus == Focus::Results { "case".into() } else { "scroll".into() }));
    if app.selected_failure().is_some() {
        keys.push(("x", "export test".into()));
    }
    keys
}

fn draw_footer(frame: &mut Frame, app: &App, area: Rect) {
    let line = match &app.notice {
        Some(n) => Line::styled(
            format!(" {}", n.text),
            if n.good { Style::default().fg(Color::Green) } else { Style::default().fg(Color::Yellow) },
        ),
        None => {
            let mut spans = Vec::new();
            for (k, label) in footer_keys(app) {
                spans.push(Span::styled(format!(" {k} "), Style::default().fg(Color::Black).bg(Color::DarkGray)));
                spans.push(Span::raw(format!(" {label}  ")));
            }
            Line::from(spans)
        }
    };
    frame.render_widget(Paragraph::new(line), area);
}

fn popup(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width.saturating_sub(2));
    let h = height.min(area.height.saturating_sub(2));
    Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h }
}

fn draw_popup(frame: &mut Frame, area: Rect, title: &str, lines: Vec<Line<'static>>, width: u16) {
    // Room for wrapped lines: each takes ceil(width / inner width) rows.
    let inner = width.min(area.width.saturating_sub(2)).saturating_sub(2).max(1) as usize;
    let rows: usize = lines.iter().map(|l| l.width().max(1).div_ceil(inner)).sum();
    let rect = popup(area, width, rows as u16 + 2);
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(Color::Cyan))
        .title(Span::styled(format!(" {title} "), Style::default().add_modifier(Modifier::BOLD)));
    frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }), rect);
}

pub const HELP: &[(&str, &str)] = &[
    ("?", "this help"),
    ("q / Esc", "quit (the session is kept; `harness start` resumes it)"),
    ("e", "open the solution in $VISUAL / $EDITOR"),
    ("r", "build and judge now"),
    ("h", "reveal the next hint (counted in the report)"),
    ("Tab", "switch between statement and results"),
    ("← → / [ ]", "earlier and later unlocked statements"),
    ("j k / ↑ ↓", "select a failing case, or scroll the statement"),
    ("PgUp PgDn", "scroll the focused pane"),
    ("x", "export the selected case as a #[test] in tests/"),
    ("s", "the session summary"),
    ("o", "after time is up: keep going in overtime"),
];

/// A help entry as it applies in `mode`: a mock has no hints and no
/// overtime, and quitting ends it.
fn help_entry(mode: Mode, key: &'static str, text: &'static str) -> Option<(&'static str, &'static str)> {
    match (mode, key) {
        (Mode::Mock, "h" | "o") => None,
        (Mode::Mock, "q / Esc") => Some((key, "quit (asks first; the mock is recorded as abandoned)")),
        _ => Some((key, text)),
    }
}

fn draw_help(frame: &mut Frame, app: &App, area: Rect) {
    let mut lines: Vec<Line<'static>> = HELP
        .iter()
        .filter_map(|&(k, d)| help_entry(app.session.mode, k, d))
        .map(|(k, d)| {
            Line::from(vec![
                Span::styled(format!("{k:>10}  "), Style::default().fg(Color::Cyan)),
                Span::raw(d.to_string()),
            ])
        })
        .collect();
    lines.push(Line::default());
    lines.push(Line::from(format!(
        "Every save under {} builds and judges gates 1–{}. A save during a run",
        app.solution_dir.display(),
        app.session.gate
    )));
    lines.push(Line::from("cancels the stale run and queues exactly one new one."));
    draw_popup(frame, area, "keys", lines, 78);
}

fn draw_confirm(frame: &mut Frame, app: &App, area: Rect) {
    let text = match app.session.mode {
        Mode::Practice => format!(
            "The session is kept: `harness start {}` resumes it, and the clock keeps running meanwhile, as in a real interview.",
            app.problem.id
        ),
        Mode::Mock => "A mock cannot be resumed: quitting records it as abandoned.".to_string(),
    };
    let lines = vec![
        Line::from(text),
        Line::default(),
        Line::styled("Quit? [y] yes  [n] no", Style::default().add_modifier(Modifier::BOLD)),
    ];
    draw_popup(frame, area, "quit", lines, 64);
}

fn draw_summary(frame: &mut Frame, app: &App, area: Rect) {
    let s = &app.session;
    let headline = match s.status {
        Status::Completed => Line::styled(
            format!("All {} gates passed in {}.", s.gate_count, clock(s.elapsed_ms(app.now_ms))),
            Style::default().fg(Color::Green).add_modifier(Modifier::BOLD),
        ),
        Status::TimeUp => Line::styled(
            format!("Time's up: {} of {} gates passed.", s.gates_passed(), s.gate_count),
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        ),
        Status::Abandoned => Line::from("The mock was abandoned."),
        Status::Running => Line::from(format!("{} of {} gates passed so far.", s.gates_passed(), s.gate_count)),
    };
    let mut lines = vec![headline, Line::default()];
    for (g, stats) in app.problem.gates.iter().zip(&s.gates) {
        let at = stats.passed_at_ms.map_or_else(|| "—".to_string(), clock);
        // A mock's target is its pace: the budget scaled, from the start.
        let target = match s.pace_ms.get(g.number - 1) {
            Some(&pace) => format!("target by {}", clock(pace)),
            None => format!("target {} min", g.minutes),
        };
        lines.push(Line::from(format!(
            "gate {}  {:<26} {:>8}  ({target}) · {} builds · {} hints",
            g.number,
            truncate(&g.title, 26),
            at,
            stats.builds,
            stats.hints_used
        )));
    }
    if s.mode == Mode::Mock {
        // The score is explained where the mock ends, not only in the report.
        let score = crate::session::score::score(s);
        lines.push(Line::default());
        lines.push(Line::styled(format!("Score {:.1}", score.total), Style::default().add_modifier(Modifier::BOLD)));
        for l in score.breakdown {
            lines.push(Line::from(format!("  {l}")));
        }
    }
    lines.push(Line::default());
    if let Some(p) = &app.report_path {
        lines.push(Line::from(format!("report: {}", p.display())));
    }
    let mut keys = "[q] quit  [Esc] look around".to_string();
    if s.mode == Mode::Practice && s.status == Status::TimeUp {
        keys.push_str("  [o] keep going in overtime");
    }
    lines.push(Line::styled(keys, Style::default().add_modifier(Modifier::BOLD)));
    draw_popup(frame, area, "summary", lines, 84);
}
