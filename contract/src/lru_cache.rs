//! `lru_cache`: a bounded cache that evicts the least recently used entry.
//!
//! Implement [`LruCache`] for your type and export it:
//!
//! ```ignore
//! use harness_contract::lru_cache::{CacheError, LruCache};
//! struct Cache { /* ... */ }
//! impl LruCache for Cache { /* ... */ }
//! harness_contract::export!(lru_cache, Cache);
//! ```
//!
//! Methods of later gates have default bodies, so a solution compiles before
//! it implements them; calling one is judged `not_implemented`. The
//! concurrent gate's methods are in a second trait, [`SharedLruCache`],
//! taking `&self`; until your type implements it they are judged
//! `not_implemented` too.

crate::error_kinds! {
    /// Why an operation was refused.
    pub enum CacheError {
        /// Gate 3: the entry's cost is larger than the whole capacity.
        TooLarge = "too_large",
        /// Gate 5: a miss; the caller must load the value and settle the load.
        MustLoad = "must_load",
        /// Gate 5: a miss while the key's load is in flight; the caller waits for it.
        Loading = "loading",
        /// Gate 5: the key has no load in flight.
        NoLoad = "no_load",
        /// Gate 6: the cache knows that the backend has no value for the key.
        NotFound = "not_found",
    }
}

crate::contract! {
    problem = "lru_cache";
    errors = CacheError;

    /// The cache. Read each gate's statement for the exact rules.
    // `len` is an operation of the problem, judged like the others; an
    // `is_empty` would be one more for every candidate to write.
    #[allow(clippy::len_without_is_empty)]
    pub trait LruCache {
        /// An empty cache with the given `capacity` (at least 1).
        fn new(capacity: usize) -> Self;

        // Gate 1: get and put with least-recently-used eviction.

        /// Inserts or replaces `key`, making it the most recently used entry;
        /// returns the key evicted to make room, if any.
        fn put(&mut self, key: String, value: i64) -> Option<String>;
        /// The value of `key`, if the cache holds it; a hit makes `key` the most
        /// recently used entry.
        fn get(&mut self, key: String) -> Option<i64>;
        /// Removes `key`; returns the value it held, if any.
        fn remove(&mut self, key: String) -> Option<i64>;
        /// The number of entries the cache holds.
        fn len(&self) -> usize;
        /// Every key the cache holds, most recently used first.
        fn keys(&self) -> Vec<String>;

        // Gate 2: per-entry time to live.

        /// Moves the cache's clock forward by `ms` milliseconds; returns the new
        /// time.
        fn advance(&mut self, ms: u64) -> u64;
        /// Like `put`, but the entry expires `ttl_ms` milliseconds from now.
        fn put_ttl(&mut self, key: String, value: i64, ttl_ms: u64) -> Option<String>;
        /// Examines at most `max_checks` entries from the least recently used
        /// end and removes the expired ones; returns how many it removed.
        fn sweep(&mut self, max_checks: usize) -> usize;

        // Gate 3: a cost budget.

        /// Inserts or replaces `key` with a caller-supplied `cost` and an
        /// optional time to live; returns the keys evicted to make room, least
        /// recently used first.
        fn put_sized(
            &mut self,
            key: String,
            value: i64,
            cost: u64,
            ttl_ms: Option<u64>,
        ) -> Result<Vec<String>, CacheError>;
        /// The total cost of the entries the cache holds.
        fn used(&self) -> u64;

        // Gate 4: statistics.

        /// The counters `(hits, misses, evictions, expirations)`.
        fn stats(&self) -> (u64, u64, u64, u64);
        /// Hits divided by reads (hits plus misses); 0.0 before the first read.
        fn hit_rate(&self) -> f64;

        // Gate 5: single-flight loads.

        /// Reads `key` through the cache: its value on a hit; on a miss, whether
        /// the caller must load it or waits for the load in flight.
        fn fetch(&mut self, key: String) -> Result<i64, CacheError>;
        /// Settles the load in flight for `key` with `value` and an optional time
        /// to live; returns how many callers waited on it.
        fn load_done(&mut self, key: String, value: i64, ttl_ms: Option<u64>) -> Result<u64, CacheError>;
        /// Settles the load in flight for `key` as failed; returns how many
        /// callers waited on it.
        fn load_failed(&mut self, key: String) -> Result<u64, CacheError>;
        /// The number of loads started so far.
        fn backend_calls(&self) -> u64;

        // Gate 6: negative caching.

        /// Settles the load in flight for `key`: the backend has no value for it,
        /// which the cache remembers for `ttl_ms` milliseconds; returns how many
        /// callers waited on it.
        fn load_missing(&mut self, key: String, ttl_ms: u64) -> Result<u64, CacheError>;
        /// Sets the most negative entries the cache may hold; returns the keys
        /// evicted to meet it, least recently used first.
        fn set_negative_limit(&mut self, limit: usize) -> Vec<String>;
    }

    /// The concurrent gate: one cache shared by many threads. Its methods take
    /// `&self` and are called on one instance from several threads at once, so
    /// the type must be `Send + Sync` (the compiler says so at your `impl` if it
    /// is not): a `Mutex` around the state the `&mut self` methods change, or an
    /// `RwLock`. They act on the same cache as [`LruCache`]'s methods, which is
    /// still created by [`LruCache::new`].
    pub trait SharedLruCache: Send + Sync {
        /// `put`'s rules, through `&self`: stores `value` under `key` as the most
        /// recently used entry; returns the key evicted to make room, if any.
        fn shared_put(&self, key: String, value: i64) -> Option<String>;
        /// `get`'s rules, through `&self`: the value of `key`, if held; a hit
        /// makes `key` the most recently used entry.
        fn shared_get(&self, key: String) -> Option<i64>;
        /// `remove`'s rules, through `&self`: removes `key`; returns its value,
        /// if it was held.
        fn shared_remove(&self, key: String) -> Option<i64>;
        /// `len`'s rule, through `&self`: the number of entries held.
        fn shared_len(&self) -> usize;
    }
}
