//! The headless review: `report --list` (a table, or JSON with `--json`),
//! `report <id> --markdown` and `report <id> --json`.
//!
//! The Markdown is the `.md` written beside every report plus what the
//! review TUI adds: the timeline, each gate's time against its target,
//! the diffs between consecutive gate snapshots and the problem's progress
//! across attempts; the follow-up questions stay last, as in the `.md`.

use std::fmt::Write as _;

use serde_json::{Value as Json, json};

use super::data::{self, DiffKind};
use crate::base::fsio::clock;
use crate::session::report::Report;

/// Width of the timeline chart in Markdown, lane labels aside.
const CHART_WIDTH: usize = 72;
const LABEL_WIDTH: usize = 13;

/// The session list, newest first, one aligned row per report.
pub fn list(reports: &[&Report]) -> String {
    let rows: Vec<data::Row> = reports.iter().map(|r| data::row(r)).collect();
    let pw = rows.iter().map(|r| r.problem.len()).max().unwrap_or(0).max("problem".len());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<16}  {:<pw$}  {:<8}  {:<11}  {:>5}  {:>8}  {:>5}  id",
        "date", "problem", "mode", "status", "gates", "time", "score"
    );
    for r in &rows {
        let score = r.score.map_or_else(|| "—".to_string(), |s| format!("{s:.1}"));
        let _ = writeln!(
            out,
            "{:<16}  {:<pw$}  {:<8}  {:<11}  {:>5}  {:>8}  {:>5}  {}",
            r.date, r.problem, r.mode, r.status, r.gates, r.time, score, r.id
        );
    }
    out
}

/// The session list as JSON: one object per report, newest first.
pub fn list_json(reports: &[&Report]) -> Json {
    Json::Array(
        reports
            .iter()
            .map(|r| {
                json!({
                    "id": r.id,
                    "problem": r.problem,
                    "title": r.title,
                    "mode": r.mode,
                    "status": r.status,
                    "in_progress": r.in_progress,
                    "started_at": r.started_at,
                    "gates_passed": r.gates_passed,
                    "gate_count": r.gate_count,
                    "path": r.path(),
                    "elapsed_ms": r.elapsed_ms,
                    "budget_ms": r.budget_ms,
                    "score": r.score.as_ref().map(|s| s.total),
                })
            })
            .collect(),
    )
}

/// One report in full, for reading: `all` supplies the problem's other
/// attempts for the progress table.
pub fn markdown(r: &Report, all: &[Report]) -> String {
    let base = r.to_markdown();
    // The follow-ups close the document: they are what to practise after
    // reading the rest.
    let (head, tail) = match base.find("\n## Follow-up questions") {
        Some(i) => base.split_at(i),
        None => (base.as_str(), ""),
    };
    let mut md = head.trim_end().to_string();
    md.push('\n');
    timeline(&mut md, r);
    gate_times(&mut md, r);
    changes(&mut md, r);
    reference(&mut md, r);
    progress(&mut md, r, all);
    md.push_str(tail);
    md
}

fn timeline(md: &mut String, r: &Report) {
    let _ = writeln!(md, "\n## Timeline\n\n```text");
    for line in data::timeline_text(r, CHART_WIDTH, LABEL_WIDTH) {
        let _ = writeln!(md, "{line}");
    }
    let _ = writeln!(
        md,
        "```\n\nsaves `·`, builds `●` (`✗` failed), test runs `▁`…`█` by the share of cases passing, \
         gates passed and regressions by gate number, targets by gate number (`┤` the end of the budget), \
         closed stretches `░` (`!` where the session ended without a quit: a crash or `kill -9`)."
    );
}

fn gate_times(md: &mut String, r: &Report) {
    let _ = writeln!(md, "\n## Time per gate\n");
    let _ = writeln!(md, "| gate | time on the gate | target | | passed at | target at |");
    let _ = writeln!(md, "|---|---|---|---|---|---|");
    for t in data::gate_timings(r) {
        let spent = match t.spent_ms {
            Some(ms) if t.passed => clock(ms),
            Some(ms) => format!("{} (not passed)", clock(ms)),
            None => "not reached".into(),
        };
        let _ = writeln!(
            md,
            "| {} {} | {spent} | {} | {} | {} | {} |",
            t.gate,
            t.title,
            clock(t.target_spent_ms),
            data::against_target(&t).unwrap_or_default(),
            t.at_ms.map_or_else(|| "—".to_string(), clock),
            clock(t.target_at_ms)
        );
    }
}

fn changes(md: &mut String, r: &Report) {
    let snaps = data::snapshots(r);
    if snaps.len() < 2 {
        return;
    }
    let _ = writeln!(md, "\n## What changed between gate snapshots\n");
    for pair in snaps.windows(2) {
        let ((from, _, old), (to, _, new)) = (&pair[0], &pair[1]);
        let diff = data::source_diff(old, new);
        let (added, removed) = data::diff_stat(&diff);
        let _ = writeln!(md, "### Gate {from} → gate {to} (+{added} −{removed})\n");
        if diff.is_empty() {
            let _ = writeln!(md, "No change: the same source passed both gates.\n");
            continue;
        }
        diff_block(md, &diff);
    }
}

fn diff_block(md: &mut String, diff: &[data::DiffLine]) {
    let _ = writeln!(md, "```diff");
    for l in diff {
        let _ = match l.kind {
            DiffKind::File => writeln!(md, "=== {}", l.text),
            DiffKind::Hunk => writeln!(md, "{}", l.text),
            DiffKind::Context => writeln!(md, " {}", l.text),
            DiffKind::Removed => writeln!(md, "-{}", l.text),
            DiffKind::Added => writeln!(md, "+{}", l.text),
        };
    }
    let _ = writeln!(md, "```\n");
}

/// The reference of the gates reached, and the candidate's code at each
/// gate against it (once the session is over).
fn reference(md: &mut String, r: &Report) {
    let _ = writeln!(md, "\n## The reference solution\n");
    let Some(cut) = r.reference.last() else {
        let _ = writeln!(md, "{}", data::no_reference_reason(r));
        return;
    };
    let gates: Vec<String> = cut.gates.iter().map(usize::to_string).collect();
    let _ = writeln!(
        md,
        "The reference cut to the gates this session reached ({}): one correct design among several, \
         not the only one.\n\n```rust\n{}\n```\n",
        gates.join(", "),
        cut.source.trim_end()
    );
    for entry in data::reference_entries(r) {
        let data::ReferenceEntry::AtGate(p) = entry else { continue };
        let Some(diff) = data::against_reference(r, p) else { continue };
        let (added, removed) = data::diff_stat(&diff);
        let _ = writeln!(
            md,
            "### Yours at gate {p} against the reference of its gates (+{added} yours, −{removed} the reference's)\n"
        );
        if diff.is_empty() {
            let _ = writeln!(md, "The same source as the reference.\n");
        } else {
            diff_block(md, &diff);
        }
    }
}

fn progress(md: &mut String, r: &Report, all: &[Report]) {
    let attempts = data::attempts(all, &r.problem);
    let gates = attempts.iter().map(|a| a.passed_at.len()).max().unwrap_or(0);
    let _ = writeln!(md, "\n## Progress on {}: time to pass each gate\n", r.problem);
    let mut header = "| # | date | mode | status |".to_string();
    let mut rule = "|---|---|---|---|".to_string();
    for g in 1..=gates {
        let _ = write!(header, " gate {g} |");
        rule.push_str("---|");
    }
    let _ = writeln!(md, "{header} score | lines/10 min | rewrites |\n{rule}---|---|---|");
    for (i, a) in attempts.iter().enumerate() {
        let this = if a.id == r.id { " (this one)" } else { "" };
        let _ = write!(md, "| {} | {}{this} | {} | {} |", i + 1, a.date, a.mode, a.status);
        for g in 0..gates {
            let at = a.passed_at.get(g).copied().flatten();
            let _ = write!(md, " {} |", at.map_or_else(|| "—".to_string(), clock));
        }
        let _ = writeln!(
            md,
            " {} | {} | {} |",
            a.score.map_or_else(|| "—".to_string(), |s| format!("{s:.1}")),
            a.lines_per_10_min.map_or_else(|| "—".to_string(), |r| format!("{r:.0}")),
            a.rewrites
        );
    }
}
