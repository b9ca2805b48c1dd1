//! Rendering an [`Evaluation`] for people: `check`'s text, optionally
//! coloured. (`--json` is `session::check_report`; a failing case's
//! transcripts and their diff are `judge::transcript`.)

use std::fmt::Write as _;

use crate::base::diag::strip_ansi;
use crate::judge::evaluate::Evaluation;
use crate::judge::scale;
use crate::judge::suite::{Case, CaseKind, CaseResult, SHRUNK_PER_GATE};
use crate::judge::transcript;
use crate::problem::model::Problem;

struct Paint {
    on: bool,
}

impl Paint {
    fn c(&self, code: &str, s: &str) -> String {
        if self.on { format!("\x1b[{code}m{s}\x1b[0m") } else { s.to_string() }
    }
}

fn kind_label(case: &Case) -> String {
    match case.kind {
        CaseKind::Fixed => String::new(),
        CaseKind::Generated { .. } => " [generated]".to_string(),
    }
}

/// The human-readable report of `check`.
/// `path` is the path judged (`eval` covers it, or its first gates).
pub fn render_text(problem: &Problem, eval: &Evaluation, path: &[usize], color: bool) -> String {
    let p = Paint { on: color };
    let mut out = String::new();
    let _ = writeln!(out, "{} — {}", p.c("1", &problem.id), problem.title);
    if problem.is_graph() {
        let shown: Vec<String> = path.iter().map(|g| g.to_string()).collect();
        let _ = writeln!(out, "path: {}", shown.join(","));
    }
    if !eval.build.ok {
        let _ = writeln!(out, "build: {} ({:.2} s)\n", p.c("1;31", "FAILED"), eval.build.duration.as_secs_f64());
        if let Some(f) = &eval.build.failure {
            let _ = writeln!(out, "{f}");
        }
        for d in eval.build.diagnostics.iter().filter(|d| d.level == "error") {
            if color {
                out.push_str(&d.rendered);
            } else {
                out.push_str(&strip_ansi(&d.rendered));
            }
        }
        let _ = writeln!(out, "\nresult: compile_error — 0/{} gates passed", path.len());
        return out;
    }
    let warnings = eval.build.diagnostics.iter().filter(|d| d.level == "warning").count();
    let _ = writeln!(
        out,
        "build: ok ({:.2} s{}) · judged in {:.2} s",
        eval.build.duration.as_secs_f64(),
        if warnings > 0 { format!(", {warnings} warning(s)") } else { String::new() },
        eval.run_time.as_secs_f64()
    );
    let graph = problem.is_graph();
    for (i, g) in eval.gates.iter().enumerate() {
        let status = if g.all_passed() { p.c("1;32", "passed") } else { p.c("1;31", "FAILED") };
        let counts = gate_counts(g);
        if graph {
            let _ = writeln!(out, "\ngate {} (#{})  {:<31} {status}  {counts}", i + 1, g.gate, g.title);
        } else {
            let _ = writeln!(out, "\ngate {}  {:<36} {status}  {counts}", g.gate, g.title);
        }
        scale_text(&mut out, &p, g);
        for (case, r) in &g.failures {
            failure_text(&mut out, &p, case, r);
        }
    }
    let passed = eval.gates_passed();
    // `--gate N` judges the path's first N gates: "all" would claim the
    // ones it skipped.
    let verdict = if eval.all_passed() && eval.gates.len() == path.len() && path.len() == problem.path_length {
        p.c("1;32", "all gates passed")
    } else if eval.all_passed() {
        p.c("1;32", &format!("gates 1–{} passed (of {})", eval.gates.len(), problem.path_length))
    } else {
        format!("{passed}/{} gates passed", eval.gates.len())
    };
    let _ = writeln!(out, "\nresult: {verdict}");
    out
}

/// One failing case under its gate: its verdict and message, whether it
/// was shrunk, the transcript's diff and what the case printed.
fn failure_text(out: &mut String, p: &Paint, case: &Case, r: &CaseResult) {
    let _ = writeln!(out, "  {} {}{} — {}", p.c("31", "✗"), case.name, kind_label(case), p.c("1", r.verdict.name()));
    // A message of several lines (a concurrent case's timeline)
    // keeps its indentation under the case.
    let _ = writeln!(out, "      {}", r.message.replace('\n', "\n        "));
    match (r.shrunk_from, &case.kind) {
        (Some(n), _) => {
            let _ = writeln!(out, "      (shrunk from {} to {} operations)", n - 1, r.steps.len() - 1);
        }
        (None, CaseKind::Generated { .. }) if !crate::judge::threads::is_plan_steps(&case.steps) => {
            let _ = writeln!(
                out,
                "      (not shrunk, {} operations: only the first {SHRUNK_PER_GATE} per gate are; \
                 `--json` lists its ops for `harness replay --ops`)",
                r.steps.len() - 1
            );
        }
        _ => {}
    }
    for (sign, line) in transcript::diff(r) {
        let line = format!("{sign} {line}");
        let painted = match sign {
            '-' => p.c("31", &line),
            '+' => p.c("32", &line),
            _ => line,
        };
        let _ = writeln!(out, "      {painted}");
    }
    if !r.output.trim().is_empty() {
        let _ = writeln!(out, "      output:");
        for line in r.output.lines().take(12) {
            let _ = writeln!(out, "      │ {line}");
        }
        let more = r.output.lines().count().saturating_sub(12);
        if more > 0 || r.output_dropped > 0 {
            let _ = writeln!(out, "      │ … ({more} more lines, {} bytes dropped)", r.output_dropped);
        }
    }
}

/// A gate's counts: its cases, then its cost checks, which are measured only
/// once the cases pass (until then "not yet measured", not "0/2").
pub fn gate_counts(g: &crate::judge::evaluate::GateResult) -> String {
    let cases = format!("{}/{}", g.cases_passed(), g.cases_total());
    let ok = g.scale.iter().filter(|s| s.passed()).count();
    let skipped = g.scale_skipped.len();
    match (g.scale.len(), skipped) {
        (0, 0) => cases,
        (0, n) => format!("{cases} · cost: {n} not yet measured"),
        (m, 0) => format!("{cases} · cost {ok}/{m}"),
        (m, n) => format!("{cases} · cost {ok}/{m}, {n} not yet measured"),
    }
}

/// A passing cost check as a sentence: its name says what was measured,
/// its `says` what the statement claims.
pub fn cost_sentence(s: &crate::judge::scale::ScaleResult) -> String {
    format!("cost: {}: {}, as the statement asks", s.name, s.says)
}

/// A gate's scale checks: a line each, and for a failing one its message
/// and the measured points.
fn scale_text(out: &mut String, p: &Paint, g: &crate::judge::evaluate::GateResult) {
    for s in &g.scale {
        let secs = s.elapsed_ms as f64 / 1000.0;
        if s.passed() {
            let _ = writeln!(out, "  {} {} ({secs:.2} s)", p.c("32", "✓"), cost_sentence(s));
            continue;
        }
        let _ = writeln!(out, "  {} cost: {} — {}", p.c("31", "✗"), s.name, p.c("1", s.verdict.name()));
        let _ = writeln!(out, "      {}", s.message);
        for line in scale_points(s) {
            let _ = writeln!(out, "      {line}");
        }
    }
    for name in &g.scale_skipped {
        let _ = writeln!(out, "  · cost: {name} — not measured until the gate's cases pass");
    }
}

/// A failing scale check's measured points as a small table.
pub fn scale_points(s: &crate::judge::scale::ScaleResult) -> Vec<String> {
    let mut lines =
        vec![format!("{:>8}  {:>16}  {:>16}", "n", format!("yours {}", s.unit), format!("reference {}", s.unit))];
    for pt in &s.points {
        let yours = pt.yours.map_or("stopped".to_string(), |y| cost_text(&s.unit, y));
        lines.push(format!("{:>8}  {:>16}  {:>16}", scale::size_text(pt.n), yours, cost_text(&s.unit, pt.reference)));
    }
    lines
}

/// A measured cost in its unit: `1.2 µs`, `3.4 MB`.
pub fn cost_text(unit: &str, v: f64) -> String {
    if unit == "bytes" {
        return scale::bytes_text(v);
    }
    if v >= 1e6 {
        format!("{:.1} ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} µs", v / 1e3)
    } else {
        format!("{v:.0} ns")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::judge::evaluate::GateResult;
    use crate::judge::scale::ScaleResult;
    use crate::judge::verdict::Verdict;

    pub(crate) fn scale(name: &str, says: &str, verdict: Verdict) -> ScaleResult {
        ScaleResult {
            name: name.into(),
            kind: "memory".into(),
            says: says.into(),
            verdict,
            message: String::new(),
            unit: "bytes".into(),
            points: Vec::new(),
            yours_growth: None,
            reference_growth: None,
            elapsed_ms: 0,
        }
    }

    pub(crate) fn gate(passed: usize, cases: usize, scale: Vec<ScaleResult>, skipped: &[&str]) -> GateResult {
        let ok = scale.iter().filter(|s| s.passed()).count();
        GateResult {
            gate: 1,
            title: "t".into(),
            total: cases + scale.len() + skipped.len(),
            passed: passed + ok,
            failures: Vec::new(),
            scale,
            scale_skipped: skipped.iter().map(|s| s.to_string()).collect(),
            scale_pending: Vec::new(),
        }
    }

    #[test]
    fn cost_checks_not_measured_are_not_counted_as_failed() {
        assert_eq!(gate_counts(&gate(3, 5, Vec::new(), &["a", "b"])), "3/5 · cost: 2 not yet measured");
        assert_eq!(gate_counts(&gate(4, 4, Vec::new(), &[])), "4/4");
        let checks = vec![scale("a", "O(1)", Verdict::Pass), scale("b", "O(1)", Verdict::TooSlow)];
        assert_eq!(gate_counts(&gate(4, 4, checks, &[])), "4/4 · cost 1/2");
    }

    #[test]
    fn a_passing_cost_line_reads_as_a_sentence() {
        let s = scale(
            "memory after n jobs passed through and n rejected",
            "memory holds at most capacity queued jobs",
            Verdict::Pass,
        );
        assert_eq!(
            cost_sentence(&s),
            "cost: memory after n jobs passed through and n rejected: memory holds at most capacity queued jobs, \
             as the statement asks"
        );
    }
}
