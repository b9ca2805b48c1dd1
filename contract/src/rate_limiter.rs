//! `rate_limiter`: per-key rate limiters, several algorithms side by side.
//!
//! Implement [`RateLimiter`] for your type and export it:
//!
//! ```ignore
//! use harness_contract::rate_limiter::RateLimiter;
//! struct Limiter { /* ... */ }
//! impl RateLimiter for Limiter { /* ... */ }
//! harness_contract::export!(rate_limiter, Limiter);
//! ```
//!
//! Time is always an argument (`now_ms`), never read from a clock, so every
//! boundary can be tested exactly. Methods of later gates have default
//! bodies, so a solution compiles before it implements them; calling one is
//! judged `not_implemented`. The concurrent gate's methods are in a second
//! trait, [`SharedRateLimiter`], taking `&self`; until your type implements
//! it they are judged `not_implemented` too.

crate::contract! {
    problem = "rate_limiter";
    errors = crate::NoError;

    /// The limiter. Read each gate's statement for the exact rules.
    pub trait RateLimiter {
        /// A limiter that allows `limit` requests per `window_ms` milliseconds
        /// for each key (`limit >= 1`, `window_ms >= 1`).
        fn new(limit: u32, window_ms: u64) -> Self;

        // Gate 1: fixed windows.

        /// Fixed-window decision for one request of `key` at `now_ms`: true if
        /// it is allowed (and then counted), false if it is refused.
        fn fixed_allow(&mut self, key: String, now_ms: u64) -> bool;

        // Gate 2: sliding window log.

        /// Sliding-log decision for one request of `key` at `now_ms`: true if
        /// it is allowed (and then recorded), false if it is refused.
        fn log_allow(&mut self, key: String, now_ms: u64) -> bool;

        // Gate 3: sliding window counter.

        /// Sliding-counter decision for one request of `key` at `now_ms`: true
        /// if it is allowed (and then counted), false if it is refused.
        fn counter_allow(&mut self, key: String, now_ms: u64) -> bool;

        // Gate 4: token bucket.

        /// Token-bucket decision for a request of `key` costing `cost` tokens at
        /// `now_ms`: true if it is allowed (and the tokens are taken).
        fn bucket_allow(&mut self, key: String, cost: u32, now_ms: u64) -> bool;
        /// How many milliseconds after this call's effective time (the larger
        /// of `now_ms` and the key's clock, which the call moves) a request of
        /// `key` costing `cost` would first be allowed; `None` if it never can
        /// be.
        fn retry_after(&mut self, key: String, cost: u32, now_ms: u64) -> Option<u64>;

        // Gate 6: idle keys forgotten.

        /// Sliding-log decision for one request of `key` at `now_ms` on the
        /// limiter with one clock for all keys (the largest `now_ms` of any
        /// `active_allow` or `active_keys` call): true if it is allowed (and
        /// then recorded).
        fn active_allow(&mut self, key: String, now_ms: u64) -> bool;
        /// Moves that one clock up to `now_ms`, then returns how many keys have
        /// an allowed `active_allow` request that still counts at the clock.
        fn active_keys(&mut self, now_ms: u64) -> u64;

        // Gate 7: leaky bucket.

        /// Offers one request of `key` at `now_ms` to its leaky bucket: the time
        /// it will be released downstream, or `None` if the key's queue already
        /// holds `limit` waiting requests (the request is dropped).
        fn leak_offer(&mut self, key: String, now_ms: u64) -> Option<u64>;
        /// How many accepted requests of `key` are still waiting (released
        /// strictly after this call's effective time, which the call moves).
        fn leak_waiting(&mut self, key: String, now_ms: u64) -> u64;
    }

    /// Gate 5: one limiter shared by many threads. Its methods take `&self` and
    /// are called on one instance from several threads at once, so the type
    /// must be `Send + Sync` (the compiler says so at your `impl` if it is not):
    /// a `Mutex` around what `&mut self` methods used to change, an `RwLock`,
    /// locks per shard of keys, or atomics. The instance is still created by
    /// [`RateLimiter::new`].
    pub trait SharedRateLimiter: Send + Sync {
        /// Sliding-log decision (gate 2's rule) for one request of `key` at
        /// `now_ms` on the shared limiter, which keeps state of its own.
        fn shared_allow(&self, key: String, now_ms: u64) -> bool;
        /// How many `shared_allow` requests of `key` were allowed so far.
        fn granted(&self, key: String) -> u64;
    }
}
