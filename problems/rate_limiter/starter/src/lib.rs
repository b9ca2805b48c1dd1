//! Your rate limiter. The statement of each gate is in the harness; the
//! trait's documentation is one hover away in your editor.
//!
//! Later gates add methods to `RateLimiter`; until you write them they keep
//! their default bodies, which the harness reports as `not_implemented`.

use harness_contract::rate_limiter::RateLimiter;

pub struct Limiter {}

impl RateLimiter for Limiter {
    fn new(limit: u32, window_ms: u64) -> Self {
        Limiter {}
    }

    fn fixed_allow(&mut self, key: String, now_ms: u64) -> bool {
        harness_contract::todo!()
    }
}

harness_contract::export!(rate_limiter, Limiter);
