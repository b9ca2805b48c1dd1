//! `harness audit`: is a problem honest? Its reference passes every gate,
//! its starter builds and fails gate 1 with `not_implemented` only, and
//! every mutant passes the gates before its own and is caught at its own
//! gate (by the case the problem names). A surviving mutant is a hole in
//! the hidden tests.
//!
//! The reference, its expectations and the suite are prepared once per
//! problem and every crate is judged against them, so auditing a problem
//! with 25 mutants costs 27 builds and runs, not 27 `check`s.

use std::sync::atomic::AtomicBool;

use anyhow::Result;
use serde::Serialize;
use serde_json::json;

use crate::base::config::Config;
use crate::judge::evaluate::{Evaluation, Judge};
use crate::judge::verdict::Verdict;
use crate::problem::model::{Mutant, Problem};

/// What the audit found about one crate.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// `reference`, `alternate`, `starter` or `mutant <name>`.
    pub subject: String,
    pub ok: bool,
    pub detail: String,
}

/// One problem's audit.
#[derive(Clone, Debug, Serialize)]
pub struct ProblemAudit {
    pub problem: String,
    pub findings: Vec<Finding>,
}

impl ProblemAudit {
    pub fn ok(&self) -> bool {
        self.findings.iter().all(|f| f.ok)
    }
}

fn build_text(eval: &Evaluation) -> String {
    let mut text = eval.build.failure.clone().unwrap_or_default();
    for d in eval.build.diagnostics.iter().filter(|d| d.level == "error") {
        text.push_str(&crate::ui::results::strip_ansi(&d.rendered));
    }
    text
}

/// The names of a gate's failures: its failing cases and scale checks.
fn failing_names(g: &crate::judge::evaluate::GateResult) -> Vec<String> {
    let mut names: Vec<String> = g.failures.iter().map(|(c, _)| c.name.clone()).collect();
    names.extend(g.scale.iter().filter(|s| !s.passed()).map(|s| format!("{} ({})", s.name, s.verdict)));
    names
}

/// The reference's own growth in each scale check must fit the claim: a
/// setup that does not build the state it says, or a reference that is
/// not what the statement asks, shows here.
fn reference_scale(problem: &Problem, eval: &Evaluation) -> (Vec<String>, Vec<String>) {
    let (mut notes, mut wrong) = (Vec::new(), Vec::new());
    for g in &eval.gates {
        for s in &g.scale {
            let Some(check) = problem.gates[g.gate - 1].scale.iter().find(|c| c.name == s.name) else { continue };
            let span = match (s.points.first(), s.points.last()) {
                (Some(a), Some(b)) => b.n as f64 / a.n as f64,
                _ => 1.0,
            };
            let e = s.reference_growth.map_or(0.0, |gr| gr.max(1e-9).ln() / span.ln());
            notes.push(format!(
                "gate {} cost `{}`: reference ~n^{e:.2} ({:.2} s)",
                g.gate,
                s.name,
                s.elapsed_ms as f64 / 1e3
            ));
            if e > check.claim.reference_exponent_limit() {
                wrong.push(format!(
                    "gate {} cost `{}`: the reference grows ~n^{e:.2}, too fast for its claim {}",
                    g.gate,
                    s.name,
                    check.claim.big_o()
                ));
            }
        }
    }
    (notes, wrong)
}

/// The reference, or an alternate: a correct solution passes every gate.
fn check_correct(subject: &str, eval: &Evaluation, gates: usize) -> Finding {
    let subject = subject.to_string();
    if !eval.build.ok {
        return Finding { subject, ok: false, detail: format!("does not build:\n{}", build_text(eval)) };
    }
    let failing: Vec<String> = eval
        .gates
        .iter()
        .flat_map(|g| g.failures.iter().map(move |(c, r)| format!("gate {}: {} — {}", g.gate, c.name, r.message)))
        .chain(eval.gates.iter().flat_map(|g| {
            g.scale.iter().filter(|s| !s.passed()).map(move |s| format!("gate {}: {} — {}", g.gate, s.name, s.message))
        }))
        .collect();
    if failing.is_empty() {
        let cases: usize = eval.gates.iter().map(|g| g.cases_total()).sum();
        let checks: usize = eval.gates.iter().map(|g| g.scale.len()).sum();
        Finding {
            subject,
            ok: true,
            detail: format!("passes all {gates} gates ({cases} cases, {checks} scale checks)"),
        }
    } else {
        Finding { subject, ok: false, detail: format!("fails {} case(s):\n{}", failing.len(), failing.join("\n")) }
    }
}

fn check_starter(eval: &Evaluation) -> Finding {
    let subject = "starter".to_string();
    if !eval.build.ok {
        return Finding { subject, ok: false, detail: format!("does not build:\n{}", build_text(eval)) };
    }
    let gate1 = &eval.gates[0];
    let others: Vec<String> = gate1
        .failures
        .iter()
        .filter(|(_, r)| r.verdict != Verdict::NotImplemented)
        .map(|(c, r)| format!("{} — {}", c.name, r.verdict))
        .collect();
    if gate1.failures.is_empty() {
        Finding { subject, ok: false, detail: "passes gate 1: a starter must leave the work to the candidate".into() }
    } else if !others.is_empty() {
        let std_todo = gate1.failures.iter().any(|(_, r)| r.message.contains("not yet implemented"));
        let hint = if std_todo {
            "\nstd's `todo!()` is a panic like any other: a body not written yet is `harness_contract::todo!()`"
        } else {
            ""
        };
        Finding {
            subject,
            ok: false,
            detail: format!("fails gate 1 with verdicts other than not_implemented:\n{}{hint}", others.join("\n")),
        }
    } else {
        Finding { subject, ok: true, detail: format!("fails gate 1 with not_implemented only ({} cases)", gate1.total) }
    }
}

fn check_mutant(m: &Mutant, eval: &Evaluation) -> Finding {
    let subject = format!("mutant {}", m.name);
    if !eval.build.ok {
        return Finding { subject, ok: false, detail: format!("does not build:\n{}", build_text(eval)) };
    }
    let mut problems = Vec::new();
    for g in eval.gates.iter().filter(|g| g.gate < m.gate && !g.all_passed()) {
        let names = failing_names(g);
        problems.push(format!(
            "belongs to gate {} but already fails gate {}: {}: either it is caught too early or it is two mistakes",
            m.gate,
            g.gate,
            names.join("; ")
        ));
    }
    let own = &eval.gates[m.gate - 1];
    let mut catching: Vec<&str> = own.failures.iter().map(|(c, _)| c.name.as_str()).collect();
    catching.extend(own.scale.iter().filter(|s| !s.passed()).map(|s| s.name.as_str()));
    let scale = own.scale.iter().find(|s| m.caught_by.as_deref() == Some(s.name.as_str()));
    if own.all_passed() {
        problems.push(format!("survives gate {}: the hidden tests have a hole (add the case that catches it)", m.gate));
    } else if let Some(case) = &m.caught_by
        && !catching.contains(&case.as_str())
    {
        let skipped = if own.scale_skipped.contains(case) {
            " (a scale check runs only once the gate's cases pass: a cost mutant must pass every case)"
        } else {
            ""
        };
        problems.push(format!("is not caught by `{case}`{skipped}; caught by: {}", failing_names(own).join("; ")));
    } else if let Some(s) = scale
        && !matches!(s.verdict, Verdict::TooSlow | Verdict::UnboundedMemory)
    {
        problems.push(format!("`{}` fails it with {}, not a cost verdict: {}", s.name, s.verdict, s.message));
    }
    if problems.is_empty() {
        let named = m.caught_by.as_deref().map_or(String::new(), |c| format!(" by `{c}`"));
        let detail = match scale {
            Some(s) => format!("caught at gate {}{named}: {} — {}", m.gate, s.verdict, s.message),
            None => {
                format!("caught at gate {}{named} ({} of {} cases fail)", m.gate, own.failures.len(), own.cases_total())
            }
        };
        Finding { subject, ok: true, detail }
    } else {
        Finding { subject, ok: false, detail: problems.join("\n") }
    }
}

/// Checks a concurrent gate's mutant gets before it counts as surviving:
/// each check catches one of this project's race mutants about half the
/// time on a loaded two-core machine (`tests/race_stress.rs`), so eight
/// miss together well under one time in a hundred.
const CONCURRENT_CHECKS: usize = 8;

/// Audits one problem.
pub fn audit(config: &Config, problem: Problem) -> Result<ProblemAudit> {
    let cancel = AtomicBool::new(false);
    let gates = problem.gates.len();
    let mut judge = Judge::new(config, problem, gates, None)?;
    // Verdicts are all that matter here; shrinking would only cost time.
    judge.shrink = false;
    let mut findings = Vec::new();
    let no_progress = |_: usize, _: usize| {};
    let run = |dir: &std::path::Path, upto: usize| -> Result<Evaluation> {
        let build = crate::judge::compile::build(config, dir)?;
        judge.evaluate_build(build, upto, &cancel, &no_progress, None)
    };
    let reference = run(&judge.problem.reference_dir(), gates)?;
    let mut finding = check_correct("reference", &reference, gates);
    let (notes, wrong) = reference_scale(&judge.problem, &reference);
    if !wrong.is_empty() {
        finding.ok = false;
        finding.detail = format!("{}\n{}", finding.detail, wrong.join("\n"));
    } else if !notes.is_empty() {
        finding.detail = format!("{}\n{}", finding.detail, notes.join("\n"));
    }
    findings.push(finding);
    // A second correct solution of another design, where the problem has
    // one: proof that the cases accept what the statements leave open, and
    // that the scale checks pass another design.
    let alternate = judge.problem.dir.join("alternate");
    if alternate.join("Cargo.toml").is_file() {
        findings.push(check_correct("alternate", &run(&alternate, gates)?, gates));
    }
    findings.push(check_starter(&run(&judge.problem.starter_dir(), 1)?));
    for m in &judge.problem.mutants {
        let dir = crate::judge::compile::mutant_crate(config, &judge.problem, m)?;
        // Scale checks take a second per gate; only a cost mutant's verdict
        // depends on them.
        let cost =
            judge.problem.gates[m.gate - 1].scale.iter().any(|c| m.caught_by.as_deref() == Some(c.name.as_str()));
        judge.measure_cost.store(cost, std::sync::atomic::Ordering::Relaxed);
        let mut finding = check_mutant(m, &run(&dir, m.gate)?);
        // A race shows in some checks only (a miss is acceptable, a false
        // failure never is): a concurrent gate's mutant gets a few more
        // checks before it counts as surviving.
        let concurrent = judge.problem.gates[m.gate - 1].concurrency.is_some();
        let mut checks = 1;
        while concurrent && !finding.ok && checks < CONCURRENT_CHECKS {
            checks += 1;
            finding = check_mutant(m, &run(&dir, m.gate)?);
        }
        if concurrent && finding.ok && checks > 1 {
            finding.detail = format!("{} (in check {checks} of at most {CONCURRENT_CHECKS})", finding.detail);
        }
        findings.push(finding);
    }
    Ok(ProblemAudit { problem: judge.problem.id.clone(), findings })
}

/// The `audit` command: every problem, or those named.
pub fn command(config: &Config, ids: &[String], json: bool) -> Result<u8> {
    let ids = if ids.is_empty() { crate::problem::model::list_ids(&config.problems_dir)? } else { ids.to_vec() };
    let mut audits = Vec::new();
    for id in &ids {
        let problem = Problem::load(&config.problems_dir, id)?;
        let a = audit(config, problem)?;
        if !json {
            print_audit(&a);
        }
        audits.push(a);
    }
    let ok = audits.iter().all(ProblemAudit::ok);
    if json {
        println!("{}", serde_json::to_string_pretty(&json!({ "ok": ok, "problems": audits }))?);
    } else {
        let bad: usize = audits.iter().map(|a| a.findings.iter().filter(|f| !f.ok).count()).sum();
        println!(
            "{}",
            if ok { "audit: every problem is honest".to_string() } else { format!("audit: {bad} finding(s)") }
        );
    }
    Ok(if ok { 0 } else { 1 })
}

fn print_audit(a: &ProblemAudit) {
    println!("{}", a.problem);
    for f in &a.findings {
        let mark = if f.ok { "✓" } else { "✗" };
        let mut lines = f.detail.lines();
        println!("  {mark} {:<40} {}", f.subject, lines.next().unwrap_or(""));
        for line in lines {
            println!("      {line}");
        }
    }
}
