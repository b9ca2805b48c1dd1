//! Judging: turn a problem's gates into cases, run them against a built
//! library in workers (in parallel), compare, and shrink what fails.
//!
//! Fixed cases carry their expectations; generated cases get theirs by
//! running the same operations against the reference solution, whose
//! oracle marks results the statement leaves open as `_`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use harness_contract::Value;
use harness_contract::wire::Outcome;

use crate::base::diff;
use crate::judge::sandbox::{self, CaseRun, End, Target};
use crate::judge::threads;
use crate::judge::verdict::Verdict;
use crate::problem::generate;
use crate::problem::model::Problem;
use crate::problem::script::{Call, Step};

#[derive(Clone, Debug, PartialEq)]
pub enum CaseKind {
    Fixed,
    Generated { seed: u64 },
}

/// One hidden test, ready to run.
#[derive(Clone, Debug)]
pub struct Case {
    pub gate: usize,
    pub name: String,
    pub kind: CaseKind,
    pub steps: Vec<Step>,
}

/// How one case went.
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub verdict: Verdict,
    /// One line saying what went wrong (empty on a pass).
    pub message: String,
    /// Index into `steps` of the operation that failed, if one did.
    pub failed_at: Option<usize>,
    /// The steps judged: the case's own, or a shrunk version of them.
    pub steps: Vec<Step>,
    /// What the solution returned, one per operation that returned.
    pub actual: Vec<Value>,
    /// The candidate's captured stdout and stderr.
    pub output: String,
    pub output_dropped: usize,
    /// Length of the original case when `steps` is a shrunk version.
    pub shrunk_from: Option<usize>,
    pub elapsed: Duration,
}

impl CaseResult {
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Pass
    }
}

/// A generated case before it has expectations: gate, name, seed, calls.
pub type Pending = (usize, String, u64, Vec<Call>);

/// Fixed cases of `gates` (gate numbers), then generated ones (operations
/// only; expectations come from [`expect_from_reference`]). A gate's cases
/// are its own whatever path it is judged on: its generator draws only
/// from its own weights, so only operations of what it builds on.
pub fn collect_cases(problem: &Problem, gates: &[usize], seed: Option<u64>) -> (Vec<Case>, Vec<Pending>) {
    let mut fixed = Vec::new();
    let mut generated = Vec::new();
    for gate in gates.iter().filter_map(|&g| problem.gates.get(g.wrapping_sub(1))) {
        for c in &gate.cases {
            // A concurrent case: its threads' results are judged for
            // linearizability (`judge::race`), so it needs no expectations.
            let steps = match (&gate.concurrency, c.threads.is_empty()) {
                (Some(conc), false) => {
                    let setup = c.steps.iter().map(|s| s.call.clone()).collect();
                    let expect: Vec<Value> = c.steps.iter().map(|s| s.expect.clone()).collect();
                    let plan = threads::Plan {
                        runs: c.repeat.unwrap_or(conc.repeat),
                        seed: 0,
                        budget: Duration::ZERO,
                        setup,
                        threads: c.threads.clone(),
                    };
                    plan.steps(&expect)
                }
                _ => c.steps.clone(),
            };
            fixed.push(Case { gate: gate.number, name: c.name.clone(), kind: CaseKind::Fixed, steps });
        }
        if let (Some(spec), Some(conc)) = (&gate.generate, &gate.concurrency) {
            let base = seed.unwrap_or(spec.seed);
            for i in 0..spec.cases {
                let s = generate::case_seed(base, gate.number, i);
                let plan = threads::generated(problem, spec, conc.threads, conc.repeat, s);
                let name = format!("generated #{} (seed {s:#018x}, {} threads)", i + 1, conc.threads);
                fixed.push(Case {
                    gate: gate.number,
                    name,
                    kind: CaseKind::Generated { seed: s },
                    steps: plan.steps(&[]),
                });
            }
        } else if let Some(spec) = &gate.generate {
            let base = seed.unwrap_or(spec.seed);
            for i in 0..spec.cases {
                let s = generate::case_seed(base, gate.number, i);
                let name = format!("generated #{} (seed {s:#018x})", i + 1);
                generated.push((gate.number, name, s, generate::generate(problem, spec, s)));
            }
        }
    }
    (fixed, generated)
}

/// Runs operation sequences against the reference and returns them as
/// steps with the reference's results as expectations.
pub fn expect_from_reference(reference: &Target, calls: &[&[Call]]) -> Result<Vec<Vec<Step>>> {
    expect_from_reference_until(reference, calls, None)
}

/// Like [`expect_from_reference`]; a set `cancel` ends it with an error.
fn expect_from_reference_until(
    reference: &Target,
    calls: &[&[Call]],
    cancel: Option<&AtomicBool>,
) -> Result<Vec<Vec<Step>>> {
    if calls.is_empty() {
        return Ok(Vec::new());
    }
    let run = sandbox::run_cancellable(reference, calls, cancel)?;
    if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
        bail!("cancelled");
    }
    if let End::Mismatch { .. } | End::LoadError(_) = &run.end {
        bail!("the reference solution cannot be loaded: {}", end_text(&run.end))
    }
    let mut out = Vec::with_capacity(calls.len());
    for (i, case) in calls.iter().enumerate() {
        let one = run.case(i);
        if one.end != End::Completed {
            bail!("the reference solution did not finish a generated case: {}\n{}", end_text(&one.end), one.output)
        }
        let outcomes = one.outcomes.as_slice();
        let mut steps = Vec::with_capacity(case.len());
        for (j, call) in case.iter().enumerate() {
            match outcomes.get(j) {
                Some(Outcome::Returned(v)) => steps.push(Step { call: call.clone(), expect: v.clone() }),
                other => bail!(
                    "the reference solution failed on a generated case at `{call}` (operation {j}): {other:?}\n\
                     This is a bug in the problem, not in your solution."
                ),
            }
        }
        out.push(steps);
    }
    Ok(out)
}

/// All cases of `gates` with expectations, sorted by gate number (within
/// a gate, fixed cases first); `Judge` relies on the order.
pub fn build_suite(
    problem: &Problem,
    gates: &[usize],
    reference: Option<&Target>,
    seed: Option<u64>,
) -> Result<Vec<Case>> {
    let (mut cases, generated) = collect_cases(problem, gates, seed);
    if !generated.is_empty() {
        let reference = reference.ok_or_else(|| anyhow!("generated cases need the reference solution"))?;
        let calls: Vec<&[Call]> = generated.iter().map(|g| g.3.as_slice()).collect();
        let steps = expect_from_reference(reference, &calls)?;
        for ((gate, name, seed, _), steps) in generated.into_iter().zip(steps) {
            cases.push(Case { gate, name, kind: CaseKind::Generated { seed }, steps });
        }
    }
    cases.sort_by_key(|c| c.gate);
    Ok(cases)
}

/// Checks that a library loads and speaks this problem's contract.
/// `Err` carries a message for the candidate.
pub fn probe(target: &Target, problem: &Problem) -> Result<std::result::Result<(), String>> {
    let run = sandbox::run(target, &[])?;
    Ok(match run.end {
        End::Completed => Ok(()),
        End::Mismatch { abi, schema, .. } => Err(mismatch_text(problem, abi, &schema)),
        End::LoadError(e) => Err(e),
        other => Err(format!("the library failed while loading: {}\n{}", end_text(&other), run.output)),
    })
}

fn mismatch_text(problem: &Problem, abi: u32, schema: &str) -> String {
    if abi != harness_contract::ABI_VERSION {
        return format!(
            "the solution was built against contract ABI version {abi}, this harness speaks version {}: \
             rebuild it against the contract crate in this repository",
            harness_contract::ABI_VERSION
        );
    }
    let expected = problem.signature.schema().canonical_text();
    let mut text = format!(
        "the solution was built against a different `{}` contract than {} declares \
         (- the problem, + the solution):\n",
        problem.id,
        problem.file().display()
    );
    for line in diff::lines(&expected, schema, diff::Context::Lines(0)).into_iter().flat_map(|h| h.lines) {
        text.push_str(&format!("{} {}\n", line.change.sign(), line.text));
    }
    text
}

/// Compares one run of one case with its expectations.
pub fn evaluate(steps: &[Step], run: &CaseRun, target: &Target) -> CaseResult {
    let outcomes = run.outcomes.as_slice();
    let mut actual = Vec::new();
    let result = |verdict, message: String, failed_at| CaseResult {
        verdict,
        message,
        failed_at,
        steps: steps.to_vec(),
        actual: Vec::new(),
        output: run.output.clone(),
        output_dropped: run.output_dropped,
        shrunk_from: None,
        elapsed: run.elapsed,
    };
    for (i, outcome) in outcomes.iter().enumerate() {
        let Some(step) = steps.get(i) else { break };
        let (verdict, message) = match outcome {
            Outcome::Returned(v) if step.expect.accepts(v) => {
                actual.push(v.clone());
                continue;
            }
            Outcome::Returned(v) => {
                actual.push(v.clone());
                (Verdict::WrongAnswer, format!("`{}` expected {}, got {v}", step.call, step.expect))
            }
            Outcome::Panicked { message, location } => {
                let at = if location.is_empty() { String::new() } else { format!(" at {location}") };
                (Verdict::Panic, format!("`{}` panicked{at}: {message}", step.call))
            }
            Outcome::NotImplemented { op } => {
                (Verdict::NotImplemented, format!("`{op}` is not implemented yet (reached by `{}`)", step.call))
            }
            Outcome::Rejected(why) => {
                (Verdict::WrongAnswer, format!("`{}` was refused by the library: {why}", step.call))
            }
        };
        let mut r = result(verdict, message, Some(i));
        r.actual = actual;
        return refused(r, run);
    }
    let complete = outcomes.len() >= steps.len();
    let failed_at = if complete { None } else { Some(outcomes.len()) };
    let running = failed_at.and_then(|i| steps.get(i));
    let during = match running {
        Some(step) => format!("during `{}`", step.call),
        None => "after the last operation (while dropping the instance?)".to_string(),
    };
    let (verdict, message) = match &run.end {
        End::Completed if complete => (Verdict::Pass, String::new()),
        End::Completed => (Verdict::Exited, format!("the worker stopped early {during}")),
        // Sized to the case: how many operations it had when time ran out.
        End::Timeout => (Verdict::Timeout, timeout_text(steps, failed_at, target.limits.case_timeout.as_millis())),
        end => end_verdict(end, &run.output, target, &during, running.map(|s| s.call.op.as_str())),
    };
    let mut r = result(verdict, message, failed_at);
    r.actual = actual;
    refused(r, run)
}

/// A case the sandbox refused something is `refused`, whatever else it
/// did (a refused call fails with EPERM, which candidate code may ignore);
/// the message says what was refused, then how the case ended. Only a
/// tampered channel outranks it: then nothing the case says is believed.
fn refused(mut r: CaseResult, run: &CaseRun) -> CaseResult {
    if !run.refused.any() || r.verdict == Verdict::Tampered {
        return r;
    }
    let then = match r.verdict {
        Verdict::Pass => "its results were right otherwise".to_string(),
        _ if r.message.is_empty() => format!("then: {}", r.verdict),
        _ => format!("then: {}", r.message),
    };
    r.message = format!("{}; {then}", run.refused.text());
    r.verdict = Verdict::Refused;
    r
}

/// A case is large, for a timeout's message, when it has this many
/// operations or the running one has a string or list this long; an
/// integer argument this large may be a count of work (or a time).
const LARGE: u128 = 1000;

/// The largest integer argument of a call, and its longest string (in
/// bytes) or list (nested values included).
fn call_size(call: &Call) -> (u128, u128) {
    fn size(v: &Value) -> (u128, u128) {
        match v {
            Value::Int(i) => (i.unsigned_abs(), 0),
            Value::Str(s) => (0, s.len() as u128),
            Value::List(items) => {
                items.iter().map(size).fold((0, items.len() as u128), |(a, b), (c, d)| (a.max(c), b.max(d)))
            }
            _ => (0, 0),
        }
    }
    call.args.iter().map(size).fold((0, 0), |(a, b), (c, d)| (a.max(c), b.max(d)))
}

/// A call as a message shows it: cut after 80 characters.
fn short(call: &Call) -> String {
    let text = call.to_string();
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// What a case that ran out of time says: what was running and how large
/// it was, and, where the case is large, that a cost problem is the
/// likelier cause than an endless loop.
fn timeout_text(steps: &[Step], failed_at: Option<usize>, limit_ms: u128) -> String {
    let Some((i, step)) = failed_at.and_then(|i| steps.get(i).map(|s| (i, s))) else {
        return format!("no result within {limit_ms} ms after the last operation (while dropping the instance?)");
    };
    let (int, len) = call_size(&step.call);
    let head = format!(
        "no result within {limit_ms} ms during `{}`, operation {} of {}",
        short(&step.call),
        i + 1,
        steps.len()
    );
    const COST: &str = "a cost problem, work that grows faster than the statement allows (a scan or a copy per \
                        step, a nested loop)";
    if len >= LARGE || steps.len() as u128 >= LARGE {
        let what = if len >= LARGE {
            format!("an argument of {len} items or bytes")
        } else {
            format!("{} operations", steps.len())
        };
        format!("{head}, in a case of {what}: at this size that is more likely {COST} than an endless loop")
    } else if int >= LARGE {
        format!(
            "{head}: if its argument {int} is how much work the call asks for, more likely {COST} than an endless loop"
        )
    } else {
        format!("{head} (an endless loop?)")
    }
}

/// The verdict of a case whose process did not complete it, and why;
/// `during` says where (`during \`op(…)\``), `op` the operation running
/// when that is known (its own stack size names a SIGSEGV).
pub fn end_verdict(end: &End, output: &str, target: &Target, during: &str, op: Option<&str>) -> (Verdict, String) {
    match end {
        End::Completed => (Verdict::Pass, String::new()),
        End::Timeout => (
            Verdict::Timeout,
            format!("no result within {} ms {during} (an endless loop?)", target.limits.case_timeout.as_millis()),
        ),
        End::Signal(sig) => classify_signal(*sig, output, target, during, op),
        End::Exited(code) => (
            Verdict::Exited,
            format!("the process exited with code {code} {during} without returning (std::process::exit?)"),
        ),
        End::Mismatch { .. } | End::LoadError(_) => (Verdict::Crash, end_text(end)),
        End::Tampered(why) => {
            (Verdict::Tampered, format!("the solution wrote into the harness's result channel {during} ({why})"))
        }
        End::TooLarge(why) => (Verdict::MemoryLimit, format!("{why} {during}")),
    }
}

fn classify_signal(sig: i32, output: &str, target: &Target, during: &str, op: Option<&str>) -> (Verdict, String) {
    const SIGKILL: i32 = 9;
    const SIGABRT: i32 = 6;
    const SIGSEGV: i32 = 11;
    const SIGXCPU: i32 = 24;
    const SIGSYS: i32 = 31;
    let small_stack = op.and_then(|op| target.small_stacks.iter().find(|(name, _)| name == op));
    match sig {
        // The contract runs this op on a thread of its own, whose guard
        // page the library's std does not watch: its overflow is a SIGSEGV.
        SIGSEGV if let Some((_, kib)) = small_stack => (
            Verdict::StackOverflow,
            format!(
                "the stack overflowed {during}: it runs your code on a {kib} KiB stack, so something \
                 recursed as deep as the input (a SIGSEGV here is a stack overflow)"
            ),
        ),
        SIGABRT if output.contains("has overflowed its stack") => (
            Verdict::StackOverflow,
            format!(
                "the stack overflowed {during} (unbounded recursion?); the stack is {} MiB",
                target.limits.stack_bytes >> 20
            ),
        ),
        SIGABRT if output.contains("memory allocation of") => (
            Verdict::MemoryLimit,
            format!("an allocation failed at the {} MiB memory limit {during}", target.limits.memory_bytes >> 20),
        ),
        SIGABRT if let Some(first) = first_panic(output) => (
            Verdict::Panic,
            format!("panicked {during} at {first}, then panicked again while unwinding, which aborted the process"),
        ),
        SIGABRT => (Verdict::Abort, format!("the process aborted {during} (std::process::abort?)")),
        SIGXCPU => (Verdict::Timeout, format!("the CPU-time limit was reached {during}")),
        SIGSYS => {
            (Verdict::Refused, format!("the process was killed by SIGSYS {during}: the sandbox refused a system call"))
        }
        SIGKILL => (Verdict::MemoryLimit, format!("the process was killed {during} (out of memory?)")),
        _ => (Verdict::Crash, format!("the process was killed by {} {during}", sandbox::signal_name(sig))),
    }
}

/// The first panic of a call that a second panic aborted, as the
/// library's panic hook wrote it to stderr: `<location>: <message>`.
fn first_panic(output: &str) -> Option<&str> {
    output.lines().find_map(|l| l.strip_prefix(harness_contract::runtime::FIRST_PANIC_MARK))
}

fn end_text(end: &End) -> String {
    match end {
        End::Completed => "completed".into(),
        End::Timeout => "timed out".into(),
        End::Signal(s) => format!("killed by {}", sandbox::signal_name(*s)),
        End::Exited(c) => format!("exited with code {c}"),
        End::Mismatch { abi, hash, .. } => {
            format!("contract mismatch (ABI {abi}, schema {hash:016x})")
        }
        End::LoadError(e) => e.clone(),
        End::Tampered(why) => format!("the library wrote into the harness's result channel ({why})"),
        End::TooLarge(why) => why.clone(),
    }
}

/// Limits on shrinking one failing case.
const SHRINK_ROUNDS: usize = 60;
const SHRINK_TIME: Duration = Duration::from_secs(10);
/// Failing generated cases shrunk per gate; the rest are shown whole. The
/// first few failures are the ones a candidate reads, and each shrink
/// costs worker round trips on the save → verdict path.
pub const SHRUNK_PER_GATE: usize = 3;

/// Judges several cases in one worker, each in a process of its own. A
/// case is `None` when the worker itself ended before reaching it, or when
/// `cancel` was set first.
pub fn judge_many(
    target: &Target,
    cases: &[Vec<Step>],
    cancel: Option<&AtomicBool>,
) -> Result<Vec<Option<CaseResult>>> {
    let calls: Vec<Vec<Call>> = cases.iter().map(|steps| steps.iter().map(|s| s.call.clone()).collect()).collect();
    let refs: Vec<&[Call]> = calls.iter().map(Vec::as_slice).collect();
    let run = sandbox::run_cancellable(target, &refs, cancel)?;
    Ok(cases.iter().zip(0..).map(|(steps, i)| run.cases.get(i).map(|one| evaluate(steps, one, target))).collect())
}

/// Shrinks a failing generated case to a shorter one that fails with the
/// same verdict: first cut everything after the failing operation, then
/// delta debugging: try removing each chunk of operations, halving the
/// chunk size when no removal keeps the failure. All removals of one round
/// are judged together (one reference worker for the expectations, one
/// worker for the solution), so a round costs two process starts. Each
/// attempt recomputes the expectations with the reference, so a shorter
/// case is judged exactly as a case of that length would be.
/// A set `cancel` (a newer save) stops it where it is.
pub fn shrink(target: &Target, reference: &Target, failing: CaseResult, cancel: &AtomicBool) -> CaseResult {
    if !failing.verdict.shrinkable() {
        return failing;
    }
    let verdict = failing.verdict;
    let original_len = failing.steps.len();
    let original = failing.clone();
    let started = Instant::now();
    // The first candidate, in order, that fails the same way. The search
    // runs a round's candidates one after another in one process, as the
    // reference does for the expectations (a process each would cost a
    // fork per candidate, hundreds per case); the case it ends on is judged
    // again in a process of its own below, and kept only if it fails the
    // same way there.
    let search = Target { shared: true, ..target.clone() };
    let attempt = |candidates: Vec<Vec<Call>>| -> Option<CaseResult> {
        if cancel.load(Ordering::Relaxed) {
            return None;
        }
        let refs: Vec<&[Call]> = candidates.iter().map(Vec::as_slice).collect();
        let expected = expect_from_reference_until(reference, &refs, Some(cancel)).ok()?;
        let results = judge_many(&search, &expected, Some(cancel)).ok()?;
        results.into_iter().flatten().find(|r| r.verdict == verdict)
    };
    let mut best = failing;
    if let Some(k) = best.failed_at
        && k + 1 < best.steps.len()
        && let Some(r) = attempt(vec![best.steps[..=k].iter().map(|s| s.call.clone()).collect()])
    {
        best = r;
    }
    let mut chunk = (best.steps.len() - 1).div_ceil(2);
    let mut rounds = 0;
    while chunk >= 1 && rounds < SHRINK_ROUNDS && started.elapsed() < SHRINK_TIME && !cancel.load(Ordering::Relaxed) {
        rounds += 1;
        let n = best.steps.len();
        // Every way to remove one chunk (never the constructor at 0).
        let candidates: Vec<Vec<Call>> = (1..n)
            .step_by(chunk)
            .map(|i| {
                let end = (i + chunk).min(n);
                best.steps[..i].iter().chain(&best.steps[end..]).map(|s| s.call.clone()).collect()
            })
            .collect();
        match attempt(candidates) {
            Some(r) => best = r,
            None => chunk /= 2,
        }
        chunk = chunk.min((best.steps.len() - 1).max(1));
        if best.steps.len() <= 2 {
            break;
        }
    }
    if best.steps.len() >= original_len || cancel.load(Ordering::Relaxed) {
        return best;
    }
    // Judged as every case is: alone, in a fresh process.
    match judge_many(target, std::slice::from_ref(&best.steps), Some(cancel)) {
        Ok(mut fresh) => match fresh.pop().flatten() {
            Some(mut r) if r.verdict == verdict => {
                r.shrunk_from = Some(original_len);
                r
            }
            _ => original,
        },
        Err(_) => original,
    }
}

/// Progress of a suite run, for the TUI.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// Runs `f` over `items` on up to `jobs` threads, stopping early when
/// `cancel` is set; returns the results in order (`None` where skipped).
fn parallel<T: Sync, R: Send>(
    jobs: usize,
    items: &[T],
    cancel: &AtomicBool,
    f: impl Fn(&T) -> Result<R> + Sync,
) -> Result<Vec<Option<R>>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let error: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            scope.spawn(|| {
                while !cancel.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { return };
                    match f(item) {
                        Ok(r) => results.lock().expect("no panics while held")[i] = Some(r),
                        Err(e) => {
                            *error.lock().expect("no panics while held") = Some(e);
                            return;
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = error.into_inner().expect("threads joined") {
        return Err(e);
    }
    Ok(results.into_inner().expect("threads joined"))
}

/// Runs every case, on up to `target.limits.jobs` workers at once. Returns
/// `None` for cases skipped because `cancel` was set.
///
/// Each worker loads the library once and forks a process per case, so
/// every verdict, transcript and captured output is the case's own and
/// nothing is judged twice; a worker start costs far more than a fork, so
/// there is one worker per job, dealt every `jobs`-th case (gates differ in
/// how long their cases run; dealing spreads them evenly). If a worker
/// itself ends early (killed from outside its sandbox), the cases it did
/// not reach go to a new worker.
pub fn run_cases(
    target: &Target,
    cases: &[Case],
    cancel: &AtomicBool,
    progress: Progress<'_>,
) -> Result<Vec<Option<CaseResult>>> {
    let done = AtomicUsize::new(0);
    let lanes = deal(cases.len(), target.limits.jobs);
    let per_lane = parallel(lanes.len(), &lanes, cancel, |lane| {
        let mut out: Vec<Option<CaseResult>> = Vec::with_capacity(lane.len());
        while out.len() < lane.len() && !cancel.load(Ordering::Relaxed) {
            let steps: Vec<Vec<Step>> = lane[out.len()..].iter().map(|&i| cases[i].steps.clone()).collect();
            let results = judge_many(target, &steps, Some(cancel))?;
            let before = out.len();
            out.extend(results.into_iter().take_while(Option::is_some));
            progress(done.fetch_add(out.len() - before, Ordering::Relaxed) + out.len() - before, cases.len());
            if out.len() == before {
                // Not one case judged: only a cancel does that.
                break;
            }
        }
        Ok(out)
    })?;
    let mut results: Vec<Option<CaseResult>> = vec![None; cases.len()];
    for (lane, out) in lanes.iter().zip(per_lane) {
        for (&i, r) in lane.iter().zip(out.unwrap_or_default()) {
            results[i] = r;
        }
    }
    Ok(results)
}

/// Deals `n` case indices to at most `jobs` lanes, round robin.
fn deal(n: usize, jobs: usize) -> Vec<Vec<usize>> {
    let lanes = jobs.clamp(1, n.max(1));
    (0..lanes).map(|l| (l..n).step_by(lanes).collect()).filter(|l: &Vec<usize>| !l.is_empty()).collect()
}

/// Shrinks the first [`SHRUNK_PER_GATE`] failing generated cases of each
/// gate in place; returns how many were shrunk.
pub fn shrink_failures(
    target: &Target,
    reference: &Target,
    cases: &[Case],
    results: &mut [Option<CaseResult>],
    cancel: &AtomicBool,
) -> Result<usize> {
    let mut picked: Vec<(usize, CaseResult)> = Vec::new();
    let mut per_gate = std::collections::BTreeMap::<usize, usize>::new();
    for (i, (case, r)) in cases.iter().zip(results.iter()).enumerate() {
        if let (CaseKind::Generated { .. }, Some(r)) = (&case.kind, r)
            && !r.passed()
            && !threads::is_plan_steps(&case.steps)
            && r.verdict.shrinkable()
        {
            let n = per_gate.entry(case.gate).or_default();
            if *n < SHRUNK_PER_GATE {
                *n += 1;
                picked.push((i, r.clone()));
            }
        }
    }
    let shrunk =
        parallel(target.limits.jobs, &picked, cancel, |(_, r)| Ok(shrink(target, reference, r.clone(), cancel)))?;
    let mut count = 0;
    for ((i, _), r) in picked.iter().zip(shrunk) {
        if let Some(r) = r {
            count += usize::from(r.shrunk_from.is_some());
            results[*i] = Some(r);
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(line: &str) -> Step {
        let (op, rest) = line.split_once('(').unwrap();
        let args = rest.trim_end_matches(')');
        let args = if args.is_empty() {
            Vec::new()
        } else {
            args.split(", ")
                .map(|a| match a.strip_prefix('"') {
                    Some(s) => Value::Str(s.trim_end_matches('"').to_string()),
                    None => Value::Int(a.parse().unwrap()),
                })
                .collect()
        };
        Step { call: Call { op: op.into(), args }, expect: Value::Unit }
    }

    #[test]
    fn a_timeout_says_what_ran_and_suggests_cost_in_a_large_case() {
        let small = [step("put(\"a\", 1)"), step("get(\"a\")")];
        let text = timeout_text(&small, Some(1), 2000);
        assert_eq!(text, "no result within 2000 ms during `get(\"a\")`, operation 2 of 2 (an endless loop?)");
        let chain = [step("set(\"A1\", \"1\")"), step("fill_chain(\"A\", 1, 4000)"), step("get(\"A4000\")")];
        let text = timeout_text(&chain, Some(1), 2000);
        assert!(text.contains("during `fill_chain(\"A\", 1, 4000)`, operation 2 of 3"), "{text}");
        assert!(text.contains("if its argument 4000 is how much work") && text.contains("cost problem"), "{text}");
        let long = [step(&format!("feed(\"{}\")", "x".repeat(5000)))];
        let text = timeout_text(&long, Some(0), 2000);
        assert!(text.contains("an argument of 5000 items or bytes") && text.contains("cost problem"), "{text}");
        assert!(text.len() < 400, "a long call is cut: {text}");
        let many: Vec<Step> = (0..1500).map(|i| step(&format!("put(\"k\", {})", i % 7))).collect();
        let text = timeout_text(&many, Some(1200), 2000);
        assert!(text.contains("operation 1201 of 1500, in a case of 1500 operations"), "{text}");
        assert!(!text.contains("endless loop?"), "{text}");
    }

    #[test]
    fn a_sigsegv_on_a_helpers_small_stack_is_a_stack_overflow() {
        let limits = crate::base::config::Limits {
            case_timeout: Duration::from_secs(2),
            memory_bytes: 1 << 30,
            stack_bytes: 64 << 20,
            output_bytes: 1 << 16,
            jobs: 1,
        };
        let target = Target {
            lib: "-".into(),
            schema_hash: 0,
            limits,
            shared: false,
            small_stacks: vec![("fill_chain".into(), 256)],
        };
        let (verdict, text) =
            classify_signal(11, "", &target, "during `fill_chain(\"A\", 1, 4000)`", Some("fill_chain"));
        assert_eq!(verdict, Verdict::StackOverflow);
        assert!(text.contains("256 KiB stack"), "{text}");
        let (verdict, _) = classify_signal(11, "", &target, "during `set(\"A1\", \"1\")`", Some("set"));
        assert_eq!(verdict, Verdict::Crash);
        let (verdict, _) = classify_signal(11, "", &target, "after the last operation", None);
        assert_eq!(verdict, Verdict::Crash);
    }

    #[test]
    fn cases_are_dealt_round_robin_to_one_lane_per_job() {
        assert_eq!(deal(5, 2), vec![vec![0, 2, 4], vec![1, 3]]);
        assert_eq!(deal(2, 4), vec![vec![0], vec![1]]);
        assert_eq!(deal(3, 0), vec![vec![0, 1, 2]]);
        assert!(deal(0, 2).is_empty());
    }
}
