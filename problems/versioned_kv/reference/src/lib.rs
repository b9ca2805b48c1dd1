//! Reference solution for `versioned_kv`.
//!
//! Per key, an append-only list of `(version, slot)` pairs. Versions only
//! grow, so each list is sorted for free and a read "as of" a version is a
//! predecessor query: a binary search for the last entry at or before it.
//! One global counter numbers every write, which makes a snapshot a single
//! integer and lets a transaction commit all its writes at one version.
//! Because versions only grow, a second append-only list of `(version, key)`
//! is sorted for free too: the change feed is two binary searches into it.
//! Snapshot expiry is lazy: whether a live snapshot is too old is computed
//! from its pin when asked, so no write has to visit the snapshots.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use harness_contract::Value;
use harness_contract::versioned_kv::{KvError, VersionedKv};

/// What a write left under a key: a value, or a tombstone from a delete.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Slot {
    Value(i64),
    Tombstone,
}

impl Slot {
    fn value(self) -> Option<i64> {
        match self {
            Slot::Value(v) => Some(v),
            Slot::Tombstone => None,
        }
    }
}

/// A snapshot's state. A live one may have expired since: see
/// [`Store::is_expired`].
#[derive(Clone, Copy, Debug, PartialEq)]
enum Snap {
    Live(u64),
    Released,
    Expired,
}

struct Txn {
    start: u64,
    reads: BTreeSet<String>,
    writes: BTreeMap<String, Slot>,
    finished: bool,
}

pub struct Store {
    history: HashMap<String, Vec<(u64, Slot)>>,
    /// Every write as `(version, key)`, in version order (a commit's writes
    /// share a version); compaction drops the writes it drops from history.
    log: Vec<(u64, String)>,
    version: u64,
    /// Index `id - 1`.
    snapshots: Vec<Snap>,
    /// The snapshot age limit, once set.
    limit: Option<u64>,
    /// Index `id - 1`.
    txns: Vec<Txn>,
    /// For the oracle only: the current version and the pins of every
    /// compaction so far.
    compactions: Vec<(u64, BTreeSet<u64>)>,
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
        self.log.push((self.version, key.clone()));
        self.history.entry(key).or_default().push((self.version, slot));
        self.version
    }

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
}

impl VersionedKv for Store {
    fn new() -> Self {
        Store {
            history: HashMap::new(),
            log: Vec::new(),
            version: 0,
            snapshots: Vec::new(),
            limit: None,
            txns: Vec::new(),
            compactions: Vec::new(),
        }
    }

    fn put(&mut self, key: String, value: i64) -> u64 {
        self.write(key, Slot::Value(value))
    }

    fn get(&self, key: String) -> Option<i64> {
        self.get_at(key, self.version)
    }

    fn version(&self) -> u64 {
        self.version
    }

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
            Snap::Expired => Err(KvError::Expired),
            Snap::Live(pin) if self.is_expired(pin) => Err(KvError::Expired),
            Snap::Live(version) => Ok(self.get_at(key, version)),
        }
    }

    fn release(&mut self, snapshot: u64) -> bool {
        let Some(i) = snapshot.checked_sub(1).map(|i| i as usize).filter(|&i| i < self.snapshots.len()) else {
            return false;
        };
        match self.snapshots[i] {
            Snap::Live(pin) if !self.is_expired(pin) => {
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
                Snap::Live(pin) if !self.is_expired(pin) => Some(pin),
                _ => None,
            })
            .collect();
        pins.insert(self.version);
        pins.extend(self.txns.iter().filter(|t| !t.finished).map(|t| t.start));
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
        // The feed forgets the writes history forgot, or it would hold every
        // write ever made.
        let history = &self.history;
        self.log.retain(|(v, key)| history.get(key).is_some_and(|e| e.binary_search_by_key(v, |(w, _)| *w).is_ok()));
        self.log.shrink_to_fit();
        self.compactions.push((self.version, pins));
        dropped
    }

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
            self.log.push((self.version, key.clone()));
            self.history.entry(key).or_default().push((self.version, slot));
        }
        Ok(self.version)
    }

    fn abort(&mut self, txn: u64) -> Result<(), KvError> {
        self.live_txn(txn)?.finished = true;
        Ok(())
    }

    fn changes(&self, from: u64, to: u64) -> Vec<String> {
        if from >= to {
            return Vec::new();
        }
        let start = self.log.partition_point(|(v, _)| *v <= from);
        let end = self.log.partition_point(|(v, _)| *v <= to);
        let keys: BTreeSet<&String> = self.log[start..end].iter().map(|(_, k)| k).collect();
        keys.into_iter().cloned().collect()
    }

    fn set_snapshot_limit(&mut self, limit: u64) -> usize {
        // Expiry under the old limit is final, so settle it before the limit
        // changes; then whatever the new limit expires now is this call's.
        self.settle_expiry();
        self.limit = Some(limit);
        self.settle_expiry()
    }
}

/// After a compaction, a read at a version that no pin protected may see
/// either the old entry or nothing: the statement leaves it open. So is the
/// change feed over a range that starts before a compaction: the statements
/// say nothing of what compaction does to it (this store forgets the writes
/// compaction drops).
impl harness_contract::Oracle for Store {
    fn is_specified(&self, op: &str, args: &[Value]) -> bool {
        let version = match (op, args) {
            ("get_at", [_, Value::Int(v)]) | ("keys_at", [Value::Int(v)]) => *v as u64,
            ("changes", [Value::Int(from), Value::Int(to)]) => {
                return from >= to || self.compactions.iter().all(|(current, _)| *from as u64 >= *current);
            }
            _ => return true,
        };
        self.compactions.iter().all(|(current, pins)| version >= *current || pins.contains(&version))
    }
}

harness_contract::export!(versioned_kv, Store, oracle);
