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

crate::contract! {
    problem = "scheduler";
    errors = SchedError;

    /// The scheduler. Read each gate's statement for the exact rules.
    pub trait Scheduler {
        /// An empty scheduler: no jobs, no retry policy yet.
        fn new() -> Self;

        // Gate 1: delayed jobs.

        /// Creates a one-shot job due at `at_ms`; returns its id (1, 2, 3, ...).
        fn schedule(&mut self, at_ms: u64, payload: String) -> u64;
        /// Runs every job due at or before `now_ms`; returns their ids in run
        /// order (due time, then insertion order).
        fn run_due(&mut self, now_ms: u64) -> Vec<u64>;
        /// The earliest due time among the jobs still waiting to run.
        fn next_due(&mut self) -> Option<u64>;

        // Gate 2: cancellation with a bounded number of tombstones.

        /// Cancels a waiting job; true if it was waiting to run.
        fn cancel(&mut self, id: u64) -> bool;
        /// The due time of job `id`'s next run, if it is waiting to run.
        fn next_run(&mut self, id: u64) -> Option<u64>;
        /// How many jobs are waiting to run.
        fn pending(&mut self) -> usize;
        // Gate 3: recurring jobs.

        /// Creates a fixed-rate job: runs at `first_ms`, `first_ms + period_ms`,
        /// ...; `catch_up` is `"all"` or `"latest"`. Returns its id.
        fn schedule_fixed_rate(
            &mut self,
            first_ms: u64,
            period_ms: u64,
            catch_up: String,
            payload: String,
        ) -> Result<u64, SchedError>;
        /// Creates a fixed-delay job: runs at `first_ms`, then `period_ms`
        /// after each run. Returns its id.
        fn schedule_fixed_delay(&mut self, first_ms: u64, period_ms: u64, payload: String) -> Result<u64, SchedError>;

        // Gate 4: retries with capped exponential backoff and seeded jitter.

        /// Sets the retry policy and restarts the jitter generator from `seed`.
        fn set_retry_policy(&mut self, max_retries: u32, base_ms: u64, cap_ms: u64, seed: u64);
        /// Reports that the latest run of one-shot job `id` failed at `now_ms`;
        /// returns the retry time, or `None` if the job is now dead.
        fn fail(&mut self, id: u64, now_ms: u64) -> Result<Option<u64>, SchedError>;
        /// The ids of dead jobs, in the order they died.
        fn dead_letters(&mut self) -> Vec<u64>;

        // Gate 5.

        /// Gate 5: makes at most `limit` of the runs `run_due(now_ms)` would make;
        /// returns their ids in run order.
        fn run_batch(&mut self, now_ms: u64, limit: usize) -> Vec<u64>;

        // Gate 6.

        /// Gate 6: sets how long each later run of recurring job `id` lasts and whether
        /// it may overlap an earlier run; true if the setting was applied.
        fn set_run_time(&mut self, id: u64, duration_ms: u64, allow_overlap: bool) -> bool;
        /// Gate 6: how many runs of recurring job `id` overlapped an earlier run of it.
        fn overlaps(&mut self, id: u64) -> Option<u64>;
        /// Gate 6: how many runs of recurring job `id` were skipped because an earlier
        /// run of it was still in progress.
        fn skipped(&mut self, id: u64) -> Option<u64>;
    }
}
