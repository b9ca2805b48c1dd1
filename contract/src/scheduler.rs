//! `scheduler`: a deterministic job scheduler driven by an explicit clock.
//!
//! Implement [`Scheduler`] for your type and export it:
//!
//! ```ignore
//! use harness_contract::scheduler::{SchedError, Scheduler};
//! struct Sched { /* ... */ }
//! impl Scheduler for Sched { /* ... */ }
//! harness_contract::export!(scheduler, Sched);
//! ```
//!
//! Nothing here reads a clock: every operation that depends on time takes
//! it as `now_ms`. Methods of later gates have default bodies, so a solution
//! compiles before it implements them; calling one is judged
//! `not_implemented`.

use crate::not_implemented;

crate::error_kinds! {
    /// Why an operation was refused.
    pub enum SchedError {
        /// Gate 3: a recurring job needs a period of at least 1 ms.
        InvalidPeriod = "invalid_period",
        /// Gate 3: the catch-up policy is neither `"all"` nor `"latest"`.
        InvalidPolicy = "invalid_policy",
        /// Gate 4: no job was ever created with this id.
        UnknownJob = "unknown_job",
        /// Gate 4: the job has no run whose failure could be reported.
        NotFailable = "not_failable",
    }
}

/// The scheduler. Read each gate's statement for the exact rules.
#[allow(unused_variables)]
pub trait Scheduler {
    /// An empty scheduler: no jobs, no retry policy yet.
    fn new() -> Self
    where
        Self: Sized;

    // Gate 1: delayed jobs.

    /// Creates a one-shot job due at `at_ms`; returns its id (1, 2, 3, ...).
    fn schedule(&mut self, at_ms: u64, payload: String) -> u64 {
        not_implemented("schedule")
    }
    /// Runs every job due at or before `now_ms`; returns their ids in run
    /// order (due time, then insertion order).
    fn run_due(&mut self, now_ms: u64) -> Vec<u64> {
        not_implemented("run_due")
    }
    /// The earliest due time among the jobs still waiting to run.
    fn next_due(&mut self) -> Option<u64> {
        not_implemented("next_due")
    }

    // Gate 2: cancellation with a bounded number of tombstones.

    /// Cancels a waiting job; true if it was waiting to run.
    fn cancel(&mut self, id: u64) -> bool {
        not_implemented("cancel")
    }
    /// The due time of job `id`'s next run, if it is waiting to run.
    fn next_run(&mut self, id: u64) -> Option<u64> {
        not_implemented("next_run")
    }
    /// How many jobs are waiting to run.
    fn pending(&mut self) -> usize {
        not_implemented("pending")
    }
    // Gate 3: recurring jobs.

    /// Creates a fixed-rate job: runs at `first_ms`, `first_ms + period_ms`,
    /// ...; `catch_up` is `"all"` or `"latest"`. Returns its id.
    fn schedule_fixed_rate(
        &mut self,
        first_ms: u64,
        period_ms: u64,
        catch_up: String,
        payload: String,
    ) -> Result<u64, SchedError> {
        not_implemented("schedule_fixed_rate")
    }
    /// Creates a fixed-delay job: runs at `first_ms`, then `period_ms`
    /// after each run. Returns its id.
    fn schedule_fixed_delay(&mut self, first_ms: u64, period_ms: u64, payload: String) -> Result<u64, SchedError> {
        not_implemented("schedule_fixed_delay")
    }

    // Gate 4: retries with capped exponential backoff and seeded jitter.

    /// Sets the retry policy and restarts the jitter generator from `seed`.
    fn set_retry_policy(&mut self, max_retries: u32, base_ms: u64, cap_ms: u64, seed: u64) {
        not_implemented("set_retry_policy")
    }
    /// Reports that the latest run of one-shot job `id` failed at `now_ms`;
    /// returns the retry time, or `None` if the job is now dead.
    fn fail(&mut self, id: u64, now_ms: u64) -> Result<Option<u64>, SchedError> {
        not_implemented("fail")
    }
    /// The ids of dead jobs, in the order they died.
    fn dead_letters(&mut self) -> Vec<u64> {
        not_implemented("dead_letters")
    }

    // Gate 5.

    /// Gate 5: makes at most `limit` of the runs `run_due(now_ms)` would make;
    /// returns their ids in run order.
    fn run_batch(&mut self, now_ms: u64, limit: usize) -> Vec<u64> {
        not_implemented("run_batch")
    }

    // Gate 6.

    /// Gate 6: sets how long each later run of recurring job `id` lasts and whether
    /// it may overlap an earlier run; true if the setting was applied.
    fn set_run_time(&mut self, id: u64, duration_ms: u64, allow_overlap: bool) -> bool {
        not_implemented("set_run_time")
    }
    /// Gate 6: how many runs of recurring job `id` overlapped an earlier run of it.
    fn overlaps(&mut self, id: u64) -> Option<u64> {
        not_implemented("overlaps")
    }
    /// Gate 6: how many runs of recurring job `id` were skipped because an earlier
    /// run of it was still in progress.
    fn skipped(&mut self, id: u64) -> Option<u64> {
        not_implemented("skipped")
    }
}

crate::contract! {
    problem = "scheduler";
    trait = Scheduler;
    errors = SchedError;
    new();
    fn schedule(at_ms: u64, payload: String) -> u64;
    fn run_due(now_ms: u64) -> Vec<u64>;
    fn next_due() -> Option<u64>;
    fn cancel(id: u64) -> bool;
    fn next_run(id: u64) -> Option<u64>;
    fn pending() -> usize;
    fn schedule_fixed_rate(first_ms: u64, period_ms: u64, catch_up: String, payload: String) -> Result<u64, SchedError>;
    fn schedule_fixed_delay(first_ms: u64, period_ms: u64, payload: String) -> Result<u64, SchedError>;
    fn set_retry_policy(max_retries: u32, base_ms: u64, cap_ms: u64, seed: u64) -> ();
    fn fail(id: u64, now_ms: u64) -> Result<Option<u64>, SchedError>;
    fn dead_letters() -> Vec<u64>;
    fn run_batch(now_ms: u64, limit: usize) -> Vec<u64>;
    fn set_run_time(id: u64, duration_ms: u64, allow_overlap: bool) -> bool;
    fn overlaps(id: u64) -> Option<u64>;
    fn skipped(id: u64) -> Option<u64>;
}
