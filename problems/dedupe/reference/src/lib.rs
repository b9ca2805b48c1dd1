//! Reference solution for `dedupe`.
//!
//! Gate 1: a membership set for O(1) lookups plus a FIFO queue of ids that
//! knows which id is oldest. Every removal goes through one function that
//! updates both, so the set can never outgrow the queue.
// @gate 2
//!
//! Gate 2: each queued id carries the time it was recorded at. Ids are
//! recorded at the clock and the clock never goes back, so the queue is
//! sorted by time as well as by arrival: expiry pops from the front just like
//! capacity eviction does.
// @end
// @gate 3
//!
//! Gate 3: a Bloom filter with FNV-1a and double hashing.
// @end
// @gate 4
//!
//! Gate 4: the filter as a negative cache in front of an exact store. The
//! filter may only save a store lookup; it never decides that a message is a
//! duplicate.
// @end
// @gate 5
//!
//! Gate 5: the shared guard is a set of claimed ids split into shards by a
//! hash of the id, each shard behind its own lock. A claim is one
//! `HashSet::insert` under the shard's lock: checking and recording are one
//! step, so two threads offering the same id cannot both claim it.
// @end
// @gate 6
//!
//! Gate 6: counters kept where ids are forgotten: capacity eviction and
//! expiry each have one loop, so each counter has one place to change.
// @end

use std::collections::hash_map::RandomState; // @gate 5
use std::collections::{HashSet, VecDeque};
use std::f64::consts::LN_2; // @gate 3
use std::hash::BuildHasher; // @gate 5
use std::sync::{Mutex, MutexGuard, PoisonError}; // @gate 5

use harness_contract::dedupe::Dedupe;
use harness_contract::dedupe::DedupeError; // @gate 2
use harness_contract::dedupe::SharedDedupe; // @gate 5
// @gate 5

/// Shards of the shared guard: ids are independent, so calls on ids of
/// different shards never wait for each other.
const SHARDS: usize = 16;
// @end
// @gate 3

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a, 64 bits: xor the byte in, then multiply.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h = FNV_OFFSET;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// A standard Bloom filter: `m` bits, `k` derived hash functions.
struct Bloom {
    words: Vec<u64>,
    m: u64,
    k: u32,
}

impl Bloom {
    /// m = ceil(-n ln p / (ln 2)^2), k = max(1, round(m / n * ln 2)).
    fn sized(expected_items: u64, error_rate: f64) -> Result<Bloom, DedupeError> {
        if expected_items == 0 {
            return Err(DedupeError::InvalidExpectedItems);
        }
        // Written so that NaN is refused too.
        if !(error_rate > 0.0 && error_rate < 1.0) {
            return Err(DedupeError::InvalidErrorRate);
        }
        let n = expected_items as f64;
        let m = (-n * error_rate.ln() / (LN_2 * LN_2)).ceil() as u64;
        let k = (m as f64 / n * LN_2).round().max(1.0) as u32;
        Ok(Bloom { words: vec![0; m.div_ceil(64) as usize], m, k })
    }

    /// Kirsch-Mitzenmacher double hashing: two halves of one FNV-1a digest
    /// stand in for k independent hashes. `h2` is forced odd so that it is
    /// never 0 (which would give k copies of one position) and is coprime to
    /// any power-of-two `m`. `h1 + i * h2` fits in a u64 for every `i < 2^32`.
    fn positions<'a>(&'a self, id: &str) -> impl Iterator<Item = u64> + 'a {
        let h = fnv1a64(id.as_bytes());
        let (h1, h2) = (h & 0xffff_ffff, (h >> 32) | 1);
        (0..u64::from(self.k)).map(move |i| (h1 + i * h2) % self.m)
    }

    fn bit(&self, pos: u64) -> bool {
        self.words[(pos / 64) as usize] & (1 << (pos % 64)) != 0
    }

    /// Sets every bit of `id`; true if at least one was 0.
    fn add(&mut self, id: &str) -> bool {
        let positions: Vec<u64> = self.positions(id).collect();
        let mut changed = false;
        for pos in positions {
            let word = &mut self.words[(pos / 64) as usize];
            let mask = 1 << (pos % 64);
            changed |= *word & mask == 0;
            *word |= mask;
        }
        changed
    }

    fn check(&self, id: &str) -> bool {
        self.positions(id).all(|pos| self.bit(pos))
    }

    fn ones(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// The chance that k positions of an unseen id all hit a set bit, from
    /// the actual fill rather than from a count of adds: it keeps working
    /// when the filter is overfilled or ids are added twice.
    fn fpr(&self) -> f64 {
        (self.ones() as f64 / self.m as f64).powi(self.k as i32)
    }
}
// @end

pub struct Guard {
    capacity: usize,
    // @gate 2
    /// Oldest first, with the time each id was recorded at; recorded times
    /// never decrease along the queue.
    order: VecDeque<(u64, String)>,
    // @else
    //~ /// Oldest first.
    //~ order: VecDeque<String>,
    // @end
    members: HashSet<String>,
    clock: u64,            // @gate 2
    window: Option<u64>,   // @gate 2
    filter: Option<Bloom>, // @gate 3
    // @gate 4
    /// The authoritative record of every id `is_duplicate` accepted.
    store: HashSet<String>,
    lookups: u64,
    false_positives: u64,
    // @end
    // @gate 5
    /// Gate 5: the claimed ids, by shard. One hasher for the life of the
    /// guard, so an id always lands in the same shard.
    hasher: RandomState,
    shards: Vec<Mutex<HashSet<String>>>,
    // @end
    // @gate 6
    /// Gate 6: ids forgotten for room, for age; seen calls and duplicates.
    evictions: u64,
    expirations: u64,
    calls: u64,
    duplicates: u64,
    // @end
}

impl Guard {
    /// Forgets the oldest id, from the queue and the set together.
    fn forget_oldest(&mut self) {
        // @gate 2
        if let Some((_, id)) = self.order.pop_front() {
            self.members.remove(&id);
        }
        // @else
        //~ if let Some(id) = self.order.pop_front() {
        //~     self.members.remove(&id);
        //~ }
        // @end
    }
    // @gate 5

    /// The shard holding `id`, locked. Nothing panics while a shard is
    /// held, so a poisoned lock is still consistent.
    fn shard(&self, id: &str) -> MutexGuard<'_, HashSet<String>> {
        let i = (self.hasher.hash_one(id) as usize) % SHARDS;
        self.shards[i].lock().unwrap_or_else(PoisonError::into_inner)
    }
    // @end
    // @gate 2

    /// Forgets every id whose age has reached the window.
    fn expire(&mut self) -> usize {
        let Some(window) = self.window else {
            return 0;
        };
        let mut forgotten = 0;
        // Age, not deadline: `recorded + window` can overflow a u64, and
        // `clock - recorded` cannot because nothing is recorded in the future.
        while let Some((recorded, _)) = self.order.front() {
            if self.clock - recorded < window {
                break;
            }
            self.forget_oldest();
            forgotten += 1;
        }
        // @gate 6
        self.expirations += forgotten as u64;
        // @end
        forgotten
    }
    // @end
    // @gate 3

    fn filter(&self) -> Result<&Bloom, DedupeError> {
        self.filter.as_ref().ok_or(DedupeError::NoFilter)
    }
    // @end
}

impl Dedupe for Guard {
    fn new(capacity: usize) -> Self {
        Guard {
            capacity,
            order: VecDeque::new(),
            members: HashSet::new(),
            clock: 0,     // @gate 2
            window: None, // @gate 2
            filter: None, // @gate 3
            // @gate 4
            store: HashSet::new(),
            lookups: 0,
            false_positives: 0,
            // @end
            // @gate 5
            hasher: RandomState::new(),
            shards: (0..SHARDS).map(|_| Mutex::new(HashSet::new())).collect(),
            // @end
            // @gate 6
            evictions: 0,
            expirations: 0,
            calls: 0,
            duplicates: 0,
            // @end
        }
    }

    fn seen(&mut self, id: String) -> bool {
        self.calls += 1; // @gate 6
        // Membership first: a duplicate changes nothing, not even the order,
        // and must not evict anyone on a full guard.
        if self.members.contains(&id) {
            self.duplicates += 1; // @gate 6
            return true;
        }
        if self.capacity == 0 {
            return false;
        }
        while self.order.len() >= self.capacity {
            self.forget_oldest();
            self.evictions += 1; // @gate 6
        }
        // @gate 2
        self.order.push_back((self.clock, id.clone()));
        // @else
        //~ self.order.push_back(id.clone());
        // @end
        self.members.insert(id);
        false
    }

    fn contains(&self, id: String) -> bool {
        self.members.contains(&id)
    }

    fn remembered(&self) -> usize {
        self.members.len()
    }
    // @gate 2

    fn set_window(&mut self, window_ms: u64) -> Result<usize, DedupeError> {
        if window_ms == 0 {
            return Err(DedupeError::InvalidWindow);
        }
        self.window = Some(window_ms);
        Ok(self.expire())
    }

    fn advance_to(&mut self, now_ms: u64) -> usize {
        // An earlier timestamp does not move the clock back: the queue's
        // time order, and every age computed from it, depends on that.
        self.clock = self.clock.max(now_ms);
        self.expire()
    }

    fn seen_at(&mut self, id: String, now_ms: u64) -> bool {
        self.advance_to(now_ms);
        self.seen(id)
    }
    // @end
    // @gate 3

    fn configure_filter(&mut self, expected_items: u64, error_rate: f64) -> Result<(u64, u32), DedupeError> {
        // @gate 4
        let mut bloom = Bloom::sized(expected_items, error_rate)?;
        // The filter must mirror the store: a stored id left out of the new
        // filter would be "definitely absent" and accepted a second time.
        for id in &self.store {
            bloom.add(id);
        }
        // @else
        //~ let bloom = Bloom::sized(expected_items, error_rate)?;
        // @end
        let dims = (bloom.m, bloom.k);
        self.filter = Some(bloom);
        Ok(dims)
    }

    fn filter_positions(&self, id: String) -> Result<Vec<u64>, DedupeError> {
        Ok(self.filter()?.positions(&id).collect())
    }

    fn filter_add(&mut self, id: String) -> Result<bool, DedupeError> {
        let bloom = self.filter.as_mut().ok_or(DedupeError::NoFilter)?;
        Ok(bloom.add(&id))
    }

    fn filter_check(&self, id: String) -> Result<bool, DedupeError> {
        Ok(self.filter()?.check(&id))
    }

    fn filter_bits_set(&self) -> Result<u64, DedupeError> {
        Ok(self.filter()?.ones())
    }

    fn filter_fpr(&self) -> Result<f64, DedupeError> {
        Ok(self.filter()?.fpr())
    }
    // @end
    // @gate 4

    fn is_duplicate(&mut self, id: String) -> Result<bool, DedupeError> {
        let bloom = self.filter.as_mut().ok_or(DedupeError::NoFilter)?;
        if bloom.check(&id) {
            // "Possibly present" is only a hint: the store decides.
            self.lookups += 1;
            if self.store.contains(&id) {
                return Ok(true);
            }
            self.false_positives += 1;
        }
        // "Definitely absent" is exact, so a new id costs no lookup.
        bloom.add(&id);
        self.store.insert(id);
        Ok(false)
    }

    fn store_lookups(&self) -> u64 {
        self.lookups
    }

    fn false_positives(&self) -> u64 {
        self.false_positives
    }
    // @end
    // @gate 6

    fn evictions(&self) -> u64 {
        self.evictions
    }

    fn expirations(&self) -> u64 {
        self.expirations
    }

    fn duplicates(&self) -> u64 {
        self.duplicates
    }

    fn hit_rate(&self) -> f64 {
        if self.calls == 0 {
            return 0.0;
        }
        // Divide as floats: u64 division would truncate every rate below 1 to 0.
        self.duplicates as f64 / self.calls as f64
    }
    // @end
}
// @gate 5

impl SharedDedupe for Guard {
    fn shared_seen(&self, id: String) -> bool {
        // Check and record in one step under the shard's lock: `insert`
        // says whether the id was already there.
        !self.shard(&id).insert(id)
    }

    fn shared_forget(&self, id: String) -> bool {
        self.shard(&id).remove(&id)
    }
}
// @end

harness_contract::export!(dedupe, Guard);
