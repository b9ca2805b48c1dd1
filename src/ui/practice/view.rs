//! Drawing: a pure function of the [`App`] state.

use crate::ui::theme::{self, pane, truncate};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Wrap};

use super::app::{App, Focus, Overlay, Runner};
use crate::base::diff;
use crate::base::fsio::clock;
use crate::judge::suite::CaseResult;
use crate::session::state::{Mode, Status};
use crate::ui::{ansi, markdown};

pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 16;
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// The last minutes before the budget ends, shown in the warning colour.
const WARN_MS: i64 = 10 * 60_000;

/// Draws "make the window larger" instead of a layout that cannot fit;
/// returns whether it did.
pub fn too_small(frame: &mut Frame, min_width: u16, min_height: u16) -> bool {
    too_small_asking(frame, min_width, min_height, None)
}

/// As [`too_small`]; `question`, when some, replaces "q quits." so that a
/// question the full layout would pop up (quit? y/n) is still seen.
pub fn too_small_asking(frame: &mut Frame, min_width: u16, min_height: u16, question: Option<&str>) -> bool {
    let area = frame.area();
    if area.width >= min_width && area.height >= min_height {
        return false;
    }
    let last = match question {
        Some(q) => Line::styled(q.to_string(), Style::default().add_modifier(Modifier::BOLD)),
        None => Line::from("q quits."),
    };
    let text = vec![
        Line::from("The window is too small."),
        Line::from(format!("Make it at least {min_width}×{min_height} (it is {}×{}).", area.width, area.height)),
        last,
    ];
    frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
    true
}

pub fn draw(frame: &mut Frame, app: &App) {
    let question = (app.overlay == Some(Overlay::ConfirmQuit)).then_some("Quit? [y] yes  [n] no");
    if too_small_asking(frame, MIN_WIDTH, MIN_HEIGHT, question) {
        return;
    }
    let area = frame.area();
    let [header, body, footer] =
        Layout::vertical([Constraint::Length(2), Constraint::Min(5), Constraint::Length(1)]).areas(area);
    draw_header(frame, app, header);
    if app.zoom {
        match app.focus {
            Focus::Statement => draw_statement(frame, app, body),
            Focus::Results => draw_results(frame, app, body),
        }
    } else {
        // Below 100 columns the results (counts, case names) get the larger half.
        let statement = if area.width < 100 { 45 } else { 50 };
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(statement), Constraint::Percentage(100 - statement)])
                .areas(body);
        draw_statement(frame, app, left);
        draw_results(frame, app, right);
    }
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
        Status::TimeUp => Span::styled(" TIME UP ", theme::strong(theme::alarm())),
        Status::Completed => Span::styled(format!(" done in {} ", clock(s.elapsed_ms(app.now_ms))), theme::badge_ok()),
        Status::Abandoned => Span::styled(" abandoned ", theme::badge_dim()),
        Status::Running if remaining < 0 => {
            Span::styled(format!(" +{} overtime ", clock(remaining.unsigned_abs())), theme::strong(theme::alarm()))
        }
        Status::Running if remaining <= WARN_MS => {
            Span::styled(format!(" {} left ", clock(remaining as u64)), theme::badge_pending())
        }
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
    let t = timer(app);
    let t_width = t.width() as u16;
    let [left, right] = Layout::horizontal([Constraint::Min(10), Constraint::Length(t_width)]).areas(top);
    // The title, then the mode, then the id: whatever fits whole.
    let room = left.width as usize;
    let name = format!(" {} ", app.problem.title);
    let mut title = vec![Span::styled(truncate(&name, room), Style::default().add_modifier(Modifier::BOLD))];
    let mut used = name.chars().count();
    for extra in [format!("· {mode} "), format!("· {} ", app.problem.id)] {
        if used + extra.chars().count() <= room {
            used += extra.chars().count();
            title.push(Span::styled(extra, theme::dim()));
        }
    }
    let title = Line::from(title);
    frame.render_widget(Paragraph::new(title), left);
    frame.render_widget(Paragraph::new(Line::from(t)), right);

    let mut spans = vec![Span::styled(
        format!(" Gate {}/{} ", s.gate.min(s.gate_count), s.gate_count),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    for (i, g) in s.gates.iter().enumerate() {
        let n = i + 1;
        let (mark, style) = if g.passed_at_ms.is_some() && s.passing[i] {
            ("●", theme::ok())
        } else if g.passed_at_ms.is_some() {
            ("●", theme::bad())
        } else if n == s.gate {
            ("◐", theme::pending())
        } else {
            ("○", theme::dim())
        };
        spans.push(Span::styled(mark, style));
    }
    spans.push(Span::raw("  "));
    // A mock's pace matters more than the splits, which the summary keeps.
    if let Some(pace) = pace_label(app) {
        spans.push(pace);
        spans.push(Span::raw("  "));
    }
    for (i, g) in s.gates.iter().enumerate() {
        if let Some(at) = g.passed_at_ms {
            spans.push(Span::styled(format!("g{} {}  ", i + 1, clock(at)), theme::ok()));
        }
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
        Span::styled(format!("on pace ({} to gate target)", clock(target - elapsed)), theme::ok())
    } else {
        Span::styled(format!("behind pace by {}", clock(elapsed - target)), theme::bad())
    })
}

fn draw_statement(frame: &mut Frame, app: &App, area: Rect) {
    let n = app.statement_gate;
    // `n` is a position on the session's path; the gate there is drawn.
    let gate = &app.problem.gates[app.session.gate_at(n) - 1];
    // A title too long for the pane's border moves into the pane, wrapped,
    // and the border keeps "Gate n" (with the arrows), so nothing is cut.
    let arrows = if app.session.gate > 1 {
        format!("{}{} ", if n > 1 { "◀ " } else { "  " }, if n < app.session.gate { "▶" } else { " " })
    } else {
        String::new()
    };
    let full = format!(" Gate {n}: {} ", gate.title);
    let fits = full.chars().count() + arrows.trim_end().chars().count() + 2 <= area.width as usize;
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut title = vec![Span::styled(if fits { full } else { format!(" Gate {n} ") }, bold)];
    if !arrows.is_empty() {
        title.push(Span::styled(arrows, theme::dim()));
    }
    let block = pane(Line::from(title), app.focus == Focus::Statement);
    let mut lines = Vec::new();
    if !fits {
        lines.extend(crate::ui::wrap::under_itself(
            &Line::styled(gate.title.clone(), bold),
            0,
            area.width.saturating_sub(2) as usize,
        ));
        lines.push(Line::default());
    }
    // Revealed hints come first, where they are seen at once.
    for (i, hint) in gate.hints.iter().take(app.session.hints_used(n)).enumerate() {
        lines.push(Line::from(vec![
            Span::styled(format!("Hint {}: ", i + 1), theme::strong(theme::hint())),
            Span::styled(hint.clone(), theme::hint()),
        ]));
        lines.push(Line::default());
    }
    lines.extend(markdown::render(&gate.statement, area.width.saturating_sub(2) as usize));
    if !gate.scale.is_empty() {
        let note = format!(
            "*Cost: {} check(s) measure your solution at growing sizes against the reference once the cases \
             pass. The heap is counted by the allocator `export!` installs: declare no `#[global_allocator]`.*",
            gate.scale.len()
        );
        lines.push(Line::default());
        lines.extend(markdown::render(&note, area.width.saturating_sub(2) as usize));
    }
    let locked: Vec<String> =
        ((app.session.gate + 1)..=app.session.gate_count).map(|g| format!("gate {g} 🔒")).collect();
    if !locked.is_empty() && n == app.session.gate {
        lines.push(Line::default());
        lines.push(Line::styled(format!("Locked: {}", locked.join(" · ")), theme::dim()));
    }
    app.statement_scroll.render(frame, area, lines, Some(block));
}

fn status_line(app: &App, width: usize) -> Line<'static> {
    let spin = SPINNER[app.frame % SPINNER.len()];
    let secs = |since: u64| app.now_ms.saturating_sub(since) as f64 / 1000.0;
    let busy = theme::pending();
    let dim = theme::dim();
    match app.runner {
        Runner::Preparing => Line::styled(format!("{spin} preparing: building the reference and the cases…"), busy),
        Runner::Compiling { since_ms } => Line::styled(format!("{spin} compiling… {:.1} s", secs(since_ms)), busy),
        // The count shows once the suite says it (a total of 0 is "not yet").
        Runner::Running { since_ms, total: 0, .. } => {
            Line::styled(format!("{spin} running the cases… {:.1} s", secs(since_ms)), busy)
        }
        Runner::Running { since_ms, done, total } => {
            Line::styled(format!("{spin} running {done}/{total} cases… {:.1} s", secs(since_ms)), busy)
        }
        Runner::Measuring { since_ms, checks } => Line::styled(
            format!(
                "{spin} measuring cost: {checks} check{} of gates whose cases pass… {:.1} s",
                if checks == 1 { "" } else { "s" },
                secs(since_ms)
            ),
            busy,
        ),
        Runner::Idle => match &app.last {
            None if app.frozen() => Line::styled("the session has ended", dim),
            None => Line::styled("idle: save a file under the solution to judge it", dim),
            Some(e) if !e.build.ok => Line::styled(
                format!("✗ build failed ({:.2} s)", e.build.duration.as_secs_f64()),
                theme::bad().add_modifier(Modifier::BOLD),
            ),
            Some(e) => {
                let cases: usize = e.gates.iter().map(|g| g.total).sum();
                let (build, run) = (e.build.duration.as_secs_f64(), e.run_time.as_secs_f64());
                let queued = if app.rerun_queued { " · rerun queued" } else { "" };
                // The long form where it fits, else one a third shorter.
                let long = format!("idle · build {build:.2} s · {cases} cases in {run:.2} s{queued}");
                let text = if long.chars().count() <= width {
                    long
                } else {
                    format!("built {build:.1} s · {cases} cases {run:.1} s{queued}")
                };
                Line::styled(text, dim)
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
    let width = inner.width as usize;
    // Blank separators only where rows are not short.
    let roomy = inner.height >= 18;
    let mut top: Vec<Line<'static>> = Vec::new();
    // Short rows keep the intro only until the first verdict needs them.
    let intro: &[String] = if roomy || app.last.is_none() { &app.intro } else { &[] };
    for note in intro {
        top.extend(wrapped(note, width, theme::info()));
    }
    if !intro.is_empty() && roomy {
        top.push(Line::default());
    }
    top.push(status_line(app, width));
    if let Some(err) = &app.error {
        top.extend(wrapped(&format!("error: {err}"), width, theme::bad()));
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
            lines.extend(ansi::to_lines(&d.rendered, width));
        }
        app.detail_scroll.render(frame, inner, lines, None);
        return;
    }
    if roomy {
        top.push(Line::default());
    }
    // Where rows are short, the gates that pass collapse into one line.
    let collapsed = if roomy { 0 } else { eval.gates.iter().take_while(|g| g.all_passed()).count() };
    if collapsed >= 2 {
        let cases: usize = eval.gates[..collapsed].iter().map(|g| g.total).sum();
        top.push(Line::styled(
            format!("✓ gates 1–{collapsed} pass ({cases} cases)"),
            theme::ok().add_modifier(Modifier::BOLD),
        ));
    }
    for g in eval.gates.iter().skip(if collapsed >= 2 { collapsed } else { 0 }) {
        top.push(gate_line(app, g, width));
        top.extend(crate::ui::scale_chart::gate_lines(g, inner.width as usize));
    }
    let failures = app.failures();
    if !failures.is_empty() {
        if roomy {
            top.push(Line::default());
        }
        top.push(Line::styled(
            format!("Failing cases ({})", failures.len()),
            Style::default().add_modifier(Modifier::BOLD),
        ));
    }
    // The case under the list keeps at least its name, verdict and a line
    // of its transcript; the list gets what is left, a third at most.
    const DETAIL_MIN: usize = 4;
    let left = (inner.height as usize).saturating_sub(top.len() + DETAIL_MIN);
    let list_room = left.min((inner.height as usize / 3).max(3)).max(1);
    let start = app.selected.saturating_sub(list_room.saturating_sub(1));
    top.extend(failure_rows(app, &failures, start, list_room, width));
    let top_height = (top.len() as u16).min(inner.height.saturating_sub(DETAIL_MIN as u16 - 1));
    let [summary_area, detail_area] =
        Layout::vertical([Constraint::Length(top_height), Constraint::Min(0)]).areas(inner);
    frame.render_widget(Paragraph::new(top), summary_area);
    if let Some((case, result)) = app.selected_failure() {
        // Short rows: the list above already names the selected case.
        let lines = detail_lines((roomy || detail_area.height >= 10).then_some(case.name.as_str()), result);
        let block = Block::default().borders(Borders::TOP).border_style(theme::dim()).title(" case ");
        app.detail_scroll.render(frame, detail_area, lines, Some(block));
    } else if let Some(s) = eval.gates.iter().flat_map(|g| &g.scale).find(|s| !s.passed()) {
        crate::ui::scale_chart::draw(frame, detail_area, s);
    } else if eval.gates.iter().all(|g| g.all_passed()) {
        frame.render_widget(Paragraph::new(Line::styled("every unlocked gate passes", theme::ok())), detail_area);
    }
}

/// The rows of the failing cases' list, `list_room` of them from `start`, the
/// selected one reversed.
fn failure_rows(
    app: &App,
    failures: &[&(crate::judge::suite::Case, CaseResult)],
    start: usize,
    list_room: usize,
    width: usize,
) -> Vec<Line<'static>> {
    failures
        .iter()
        .enumerate()
        .skip(start)
        .take(list_room)
        .map(|(i, (case, r))| {
            let selected = i == app.selected;
            let style = if selected { Style::default().add_modifier(Modifier::REVERSED) } else { Style::default() };
            let verdict = format!(" {}", r.verdict);
            let prefix = format!("g{} ", app.position_of(case.gate));
            let room = width.saturating_sub(2 + prefix.chars().count() + verdict.chars().count());
            Line::from(vec![
                Span::styled(if selected { "› " } else { "  " }, style),
                Span::styled(format!("{prefix}{}", truncate(&case.name, room)), style),
                Span::styled(verdict, style.patch(theme::bad())),
            ])
        })
        .collect()
}

/// A gate's line in the results: its mark, position, counts and title,
/// and `regression` when it passed before and fails now.
fn gate_line(app: &App, g: &crate::judge::evaluate::GateResult, width: usize) -> Line<'static> {
    let passed = g.all_passed();
    let position = app.position_of(g.gate);
    let regressed = !passed && app.session.gates.get(position - 1).is_some_and(|s| s.passed_at_ms.is_some());
    let (mark, style) = if passed {
        ("✓", theme::ok())
    } else if g.measuring() && g.failures.is_empty() {
        ("…", theme::pending())
    } else {
        ("✗", theme::bad())
    };
    // The counts come before the title, so a narrow pane cuts the title.
    let head = format!("{mark} gate {position} ");
    // Cases and cost checks are counted apart, as `check` counts them:
    // "27/27 · cost 1/1"; a cost check not yet measured (being measured,
    // or waiting for the cases) is not counted (its line below says so).
    let mut counts = format!("{:>7}", format!("{}/{}", g.cases_passed(), g.cases_total()));
    if !g.measuring() && g.scale_skipped.is_empty() && !g.scale.is_empty() {
        let ok = g.scale.iter().filter(|s| s.passed()).count();
        counts.push_str(&format!(" · cost {ok}/{}", g.scale.len()));
    }
    counts.push(' ');
    let flag = if regressed { " regression" } else { "" };
    let room = width.saturating_sub(head.chars().count() + counts.chars().count() + flag.chars().count());
    let mut spans = vec![
        Span::styled(head, style.add_modifier(Modifier::BOLD)),
        Span::styled(counts, style),
        Span::raw(truncate(&g.title, room)),
    ];
    if regressed {
        spans.push(Span::styled(flag, theme::alarm()));
    }
    Line::from(spans)
}

/// `text` word-wrapped at `width` into lines of one style.
fn wrapped(text: &str, width: usize, style: Style) -> Vec<Line<'static>> {
    let options = textwrap::Options::new(width.max(8))
        .subsequent_indent("  ")
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::wrap(text, options).into_iter().map(|l| Line::styled(l.into_owned(), style)).collect()
}

/// The selected case: message, transcript diff with the changed words
/// emphasised, and the captured output.
/// Without a name (where rows are short) it starts at the verdict.
pub fn detail_lines(name: Option<&str>, r: &CaseResult) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(name) = name {
        lines.push(Line::styled(name.to_string(), Style::default().add_modifier(Modifier::BOLD)));
    }
    lines.push(Line::from(vec![
        Span::styled(format!("{} ", r.verdict), theme::bad().add_modifier(Modifier::BOLD)),
        Span::raw(r.message.clone()),
    ]));
    if let Some(n) = r.shrunk_from {
        lines.push(Line::styled(format!("shrunk from {} to {} operations", n - 1, r.steps.len() - 1), theme::dim()));
    }
    if name.is_some() {
        lines.push(Line::default());
    }
    let (expected, actual) = crate::judge::transcript::of(r);
    let (expected, actual) = (expected.join("\n") + "\n", actual.join("\n") + "\n");
    for line in diff::words(&expected, &actual, diff::Context::All).into_iter().flat_map(|h| h.lines) {
        let (sign, base) = match line.change {
            diff::Change::Same => ("  ", Style::default()),
            diff::Change::Removed => ("- ", theme::bad()),
            diff::Change::Added => ("+ ", theme::ok()),
        };
        let mut spans = vec![Span::styled(sign, base)];
        for (emphasized, text) in line.words {
            let style = if emphasized { base.add_modifier(Modifier::BOLD | Modifier::UNDERLINED) } else { base };
            spans.push(Span::styled(text, style));
        }
        lines.push(Line::from(spans));
    }
    lines.push(Line::styled("  (- expected, + yours)", theme::dim()));
    if !r.output.trim().is_empty() {
        lines.push(Line::default());
        lines.push(Line::styled("output:", Style::default().add_modifier(Modifier::BOLD)));
        for l in r.output.lines().take(200) {
            lines.push(Line::styled(format!("│ {l}"), theme::dim()));
        }
        if r.output_dropped > 0 || r.output.lines().count() > 200 {
            lines.push(Line::styled(format!("│ … ({} more bytes not kept)", r.output_dropped), theme::dim()));
        }
    }
    lines
}

/// The keys that work right now, each with its rank: when the footer is
/// too narrow for all, the lowest ranks go first (`?` lists every key).
fn footer_keys(app: &App) -> Vec<(u8, &'static str, String)> {
    let mut keys = vec![(0, "?", "help".to_string()), (0, "q", "quit".to_string())];
    if app.frozen() {
        keys.push((1, "s", "summary".into()));
        if app.session.mode == Mode::Practice && app.session.status == Status::TimeUp {
            keys.push((1, "o", "overtime".into()));
        }
        return keys;
    }
    keys.push((3, "e", "edit".into()));
    keys.push((4, "r", "rerun".into()));
    if app.session.mode == Mode::Practice {
        let (used, n) = (app.session.hints_used(app.session.gate), app.hints().len());
        keys.push((2, "h", format!("hint {used}/{n}")));
    }
    keys.push((3, "Tab", "pane".into()));
    if app.session.gate > 1 {
        keys.push((5, "←→", "gates".into()));
    }
    keys.push((2, "j/k", if app.focus == Focus::Results { "case".into() } else { "scroll".into() }));
    keys.push(if app.zoom { (1, "z", "both panes".into()) } else { (3, "z", "full screen".into()) });
    if app.selected_failure().is_some() {
        keys.push((1, "x", "export test".into()));
    }
    keys
}

fn draw_footer(frame: &mut Frame, app: &App, area: Rect) {
    let line = match &app.notice {
        Some(n) => Line::styled(format!(" {}", n.text), if n.good { theme::ok() } else { theme::pending() }),
        None => {
            let mut keys = footer_keys(app);
            let width = |keys: &[(u8, &str, String)]| -> usize {
                keys.iter().map(|(_, k, l)| k.chars().count() + l.chars().count() + 4).sum()
            };
            while width(&keys) > area.width as usize && keys.len() > 2 {
                let lowest = keys.iter().map(|k| k.0).max().unwrap_or(0);
                let at = keys.iter().rposition(|k| k.0 == lowest).unwrap_or(keys.len() - 1);
                keys.remove(at);
            }
            let mut spans = Vec::new();
            for (_, k, label) in keys {
                spans.push(Span::styled(format!(" {k} "), theme::key_cap()));
                spans.push(Span::raw(format!(" {label} ")));
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

/// The width inside a popup of `width` drawn over `area`.
fn popup_inner(area: Rect, width: u16) -> usize {
    width.min(area.width.saturating_sub(2)).saturating_sub(2).max(1) as usize
}

/// `line` cut to `width` columns, its styles kept, `…` at the cut.
fn cut_line(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let mut left = width.saturating_sub(1);
    let mut spans = Vec::new();
    for span in line.spans {
        if left == 0 {
            break;
        }
        let text: String = span.content.chars().take(left).collect();
        left -= text.chars().count();
        spans.push(Span::styled(text, span.style));
    }
    spans.push(Span::raw("…"));
    Line::from(spans)
}

fn draw_popup(frame: &mut Frame, area: Rect, title: &str, lines: Vec<Line<'static>>, width: u16) {
    // Room for wrapped lines: each takes ceil(width / inner width) rows.
    let inner = popup_inner(area, width);
    let rows = |lines: &[Line<'static>]| -> usize { lines.iter().map(|l| l.width().max(1).div_ceil(inner)).sum() };
    let room = area.height.saturating_sub(4) as usize;
    let mut lines = lines;
    // A short window: first the blank lines go, then every line keeps one row.
    if rows(&lines) > room {
        lines.retain(|l| l.width() > 0);
    }
    if rows(&lines) > room {
        lines = lines.into_iter().map(|l| cut_line(l, inner)).collect();
    }
    let rect = popup(area, width, rows(&lines) as u16 + 2);
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme::info())
        .title(Span::styled(format!(" {title} "), Style::default().add_modifier(Modifier::BOLD)));
    frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }), rect);
}

pub const HELP: &[(&str, &str)] = &[
    ("?", "this help"),
    ("q / Esc", "quit (the session is kept; `harness start` resumes it)"),
    ("e", "open the solution in $VISUAL / $EDITOR"),
    ("r", "build and judge now"),
    ("h", "reveal the next hint (counted in the report)"),
    ("Tab / z", "switch panes / the focused pane full screen (Esc: back)"),
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
        .map(|(k, d)| Line::from(vec![Span::styled(format!("{k:>10}  "), theme::info()), Span::raw(d.to_string())]))
        .collect();
    lines.push(Line::default());
    let gates = match app.session.gate {
        1 => "gate 1".to_string(),
        n => format!("gates 1–{n}"),
    };
    lines.push(Line::from(format!(
        "Every save under {} builds and judges {gates}. A save during a run cancels the stale run and queues exactly one new one.",
        app.solution_dir.display(),
    )));
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
    let mut lines = vec![Line::from(text), Line::default()];
    if app.session.discardable(app.now_ms) {
        lines.push(Line::from(
            "Still in the first minute: [d] discards the session instead, leaving no record and no report (your \
             code stays where it is).",
        ));
        lines.push(Line::default());
        lines.push(Line::styled("Quit? [y] yes  [d] discard  [n] no", Style::default().add_modifier(Modifier::BOLD)));
    } else {
        lines.push(Line::styled("Quit? [y] yes  [n] no", Style::default().add_modifier(Modifier::BOLD)));
    }
    draw_popup(frame, area, "quit", lines, 64);
}

const SUMMARY_WIDTH: u16 = 84;

/// The summary's table: one row per gate of the session, its title only
/// once it is drawn.
fn summary_rows(app: &App, tw: usize) -> Vec<Line<'static>> {
    let s = &app.session;
    let mut lines = Vec::new();
    for (i, stats) in s.gates.iter().enumerate() {
        let position = i + 1;
        // A graph's gates beyond the path drawn so far stay unnamed: which
        // follow-up would have come is itself a spoiler.
        let drawn = if !app.problem.is_graph() {
            Some(position)
        } else if position <= s.gate {
            s.path.get(i).copied()
        } else {
            None
        };
        let g = drawn.and_then(|n| app.problem.gates.get(n - 1));
        let at = stats.passed_at_ms.map_or_else(|| "—".to_string(), clock);
        let target = match (s.pace_ms.get(i), g) {
            (Some(&pace), _) => clock(pace),
            (None, Some(g)) => format!("{} min", g.minutes),
            (None, None) => "—".to_string(),
        };
        let title = g.map_or("(not reached)", |g| g.title.as_str());
        lines.push(Line::from(format!(
            "{:>4} {:<tw$} {at:>9}  {target:>9}  {:>6}  {:>5}",
            position,
            truncate(title, tw),
            stats.builds,
            stats.hints_used
        )));
    }
    lines
}

fn draw_summary(frame: &mut Frame, app: &App, area: Rect) {
    let s = &app.session;
    let headline = match s.status {
        Status::Completed => Line::styled(
            format!("All {} gates passed in {}.", s.gate_count, clock(s.elapsed_ms(app.now_ms))),
            theme::ok().add_modifier(Modifier::BOLD),
        ),
        Status::TimeUp => Line::styled(
            format!("Time's up: {} of {} gates passed.", s.gates_passed(), s.gate_count),
            theme::bad().add_modifier(Modifier::BOLD),
        ),
        Status::Abandoned => Line::from("The mock was abandoned."),
        Status::Running => Line::from(format!("{} of {} gates passed so far.", s.gates_passed(), s.gate_count)),
    };
    let mut lines = vec![headline, Line::default()];
    // Splits count from the session's start; so does a mock's pace target.
    let mock = !s.pace_ms.is_empty();
    // The title gives way in a narrow window: every column stays.
    let tw = popup_inner(area, 84).saturating_sub(41).clamp(8, 24);
    lines.push(Line::styled(
        format!("gate {:<tw$} {:>9}  {:>9}  builds  hints", "", "passed at", if mock { "target by" } else { "target" }),
        theme::dim(),
    ));
    lines.extend(summary_rows(app, tw));
    if !mock {
        lines.push(Line::styled(
            "(passed at: from the session's start; target: the gate's own suggested minutes)",
            theme::dim(),
        ));
    }
    if s.mode == Mode::Mock {
        // The score is explained where the mock ends, not only in the report.
        let score = crate::session::score::score(s);
        lines.push(Line::default());
        lines.push(Line::styled(
            format!("Score {:.1} of 100 (+ up to 10 for finishing early)", score.total),
            Style::default().add_modifier(Modifier::BOLD),
        ));
        for l in score.breakdown {
            lines.push(Line::from(format!("  {l}")));
        }
    }
    let reached = s.unlocked();
    let questions: usize = app.problem.gates_of(&reached).map(|g| g.followups.len()).sum();
    if questions > 0 && !s.is_running() {
        lines.push(Line::default());
        lines.push(Line::styled(
            format!(
                "{questions} follow-up question{} for the gates you reached, as an interviewer would ask them: \
                 answer aloud, then compare with the model answers in `harness report {}` (tab 4) or the .md report.",
                if questions == 1 { "" } else { "s" },
                s.id
            ),
            theme::info(),
        ));
        // The questions themselves, one row each, as many as the window
        // holds (the report path and the keys below keep their rows).
        let listed: Vec<(usize, &str)> = reached
            .iter()
            .enumerate()
            .flat_map(|(i, &g)| app.problem.gates[g - 1].followups.iter().map(move |f| (i + 1, f.question.as_str())))
            .collect();
        let room = (area.height as usize).saturating_sub(lines.len() + 10);
        let inner = popup_inner(area, SUMMARY_WIDTH);
        let shown = if listed.len() > room { room.saturating_sub(1) } else { listed.len() };
        for (position, q) in &listed[..shown] {
            lines.push(cut_line(Line::from(format!("  g{position} {q}")), inner));
        }
        if shown < listed.len() && shown > 0 {
            lines.push(Line::styled(format!("  … and {} more in the report", listed.len() - shown), theme::dim()));
        }
    }
    lines.push(Line::default());
    // Said only where the report keeps it (see `Problem::reference_cut`).
    let reached: std::collections::BTreeSet<usize> = s.unlocked().into_iter().collect();
    if !s.is_running() && s.gates_passed() > 0 && app.problem.reference_cut(&reached).is_ok_and(|c| c.is_some()) {
        lines.push(Line::styled(
            format!(
                "The reference solution of the gates you reached, and your code at each gate against it: \
                 `harness report {}` (tab 5).",
                s.id
            ),
            theme::info(),
        ));
    }
    if let Some(p) = &app.report_path {
        lines.push(Line::from(format!("report: {}", p.display())));
    }
    let mut keys = "[q] quit  [Esc] look around".to_string();
    if s.mode == Mode::Practice && s.status == Status::TimeUp {
        keys.push_str("  [o] keep going in overtime");
    }
    lines.push(Line::styled(keys, Style::default().add_modifier(Modifier::BOLD)));
    draw_popup(frame, area, "summary", lines, SUMMARY_WIDTH);
}
