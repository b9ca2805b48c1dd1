//! Reference solution for `versioned_kv`.
//!
// @gate 2
//! Per key, an append-only list of `(version, slot)` pairs. Versions only
//! grow, so each list is sorted for free and a read "as of" a version is a
//! predecessor query: a binary search for the last entry at or before it.
// @else
//~ //! Per key, an append-only list of `(version, slot)` pairs, one per write:
//~ //! the last one holds the current value.
// @end
//! One global counter numbers every write, whichever key it touches.
//! That makes a snapshot a single integer, the version it pins.  // @gate 3
//! It lets a transaction commit all its writes at one version.  // @gate 4
// @gate 5
//! Because versions only grow, a second append-only list of `(version, key)`
//! is sorted for free too: the change feed is two binary searches into it.
// @end
// @gate 6
//! Snapshot expiry is lazy: whether a live snapshot is too old is computed
//! from its pin when asked, so no write has to visit the snapshots.
// @end

use std::collections::BTreeMap; // @gate 4
use std::collections::BTreeSet; // @gate 3
use std::collections::HashMap;

use harness_contract::Value; // @gate 3
// @gate 3
use harness_contract::versioned_kv::{KvError, VersionedKv};
// @else
//~ use harness_contract::versioned_kv::VersionedKv;
// @end

// @gate 2
/// What a write left under a key: a value, or a tombstone from a delete.
// @else
//~ /// What a write left under a key.
// @end
#[derive(Clone, Copy, Debug, PartialEq)]
enum Slot {
    Value(i64),
    Tombstone, // @gate 2
}

impl Slot {
    fn value(self) -> Option<i64> {
        match self {
            Slot::Value(v) => Some(v),
            Slot::Tombstone => None, // @gate 2
        }
    }
}

// @gate 3
// @gate 6
/// A snapshot's state. A live one may have expired since: see
/// [`Store::is_expired`].
// @else
//~ /// A snapshot's state: live, with the version it pins, or released.
// @end
#[derive(Clone, Copy, Debug, PartialEq)]
enum Snap {
    Live(u64),
    Released,
    Expired, // @gate 6
}
// @end

// @gate 4
struct Txn {
    start: u64,
    reads: BTreeSet<String>,
    writes: BTreeMap<String, Slot>,
    finished: bool,
}
// @end

pub struct Store {
    history: HashMap<String, Vec<(u64, Slot)>>,
    // @gate 5
    /// Every write as `(version, key)`, in version order; compaction drops
    /// the writes it drops from history.
    log: Vec<(u64, String)>,
    // @end
    version: u64,
    // @gate 3
    /// Index `id - 1`.
    snapshots: Vec<Snap>,
    // @end
    /// The snapshot age limit, once set.  // @gate 6
    limit: Option<u64>, // @gate 6
    // @gate 4
    /// Index `id - 1`.
    txns: Vec<Txn>,
    // @end
    // @gate 3
    /// For the oracle only: the current version and the pins of every
    /// compaction so far.
    compactions: Vec<(u64, BTreeSet<u64>)>,
    // @end
}

impl Store {
    /// The entry visible at `version`: the last one written at or before it.
    fn slot_at(&self, key: &str, version: u64) -> Option<Slot> {
        let entries = self.history.get(key)?;
        let after = entries.partition_point(|(v, _)| *v <= version);
        after.checked_sub(1).map(|i| entries[i].1)
    }

    fn write(&mut self, key: String, slot: Slot) -> u64 {
        self.version += 1;
        self.log.push((self.version, key.clone())); // @gate 5
        self.history.entry(key).or_default().push((self.version, slot));
        self.version
    }
    // @gate 6

    /// Whether a live snapshot pinned at `pin` is too old: its age, the
    /// version minus its pin (never negative), is over the limit.
    fn is_expired(&self, pin: u64) -> bool {
        self.limit.is_some_and(|limit| self.version - pin > limit)
    }

    /// Marks every live snapshot that is too old under the current limit as
    /// expired for good (before the limit changes); returns how many.
    fn settle_expiry(&mut self) -> usize {
        let mut expired = 0;
        for i in 0..self.snapshots.len() {
            if let Snap::Live(pin) = self.snapshots[i]
                && self.is_expired(pin)
            {
                self.snapshots[i] = Snap::Expired;
                expired += 1;
            }
        }
        expired
    }
    // @end
    // @gate 4

    fn last_write(&self, key: &str) -> u64 {
        self.history.get(key).and_then(|e| e.last()).map_or(0, |(v, _)| *v)
    }

    fn live_txn(&mut self, id: u64) -> Result<&mut Txn, KvError> {
        let txn = id
            .checked_sub(1)
            .and_then(|i| self.txns.get_mut(i as usize))
            .ok_or(KvError::UnknownTxn)?;
        if txn.finished {
            return Err(KvError::Finished);
        }
        Ok(txn)
    }
    // @end
}

impl VersionedKv for Store {
    fn new() -> Self {
        Store {
            history: HashMap::new(),
            log: Vec::new(), // @gate 5
            version: 0,
            // @gate 3
            snapshots: Vec::new(),
            // @end
            limit: None, // @gate 6
            txns: Vec::new(), // @gate 4
            compactions: Vec::new(), // @gate 3
        }
    }

    fn put(&mut self, key: String, value: i64) -> u64 {
        self.write(key, Slot::Value(value))
    }

    fn get(&self, key: String) -> Option<i64> {
        // @gate 2
        self.get_at(key, self.version)
        // @else
        //~ self.slot_at(&key, self.version).and_then(Slot::value)
        // @end
    }

    fn version(&self) -> u64 {
        self.version
    }
    // @gate 2

    fn get_at(&self, key: String, version: u64) -> Option<i64> {
        self.slot_at(&key, version).and_then(Slot::value)
    }

    fn delete(&mut self, key: String) -> u64 {
        // A tombstone, never a removal: the past must stay readable. And it
        // takes a version even for a key that never existed, because a
        // version numbers operations, not data.
        self.write(key, Slot::Tombstone)
    }

    fn keys_at(&self, version: u64) -> Vec<String> {
        let mut keys: Vec<String> = self
            .history
            .keys()
            .filter(|k| matches!(self.slot_at(k, version), Some(Slot::Value(_))))
            .cloned()
            .collect();
        keys.sort();
        keys
    }
    // @end
    // @gate 3

    fn snapshot(&mut self) -> u64 {
        self.snapshots.push(Snap::Live(self.version));
        self.snapshots.len() as u64
    }

    fn snapshot_get(&self, snapshot: u64, key: String) -> Result<Option<i64>, KvError> {
        let snap = snapshot
            .checked_sub(1)
            .and_then(|i| self.snapshots.get(i as usize))
            .ok_or(KvError::UnknownSnapshot)?;
        match *snap {
            Snap::Released => Err(KvError::Released),
            // @gate 6
            Snap::Expired => Err(KvError::Expired),
            Snap::Live(pin) if self.is_expired(pin) => Err(KvError::Expired),
            // @end
            Snap::Live(version) => Ok(self.get_at(key, version)),
        }
    }

    fn release(&mut self, snapshot: u64) -> bool {
        let Some(i) = snapshot.checked_sub(1).map(|i| i as usize).filter(|&i| i < self.snapshots.len()) else {
            return false;
        };
        match self.snapshots[i] {
            // @gate 6
            Snap::Live(pin) if !self.is_expired(pin) => {
            // @else
            //~ Snap::Live(_) => {
            // @end
                self.snapshots[i] = Snap::Released;
                true
            }
            _ => false,
        }
    }

    fn compact(&mut self) -> usize {
        // Reachability: an entry survives if it is the one some pin sees.
        let mut pins: BTreeSet<u64> = self
            .snapshots
            .iter()
            .filter_map(|s| match *s {
                // @gate 6
                Snap::Live(pin) if !self.is_expired(pin) => Some(pin),
                // @else
                //~ Snap::Live(pin) => Some(pin),
                // @end
                _ => None,
            })
            .collect();
        pins.insert(self.version);
        // @gate 4
        pins.extend(self.txns.iter().filter(|t| !t.finished).map(|t| t.start));
        // @end
        let mut dropped = 0;
        for entries in self.history.values_mut() {
            let keep: BTreeSet<usize> = pins
                .iter()
                .filter_map(|pin| entries.partition_point(|(v, _)| v <= pin).checked_sub(1))
                .collect();
            dropped += entries.len() - keep.len();
            let mut index = 0;
            entries.retain(|_| {
                index += 1;
                keep.contains(&(index - 1))
            });
            // `retain` keeps the capacity: give the freed room back.
            entries.shrink_to_fit();
        }
        // @gate 5
        // The feed forgets the writes history forgot, or it would hold every
        // write ever made.
        let history = &self.history;
        self.log.retain(|(v, key)| history.get(key).is_some_and(|e| e.binary_search_by_key(v, |(w, _)| *w).is_ok()));
        self.log.shrink_to_fit();
        // @end
        self.compactions.push((self.version, pins));
        dropped
    }
    // @end
    // @gate 4

    fn begin(&mut self) -> u64 {
        self.txns.push(Txn {
            start: self.version,
            reads: BTreeSet::new(),
            writes: BTreeMap::new(),
            finished: false,
        });
        self.txns.len() as u64
    }

    fn txn_get(&mut self, txn: u64, key: String) -> Result<Option<i64>, KvError> {
        let t = self.live_txn(txn)?;
        t.reads.insert(key.clone());
        if let Some(slot) = t.writes.get(&key) {
            return Ok(slot.value());
        }
        let start = t.start;
        Ok(self.get_at(key, start))
    }

    fn txn_put(&mut self, txn: u64, key: String, value: i64) -> Result<(), KvError> {
        self.live_txn(txn)?.writes.insert(key, Slot::Value(value));
        Ok(())
    }

    fn txn_delete(&mut self, txn: u64, key: String) -> Result<(), KvError> {
        self.live_txn(txn)?.writes.insert(key, Slot::Tombstone);
        Ok(())
    }

    fn commit(&mut self, txn: u64) -> Result<u64, KvError> {
        let t = self.live_txn(txn)?;
        t.finished = true;
        let (start, reads, writes) = (t.start, std::mem::take(&mut t.reads), std::mem::take(&mut t.writes));
        // Validate everything before applying anything.
        if reads.iter().any(|k| self.last_write(k) > start) {
            return Err(KvError::Conflict);
        }
        if writes.is_empty() {
            return Ok(self.version);
        }
        self.version += 1;
        for (key, slot) in writes {
            self.log.push((self.version, key.clone())); // @gate 5
            self.history.entry(key).or_default().push((self.version, slot));
        }
        Ok(self.version)
    }

    fn abort(&mut self, txn: u64) -> Result<(), KvError> {
        self.live_txn(txn)?.finished = true;
        Ok(())
    }
    // @end
    // @gate 5

    fn changes(&self, from: u64, to: u64) -> Vec<String> {
        if from >= to {
            return Vec::new();
        }
        let start = self.log.partition_point(|(v, _)| *v <= from);
        let end = self.log.partition_point(|(v, _)| *v <= to);
        let keys: BTreeSet<&String> = self.log[start..end].iter().map(|(_, k)| k).collect();
        keys.into_iter().cloned().collect()
    }
    // @end
    // @gate 6

    fn set_snapshot_limit(&mut self, limit: u64) -> usize {
        // Expiry under the old limit is final, so settle it before the limit
        // changes; then whatever the new limit expires now is this call's.
        self.settle_expiry();
        self.limit = Some(limit);
        self.settle_expiry()
    }
    // @end
}

// @gate 3
/// After a compaction, a read at a version that no pin protected may see
/// either the old entry or nothing: the statement leaves it open.
// @gate 5
/// So is the change feed over a range that starts before a compaction (this
/// store forgets the writes compaction drops).
// @end
impl harness_contract::Oracle for Store {
    fn is_specified(&self, op: &str, args: &[Value]) -> bool {
        let version = match (op, args) {
            ("get_at", [_, Value::Int(v)]) | ("keys_at", [Value::Int(v)]) => *v as u64,
            // @gate 5
            ("changes", [Value::Int(from), Value::Int(to)]) => {
                return from >= to || self.compactions.iter().all(|(current, _)| *from as u64 >= *current);
            }
            // @end
            _ => return true,
        };
        self.compactions.iter().all(|(current, pins)| version >= *current || pins.contains(&version))
    }
}

harness_contract::export!(versioned_kv, Store, oracle);
// @else
//~ harness_contract::export!(versioned_kv, Store);
// @end
