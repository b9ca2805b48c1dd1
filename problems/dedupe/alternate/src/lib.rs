//! An alternate dedupe guard, written from the statements alone.
//!
//! Design:
//! - The bounded guard is a hand-rolled ring buffer of `(id, recorded_at)`
//!   slots, oldest at `head`, plus a `HashSet<Arc<str>>` for membership. The
//!   set and the ring share each id's bytes through the `Arc`, so an id is
//!   stored once. The ring grows geometrically only up to `capacity` and
//!   shrinks when it is mostly empty, so memory follows the remembered ids
//!   and never exceeds what `capacity` allows.
//! - Since ids are recorded at a clock that never goes back, the ring is in
//!   recording-time order too: expiry and capacity eviction both pop from
//!   the front.
//! - The Bloom filter keeps its bits in bytes and counts the set bits as it
//!   goes, so `filter_bits_set` and `filter_fpr` are O(1).
//! - The exact store of gate 4 is a `HashSet<String>` of its own.
//! - The shared guard of gate 5 is one `Mutex` around one set of claimed
//!   ids: every call holds the lock from its look to its change. (`Arc`,
//!   not `Rc`, above: the whole type must be `Send + Sync`.)
//! - Gate 6: every forgetting goes through `forget_oldest`, told why, and
//!   the reason picks the counter.

use std::collections::HashSet;
use std::f64::consts::LN_2;
use std::sync::{Arc, Mutex};

use harness_contract::dedupe::{Dedupe, DedupeError, SharedDedupe};

/// Why an id is forgotten, for the counters of gate 6.
#[derive(Clone, Copy)]
enum Why {
    Room,
    Age,
}

/// One remembered id and the clock at which it was recorded.
struct Slot {
    id: Arc<str>,
    recorded_at: u64,
}

/// A FIFO ring of slots. `slots.len()` is the ring's current size; the live
/// slots are the `len` ones starting at `head`, wrapping around.
#[derive(Default)]
struct Ring {
    slots: Vec<Option<Slot>>,
    head: usize,
    len: usize,
}

impl Ring {
    const MIN_SIZE: usize = 4;

    fn front(&self) -> Option<&Slot> {
        if self.len == 0 { None } else { self.slots[self.head].as_ref() }
    }

    fn pop_front(&mut self) -> Option<Slot> {
        if self.len == 0 {
            return None;
        }
        let slot = self.slots[self.head].take();
        self.head = (self.head + 1) % self.slots.len();
        self.len -= 1;
        slot
    }

    /// Appends a slot; the caller guarantees `len < limit`.
    fn push_back(&mut self, slot: Slot, limit: usize) {
        if self.len == self.slots.len() {
            let target = (self.len.saturating_mul(2)).max(Self::MIN_SIZE).min(limit);
            self.resize(target);
        }
        let size = self.slots.len();
        let at = (self.head + self.len) % size;
        self.slots[at] = Some(slot);
        self.len += 1;
    }

    /// Gives memory back once the ring is at most a quarter full.
    fn shrink_if_sparse(&mut self) {
        let size = self.slots.len();
        if size > Self::MIN_SIZE && self.len <= size / 4 {
            self.resize((self.len * 2).max(Self::MIN_SIZE));
        }
    }

    /// Lays the live slots out again from index 0 in a ring of `size`.
    fn resize(&mut self, size: usize) {
        debug_assert!(size >= self.len);
        let mut fresh: Vec<Option<Slot>> = Vec::with_capacity(size);
        let old_size = self.slots.len();
        for offset in 0..self.len {
            fresh.push(self.slots[(self.head + offset) % old_size].take());
        }
        fresh.resize_with(size, || None);
        self.slots = fresh;
        self.head = 0;
    }
}

/// A Bloom filter with a fully specified layout.
struct Bloom {
    m: u64,
    k: u32,
    bytes: Vec<u8>,
    ones: u64,
}

impl Bloom {
    fn sized(expected_items: u64, error_rate: f64) -> Result<Self, DedupeError> {
        if expected_items == 0 {
            return Err(DedupeError::InvalidExpectedItems);
        }
        if !(error_rate > 0.0 && error_rate < 1.0) {
            return Err(DedupeError::InvalidErrorRate);
        }
        let n = expected_items as f64;
        let m = (-n * error_rate.ln() / (LN_2 * LN_2)).ceil();
        let k = (m / n * LN_2).round().max(1.0);
        let m = m as u64;
        let byte_len = usize::try_from(m.div_ceil(8)).expect("filter fits in memory");
        Ok(Bloom { m, k: k as u32, bytes: vec![0; byte_len], ones: 0 })
    }

    fn fnv1a(id: &str) -> u64 {
        id.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
    }

    fn positions(&self, id: &str) -> impl Iterator<Item = u64> + use<> {
        let h = Self::fnv1a(id);
        let (h1, h2, m) = (h & 0xffff_ffff, (h >> 32) | 1, self.m);
        (0..u64::from(self.k)).map(move |i| (h1 + i * h2) % m)
    }

    fn bit(&self, p: u64) -> bool {
        self.bytes[(p / 8) as usize] & (1 << (p % 8)) != 0
    }

    /// Sets the bits of `id`; true if one of them was 0.
    fn add(&mut self, id: &str) -> bool {
        let mut fresh = false;
        for p in self.positions(id) {
            let byte = &mut self.bytes[(p / 8) as usize];
            let mask = 1u8 << (p % 8);
            if *byte & mask == 0 {
                *byte |= mask;
                self.ones += 1;
                fresh = true;
            }
        }
        fresh
    }

    fn check(&self, id: &str) -> bool {
        self.positions(id).all(|p| self.bit(p))
    }

    fn fpr(&self) -> f64 {
        if self.ones == 0 {
            return 0.0;
        }
        (self.ones as f64 / self.m as f64).powi(self.k as i32)
    }
}

pub struct Guard {
    capacity: usize,
    members: HashSet<Arc<str>>,
    order: Ring,
    clock: u64,
    window: Option<u64>,
    filter: Option<Bloom>,
    store: HashSet<String>,
    store_lookups: u64,
    false_positives: u64,
    claimed: Mutex<HashSet<String>>,
    room: u64,
    age: u64,
    lookups: u64,
    hits: u64,
}

impl Guard {
    fn forget_oldest(&mut self, why: Why) {
        if let Some(slot) = self.order.pop_front() {
            self.members.remove(&*slot.id);
            match why {
                Why::Room => self.room += 1,
                Why::Age => self.age += 1,
            }
        }
    }

    /// Forgets every id whose age has reached the window; returns how many.
    fn expire(&mut self) -> usize {
        let Some(window) = self.window else { return 0 };
        let mut forgotten = 0;
        while let Some(front) = self.order.front() {
            if self.clock - front.recorded_at < window {
                break;
            }
            self.forget_oldest(Why::Age);
            forgotten += 1;
        }
        if forgotten > 0 {
            self.order.shrink_if_sparse();
        }
        forgotten
    }

    fn filter(&self) -> Result<&Bloom, DedupeError> {
        self.filter.as_ref().ok_or(DedupeError::NoFilter)
    }

    fn filter_mut(&mut self) -> Result<&mut Bloom, DedupeError> {
        self.filter.as_mut().ok_or(DedupeError::NoFilter)
    }
}

impl Dedupe for Guard {
    fn new(capacity: usize) -> Self {
        Guard {
            capacity,
            members: HashSet::new(),
            order: Ring::default(),
            clock: 0,
            window: None,
            filter: None,
            store: HashSet::new(),
            store_lookups: 0,
            false_positives: 0,
            claimed: Mutex::new(HashSet::new()),
            room: 0,
            age: 0,
            lookups: 0,
            hits: 0,
        }
    }

    fn seen(&mut self, id: String) -> bool {
        self.lookups += 1;
        if self.members.contains(id.as_str()) {
            self.hits += 1;
            return true;
        }
        if self.capacity == 0 {
            return false;
        }
        if self.order.len == self.capacity {
            self.forget_oldest(Why::Room);
        }
        let id: Arc<str> = Arc::from(id);
        self.members.insert(Arc::clone(&id));
        self.order.push_back(Slot { id, recorded_at: self.clock }, self.capacity);
        false
    }

    fn contains(&self, id: String) -> bool {
        self.members.contains(id.as_str())
    }

    fn remembered(&self) -> usize {
        self.order.len
    }

    fn set_window(&mut self, window_ms: u64) -> Result<usize, DedupeError> {
        if window_ms == 0 {
            return Err(DedupeError::InvalidWindow);
        }
        self.window = Some(window_ms);
        Ok(self.expire())
    }

    fn advance_to(&mut self, now_ms: u64) -> usize {
        self.clock = self.clock.max(now_ms);
        self.expire()
    }

    fn seen_at(&mut self, id: String, now_ms: u64) -> bool {
        self.advance_to(now_ms);
        self.seen(id)
    }

    fn configure_filter(&mut self, expected_items: u64, error_rate: f64) -> Result<(u64, u32), DedupeError> {
        let mut bloom = Bloom::sized(expected_items, error_rate)?;
        for id in &self.store {
            bloom.add(id);
        }
        let shape = (bloom.m, bloom.k);
        self.filter = Some(bloom);
        Ok(shape)
    }

    fn filter_positions(&self, id: String) -> Result<Vec<u64>, DedupeError> {
        Ok(self.filter()?.positions(&id).collect())
    }

    fn filter_add(&mut self, id: String) -> Result<bool, DedupeError> {
        Ok(self.filter_mut()?.add(&id))
    }

    fn filter_check(&self, id: String) -> Result<bool, DedupeError> {
        Ok(self.filter()?.check(&id))
    }

    fn filter_bits_set(&self) -> Result<u64, DedupeError> {
        Ok(self.filter()?.ones)
    }

    fn filter_fpr(&self) -> Result<f64, DedupeError> {
        Ok(self.filter()?.fpr())
    }

    fn is_duplicate(&mut self, id: String) -> Result<bool, DedupeError> {
        let filter = self.filter.as_mut().ok_or(DedupeError::NoFilter)?;
        if filter.check(&id) {
            self.store_lookups += 1;
            if self.store.contains(&id) {
                return Ok(true);
            }
            self.false_positives += 1;
        }
        filter.add(&id);
        self.store.insert(id);
        Ok(false)
    }

    fn store_lookups(&self) -> u64 {
        self.store_lookups
    }

    fn false_positives(&self) -> u64 {
        self.false_positives
    }

    fn evictions(&self) -> u64 {
        self.room
    }

    fn expirations(&self) -> u64 {
        self.age
    }

    fn duplicates(&self) -> u64 {
        self.hits
    }

    fn hit_rate(&self) -> f64 {
        match self.lookups {
            0 => 0.0,
            n => self.hits as f64 / n as f64,
        }
    }
}

impl SharedDedupe for Guard {
    fn shared_seen(&self, id: String) -> bool {
        let mut claimed = self.claimed.lock().unwrap_or_else(|p| p.into_inner());
        if claimed.contains(&id) {
            return true;
        }
        claimed.insert(id);
        false
    }

    fn shared_forget(&self, id: String) -> bool {
        self.claimed.lock().unwrap_or_else(|p| p.into_inner()).remove(&id)
    }
}

harness_contract::export!(dedupe, Guard);
