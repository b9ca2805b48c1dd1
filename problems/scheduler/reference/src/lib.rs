//! Reference solution for `scheduler`.
//!
//! A min-heap of queue entries `(due, seq, id)` plus one record per job,
//! indexed by id. `seq` is a counter bumped on every insertion, so two
//! entries due at the same time leave in insertion order and the payload is
//! never compared.
// @gate 2
//!
//! Cancellation is lazy: the record changes state and the heap entry stays
//! behind as a tombstone, skipped when it surfaces; the heap is rebuilt
//! whenever tombstones outnumber live entries (with a small floor), which
//! keeps it within `2 * live + 8` entries. A cancelled job's record is
//! dropped at once, so memory follows the jobs that still matter.
// @gate 4
//! Ids are issued in order, so "was this id ever issued?" is a comparison
//! even for a job whose record is gone.
// @end
// @end
// @gate 5
//!
//! `run_due` and `run_batch` are one loop with a limit, so a batch is
//! exactly the first runs of `run_due` and its leftovers keep their heap
//! entries (and so their place).
// @end
// @gate 6
//!
//! A recurring job's run time is three numbers on its record: the duration
//! of later runs, whether they may overlap, and the latest end among its
//! runs so far (`busy_until`). A run starting before `busy_until` overlaps
//! an earlier one; per job, runs start in non-decreasing time, so that one
//! number answers the question and memory does not grow with the runs that
//! have ended.
// @end

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

// @gate 3
use harness_contract::scheduler::{SchedError, Scheduler};
// @else
//~ use harness_contract::scheduler::Scheduler;
// @end

/// One queue entry. Field order is comparison order: `seq` is unique, so
/// `id` is never reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    due: u64,
    seq: u64,
    id: u64,
}

// @gate 3
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Once,
    FixedRate { period: u64, run_all: bool },
    FixedDelay { period: u64 },
}
// @end

// @gate 2
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Waiting to run; `seq` names the one heap entry that is current.
    Queued {
        due: u64,
        seq: u64,
    },
    // @gate 4
    /// A one-shot job whose latest run was reported and not failed (yet).
    // @else
    //~ /// A one-shot job that ran: it is done.
    // @end
    Ran,
    Cancelled,
    // @gate 4
    /// Failed more often than the retry policy allows.
    Dead,
    // @end
}
// @end

// @gate 6
/// How the runs of a recurring job take time. All zero for a job whose
/// runs take no time, which never overlaps itself.
#[derive(Clone, Copy, Debug)]
struct RunTime {
    duration: u64,
    allow_overlap: bool,
    /// The latest end of any run that started: a run starting before it
    /// starts while an earlier run is still in progress.
    busy_until: u64,
    overlaps: u64,
    skipped: u64,
}

impl Default for RunTime {
    fn default() -> Self {
        RunTime { duration: 0, allow_overlap: true, busy_until: 0, overlaps: 0, skipped: 0 }
    }
}
// @end

struct Job {
    kind: Kind, // @gate 3
    state: State, // @gate 2
    // @gate 4
    /// Failed runs so far: the number of the next retry, if one is allowed.
    failures: u32,
    // @end
    run_time: RunTime, // @gate 6
    /// Carried for the caller, never compared: ordering must not depend on it.
    #[allow(dead_code)]
    payload: String,
}

// @gate 4
#[derive(Clone, Copy, Debug, Default)]
struct RetryPolicy {
    max_retries: u32,
    base_ms: u64,
    cap_ms: u64,
}

/// SplitMix64, exactly as the statement gives it.
#[derive(Clone, Copy, Debug, Default)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}
// @end

// @gate 2
/// Below this many tombstones the heap is never rebuilt: rebuilding a tiny
/// heap costs more than the memory it frees.
const TOMBSTONE_FLOOR: usize = 8;
// @end

pub struct Sched {
    heap: BinaryHeap<Reverse<Entry>>,
    // @gate 2
    // @gate 4
    /// Jobs that are waiting, ran (and may still fail) or died; a
    /// cancelled job's record is dropped.
    // @else
    //~ /// Jobs that are waiting or ran; a cancelled job's record is dropped.
    // @end
    // @else
    //~ /// The jobs waiting to run, carrying their payloads until they run.
    // @end
    jobs: HashMap<u64, Job>,
    /// The last id issued.
    issued: u64,
    next_seq: u64,
    /// Jobs in `State::Queued`: exactly the heap entries that are current.  // @gate 2
    live: usize, // @gate 2
    policy: RetryPolicy, // @gate 4
    rng: SplitMix64, // @gate 4
    dead: Vec<u64>, // @gate 4
}

impl Sched {
    // @gate 2
    fn job_mut(&mut self, id: u64) -> Option<&mut Job> {
        self.jobs.get_mut(&id)
    }

    // @end
    // @gate 3
    fn create(&mut self, kind: Kind, first: u64, payload: String) -> u64 {
    // @else
    //~ fn create(&mut self, first: u64, payload: String) -> u64 {
    // @end
        self.issued += 1;
        let id = self.issued;
        self.jobs.insert(id, Job {
            kind, // @gate 3
            state: State::Cancelled, // replaced by `enqueue` right below  // @gate 2
            failures: 0, // @gate 4
            run_time: RunTime::default(), // @gate 6
            payload,
        });
        self.enqueue(id, first);
        id
    }

    /// Inserts a fresh entry for `id`: a new `seq`, so among entries due at
    /// the same time it goes behind everything inserted before it.
    fn enqueue(&mut self, id: u64, due: u64) {
        let seq = self.next_seq;
        self.next_seq += 1;
        // @gate 2
        self.jobs.get_mut(&id).expect("a job being queued has a record").state = State::Queued { due, seq };
        self.live += 1;
        // @end
        self.heap.push(Reverse(Entry { due, seq, id }));
    }

    // @gate 2
    /// Whether `e` is its job's current entry rather than a tombstone.
    fn is_current(&self, e: &Entry) -> bool {
        matches!(self.jobs.get(&e.id), Some(Job { state: State::Queued { seq, .. }, .. }) if *seq == e.seq)
    }

    /// Rebuilds the heap without tombstones once they outnumber live
    /// entries. Called after every operation that can raise the ratio: a
    /// cancel adds a tombstone, and a `run_due` removes live entries while
    /// far-future tombstones stay. Each rebuild is O(n) and frees at least
    /// n/2 entries, so it is amortized O(1) per cancellation.
    fn maybe_rebuild(&mut self) {
        let tombstones = self.heap.len() - self.live;
        if tombstones > TOMBSTONE_FLOOR.max(self.live) {
            let heap = std::mem::take(&mut self.heap);
            self.heap = heap.into_iter().filter(|Reverse(e)| self.is_current(e)).collect();
        }
    }
    // @end

    // @gate 6
    /// The run time of `id` if it is a recurring job still waiting (every
    /// recurring job is, until it is cancelled).
    fn recurring(&self, id: u64) -> Option<RunTime> {
        match self.jobs.get(&id) {
            Some(job) if job.kind != Kind::Once && matches!(job.state, State::Queued { .. }) => Some(job.run_time),
            _ => None,
        }
    }
    // @end

    // @gate 4
    /// The ceiling of the jitter for retry number `n` (1-based):
    /// `min(cap, base * 2^(n-1))`, saturating instead of overflowing.
    fn backoff_ceiling(&self, n: u32) -> u64 {
        let factor = 1u64.checked_shl(n - 1).unwrap_or(u64::MAX);
        let ceiling = self.policy.base_ms.saturating_mul(factor);
        ceiling.min(self.policy.cap_ms)
    }
    // @end

    // @gate 5
    /// Makes the runs due at `now_ms`, at most `limit` of them, in order.
    fn dispatch(&mut self, now_ms: u64, limit: usize) -> Vec<u64> {
    // @else
    //~ /// Makes the runs due at `now_ms`, in order.
    //~ fn dispatch(&mut self, now_ms: u64) -> Vec<u64> {
    // @end
        let mut ran = Vec::new();
        // @gate 3
        // Keep popping while the top is due: an entry inserted during this
        // call (a fixed-rate job catching up with "all") may be due too.
        // @end
        // @gate 5
        // Check the limit before popping: what is left stays in its place.
        while ran.len() < limit {
        // @else
        //~ loop {
        // @end
            let Some(&Reverse(top)) = self.heap.peek() else { break };
            if top.due > now_ms {
                break;
            }
            self.heap.pop();
            // @gate 2
            if !self.is_current(&top) {
                continue; // a tombstone: consumed, never run
            }
            self.live -= 1;
            let job = self.jobs.get_mut(&top.id).expect("a current entry has a record");
            // @gate 6
            // A run starts now, whatever its due time; it overlaps an earlier
            // run of the same job that has not ended yet.
            let rt = &mut job.run_time;
            let busy = now_ms < rt.busy_until;
            if busy && !rt.allow_overlap {
                rt.skipped += 1; // not reported, starts nothing
            } else {
                if busy {
                    rt.overlaps += 1;
                }
                rt.busy_until = rt.busy_until.max(now_ms.saturating_add(rt.duration));
                ran.push(top.id);
            }
            let duration = rt.duration;
            // @else
            //~ ran.push(top.id);
            // @end
            // @gate 3
            match job.kind {
                Kind::Once => job.state = State::Ran,
                // @gate 6
                // The delay counts from the end of the run that started now.
                Kind::FixedDelay { period } => self.enqueue(top.id, now_ms.saturating_add(duration).saturating_add(period)),
                // @else
                //~ // Runs take no time: the delay counts from now.
                //~ Kind::FixedDelay { period } => self.enqueue(top.id, now_ms.saturating_add(period)),
                // @end
                Kind::FixedRate { period, run_all } => {
                    // Anchored to the occurrence's own time, never to now.
                    let next = if run_all {
                        top.due.saturating_add(period)
                    } else {
                        // The first occurrence strictly after now: every
                        // missed one, including one due exactly at now,
                        // collapses into the run that just happened.
                        let skipped = (now_ms - top.due) / period + 1;
                        top.due.saturating_add(skipped.saturating_mul(period))
                    };
                    self.enqueue(top.id, next);
                }
            }
            // @else
            //~ job.state = State::Ran;
            // @end
            // @else
            //~ self.jobs.remove(&top.id); // the job is done
            //~ ran.push(top.id);
            // @end
        }
        self.maybe_rebuild(); // @gate 2
        ran
    }
}

impl Scheduler for Sched {
    fn new() -> Self {
        Sched {
            heap: BinaryHeap::new(),
            jobs: HashMap::new(),
            issued: 0,
            next_seq: 0,
            live: 0, // @gate 2
            policy: RetryPolicy::default(), // @gate 4
            rng: SplitMix64::default(), // @gate 4
            dead: Vec::new(), // @gate 4
        }
    }

    fn schedule(&mut self, at_ms: u64, payload: String) -> u64 {
        // @gate 3
        self.create(Kind::Once, at_ms, payload)
        // @else
        //~ self.create(at_ms, payload)
        // @end
    }

    fn run_due(&mut self, now_ms: u64) -> Vec<u64> {
        // @gate 5
        self.dispatch(now_ms, usize::MAX)
        // @else
        //~ self.dispatch(now_ms)
        // @end
    }

    fn next_due(&mut self) -> Option<u64> {
        // @gate 2
        // Tombstones on top would report a time at which nothing runs.
        while let Some(Reverse(top)) = self.heap.peek() {
            if self.is_current(top) {
                return Some(top.due);
            }
            self.heap.pop();
        }
        None
        // @else
        //~ self.heap.peek().map(|Reverse(top)| top.due)
        // @end
    }
    // @gate 2

    fn cancel(&mut self, id: u64) -> bool {
        let Some(job) = self.job_mut(id) else {
            return false;
        };
        if !matches!(job.state, State::Queued { .. }) {
            return false;
        }
        // Lazy deletion: O(1) here, the heap entry becomes a tombstone (its
        // job has no record any more, so it is not current).
        self.jobs.remove(&id);
        self.live -= 1;
        self.maybe_rebuild();
        true
    }

    fn next_run(&mut self, id: u64) -> Option<u64> {
        match self.job_mut(id)?.state {
            State::Queued { due, .. } => Some(due),
            _ => None,
        }
    }

    fn pending(&mut self) -> usize {
        self.live
    }
    // @end
    // @gate 3

    fn schedule_fixed_rate(
        &mut self,
        first_ms: u64,
        period_ms: u64,
        catch_up: String,
        payload: String,
    ) -> Result<u64, SchedError> {
        if period_ms == 0 {
            return Err(SchedError::InvalidPeriod);
        }
        let run_all = match catch_up.as_str() {
            "all" => true,
            "latest" => false,
            _ => return Err(SchedError::InvalidPolicy),
        };
        let kind = Kind::FixedRate { period: period_ms, run_all };
        Ok(self.create(kind, first_ms, payload))
    }

    fn schedule_fixed_delay(&mut self, first_ms: u64, period_ms: u64, payload: String) -> Result<u64, SchedError> {
        if period_ms == 0 {
            return Err(SchedError::InvalidPeriod);
        }
        let kind = Kind::FixedDelay { period: period_ms };
        Ok(self.create(kind, first_ms, payload))
    }
    // @end
    // @gate 4

    fn set_retry_policy(&mut self, max_retries: u32, base_ms: u64, cap_ms: u64, seed: u64) {
        self.policy = RetryPolicy { max_retries, base_ms, cap_ms };
        self.rng = SplitMix64(seed);
    }

    fn fail(&mut self, id: u64, now_ms: u64) -> Result<Option<u64>, SchedError> {
        let max_retries = self.policy.max_retries;
        let issued = self.issued;
        let job = match self.job_mut(id) {
            Some(job) => job,
            // Issued once, cancelled since: known, but there is no run.
            None if id >= 1 && id <= issued => return Err(SchedError::NotFailable),
            None => return Err(SchedError::UnknownJob),
        };
        if job.state != State::Ran {
            return Err(SchedError::NotFailable);
        }
        job.failures += 1;
        let retry = job.failures;
        if retry > max_retries {
            // Dead-lettered: no draw from the generator.
            job.state = State::Dead;
            self.dead.push(id);
            return Ok(None);
        }
        let ceiling = self.backoff_ceiling(retry);
        // Full jitter: uniform over 0..=ceiling. u128 so that a ceiling of
        // u64::MAX does not overflow the modulus.
        let delay = (self.rng.next() as u128 % (ceiling as u128 + 1)) as u64;
        let due = now_ms.saturating_add(delay);
        self.enqueue(id, due);
        Ok(Some(due))
    }

    fn dead_letters(&mut self) -> Vec<u64> {
        self.dead.clone()
    }
    // @end
    // @gate 5

    fn run_batch(&mut self, now_ms: u64, limit: usize) -> Vec<u64> {
        self.dispatch(now_ms, limit)
    }
    // @end
    // @gate 6

    fn set_run_time(&mut self, id: u64, duration_ms: u64, allow_overlap: bool) -> bool {
        match self.jobs.get_mut(&id) {
            Some(job) if job.kind != Kind::Once && matches!(job.state, State::Queued { .. }) => {
                job.run_time.duration = duration_ms;
                job.run_time.allow_overlap = allow_overlap;
                true
            }
            _ => false,
        }
    }

    fn overlaps(&mut self, id: u64) -> Option<u64> {
        self.recurring(id).map(|rt| rt.overlaps)
    }

    fn skipped(&mut self, id: u64) -> Option<u64> {
        self.recurring(id).map(|rt| rt.skipped)
    }
    // @end
}

harness_contract::export!(scheduler, Sched);
