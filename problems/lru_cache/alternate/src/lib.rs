//! A second correct solution of `lru_cache`, of another design than the
//! reference, written from the statements: recency is a logical clock. Each
//! entry carries the tick of its last use, and a `BTreeMap` from tick to key
//! orders the entries, so the least recently used entry is the map's first
//! one. That is O(log n) per operation instead of the reference's O(1)
//! linked list: the scale checks must still pass it, since log n grows by
//! less than 2× over their sizes.

use std::collections::{BTreeMap, HashMap};

use harness_contract::lru_cache::{CacheError, LruCache};

struct Entry {
    value: i64,
    cost: u64,
    deadline: Option<u64>,
    tick: u64,
}

pub struct Cache {
    entries: HashMap<String, Entry>,
    /// Tick of last use → key; the first is the least recently used.
    order: BTreeMap<u64, String>,
    ticks: u64,
    capacity: u64,
    used: u64,
    now: u64,
    hits: u64,
    misses: u64,
    evictions: u64,
    expirations: u64,
}

impl Cache {
    fn next_tick(&mut self) -> u64 {
        self.ticks += 1;
        self.ticks
    }

    fn drop_entry(&mut self, key: &str) -> Option<Entry> {
        let e = self.entries.remove(key)?;
        self.order.remove(&e.tick);
        self.used -= e.cost;
        Some(e)
    }

    fn expired(&self, e: &Entry) -> bool {
        e.deadline.is_some_and(|d| self.now >= d)
    }

    /// Drops `key` if it is expired (lazy expiry); whether it is live.
    fn live(&mut self, key: &str) -> bool {
        match self.entries.get(key) {
            None => false,
            Some(e) if self.expired(e) => {
                self.drop_entry(key);
                self.expirations += 1;
                false
            }
            Some(_) => true,
        }
    }

    fn insert(&mut self, key: String, value: i64, cost: u64, deadline: Option<u64>) -> Vec<String> {
        self.drop_entry(&key);
        let tick = self.next_tick();
        self.order.insert(tick, key.clone());
        self.entries.insert(key, Entry { value, cost, deadline, tick });
        self.used += cost;
        let mut evicted = Vec::new();
        while self.used > self.capacity {
            let (_, victim) = self.order.pop_first().expect("over budget means not empty");
            let e = self.entries.remove(&victim).expect("ordered entries exist");
            self.used -= e.cost;
            self.evictions += 1;
            evicted.push(victim);
        }
        evicted
    }
}

impl LruCache for Cache {
    fn new(capacity: usize) -> Self {
        Cache {
            entries: HashMap::new(),
            order: BTreeMap::new(),
            ticks: 0,
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
        self.insert(key, value, 1, None).pop()
    }

    fn get(&mut self, key: String) -> Option<i64> {
        if !self.live(&key) {
            self.misses += 1;
            return None;
        }
        self.hits += 1;
        let tick = self.next_tick();
        let e = self.entries.get_mut(&key).expect("live");
        let old = std::mem::replace(&mut e.tick, tick);
        let value = e.value;
        self.order.remove(&old);
        self.order.insert(tick, key);
        Some(value)
    }

    fn remove(&mut self, key: String) -> Option<i64> {
        if !self.live(&key) {
            return None;
        }
        self.drop_entry(&key).map(|e| e.value)
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn keys(&self) -> Vec<String> {
        self.order.values().rev().cloned().collect()
    }

    fn advance(&mut self, ms: u64) -> u64 {
        self.now = self.now.saturating_add(ms);
        self.now
    }

    fn put_ttl(&mut self, key: String, value: i64, ttl_ms: u64) -> Option<String> {
        let deadline = self.now.saturating_add(ttl_ms);
        self.insert(key, value, 1, Some(deadline)).pop()
    }

    fn sweep(&mut self, max_checks: usize) -> usize {
        let examined: Vec<String> = self.order.values().take(max_checks).cloned().collect();
        let mut removed = 0;
        for key in examined {
            if self.entries.get(&key).is_some_and(|e| self.expired(e)) {
                self.drop_entry(&key);
                self.expirations += 1;
                removed += 1;
            }
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
        if cost > self.capacity {
            return Err(CacheError::TooLarge);
        }
        let deadline = ttl_ms.map(|t| self.now.saturating_add(t));
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
