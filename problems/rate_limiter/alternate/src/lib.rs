//! A second solution for `rate_limiter`, written from the statements.
//!
//! Design: keys are interned once into a dense index (`HashMap<String,
//! usize>`), and each key's state for all four limiters sits side by side
//! in one `Vec<KeyState>` slot, each limiter with its own clock. The
//! sliding log is a hand-rolled ring buffer of `u64` times that grows by
//! doubling, is pruned from its front on every request (so it holds at
//! most `limit` times, all within the window) and halves its storage when
//! it becomes mostly empty. The counter and the bucket are exact integer
//! arithmetic: the bucket counts in 1/`window_ms`-ths of a token and is
//! refilled by one multiplication, never by a loop.

use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasher, RandomState};
use std::sync::Mutex;

use harness_contract::rate_limiter::{RateLimiter, SharedRateLimiter};

/// A FIFO of times over a circular `Vec`: slot `(head + k) % slots.len()`
/// holds the k-th oldest.
struct Ring {
    slots: Vec<u64>,
    head: usize,
    len: usize,
}

impl Ring {
    const MIN_SLOTS: usize = 4;

    fn new() -> Ring {
        Ring { slots: Vec::new(), head: 0, len: 0 }
    }

    fn front(&self) -> Option<u64> {
        (self.len > 0).then(|| self.slots[self.head])
    }

    fn pop_front(&mut self) {
        if self.len == 0 {
            return;
        }
        self.head = (self.head + 1) % self.slots.len();
        self.len -= 1;
        // Give memory back once a quarter or less of it is in use.
        if self.slots.len() > Self::MIN_SLOTS && self.len * 4 <= self.slots.len() {
            self.resize(self.slots.len() / 2);
        }
    }

    fn push_back(&mut self, time: u64) {
        if self.len == self.slots.len() {
            self.resize((self.slots.len() * 2).max(Self::MIN_SLOTS));
        }
        let tail = (self.head + self.len) % self.slots.len();
        self.slots[tail] = time;
        self.len += 1;
    }

    /// Copies the contents, oldest first, into `size` fresh slots.
    fn resize(&mut self, size: usize) {
        let mut slots = Vec::with_capacity(size);
        let (wrapped, first) = self.slots.split_at(self.head);
        slots.extend(first.iter().chain(wrapped).take(self.len));
        slots.resize(size, 0);
        self.slots = slots;
        self.head = 0;
    }
}

/// Everything one key needs, for the four independent limiters.
struct KeyState {
    /// Fixed windows: clock, window number, allowed in it.
    fixed_clock: u64,
    fixed_window: u64,
    fixed_count: u64,
    /// Sliding log: clock and the effective times of allowed requests still
    /// inside the window.
    log_clock: u64,
    log: Ring,
    /// Sliding counter: clock, window number, allowed in it and in the one
    /// before it.
    counter_clock: u64,
    counter_window: u64,
    counter_current: u64,
    counter_previous: u64,
    /// Token bucket: clock and content in 1/window_ms-ths of a token.
    bucket_clock: u64,
    bucket_units: u64,
}

impl KeyState {
    /// A key seen for the first time. Clocks at 0 are the same as no clock
    /// (every `now_ms` is at least 0); the bucket starts full, and refilling
    /// a full bucket from time 0 leaves it full.
    fn new(full_bucket: u64) -> KeyState {
        KeyState {
            fixed_clock: 0,
            fixed_window: 0,
            fixed_count: 0,
            log_clock: 0,
            log: Ring::new(),
            counter_clock: 0,
            counter_window: 0,
            counter_current: 0,
            counter_previous: 0,
            bucket_clock: 0,
            bucket_units: full_bucket,
        }
    }
}

/// Moves `clock` up to `now_ms` if it is later; returns the effective time.
fn advance(clock: &mut u64, now_ms: u64) -> u64 {
    *clock = (*clock).max(now_ms);
    *clock
}

/// Gate 5: one key on the shared limiter: its clock, its log of granted
/// times and how many it granted.
struct SharedKey {
    clock: u64,
    log: Ring,
    granted: u64,
}

/// Shards of the shared limiter: keys are independent, so each shard
/// (keys by hash) has a lock of its own and calls on keys of different
/// shards never wait for each other.
const SHARDS: usize = 16;

/// Gate 6: keys ordered by their newest counting time. A key whose newest
/// time no longer counts holds nothing that counts, so keys are forgotten
/// from the front of that order; a live key's own log is pruned only when
/// it is touched.
struct Recent {
    clock: u64,
    logs: HashMap<String, Ring>,
    /// `(newest counting time, key)` for every key in `logs`.
    by_newest: BTreeSet<(u64, String)>,
}

/// Gate 7: a key's leaky bucket as its current busy stretch: the stretch's
/// first release and how many releases it holds, one every `window_ms`.
struct Stretch {
    clock: u64,
    start: u64,
    len: u64,
}

impl Stretch {
    /// How many releases of the stretch come strictly after `t`: releases
    /// are at start + k * w for k < len, and those at or before `t` have
    /// left.
    fn waiting(&self, t: u64, window_ms: u64) -> u64 {
        if self.len == 0 || t < self.start {
            return self.len;
        }
        let gone = ((t - self.start) / window_ms + 1).min(self.len);
        self.len - gone
    }
}

pub struct Limiter {
    limit: u64,
    window_ms: u64,
    recent: Recent,
    stretches: HashMap<String, Stretch>,
    index: HashMap<String, usize>,
    keys: Vec<KeyState>,
    hasher: RandomState,
    shards: Vec<Mutex<HashMap<String, SharedKey>>>,
}

impl Limiter {
    fn full_bucket(&self) -> u64 {
        self.limit * self.window_ms
    }

    /// The key's slot in `keys`, created on first sight.
    fn slot(&mut self, key: String) -> usize {
        if let Some(&slot) = self.index.get(key.as_str()) {
            return slot;
        }
        let slot = self.keys.len();
        self.keys.push(KeyState::new(self.full_bucket()));
        self.index.insert(key, slot);
        slot
    }

    fn state(&mut self, key: String) -> &mut KeyState {
        let slot = self.slot(key);
        &mut self.keys[slot]
    }

    /// Advances the bucket of the key in `slot` to the effective time of
    /// `now_ms`, adding what it earned meanwhile; returns its content in
    /// units.
    fn refill(&mut self, slot: usize, now_ms: u64) -> u64 {
        let (limit, full) = (self.limit, self.full_bucket());
        let state = &mut self.keys[slot];
        let before = state.bucket_clock;
        let elapsed = advance(&mut state.bucket_clock, now_ms) - before;
        let earned = elapsed.saturating_mul(limit);
        state.bucket_units = state.bucket_units.saturating_add(earned).min(full);
        state.bucket_units
    }
}

impl RateLimiter for Limiter {
    fn new(limit: u32, window_ms: u64) -> Self {
        Limiter {
            limit: u64::from(limit),
            window_ms,
            index: HashMap::new(),
            keys: Vec::new(),
            hasher: RandomState::new(),
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            recent: Recent { clock: 0, logs: HashMap::new(), by_newest: BTreeSet::new() },
            stretches: HashMap::new(),
        }
    }

    fn fixed_allow(&mut self, key: String, now_ms: u64) -> bool {
        let (limit, window_ms) = (self.limit, self.window_ms);
        let state = self.state(key);
        let window = advance(&mut state.fixed_clock, now_ms) / window_ms;
        if window != state.fixed_window {
            // Effective times never decrease: this is a later window.
            state.fixed_window = window;
            state.fixed_count = 0;
        }
        let allowed = state.fixed_count < limit;
        if allowed {
            state.fixed_count += 1;
        }
        allowed
    }

    fn log_allow(&mut self, key: String, now_ms: u64) -> bool {
        let (limit, window_ms) = (self.limit, self.window_ms);
        let state = self.state(key);
        let t = advance(&mut state.log_clock, now_ms);
        while state.log.front().is_some_and(|s| t - s >= window_ms) {
            state.log.pop_front();
        }
        let allowed = (state.log.len as u64) < limit;
        if allowed {
            state.log.push_back(t);
        }
        allowed
    }

    fn counter_allow(&mut self, key: String, now_ms: u64) -> bool {
        let (limit, window_ms) = (self.limit, self.window_ms);
        let state = self.state(key);
        let t = advance(&mut state.counter_clock, now_ms);
        let window = t / window_ms;
        match window - state.counter_window {
            0 => {}
            1 => {
                state.counter_previous = state.counter_current;
                state.counter_current = 0;
            }
            _ => {
                state.counter_previous = 0;
                state.counter_current = 0;
            }
        }
        state.counter_window = window;
        let elapsed = t % window_ms;
        // estimate < limit, multiplied through by window_ms: all integers.
        let scaled = state.counter_previous * (window_ms - elapsed) + state.counter_current * window_ms;
        let allowed = scaled < limit * window_ms;
        if allowed {
            state.counter_current += 1;
        }
        allowed
    }

    fn bucket_allow(&mut self, key: String, cost: u32, now_ms: u64) -> bool {
        let slot = self.slot(key);
        let units = self.refill(slot, now_ms);
        let needed = u64::from(cost) * self.window_ms;
        if needed > units {
            return false;
        }
        self.keys[slot].bucket_units = units - needed;
        true
    }

    fn retry_after(&mut self, key: String, cost: u32, now_ms: u64) -> Option<u64> {
        let slot = self.slot(key);
        let units = self.refill(slot, now_ms);
        let cost = u64::from(cost);
        if cost > self.limit {
            return None;
        }
        // Short by `missing` units, earning `limit` units per millisecond;
        // the bucket's cap is no obstacle since `cost <= limit`.
        let missing = (cost * self.window_ms).saturating_sub(units);
        Some(missing.div_ceil(self.limit))
    }

    fn active_allow(&mut self, key: String, now_ms: u64) -> bool {
        let window_ms = self.window_ms;
        let now = self.recent.forget_idle(now_ms, window_ms);
        let held = match self.recent.logs.get_mut(&key) {
            Some(log) => {
                while log.front().is_some_and(|s| now - s >= window_ms) {
                    log.pop_front();
                }
                log.len as u64
            }
            None => 0,
        };
        if held >= self.limit {
            return false;
        }
        match self.recent.logs.get_mut(&key) {
            Some(log) => {
                let newest = log.slots[(log.head + log.len - 1) % log.slots.len()];
                self.recent.by_newest.remove(&(newest, key.clone()));
                log.push_back(now);
            }
            None => {
                let mut log = Ring::new();
                log.push_back(now);
                self.recent.logs.insert(key.clone(), log);
            }
        }
        self.recent.by_newest.insert((now, key));
        true
    }

    fn active_keys(&mut self, now_ms: u64) -> u64 {
        self.recent.forget_idle(now_ms, self.window_ms);
        self.recent.logs.len() as u64
    }

    fn leak_offer(&mut self, key: String, now_ms: u64) -> Option<u64> {
        let (limit, w) = (self.limit, self.window_ms);
        let s = self.stretches.entry(key).or_insert(Stretch { clock: 0, start: 0, len: 0 });
        let t = advance(&mut s.clock, now_ms);
        if s.waiting(t, w) >= limit {
            return None;
        }
        // The stretch is over once its next slot, start + len * w, is not
        // after t: this request starts a new one and leaves at t.
        if s.len == 0 || s.start + s.len * w <= t {
            s.start = t;
            s.len = 0;
        }
        let release = s.start + s.len * w;
        s.len += 1;
        Some(release)
    }

    fn leak_waiting(&mut self, key: String, now_ms: u64) -> u64 {
        let w = self.window_ms;
        let s = self.stretches.entry(key).or_insert(Stretch { clock: 0, start: 0, len: 0 });
        let t = advance(&mut s.clock, now_ms);
        s.waiting(t, w)
    }
}

impl Recent {
    /// Moves the clock to the effective time of `now_ms` and forgets every
    /// key whose newest time stopped counting; returns the effective time.
    fn forget_idle(&mut self, now_ms: u64, window_ms: u64) -> u64 {
        let now = advance(&mut self.clock, now_ms);
        while let Some((newest, _)) = self.by_newest.first() {
            if now - newest < window_ms {
                break;
            }
            let (_, key) = self.by_newest.pop_first().expect("first exists");
            self.logs.remove(&key);
        }
        now
    }
}

impl Limiter {
    /// The shard holding `key`, locked. A panic never happens while a
    /// shard is held, so a poisoned lock is taken as it is.
    fn shard(&self, key: &str) -> std::sync::MutexGuard<'_, HashMap<String, SharedKey>> {
        let i = (self.hasher.hash_one(key) as usize) % SHARDS;
        self.shards[i].lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl SharedRateLimiter for Limiter {
    fn shared_allow(&self, key: String, now_ms: u64) -> bool {
        let (limit, window_ms) = (self.limit, self.window_ms);
        let mut shard = self.shard(&key);
        let state = shard.entry(key).or_insert_with(|| SharedKey { clock: 0, log: Ring::new(), granted: 0 });
        let t = advance(&mut state.clock, now_ms);
        while state.log.front().is_some_and(|s| t - s >= window_ms) {
            state.log.pop_front();
        }
        if (state.log.len as u64) >= limit {
            return false;
        }
        state.log.push_back(t);
        state.granted += 1;
        true
    }

    fn granted(&self, key: String) -> u64 {
        self.shard(&key).get(&key).map_or(0, |state| state.granted)
    }
}

harness_contract::export!(rate_limiter, Limiter);
