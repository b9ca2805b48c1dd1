//! Reference solution for `rate_limiter`.
//!
// @gate 2,7
//! Independent limiters, each a map from key to a small state struct.
//! Every limiter keeps a clock per key, so a late timestamp is judged at
//! the latest time that key has seen by that limiter, and no key or
//! limiter ever waits on another's state.
//! The limiter that forgets idle keys has one clock for all its keys.  // @gate 6
// @else
//~ //! The limiter is a map from key to a small state struct, so no key ever
//~ //! waits on another's state.
// @end
// @gate 3
//!
//! All arithmetic is in integers, so nothing is ever rounded: the sliding
//! counter's comparison is multiplied through by the window length.
//! The token bucket counts in units of 1/window_ms of a token, so one  // @gate 4
//! millisecond of refill is exactly `limit` units.  // @gate 4
// @end

// @gate 2
use std::collections::{HashMap, VecDeque};
// @else
//~ use std::collections::HashMap;
// @end
use std::sync::{Mutex, PoisonError}; // @gate 5

// @gate 5
use harness_contract::rate_limiter::{RateLimiter, SharedRateLimiter};
// @else
//~ use harness_contract::rate_limiter::RateLimiter;
// @end

/// Fixed window: the window the key is in and what it was allowed there.
/// The clock only matters at window granularity, so the window index is it.
struct Fixed {
    window: u64,
    allowed: u32,
}

// @gate 2
/// Sliding log: the times of the allowed requests that may still count,
/// oldest first.
struct Log {
    clock: u64,
    times: VecDeque<u64>,
}
// @end

// @gate 3
/// Sliding counter: allowed requests in the current window and the one
/// before it.
struct Counter {
    clock: u64,
    window: u64,
    previous: u64,
    current: u64,
}
// @end

// @gate 4
/// Token bucket, in units of 1/window_ms of a token.
struct Bucket {
    clock: u64,
    units: u64,
}
// @end

// @gate 5
/// One key's sliding log on the shared limiter, and how many of its
/// requests were granted.
struct SharedLog {
    clock: u64,
    recent: VecDeque<u64>,
    granted: u64,
}
// @end

// @gate 6
/// The log limiter that forgets idle keys. One clock for all keys, so
/// every allowed request enters one queue in time order and expires from
/// its front: a key whose last counting request expires is removed.
struct Active {
    clock: u64,
    /// The counting times of each active key, oldest first; never empty.
    logs: HashMap<String, VecDeque<u64>>,
    /// Every counting request of every key, oldest first.
    expiry: VecDeque<(u64, String)>,
}

impl Active {
    /// Moves the one clock up to `now_ms`, drops every request that no
    /// longer counts and every key left with none; returns the clock.
    fn expire(&mut self, now_ms: u64, window_ms: u64) -> u64 {
        let now = advance(&mut self.clock, now_ms);
        while let Some((t, _)) = self.expiry.front() {
            if t + window_ms > now {
                break;
            }
            let (_, key) = self.expiry.pop_front().expect("front exists");
            // The queue and the key's log are both in time order, so this
            // entry is the oldest of its key's log.
            if let Some(log) = self.logs.get_mut(&key) {
                log.pop_front();
                if log.is_empty() {
                    self.logs.remove(&key);
                }
            }
        }
        now
    }
}
// @end

// @gate 7
/// A key's leaky bucket. Releases are spaced exactly `window_ms` apart
/// while the queue is busy, so the time of the latest release says how
/// many are still waiting: no queue of times is needed.
struct Leak {
    clock: u64,
    /// When the latest accepted request is (or was) released.
    last: Option<u64>,
}
// @end

pub struct Limiter {
    limit: u32,
    window_ms: u64,
    fixed: HashMap<String, Fixed>,
    logs: HashMap<String, Log>,         // @gate 2
    counters: HashMap<String, Counter>, // @gate 3
    buckets: HashMap<String, Bucket>,   // @gate 4
    // @gate 5
    /// The shared limiter, every key behind one lock. Each call holds it
    /// from its first look at the key to its last change, so calls take
    /// effect one at a time, in the order they take the lock.
    shared: Mutex<HashMap<String, SharedLog>>,
    // @end
    active: Active,               // @gate 6
    leaks: HashMap<String, Leak>, // @gate 7
}

// @gate 2,7
/// Moves a clock forward to `now_ms` and returns the effective time: a
/// request stamped earlier than one already seen is judged at the later
/// time, so no state ever runs backwards.
fn advance(clock: &mut u64, now_ms: u64) -> u64 {
    *clock = (*clock).max(now_ms);
    *clock
}
// @end

// @gate 4
impl Limiter {
    /// The key's bucket, refilled up to `now_ms` (created full).
    fn refill(&mut self, key: String, now_ms: u64) -> &mut Bucket {
        let limit = u64::from(self.limit);
        let window_ms = self.window_ms;
        let capacity = limit * window_ms;
        let bucket = self.buckets.entry(key).or_insert(Bucket { clock: now_ms, units: capacity });
        let before = bucket.clock;
        let now = advance(&mut bucket.clock, now_ms);
        // Each millisecond adds `limit` units. A whole window refills even an
        // empty bucket, so capping the time there changes nothing but keeps
        // the product far from overflow.
        let gained = (now - before).min(window_ms) * limit;
        bucket.units = (bucket.units + gained).min(capacity);
        bucket
    }
}
// @end

impl RateLimiter for Limiter {
    fn new(limit: u32, window_ms: u64) -> Self {
        Limiter {
            limit,
            window_ms,
            fixed: HashMap::new(),
            logs: HashMap::new(),               // @gate 2
            counters: HashMap::new(),           // @gate 3
            buckets: HashMap::new(),            // @gate 4
            shared: Mutex::new(HashMap::new()), // @gate 5
            // @gate 6
            active: Active { clock: 0, logs: HashMap::new(), expiry: VecDeque::new() },
            // @end
            leaks: HashMap::new(), // @gate 7
        }
    }

    fn fixed_allow(&mut self, key: String, now_ms: u64) -> bool {
        let window = now_ms / self.window_ms;
        let state = self.fixed.entry(key).or_insert(Fixed { window, allowed: 0 });
        // Only a later window resets the count: a late request is counted
        // in the key's current window, never in one already closed.
        if window > state.window {
            *state = Fixed { window, allowed: 0 };
        }
        if state.allowed < self.limit {
            state.allowed += 1;
            true
        } else {
            false
        }
    }
    // @gate 2

    fn log_allow(&mut self, key: String, now_ms: u64) -> bool {
        let (limit, window_ms) = (self.limit as usize, self.window_ms);
        let log = self.logs.entry(key).or_insert_with(|| Log { clock: 0, times: VecDeque::new() });
        let now = advance(&mut log.clock, now_ms);
        // A request at `t` counts while `now - t < window_ms`: it stops
        // counting exactly one window length later. Times are appended in
        // clock order, so expired ones are all at the front.
        while log.times.front().is_some_and(|&t| t + window_ms <= now) {
            log.times.pop_front();
        }
        let allowed = log.times.len() < limit;
        if allowed {
            // Only allowed requests are recorded: a client that keeps
            // retrying while refused must not lock itself out.
            log.times.push_back(now);
        }
        allowed
    }
    // @end
    // @gate 3

    fn counter_allow(&mut self, key: String, now_ms: u64) -> bool {
        let (limit, window_ms) = (u64::from(self.limit), self.window_ms);
        let c = self.counters.entry(key).or_insert(Counter { clock: 0, window: 0, previous: 0, current: 0 });
        let now = advance(&mut c.clock, now_ms);
        let window = now / window_ms;
        if window == c.window + 1 {
            c.previous = c.current;
            c.current = 0;
        } else if window > c.window {
            // More than one window passed: the old counts are both stale.
            c.previous = 0;
            c.current = 0;
        }
        c.window = window;
        let elapsed = now % window_ms;
        // previous * (part of the previous window still inside the sliding
        // window) + current < limit, with both sides times window_ms.
        let allowed = c.previous * (window_ms - elapsed) + c.current * window_ms < limit * window_ms;
        if allowed {
            c.current += 1;
        }
        allowed
    }
    // @end
    // @gate 4

    fn bucket_allow(&mut self, key: String, cost: u32, now_ms: u64) -> bool {
        let need = u64::from(cost) * self.window_ms;
        let bucket = self.refill(key, now_ms);
        if bucket.units >= need {
            bucket.units -= need;
            true
        } else {
            false
        }
    }

    fn retry_after(&mut self, key: String, cost: u32, now_ms: u64) -> Option<u64> {
        let (limit, need) = (u64::from(self.limit), u64::from(cost) * self.window_ms);
        // Asking is a call like any other: it moves the key's clock.
        let bucket = self.refill(key, now_ms);
        if u64::from(cost) > limit {
            // More than a full bucket: waiting never helps.
            return None;
        }
        let missing = need.saturating_sub(bucket.units);
        // Round up: after the floor the bucket is still short of `cost`.
        Some(missing.div_ceil(limit))
    }
    // @end
    // @gate 6

    fn active_allow(&mut self, key: String, now_ms: u64) -> bool {
        let now = self.active.expire(now_ms, self.window_ms);
        let log = self.active.logs.get(&key);
        let allowed = log.map_or(0, VecDeque::len) < self.limit as usize;
        if allowed {
            self.active.expiry.push_back((now, key.clone()));
            // Only an allowed request creates a key: a refused one records
            // nothing, so it cannot keep a key active.
            self.active.logs.entry(key).or_default().push_back(now);
        }
        allowed
    }

    fn active_keys(&mut self, now_ms: u64) -> u64 {
        self.active.expire(now_ms, self.window_ms);
        self.active.logs.len() as u64
    }
    // @end
    // @gate 7

    fn leak_offer(&mut self, key: String, now_ms: u64) -> Option<u64> {
        let (limit, window_ms) = (u64::from(self.limit), self.window_ms);
        let leak = self.leaks.entry(key).or_insert(Leak { clock: 0, last: None });
        let now = advance(&mut leak.clock, now_ms);
        if waiting(leak.last, now, window_ms) >= limit {
            // Dropped: nothing is scheduled, only the clock moved.
            return None;
        }
        // One interval after the release before it, or at once if that is
        // already past (the queue ran dry) or there was none.
        let release = match leak.last {
            Some(last) if last + window_ms > now => last + window_ms,
            _ => now,
        };
        leak.last = Some(release);
        Some(release)
    }

    fn leak_waiting(&mut self, key: String, now_ms: u64) -> u64 {
        let leak = self.leaks.entry(key).or_insert(Leak { clock: 0, last: None });
        let now = advance(&mut leak.clock, now_ms);
        waiting(leak.last, now, self.window_ms)
    }
    // @end
}

// @gate 7
/// How many releases of a leaky bucket whose latest release is `last` come
/// strictly after `now`: last, last - w, ... down to above now, all of one
/// busy stretch (it began at an effective time no later than now), so
/// ceil((last - now) / w) of them.
fn waiting(last: Option<u64>, now: u64, window_ms: u64) -> u64 {
    last.map_or(0, |last| last.saturating_sub(now).div_ceil(window_ms))
}
// @end

// @gate 5
impl SharedRateLimiter for Limiter {
    fn shared_allow(&self, key: String, now_ms: u64) -> bool {
        let limit = self.limit as usize;
        // A panic elsewhere cannot leave a log half-changed (nothing here
        // panics while holding the lock), so a poisoned lock is still good.
        let mut logs = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        let log = logs.entry(key).or_insert_with(|| SharedLog { clock: 0, recent: VecDeque::new(), granted: 0 });
        let t = advance(&mut log.clock, now_ms);
        while log.recent.front().is_some_and(|&s| t - s >= self.window_ms) {
            log.recent.pop_front();
        }
        // Check and record under the same guard: between them no other
        // thread can see this key.
        let admitted = log.recent.len() < limit;
        if admitted {
            log.recent.push_back(t);
            log.granted += 1;
        }
        admitted
    }

    fn granted(&self, key: String) -> u64 {
        let logs = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        logs.get(&key).map_or(0, |log| log.granted)
    }
}
// @end

harness_contract::export!(rate_limiter, Limiter);
