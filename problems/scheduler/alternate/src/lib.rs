//! A second solution for `scheduler`, written from the statements.
//!
//! Design: the time-ordered structure is an ordered map (`BTreeMap`) keyed
//! by `(due, seq)`, where `seq` grows on every insertion (schedule, each
//! recurring run, each retry), so the map's first key is always the next
//! run and equal due times come out in insertion order. Cancellation is
//! eager: the waiting job's record knows its key, so the entry is removed
//! at once in O(log n) and the map never holds a tombstone
//! (`entries == pending()` at all times). Per-job records live in a hash
//! map by id; they hold the job's kind, its state and its failure count,
//! and drop the payload once the job can never run again. A cancelled
//! job's record goes at once (ids are issued in order, so a cancelled id is
//! still known as issued): memory follows the jobs that can still run.
//!
//! A batch is the same loop as `run_due` with a count of the runs made.
//! A recurring job's record carries the ends of its runs still in
//! progress (a short deque, pruned at every start): a run overlaps when
//! anything is left in it, and ended runs are forgotten at once.

use std::collections::{BTreeMap, HashMap, VecDeque};

use harness_contract::scheduler::{SchedError, Scheduler};

/// What happens to the missed grid points of a fixed-rate job.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CatchUp {
    All,
    Latest,
}

#[derive(Clone, Copy)]
enum Kind {
    OneShot,
    FixedRate { period: u64, catch_up: CatchUp },
    FixedDelay { period: u64 },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Queued under this key of the time-ordered map.
    Waiting {
        due: u64,
        seq: u64,
    },
    /// A one-shot job whose latest run was reported and not failed (yet).
    Ran,
    Cancelled,
    Dead,
}

/// How the runs of a recurring job take time.
struct RunClock {
    duration: u64,
    allow_overlap: bool,
    /// The end times of the runs that have not ended yet, in start order.
    in_progress: VecDeque<u64>,
    overlaps: u64,
    skipped: u64,
}

impl RunClock {
    fn new() -> Self {
        RunClock { duration: 0, allow_overlap: true, in_progress: VecDeque::new(), overlaps: 0, skipped: 0 }
    }

    /// A run would start at `now`: forget the runs that have ended, then
    /// decide. Returns whether the run happens (false: skipped).
    fn start(&mut self, now: u64) -> bool {
        // Durations can change between runs, so ends are not sorted.
        self.in_progress.retain(|&end| end > now);
        let busy = !self.in_progress.is_empty();
        if busy && !self.allow_overlap {
            self.skipped += 1;
            return false;
        }
        if busy {
            self.overlaps += 1;
        }
        if self.duration > 0 {
            self.in_progress.push_back(now.saturating_add(self.duration));
        }
        true
    }
}

struct Job {
    kind: Kind,
    state: State,
    failures: u64,
    /// `Some` for recurring jobs only.
    clock: Option<RunClock>,
    /// Carried along, never read; released when the job can never run again.
    payload: Option<Box<str>>,
}

struct RetryPolicy {
    max_retries: u64,
    base_ms: u64,
    cap_ms: u64,
}

/// `SplitMix64`, as the statement specifies it.
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

pub struct Sched {
    /// `(due, seq) -> id` for every waiting job, and nothing else.
    queue: BTreeMap<(u64, u64), u64>,
    /// Every job that can still run or fail, by id.
    jobs: HashMap<u64, Job>,
    /// The last id issued.
    issued: u64,
    next_seq: u64,
    /// How many jobs are in `State::Waiting`, kept by every state change.
    waiting: usize,
    policy: RetryPolicy,
    rng: SplitMix64,
    dead: Vec<u64>,
}

impl Sched {
    fn job_mut(&mut self, id: u64) -> Option<&mut Job> {
        self.jobs.get_mut(&id)
    }

    /// Queues a run of job `id` at `due` as a fresh insertion; the job is
    /// waiting from now on (a recurring job already was).
    fn enqueue(&mut self, id: u64, due: u64) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.queue.insert((due, seq), id);
        let Some(job) = self.job_mut(id) else { return };
        let was_waiting = matches!(job.state, State::Waiting { .. });
        job.state = State::Waiting { due, seq };
        if !was_waiting {
            self.waiting += 1;
        }
    }

    /// Moves a job out of `Waiting` into `state`.
    fn leave_waiting(&mut self, id: u64, state: State) {
        let Some(job) = self.job_mut(id) else { return };
        job.state = state;
        if state != State::Ran {
            job.payload = None;
        }
        self.waiting -= 1;
    }

    fn create(&mut self, kind: Kind, due: u64, payload: String) -> u64 {
        self.issued += 1;
        let id = self.issued;
        let clock = match kind {
            Kind::OneShot => None,
            _ => Some(RunClock::new()),
        };
        self.jobs.insert(id, Job { kind, state: State::Ran, failures: 0, clock, payload: Some(payload.into()) });
        self.enqueue(id, due);
        id
    }

    /// Runs what is due at `now_ms` in order, stopping after `limit` runs.
    fn run_up_to(&mut self, now_ms: u64, limit: usize) -> Vec<u64> {
        let mut ran = Vec::new();
        while ran.len() < limit {
            let Some(entry) = self.queue.first_entry() else { break };
            let (due, _) = *entry.key();
            if due > now_ms {
                break;
            }
            let id = entry.remove();
            let Some(job) = self.job_mut(id) else { continue };
            let kind = job.kind;
            let (runs, duration) = match job.clock.as_mut() {
                Some(clock) => (clock.start(now_ms), clock.duration),
                None => (true, 0),
            };
            if runs {
                ran.push(id);
            }
            // The next run of a recurring job; `None` past the end of time,
            // where a recurring job has nowhere left to go.
            let next = match kind {
                Kind::OneShot => {
                    self.leave_waiting(id, State::Ran);
                    continue;
                }
                // Counted from the end of the run that starts now.
                Kind::FixedDelay { period } => now_ms.checked_add(duration).and_then(|end| end.checked_add(period)),
                Kind::FixedRate { period, catch_up: CatchUp::All } => due.checked_add(period),
                Kind::FixedRate { period, catch_up: CatchUp::Latest } => {
                    // First grid point strictly after `now_ms`, computed, not looped.
                    let steps = (now_ms - due) / period + 1;
                    steps.checked_mul(period).and_then(|offset| due.checked_add(offset))
                }
            };
            match next {
                Some(next) => self.enqueue(id, next),
                None => self.leave_waiting(id, State::Cancelled),
            }
        }
        ran
    }

    /// The run clock of a recurring job still waiting to run.
    fn clock_mut(&mut self, id: u64) -> Option<&mut RunClock> {
        let job = self.job_mut(id)?;
        if !matches!(job.state, State::Waiting { .. }) {
            return None;
        }
        job.clock.as_mut()
    }

    /// The retry delay ceiling for failure number `n` (1-based), without
    /// overflow: a product too large for `u64` is above any cap.
    fn ceiling(&self, n: u64) -> u64 {
        let RetryPolicy { base_ms, cap_ms, .. } = self.policy;
        if base_ms == 0 {
            return 0;
        }
        let exponent = n - 1;
        let product =
            u32::try_from(exponent).ok().and_then(|e| 1u64.checked_shl(e)).and_then(|power| base_ms.checked_mul(power));
        product.map_or(cap_ms, |p| p.min(cap_ms))
    }
}

impl Scheduler for Sched {
    fn new() -> Self {
        Sched {
            queue: BTreeMap::new(),
            jobs: HashMap::new(),
            issued: 0,
            next_seq: 0,
            waiting: 0,
            policy: RetryPolicy { max_retries: 0, base_ms: 0, cap_ms: 0 },
            rng: SplitMix64(0),
            dead: Vec::new(),
        }
    }

    fn schedule(&mut self, at_ms: u64, payload: String) -> u64 {
        self.create(Kind::OneShot, at_ms, payload)
    }

    fn run_due(&mut self, now_ms: u64) -> Vec<u64> {
        self.run_up_to(now_ms, usize::MAX)
    }

    fn next_due(&mut self) -> Option<u64> {
        self.queue.first_key_value().map(|(&(due, _), _)| due)
    }

    fn cancel(&mut self, id: u64) -> bool {
        let Some(job) = self.job_mut(id) else { return false };
        let State::Waiting { due, seq } = job.state else { return false };
        self.queue.remove(&(due, seq));
        self.leave_waiting(id, State::Cancelled);
        self.jobs.remove(&id);
        true
    }

    fn next_run(&mut self, id: u64) -> Option<u64> {
        match self.job_mut(id)?.state {
            State::Waiting { due, .. } => Some(due),
            _ => None,
        }
    }

    fn pending(&mut self) -> usize {
        self.waiting
    }

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
        let catch_up = match catch_up.as_str() {
            "all" => CatchUp::All,
            "latest" => CatchUp::Latest,
            _ => return Err(SchedError::InvalidPolicy),
        };
        Ok(self.create(Kind::FixedRate { period: period_ms, catch_up }, first_ms, payload))
    }

    fn schedule_fixed_delay(&mut self, first_ms: u64, period_ms: u64, payload: String) -> Result<u64, SchedError> {
        if period_ms == 0 {
            return Err(SchedError::InvalidPeriod);
        }
        Ok(self.create(Kind::FixedDelay { period: period_ms }, first_ms, payload))
    }

    fn set_retry_policy(&mut self, max_retries: u32, base_ms: u64, cap_ms: u64, seed: u64) {
        self.policy = RetryPolicy { max_retries: u64::from(max_retries), base_ms, cap_ms };
        self.rng = SplitMix64(seed);
    }

    fn fail(&mut self, id: u64, now_ms: u64) -> Result<Option<u64>, SchedError> {
        let max_retries = self.policy.max_retries;
        let issued = self.issued;
        let job = match self.job_mut(id) {
            Some(job) => job,
            None if id >= 1 && id <= issued => return Err(SchedError::NotFailable),
            None => return Err(SchedError::UnknownJob),
        };
        if !matches!(job.kind, Kind::OneShot) || job.state != State::Ran {
            return Err(SchedError::NotFailable);
        }
        job.failures += 1;
        let n = job.failures;
        if n > max_retries {
            job.state = State::Dead;
            job.payload = None; // a dead job never runs again
            self.dead.push(id);
            return Ok(None);
        }
        let ceiling = self.ceiling(n);
        let r = self.rng.next();
        let delay = match ceiling.checked_add(1) {
            Some(modulus) => r % modulus,
            None => r, // ceiling + 1 == 2^64: every u64 is in range
        };
        let due = now_ms.saturating_add(delay);
        self.enqueue(id, due);
        Ok(Some(due))
    }

    fn dead_letters(&mut self) -> Vec<u64> {
        self.dead.clone()
    }

    fn run_batch(&mut self, now_ms: u64, limit: usize) -> Vec<u64> {
        self.run_up_to(now_ms, limit)
    }

    fn set_run_time(&mut self, id: u64, duration_ms: u64, allow_overlap: bool) -> bool {
        let Some(clock) = self.clock_mut(id) else { return false };
        clock.duration = duration_ms;
        clock.allow_overlap = allow_overlap;
        true
    }

    fn overlaps(&mut self, id: u64) -> Option<u64> {
        self.clock_mut(id).map(|clock| clock.overlaps)
    }

    fn skipped(&mut self, id: u64) -> Option<u64> {
        self.clock_mut(id).map(|clock| clock.skipped)
    }
}

harness_contract::export!(scheduler, Sched);
