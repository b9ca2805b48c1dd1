//! A second solution for `bounded_pipeline`, written from the statements.
//!
//! Design: jobs only ever leave the queue from its front (take, shed,
//! expiry) or all at once (the deadline), and ids are handed out in the
//! order jobs join the back. So the queued ids are always one contiguous
//! range `front_id .. front_id + len`, and the queue needs to store nothing
//! but submit times, kept in a fixed ring buffer of `capacity` slots that is
//! allocated once. Running jobs sit in a `VecDeque` in take order (at most
//! L of them), searched linearly; the ones that time out leave from its
//! front. The shutdown state is an optional deadline plus a `stopped` flag.
//! The circuit breaker is flat fields too: a run of failures, the time it
//! opened, and the trial's id with a flag for "half-open".

use std::collections::VecDeque;

use harness_contract::bounded_pipeline::{Admission, PipeError, Pipeline};

struct Ring {
    /// Submit time of each queued job; slot `(head + k) % len` holds the
    /// k-th oldest.
    slots: Vec<u64>,
    head: usize,
    len: usize,
}

impl Ring {
    fn new(capacity: usize) -> Ring {
        Ring { slots: vec![0; capacity], head: 0, len: 0 }
    }

    fn is_full(&self) -> bool {
        self.len == self.slots.len()
    }

    fn oldest(&self) -> Option<u64> {
        (self.len > 0).then(|| self.slots[self.head])
    }

    fn drop_oldest(&mut self) {
        debug_assert!(self.len > 0);
        self.head = (self.head + 1) % self.slots.len();
        self.len -= 1;
    }

    fn push(&mut self, submitted: u64) {
        debug_assert!(!self.is_full());
        let tail = (self.head + self.len) % self.slots.len();
        self.slots[tail] = submitted;
        self.len += 1;
    }

    fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }
}

struct Adaptive {
    lo: usize,
    hi: usize,
    target: u64,
}

pub struct Pipe {
    ring: Ring,
    /// Id of the oldest queued job; the queue is `front_id .. front_id + len`.
    front_id: u64,
    /// The next id to hand out; everything below it has been issued.
    next_id: u64,
    /// `(id, taken_at)`, in take order, so also in order of taken_at.
    busy: VecDeque<(u64, u64)>,
    limit: usize,
    estimate: u64,
    shed_oldest: bool,
    max_wait: Option<u64>,
    timeout: Option<u64>,
    deadline: Option<u64>,
    stopped: bool,
    cancelled: Vec<u64>,
    adaptive: Option<Adaptive>,
    /// `(threshold, cooldown)` once the breaker is on.
    breaker: Option<(u64, u64)>,
    /// Consecutive failures while closed.
    run_of_failures: u64,
    /// When the breaker opened, while it is open.
    opened_at: Option<u64>,
    /// Half-open: waiting for a trial (`None`) or for its result.
    half_open: bool,
    trial: Option<u64>,
    counts: [u64; 7], // accepted, rejected, completed, failed, shed, expired, timed out
}

const ACCEPTED: usize = 0;
const REJECTED: usize = 1;
const COMPLETED: usize = 2;
const FAILED: usize = 3;
const SHED: usize = 4;
const EXPIRED: usize = 5;
const TIMED_OUT: usize = 6;

impl Pipe {
    fn littles_law(&self) -> u64 {
        let capacity = self.ring.slots.len() as u64;
        (capacity * self.estimate).div_ceil(self.limit as u64)
    }

    fn pop_front(&mut self) -> u64 {
        let id = self.front_id;
        self.ring.drop_oldest();
        self.front_id += 1;
        id
    }

    /// The time rule: timeouts, the breaker's cooldown, expiry, then the
    /// deadline; then a finished drain.
    fn at(&mut self, now: u64) {
        if let (Some(opened), Some((_, cooldown))) = (self.opened_at, self.breaker)
            && now - opened >= cooldown
        {
            self.opened_at = None;
            self.half_open = true;
            self.trial = None;
        }
        if let Some(timeout) = self.timeout {
            while let Some(&(_, taken)) = self.busy.front() {
                if now - taken <= timeout {
                    break;
                }
                self.busy.pop_front();
                self.counts[TIMED_OUT] += 1;
                self.estimate = timeout;
            }
        }
        if let Some(max_wait) = self.max_wait {
            while let Some(submitted) = self.ring.oldest() {
                if now - submitted > max_wait {
                    self.pop_front();
                    self.counts[EXPIRED] += 1;
                } else {
                    break;
                }
            }
        }
        if let Some(deadline) = self.deadline
            && !self.stopped
            && now >= deadline
        {
            for &(id, _) in &self.busy {
                self.cancelled.push(id);
            }
            for k in 0..self.ring.len as u64 {
                self.cancelled.push(self.front_id + k);
            }
            self.busy.clear();
            self.front_id += self.ring.len as u64;
            self.ring.clear();
            self.stopped = true;
        }
        self.check_drained();
    }

    fn check_drained(&mut self) {
        if self.deadline.is_some() && self.ring.len == 0 && self.busy.is_empty() {
            self.stopped = true;
        }
    }

    fn end(&mut self, id: u64, now: u64, failed: bool) -> Result<u64, PipeError> {
        self.at(now);
        if id == 0 || id >= self.next_id {
            return Err(PipeError::UnknownJob);
        }
        let Some(pos) = self.busy.iter().position(|&(busy_id, _)| busy_id == id) else {
            return Err(PipeError::NotRunning);
        };
        let (_, taken) = self.busy.remove(pos).expect("a position found in busy");
        let t = now - taken;
        self.estimate = t;
        self.counts[if failed { FAILED } else { COMPLETED }] += 1;
        if let Some((threshold, _)) = self.breaker {
            if self.half_open {
                if self.trial == Some(id) {
                    self.half_open = false;
                    self.trial = None;
                    if failed {
                        self.opened_at = Some(now);
                    } else {
                        self.run_of_failures = 0;
                    }
                }
            } else if self.opened_at.is_none() {
                if failed {
                    self.run_of_failures += 1;
                    if self.run_of_failures >= threshold {
                        self.run_of_failures = 0;
                        self.opened_at = Some(now);
                    }
                } else {
                    self.run_of_failures = 0;
                }
            }
        }
        if let Some(a) = &self.adaptive {
            if failed || t > a.target.saturating_mul(2) {
                self.limit = std::cmp::max(a.lo, self.limit * 4 / 5);
            } else if t < a.target {
                self.limit = std::cmp::min(a.hi, self.limit + 1);
            }
        }
        self.check_drained();
        Ok(t)
    }
}

impl Pipeline for Pipe {
    fn new(capacity: usize, workers: usize, initial_service_ms: u64) -> Self {
        Pipe {
            ring: Ring::new(capacity),
            front_id: 1,
            next_id: 1,
            busy: VecDeque::new(),
            limit: workers,
            estimate: initial_service_ms,
            shed_oldest: false,
            max_wait: None,
            timeout: None,
            deadline: None,
            stopped: false,
            cancelled: Vec::new(),
            adaptive: None,
            breaker: None,
            run_of_failures: 0,
            opened_at: None,
            half_open: false,
            trial: None,
            counts: [0; 7],
        }
    }

    fn submit(&mut self, now_ms: u64) -> Result<Admission, PipeError> {
        self.at(now_ms);
        if self.deadline.is_some() {
            return Err(PipeError::Closed);
        }
        if let (Some(opened), Some((_, cooldown))) = (self.opened_at, self.breaker) {
            self.counts[REJECTED] += 1;
            return Ok(Admission::Rejected { retry_after_ms: opened + cooldown - now_ms });
        }
        if self.half_open
            && let Some(trial) = self.trial
        {
            let still_here = self.busy.binary_search_by_key(&trial, |&(id, _)| id).is_ok() || (self.ring.len > 0 && self.front_id <= trial);
            if still_here {
                self.counts[REJECTED] += 1;
                return Ok(Admission::Rejected { retry_after_ms: self.littles_law() });
            }
            self.trial = None;
        }
        let mut dropped = None;
        if self.ring.is_full() {
            if !self.shed_oldest {
                self.counts[REJECTED] += 1;
                return Ok(Admission::Rejected { retry_after_ms: self.littles_law() });
            }
            dropped = Some(self.pop_front());
            self.counts[SHED] += 1;
        }
        if self.ring.len == 0 {
            self.front_id = self.next_id;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.ring.push(now_ms);
        self.counts[ACCEPTED] += 1;
        if self.half_open && self.trial.is_none() {
            self.trial = Some(id);
        }
        Ok(match dropped {
            Some(dropped) => Admission::Shed { id, dropped },
            None => Admission::Accepted { id },
        })
    }

    fn take(&mut self, now_ms: u64) -> Option<u64> {
        self.at(now_ms);
        if self.busy.len() >= self.limit || self.ring.len == 0 {
            return None;
        }
        let id = self.pop_front();
        self.busy.push_back((id, now_ms));
        Some(id)
    }

    fn complete(&mut self, id: u64, now_ms: u64) -> Result<u64, PipeError> {
        self.end(id, now_ms, false)
    }

    fn fail(&mut self, id: u64, now_ms: u64) -> Result<u64, PipeError> {
        self.end(id, now_ms, true)
    }

    fn running(&self) -> Vec<u64> {
        self.busy.iter().map(|&(id, _)| id).collect()
    }

    fn queued(&self) -> Vec<u64> {
        (0..self.ring.len as u64).map(|k| self.front_id + k).collect()
    }

    fn stats(&self) -> (u64, u64, u64, u64) {
        (self.counts[ACCEPTED], self.counts[REJECTED], self.counts[COMPLETED], self.counts[FAILED])
    }

    fn set_overflow(&mut self, policy: String) -> Result<(), PipeError> {
        match &*policy {
            "reject" => self.shed_oldest = false,
            "shed_oldest" => self.shed_oldest = true,
            _ => return Err(PipeError::InvalidPolicy),
        }
        Ok(())
    }

    fn set_max_wait(&mut self, max_wait_ms: u64) {
        self.max_wait = Some(max_wait_ms);
    }

    fn tick(&mut self, now_ms: u64) {
        self.at(now_ms);
    }

    fn dropped(&self) -> (u64, u64) {
        (self.counts[SHED], self.counts[EXPIRED])
    }

    fn shutdown(&mut self, now_ms: u64, grace_ms: u64) -> u64 {
        self.at(now_ms);
        if let Some(deadline) = self.deadline {
            return deadline;
        }
        let deadline = now_ms + grace_ms;
        self.deadline = Some(deadline);
        self.at(now_ms);
        deadline
    }

    fn phase(&self) -> String {
        String::from(match (self.deadline, self.stopped) {
            (None, _) => "accepting",
            (Some(_), false) => "draining",
            (Some(_), true) => "stopped",
        })
    }

    fn cancelled(&self) -> Vec<u64> {
        self.cancelled.clone()
    }

    fn set_adaptive(&mut self, min_limit: usize, max_limit: usize, target_ms: u64) -> Result<(), PipeError> {
        if min_limit < 1 || max_limit < min_limit {
            return Err(PipeError::InvalidLimits);
        }
        self.limit = self.limit.max(min_limit).min(max_limit);
        self.adaptive = Some(Adaptive { lo: min_limit, hi: max_limit, target: target_ms });
        Ok(())
    }

    fn limit(&self) -> usize {
        self.limit
    }

    fn set_timeout(&mut self, timeout_ms: u64) {
        self.timeout = Some(timeout_ms);
    }

    fn timed_out(&self) -> u64 {
        self.counts[TIMED_OUT]
    }

    fn set_breaker(&mut self, threshold: u64, cooldown_ms: u64) -> Result<(), PipeError> {
        if threshold < 1 {
            return Err(PipeError::InvalidBreaker);
        }
        self.breaker = Some((threshold, cooldown_ms));
        self.run_of_failures = 0;
        self.opened_at = None;
        self.half_open = false;
        self.trial = None;
        Ok(())
    }

    fn breaker(&self) -> String {
        let state = if self.opened_at.is_some() {
            "open"
        } else if self.half_open {
            "half_open"
        } else {
            "closed"
        };
        state.to_string()
    }
}

harness_contract::export!(bounded_pipeline, Pipe);
