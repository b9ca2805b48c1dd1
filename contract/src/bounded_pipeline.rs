//! `bounded_pipeline`: a bounded job queue in front of a pool of workers,
//! simulated on a clock the caller drives.
//!
//! Implement [`Pipeline`] for your type and export it:
//!
//! ```ignore
//! use harness_contract::bounded_pipeline::{Admission, PipeError, Pipeline};
//! struct Pool { /* ... */ }
//! impl Pipeline for Pool { /* ... */ }
//! harness_contract::export!(bounded_pipeline, Pool);
//! ```
//!
//! There are no threads and no real time: every operation that depends on
//! time takes it as `now_ms`, and "a worker takes a job" or "a job
//! completes" is an operation the caller performs. Methods of later gates
//! have default bodies, so a solution compiles before it implements them;
//! calling one is judged `not_implemented`.
//!
//! Two methods, [`Pipeline::complete_nth`] and [`Pipeline::fail_nth`], are
//! provided by this module and are not yours to write: the harness's
//! generated cases cannot know the ids your pipeline hands out, so they
//! finish "the n-th running job" through your own `running`, `complete` and
//! `fail`.

use crate::{Value, Wire};

crate::error_kinds! {
    /// Why an operation was refused.
    pub enum PipeError {
        /// Gate 1: no job was ever accepted under this id (0 included).
        UnknownJob = "unknown_job",
        /// Gate 1: the job exists but is not running (still queued, or it
        /// has already left the pipeline).
        NotRunning = "not_running",
        /// Gate 2: the overflow policy is neither `"reject"` nor
        /// `"shed_oldest"`.
        InvalidPolicy = "invalid_policy",
        /// Gate 3: the pipeline has been shut down and accepts no new jobs.
        Closed = "closed",
        /// Gate 4: the adaptive limits need `1 <= min_limit <= max_limit`.
        InvalidLimits = "invalid_limits",
        /// Gate 6: a circuit breaker needs a threshold of at least 1.
        InvalidBreaker = "invalid_breaker",
    }
}

/// What `submit` did with a new job.
///
/// In transcripts it is written as a triple: `("accepted", id, None)`,
/// `("rejected", retry_after_ms, None)` and `("shed", id, dropped)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Admission {
    /// Gate 1: the job is queued under this id.
    Accepted { id: u64 },
    /// Gate 1: the queue is full; nothing was queued and no id was used.
    /// The producer should come back after `retry_after_ms`.
    Rejected { retry_after_ms: u64 },
    /// Gate 2: the queue was full and sheds its oldest job: job `dropped`
    /// left the queue and the new job is queued under `id`.
    Shed { id: u64, dropped: u64 },
}

impl Wire for Admission {
    fn type_name() -> String {
        <(String, u64, Option<u64>) as Wire>::type_name()
    }

    fn into_value(self) -> Value {
        let (tag, n, extra) = match self {
            Admission::Accepted { id } => ("accepted", id, None),
            Admission::Rejected { retry_after_ms } => ("rejected", retry_after_ms, None),
            Admission::Shed { id, dropped } => ("shed", id, Some(dropped)),
        };
        (tag.to_string(), n, extra).into_value()
    }

    fn from_value(value: Value) -> Result<Self, String> {
        let (tag, n, extra) = <(String, u64, Option<u64>)>::from_value(value)?;
        match (tag.as_str(), extra) {
            ("accepted", None) => Ok(Admission::Accepted { id: n }),
            ("rejected", None) => Ok(Admission::Rejected { retry_after_ms: n }),
            ("shed", Some(dropped)) => Ok(Admission::Shed { id: n, dropped }),
            _ => Err(format!("not an admission: ({tag:?}, {n}, {extra:?})")),
        }
    }
}

crate::contract! {
    problem = "bounded_pipeline";
    errors = PipeError;

    /// The pipeline. Read each gate's statement for the exact rules.
    pub trait Pipeline {
        /// An empty pipeline whose queue holds at most `capacity` jobs, served
        /// by `workers` workers; `initial_service_ms` is the service-time
        /// estimate used until a job has finished. `capacity` and `workers` are
        /// at least 1.
        fn new(capacity: usize, workers: usize, initial_service_ms: u64) -> Self;

        // Gate 1: a bounded queue, workers, and rejection with a retry-after.

        /// Offers a new job at `now_ms`: queued, or rejected with a
        /// retry-after when the queue is full (gate 2: or queued by shedding
        /// the oldest job; gate 3: refused with `closed` after shutdown).
        fn submit(&mut self, now_ms: u64) -> Result<Admission, PipeError>;
        /// A free worker takes the oldest queued job at `now_ms`; its id, or
        /// `None` if nothing is queued or every worker is busy.
        fn take(&mut self, now_ms: u64) -> Option<u64>;
        /// Running job `id` succeeded at `now_ms`; returns its service time
        /// (`now_ms` minus the time it was taken).
        fn complete(&mut self, id: u64, now_ms: u64) -> Result<u64, PipeError>;
        /// Running job `id` failed at `now_ms`; returns its service time.
        fn fail(&mut self, id: u64, now_ms: u64) -> Result<u64, PipeError>;
        /// The ids of the running jobs, in the order they were taken (which is
        /// ascending id order).
        fn running(&self) -> Vec<u64>;
        /// The ids of the queued jobs, oldest first.
        fn queued(&self) -> Vec<u64>;
        /// The counters `(accepted, rejected, completed, failed)`.
        fn stats(&self) -> (u64, u64, u64, u64);

        /// Provided by the contract, do not override: completes the running
        /// job at position `n % len` of [`Pipeline::running`] and returns its
        /// id and service time; `Ok(None)` if nothing is running.
        fn complete_nth(&mut self, n: u64, now_ms: u64) -> Result<Option<(u64, u64)>, PipeError> {
            let running = self.running();
            if running.is_empty() {
                return Ok(None);
            }
            let id = running[(n % running.len() as u64) as usize];
            self.complete(id, now_ms).map(|ms| Some((id, ms)))
        }
        /// Provided by the contract, do not override: like
        /// [`Pipeline::complete_nth`], but the job fails.
        fn fail_nth(&mut self, n: u64, now_ms: u64) -> Result<Option<(u64, u64)>, PipeError> {
            let running = self.running();
            if running.is_empty() {
                return Ok(None);
            }
            let id = running[(n % running.len() as u64) as usize];
            self.fail(id, now_ms).map(|ms| Some((id, ms)))
        }

        // Gate 2: load shedding.

        /// Chooses what a full queue does with a new job: `"reject"` (the
        /// default) or `"shed_oldest"`.
        fn set_overflow(&mut self, policy: String) -> Result<(), PipeError>;
        /// From now on, a queued job that has waited more than `max_wait_ms`
        /// expires instead of running.
        fn set_max_wait(&mut self, max_wait_ms: u64);
        /// Lets time pass: applies whatever `now_ms` makes due, nothing else.
        fn tick(&mut self, now_ms: u64);
        /// The counters `(shed, expired)`.
        fn dropped(&self) -> (u64, u64);

        // Gate 3: graceful shutdown.

        /// Stops accepting, drains, and cancels what remains at
        /// `now_ms + grace_ms`; returns that deadline. Idempotent: a later call
        /// changes nothing and returns the first deadline.
        fn shutdown(&mut self, now_ms: u64, grace_ms: u64) -> u64;
        /// `"accepting"`, `"draining"` or `"stopped"`.
        fn phase(&self) -> String;
        /// The ids of the jobs cancelled at the deadline, ascending.
        fn cancelled(&self) -> Vec<u64>;

        // Gate 4: adaptive concurrency (AIMD).

        /// Turns on adaptive concurrency within `[min_limit, max_limit]`
        /// around a target service time of `target_ms`.
        fn set_adaptive(&mut self, min_limit: usize, max_limit: usize, target_ms: u64) -> Result<(), PipeError>;
        /// The concurrency limit: how many jobs may run at once.
        fn limit(&self) -> usize;

        // Gate 5: per-job timeouts.

        /// From now on, a running job that has run more than `timeout_ms`
        /// since it was taken times out: it leaves, and its worker is free.
        fn set_timeout(&mut self, timeout_ms: u64);
        /// How many jobs have timed out.
        fn timed_out(&self) -> u64;

        // Gate 6: a circuit breaker.

        /// Turns the circuit breaker on (closed, no failures counted): it opens
        /// after `threshold` consecutive failures and half-opens `cooldown_ms`
        /// later.
        fn set_breaker(&mut self, threshold: u64, cooldown_ms: u64) -> Result<(), PipeError>;
        /// `"closed"`, `"open"` or `"half_open"`, as of the last operation with
        /// a `now_ms`.
        fn breaker(&self) -> String;
    }
}
