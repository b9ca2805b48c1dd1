//! A concurrent case in the case's process: several threads call one
//! shared instance at once, and every call's invocation and response is
//! recorded against one monotonic clock (`judge::race` asks for it and
//! judges the history; `judge::linearize` is the checker).
//!
//! A concurrent case reaches the worker as an ordinary case whose first
//! call is the [`PLAN`] marker: its arguments say how many threads, runs,
//! setup calls and calls per thread follow, the seed of the start offsets
//! and the time budget. Each run opens a fresh session, makes the setup
//! calls through `harness_call`, then starts the threads behind a barrier;
//! each waits a random time within half its script's last duration (none
//! in half the runs, so that calls collide head on), in a quarter of the
//! runs yields now and then between calls, and calls
//! `harness_call_shared`. After the last run (or the first in which
//! a call did not return, or when half the budget is spent) the whole
//! history goes out as one outcome frame. A run whose threads are not done
//! when the budget ends is a deadlock or a livelock: the history so far is
//! sent with each thread's call in flight, and the process ends without
//! waiting for them.
//!
//! It has `unsafe`, as `worker` does: calls into the candidate's library.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, mpsc};
use std::time::{Duration, Instant};

use harness_contract::wire::{self, Outcome};
use harness_contract::{RawBuf, Value};

use crate::judge::jitter::Jitter;
use crate::judge::library::{CallFn, Entry, FreeFn};
use crate::judge::sandbox::frame;
use crate::problem::domain::GenSpec;
use crate::problem::generate;
use crate::problem::model::Problem;
use crate::problem::rng::Rng;
use crate::problem::script::{Call, Step};

/// The op name of the marker call that makes a case concurrent.
pub const PLAN: &str = "__threads";

/// Stack of each calling thread.
const THREAD_STACK: usize = 8 << 20;

/// A concurrent case's shape, as the marker carries it.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub runs: usize,
    pub seed: u64,
    /// Wall-clock budget of the whole case.
    pub budget: Duration,
    pub setup: Vec<Call>,
    pub threads: Vec<Vec<Call>>,
}

impl Plan {
    /// The calls the worker receives: the marker, the setup, each thread's
    /// script in turn.
    pub fn encode(&self) -> Vec<Call> {
        let int = |n: usize| Value::Int(n as i128);
        let mut args = vec![
            int(self.runs),
            Value::Int(self.seed as i128),
            int(self.budget.as_millis() as usize),
            int(self.setup.len()),
        ];
        args.extend(self.threads.iter().map(|t| int(t.len())));
        let mut calls = vec![Call { op: PLAN.into(), args }];
        calls.extend(self.setup.iter().cloned());
        for t in &self.threads {
            calls.extend(t.iter().cloned());
        }
        calls
    }
}

impl Plan {
    /// The plan back from its calls (the parent keeps a concurrent case as
    /// these, in `Case::steps`).
    pub fn from_calls(calls: &[Call]) -> Option<Plan> {
        let (marker, rest) = calls.split_first()?;
        let n = |v: &Value| match v {
            Value::Int(i) if *i >= 0 => usize::try_from(*i).ok(),
            _ => None,
        };
        if marker.op != PLAN || marker.args.len() < 6 {
            return None;
        }
        let a = &marker.args;
        let seed = match a[1] {
            Value::Int(i) => i as u64,
            _ => return None,
        };
        let setup_len = n(&a[3])?;
        let mut rest = rest.get(setup_len..).map(|r| (&rest[..setup_len], r))?;
        let setup = rest.0.to_vec();
        let mut threads = Vec::new();
        for len in &a[4..] {
            let len = n(len)?;
            let script = rest.1.get(..len)?.to_vec();
            rest.1 = &rest.1[len..];
            threads.push(script);
        }
        rest.1.is_empty().then(|| Plan {
            runs: n(&a[0]).unwrap_or(1),
            seed,
            budget: Duration::from_millis(n(&a[2]).unwrap_or(0) as u64),
            setup,
            threads,
        })
    }

    /// The plan as a case's steps: the setup's calls keep `setup_expect`
    /// (unit where it has none), the marker and the threads' calls accept
    /// anything (their results are judged for linearizability).
    pub fn steps(&self, setup_expect: &[Value]) -> Vec<Step> {
        self.encode()
            .into_iter()
            .enumerate()
            .map(|(i, call)| {
                let expect = match i.checked_sub(1) {
                    Some(j) if j < self.setup.len() => setup_expect.get(j).cloned().unwrap_or(Value::Unit),
                    _ => Value::Any,
                };
                Step { call, expect }
            })
            .collect()
    }
}

impl Plan {
    /// The id of a thread's call for the checker: equal for calls of equal
    /// text (the same operation, the same arguments), whichever thread
    /// makes them, so their replays are shared.
    pub fn call_id(&self, thread: Option<usize>, index: usize) -> usize {
        let call = match thread {
            None => &self.setup[index],
            Some(t) => &self.threads[t][index],
        };
        self.threads.iter().flatten().position(|c| c == call).unwrap_or(usize::MAX)
    }
}

/// Whether a case's steps are a concurrent case.
pub fn is_plan_steps(steps: &[Step]) -> bool {
    steps.first().is_some_and(|s| s.call.op == PLAN)
}

/// A generated concurrent case of a gate: one generated script per thread
/// (each from its own seed, derived from the case's), the first one's
/// constructor as the setup.
pub fn generated(problem: &Problem, spec: &GenSpec, threads: usize, runs: usize, seed: u64) -> Plan {
    let mut scripts: Vec<Vec<Call>> =
        (0..threads).map(|t| generate::generate(problem, spec, generate::case_seed(seed, 0, t))).collect();
    let setup = vec![scripts[0][0].clone()];
    for s in &mut scripts {
        s.remove(0);
    }
    Plan { runs, seed, budget: Duration::ZERO, setup, threads: scripts }
}

/// The plan a worker reads: counts, and each call still encoded.
struct Wired<'a> {
    runs: usize,
    seed: u64,
    budget: Duration,
    setup: &'a [&'a [u8]],
    threads: Vec<&'a [&'a [u8]]>,
}

/// Whether a case's first call is the marker.
pub fn is_plan(calls: &[&[u8]]) -> bool {
    calls.first().and_then(|c| wire::decode_request(c).ok()).is_some_and(|(op, _)| op == PLAN)
}

fn decode<'a>(calls: &'a [&'a [u8]]) -> Option<Wired<'a>> {
    let (op, args) = wire::decode_request(calls.first()?).ok()?;
    let n = |v: &Value| match v {
        Value::Int(i) if *i >= 0 => usize::try_from(*i).ok(),
        _ => None,
    };
    if op != PLAN || args.len() < 6 {
        return None;
    }
    let runs = n(&args[0])?;
    let seed = match args[1] {
        Value::Int(i) => i as u64,
        _ => return None,
    };
    let budget = Duration::from_millis(n(&args[2])? as u64);
    let setup_len = n(&args[3])?;
    let lens: Vec<usize> = args[4..].iter().map(n).collect::<Option<_>>()?;
    let mut rest = &calls[1..];
    if setup_len > rest.len() {
        return None;
    }
    let (setup, after) = rest.split_at(setup_len);
    rest = after;
    let mut threads = Vec::new();
    for len in lens {
        if len > rest.len() {
            return None;
        }
        let (script, after) = rest.split_at(len);
        threads.push(script);
        rest = after;
    }
    rest.is_empty().then_some(Wired { runs, seed, budget, setup, threads })
}

/// One recorded call.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub run: usize,
    /// The thread; `None` for a setup call.
    pub thread: Option<usize>,
    /// Index in its thread's script (or in the setup).
    pub index: usize,
    /// Nanoseconds since the case began, just before the call.
    pub invoked: u64,
    /// Just after it returned.
    pub returned: u64,
    pub outcome: Outcome,
}

/// A concurrent case's history, as the parent decodes it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    /// Runs that finished.
    pub runs: usize,
    pub records: Vec<Record>,
    /// A run that never finished: its number and each thread's call in
    /// flight (`None`: the thread was done).
    pub stuck: Option<(usize, Vec<Option<usize>>)>,
}

fn outcome_value(o: &Outcome) -> Value {
    let s = |t: &str| Value::Str(t.to_string());
    match o {
        Outcome::Returned(v) => Value::List(vec![s("R"), v.clone()]),
        Outcome::Panicked { message, location } => Value::List(vec![s("P"), s(message), s(location)]),
        Outcome::NotImplemented { op } => Value::List(vec![s("N"), s(op)]),
        Outcome::Rejected(why) => Value::List(vec![s("X"), s(why)]),
    }
}

fn value_outcome(v: &Value) -> Option<Outcome> {
    let Value::List(items) = v else { return None };
    let text = |i: usize| match items.get(i) {
        Some(Value::Str(s)) => Some(s.clone()),
        _ => None,
    };
    Some(match (text(0)?.as_str(), items.len()) {
        ("R", 2) => Outcome::Returned(items[1].clone()),
        ("P", 3) => Outcome::Panicked { message: text(1)?, location: text(2)? },
        ("N", 2) => Outcome::NotImplemented { op: text(1)? },
        ("X", 2) => Outcome::Rejected(text(1)?),
        _ => return None,
    })
}

impl History {
    /// The one value the case's outcome frame carries.
    pub fn to_value(&self) -> Value {
        let int = |n: u64| Value::Int(n as i128);
        let records = self
            .records
            .iter()
            .map(|r| {
                Value::List(vec![
                    int(r.run as u64),
                    r.thread.map_or(Value::Nil, |t| int(t as u64)),
                    int(r.index as u64),
                    int(r.invoked),
                    int(r.returned),
                    outcome_value(&r.outcome),
                ])
            })
            .collect();
        let stuck = match &self.stuck {
            None => Value::Nil,
            Some((run, calls)) => Value::List(vec![
                int(*run as u64),
                Value::List(calls.iter().map(|c| c.map_or(Value::Nil, |i| int(i as u64))).collect()),
            ]),
        };
        Value::List(vec![int(self.runs as u64), Value::List(records), stuck])
    }

    /// The history back from the frame; `None` for anything a worker does
    /// not write (the candidate's process wrote it, so it is not trusted).
    pub fn from_value(v: &Value) -> Option<History> {
        let n = |v: &Value| match v {
            Value::Int(i) if *i >= 0 => u64::try_from(*i).ok(),
            _ => None,
        };
        let Value::List(top) = v else { return None };
        let [runs, Value::List(records), stuck] = top.as_slice() else { return None };
        let mut out = History { runs: n(runs)? as usize, ..Default::default() };
        for r in records {
            let Value::List(f) = r else { return None };
            let [run, thread, index, invoked, returned, outcome] = f.as_slice() else { return None };
            let (invoked, returned) = (n(invoked)?, n(returned)?);
            if returned < invoked {
                return None;
            }
            out.records.push(Record {
                run: n(run)? as usize,
                thread: match thread {
                    Value::Nil => None,
                    t => Some(n(t)? as usize),
                },
                index: n(index)? as usize,
                invoked,
                returned,
                outcome: value_outcome(outcome)?,
            });
        }
        out.stuck = match stuck {
            Value::Nil => None,
            Value::List(s) => {
                let [run, Value::List(calls)] = s.as_slice() else { return None };
                let calls = calls
                    .iter()
                    .map(|c| match c {
                        Value::Nil => Some(None),
                        c => n(c).map(|i| Some(i as usize)),
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some((n(run)? as usize, calls))
            }
            _ => return None,
        };
        Some(out)
    }
}

/// A library call, its outcome decoded; the buffer is freed.
///
/// # Safety
/// `call` and `free` are the library's; `session` is live.
unsafe fn call_once(call: CallFn, free: FreeFn, session: usize, req: &[u8]) -> Outcome {
    let mut out = RawBuf::empty();
    // SAFETY: as the caller promises; `req` is readable, `out` writable.
    unsafe { call(session as *mut std::ffi::c_void, req.as_ptr(), req.len(), &mut out) };
    // SAFETY: the library filled `out` and has not freed it.
    let bytes = unsafe { out.as_slice() }.to_vec();
    // SAFETY: `out` came from this library and is freed once.
    unsafe { free(out) };
    wire::decode_outcome(&mut wire::Reader::new(&bytes))
        .unwrap_or_else(|e| Outcome::Rejected(format!("the library returned a malformed outcome: {e}")))
}

/// What one thread of one run sends back.
type ThreadCalls = (usize, Vec<Record>);

/// Marks a thread's progress: 0 not started, `i + 1` in call `i`,
/// [`FINISHED`] done.
const FINISHED: usize = usize::MAX;

/// What the threads of a case share: the barrier they start behind, how
/// many have arrived, each one's progress, the case's clock and the
/// library's entry points.
struct Crew {
    barrier: Barrier,
    arrived: AtomicUsize,
    progress: Vec<AtomicUsize>,
    threads: usize,
    started: Instant,
    shared: Option<CallFn>,
    free: FreeFn,
}

/// One thread of a case, for every run: waits for the run's session, starts
/// with the others, makes its script's calls, and sends back their records.
fn thread_runs(
    t: usize,
    script: &[Vec<u8>],
    crew: &Crew,
    rng: &mut Rng,
    start_rx: &mpsc::Receiver<(usize, usize)>,
    tx: &mpsc::Sender<ThreadCalls>,
) {
    // How long this thread's script took last run: offsets are
    // drawn within half of it, so that the threads' calls still
    // overlap (offsets counted in spins, ~30 ns each, ran past
    // a whole script and put the threads one after another).
    let mut script_ns: u64 = 20_000;
    // Stops at random points inside the calls, in three runs of four
    // (`judge::jitter`); none in the rest, as before it.
    let jitter = Jitter::new(rng.next_u64());
    while let Ok((run, session)) = start_rx.recv() {
        let jitter = jitter.as_ref().filter(|_| run % 4 != 0);
        let mut records = Vec::with_capacity(script.len());
        // No offset in half the runs: the calls collide head
        // on; otherwise up to half a script's time.
        let offset = if run % 2 == 0 { 0 } else { rng.below((script_ns / 2).max(200)) };
        // A barrier wakes its waiters one by one, tens of
        // microseconds apart: longer than a whole script. So
        // each thread then spins until every thread is running
        // (for at most 300 µs), and they start within a
        // few hundred nanoseconds of each other.
        crew.barrier.wait();
        crew.arrived.fetch_add(1, Ordering::AcqRel);
        let spin_until = Instant::now() + Duration::from_micros(300);
        while crew.arrived.load(Ordering::Acquire) < crew.threads && Instant::now() < spin_until {
            std::hint::spin_loop();
        }
        let go = Instant::now() + Duration::from_nanos(offset);
        while Instant::now() < go {
            std::hint::spin_loop();
        }
        // Yields only in a quarter of the runs, and rarely: on a
        // busy machine a yield hands the core to another
        // process for a whole time slice, which costs more
        // than a hundred runs and separates the threads.
        let yields = run % 4 == 3;
        if let Some(j) = jitter {
            j.arm();
        }
        for (index, req) in script.iter().enumerate() {
            if yields && rng.below(16) == 0 {
                std::thread::yield_now();
            }
            crew.progress[t].store(index + 1, Ordering::Release);
            let invoked = crew.started.elapsed().as_nanos() as u64;
            let outcome = match crew.shared {
                // SAFETY: the library's entry points; the shared
                // entry point allows overlapping calls.
                Some(shared) => unsafe { call_once(shared, crew.free, session, req) },
                None => Outcome::NotImplemented { op: String::new() },
            };
            let returned = crew.started.elapsed().as_nanos() as u64;
            let stop = !matches!(outcome, Outcome::Returned(_));
            records.push(Record { run, thread: Some(t), index, invoked, returned, outcome });
            if stop {
                break;
            }
        }
        if let Some(j) = jitter {
            j.disarm();
        }
        if let (Some(first), Some(last)) = (records.first(), records.last()) {
            script_ns = last.returned.saturating_sub(first.invoked).max(1);
        }
        crew.progress[t].store(FINISHED, Ordering::Release);
        if tx.send((t, records)).is_err() {
            return;
        }
    }
}

/// Starts the case's threads, each waiting for its first run; a sender
/// per thread hands it each run's session. `None` when a thread could not
/// be started (those that were end when the senders drop).
fn start_threads(
    plan: &Wired<'_>,
    crew: &Arc<Crew>,
    tx: &mpsc::Sender<ThreadCalls>,
) -> Option<Vec<mpsc::Sender<(usize, usize)>>> {
    let mut starts = Vec::with_capacity(plan.threads.len());
    for (t, script) in plan.threads.iter().enumerate() {
        let script: Vec<Vec<u8>> = script.iter().map(|c| c.to_vec()).collect();
        let (crew, tx) = (crew.clone(), tx.clone());
        let (start_tx, start_rx) = mpsc::channel::<(usize, usize)>();
        let mut rng = Rng::new(plan.seed ^ (t as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        std::thread::Builder::new()
            .name(format!("thread {}", t + 1))
            .stack_size(THREAD_STACK)
            .spawn(move || thread_runs(t, &script, &crew, &mut rng, &start_rx, &tx))
            .ok()?;
        starts.push(start_tx);
    }
    Some(starts)
}

/// A run's setup calls, on the main thread, recorded; `false` when one
/// did not return (the run ends there).
fn setup(
    entry: &Entry,
    calls: &[&[u8]],
    session: usize,
    run: usize,
    started: Instant,
    records: &mut Vec<Record>,
) -> bool {
    for (index, req) in calls.iter().enumerate() {
        let invoked = started.elapsed().as_nanos() as u64;
        // SAFETY: the library's own entry points, a live session.
        let outcome = unsafe { call_once(entry.call, entry.free, session, req) };
        let returned = started.elapsed().as_nanos() as u64;
        let failed = !matches!(outcome, Outcome::Returned(_));
        records.push(Record { run, thread: None, index, invoked, returned, outcome });
        if failed {
            return false;
        }
    }
    true
}

/// Runs a concurrent case (the calls start with the marker) and emits its
/// history and the case end. Returns `false` when a run never finished:
/// its threads may still hold the instance, so the caller must not close
/// the session, and the process should end at once.
pub fn run(entry: &Entry, calls: &[&[u8]], emit: &mut (dyn FnMut(u8, &[u8]) + Send)) -> bool {
    let mut finish = |history: &History| {
        let mut w = wire::Writer::default();
        wire::encode_outcome(&mut w, &Outcome::Returned(history.to_value()));
        emit(frame::OUTCOME, &w.buf);
        emit(frame::CASE_END, &[]);
    };
    let Some(plan) = decode(calls) else {
        let mut w = wire::Writer::default();
        wire::encode_outcome(&mut w, &Outcome::Rejected("a malformed concurrent case".into()));
        emit(frame::OUTCOME, &w.buf);
        emit(frame::CASE_END, &[]);
        return true;
    };
    let mut history = History::default();
    let started = Instant::now();
    let deadline = started + plan.budget;
    let free = entry.free;
    let shared = entry.call_shared;
    // The threads live for the whole case (a thread start costs more than
    // a run's calls); each run, the main thread hands each of them the
    // fresh session, and they start behind a barrier.
    let threads = plan.threads.len();
    let crew = Arc::new(Crew {
        barrier: Barrier::new(threads),
        arrived: AtomicUsize::new(0),
        progress: (0..threads).map(|_| AtomicUsize::new(0)).collect(),
        threads,
        started,
        shared,
        free,
    });
    let (tx, rx) = mpsc::channel::<ThreadCalls>();
    let Some(starts) = start_threads(&plan, &crew, &tx) else {
        // No thread, no run: nothing ran, which judges nothing.
        finish(&history);
        return true;
    };
    drop(tx);
    for run in 0..plan.runs {
        // Half the budget spent: stop starting runs (fewer runs can miss a
        // race, never invent one).
        if run > 0 && started.elapsed() * 2 > plan.budget {
            break;
        }
        // SAFETY: `harness_open` takes nothing and returns a session.
        let session = unsafe { (entry.open)() } as usize;
        let mut failed = !setup(entry, plan.setup, session, run, started, &mut history.records);
        if failed {
            // SAFETY: the session is closed once; nothing else uses it.
            unsafe { (entry.close)(session as *mut std::ffi::c_void) };
            break;
        }
        crew.arrived.store(0, Ordering::Release);
        for p in crew.progress.iter() {
            p.store(0, Ordering::Release);
        }
        for s in &starts {
            let _ = s.send((run, session));
        }
        let mut got = 0;
        while got < threads {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok((_, records)) => {
                    failed |= records.iter().any(|r| !matches!(r.outcome, Outcome::Returned(_)));
                    history.records.extend(records);
                    got += 1;
                }
                Err(_) => {
                    let calls = crew
                        .progress
                        .iter()
                        .map(|p| match p.load(Ordering::Acquire) {
                            FINISHED => None,
                            0 => Some(0),
                            i => Some(i - 1),
                        })
                        .collect();
                    history.stuck = Some((run, calls));
                    finish(&history);
                    return false;
                }
            }
        }
        // SAFETY: every thread of the run is done with the session.
        unsafe { (entry.close)(session as *mut std::ffi::c_void) };
        history.runs = run + 1;
        if failed {
            break;
        }
    }
    drop(starts);
    finish(&history);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_round_trips_through_the_wire() {
        let call = |op: &str, n: i128| Call { op: op.into(), args: vec![Value::Int(n)] };
        let plan = Plan {
            runs: 7,
            seed: u64::MAX - 3,
            budget: Duration::from_millis(900),
            setup: vec![call("new", 1)],
            threads: vec![vec![call("a", 1), call("a", 2)], vec![call("b", 3)]],
        };
        let encoded: Vec<Vec<u8>> = plan.encode().iter().map(|c| wire::encode_request(&c.op, &c.args)).collect();
        let refs: Vec<&[u8]> = encoded.iter().map(Vec::as_slice).collect();
        assert!(is_plan(&refs));
        let w = decode(&refs).unwrap();
        assert_eq!((w.runs, w.seed, w.budget, w.setup.len()), (7, u64::MAX - 3, Duration::from_millis(900), 1));
        assert_eq!(w.threads.iter().map(|t| t.len()).collect::<Vec<_>>(), vec![2, 1]);
        assert!(decode(&refs[..refs.len() - 1]).is_none(), "a script cut short");
        assert_eq!(Plan::from_calls(&plan.encode()), Some(plan.clone()));
        let steps = plan.steps(&[]);
        assert!(is_plan_steps(&steps));
        assert_eq!((steps[1].expect.clone(), steps[2].expect.clone()), (Value::Unit, Value::Any));
        assert!(!is_plan(&refs[1..]));
    }

    #[test]
    fn a_history_round_trips_and_forgeries_are_refused() {
        let h = History {
            runs: 2,
            records: vec![
                Record {
                    run: 0,
                    thread: None,
                    index: 0,
                    invoked: 1,
                    returned: 2,
                    outcome: Outcome::Returned(Value::Unit),
                },
                Record {
                    run: 1,
                    thread: Some(2),
                    index: 4,
                    invoked: 10,
                    returned: 30,
                    outcome: Outcome::Panicked { message: "boom".into(), location: "src/lib.rs:1:1".into() },
                },
            ],
            stuck: Some((1, vec![Some(3), None])),
        };
        assert_eq!(History::from_value(&h.to_value()), Some(h.clone()));
        // A response before its invocation is no clock of ours.
        let mut bad = h.clone();
        bad.records[1].returned = 5;
        assert_eq!(History::from_value(&bad.to_value()), None);
        assert_eq!(History::from_value(&Value::List(vec![Value::Int(1)])), None);
        assert_eq!(History::from_value(&Value::Int(-1)), None);
    }
}
