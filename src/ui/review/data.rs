//! What the review shows, computed from reports alone: one row per
//! session, the timeline as lanes of marks, each gate's time against its
//! target, the changes between consecutive gate snapshots, and a
//! problem's attempts over time.
//!
//! Pure functions of [`Report`]s, shared by the TUI and the headless
//! `--markdown`, so both show the same data and tests need no terminal.

use crate::base::diff;

use crate::base::fsio;
use crate::session::report::Report;
use crate::session::state::{EventKind, Mode, SourceFile};

/// `2026-11-29 08:20` (UTC), for tables.
pub fn date(ms: u64) -> String {
    let (y, mo, d, h, mi, _) = fsio::civil(ms);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}")
}

pub fn mode_label(mode: Mode) -> &'static str {
    match mode {
        Mode::Practice => "practice",
        Mode::Mock => "mock",
    }
}

/// The state a report was left in; a practice session that can still be
/// resumed is "in progress".
pub fn status_label(r: &Report) -> &'static str {
    r.status_label()
}

/// One line of the session list.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub id: String,
    pub date: String,
    pub problem: String,
    pub mode: &'static str,
    pub status: &'static str,
    pub gates: String,
    pub time: String,
    /// Mocks only.
    pub score: Option<f64>,
}

pub fn row(r: &Report) -> Row {
    Row {
        id: r.id.clone(),
        date: date(r.started_at_ms),
        problem: r.problem.clone(),
        mode: mode_label(r.mode),
        status: status_label(r),
        gates: format!("{}/{}", r.gates_passed, r.gate_count),
        time: fsio::clock(r.elapsed_ms),
        score: r.score.as_ref().map(|s| s.total),
    }
}

/// One moment on the timeline chart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mark {
    Save,
    BuildOk,
    BuildFailed,
    /// A judged run; `share` of its cases passed (0 to 1).
    Run {
        share: f64,
    },
    GatePassed(usize),
    Regression(usize),
    Hint,
    /// Where gate N should have passed (a mock's pace, else the suggested
    /// minutes added up).
    Target(usize),
    /// The end of the budget.
    BudgetEnd,
    /// The session was closed (quit) for this stretch.
    Closed,
    /// Where it ended without a quit (a crash or `kill -9`).
    Interrupted,
}

const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

impl Mark {
    /// The character drawn for the mark, in the TUI and in Markdown alike.
    pub fn symbol(self) -> char {
        match self {
            Mark::Save => '·',
            Mark::BuildOk => '●',
            Mark::BuildFailed => '✗',
            Mark::Run { share } => BLOCKS[(share.clamp(0.0, 1.0) * 7.0).round() as usize],
            Mark::GatePassed(g) | Mark::Regression(g) | Mark::Target(g) => digit(g),
            Mark::Hint => '?',
            Mark::BudgetEnd => '┤',
            Mark::Closed => '░',
            Mark::Interrupted => '!',
        }
    }
}

fn digit(n: usize) -> char {
    char::from_digit(n as u32, 10).filter(|_| n < 10).unwrap_or('+')
}

/// One row of the chart: a label and a mark (or nothing) per column.
#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    pub label: &'static str,
    pub cells: Vec<Option<Mark>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// Milliseconds the chart's width stands for.
    pub span_ms: u64,
    pub lanes: Vec<Lane>,
    /// (column, minutes) of each labelled tick on the time axis.
    pub ticks: Vec<(usize, u64)>,
}

/// The column of a moment on a chart `width` columns wide spanning
/// `span_ms`: 0 is the start, `width - 1` the end.
pub fn column(at_ms: u64, span_ms: u64, width: usize) -> usize {
    if width == 0 || span_ms == 0 {
        return 0;
    }
    ((at_ms as u128 * (width - 1) as u128 / span_ms as u128) as usize).min(width - 1)
}

/// Per gate, the time from the start by which it should have passed.
pub fn targets(r: &Report) -> Vec<u64> {
    if !r.gates.is_empty() && r.gates.iter().all(|g| g.pace_target_ms.is_some()) {
        return r.gates.iter().filter_map(|g| g.pace_target_ms).collect();
    }
    let mut so_far = 0;
    r.gates
        .iter()
        .map(|g| {
            so_far += g.target_minutes as u64 * 60_000;
            so_far
        })
        .collect()
}

/// Puts `mark` in column `c`, or, when another mark holds it, in the
/// nearest free column after it (else before it): two gates passed in
/// one column both stay visible.
fn place(cells: &mut [Option<Mark>], c: usize, mark: Mark) {
    let free = (c..cells.len()).chain((0..c).rev()).find(|&i| cells[i].is_none());
    if let Some(i) = free {
        cells[i] = Some(mark);
    }
}

/// The session's events drawn in lanes `width` columns wide. The chart
/// spans the session as it went (a 4-minute session fills the width, not
/// 4 columns of a 90-minute budget); targets and the budget's end beyond
/// it are left off.
pub fn timeline(r: &Report, width: usize) -> Timeline {
    let width = width.max(2);
    let last = r.events.iter().map(|e| e.at_ms).max().unwrap_or(0);
    let span_ms = r.elapsed_ms.max(last).max(1);
    let col = |at: u64| column(at, span_ms, width);
    let blank = || vec![None; width];
    let (mut saves, mut builds, mut runs, mut gates, mut regressions, mut hints, mut target) =
        (blank(), blank(), blank(), blank(), blank(), blank(), blank());
    // Closed stretches: from a quit, or the last sign of life before an
    // interruption, to the resume.
    let mut closed = blank();
    let mut quit_at: Option<u64> = None;
    for e in &r.events {
        match e.kind {
            EventKind::Quit => quit_at = Some(e.at_ms),
            EventKind::Interrupted { since_ms } => {
                for cell in &mut closed[col(since_ms)..=col(e.at_ms)] {
                    *cell = Some(Mark::Closed);
                }
                closed[col(since_ms)] = Some(Mark::Interrupted);
                quit_at = None;
            }
            EventKind::Resumed => {
                if let Some(q) = quit_at.take() {
                    for cell in &mut closed[col(q)..=col(e.at_ms)] {
                        cell.get_or_insert(Mark::Closed);
                    }
                }
            }
            _ => {}
        }
    }
    for e in &r.events {
        let c = col(e.at_ms);
        match &e.kind {
            EventKind::Save => saves[c] = Some(Mark::Save),
            // A failed build wins its column: the one worth seeing.
            EventKind::BuildOk { .. } if builds[c] != Some(Mark::BuildFailed) => builds[c] = Some(Mark::BuildOk),
            EventKind::BuildOk { .. } => {}
            EventKind::BuildFailed { .. } => builds[c] = Some(Mark::BuildFailed),
            EventKind::TestRun { passed_cases, total_cases, .. } => {
                let share = if *total_cases == 0 { 0.0 } else { *passed_cases as f64 / *total_cases as f64 };
                runs[c] = Some(Mark::Run { share });
            }
            EventKind::GatePassed { gate } => place(&mut gates, c, Mark::GatePassed(*gate)),
            EventKind::Regression { gate } => place(&mut regressions, c, Mark::Regression(*gate)),
            EventKind::Hint { .. } => hints[c] = Some(Mark::Hint),
            _ => {}
        }
    }
    for (i, t) in targets(r).into_iter().enumerate() {
        if t <= span_ms {
            place(&mut target, col(t), Mark::Target(i + 1));
        }
    }
    if r.budget_ms > 0 && r.budget_ms <= span_ms && target[col(r.budget_ms)].is_none() {
        target[col(r.budget_ms)] = Some(Mark::BudgetEnd);
    }
    let mut lanes = vec![
        Lane { label: "saves", cells: saves },
        Lane { label: "builds", cells: builds },
        Lane { label: "test runs", cells: runs },
        Lane { label: "gates", cells: gates },
        Lane { label: "regressions", cells: regressions },
    ];
    if hints.iter().any(Option::is_some) {
        lanes.push(Lane { label: "hints", cells: hints });
    }
    if closed.iter().any(Option::is_some) {
        lanes.push(Lane { label: "closed", cells: closed });
    }
    lanes.push(Lane { label: "targets", cells: target });
    Timeline { span_ms, lanes, ticks: ticks(span_ms, width) }
}

/// Round-minute ticks at least ~10 columns apart.
fn ticks(span_ms: u64, width: usize) -> Vec<(usize, u64)> {
    let minutes = span_ms.div_ceil(60_000).max(1);
    let room = (width / 10).max(1) as u64;
    let step = [1, 2, 5, 10, 15, 20, 30, 60, 120, 240].into_iter().find(|s| minutes / s <= room).unwrap_or(480);
    (0..=minutes / step)
        .map(|i| i * step)
        .filter(|m| m * 60_000 <= span_ms)
        .map(|m| (column(m * 60_000, span_ms, width), m))
        .collect()
}

/// The time axis under the lanes: a rule with a `┴` at each tick, and the
/// tick labels (`0`, `15m`, …) on the line below, left-aligned on them.
pub fn axis(t: &Timeline, width: usize) -> (String, String) {
    let mut rule: Vec<char> = vec!['─'; width];
    let mut labels: Vec<char> = vec![' '; width];
    let mut free_from = 0;
    for &(c, m) in &t.ticks {
        if c < width {
            rule[c] = '┴';
        }
        let text = if m == 0 { "0".to_string() } else { format!("{m}m") };
        // A label that would run past the end ends at the end instead.
        let at = c.min(width.saturating_sub(text.len()));
        if at >= free_from && at + text.len() <= width {
            for (i, ch) in text.chars().enumerate() {
                labels[at + i] = ch;
            }
            free_from = at + text.len() + 1;
        }
    }
    (rule.into_iter().collect(), labels.into_iter().collect::<String>().trim_end().to_string())
}

/// The whole chart as text, lane labels `label_width` wide (Markdown).
pub fn timeline_text(r: &Report, width: usize, label_width: usize) -> Vec<String> {
    let t = timeline(r, width);
    let mut out: Vec<String> = t
        .lanes
        .iter()
        .map(|l| {
            let cells: String = l.cells.iter().map(|c| c.map_or(' ', Mark::symbol)).collect();
            format!("{:<label_width$}{cells}", l.label).trim_end().to_string()
        })
        .collect();
    let (rule, labels) = axis(&t, width);
    out.push(format!("{:label_width$}{rule}", ""));
    out.push(format!("{:label_width$}{labels}", ""));
    out
}

/// One gate's time against its target.
#[derive(Clone, Debug, PartialEq)]
pub struct GateTiming {
    pub gate: usize,
    pub title: String,
    pub reached: bool,
    pub passed: bool,
    /// From the session's start to the run that passed the gate.
    pub at_ms: Option<u64>,
    /// Time spent on this gate: from the previous gate's pass to this
    /// one's, or to the end of the session for the gate in progress.
    pub spent_ms: Option<u64>,
    /// Where the gate should have passed, from the start.
    pub target_at_ms: u64,
    /// This gate's own share of the target.
    pub target_spent_ms: u64,
}

pub fn gate_timings(r: &Report) -> Vec<GateTiming> {
    let targets = targets(r);
    let mut previous_pass = 0;
    let mut previous_target = 0;
    r.gates
        .iter()
        .zip(targets)
        .map(|(g, target_at_ms)| {
            let spent_ms = match g.time_to_pass_ms {
                Some(at) => Some(at.saturating_sub(previous_pass)),
                None if g.reached => Some(r.elapsed_ms.saturating_sub(previous_pass)),
                None => None,
            };
            let timing = GateTiming {
                gate: g.shown(),
                title: g.title.clone(),
                reached: g.reached,
                passed: g.time_to_pass_ms.is_some(),
                at_ms: g.time_to_pass_ms,
                spent_ms,
                target_at_ms,
                target_spent_ms: target_at_ms.saturating_sub(previous_target),
            };
            previous_pass = g.time_to_pass_ms.unwrap_or(previous_pass);
            previous_target = target_at_ms;
            timing
        })
        .collect()
}

/// "1:00 under" / "5:00 over" the gate's own target, once it passed.
/// In whole seconds, as the times beside it are shown: 06:59 against a
/// target of 08:00 is 01:01 under, whatever the milliseconds were.
pub fn against_target(t: &GateTiming) -> Option<String> {
    let spent = t.spent_ms.filter(|_| t.passed)? / 1000 * 1000;
    let target = t.target_spent_ms / 1000 * 1000;
    Some(if spent <= target {
        format!("{} under", fsio::clock(target - spent))
    } else {
        format!("{} over", fsio::clock(spent - target))
    })
}

/// A horizontal bar `width` cells wide for `value` on a scale where
/// `scale` fills the width: (cells filled, column of `target`).
pub fn bar(value: u64, target: u64, scale: u64, width: usize) -> (usize, usize) {
    if scale == 0 || width == 0 {
        return (0, 0);
    }
    let cells = |v: u64| ((v as u128 * width as u128).div_ceil(scale as u128) as usize).min(width);
    (cells(value), cells(target).saturating_sub(1))
}

/// The gates whose snapshot the report keeps: (gate, passed at, files).
pub fn snapshots(r: &Report) -> Vec<(usize, Option<u64>, &[SourceFile])> {
    r.gates.iter().filter_map(|g| g.snapshot.as_deref().map(|files| (g.shown(), g.time_to_pass_ms, files))).collect()
}

/// What the Reference tab lists, in order: the reference of every gate the
/// session reached, then each gate snapshot against the reference of the
/// gates reached by then. Empty while the session can go on and when the
/// report keeps no reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReferenceEntry {
    /// The reference cut to every gate the session reached.
    Whole,
    /// The candidate's code when the gate at this position passed, against
    /// the reference cut to the gates up to it.
    AtGate(usize),
}

pub fn reference_entries(r: &Report) -> Vec<ReferenceEntry> {
    if r.reference.is_empty() {
        return Vec::new();
    }
    let mut entries = vec![ReferenceEntry::Whole];
    for g in r.gates.iter().filter(|g| g.snapshot.is_some()) {
        if r.reference.iter().any(|c| c.position == g.shown()) {
            entries.push(ReferenceEntry::AtGate(g.shown()));
        }
    }
    entries
}

/// Why a report shows no reference.
pub fn no_reference_reason(r: &Report) -> &'static str {
    if r.in_progress {
        "The reference solution shows once the session is over: a session you can resume would have its answer \
         given away."
    } else {
        "This report keeps no reference solution: it was written before reports kept one, or the problem's \
         reference has no gate markers (it would show follow-ups this session never drew)."
    }
}

/// The candidate's Rust sources when the gate at `position` passed against
/// the reference cut to the gates up to it: `-` lines are the reference's,
/// `+` lines the candidate's.
pub fn against_reference(r: &Report, position: usize) -> Option<Vec<DiffLine>> {
    let cut = r.reference.iter().find(|c| c.position == position)?;
    let snapshot = r.gates.iter().find(|g| g.shown() == position)?.snapshot.as_deref()?;
    let reference = [SourceFile { path: "src/lib.rs".into(), content: cut.source.clone() }];
    let theirs: Vec<SourceFile> = snapshot.iter().filter(|f| f.path.ends_with(".rs")).cloned().collect();
    Some(source_diff(&reference, &theirs))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffKind {
    /// The file the following hunks belong to.
    File,
    /// `@@ -a,b +c,d @@`.
    Hunk,
    Context,
    Removed,
    Added,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DiffLine {
    pub kind: DiffKind,
    pub text: String,
}

/// A unified diff (three lines of context) from one snapshot to the next,
/// file by file: what the candidate changed to pass the next gate.
pub fn source_diff(old: &[SourceFile], new: &[SourceFile]) -> Vec<DiffLine> {
    let mut paths: Vec<&str> = old.iter().chain(new).map(|f| f.path.as_str()).collect();
    paths.sort();
    paths.dedup();
    let content = |files: &[SourceFile], path: &str| files.iter().find(|f| f.path == path).map(|f| f.content.clone());
    let mut out = Vec::new();
    for path in paths {
        let (a, b) = (content(old, path), content(new, path));
        if a == b {
            continue;
        }
        let header = match (&a, &b) {
            (None, _) => format!("{path} (new file)"),
            (_, None) => format!("{path} (deleted)"),
            _ => path.to_string(),
        };
        out.push(DiffLine { kind: DiffKind::File, text: header });
        let (a, b) = (a.unwrap_or_default(), b.unwrap_or_default());
        for hunk in diff::lines(&a, &b, diff::Context::Lines(3)) {
            out.push(DiffLine { kind: DiffKind::Hunk, text: hunk.header() });
            for line in hunk.lines {
                let kind = match line.change {
                    diff::Change::Same => DiffKind::Context,
                    diff::Change::Removed => DiffKind::Removed,
                    diff::Change::Added => DiffKind::Added,
                };
                out.push(DiffLine { kind, text: line.text });
            }
        }
    }
    out
}

/// (lines added, lines removed).
pub fn diff_stat(lines: &[DiffLine]) -> (usize, usize) {
    let count = |k| lines.iter().filter(|l| l.kind == k).count();
    (count(DiffKind::Added), count(DiffKind::Removed))
}

/// One session of a problem, for its progress over time.
#[derive(Clone, Debug, PartialEq)]
pub struct Attempt {
    pub id: String,
    pub date: String,
    pub mode: &'static str,
    pub status: &'static str,
    /// Per gate, from the start to its pass.
    pub passed_at: Vec<Option<u64>>,
    pub elapsed_ms: u64,
    pub score: Option<f64>,
    /// The session's lines of code per 10 minutes (`session::metrics`).
    pub lines_per_10_min: Option<f64>,
    /// Gates that were rewrites rather than additions.
    pub rewrites: usize,
}

/// Every session of `problem`, oldest first.
pub fn attempts(reports: &[Report], problem: &str) -> Vec<Attempt> {
    let mut of: Vec<&Report> = reports.iter().filter(|r| r.problem == problem).collect();
    of.sort_by(|a, b| a.started_at_ms.cmp(&b.started_at_ms).then_with(|| a.id.cmp(&b.id)));
    of.into_iter()
        .map(|r| Attempt {
            id: r.id.clone(),
            date: date(r.started_at_ms),
            mode: mode_label(r.mode),
            status: status_label(r),
            passed_at: r.gates.iter().map(|g| g.time_to_pass_ms).collect(),
            elapsed_ms: r.elapsed_ms,
            score: r.score.as_ref().map(|s| s.total),
            lines_per_10_min: r.metrics.as_ref().and_then(|m| m.lines_per_10_min),
            rewrites: r.metrics.as_ref().map_or(0, |m| {
                m.gates.iter().filter(|g| g.shape == Some(crate::session::metrics::Shape::Rewrite)).count()
            }),
        })
        .collect()
}

/// The problems that have at least one report, sorted.
pub fn problems(reports: &[Report]) -> Vec<String> {
    let mut ids: Vec<String> = reports.iter().map(|r| r.problem.clone()).collect();
    ids.sort();
    ids.dedup();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::report::GateReport;
    use crate::session::state::{Event, Status};

    const MIN: u64 = 60_000;

    fn gate(n: usize, minutes: u32, at: Option<u64>, reached: bool) -> GateReport {
        GateReport {
            gate: n,
            position: n,
            title: format!("Gate {n}"),
            target_minutes: minutes,
            passed: at.is_some(),
            time_to_pass_ms: at,
            builds: 0,
            failed_builds: 0,
            test_runs: 0,
            hints_used: 0,
            regressions: 0,
            reached,
            snapshot: None,
            followups: vec![],
            pace_target_ms: None,
        }
    }

    fn report(gates: Vec<GateReport>, events: Vec<(u64, EventKind)>, elapsed: u64) -> Report {
        Report {
            format_version: 1,
            id: "x".into(),
            problem: "p".into(),
            title: "P".into(),
            mode: Mode::Practice,
            status: Status::TimeUp,
            in_progress: false,
            started_at: String::new(),
            started_at_ms: 0,
            ended_at_ms: None,
            budget_ms: 60 * MIN,
            elapsed_ms: elapsed,
            overtime: false,
            gate_count: gates.len(),
            gates_passed: gates.iter().filter(|g| g.passed).count(),
            path: Vec::new(),
            gates,
            last_run: None,
            events: events.into_iter().map(|(at_ms, kind)| Event { at_ms, kind }).collect(),
            score: None,
            metrics: None,
            first_ninety: None,
            met: Vec::new(),
            reference: Vec::new(),
        }
    }

    fn file(path: &str, content: &str) -> SourceFile {
        SourceFile { path: path.into(), content: content.into() }
    }

    #[test]
    fn gate_timings_split_the_session_and_compare_with_targets() {
        let r = report(
            vec![gate(1, 10, Some(8 * MIN), true), gate(2, 20, Some(33 * MIN), true), gate(3, 30, None, true)],
            vec![],
            50 * MIN,
        );
        let t = gate_timings(&r);
        assert_eq!(t[0].spent_ms, Some(8 * MIN));
        assert_eq!(t[1].spent_ms, Some(25 * MIN));
        assert_eq!((t[1].target_at_ms, t[1].target_spent_ms), (30 * MIN, 20 * MIN));
        assert_eq!(t[2].spent_ms, Some(17 * MIN), "the gate in progress: until the end");
        assert_eq!(against_target(&t[0]).unwrap(), "02:00 under");
        assert_eq!(against_target(&t[1]).unwrap(), "05:00 over");
        assert_eq!(against_target(&t[2]), None, "not passed: neither under nor over yet");
    }

    #[test]
    fn mock_pace_targets_win_over_suggested_minutes() {
        let mut gates = vec![gate(1, 10, None, true), gate(2, 20, None, false)];
        gates[0].pace_target_ms = Some(20 * MIN);
        gates[1].pace_target_ms = Some(60 * MIN);
        let r = report(gates, vec![], 0);
        assert_eq!(targets(&r), vec![20 * MIN, 60 * MIN]);
        assert_eq!(gate_timings(&r)[1].spent_ms, None, "not reached");
    }

    #[test]
    fn the_timeline_puts_each_event_in_its_lane_and_column() {
        let r = report(
            vec![gate(1, 30, Some(30 * MIN), true), gate(2, 30, None, true)],
            vec![
                (0, EventKind::Started),
                (6 * MIN, EventKind::Save),
                (6 * MIN, EventKind::BuildFailed { errors: 2 }),
                (6 * MIN, EventKind::BuildOk { ms: 10 }),
                (
                    30 * MIN,
                    EventKind::TestRun { passed_cases: 10, total_cases: 10, gates_passed: 1, current_passed: 10 },
                ),
                (30 * MIN, EventKind::GatePassed { gate: 1 }),
                (45 * MIN, EventKind::Regression { gate: 1 }),
            ],
            60 * MIN,
        );
        let t = timeline(&r, 61);
        let lane = |name: &str| &t.lanes.iter().find(|l| l.label == name).unwrap().cells;
        assert_eq!(lane("saves")[6], Some(Mark::Save));
        assert_eq!(lane("builds")[6], Some(Mark::BuildFailed), "a failure is not hidden by a later success");
        assert_eq!(lane("test runs")[30].map(Mark::symbol), Some('█'));
        assert_eq!(lane("gates")[30], Some(Mark::GatePassed(1)));
        assert_eq!(lane("regressions")[45], Some(Mark::Regression(1)));
        assert_eq!(lane("targets")[30], Some(Mark::Target(1)));
        assert_eq!(lane("targets")[60], Some(Mark::Target(2)), "the last target overlays the budget's end");
        assert!(t.lanes.iter().all(|l| l.label != "hints"), "no hints, no lane");
        assert_eq!(t.ticks.first(), Some(&(0, 0)));
        assert_eq!(t.ticks.last(), Some(&(60, 60)));
        let (rule, labels) = axis(&t, 61);
        assert_eq!(rule.chars().count(), 61);
        assert!(labels.starts_with("0 "), "{labels}");
        assert!(labels.ends_with("50m     60m"), "the last label ends at the last column: {labels}");
        assert_eq!(labels.chars().count(), 61);
    }

    #[test]
    fn overtime_stretches_the_chart() {
        let r = report(vec![gate(1, 30, None, true)], vec![(90 * MIN, EventKind::Quit)], 90 * MIN);
        let t = timeline(&r, 91);
        assert_eq!(t.span_ms, 90 * MIN);
        let targets = &t.lanes.last().unwrap().cells;
        assert_eq!(targets[60], Some(Mark::BudgetEnd));
        assert_eq!(targets[30], Some(Mark::Target(1)));
    }

    #[test]
    fn a_short_session_fills_the_chart_and_no_gate_hides_another() {
        let r = report(
            vec![gate(1, 10, Some(2 * MIN), true), gate(2, 20, Some(2 * MIN + 500), true), gate(3, 30, None, true)],
            vec![
                (0, EventKind::Started),
                (2 * MIN, EventKind::GatePassed { gate: 1 }),
                (2 * MIN + 500, EventKind::GatePassed { gate: 2 }),
                (4 * MIN, EventKind::Quit),
            ],
            4 * MIN,
        );
        let t = timeline(&r, 41);
        assert_eq!(t.span_ms, 4 * MIN, "the session's 4 minutes, not the 60-minute budget");
        let gates: Vec<Mark> =
            t.lanes.iter().find(|l| l.label == "gates").unwrap().cells.iter().flatten().copied().collect();
        assert_eq!(gates, vec![Mark::GatePassed(1), Mark::GatePassed(2)], "both gates show");
        assert!(t.lanes.last().unwrap().cells.iter().all(Option::is_none), "every target lies beyond the session");
    }

    #[test]
    fn an_interruption_and_a_quit_show_as_closed_stretches() {
        let r = report(
            vec![gate(1, 30, None, true)],
            vec![
                (0, EventKind::Started),
                (10 * MIN, EventKind::Save),
                (20 * MIN, EventKind::Interrupted { since_ms: 10 * MIN }),
                (20 * MIN, EventKind::Resumed),
                (30 * MIN, EventKind::Quit),
                (40 * MIN, EventKind::Resumed),
            ],
            60 * MIN,
        );
        let t = timeline(&r, 61);
        let closed = &t.lanes.iter().find(|l| l.label == "closed").unwrap().cells;
        assert_eq!(closed[10], Some(Mark::Interrupted));
        assert!(closed[11..=20].iter().all(|c| *c == Some(Mark::Closed)));
        assert_eq!(closed[25], None);
        assert!(closed[30..=40].iter().all(|c| *c == Some(Mark::Closed)));
        assert_eq!(closed[41], None);
    }

    #[test]
    fn under_and_over_count_whole_seconds_as_shown() {
        let t = GateTiming {
            gate: 1,
            title: String::new(),
            reached: true,
            passed: true,
            at_ms: Some(419_400),
            spent_ms: Some(419_400),
            target_at_ms: 8 * MIN,
            target_spent_ms: 8 * MIN,
        };
        // Shown as 06:59 against 08:00.
        assert_eq!(against_target(&t).unwrap(), "01:01 under");
    }

    #[test]
    fn bars_scale_and_mark_the_target() {
        assert_eq!(bar(30, 60, 60, 10), (5, 9));
        assert_eq!(bar(90, 60, 90, 9), (9, 5));
        assert_eq!(bar(1, 1, 100, 10), (1, 0), "anything spent shows");
        assert_eq!(bar(5, 5, 0, 10), (0, 0));
    }

    #[test]
    fn snapshot_diffs_show_what_changed_file_by_file() {
        let a = vec![file("Cargo.toml", "[package]\n"), file("src/lib.rs", "fn a() {}\nfn b() {}\nfn c() {}\n")];
        let b = vec![
            file("Cargo.toml", "[package]\n"),
            file("src/lib.rs", "fn a() {}\nfn b2() {}\nfn c() {}\n"),
            file("src/util.rs", "pub fn u() {}\n"),
        ];
        let d = source_diff(&a, &b);
        let text: Vec<String> = d.iter().map(|l| format!("{:?} {}", l.kind, l.text)).collect();
        assert_eq!(
            text,
            vec![
                "File src/lib.rs",
                "Hunk @@ -1,3 +1,3 @@",
                "Context fn a() {}",
                "Removed fn b() {}",
                "Added fn b2() {}",
                "Context fn c() {}",
                "File src/util.rs (new file)",
                "Hunk @@ -0,0 +1,1 @@",
                "Added pub fn u() {}",
            ]
        );
        assert_eq!(diff_stat(&d), (2, 1));
        assert!(source_diff(&a, &a).is_empty());
    }

    #[test]
    fn attempts_are_oldest_first_per_problem() {
        let mut old = report(vec![gate(1, 10, Some(12 * MIN), true)], vec![], 20 * MIN);
        old.started_at_ms = 1_000;
        old.id = "old".into();
        let mut new = report(vec![gate(1, 10, Some(7 * MIN), true)], vec![], 9 * MIN);
        new.started_at_ms = 5_000;
        new.id = "new".into();
        let mut other = new.clone();
        other.problem = "q".into();
        let all = vec![new, other, old];
        let a = attempts(&all, "p");
        assert_eq!(a.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(), ["old", "new"]);
        assert_eq!(a[1].passed_at, vec![Some(7 * MIN)]);
        assert_eq!(problems(&all), ["p", "q"]);
    }
}
