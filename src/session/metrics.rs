//! The numbers the seed uses as yardsticks, computed from what a report
//! already keeps (the code at each gate pass and the event timeline):
//!
//! - **throughput**: lines of code written per 10 minutes, per gate and for
//!   the session, against the seed's 30 lines per 10 minutes, and the
//!   solution's size against its 120–200 lines for a four-gate problem;
//! - **additive or rewrite**: the lines added, changed and removed from the
//!   previous gate's passing code. A gate is a *rewrite* when it changed or
//!   removed more than [`REWRITE_SHARE`] of the previous gate's code lines;
//!   otherwise it is *additive*;
//! - **where the time went**: per gate, the time to the first compiling
//!   build, to the first of its cases passing, and the time spent with a
//!   build that does not compile.
//!
//! Pure functions over report data: no files, no clock.

use serde::{Deserialize, Serialize};
use similar::{DiffOp, TextDiff};

use crate::session::state::{Event, EventKind, SourceFile};

/// The seed's throughput yardstick: lines of correct code per 10 minutes.
pub const YARDSTICK_LINES_PER_10_MIN: f64 = 30.0;
/// The seed's size of a four-gate stateful solution, in lines.
pub const YARDSTICK_SIZE: (usize, usize) = (120, 200);
/// A gate that changed or removed more than this share of the previous
/// gate's code lines was a rewrite.
pub const REWRITE_SHARE: f64 = 0.25;
const TEN_MINUTES_MS: f64 = 600_000.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// Gate 1: written from the starter.
    First,
    Additive,
    Rewrite,
}

impl Shape {
    pub fn label(self) -> &'static str {
        match self {
            Shape::First => "first",
            Shape::Additive => "additive",
            Shape::Rewrite => "rewrite",
        }
    }
}

/// One gate's numbers. Times are milliseconds from the gate's start (the
/// previous gate's pass, or the session's start).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateMetrics {
    pub gate: usize,
    /// The gate's time: start to its pass (or to the end, if it did not).
    pub duration_ms: u64,
    /// Code lines of the solution when the gate passed.
    pub code_lines: Option<usize>,
    pub added: usize,
    pub changed: usize,
    pub removed: usize,
    /// (added + changed) per 10 minutes of the gate.
    pub lines_per_10_min: Option<f64>,
    /// None when the gate did not pass (nothing to compare).
    pub shape: Option<Shape>,
    pub first_build_ok_ms: Option<u64>,
    pub first_case_ms: Option<u64>,
    pub failing_build_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub gates: Vec<GateMetrics>,
    /// Code lines of the last passing solution.
    pub solution_lines: Option<usize>,
    /// Every gate's added + changed lines, per 10 minutes of the session
    /// up to the last gate pass.
    pub lines_per_10_min: Option<f64>,
}

/// A line that counts as code: not blank, not only a comment or a brace.
fn is_code(line: &str) -> bool {
    let t = line.trim();
    !(t.is_empty() || t.starts_with("//") || t == "{" || t == "}" || t == "};")
}

fn code_of(files: &[SourceFile]) -> String {
    let mut out = String::new();
    for f in files.iter().filter(|f| f.path.ends_with(".rs")) {
        for line in f.content.lines().filter(|l| is_code(l)) {
            out.push_str(line.trim());
            out.push('\n');
        }
    }
    out
}

/// (added, changed, removed) code lines from `old` to `new`. A replaced
/// run of lines counts as changed up to the shorter side, the rest as
/// added or removed.
pub fn churn(old: &[SourceFile], new: &[SourceFile]) -> (usize, usize, usize) {
    let (a, b) = (code_of(old), code_of(new));
    let diff = TextDiff::from_lines(&a, &b);
    let (mut added, mut changed, mut removed) = (0, 0, 0);
    for op in diff.ops() {
        match *op {
            DiffOp::Insert { new_len, .. } => added += new_len,
            DiffOp::Delete { old_len, .. } => removed += old_len,
            DiffOp::Replace { old_len, new_len, .. } => {
                let both = old_len.min(new_len);
                changed += both;
                added += new_len - both;
                removed += old_len - both;
            }
            DiffOp::Equal { .. } => {}
        }
    }
    (added, changed, removed)
}

pub fn code_lines(files: &[SourceFile]) -> usize {
    code_of(files).lines().count()
}

fn per_10_min(lines: usize, ms: u64) -> Option<f64> {
    (ms >= 60_000).then(|| lines as f64 * TEN_MINUTES_MS / ms as f64)
}

/// The numbers of one session. `passes[i]` is when gate i+1 passed (ms
/// from the start), `snapshots[i]` its code then, `starter` the code the
/// session started from, `end_ms` the session's elapsed time.
pub fn compute(
    passes: &[Option<u64>],
    snapshots: &[Option<&[SourceFile]>],
    starter: &[SourceFile],
    events: &[Event],
    end_ms: u64,
) -> Metrics {
    let mut gates = Vec::new();
    let mut start = 0;
    let mut previous: &[SourceFile] = starter;
    let mut written = 0;
    let mut written_until = 0;
    for (i, pass) in passes.iter().enumerate() {
        let gate = i + 1;
        let end = pass.unwrap_or(end_ms).max(start);
        let snapshot = snapshots.get(i).copied().flatten();
        let (added, changed, removed, code, shape) = match (pass, snapshot) {
            (Some(_), Some(now)) => {
                let (a, c, r) = churn(previous, now);
                let base = code_lines(previous).max(1) as f64;
                let shape = if gate == 1 {
                    Shape::First
                } else if (c + r) as f64 > REWRITE_SHARE * base {
                    Shape::Rewrite
                } else {
                    Shape::Additive
                };
                (a, c, r, Some(code_lines(now)), Some(shape))
            }
            _ => (0, 0, 0, None, None),
        };
        if let Some(now) = snapshot.filter(|_| pass.is_some()) {
            previous = now;
            written += added + changed;
            written_until = end;
        }
        // An event at the moment a gate passed belongs to that gate.
        let window: Vec<&Event> = events.iter().filter(|e| (e.at_ms > start || gate == 1) && e.at_ms <= end).collect();
        let first_build_ok_ms =
            window.iter().find(|e| matches!(e.kind, EventKind::BuildOk { .. })).map(|e| e.at_ms - start);
        let first_case_ms = window
            .iter()
            .find(|e| matches!(e.kind, EventKind::TestRun { current_passed, .. } if current_passed > 0))
            .map(|e| e.at_ms - start);
        let mut failing_build_ms = 0;
        let mut failing_since = None;
        for e in &window {
            match e.kind {
                EventKind::BuildFailed { .. } => {
                    failing_since.get_or_insert(e.at_ms);
                }
                EventKind::BuildOk { .. } => {
                    if let Some(since) = failing_since.take() {
                        failing_build_ms += e.at_ms - since;
                    }
                }
                _ => {}
            }
        }
        if let Some(since) = failing_since {
            failing_build_ms += end - since;
        }
        gates.push(GateMetrics {
            gate,
            duration_ms: end - start,
            code_lines: code,
            added,
            changed,
            removed,
            lines_per_10_min: shape.and_then(|_| per_10_min(added + changed, end - start)),
            shape,
            first_build_ok_ms,
            first_case_ms,
            failing_build_ms,
        });
        if pass.is_none() {
            break;
        }
        start = end;
    }
    let solution_lines = gates.iter().rev().find_map(|g| g.code_lines);
    Metrics { gates, solution_lines, lines_per_10_min: per_10_min(written, written_until) }
}

/// "42 lines/10 min (the seed's pace: 30)".
pub fn throughput_text(rate: Option<f64>) -> String {
    match rate {
        Some(r) => format!("{r:.0} lines/10 min (the seed's pace: {YARDSTICK_LINES_PER_10_MIN:.0})"),
        None => "—".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: u64 = 60_000;

    fn src(text: &str) -> Vec<SourceFile> {
        vec![SourceFile { path: "src/lib.rs".into(), content: text.into() }]
    }

    fn ev(at_ms: u64, kind: EventKind) -> Event {
        Event { at_ms, kind }
    }

    fn run(at: u64, current_passed: u32) -> Event {
        ev(at, EventKind::TestRun { passed_cases: 0, total_cases: 9, gates_passed: 0, current_passed })
    }

    #[test]
    fn churn_counts_added_changed_and_removed_code_lines_only() {
        let old = src("fn a() {\n    one();\n    // a comment\n    two();\n}\n");
        let new = src("fn a() {\n    one();\n\n    deux();\n    three();\n}\n");
        assert_eq!(churn(&old, &new), (1, 1, 0));
        assert_eq!(code_lines(&new), 4, "braces alone, blanks and comments do not count");
        assert_eq!(churn(&new, &src("")), (0, 0, 4));
    }

    #[test]
    fn a_gate_that_rewrites_more_than_a_quarter_is_a_rewrite() {
        let g1: String = (0..20).map(|i| format!("let a{i} = {i};\n")).collect();
        let additive: String = format!("{g1}let extra = 1;\nlet more = 2;\n");
        let mut rewrite = additive.clone();
        for i in 0..6 {
            rewrite = rewrite.replace(&format!("let a{i} = {i};"), &format!("let b{i} = {i};"));
        }
        let starter = src("");
        let (s1, s2, s3) = (src(&g1), src(&additive), src(&rewrite));
        let m = compute(
            &[Some(10 * MIN), Some(30 * MIN), Some(50 * MIN), None],
            &[Some(&s1), Some(&s2), Some(&s3), None],
            &starter,
            &[],
            60 * MIN,
        );
        let shapes: Vec<Option<Shape>> = m.gates.iter().map(|g| g.shape).collect();
        assert_eq!(shapes, [Some(Shape::First), Some(Shape::Additive), Some(Shape::Rewrite), None]);
        assert_eq!(m.gates[0].lines_per_10_min, Some(20.0), "20 lines in 10 minutes");
        assert_eq!(m.gates[1].lines_per_10_min, Some(1.0), "2 lines in 20 minutes");
        assert_eq!((m.gates[2].added, m.gates[2].changed, m.gates[2].removed), (0, 6, 0));
        assert_eq!(m.gates[3].duration_ms, 10 * MIN, "the unfinished gate runs to the end");
        assert_eq!(m.solution_lines, Some(22));
        assert_eq!(m.lines_per_10_min, Some(28.0 * 10.0 / 50.0), "20 + 2 + 6 lines written in 50 minutes");
    }

    #[test]
    fn time_splits_come_from_the_gate_s_own_events() {
        let events = vec![
            ev(MIN, EventKind::BuildFailed { errors: 2 }),
            ev(3 * MIN, EventKind::BuildFailed { errors: 1 }),
            ev(4 * MIN, EventKind::BuildOk { ms: 200 }),
            run(4 * MIN, 0),
            ev(6 * MIN, EventKind::BuildOk { ms: 200 }),
            run(6 * MIN, 3),
            run(8 * MIN, 9),
            ev(9 * MIN, EventKind::BuildFailed { errors: 1 }),
        ];
        let s = src("let x = 1;\n");
        let m = compute(&[Some(8 * MIN), None], &[Some(&s), None], &src(""), &events, 10 * MIN);
        let g1 = &m.gates[0];
        assert_eq!(g1.first_build_ok_ms, Some(4 * MIN));
        assert_eq!(g1.first_case_ms, Some(6 * MIN));
        assert_eq!(g1.failing_build_ms, 3 * MIN);
        let g2 = &m.gates[1];
        assert_eq!((g2.first_build_ok_ms, g2.first_case_ms), (None, None));
        assert_eq!(g2.failing_build_ms, MIN, "still failing at the end");
    }
}
