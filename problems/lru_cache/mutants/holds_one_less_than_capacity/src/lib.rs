//! MUTANT `holds_one_less_than_capacity` (a deliberately wrong solution) of the reference solution for `lru_cache`.
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

use std::collections::HashMap;

use harness_contract::lru_cache::{CacheError, LruCache};

/// Sentinel before the most recently used entry.
const HEAD: usize = 0;
/// Sentinel after the least recently used entry.
const TAIL: usize = 1;

struct Node {
    key: String,
    value: i64,
    cost: u64,
    /// The first time at which the entry counts as expired; `None`: never.
    deadline: Option<u64>,
    prev: usize,
    next: usize,
}

impl Node {
    fn sentinel() -> Node {
        Node { key: String::new(), value: 0, cost: 0, deadline: None, prev: HEAD, next: TAIL }
    }
}

pub struct Cache {
    nodes: Vec<Node>,
    /// Arena slots of dropped entries, reused before the arena grows.
    free: Vec<usize>,
    index: HashMap<String, usize>,
    capacity: u64,
    used: u64,
    now: u64,
    hits: u64,
    misses: u64,
    evictions: u64,
    expirations: u64,
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

    /// Marks entry `i` as the most recently used.
    fn touch(&mut self, i: usize) {
        self.unlink(i);
        self.push_front(i);
    }

    fn is_expired(&self, i: usize) -> bool {
        self.nodes[i].deadline.is_some_and(|d| self.now >= d)
    }

    /// Unlinks entry `i` and forgets it; returns its key and value.
    fn drop_entry(&mut self, i: usize) -> (String, i64) {
        self.unlink(i);
        let node = &mut self.nodes[i];
        let key = std::mem::take(&mut node.key);
        let (value, cost) = (node.value, node.cost);
        self.index.remove(&key);
        self.used -= cost;
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

    /// The slot of `key` if it holds a live entry. An expired entry is
    /// removed on the spot (lazy expiry): nobody ever sees a stale value.
    fn live(&mut self, key: &str) -> Option<usize> {
        let i = *self.index.get(key)?;
        if self.is_expired(i) {
            self.drop_entry(i);
            self.expirations += 1;
            return None;
        }
        Some(i)
    }

    /// Inserts or replaces `key` as the most recently used entry, then
    /// evicts from the cold end until the budget holds. The caller has
    /// checked that `cost <= capacity`, so the new entry is never a victim.
    fn insert(&mut self, key: String, value: i64, cost: u64, deadline: Option<u64>) -> Vec<String> {
        // The old entry goes first, so its cost is not counted twice. It is
        // replaced, not expired or evicted, whatever its deadline was.
        if let Some(&old) = self.index.get(&key) {
            self.drop_entry(old);
        }
        let i = self.alloc(Node { key: key.clone(), value, cost, deadline, prev: HEAD, next: TAIL });
        self.index.insert(key, i);
        self.push_front(i);
        self.used += cost;
        // Until within budget, not once: one large entry may need several
        // victims. Expired or not, the least recently used entry goes.
        let mut evicted = Vec::new();
        // MUTANT: evicts until strictly under the capacity.
        while self.used >= self.capacity && self.nodes[TAIL].prev != HEAD {
            let victim = self.nodes[TAIL].prev;
            evicted.push(self.drop_entry(victim).0);
            self.evictions += 1;
        }
        evicted
    }

    fn deadline(&self, ttl_ms: u64) -> u64 {
        self.now.saturating_add(ttl_ms)
    }
}

impl LruCache for Cache {
    fn new(capacity: usize) -> Self {
        Cache {
            nodes: vec![Node::sentinel(), Node::sentinel()],
            free: Vec::new(),
            index: HashMap::new(),
            capacity: capacity as u64,
            used: 0,
            now: 0,
            hits: 0,
            misses: 0,
            evictions: 0,
            expirations: 0,
        }
    }

    fn put(&mut self, key: String, value: i64) -> Option<String> {
        // Every cost is at least 1, so freeing room for a cost-1 entry takes
        // at most one victim.
        self.insert(key, value, 1, None).pop()
    }

    fn get(&mut self, key: String) -> Option<i64> {
        match self.live(&key) {
            Some(i) => {
                self.touch(i);
                self.hits += 1;
                Some(self.nodes[i].value)
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    fn remove(&mut self, key: String) -> Option<i64> {
        let i = self.live(&key)?;
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

    fn advance(&mut self, ms: u64) -> u64 {
        // Only moves the clock: expired entries stay until something looks.
        self.now = self.now.saturating_add(ms);
        self.now
    }

    fn put_ttl(&mut self, key: String, value: i64, ttl_ms: u64) -> Option<String> {
        let deadline = self.deadline(ttl_ms);
        self.insert(key, value, 1, Some(deadline)).pop()
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
                self.expirations += 1;
                removed += 1;
            }
            i = warmer;
        }
        removed
    }

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

    fn stats(&self) -> (u64, u64, u64, u64) {
        (self.hits, self.misses, self.evictions, self.expirations)
    }

    fn hit_rate(&self) -> f64 {
        let reads = self.hits + self.misses;
        if reads == 0 { 0.0 } else { self.hits as f64 / reads as f64 }
    }
}

harness_contract::export!(lru_cache, Cache);
