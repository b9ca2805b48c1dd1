//! `harness audit`: is a problem honest? Its reference passes every gate,
//! its starter builds and fails gate 1 with `not_implemented` only, and
//! every mutant passes the gates before its own and is caught at its own
//! gate (by the case the problem names). A surviving mutant is a hole in
//! the hidden tests.
//!
//! The reference, its expectations and the suite are prepared once per
//! problem and every crate is judged against them, so auditing a problem
//! with 25 mutants costs 27 builds and runs, not 27 `check`s.
//!
//! A problem whose gates form a graph is proved on every path. A gate is
//! judged the same on every path that holds it, so each crate is judged
//! once, over every gate a path could need, and each path is then checked
//! from those per-gate results: the audit costs what it did for one path.

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
        text.push_str(&crate::base::diag::strip_ansi(&d.rendered));
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

/// The paths that hold `gate`, shown as `1,2,5,6`, at most
/// `limit` of them and a count of the rest.
fn paths_with(paths: &[Vec<usize>], gate: usize, limit: usize) -> String {
    let with: Vec<String> = paths.iter().filter(|p| p.contains(&gate)).map(|p| crate::cmd::path_text(p)).collect();
    if with.len() > limit {
        format!("{} and {} more", with[..limit].join("; "), with.len() - limit)
    } else {
        with.join("; ")
    }
}

/// A correct solution on a graph: every gate passed, so every path; a
/// failure names the paths it breaks.
fn check_correct_paths(problem: &Problem, subject: &str, eval: &Evaluation) -> Finding {
    let mut f = check_correct(subject, eval, problem.gates.len());
    let paths = problem.paths();
    if !eval.build.ok {
        return f;
    }
    if f.ok {
        f.detail = format!("{} and every one of its {} paths", f.detail, paths.len());
        return f;
    }
    let broken: Vec<String> = eval
        .gates
        .iter()
        .filter(|g| !g.all_passed())
        .map(|g| format!("gate {} fails on paths {}", g.gate, paths_with(&paths, g.gate, 4)))
        .collect();
    f.detail = format!("{}\n{}", broken.join("\n"), f.detail);
    f
}

/// The gates a mutant is judged on: its own and every gate that comes
/// before it on some path that holds it (for a linear problem, gates
/// 1 to its own).
fn mutant_gates(problem: &Problem, m: &Mutant) -> Vec<usize> {
    if !problem.is_graph() {
        return (1..=m.gate).collect();
    }
    let mut gates = std::collections::BTreeSet::from([m.gate]);
    for p in problem.paths() {
        if let Some(at) = p.iter().position(|&g| g == m.gate) {
            gates.extend(&p[..at]);
        }
    }
    gates.into_iter().collect()
}

/// A mutant on a graph: on every path that holds its gate, it passes the
/// gates before it there and is caught at its gate (the per-gate checks
/// are [`check_mutant`]'s). Each broken path is named.
fn check_mutant_paths(problem: &Problem, m: &Mutant, eval: &Evaluation) -> Finding {
    // The per-gate verdict, on the results in gate order.
    let mut f = check_mutant_on(m, eval, &[]);
    if !eval.build.ok {
        return f;
    }
    let passes = |g: usize| eval.gates.iter().find(|r| r.gate == g).is_some_and(|r| r.all_passed());
    let mut broken = Vec::new();
    let paths: Vec<Vec<usize>> = problem.paths().into_iter().filter(|p| p.contains(&m.gate)).collect();
    for p in &paths {
        let at = p.iter().position(|&g| g == m.gate).unwrap_or(0);
        let shown = crate::cmd::path_text(p);
        if let Some(&early) = p[..at].iter().find(|&&g| !passes(g)) {
            broken.push(format!("path {shown}: mutant {} fails gate {early} before its gate {}", m.name, m.gate));
        }
        if passes(m.gate) {
            broken.push(format!("path {shown}: mutant {} passes gate {}", m.name, m.gate));
        }
    }
    if broken.is_empty() {
        if f.ok {
            f.detail = format!("{} on all {} paths that hold gate {}", f.detail, paths.len(), m.gate);
        }
    } else {
        let more = broken.len().saturating_sub(8);
        broken.truncate(8);
        if more > 0 {
            broken.push(format!("… and {more} more"));
        }
        f.ok = false;
        f.detail = format!("{}\n{}", broken.join("\n"), f.detail);
    }
    f
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
    let before: Vec<usize> = (1..m.gate).collect();
    check_mutant_on(m, eval, &before)
}

/// [`check_mutant`] with the gates that must pass before its own given
/// (on a graph they depend on the path: [`check_mutant_paths`] checks them).
fn check_mutant_on(m: &Mutant, eval: &Evaluation, before: &[usize]) -> Finding {
    let subject = format!("mutant {}", m.name);
    if !eval.build.ok {
        return Finding { subject, ok: false, detail: format!("does not build:\n{}", build_text(eval)) };
    }
    let mut problems = Vec::new();
    for g in eval.gates.iter().filter(|g| before.contains(&g.gate) && !g.all_passed()) {
        let names = failing_names(g);
        problems.push(format!(
            "belongs to gate {} but already fails gate {}: {}: either it is caught too early or it is two mistakes",
            m.gate,
            g.gate,
            names.join("; ")
        ));
    }
    let Some(own) = eval.gates.iter().find(|g| g.gate == m.gate) else {
        return Finding { subject, ok: false, detail: format!("gate {} was not judged", m.gate) };
    };
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

/// Base seeds beyond the problem file's own on which the alternate and
/// every variant must pass every generated case (`check --seed <s>` replays
/// one; nearby base seeds share no generated case).
pub const SWEEP_SEEDS: std::ops::RangeInclusive<u64> = 1..=50;
/// Variants are swept over the first this many of them: together with the
/// file's seeds that is thousands of generated cases each, at a fraction of
/// the time (each crate's sweep costs about as much as the reference's).
const VARIANT_SEEDS: u64 = 20;
/// Seeds whose expectations are computed, and judged, in one run.
const SEEDS_PER_RUN: usize = 10;
/// Failing cases named per crate, at most.
const SWEEP_SHOWN: usize = 3;

/// The variants, then the sweep over seeds: each variant passes every gate
/// on the file's seeds (its cases, not its cost: a variant flips what a
/// result is, not how fast it comes), and the alternate and every variant
/// pass the generated cases of every base seed in [`SWEEP_SEEDS`] (the
/// variants: the first [`VARIANT_SEEDS`] of them). The
/// reference's expectations for a batch of seeds are computed once and
/// shared by every crate.
fn audit_variants(
    config: &Config,
    judge: &Judge,
    run: &dyn Fn(&std::path::Path, &[usize]) -> Result<Evaluation>,
) -> Result<Vec<Finding>> {
    let problem = &judge.problem;
    let gates = judge.gates.clone();
    let mut findings = Vec::new();
    let mut own: Vec<(String, std::path::PathBuf)> = Vec::new();
    let alternate = problem.dir.join("alternate");
    if alternate.join("Cargo.toml").is_file() {
        own.push(("alternate".into(), alternate));
    }
    judge.measure_cost.store(false, std::sync::atomic::Ordering::Relaxed);
    for v in &problem.variants {
        let dir = crate::judge::compile::mutant_crate(config, problem, &v.as_mutant(&problem.dir))?;
        let subject = format!("variant {}", v.name);
        let eval = run(&dir, &gates)?;
        // Like the alternate: every gate, so every path that holds it.
        let mut finding = if problem.is_graph() {
            check_correct_paths(problem, &subject, &eval)
        } else {
            check_correct(&subject, &eval, gates.len())
        };
        finding.detail = format!("{}\n{}", finding.detail, v.choice);
        if finding.ok {
            own.push((subject, dir));
        }
        findings.push(finding);
    }
    if own.is_empty() || !problem.has_generated_cases(&gates) {
        return Ok(findings);
    }
    let mut libs = Vec::new();
    for (subject, dir) in own {
        match crate::judge::compile::build(config, &dir)?.lib {
            Some(lib) => libs.push((subject, lib, Vec::<String>::new(), 0usize, dir)),
            None => findings.push(Finding { subject, ok: false, detail: "does not build".into() }),
        }
    }
    let started = std::time::Instant::now();
    let seeds: Vec<u64> = SWEEP_SEEDS.collect();
    for batch in seeds.chunks(SEEDS_PER_RUN) {
        let seeded = judge.seeded_cases(batch)?;
        let cases: Vec<crate::judge::suite::Case> = seeded.iter().map(|(_, c)| c.clone()).collect();
        for (subject, lib, failures, total, dir) in &mut libs {
            if subject != "alternate" && batch[0] > VARIANT_SEEDS {
                continue;
            }
            *total += cases.len();
            for (i, r) in judge.failures_of_own(lib, &cases)? {
                if failures.len() < SWEEP_SHOWN {
                    let (seed, case) = &seeded[i];
                    failures.push(format!(
                        "seed {seed}, gate {}: {} — {} (replay: harness check {} --seed {seed} --solution {})",
                        case.gate,
                        case.name,
                        r.message,
                        problem.id,
                        dir.strip_prefix(&config.root).unwrap_or(dir).display()
                    ));
                } else if failures.len() == SWEEP_SHOWN {
                    failures.push("…".into());
                }
            }
        }
    }
    let span = |subject: &str| {
        let last = if subject == "alternate" { *SWEEP_SEEDS.end() } else { VARIANT_SEEDS };
        format!("{}..={last}", SWEEP_SEEDS.start())
    };
    let secs = started.elapsed().as_secs_f64();
    for (subject, _, failures, total, _) in libs {
        let subject = format!("{subject} over seeds {}", span(&subject));
        findings.push(if failures.is_empty() {
            Finding {
                subject,
                ok: true,
                detail: format!("passes {total} generated cases (the sweep, every crate: {secs:.1} s)"),
            }
        } else {
            Finding {
                subject,
                ok: false,
                detail: format!(
                    "a generated case takes the reference's side of a choice the statements leave open, or \
                     the statements do not say it plainly:\n{}",
                    failures.join("\n")
                ),
            }
        });
    }
    Ok(findings)
}

/// The reference a report shows after a session is cut to the gates the
/// session reached (`refcut`): for every set of gates a session can reach,
/// the cut must build and pass those gates, or the candidate would be shown
/// a solution that is not one. A graph problem whose reference has no
/// markers is shown only to a session that reached every gate.
fn audit_cuts(
    config: &Config,
    judge: &Judge,
    run: &dyn Fn(&std::path::Path, &[usize]) -> Result<Evaluation>,
) -> Result<Finding> {
    let problem = &judge.problem;
    let subject = "reference cuts".to_string();
    let started = std::time::Instant::now();
    let sets = problem.reachable_gate_sets();
    if problem.reference_cut(&sets[0].0)?.is_none() {
        return Ok(Finding {
            subject,
            ok: true,
            detail: "no gate markers: a report shows the reference only after a session that reached every gate".into(),
        });
    }
    judge.measure_cost.store(false, std::sync::atomic::Ordering::Relaxed);
    let mut broken = Vec::new();
    let mut judged = 0;
    for (set, path, k) in &sets {
        // The whole reference is judged already.
        if set.len() == problem.gates.len() {
            continue;
        }
        let source = problem.reference_cut(set)?.unwrap_or_default();
        let name: Vec<String> = set.iter().map(usize::to_string).collect();
        let header = format!(
            "// The `{}` reference cut to gates {}, written by harness from its markers.\n\n",
            problem.id,
            name.join(", ")
        );
        let dir = crate::judge::compile::derived_crate(
            config,
            problem,
            "cuts",
            &format!("gates_{}", name.join("_")),
            &(header + &source),
        )?;
        let gates: Vec<usize> = set.iter().copied().collect();
        let eval = run(&dir, &gates)?;
        judged += 1;
        let path: Vec<String> = path.iter().map(usize::to_string).collect();
        let via = format!("gates {} (path {}, first {k})", name.join(","), path.join(","));
        if !eval.build.ok {
            broken.push(format!("{via}: does not build\n{}", build_text(&eval)));
        } else if let Some(g) = eval.gates.iter().find(|g| !g.all_passed()) {
            broken.push(format!("{via}: fails gate {}: {}", g.gate, failing_names(g).join(", ")));
        }
    }
    Ok(if broken.is_empty() {
        Finding {
            subject,
            ok: true,
            detail: format!(
                "the cut for each of the {judged} sets of gates a session can reach builds and passes them ({:.1} s)",
                started.elapsed().as_secs_f64()
            ),
        }
    } else {
        Finding {
            subject,
            ok: false,
            detail: format!(
                "a report would show a reference that fails the gates the session reached (its gate markers \
                 cut too much or too little):\n{}",
                broken.join("\n")
            ),
        }
    })
}

/// Checks a concurrent gate's mutant gets before it counts as surviving:
/// each check catches one of this project's race mutants about half the
/// time on a loaded two-core machine (`tests/testsuite/race_stress.rs`), so eight
/// miss together well under one time in a hundred.
const CONCURRENT_CHECKS: usize = 8;

/// Checks a time-cost mutant gets before it counts as surviving. CPU time
/// is measured on a machine that other work shares: under the load of a
/// whole test run a mutant that grows ×10 to ×20 at its check can, once in
/// a few dozen checks, measure under the ×5 limit in its confirmation run
/// (a reference point slowed ×2 by the load is enough). The scale stress
/// (`tests/testsuite/scale_stress.rs`) bounds each mutant's catch rate at
/// three rounds in four or better, so three misses together are rare; a
/// memory check counts exactly and gets one. Each later check measures
/// afresh and in full, the reference alongside: answered from the first
/// check's kept verdict (same bytes, same verdict) or against the
/// reference's kept curve, three checks would be one.
const TIME_CHECKS: usize = 3;

/// Audits one problem.
pub fn audit(config: &Config, problem: Problem) -> Result<ProblemAudit> {
    let cancel = AtomicBool::new(false);
    let gates = problem.gates.len();
    let all: Vec<usize> = (1..=gates).collect();
    let graph = problem.is_graph();
    let mut judge = Judge::new(config, problem, &all, None)?;
    // Verdicts are all that matter here; shrinking would only cost time.
    judge.shrink = false;
    let mut findings = Vec::new();
    let no_progress = |_: usize, _: usize| {};
    let run = |dir: &std::path::Path, judged: &[usize]| -> Result<Evaluation> {
        let build = crate::judge::compile::build(config, dir)?;
        judge.evaluate_build(build, judged, &cancel, &no_progress, None)
    };
    let correct = |subject: &str, eval: &Evaluation| {
        if graph { check_correct_paths(&judge.problem, subject, eval) } else { check_correct(subject, eval, gates) }
    };
    let reference = run(&judge.problem.reference_dir(), &all)?;
    let mut finding = correct("reference", &reference);
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
        findings.push(correct("alternate", &run(&alternate, &all)?));
    }
    findings.push(check_starter(&run(&judge.problem.starter_dir(), &[1])?));
    for m in &judge.problem.mutants {
        let dir = crate::judge::compile::mutant_crate(config, &judge.problem, m)?;
        // Scale checks take a second per gate; only a cost mutant's verdict
        // depends on them.
        let check =
            judge.problem.gates[m.gate - 1].scale.iter().find(|c| m.caught_by.as_deref() == Some(c.name.as_str()));
        judge.measure_cost.store(check.is_some(), std::sync::atomic::Ordering::Relaxed);
        let gates = mutant_gates(&judge.problem, m);
        let judged = |eval: &Evaluation| {
            if graph { check_mutant_paths(&judge.problem, m, eval) } else { check_mutant(m, eval) }
        };
        let mut finding = judged(&run(&dir, &gates)?);
        // A race shows in some checks only, and a time measurement can read
        // low under load (a miss is acceptable, a false failure never is):
        // such a mutant gets a few more checks before it counts as
        // surviving.
        let most = if judge.problem.gates[m.gate - 1].concurrency.is_some() {
            CONCURRENT_CHECKS
        } else if check.is_some_and(|c| c.kind == crate::problem::scale::Kind::Time) {
            TIME_CHECKS
        } else {
            1
        };
        let mut checks = 1;
        while !finding.ok && checks < most {
            checks += 1;
            // The same library's scale verdict would be answered from the
            // first check's, and a quick pass leans on the reference's kept
            // curve: a later check measures afresh and in full.
            judge.forget_scale_results();
            judge.quick.store(false, std::sync::atomic::Ordering::Relaxed);
            finding = judged(&run(&dir, &gates)?);
        }
        judge.quick.store(true, std::sync::atomic::Ordering::Relaxed);
        if finding.ok && checks > 1 {
            finding.detail = format!("{} (in check {checks} of at most {most})", finding.detail);
        }
        findings.push(finding);
    }
    findings.extend(audit_variants(config, &judge, &run)?);
    findings.push(audit_cuts(config, &judge, &run)?);
    Ok(ProblemAudit { problem: judge.problem.id.clone(), findings })
}

/// The `audit` command: every problem, or those named.
pub fn command(config: &Config, ids: &[String], json: bool) -> Result<u8> {
    let ids = if ids.is_empty() { crate::problem::model::list_ids(&config.problems_dir)? } else { ids.to_vec() };
    let mut audits = Vec::new();
    for id in &ids {
        let problem = Problem::load(&config.problems_dir, &config.contract_dir, id)?;
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
