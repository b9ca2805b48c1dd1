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

use crate::not_implemented;

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

/// The guard. Read each gate's statement for the exact rules.
#[allow(unused_variables)]
pub trait Dedupe {
    /// An empty guard that remembers at most `capacity` ids (0 is allowed).
    fn new(capacity: usize) -> Self
    where
        Self: Sized;

    // Gate 1: a seen-set bounded by count.

    /// Records `id` unless it is remembered; true if it was a duplicate.
    fn seen(&mut self, id: String) -> bool {
        not_implemented("seen")
    }
    /// Whether `id` is remembered; records nothing.
    fn contains(&self, id: String) -> bool {
        not_implemented("contains")
    }
    /// How many ids are remembered.
    fn remembered(&self) -> usize {
        not_implemented("remembered")
    }

    // Gate 2: a time window.

    /// Sets the window; returns how many ids it forgot.
    fn set_window(&mut self, window_ms: u64) -> Result<usize, DedupeError> {
        not_implemented("set_window")
    }
    /// Moves the clock forward to `now_ms`; returns how many ids it forgot.
    fn advance_to(&mut self, now_ms: u64) -> usize {
        not_implemented("advance_to")
    }
    /// `advance_to(now_ms)`, then `seen(id)`.
    fn seen_at(&mut self, id: String, now_ms: u64) -> bool {
        not_implemented("seen_at")
    }

    // Gate 3: a Bloom filter.

    /// Replaces the filter with an empty one sized for `expected_items` at
    /// `error_rate`; returns its `(bits, hashes)`.
    fn configure_filter(&mut self, expected_items: u64, error_rate: f64) -> Result<(u64, u32), DedupeError> {
        not_implemented("configure_filter")
    }
    /// The bit positions of `id`, one per hash function, in order.
    fn filter_positions(&self, id: String) -> Result<Vec<u64>, DedupeError> {
        not_implemented("filter_positions")
    }
    /// Sets the bits of `id`; true if at least one of them was 0.
    fn filter_add(&mut self, id: String) -> Result<bool, DedupeError> {
        not_implemented("filter_add")
    }
    /// True if `id` is possibly present, false if it is definitely absent.
    fn filter_check(&self, id: String) -> Result<bool, DedupeError> {
        not_implemented("filter_check")
    }
    /// How many bits of the filter are 1.
    fn filter_bits_set(&self) -> Result<u64, DedupeError> {
        not_implemented("filter_bits_set")
    }
    /// The estimated false-positive rate at the current fill.
    fn filter_fpr(&self) -> Result<f64, DedupeError> {
        not_implemented("filter_fpr")
    }

    // Gate 4: the filter as a negative cache in front of an exact store.

    /// Whether `id` was already accepted; accepts and stores it if not.
    fn is_duplicate(&mut self, id: String) -> Result<bool, DedupeError> {
        not_implemented("is_duplicate")
    }
    /// How many times `is_duplicate` consulted the exact store.
    fn store_lookups(&self) -> u64 {
        not_implemented("store_lookups")
    }
    /// How many of those consultations found the id absent.
    fn false_positives(&self) -> u64 {
        not_implemented("false_positives")
    }

    // Gate 6: exact numbers for the dashboard.

    /// How many ids the guard forgot to make room for a new one.
    fn evictions(&self) -> u64 {
        not_implemented("evictions")
    }
    /// How many ids the guard forgot because their age reached the window.
    fn expirations(&self) -> u64 {
        not_implemented("expirations")
    }
    /// How many `seen` and `seen_at` calls returned `true`.
    fn duplicates(&self) -> u64 {
        not_implemented("duplicates")
    }
    /// Duplicates as a share of all `seen` and `seen_at` calls; 0.0 before
    /// the first.
    fn hit_rate(&self) -> f64 {
        not_implemented("hit_rate")
    }
}

/// Gate 5: one guard shared by many threads. Its methods take `&self` and
/// are called on one instance from several threads at once, so the type
/// must be `Send + Sync` (the compiler says so at your `impl` if it is not):
/// a `Mutex` around the shared state, locks per shard of ids, or anything
/// else that is correct. The instance is still created by [`Dedupe::new`].
#[allow(unused_variables)]
pub trait SharedDedupe: Send + Sync {
    /// Claims `id` on the shared guard: false if this call claimed it (the
    /// caller processes the message), true if it was already claimed.
    fn shared_seen(&self, id: String) -> bool {
        not_implemented("shared_seen")
    }
    /// Gives up the claim on `id`; true if it was claimed.
    fn shared_forget(&self, id: String) -> bool {
        not_implemented("shared_forget")
    }
}

crate::contract! {
    problem = "dedupe";
    trait = Dedupe;
    errors = DedupeError;
    new(capacity: usize);
    fn seen(id: String) -> bool;
    fn contains(id: String) -> bool;
    fn remembered() -> usize;
    fn set_window(window_ms: u64) -> Result<usize, DedupeError>;
    fn advance_to(now_ms: u64) -> usize;
    fn seen_at(id: String, now_ms: u64) -> bool;
    fn configure_filter(expected_items: u64, error_rate: f64) -> Result<(u64, u32), DedupeError>;
    fn filter_positions(id: String) -> Result<Vec<u64>, DedupeError>;
    fn filter_add(id: String) -> Result<bool, DedupeError>;
    fn filter_check(id: String) -> Result<bool, DedupeError>;
    fn filter_bits_set() -> Result<u64, DedupeError>;
    fn filter_fpr() -> Result<f64, DedupeError>;
    fn is_duplicate(id: String) -> Result<bool, DedupeError>;
    fn store_lookups() -> u64;
    fn false_positives() -> u64;
    fn evictions() -> u64;
    fn expirations() -> u64;
    fn duplicates() -> u64;
    fn hit_rate() -> f64;
    shared trait = SharedDedupe;
    fn shared_seen(id: String) -> bool;
    fn shared_forget(id: String) -> bool;
}
