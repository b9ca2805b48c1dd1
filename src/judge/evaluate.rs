//! One save → verdict pass: build the solution, check it speaks the
//! contract, run every unlocked gate's cases, group the results by gate.
//!
//! [`Judge`] holds what does not change between saves (the problem, the
//! reference build, the cases with their expectations), so a practice
//! session pays for the reference once and each save pays only for the
//! candidate's build and run.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::base::config::Config;
use crate::base::trace;
use crate::judge::compile::{self, Build, Diagnostic, LoadedLib};
use crate::judge::sandbox::Target;
use crate::judge::scale::{self, ScaleResult};
use crate::judge::suite::{self, Case, CaseResult, Progress};
use crate::problem::model::Problem;
use crate::problem::scale::ScaleCheck;

/// The build half of an evaluation.
#[derive(Clone, Debug)]
pub struct BuildInfo {
    pub ok: bool,
    pub duration: Duration,
    pub diagnostics: Vec<Diagnostic>,
    /// A failure that is not a compiler diagnostic: bad manifest, wrong
    /// crate type, contract mismatch.
    pub failure: Option<String>,
}

/// One gate's results.
#[derive(Clone, Debug)]
pub struct GateResult {
    pub gate: usize,
    pub title: String,
    /// Checks of this gate: its cases and its scale checks.
    pub total: usize,
    pub passed: usize,
    /// The failing cases, in suite order.
    pub failures: Vec<(Case, CaseResult)>,
    /// The gate's scale checks that ran (once its cases all passed).
    pub scale: Vec<ScaleResult>,
    /// The names of the scale checks that did not run because a case failed.
    pub scale_skipped: Vec<String>,
    /// The names of the scale checks still to be measured (the cases all
    /// passed): only in a verdict shown before its cost is known.
    pub scale_pending: Vec<String>,
}

impl GateResult {
    pub fn all_passed(&self) -> bool {
        self.passed == self.total
    }
    /// The cases alone, without the scale checks.
    pub fn cases_total(&self) -> usize {
        self.total - self.scale.len() - self.scale_skipped.len() - self.scale_pending.len()
    }
    /// Whether its scale checks are still being measured.
    pub fn measuring(&self) -> bool {
        !self.scale_pending.is_empty()
    }
    pub fn cases_passed(&self) -> usize {
        self.passed - self.scale.iter().filter(|s| s.passed()).count()
    }
}

/// Everything one evaluation found.
#[derive(Clone, Debug)]
pub struct Evaluation {
    pub build: BuildInfo,
    /// Empty when the build failed.
    pub gates: Vec<GateResult>,
    pub run_time: Duration,
}

impl Evaluation {
    pub fn gates_passed(&self) -> usize {
        self.gates.iter().filter(|g| g.all_passed()).count()
    }
    pub fn all_passed(&self) -> bool {
        self.build.ok && !self.gates.is_empty() && self.gates.iter().all(GateResult::all_passed)
    }
    /// Whether every gate's outcome is known: no scale check is pending.
    pub fn settled(&self) -> bool {
        !self.gates.iter().any(GateResult::measuring)
    }
}

/// A settled evaluation whose failing generated cases are still whole,
/// with what shrinking them needs.
pub struct Unshrunk {
    /// Holds the library's private copy, which is removed when dropped.
    _lib: LoadedLib,
    target: Target,
    path: Vec<usize>,
    results: Vec<Option<CaseResult>>,
    eval: Evaluation,
    started: std::time::Instant,
}

/// Receives an evaluation as it reaches each [`Stage`].
pub type Stages<'a> = &'a dyn Fn(Stage, &Evaluation);

/// How far an evaluation has come when it is handed out early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Every case has run: the verdict of the cases, shown at once. Scale
    /// checks may still be pending (see [`Evaluation::settled`]).
    Verdict,
    /// The pending scale checks have run: every gate's outcome is known.
    Settled,
}

/// The parts of judging that stay fixed for a problem.
pub struct Judge {
    pub problem: Problem,
    /// The gates prepared (their cases and expectations), ascending. Any
    /// path through them can be judged: a gate's cases are the same on
    /// every path that holds it.
    pub gates: Vec<usize>,
    /// The prepared gates' cases, sorted by gate number.
    pub cases: Vec<Case>,
    /// Shrink failing generated cases before reporting them (on by default).
    pub shrink: bool,
    /// Run scale checks (on by default; `audit` turns them off for mutants
    /// that a case catches, whose verdict cannot depend on them).
    pub measure_cost: AtomicBool,
    /// Try each scale check's quick pass first (on by default). Off, every
    /// check is measured in full, the reference alongside, instead of
    /// against its kept curve: `audit` turns it off for a time mutant's
    /// later checks, which must not lean on what the first one measured.
    pub quick: AtomicBool,
    reference: Option<(LoadedLib, Target)>,
    config: Config,
    /// Scale results by (library digest, gate, check): reused while the
    /// library's bytes do not change.
    scale_cache: std::sync::Mutex<std::collections::HashMap<(u64, usize, String), ScaleResult>>,
    /// The reference's measured curves, kept for the judge's life.
    curves: scale::Curves,
}

/// Scale checks measured at once in a quick pass: one per core, at most two
/// (more would only queue on the machine this was measured on).
const MEASURERS: usize = 2;

/// A check's quick pass while its ends run: the points measured, and
/// whether an end left it to the full measurement.
#[derive(Clone, Default)]
struct QuickPoints {
    ends: [Option<scale::Point>; 2],
    undecided: bool,
    /// The ends' measuring time, summed (what the check cost).
    spent: Duration,
}

impl Judge {
    /// Builds the reference (when generated cases need it) and the suite of
    /// `gates` (gate numbers, any order; unknown ones are left out).
    pub fn new(config: &Config, problem: Problem, gates: &[usize], seed: Option<u64>) -> Result<Judge> {
        let mut gates: Vec<usize> = gates.iter().copied().filter(|&g| g >= 1 && g <= problem.gates.len()).collect();
        gates.sort_unstable();
        gates.dedup();
        if gates.is_empty() {
            gates.push(1);
        }
        let needs_reference = problem.has_generated_cases(&gates)
            || gates.iter().any(|&g| {
                let g = &problem.gates[g - 1];
                !g.scale.is_empty() || g.concurrency.is_some()
            });
        let reference = if needs_reference { Some(build_reference(config, &problem)?) } else { None };
        let cases = suite::build_suite(&problem, &gates, reference.as_ref().map(|r| &r.1), seed)?;
        Ok(Judge {
            problem,
            gates,
            cases,
            shrink: true,
            measure_cost: AtomicBool::new(true),
            quick: AtomicBool::new(true),
            reference,
            config: config.clone(),
            scale_cache: Default::default(),
            curves: Default::default(),
        })
    }

    fn target(&self, lib: &LoadedLib) -> Target {
        target(&self.config, &self.problem, lib)
    }

    /// The generated cases of the prepared gates for each base seed, as
    /// `check --seed` builds them (case names carry the replayable per-case
    /// seed), with the reference's expectations computed in one run.
    pub fn seeded_cases(&self, seeds: &[u64]) -> Result<Vec<(u64, Case)>> {
        let Some((_, reference)) = &self.reference else { return Ok(Vec::new()) };
        let mut pending = Vec::new();
        for &seed in seeds {
            let (_, generated) = suite::collect_cases(&self.problem, &self.gates, Some(seed));
            pending.extend(generated.into_iter().map(|g| (seed, g)));
        }
        let calls: Vec<&[crate::problem::script::Call]> = pending.iter().map(|(_, g)| g.3.as_slice()).collect();
        let steps = suite::expect_from_reference(reference, &calls)?;
        Ok(pending
            .into_iter()
            .zip(steps)
            .map(|((base, (gate, name, seed, _)), steps)| {
                (base, Case { gate, name, kind: suite::CaseKind::Generated { seed }, steps })
            })
            .collect())
    }

    /// Judges cases against a library of the problem's own (an alternate,
    /// a variant) the way the reference computes expectations: one process
    /// for all of them, so `audit` can afford many seeds. The failing ones,
    /// in order, by index.
    pub fn failures_of_own(&self, lib: &LoadedLib, cases: &[Case]) -> Result<Vec<(usize, CaseResult)>> {
        let target = Target { shared: true, ..self.target(lib) };
        let steps: Vec<Vec<crate::problem::script::Step>> = cases.iter().map(|c| c.steps.clone()).collect();
        let mut failures = Vec::new();
        for (i, r) in suite::judge_many(&target, &steps, None)?.into_iter().enumerate() {
            match r {
                Some(r) if r.passed() => {}
                Some(r) => failures.push((i, r)),
                None => bail!("the run of {} cases ended before case {}", cases.len(), i + 1),
            }
        }
        Ok(failures)
    }

    /// Judges a finished build on the gates of `path` (a path or the first
    /// gates of one, in its order; gates not prepared are left out; the TUI builds
    /// separately to show the build's state first), in the order a
    /// candidate needs it: the cases' verdict, then the cost of the gates
    /// whose cases all pass, then the first failing generated cases shrunk.
    /// `stages`, when given, receives the evaluation as each of the first
    /// two is reached ([`Stage`]); the returned one is complete.
    pub fn evaluate_build(
        &self,
        build: Build,
        path: &[usize],
        cancel: &AtomicBool,
        progress: Progress<'_>,
        stages: Option<Stages<'_>>,
    ) -> Result<Evaluation> {
        match self.judge_build(build, path, cancel, progress, stages)? {
            (_, Some(unshrunk)) => self.shrink(unshrunk, cancel),
            (eval, None) => Ok(eval),
        }
    }

    /// [`Judge::evaluate_build`] up to its last stage: the settled
    /// evaluation, and what [`Judge::shrink`] needs when there are failing
    /// generated cases to shrink (the TUI shrinks them on another thread,
    /// so the next save never waits for it).
    pub fn judge_build(
        &self,
        build: Build,
        path: &[usize],
        cancel: &AtomicBool,
        progress: Progress<'_>,
        stages: Option<Stages<'_>>,
    ) -> Result<(Evaluation, Option<Unshrunk>)> {
        let path = self.judged(path);
        let mut info = BuildInfo {
            ok: build.ok(),
            duration: build.duration,
            diagnostics: build.diagnostics,
            failure: build.failure,
        };
        let Some(lib) = build.lib else {
            return Ok((Evaluation { build: info, gates: Vec::new(), run_time: Duration::ZERO }, None));
        };
        let started = std::time::Instant::now();
        let target = self.target(&lib);
        trace::mark("judge-start");
        let cases = self.select(&path);
        let cases = cases.as_ref();
        // Every worker checks the handshake before it runs a case, so the
        // cases need no probe of their own first; only when not one case
        // ran does a probe say why (another contract, a library that does
        // not load).
        let results = self.run_cases(&target, cases, cancel, progress)?;
        if !cancel.load(std::sync::atomic::Ordering::Relaxed)
            && results.iter().all(Option::is_none)
            && let Err(why) = suite::probe(&target, &self.problem)?
        {
            info.ok = false;
            info.failure = Some(why);
            return Ok((Evaluation { build: info, gates: Vec::new(), run_time: started.elapsed() }, None));
        }
        trace::mark("cases");
        let mut eval =
            Evaluation { build: info, gates: self.group(cases, &results, &path), run_time: started.elapsed() };
        self.plan_scale(&mut eval.gates);
        let report = |stage: Stage, eval: &Evaluation| {
            if let Some(f) = stages {
                f(stage, eval);
            }
        };
        report(Stage::Verdict, &eval);
        if !eval.settled() {
            self.run_scale(&target, &mut eval.gates, cancel)?;
            eval.run_time = started.elapsed();
            if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                return Ok((eval, None));
            }
            report(Stage::Settled, &eval);
        }
        let shrinkable = self.reference.is_some() && self.shrink && eval.gates.iter().any(|g| !g.failures.is_empty());
        let unshrunk = shrinkable.then(|| Unshrunk { _lib: lib, target, path, results, eval: eval.clone(), started });
        Ok((eval, unshrunk))
    }

    /// Runs the cases: a concurrent gate's through `race` (one worker for
    /// them, checked against the reference), every other case through
    /// `suite`; the results in the cases' order.
    fn run_cases(
        &self,
        target: &Target,
        cases: &[Case],
        cancel: &AtomicBool,
        progress: Progress<'_>,
    ) -> Result<Vec<Option<CaseResult>>> {
        let (racing, sequential): (Vec<usize>, Vec<usize>) =
            (0..cases.len()).partition(|&i| crate::judge::threads::is_plan_steps(&cases[i].steps));
        let reference = self.reference.as_ref().map(|r| &r.1);
        let (Some(reference), false) = (reference, racing.is_empty()) else {
            return suite::run_cases(target, cases, cancel, progress);
        };
        let plain: Vec<Case> = sequential.iter().map(|&i| cases[i].clone()).collect();
        let plain_results = suite::run_cases(target, &plain, cancel, progress)?;
        let racing_cases: Vec<&Case> = racing.iter().map(|&i| &cases[i]).collect();
        let (race_results, _) = crate::judge::race::run_cases(target, reference, &self.problem, &racing_cases, cancel)?;
        let mut results = vec![None; cases.len()];
        for (i, r) in sequential.into_iter().zip(plain_results).chain(racing.into_iter().zip(race_results)) {
            results[i] = r;
        }
        Ok(results)
    }

    /// Shrinks the first failing generated cases of an evaluation; a set
    /// `cancel` stops where it is (what was shrunk by then is kept).
    pub fn shrink(&self, u: Unshrunk, cancel: &AtomicBool) -> Result<Evaluation> {
        let Unshrunk { _lib, target, path, mut results, mut eval, started } = u;
        let Some((_, reference)) = &self.reference else { return Ok(eval) };
        let cases = self.select(&path);
        let cases = cases.as_ref();
        if suite::shrink_failures(&target, reference, cases, &mut results, cancel)? > 0 {
            let scale: Vec<_> = eval.gates.iter().map(|g| (g.scale.clone(), g.scale_skipped.clone())).collect();
            eval.gates = self.group(cases, &results, &path);
            for (g, (measured, skipped)) in eval.gates.iter_mut().zip(scale) {
                g.total += measured.len() + skipped.len();
                g.passed += measured.iter().filter(|s| s.passed()).count();
                g.scale = measured;
                g.scale_skipped = skipped;
            }
            eval.run_time = started.elapsed();
        }
        Ok(eval)
    }

    /// Marks each gate's scale checks as pending (its cases all passed:
    /// they are measured next) or skipped (timing wrong answers teaches
    /// nothing). A gate passes only once its pending checks pass.
    fn plan_scale(&self, gates: &mut [GateResult]) {
        let measuring = self.reference.is_some() && self.measure_cost.load(std::sync::atomic::Ordering::Relaxed);
        for g in gates.iter_mut() {
            let checks = &self.problem.gates[g.gate - 1].scale;
            if !measuring {
                continue;
            }
            let names = checks.iter().map(|c| c.name.clone());
            if g.all_passed() {
                g.scale_pending.extend(names);
            } else {
                g.scale_skipped.extend(names);
            }
            g.total += checks.len();
        }
    }

    /// Runs the pending scale checks, reusing results for the same library
    /// bytes. Checks not measured yet are judged as [`scale::judge_check`]
    /// judges one, against the reference's kept curves: their quick passes'
    /// ends run [`MEASURERS`] at a time ([`Judge::quick_passes`]); a quick
    /// pass can only pass a check; what it leaves undecided is measured in
    /// full, one check at a time, so a failure is decided as carefully as if
    /// it ran alone. A set `cancel` stops between two
    /// measurements; what was not measured stays pending.
    fn run_scale(&self, target: &Target, gates: &mut [GateResult], cancel: &AtomicBool) -> Result<()> {
        let Some((_, reference)) = &self.reference else { return Ok(()) };
        let digest = scale::digest(&target.lib);
        let sig = &self.problem.signature;
        let key = |gate: usize, check: &ScaleCheck| (digest, gate, check.name.clone());
        let cached = |k: &(u64, usize, String)| self.scale_cache.lock().ok().and_then(|c| c.get(k).cloned());
        let todo: Vec<(usize, &ScaleCheck)> = gates
            .iter()
            .flat_map(|g| {
                let checks = &self.problem.gates[g.gate - 1].scale;
                checks.iter().filter(|c| g.scale_pending.contains(&c.name)).map(move |c| (g.gate, c))
            })
            .filter(|(gate, c)| cached(&key(*gate, c)).is_none())
            .collect();
        let points = if self.quick.load(std::sync::atomic::Ordering::Relaxed) {
            self.quick_passes(reference, target, &todo, cancel)?
        } else {
            vec![QuickPoints::default(); todo.len()]
        };
        for ((gate, check), points) in todo.iter().zip(points) {
            let quick = match points {
                QuickPoints { ends: [Some(a), Some(b)], undecided: false, spent } => {
                    scale::quick_decide(check, vec![a, b], spent)
                }
                _ => None,
            };
            let r = match quick {
                Some(r) => Some(r),
                // Undecided: the full measurement, alone.
                None if !cancel.load(std::sync::atomic::Ordering::Relaxed) => {
                    scale::full_check(check, sig, reference, target, &self.curves, cancel)?
                }
                None => None,
            };
            if let (Some(r), Ok(mut c)) = (r, self.scale_cache.lock()) {
                c.insert(key(*gate, check), r);
            }
        }
        for g in gates.iter_mut() {
            let checks = &self.problem.gates[g.gate - 1].scale;
            let pending: Vec<&ScaleCheck> = checks.iter().filter(|c| g.scale_pending.contains(&c.name)).collect();
            for check in pending {
                let Some(result) = cached(&key(g.gate, check)) else { continue };
                g.scale_pending.retain(|n| *n != check.name);
                if result.passed() {
                    g.passed += 1;
                }
                g.scale.push(result);
            }
        }
        Ok(())
    }

    /// The quick passes of `todo`'s checks, in parallel, each check's two
    /// ends apart and the longest expected first (so that the last to
    /// finish is short): each measures its own process's CPU time, which
    /// another measuring process does not slow. Per check: its ends'
    /// points, or undecided.
    fn quick_passes(
        &self,
        reference: &Target,
        target: &Target,
        todo: &[(usize, &ScaleCheck)],
        cancel: &AtomicBool,
    ) -> Result<Vec<QuickPoints>> {
        let sig = &self.problem.signature;
        let mut ends: Vec<(usize, usize, u64, Duration)> = Vec::new();
        for (i, (_, check)) in todo.iter().enumerate() {
            for (end, n) in scale::ends(check).into_iter().enumerate() {
                ends.push((i, end, n, scale::quick_estimate(check, &self.curves, n)));
            }
        }
        ends.sort_by_key(|e| std::cmp::Reverse(e.3));
        let next = std::sync::atomic::AtomicUsize::new(0);
        // Per check: its two ends' points, or undecided (`None` in a slot
        // that was run), or the error that stops judging.
        let points: std::sync::Mutex<Vec<QuickPoints>> = std::sync::Mutex::new(vec![Default::default(); todo.len()]);
        let failed: std::sync::Mutex<Option<anyhow::Error>> = Default::default();
        let workers = MEASURERS.min(ends.len());
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&(i, end, n, _)) = ends.get(k) else { break };
                        let undecided = points.lock().map_or(true, |p| p[i].undecided);
                        if undecided || cancel.load(std::sync::atomic::Ordering::Relaxed) {
                            continue;
                        }
                        let check = todo[i].1;
                        let at = std::time::Instant::now();
                        if trace::enabled() {
                            trace::mark(&format!("quick-start {i}:{n}"));
                        }
                        let point = scale::quick_point(check, sig, reference, target, &self.curves, n);
                        if trace::enabled() {
                            trace::mark(&format!("quick-end {i}:{n}"));
                        }
                        match point {
                            Ok(point) => {
                                if let Ok(mut p) = points.lock() {
                                    p[i].spent += at.elapsed();
                                    match point {
                                        Some(point) => p[i].ends[end] = Some(point),
                                        None => p[i].undecided = true,
                                    }
                                }
                            }
                            Err(e) => {
                                if let Ok(mut f) = failed.lock() {
                                    f.get_or_insert(e);
                                }
                                // Nothing later is taken: the error ends judging.
                                next.store(ends.len(), std::sync::atomic::Ordering::Relaxed);
                                break;
                            }
                        }
                    }
                });
            }
        });
        if let Some(e) = failed.into_inner().ok().flatten() {
            return Err(e);
        }
        Ok(points.into_inner().unwrap_or_default())
    }

    /// Forgets every scale verdict kept for a library's bytes, so that the
    /// next evaluation measures again: a check of the same library is
    /// otherwise answered from what was measured first (the reference's
    /// kept curves stay: they only ever keep the fastest reading).
    pub fn forget_scale_results(&self) {
        if let Ok(mut c) = self.scale_cache.lock() {
            c.clear();
        }
    }

    /// Measures the reference's curves for the scale checks of `gates` that
    /// are not known yet, so that a later save's checks measure only the
    /// candidate. Stops between two measurements once `cancel` is set.
    pub fn warm_scale(&self, gates: &[usize], cancel: &AtomicBool) -> Result<()> {
        let Some((_, reference)) = &self.reference else { return Ok(()) };
        let checks: Vec<&ScaleCheck> = gates
            .iter()
            .filter(|g| self.gates.contains(g))
            .flat_map(|&g| self.problem.gates[g - 1].scale.iter())
            .collect();
        self.curves.warm(&checks, &self.problem.signature, reference, cancel)
    }

    /// The gates of `path` this judge prepared, in the path's order.
    fn judged(&self, path: &[usize]) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::with_capacity(path.len());
        for &g in path {
            if self.gates.contains(&g) && !out.contains(&g) {
                out.push(g);
            }
        }
        if out.is_empty() {
            out.push(self.gates[0]);
        }
        out
    }

    /// The cases of the gates in `path`, in suite order (by gate number):
    /// borrowed when they are a prefix of the suite (a linear problem, or
    /// a path's first gates), copied otherwise.
    fn select(&self, path: &[usize]) -> std::borrow::Cow<'_, [Case]> {
        let prefix = self.cases.iter().take_while(|c| path.contains(&c.gate)).count();
        if self.cases[prefix..].iter().all(|c| !path.contains(&c.gate)) {
            std::borrow::Cow::Borrowed(&self.cases[..prefix])
        } else {
            std::borrow::Cow::Owned(self.cases.iter().filter(|c| path.contains(&c.gate)).cloned().collect())
        }
    }

    /// Groups case results by gate, in the path's order; failures in suite
    /// order.
    fn group(&self, cases: &[Case], results: &[Option<CaseResult>], path: &[usize]) -> Vec<GateResult> {
        let mut gates: Vec<GateResult> = path
            .iter()
            .map(|&n| &self.problem.gates[n - 1])
            .map(|g| GateResult {
                gate: g.number,
                title: g.title.clone(),
                total: 0,
                passed: 0,
                failures: Vec::new(),
                scale: Vec::new(),
                scale_skipped: Vec::new(),
                scale_pending: Vec::new(),
            })
            .collect();
        for (case, result) in cases.iter().zip(results) {
            let Some(result) = result.clone() else { continue };
            let Some(i) = path.iter().position(|&g| g == case.gate) else { continue };
            let gate = &mut gates[i];
            gate.total += 1;
            if result.passed() {
                gate.passed += 1;
            } else {
                gate.failures.push((case.clone(), result));
            }
        }
        gates
    }
}

/// How to run `lib` as a solution of `problem`.
pub fn target(config: &Config, problem: &Problem, lib: &LoadedLib) -> Target {
    Target {
        lib: lib.path.clone(),
        schema_hash: problem.signature.schema().hash(),
        limits: config.limits.clone(),
        shared: false,
        small_stacks: problem.signature.small_stacks(),
    }
}

/// Builds and probes the problem's reference solution; any failure here is
/// the problem's fault, so it is an error, not a verdict.
pub fn build_reference(config: &Config, problem: &Problem) -> Result<(LoadedLib, Target)> {
    let dir = problem.reference_dir();
    let build =
        compile::build(config, &dir).with_context(|| format!("building the reference solution of `{}`", problem.id))?;
    let Some(lib) = build.lib else {
        let mut text = build.failure.clone().unwrap_or_default();
        for d in build.errors() {
            text.push_str(&d.rendered);
        }
        bail!("the reference solution in {} does not build:\n{text}", dir.display());
    };
    // The problem's own code: its cases share a process (see `Target`).
    let target = Target { shared: true, ..target(config, problem, &lib) };
    if let Err(why) = suite::probe(&target, problem)? {
        bail!("the reference solution in {} cannot be judged: {why}", dir.display());
    }
    Ok((lib, target))
}
