//! `versioned_kv`: a key-value store that remembers every version.
//!
//! Implement [`VersionedKv`] for your type and export it:
//!
//! ```ignore
//! use harness_contract::versioned_kv::{KvError, VersionedKv};
//! struct Store { /* ... */ }
//! impl VersionedKv for Store { /* ... */ }
//! harness_contract::export!(versioned_kv, Store);
//! ```
//!
//! Methods of later gates have default bodies, so a solution compiles before
//! it implements them; calling one is judged `not_implemented`.

crate::error_kinds! {
    /// Why an operation was refused.
    pub enum KvError {
        /// Gate 3: the snapshot was released.
        Released = "released",
        /// Gate 3: no snapshot was ever created with this id.
        UnknownSnapshot = "unknown_snapshot",
        /// Gate 4: a key the transaction read was written after it began.
        Conflict = "conflict",
        /// Gate 4: the transaction was already committed, aborted or refused.
        Finished = "finished",
        /// Gate 4: no transaction was ever begun with this id.
        UnknownTxn = "unknown_txn",
        /// Gate 6: the snapshot fell too far behind the current version.
        Expired = "expired",
    }
}

crate::contract! {
    problem = "versioned_kv";
    errors = KvError;

    /// The store. Read each gate's statement for the exact rules.
    pub trait VersionedKv {
        /// An empty store at version 0.
        fn new() -> Self;

        // Gate 1: store and read.

        /// Writes `value` under `key`; returns the store's new version.
        fn put(&mut self, key: String, value: i64) -> u64;
        /// The current value of `key`, if it has one.
        fn get(&self, key: String) -> Option<i64>;
        /// The store's current version (0 before any write).
        fn version(&self) -> u64;

        // Gate 2: point-in-time reads and deletes.

        /// The value `key` had as of `version`.
        fn get_at(&self, key: String, version: u64) -> Option<i64>;
        /// Deletes `key`; returns the store's new version.
        fn delete(&mut self, key: String) -> u64;
        /// The keys that had a value as of `version`, sorted.
        fn keys_at(&self, version: u64) -> Vec<String>;

        // Gate 3: snapshots and compaction.

        /// Pins the current version; returns the snapshot's id.
        fn snapshot(&mut self) -> u64;
        /// The value `key` had at the snapshot's version.
        fn snapshot_get(&self, snapshot: u64, key: String) -> Result<Option<i64>, KvError>;
        /// Releases a snapshot; true if it was live.
        fn release(&mut self, snapshot: u64) -> bool;
        /// Drops entries no reader can see; returns how many were dropped.
        fn compact(&mut self) -> usize;

        // Gate 4: optimistic transactions.

        /// Starts a transaction; returns its id.
        fn begin(&mut self) -> u64;
        /// Reads `key` inside a transaction.
        fn txn_get(&mut self, txn: u64, key: String) -> Result<Option<i64>, KvError>;
        /// Buffers a write inside a transaction.
        fn txn_put(&mut self, txn: u64, key: String, value: i64) -> Result<(), KvError>;
        /// Buffers a delete inside a transaction.
        fn txn_delete(&mut self, txn: u64, key: String) -> Result<(), KvError>;
        /// Validates and applies a transaction; returns the version it wrote at.
        fn commit(&mut self, txn: u64) -> Result<u64, KvError>;
        /// Abandons a transaction without writing anything.
        fn abort(&mut self, txn: u64) -> Result<(), KvError>;

        // Gate 5: a change feed.

        /// The keys written after version `from` and up to version `to`, sorted.
        fn changes(&self, from: u64, to: u64) -> Vec<String>;

        // Gate 6: snapshot expiry.

        /// Sets how many versions a snapshot may fall behind; returns how many
        /// snapshots this expired.
        fn set_snapshot_limit(&mut self, limit: u64) -> usize;
    }
}
