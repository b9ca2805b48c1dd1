//! `dedupe`: a duplicate-message guard for a long-running consumer.
//!
//! Implement [`Dedupe`] for your type and export it:
//!
//! ```ignore
//! use harness_contract::dedupe::{Dedupe, DedupeError};
//! struct Guard { /* ... */ }
//! impl Dedupe for Guard { /* ... */ }
//! harness_contract::export!(dedupe, Guard);
//! ```
//!
//! Methods of later gates have default bodies, so a solution compiles before
//! it implements them; calling one is judged `not_implemented`. The
//! concurrent gate's methods are in a second trait, [`SharedDedupe`], taking
//! `&self`; until your type implements it they are judged `not_implemented`
//! too.

crate::error_kinds! {
    /// Why an operation was refused.
    pub enum DedupeError {
        /// Gate 2: a window of 0 ms was asked for.
        InvalidWindow = "invalid_window",
        /// Gate 3: a filter operation before any filter was configured.
        NoFilter = "no_filter",
        /// Gate 3: a filter sized for 0 expected items was asked for.
        InvalidExpectedItems = "invalid_expected_items",
        /// Gate 3: the error rate is not strictly between 0 and 1.
        InvalidErrorRate = "invalid_error_rate",
    }
}

crate::contract! {
    problem = "dedupe";
    errors = DedupeError;

    /// The guard. Read each gate's statement for the exact rules.
    pub trait Dedupe {
        /// An empty guard that remembers at most `capacity` ids (0 is allowed).
        fn new(capacity: usize) -> Self;

        // Gate 1: a seen-set bounded by count.

        /// Records `id` unless it is remembered; true if it was a duplicate.
        fn seen(&mut self, id: String) -> bool;
        /// Whether `id` is remembered; records nothing.
        fn contains(&self, id: String) -> bool;
        /// How many ids are remembered.
        fn remembered(&self) -> usize;

        // Gate 2: a time window.

        /// Sets the window; returns how many ids it forgot.
        fn set_window(&mut self, window_ms: u64) -> Result<usize, DedupeError>;
        /// Moves the clock forward to `now_ms`; returns how many ids it forgot.
        fn advance_to(&mut self, now_ms: u64) -> usize;
        /// `advance_to(now_ms)`, then `seen(id)`.
        fn seen_at(&mut self, id: String, now_ms: u64) -> bool;

        // Gate 3: a Bloom filter.

        /// Replaces the filter with an empty one sized for `expected_items` at
        /// `error_rate`; returns its `(bits, hashes)`.
        fn configure_filter(&mut self, expected_items: u64, error_rate: f64) -> Result<(u64, u32), DedupeError>;
        /// The bit positions of `id`, one per hash function, in order.
        fn filter_positions(&self, id: String) -> Result<Vec<u64>, DedupeError>;
        /// Sets the bits of `id`; true if at least one of them was 0.
        fn filter_add(&mut self, id: String) -> Result<bool, DedupeError>;
        /// True if `id` is possibly present, false if it is definitely absent.
        fn filter_check(&self, id: String) -> Result<bool, DedupeError>;
        /// How many bits of the filter are 1.
        fn filter_bits_set(&self) -> Result<u64, DedupeError>;
        /// The estimated false-positive rate at the current fill.
        fn filter_fpr(&self) -> Result<f64, DedupeError>;

        // Gate 4: the filter as a negative cache in front of an exact store.

        /// Whether `id` was already accepted; accepts and stores it if not.
        fn is_duplicate(&mut self, id: String) -> Result<bool, DedupeError>;
        /// How many times `is_duplicate` consulted the exact store.
        fn store_lookups(&self) -> u64;
        /// How many of those consultations found the id absent.
        fn false_positives(&self) -> u64;

        // Gate 6: exact numbers for the dashboard.

        /// How many ids the guard forgot to make room for a new one.
        fn evictions(&self) -> u64;
        /// How many ids the guard forgot because their age reached the window.
        fn expirations(&self) -> u64;
        /// How many `seen` and `seen_at` calls returned `true`.
        fn duplicates(&self) -> u64;
        /// Duplicates as a share of all `seen` and `seen_at` calls; 0.0 before
        /// the first.
        fn hit_rate(&self) -> f64;
    }

    /// Gate 5: one guard shared by many threads. Its methods take `&self` and
    /// are called on one instance from several threads at once, so the type
    /// must be `Send + Sync` (the compiler says so at your `impl` if it is not):
    /// a `Mutex` around the shared state, locks per shard of ids, or anything
    /// else that is correct. The instance is still created by [`Dedupe::new`].
    pub trait SharedDedupe: Send + Sync {
        /// Claims `id` on the shared guard: false if this call claimed it (the
        /// caller processes the message), true if it was already claimed.
        fn shared_seen(&self, id: String) -> bool;
        /// Gives up the claim on `id`; true if it was claimed.
        fn shared_forget(&self, id: String) -> bool;
    }
}
