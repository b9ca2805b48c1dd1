//! `rate_limiter`: per-key rate limiters, four algorithms side by side.
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
//! judged `not_implemented`.

use crate::not_implemented;

/// The limiter. Read each gate's statement for the exact rules.
#[allow(unused_variables)]
pub trait RateLimiter {
    /// A limiter that allows `limit` requests per `window_ms` milliseconds
    /// for each key (`limit >= 1`, `window_ms >= 1`).
    fn new(limit: u32, window_ms: u64) -> Self
    where
        Self: Sized;

    // Gate 1: fixed windows.

    /// Fixed-window decision for one request of `key` at `now_ms`: true if
    /// it is allowed (and then counted), false if it is refused.
    fn fixed_allow(&mut self, key: String, now_ms: u64) -> bool {
        not_implemented("fixed_allow")
    }

    // Gate 2: sliding window log.

    /// Sliding-log decision for one request of `key` at `now_ms`: true if
    /// it is allowed (and then recorded), false if it is refused.
    fn log_allow(&mut self, key: String, now_ms: u64) -> bool {
        not_implemented("log_allow")
    }

    // Gate 3: sliding window counter.

    /// Sliding-counter decision for one request of `key` at `now_ms`: true
    /// if it is allowed (and then counted), false if it is refused.
    fn counter_allow(&mut self, key: String, now_ms: u64) -> bool {
        not_implemented("counter_allow")
    }

    // Gate 4: token bucket.

    /// Token-bucket decision for a request of `key` costing `cost` tokens at
    /// `now_ms`: true if it is allowed (and the tokens are taken).
    fn bucket_allow(&mut self, key: String, cost: u32, now_ms: u64) -> bool {
        not_implemented("bucket_allow")
    }
    /// How many milliseconds after this call's effective time (the larger
    /// of `now_ms` and the key's clock, which the call moves) a request of
    /// `key` costing `cost` would first be allowed; `None` if it never can
    /// be.
    fn retry_after(&mut self, key: String, cost: u32, now_ms: u64) -> Option<u64> {
        not_implemented("retry_after")
    }
}

crate::contract! {
    problem = "rate_limiter";
    trait = RateLimiter;
    errors = crate::NoError;
    new(limit: u32, window_ms: u64);
    fn fixed_allow(key: String, now_ms: u64) -> bool;
    fn log_allow(key: String, now_ms: u64) -> bool;
    fn counter_allow(key: String, now_ms: u64) -> bool;
    fn bucket_allow(key: String, cost: u32, now_ms: u64) -> bool;
    fn retry_after(key: String, cost: u32, now_ms: u64) -> Option<u64>;
}
