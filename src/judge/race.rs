//! A concurrent gate's cases from the parent's side: run each in the
//! candidate's worker (`judge::threads` records the history there), then
//! judge every run's history for linearizability (`judge::linearize`),
//! asking the reference for the results of candidate orders in batches.
//!
//! Each run of a case is checked on its own, and within a run each value
//! of the gate's `independent` parameter (each key) on its own: the
//! statement says their states are independent, so a history is
//! linearizable exactly when each key's calls are, and a key's calls are
//! few. All searches of all cases advance together: each round, every
//! search that needs reference results for orders it has not seen adds
//! them to one batch, and one worker of the reference replays the batch
//! (the setup, then that key's calls in that order). A case fails at its
//! first run with a key no order explains; the failure shows that key's
//! smallest window of overlapping calls as a timeline.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use harness_contract::Value;
use harness_contract::wire::Outcome;

use crate::judge::linearize::{self, Op, Replays, Status, Violation};
use crate::judge::sandbox::{self, CaseRun, End, Target};
use crate::judge::suite::{self, Case, CaseResult};
use crate::judge::threads::{History, Plan};
use crate::judge::verdict::Verdict;
use crate::problem::model::Problem;
use crate::problem::script::{Call, Step};

/// Steps one search may take in one round (a search that runs out counts
/// as a pass: a miss, never a false failure).
const SEARCH_BUDGET: usize = 200_000;
/// New orders one search may ask for per round.
const NEEDS_PER_ROUND: usize = 8;
/// Rounds of reference replays at most.
const MAX_ROUNDS: usize = 200;
/// Orders asked for per round, at most.
const BATCH: usize = 400;

/// What judging a batch of concurrent cases cost, for the notes.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Histories checked (runs × keys).
    pub searches: usize,
    /// Searches that ran out of budget or rounds (counted as passes).
    pub gave_up: usize,
    pub rounds: usize,
    /// Orders replayed on the reference.
    pub replays: usize,
    /// Calls in the largest history checked (one run, one key).
    pub largest: usize,
    /// Time in the checker itself, and in the reference's replays.
    pub checking: Duration,
    pub replaying: Duration,
    /// Runs made, and the wall clock of the candidate's worker.
    pub runs: usize,
    pub running: Duration,
}

/// One run's calls on one key, ready for the checker.
struct Search {
    case: usize,
    run: usize,
    key: Option<String>,
    ops: Vec<Op>,
    calls: Vec<Call>,
    done: bool,
}

/// Judges concurrent cases: runs them in one worker of `target` and checks
/// their histories against `reference`. `None` where `cancel` stopped it.
pub fn run_cases(
    target: &Target,
    reference: &Target,
    problem: &Problem,
    cases: &[&Case],
    cancel: &AtomicBool,
) -> Result<(Vec<Option<CaseResult>>, Stats)> {
    let mut stats = Stats::default();
    if cases.is_empty() {
        return Ok((Vec::new(), stats));
    }
    // Each case's threads run within three quarters of the case's limit;
    // the rest is left for the worker to end the process.
    let budget = target.limits.case_timeout * 3 / 4;
    let plans: Vec<Plan> = cases
        .iter()
        .map(|c| {
            let calls: Vec<Call> = c.steps.iter().map(|s| s.call.clone()).collect();
            Plan::from_calls(&calls).map(|p| Plan { budget, ..p })
        })
        .collect::<Option<_>>()
        .ok_or_else(|| anyhow::anyhow!("a concurrent case that is not a plan"))?;
    let calls: Vec<Vec<Call>> = plans.iter().map(Plan::encode).collect();
    let refs: Vec<&[Call]> = calls.iter().map(Vec::as_slice).collect();
    let running = Instant::now();
    let run = sandbox::run_cancellable(target, &refs, Some(cancel))?;
    stats.running = running.elapsed();
    if cancel.load(Ordering::Relaxed) {
        return Ok((vec![None; cases.len()], stats));
    }
    let mut results: Vec<Option<CaseResult>> = vec![None; cases.len()];
    let mut searches = Vec::new();
    // One trie of reference results per case, shared by its runs and keys
    // (a call's id is the same in every run).
    let mut tries: Vec<Replays> = (0..cases.len()).map(|_| Replays::new()).collect();
    for (i, (case, plan)) in cases.iter().zip(&plans).enumerate() {
        match prepare(problem, case, plan, &run.case(i), target, i, &mut stats.runs) {
            Err(failure) => results[i] = Some(*failure),
            Ok(s) => searches.extend(s),
        }
    }
    stats.searches = searches.len();
    stats.largest = searches.iter().map(|s| s.ops.len()).max().unwrap_or(0);
    let mut violations: BTreeMap<usize, (usize, Violation)> = BTreeMap::new();
    for round in 0..MAX_ROUNDS {
        if cancel.load(Ordering::Relaxed) {
            return Ok((vec![None; cases.len()], stats));
        }
        let started = Instant::now();
        let mut needs: Vec<(usize, Vec<usize>)> = Vec::new();
        for (si, s) in searches.iter_mut().enumerate() {
            if s.done || violations.contains_key(&s.case) {
                continue;
            }
            // A full batch: the other searches wait for the next round,
            // when the replays of this one may already answer them.
            if needs.len() >= BATCH {
                continue;
            }
            match linearize::check(&s.ops, &tries[s.case], SEARCH_BUDGET, NEEDS_PER_ROUND) {
                Status::Linearizable(_) => s.done = true,
                Status::GaveUp => {
                    s.done = true;
                    stats.gave_up += 1;
                }
                Status::Violation(v) => {
                    s.done = true;
                    violations.insert(s.case, (si, v));
                }
                Status::Needs(orders) => needs.extend(orders.into_iter().map(|o| (si, o))),
            }
        }
        stats.checking += started.elapsed();
        if needs.is_empty() {
            break;
        }
        stats.rounds = round + 1;
        let started = Instant::now();
        if !replay(&needs, &searches, &plans, reference, cancel, &mut tries)? {
            return Ok((vec![None; cases.len()], stats));
        }
        stats.replays += needs.len();
        stats.replaying += started.elapsed();
    }
    stats.gave_up += searches.iter().filter(|s| !s.done && !violations.contains_key(&s.case)).count();
    verdicts(cases, &plans, &run, &searches, &violations, &mut results);
    if std::env::var_os("HARNESS_RACE_STATS").is_some() {
        eprintln!("race: {stats:?}");
    }
    Ok((results, stats))
}

/// Each case not already failed: a pass, or the violation its search
/// found.
fn verdicts(
    cases: &[&Case],
    plans: &[Plan],
    run: &sandbox::Run,
    searches: &[Search],
    violations: &BTreeMap<usize, (usize, Violation)>,
    results: &mut [Option<CaseResult>],
) {
    for (i, case) in cases.iter().enumerate() {
        if results[i].is_some() {
            continue;
        }
        let plan = &plans[i];
        let elapsed = run.case(i).elapsed;
        results[i] = Some(match violations.get(&i) {
            None => CaseResult {
                verdict: Verdict::Pass,
                message: String::new(),
                failed_at: None,
                steps: case.steps.clone(),
                actual: Vec::new(),
                output: String::new(),
                output_dropped: 0,
                shrunk_from: None,
                elapsed,
            },
            Some((si, v)) => {
                let s = &searches[*si];
                violation_result(plan, s, v, run.case(i), elapsed)
            }
        });
    }
}

/// Replays on the reference the orders the searches need, each distinct
/// sequence of calls once, and files the results in each case's trie.
/// `false` when `cancel` stopped it.
fn replay(
    needs: &[(usize, Vec<usize>)],
    searches: &[Search],
    plans: &[Plan],
    reference: &Target,
    cancel: &AtomicBool,
    tries: &mut [Replays],
) -> Result<bool> {
    // Runs of one case often took the same order: each distinct
    // sequence of calls is replayed once.
    let mut sequences: Vec<Vec<Call>> = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut which: Vec<usize> = Vec::with_capacity(needs.len());
    for (si, order) in needs {
        let s = &searches[*si];
        let plan = &plans[s.case];
        let seq: Vec<Call> = plan.setup.iter().cloned().chain(order.iter().map(|&k| s.calls[k].clone())).collect();
        let text: String = seq.iter().map(|c| format!("{c}\n")).collect();
        let next = sequences.len();
        let j = *seen.entry(text).or_insert(next);
        if j == next {
            sequences.push(seq);
        }
        which.push(j);
    }
    // Sequences that start with `new` (which makes a fresh instance) run
    // back to back in one process, a pack each: a process per sequence
    // cost more than the calls themselves.
    let packs = pack(&sequences);
    let joined: Vec<Vec<Call>> =
        packs.iter().map(|p| p.iter().flat_map(|&j| sequences[j].iter().cloned()).collect()).collect();
    let refs: Vec<&[Call]> = joined.iter().map(Vec::as_slice).collect();
    let t0 = Instant::now();
    let replayed = sandbox::run_cancellable(reference, &refs, Some(cancel))?;
    if std::env::var_os("HARNESS_RACE_STATS").is_some() {
        eprintln!(
            "race: replayed {} orders in {} processes, {} calls, in {:?}",
            sequences.len(),
            refs.len(),
            refs.iter().map(|r| r.len()).sum::<usize>(),
            t0.elapsed()
        );
    }
    if cancel.load(Ordering::Relaxed) {
        return Ok(false);
    }
    let mut values: Vec<Vec<Value>> = vec![Vec::new(); sequences.len()];
    for (k, (members, calls)) in packs.iter().zip(&joined).enumerate() {
        let mut all = reference_results(&replayed.case(k), calls)?.into_iter();
        for &j in members {
            values[j] = all.by_ref().take(sequences[j].len()).collect();
        }
    }
    for ((si, order), j) in needs.iter().zip(which) {
        let s = &searches[*si];
        let setup = plans[s.case].setup.len();
        let ids: Vec<usize> = order.iter().map(|&k| s.ops[k].id).collect();
        tries[s.case].insert(&ids, &values[j][setup..]);
    }
    Ok(true)
}

/// Calls one replaying process runs at most: far inside a case's time
/// limit even for a slow reference in a debug build.
const PACK_CALLS: usize = 1024;

/// The sequences grouped into processes, by index: consecutive sequences
/// that begin with `new` share one while their calls stay within
/// [`PACK_CALLS`]; any other sequence runs alone.
fn pack(sequences: &[Vec<Call>]) -> Vec<Vec<usize>> {
    let mut packs: Vec<Vec<usize>> = Vec::new();
    // Calls in the last pack, while more sequences may join it.
    let mut open: Option<usize> = None;
    for (j, seq) in sequences.iter().enumerate() {
        let fresh = seq.first().is_some_and(|c| c.op == "new");
        match (open, packs.last_mut()) {
            (Some(calls), Some(last)) if fresh && calls + seq.len() <= PACK_CALLS => {
                last.push(j);
                open = Some(calls + seq.len());
            }
            _ => {
                packs.push(vec![j]);
                open = fresh.then_some(seq.len());
            }
        }
    }
    packs
}

/// The reference's result for each call of a replayed sequence.
fn reference_results(one: &CaseRun, calls: &[Call]) -> Result<Vec<Value>> {
    if one.end != End::Completed {
        bail!("the reference solution did not finish replaying an order of a concurrent case: {:?}", one.end);
    }
    calls
        .iter()
        .enumerate()
        .map(|(j, call)| match one.outcomes.get(j) {
            Some(Outcome::Returned(v)) => Ok(v.clone()),
            other => bail!(
                "the reference solution failed replaying an order of a concurrent case at `{call}`: {other:?}\n\
                 This is a bug in the problem, not in your solution."
            ),
        })
        .collect()
}

/// A case that failed before its history could be checked; `steps` are
/// its setup, shown as it ran (what went wrong is in the message).
fn plain(verdict: Verdict, message: String, run: &CaseRun, steps: Vec<Step>) -> CaseResult {
    CaseResult {
        verdict,
        message,
        failed_at: None,
        actual: steps.iter().map(|s| s.expect.clone()).collect(),
        steps,
        output: run.output.clone(),
        output_dropped: run.output_dropped,
        shrunk_from: None,
        elapsed: run.elapsed,
    }
}

/// The searches of one case's history, or the case's result when it
/// already failed another way (a crash, a panic, a deadlock).
fn prepare(
    problem: &Problem,
    case: &Case,
    plan: &Plan,
    run: &CaseRun,
    target: &Target,
    index: usize,
    runs: &mut usize,
) -> std::result::Result<Vec<Search>, Box<CaseResult>> {
    let setup_steps: Vec<Step> = case.steps[1..=plan.setup.len()].to_vec();
    let fail = |verdict, message| Err(Box::new(plain(verdict, message, run, setup_steps.clone())));
    if run.end != End::Completed {
        let during = format!("while {} threads ran", plan.threads.len());
        let (verdict, message) = suite::end_verdict(&run.end, &run.output, target, &during, None);
        return fail(verdict, message);
    }
    let history = match run.outcomes.as_slice() {
        [Outcome::Returned(v)] => History::from_value(v),
        _ => None,
    };
    let Some(history) = history else {
        return fail(Verdict::Tampered, "the concurrent case's history came back malformed".into());
    };
    *runs += history.runs;
    let call_of = |thread: Option<usize>, i: usize| -> Option<&Call> {
        match thread {
            None => plan.setup.get(i),
            Some(t) => plan.threads.get(t)?.get(i),
        }
    };
    if history.records.iter().any(|r| call_of(r.thread, r.index).is_none() || r.run >= plan.runs.max(1)) {
        return fail(Verdict::Tampered, "the concurrent case's history names calls it does not have".into());
    }
    if let Some((run_no, in_flight)) = &history.stuck {
        let mut parts = Vec::new();
        for (t, c) in in_flight.iter().enumerate() {
            parts.push(match c.and_then(|i| plan.threads.get(t)?.get(i)) {
                Some(call) => format!("thread {} in `{call}`", t + 1),
                None => format!("thread {} done", t + 1),
            });
        }
        return fail(
            Verdict::Timeout,
            format!(
                "run {} of {} did not finish within {} ms: {} (a deadlock, or a lock never released?)",
                run_no + 1,
                plan.runs,
                plan.budget.as_millis(),
                parts.join(", ")
            ),
        );
    }
    // A call that did not return ends the case with its own verdict.
    for r in &history.records {
        let call = call_of(r.thread, r.index).expect("checked above");
        let bad = bad_record(r, call, &setup_steps);
        if let Some((verdict, message)) = bad {
            return fail(verdict, message);
        }
    }
    let key_param = problem.gates[case.gate - 1].concurrency.as_ref().and_then(|c| c.independent.clone());
    let key_of = |call: &Call| -> Option<String> {
        let param = key_param.as_ref()?;
        let (params, _) = problem.signature.lookup(&call.op)?;
        let at = params.iter().position(|(n, _)| n == param)?;
        call.args.get(at).map(|v| v.to_string())
    };
    // By run and key: the calls and what they returned.
    type Part = (Vec<Op>, Vec<Call>);
    let mut by: BTreeMap<(usize, Option<String>), Part> = BTreeMap::new();
    for r in history.records.iter().filter(|r| r.thread.is_some()) {
        let thread = r.thread.expect("filtered");
        let call = call_of(r.thread, r.index).expect("checked above");
        let Outcome::Returned(result) = &r.outcome else { continue };
        let entry = by.entry((r.run, key_of(call))).or_default();
        let id = plan.call_id(r.thread, r.index);
        entry.0.push(Op {
            id,
            thread,
            call: call.to_string(),
            result: result.clone(),
            invoked: r.invoked,
            returned: r.returned,
        });
        entry.1.push(call.clone());
    }
    Ok(by
        .into_iter()
        .map(|((run, key), (ops, calls))| Search { case: index, run, key, ops, calls, done: false })
        .collect())
}

/// What is wrong with one recorded call, if anything: a setup call that
/// returned other than expected, or any call that panicked, was not
/// implemented or was refused. (A thread's result is judged by the search.)
fn bad_record(r: &crate::judge::threads::Record, call: &Call, setup_steps: &[Step]) -> Option<(Verdict, String)> {
    let who = match r.thread {
        None => "in the setup".to_string(),
        Some(t) => format!("on thread {} (run {})", t + 1, r.run + 1),
    };
    match &r.outcome {
        Outcome::Returned(v) => match r.thread {
            None if !setup_steps[r.index].expect.accepts(v) => Some((
                Verdict::WrongAnswer,
                format!("`{call}` {who} expected {}, got {v}", setup_steps[r.index].expect),
            )),
            _ => None,
        },
        Outcome::Panicked { message, location } => {
            let at = if location.is_empty() { String::new() } else { format!(" at {location}") };
            Some((Verdict::Panic, format!("`{call}` panicked {who}{at}: {message}")))
        }
        Outcome::NotImplemented { op } => {
            let op = if op.is_empty() { call.op.as_str() } else { op.as_str() };
            Some((Verdict::NotImplemented, format!("`{op}` is not implemented yet (reached by `{call}` {who})")))
        }
        Outcome::Rejected(why) => {
            Some((Verdict::WrongAnswer, format!("`{call}` {who} was refused by the library: {why}")))
        }
    }
}

fn violation_result(plan: &Plan, s: &Search, v: &Violation, run: CaseRun, elapsed: Duration) -> CaseResult {
    let window = linearize::window(&s.ops, v);
    let mut steps = Vec::new();
    let mut actual = Vec::new();
    for &i in &window {
        let needed = v.next.iter().find(|(k, _)| *k == i).and_then(|(_, e)| e.clone());
        steps.push(Step { call: s.calls[i].clone(), expect: needed.unwrap_or_else(|| s.ops[i].result.clone()) });
        actual.push(s.ops[i].result.clone());
    }
    let message = timeline(plan, s, v, &window);
    CaseResult {
        verdict: Verdict::NotLinearizable,
        message,
        failed_at: None,
        steps,
        actual,
        output: run.output,
        output_dropped: run.output_dropped,
        shrunk_from: None,
        elapsed,
    }
}

/// Columns of a timeline's bars.
const WIDTH: usize = 36;

/// The failure as text: which run and key, the window's calls as bars on
/// one time axis (one line per call, by thread), the calls before it, and
/// what a valid order would have needed next.
fn timeline(plan: &Plan, s: &Search, v: &Violation, window: &[usize]) -> String {
    let ops = &s.ops;
    let key = s.key.as_ref().map_or(String::new(), |k| format!(" on key {k}"));
    let mut out = format!(
        "run {} of {}{key}: no order of these overlapping calls, consistent with when they ran, explains their results",
        s.run + 1,
        plan.runs
    );
    let start = window.iter().map(|&i| ops[i].invoked).min().unwrap_or(0);
    let end = window.iter().map(|&i| ops[i].returned).max().unwrap_or(start).max(start + 1);
    let col = |t: u64| ((t.saturating_sub(start)) as u128 * (WIDTH as u128 - 1) / (end - start) as u128) as usize;
    let _ = write!(out, "\n  time {:>8.1} µs {:>w$} {:.1} µs", 0.0, "", (end - start) as f64 / 1e3, w = WIDTH - 8);
    for &i in window {
        let (a, b) = (col(ops[i].invoked), col(ops[i].returned).max(col(ops[i].invoked)));
        let mut bar = vec![' '; WIDTH];
        for (c, cell) in bar.iter_mut().enumerate().take(b + 1).skip(a) {
            *cell = if c == a {
                '['
            } else if c == b {
                ']'
            } else {
                '='
            };
        }
        if a == b {
            bar[a] = '|';
        }
        let bar: String = bar.into_iter().collect();
        let _ = write!(out, "\n  thread {}  {bar}  {} -> {}", ops[i].thread + 1, ops[i].call, ops[i].result);
    }
    let before = v.prefix.iter().filter(|i| !window.contains(i)).count();
    if before > 0 {
        let _ = write!(
            out,
            "\n  before the window, {before} call(s) of this key took effect in an order that explains them"
        );
    }
    let in_window: Vec<String> = v
        .prefix
        .iter()
        .filter(|i| window.contains(i))
        .map(|&i| format!("{} -> {}", ops[i].call, ops[i].result))
        .collect();
    if !in_window.is_empty() {
        let _ = write!(out, "\n  the longest valid order goes on with: {}", in_window.join(", "));
    }
    let _ = write!(out, "\n  then a valid order needs one of these next, and none returned that:");
    for (i, needed) in &v.next {
        let needed = needed.as_ref().map_or("(not replayed)".to_string(), |n| n.to_string());
        let _ = write!(
            out,
            "\n    thread {}: {} -> {needed}   (it returned {})",
            ops[*i].thread + 1,
            ops[*i].call,
            ops[*i].result
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(ops: &[&str]) -> Vec<Call> {
        ops.iter().map(|op| Call { op: (*op).into(), args: Vec::new() }).collect()
    }

    #[test]
    fn sequences_that_make_a_fresh_instance_share_a_process_up_to_the_cap() {
        let long: Vec<&str> = std::iter::once("new").chain(std::iter::repeat_n("get", PACK_CALLS - 2)).collect();
        let sequences = vec![
            seq(&["new", "put", "get"]),
            seq(&["new", "get"]),
            // No `new`: it would see the state the one before left.
            seq(&["put", "get"]),
            seq(&["new", "get"]),
            // Over the cap together with the one before.
            seq(&long),
            seq(&["new"]),
            seq(&[]),
            seq(&["new"]),
        ];
        assert_eq!(pack(&sequences), vec![vec![0, 1], vec![2], vec![3], vec![4, 5], vec![6], vec![7]]);
        assert!(pack(&[]).is_empty());
    }

    fn op(id: usize, thread: usize, call: &str, result: bool, invoked: u64, returned: u64) -> Op {
        Op { id, thread, call: call.into(), result: Value::Bool(result), invoked, returned }
    }

    #[test]
    fn the_timeline_draws_the_window_and_says_what_was_needed() {
        let plan = Plan { runs: 200, seed: 0, budget: Duration::ZERO, setup: Vec::new(), threads: Vec::new() };
        let ops = vec![
            op(0, 0, "shared_allow(\"a\", 0)", true, 0, 1_000),
            op(1, 0, "shared_allow(\"a\", 300)", true, 10_000, 14_000),
            op(1, 2, "shared_allow(\"a\", 300)", true, 11_000, 16_000),
        ];
        let search = Search { case: 0, run: 36, key: Some("\"a\"".into()), ops, calls: Vec::new(), done: true };
        let v = Violation { prefix: vec![0, 1], next: vec![(2, Some(Value::Bool(false)))] };
        let window = linearize::window(&search.ops, &v);
        assert_eq!(window, vec![1, 2], "the settled call before the window is left out");
        let text = timeline(&plan, &search, &v, &window);
        assert!(text.starts_with("run 37 of 200 on key \"a\": no order"), "{text}");
        let bars: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("thread")).collect();
        assert_eq!(bars.len(), 3, "{text}");
        assert!(bars[0].contains("thread 1  [") && bars[0].ends_with("shared_allow(\"a\", 300) -> true"), "{text}");
        // Thread 3's bar starts later and ends at the window's end.
        assert!(bars[1].find('[').unwrap() > bars[0].find('[').unwrap(), "{text}");
        assert!(text.contains("before the window, 1 call(s)"), "{text}");
        assert!(text.contains("thread 3: shared_allow(\"a\", 300) -> false   (it returned true)"), "{text}");
    }
}
