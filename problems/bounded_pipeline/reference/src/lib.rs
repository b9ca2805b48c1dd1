//! Reference solution for `bounded_pipeline`.
//!
//! The state is exactly what the pipeline holds *now*: a FIFO of queued
//! jobs (never more than `capacity`), the running jobs keyed by id (never
//! more than the limit allowed when they were taken), and a handful of
//! counters. A job that has left the pipeline leaves no record behind: the
//! last id handed out is enough to tell an id that was never issued from one
//! that has gone, so memory is bounded by capacity plus concurrency however
//! many jobs pass through.
// @gate 2,6
//!
//! Time only moves inside operations that take `now_ms`. Each of them first
//! calls `advance`, which applies what that time makes due, then does its
//! own work.
// @end
// @gate 5
//! Running jobs past their timeout are abandoned.
// @end
// @gate 6
//! An open circuit breaker whose cooldown is over half-opens.
// @end
// @gate 2
//! Queued jobs past their maximum wait expire.
// @end
// @gate 3
//! At the shutdown deadline whatever is left is cancelled. Each operation
//! ends with `settle`, which notices a drain that has finished.
// @end

use std::collections::{BTreeMap, VecDeque};

use harness_contract::bounded_pipeline::{Admission, PipeError, Pipeline};

/// A job waiting in the queue.
struct Waiting {
    id: u64,
    submitted_ms: u64, // @gate 2
}
// @gate 2

#[derive(Clone, Copy, PartialEq, Eq)]
enum Overflow {
    Reject,
    ShedOldest,
}
// @end
// @gate 3

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Accepting,
    Draining { deadline: u64 },
    Stopped { deadline: u64 },
}
// @end
// @gate 6

/// The circuit breaker. Its data lives in its states: the count only
/// while closed, the end of the cooldown only while open, the trial only
/// while half-open.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Breaker {
    Closed { failures: u64 },
    Open { until: u64 },
    HalfOpen { trial: Option<u64> },
}

#[derive(Clone, Copy)]
struct BreakerConfig {
    threshold: u64,
    cooldown_ms: u64,
}
// @end
// @gate 4

/// Bounds and target of the AIMD controller.
#[derive(Clone, Copy)]
struct Aimd {
    min: usize,
    max: usize,
    target_ms: u64,
}
// @end

pub struct Pool {
    capacity: usize,
    /// Oldest first.
    /// Submit times never decrease, so the jobs that have waited too long // @gate 2
    /// are always a prefix. // @gate 2
    queue: VecDeque<Waiting>,
    /// Running job id -> the time it was taken. Ordered, so `running()` is
    /// already in take order (ids are taken in ascending order).
    /// The first entry is the job that has run longest. // @gate 5
    running: BTreeMap<u64, u64>,
    /// The last id handed out; ids `1..=last_id` have been issued.
    last_id: u64,
    limit: usize,
    /// Service time of the most recently finished job (the estimate S).
    service_ms: u64,
    overflow: Overflow,       // @gate 2
    max_wait_ms: Option<u64>, // @gate 2
    timeout_ms: Option<u64>,  // @gate 5
    phase: Phase,             // @gate 3
    cancelled: Vec<u64>,      // @gate 3
    aimd: Option<Aimd>,       // @gate 4
    accepted: u64,
    rejected: u64,
    completed: u64,
    failed: u64,
    shed: u64,        // @gate 2
    expired: u64,     // @gate 2
    timed_out: u64,   // @gate 5
    breaker: Breaker, // @gate 6
    /// `None` while the breaker is off: then it stays closed. // @gate 6
    breaker_config: Option<BreakerConfig>, // @gate 6
}

impl Pool {
    /// Little's law: the queue ahead drains at `limit` jobs per service
    /// time, so a full queue clears in `capacity * S / limit`, rounded up.
    fn retry_after(&self) -> u64 {
        let wait = (self.capacity as u128 * self.service_ms as u128).div_ceil(self.limit as u128);
        wait.min(u64::MAX as u128) as u64
    }
    // @gate 2,6

    /// Applies what `now_ms` makes due, before an operation's own work.
    fn advance(&mut self, now_ms: u64) {
        self.time_out(now_ms); // @gate 5
        self.half_open(now_ms); // @gate 6
        self.expire(now_ms); // @gate 2
        self.enforce_deadline(now_ms); // @gate 3
    }
    // @end
    // @gate 2

    /// Drops the queued jobs that have waited longer than the maximum wait.
    /// They are a prefix of the queue, so this pops and never scans.
    fn expire(&mut self, now_ms: u64) {
        if let Some(max_wait) = self.max_wait_ms {
            while let Some(front) = self.queue.front() {
                if now_ms - front.submitted_ms <= max_wait {
                    break;
                }
                self.queue.pop_front();
                self.expired += 1;
            }
        }
    }
    // @end
    // @gate 5

    /// Abandons the running jobs that have run longer than the timeout.
    /// One timeout for all and jobs taken in order: they are a prefix of
    /// `running`, so this pops and never scans.
    fn time_out(&mut self, now_ms: u64) {
        if let Some(timeout) = self.timeout_ms {
            while let Some((&id, &taken_ms)) = self.running.first_key_value() {
                if now_ms - taken_ms <= timeout {
                    break;
                }
                self.running.remove(&id);
                self.timed_out += 1;
                // The worker was held for the whole timeout.
                self.service_ms = timeout;
            }
        }
    }
    // @end
    // @gate 6

    /// An open breaker whose cooldown is over lets a trial through.
    fn half_open(&mut self, now_ms: u64) {
        if let Breaker::Open { until } = self.breaker
            && now_ms >= until
        {
            self.breaker = Breaker::HalfOpen { trial: None };
        }
    }

    /// Whether the trial is still queued or running. Jobs leave the queue
    /// only from its front, so the queued ids are one range ending at the
    /// newest id.
    fn pending(&self, id: u64) -> bool {
        self.running.contains_key(&id) || self.queue.front().is_some_and(|front| front.id <= id)
    }

    /// Why the breaker refuses a submit, as a retry-after; `None` if it
    /// lets it through.
    fn breaker_refuses(&mut self, now_ms: u64) -> Option<u64> {
        match self.breaker {
            Breaker::Open { until } => Some(until - now_ms),
            Breaker::HalfOpen { trial: Some(trial) } if self.pending(trial) => Some(self.retry_after()),
            // @gate 2
            Breaker::HalfOpen { trial: Some(_) } => {
                // The trial left without a result: let another one through.
                self.breaker = Breaker::HalfOpen { trial: None };
                None
            }
            // @end
            _ => None,
        }
    }

    /// What the breaker learns from job `id` finishing at `now_ms`.
    fn breaker_sees(&mut self, id: u64, now_ms: u64, ok: bool) {
        let Some(config) = self.breaker_config else { return };
        let open = Breaker::Open { until: now_ms.saturating_add(config.cooldown_ms) };
        self.breaker = match self.breaker {
            Breaker::Closed { .. } if ok => Breaker::Closed { failures: 0 },
            Breaker::Closed { failures } if failures + 1 >= config.threshold => open,
            Breaker::Closed { failures } => Breaker::Closed { failures: failures + 1 },
            Breaker::HalfOpen { trial: Some(trial) } if trial == id => {
                if ok {
                    Breaker::Closed { failures: 0 }
                } else {
                    open
                }
            }
            // Open, or half-open and this is a job admitted before the
            // breaker opened: old news.
            other => other,
        };
    }
    // @end
    // @gate 3

    /// At or after the shutdown deadline, cancels whatever is left.
    fn enforce_deadline(&mut self, now_ms: u64) {
        if let Phase::Draining { deadline } = self.phase
            && now_ms >= deadline
        {
            // The hard stop: running jobs first (their ids are all lower
            // than any queued id), then whatever is still queued.
            self.cancelled.extend(self.running.keys().copied());
            self.cancelled.extend(self.queue.iter().map(|w| w.id));
            self.running.clear();
            self.queue.clear();
            self.phase = Phase::Stopped { deadline };
        }
    }

    /// A drain that has nothing left to do is over.
    fn settle(&mut self) {
        if let Phase::Draining { deadline } = self.phase
            && self.queue.is_empty()
            && self.running.is_empty()
        {
            self.phase = Phase::Stopped { deadline };
        }
    }
    // @end
    // @gate 4

    /// Multiplicative decrease: keep four fifths, rounded down.
    fn back_off(&mut self, aimd: Aimd) {
        self.limit = (self.limit * 4 / 5).max(aimd.min);
    }
    // @end

    fn finish(&mut self, id: u64, now_ms: u64, ok: bool) -> Result<u64, PipeError> {
        self.advance(now_ms); // @gate 2,6
        // @gate 3
        // The time rule may have ended the drain, even if this call fails.
        self.settle();
        // @end
        if id == 0 || id > self.last_id {
            return Err(PipeError::UnknownJob);
        }
        let taken_ms = self.running.remove(&id).ok_or(PipeError::NotRunning)?;
        let latency = now_ms - taken_ms;
        self.service_ms = latency;
        if ok {
            self.completed += 1;
        } else {
            self.failed += 1;
        }
        self.breaker_sees(id, now_ms, ok); // @gate 6
        // @gate 4
        if let Some(aimd) = self.aimd {
            if !ok || latency > aimd.target_ms.saturating_mul(2) {
                self.back_off(aimd);
            } else if latency < aimd.target_ms {
                self.limit = (self.limit + 1).min(aimd.max);
            }
        }
        // @end
        self.settle(); // @gate 3
        Ok(latency)
    }
}

impl Pipeline for Pool {
    fn new(capacity: usize, workers: usize, initial_service_ms: u64) -> Self {
        Pool {
            capacity,
            queue: VecDeque::with_capacity(capacity),
            running: BTreeMap::new(),
            last_id: 0,
            limit: workers,
            service_ms: initial_service_ms,
            overflow: Overflow::Reject, // @gate 2
            max_wait_ms: None,          // @gate 2
            timeout_ms: None,           // @gate 5
            phase: Phase::Accepting,    // @gate 3
            cancelled: Vec::new(),      // @gate 3
            aimd: None,                 // @gate 4
            accepted: 0,
            rejected: 0,
            completed: 0,
            failed: 0,
            shed: 0,                                  // @gate 2
            expired: 0,                               // @gate 2
            timed_out: 0,                             // @gate 5
            breaker: Breaker::Closed { failures: 0 }, // @gate 6
            breaker_config: None,                     // @gate 6
        }
    }
    // @gate 2,6

    fn submit(&mut self, now_ms: u64) -> Result<Admission, PipeError> {
        self.advance(now_ms);
        // @gate 3
        if self.phase != Phase::Accepting {
            // The time rule may have emptied a drain: a refused submit ends it too.
            self.settle();
            return Err(PipeError::Closed);
        }
        // @end
        // @gate 6
        if let Some(retry_after_ms) = self.breaker_refuses(now_ms) {
            self.rejected += 1;
            return Ok(Admission::Rejected { retry_after_ms });
        }
        // @end
        // @gate 2
        let mut dropped = None;
        if self.queue.len() >= self.capacity {
            match self.overflow {
                Overflow::Reject => {
                    self.rejected += 1;
                    return Ok(Admission::Rejected { retry_after_ms: self.retry_after() });
                }
                Overflow::ShedOldest => {
                    let oldest = self.queue.pop_front().expect("a full queue has an oldest job");
                    self.shed += 1;
                    dropped = Some(oldest.id);
                }
            }
        }
        // @else
        //~ if self.queue.len() >= self.capacity {
        //~     self.rejected += 1;
        //~     return Ok(Admission::Rejected { retry_after_ms: self.retry_after() });
        //~ }
        // @end
        self.last_id += 1;
        let id = self.last_id;
        // @gate 2
        self.queue.push_back(Waiting { id, submitted_ms: now_ms });
        // @else
        //~ self.queue.push_back(Waiting { id });
        // @end
        self.accepted += 1;
        // @gate 6
        if self.breaker == (Breaker::HalfOpen { trial: None }) {
            self.breaker = Breaker::HalfOpen { trial: Some(id) };
        }
        // @end
        // @gate 2
        Ok(match dropped {
            None => Admission::Accepted { id },
            Some(dropped) => Admission::Shed { id, dropped },
        })
        // @else
        //~ Ok(Admission::Accepted { id })
        // @end
    }
    // @else

    //~ fn submit(&mut self, _now_ms: u64) -> Result<Admission, PipeError> {
    //~     if self.queue.len() >= self.capacity {
    //~         self.rejected += 1;
    //~         return Ok(Admission::Rejected { retry_after_ms: self.retry_after() });
    //~     }
    //~     self.last_id += 1;
    //~     let id = self.last_id;
    //~     self.queue.push_back(Waiting { id });
    //~     self.accepted += 1;
    //~     Ok(Admission::Accepted { id })
    //~ }
    // @end

    fn take(&mut self, now_ms: u64) -> Option<u64> {
        self.advance(now_ms); // @gate 2,6
        let taken = if self.running.len() < self.limit {
            self.queue.pop_front().map(|job| {
                self.running.insert(job.id, now_ms);
                job.id
            })
        } else {
            None
        };
        self.settle(); // @gate 3
        taken
    }

    fn complete(&mut self, id: u64, now_ms: u64) -> Result<u64, PipeError> {
        self.finish(id, now_ms, true)
    }

    fn fail(&mut self, id: u64, now_ms: u64) -> Result<u64, PipeError> {
        self.finish(id, now_ms, false)
    }

    fn running(&self) -> Vec<u64> {
        self.running.keys().copied().collect()
    }

    fn queued(&self) -> Vec<u64> {
        self.queue.iter().map(|w| w.id).collect()
    }

    fn stats(&self) -> (u64, u64, u64, u64) {
        (self.accepted, self.rejected, self.completed, self.failed)
    }
    // @gate 2

    fn set_overflow(&mut self, policy: String) -> Result<(), PipeError> {
        self.overflow = match policy.as_str() {
            "reject" => Overflow::Reject,
            "shed_oldest" => Overflow::ShedOldest,
            _ => return Err(PipeError::InvalidPolicy),
        };
        Ok(())
    }

    fn set_max_wait(&mut self, max_wait_ms: u64) {
        self.max_wait_ms = Some(max_wait_ms);
    }

    fn tick(&mut self, now_ms: u64) {
        self.advance(now_ms);
        self.settle(); // @gate 3
    }

    fn dropped(&self) -> (u64, u64) {
        (self.shed, self.expired)
    }
    // @end
    // @gate 3

    fn shutdown(&mut self, now_ms: u64, grace_ms: u64) -> u64 {
        self.advance(now_ms);
        let deadline = match self.phase {
            Phase::Draining { deadline } | Phase::Stopped { deadline } => deadline,
            Phase::Accepting => {
                let deadline = now_ms + grace_ms;
                self.phase = Phase::Draining { deadline };
                // A grace of 0 puts the deadline at this very call.
                self.advance(now_ms);
                deadline
            }
        };
        self.settle();
        deadline
    }

    fn phase(&self) -> String {
        match self.phase {
            Phase::Accepting => "accepting",
            Phase::Draining { .. } => "draining",
            Phase::Stopped { .. } => "stopped",
        }
        .to_string()
    }

    fn cancelled(&self) -> Vec<u64> {
        self.cancelled.clone()
    }
    // @end
    // @gate 4

    fn set_adaptive(&mut self, min_limit: usize, max_limit: usize, target_ms: u64) -> Result<(), PipeError> {
        if min_limit == 0 || min_limit > max_limit {
            return Err(PipeError::InvalidLimits);
        }
        self.aimd = Some(Aimd { min: min_limit, max: max_limit, target_ms });
        self.limit = self.limit.clamp(min_limit, max_limit);
        Ok(())
    }

    fn limit(&self) -> usize {
        self.limit
    }
    // @end
    // @gate 5

    fn set_timeout(&mut self, timeout_ms: u64) {
        self.timeout_ms = Some(timeout_ms);
    }

    fn timed_out(&self) -> u64 {
        self.timed_out
    }
    // @end
    // @gate 6

    fn set_breaker(&mut self, threshold: u64, cooldown_ms: u64) -> Result<(), PipeError> {
        if threshold == 0 {
            return Err(PipeError::InvalidBreaker);
        }
        self.breaker_config = Some(BreakerConfig { threshold, cooldown_ms });
        self.breaker = Breaker::Closed { failures: 0 };
        Ok(())
    }

    fn breaker(&self) -> String {
        match self.breaker {
            Breaker::Closed { .. } => "closed",
            Breaker::Open { .. } => "open",
            Breaker::HalfOpen { .. } => "half_open",
        }
        .to_string()
    }
    // @end
}

harness_contract::export!(bounded_pipeline, Pool);
