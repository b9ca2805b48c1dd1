//! The `rate_limiter` problem's contract (to be written; see issue 4).
