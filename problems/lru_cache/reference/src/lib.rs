//! Reference solution for `lru_cache`.
//!
//! The classic pair: a hash map from key to list node for O(1) lookup, and a
//! doubly linked list in recency order for O(1) "who is oldest" and O(1)
//! promotion. The list is intrusive: its nodes *are* the entries, so a hit
//! is one hash lookup, one unlink and one push to the front.
//!
//! Nodes live in an arena (`Vec<Node>`) and link by index, which keeps the
//! borrow checker out of the way without `unsafe` or `Rc<RefCell<_>>`.
//! Slots 0 and 1 are sentinels (the list's head and tail): every real node
//! always has a neighbour on both sides, so unlinking and pushing have no
//! special cases for an empty list, the first node or the last one.
// @gate 6
//!
//! Negative entries (the backend has no value for the key) are ordinary
//! nodes of the same list with a flag, so they take places, expire and are
//! evicted like the others. They are also threaded on a second list of their
//! own (`nprev`/`nnext`, sentinels 2 and 3), in recency order among
//! negatives only, so the coldest negative entry is found in O(1) however
//! many positive entries are colder than it.
// @end
// @gate 5
//!
//! Loads in flight (single-flight) live beside the entries, in a map from
//! key to its waiters and whether a write made its answer stale; a settled
//! load is removed, so the map holds only what is in flight.
// @end
// @gate 7
//!
//! Shared between threads (the concurrent gate): the exported type is that
//! single-threaded cache behind one `Mutex`, locked for the whole of every
//! call. Even a `get` writes (it moves its entry in the recency order), so
//! there is no read-only path an `RwLock` could let run in parallel, and
//! eviction couples every key to every other: one lock, one order.
// @end

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError}; // @gate 7

use harness_contract::lru_cache::CacheError; // @gate 3,5
use harness_contract::lru_cache::LruCache;
use harness_contract::lru_cache::SharedLruCache; // @gate 7

/// Sentinel before the most recently used entry.
const HEAD: usize = 0;
/// Sentinel after the least recently used entry.
const TAIL: usize = 1;
// @gate 6
/// Sentinel before the most recently used negative entry.
const NHEAD: usize = 2;
/// Sentinel after the least recently used negative entry.
const NTAIL: usize = 3;
// @end

struct Node {
    key: String,
    value: i64,
    cost: u64, // @gate 3
    // @gate 2
    /// The first time at which the entry counts as expired; `None`: never.
    deadline: Option<u64>,
    // @end
    prev: usize,
    next: usize,
    // @gate 6
    /// The backend has no value for the key; `value` means nothing.
    negative: bool,
    /// Links in the list of negative entries (only while `negative`).
    nprev: usize,
    nnext: usize,
    // @end
}

impl Node {
    fn new(
        key: String,
        value: i64,
        cost: u64, // @gate 3
        deadline: Option<u64>, // @gate 2
    ) -> Node {
        Node {
            key,
            value,
            cost, // @gate 3
            deadline, // @gate 2
            prev: HEAD,
            next: TAIL,
            negative: false, // @gate 6
            nprev: NHEAD, // @gate 6
            nnext: NTAIL, // @gate 6
        }
    }

    fn sentinel() -> Node {
        Node::new(
            String::new(),
            0,
            0, // @gate 3
            None, // @gate 2
        )
    }
}

// @gate 5
/// A load in flight: the callers waiting on it (the one that started it
/// included), and whether the key was written since it started.
struct Load {
    waiters: u64,
    stale: bool,
}
// @end

pub struct Cache {
    nodes: Vec<Node>,
    /// Arena slots of dropped entries, reused before the arena grows.
    free: Vec<usize>,
    index: HashMap<String, usize>,
    capacity: u64,
    used: u64, // @gate 3
    now: u64, // @gate 2
    // @gate 4
    hits: u64,
    misses: u64,
    evictions: u64,
    expirations: u64,
    // @end
    // @gate 5
    loads: HashMap<String, Load>,
    backend_calls: u64,
    // @end
    // @gate 6
    /// Negative entries held, and the most that may be held.
    negatives: usize,
    negative_limit: usize,
    // @end
}

impl Cache {
    fn unlink(&mut self, i: usize) {
        let (prev, next) = (self.nodes[i].prev, self.nodes[i].next);
        self.nodes[prev].next = next;
        self.nodes[next].prev = prev;
    }

    fn push_front(&mut self, i: usize) {
        let first = self.nodes[HEAD].next;
        self.nodes[i].prev = HEAD;
        self.nodes[i].next = first;
        self.nodes[HEAD].next = i;
        self.nodes[first].prev = i;
    }
    // @gate 6

    fn neg_unlink(&mut self, i: usize) {
        let (prev, next) = (self.nodes[i].nprev, self.nodes[i].nnext);
        self.nodes[prev].nnext = next;
        self.nodes[next].nprev = prev;
    }

    fn neg_push_front(&mut self, i: usize) {
        let first = self.nodes[NHEAD].nnext;
        self.nodes[i].nprev = NHEAD;
        self.nodes[i].nnext = first;
        self.nodes[NHEAD].nnext = i;
        self.nodes[first].nprev = i;
    }
    // @end

    // @gate 6
    /// Marks entry `i` as the most recently used (among negative entries
    /// too, if it is one).
    // @else
    //~ /// Marks entry `i` as the most recently used.
    // @end
    fn touch(&mut self, i: usize) {
        self.unlink(i);
        self.push_front(i);
        // @gate 6
        if self.nodes[i].negative {
            self.neg_unlink(i);
            self.neg_push_front(i);
        }
        // @end
    }
    // @gate 2

    fn is_expired(&self, i: usize) -> bool {
        self.nodes[i].deadline.is_some_and(|d| self.now >= d)
    }
    // @end

    /// Unlinks entry `i` and forgets it; returns its key and value.
    fn drop_entry(&mut self, i: usize) -> (String, i64) {
        self.unlink(i);
        // @gate 6
        if self.nodes[i].negative {
            self.neg_unlink(i);
            self.negatives -= 1;
        }
        // @end
        let node = &mut self.nodes[i];
        let key = std::mem::take(&mut node.key);
        // @gate 3
        let (value, cost) = (node.value, node.cost);
        // @else
        //~ let value = node.value;
        // @end
        self.index.remove(&key);
        self.used -= cost; // @gate 3
        self.free.push(i);
        (key, value)
    }

    fn alloc(&mut self, node: Node) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.nodes[i] = node;
                i
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        }
    }
    // @gate 2

    /// The slot of `key` if it holds a live entry. An expired entry is
    /// removed on the spot (lazy expiry): nobody ever sees a stale value.
    fn live(&mut self, key: &str) -> Option<usize> {
        let i = *self.index.get(key)?;
        if self.is_expired(i) {
            self.drop_entry(i);
            self.expirations += 1; // @gate 4
            return None;
        }
        Some(i)
    }
    // @end

    // @gate 3
    /// Inserts or replaces `key` as the most recently used entry, then
    /// evicts from the cold end until the budget holds. The caller has
    /// checked that `cost <= capacity`, so the new entry is never a victim.
    // @else
    //~ /// Inserts or replaces `key` as the most recently used entry, then
    //~ /// evicts the least recently used entry if the cache is over capacity.
    // @end
    fn insert(
        &mut self,
        key: String,
        value: i64,
        cost: u64, // @gate 3
        deadline: Option<u64>, // @gate 2
    ) -> Vec<String> {
        // @gate 5
        // Every stored entry is a write, which a load in flight must not
        // overwrite with the older answer it is reading.
        self.invalidate_load(&key);
        // @end
        // @gate 3
        // The old entry goes first, so its cost is not counted twice.
        // @else
        //~ // The old entry goes first, so replacing a key evicts nothing.
        // @end
        // It is replaced, not expired or evicted, whatever its deadline was. // @gate 2
        if let Some(&old) = self.index.get(&key) {
            self.drop_entry(old);
        }
        let i = self.alloc(Node::new(
            key.clone(),
            value,
            cost, // @gate 3
            deadline, // @gate 2
        ));
        self.index.insert(key, i);
        self.push_front(i);
        // @gate 3
        self.used += cost;
        // Until within budget, not once: one large entry may need several
        // victims.
        // @end
        // Expired or not, the least recently used entry goes. // @gate 2
        let mut evicted = Vec::new();
        // @gate 3
        while self.used > self.capacity {
        // @else
        //~ if self.index.len() as u64 > self.capacity {
        // @end
            let victim = self.nodes[TAIL].prev;
            evicted.push(self.drop_entry(victim).0);
            self.evictions += 1; // @gate 4
        }
        evicted
    }
    // @gate 2

    fn deadline(&self, ttl_ms: u64) -> u64 {
        self.now.saturating_add(ttl_ms)
    }
    // @end
    // @gate 5

    /// A write of `key` while its load is in flight: the load read the
    /// backend before this write, so its answer may be older than it.
    fn invalidate_load(&mut self, key: &str) {
        if let Some(load) = self.loads.get_mut(key) {
            load.stale = true;
        }
    }

    /// Ends the load of `key`, which is then no longer in flight.
    fn settle(&mut self, key: &str) -> Result<Load, CacheError> {
        self.loads.remove(key).ok_or(CacheError::NoLoad)
    }
    // @end
    // @gate 6

    /// Evicts the least recently used negative entry; returns its key.
    fn evict_coldest_negative(&mut self) -> String {
        let victim = self.nodes[NTAIL].nprev;
        self.evictions += 1; // @gate 4
        self.drop_entry(victim).0
    }

    /// Stores a negative entry for `key` as the most recently used entry.
    /// At the limit the coldest negative entry makes room, so a flood of
    /// missing keys cannot push out the entries that have values.
    fn store_negative(&mut self, key: String, deadline: u64) {
        if self.negative_limit == 0 {
            return;
        }
        if self.negatives >= self.negative_limit {
            self.evict_coldest_negative();
        }
        self.insert(
            key.clone(),
            0,
            1, // @gate 3
            Some(deadline),
        );
        let i = self.index[&key];
        self.nodes[i].negative = true;
        self.neg_push_front(i);
        self.negatives += 1;
    }
    // @end
}

impl LruCache for Cache {
    fn new(capacity: usize) -> Self {
        Cache {
            // @gate 6
            nodes: vec![Node::sentinel(), Node::sentinel(), Node::sentinel(), Node::sentinel()],
            // @else
            //~ nodes: vec![Node::sentinel(), Node::sentinel()],
            // @end
            free: Vec::new(),
            index: HashMap::new(),
            capacity: capacity as u64,
            used: 0, // @gate 3
            now: 0, // @gate 2
            // @gate 4
            hits: 0,
            misses: 0,
            evictions: 0,
            expirations: 0,
            // @end
            // @gate 5
            loads: HashMap::new(),
            backend_calls: 0,
            // @end
            // @gate 6
            negatives: 0,
            negative_limit: usize::MAX,
            // @end
        }
    }

    fn put(&mut self, key: String, value: i64) -> Option<String> {
        // @gate 3
        // Every cost is at least 1, so freeing room for a cost-1 entry takes
        // at most one victim.
        // @end
        self.insert(
            key,
            value,
            1, // @gate 3
            None, // @gate 2
        )
        .pop()
    }

    fn get(&mut self, key: String) -> Option<i64> {
        // @gate 2
        match self.live(&key) {
        // @else
        //~ match self.index.get(&key).copied() {
        // @end
            // @gate 6
            // A negative entry has no value: a miss, and not a use.
            Some(i) if !self.nodes[i].negative => {
            // @else
            //~ Some(i) => {
            // @end
                self.touch(i);
                self.hits += 1; // @gate 4
                Some(self.nodes[i].value)
            }
            // @gate 4
            _ => {
                self.misses += 1;
                None
            }
            // @else
            //~ _ => None,
            // @end
        }
    }

    fn remove(&mut self, key: String) -> Option<i64> {
        // @gate 5
        // An invalidation reaches a load in flight even when the key is not
        // held: that is the moment the load's answer became old.
        self.invalidate_load(&key);
        // @end
        // @gate 2
        let i = self.live(&key)?;
        // @else
        //~ let i = *self.index.get(&key)?;
        // @end
        // @gate 6
        if self.nodes[i].negative {
            self.drop_entry(i);
            return None;
        }
        // @end
        Some(self.drop_entry(i).1)
    }

    fn len(&self) -> usize {
        self.index.len()
    }

    fn keys(&self) -> Vec<String> {
        let mut keys = Vec::with_capacity(self.index.len());
        let mut i = self.nodes[HEAD].next;
        while i != TAIL {
            keys.push(self.nodes[i].key.clone());
            i = self.nodes[i].next;
        }
        keys
    }
    // @gate 2

    fn advance(&mut self, ms: u64) -> u64 {
        // Only moves the clock: expired entries stay until something looks.
        self.now = self.now.saturating_add(ms);
        self.now
    }

    fn put_ttl(&mut self, key: String, value: i64, ttl_ms: u64) -> Option<String> {
        let deadline = self.deadline(ttl_ms);
        self.insert(
            key,
            value,
            1, // @gate 3
            Some(deadline),
        )
        .pop()
    }

    fn sweep(&mut self, max_checks: usize) -> usize {
        // Bounded work from the cold end, where entries nobody reads pile
        // up. Every examined entry counts toward the bound, expired or not.
        let mut removed = 0;
        let mut i = self.nodes[TAIL].prev;
        for _ in 0..max_checks {
            if i == HEAD {
                break;
            }
            let warmer = self.nodes[i].prev;
            if self.is_expired(i) {
                self.drop_entry(i);
                self.expirations += 1; // @gate 4
                removed += 1;
            }
            i = warmer;
        }
        removed
    }
    // @end
    // @gate 3

    fn put_sized(
        &mut self,
        key: String,
        value: i64,
        cost: u64,
        ttl_ms: Option<u64>,
    ) -> Result<Vec<String>, CacheError> {
        // Reject before touching anything: admitting it would flush the
        // whole cache for one entry, and a refused put must change nothing.
        if cost > self.capacity {
            return Err(CacheError::TooLarge);
        }
        let deadline = ttl_ms.map(|ttl| self.deadline(ttl));
        Ok(self.insert(key, value, cost, deadline))
    }

    fn used(&self) -> u64 {
        self.used
    }
    // @end
    // @gate 4

    fn stats(&self) -> (u64, u64, u64, u64) {
        (self.hits, self.misses, self.evictions, self.expirations)
    }

    fn hit_rate(&self) -> f64 {
        let reads = self.hits + self.misses;
        if reads == 0 { 0.0 } else { self.hits as f64 / reads as f64 }
    }
    // @end
    // @gate 5

    fn fetch(&mut self, key: String) -> Result<i64, CacheError> {
        if let Some(i) = self.live(&key) {
            // @gate 6
            // A hit, with a value or a negative one, is a use; no load.
            self.touch(i);
            return if self.nodes[i].negative { Err(CacheError::NotFound) } else { Ok(self.nodes[i].value) };
            // @else
            //~ // A hit is a use; no load.
            //~ self.touch(i);
            //~ return Ok(self.nodes[i].value);
            // @end
        }
        // Single flight: one load per key, every other miss waits on it.
        if let Some(load) = self.loads.get_mut(&key) {
            load.waiters += 1;
            return Err(CacheError::Loading);
        }
        self.loads.insert(key, Load { waiters: 1, stale: false });
        self.backend_calls += 1;
        Err(CacheError::MustLoad)
    }

    fn load_done(&mut self, key: String, value: i64, ttl_ms: Option<u64>) -> Result<u64, CacheError> {
        let load = self.settle(&key)?;
        // A stale answer still reaches its waiters, but it must not
        // overwrite what was written while it was being read.
        if !load.stale {
            let deadline = ttl_ms.map(|t| self.deadline(t));
            self.insert(
                key,
                value,
                1, // @gate 3
                deadline,
            );
        }
        Ok(load.waiters)
    }

    fn load_failed(&mut self, key: String) -> Result<u64, CacheError> {
        Ok(self.settle(&key)?.waiters)
    }

    fn backend_calls(&self) -> u64 {
        self.backend_calls
    }
    // @end
    // @gate 6

    fn load_missing(&mut self, key: String, ttl_ms: u64) -> Result<u64, CacheError> {
        let load = self.settle(&key)?;
        if !load.stale {
            self.store_negative(key, self.deadline(ttl_ms));
        }
        Ok(load.waiters)
    }

    fn set_negative_limit(&mut self, limit: usize) -> Vec<String> {
        self.negative_limit = limit;
        let mut evicted = Vec::new();
        while self.negatives > limit {
            evicted.push(self.evict_coldest_negative());
        }
        evicted
    }
    // @end
}

// @gate 7
/// The cache as the harness sees it: [`Cache`] behind one lock. The
/// `&mut self` methods need no locking (`get_mut`: nobody else can hold
/// it); the `&self` ones lock for the whole call, so each call takes effect
/// at one instant while it holds the lock.
pub struct Shared {
    cache: Mutex<Cache>,
}

impl Shared {
    fn cache(&mut self) -> &mut Cache {
        self.cache.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    /// The lock; a panic in another call (which would poison it) left the
    /// cache consistent, since no call panics half way through a change.
    fn lock(&self) -> MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl LruCache for Shared {
    fn new(capacity: usize) -> Self {
        Shared { cache: Mutex::new(<Cache as LruCache>::new(capacity)) }
    }
    fn put(&mut self, k: String, v: i64) -> Option<String> {
        self.cache().put(k, v)
    }
    fn get(&mut self, k: String) -> Option<i64> {
        self.cache().get(k)
    }
    fn remove(&mut self, k: String) -> Option<i64> {
        self.cache().remove(k)
    }
    fn len(&self) -> usize {
        self.lock().len()
    }
    fn keys(&self) -> Vec<String> {
        self.lock().keys()
    }
    // @gate 2
    fn advance(&mut self, ms: u64) -> u64 {
        self.cache().advance(ms)
    }
    fn put_ttl(&mut self, k: String, v: i64, ttl: u64) -> Option<String> {
        self.cache().put_ttl(k, v, ttl)
    }
    fn sweep(&mut self, max: usize) -> usize {
        self.cache().sweep(max)
    }
    // @end
    // @gate 3
    fn put_sized(&mut self, k: String, v: i64, cost: u64, ttl: Option<u64>) -> Result<Vec<String>, CacheError> {
        self.cache().put_sized(k, v, cost, ttl)
    }
    fn used(&self) -> u64 {
        self.lock().used()
    }
    // @end
    // @gate 4
    fn stats(&self) -> (u64, u64, u64, u64) {
        self.lock().stats()
    }
    fn hit_rate(&self) -> f64 {
        self.lock().hit_rate()
    }
    // @end
    // @gate 5
    fn fetch(&mut self, k: String) -> Result<i64, CacheError> {
        self.cache().fetch(k)
    }
    fn load_done(&mut self, k: String, v: i64, ttl: Option<u64>) -> Result<u64, CacheError> {
        self.cache().load_done(k, v, ttl)
    }
    fn load_failed(&mut self, k: String) -> Result<u64, CacheError> {
        self.cache().load_failed(k)
    }
    fn backend_calls(&self) -> u64 {
        self.lock().backend_calls()
    }
    // @end
    // @gate 6
    fn load_missing(&mut self, k: String, ttl: u64) -> Result<u64, CacheError> {
        self.cache().load_missing(k, ttl)
    }
    fn set_negative_limit(&mut self, limit: usize) -> Vec<String> {
        self.cache().set_negative_limit(limit)
    }
    // @end
}

impl SharedLruCache for Shared {
    fn shared_put(&self, key: String, value: i64) -> Option<String> {
        // The whole put (is the key held, is the cache full, which entry is
        // coldest, unlink it, insert) under one guard: between deciding on
        // a victim and evicting it, no other call may use or evict it.
        let mut cache = self.lock();
        cache.put(key, value)
    }

    fn shared_get(&self, key: String) -> Option<i64> {
        // A hit moves the entry to the front: a write, under the same lock.
        let mut cache = self.lock();
        cache.get(key)
    }

    fn shared_remove(&self, key: String) -> Option<i64> {
        let mut cache = self.lock();
        cache.remove(key)
    }

    fn shared_len(&self) -> usize {
        // The count lives in the same state as the entries, read under the
        // same lock: it can never disagree with what a get just saw.
        let cache = self.lock();
        cache.len()
    }
}

harness_contract::export!(lru_cache, Shared);
// @else
//~ harness_contract::export!(lru_cache, Cache);
// @end
