//! A second correct solution of `versioned_kv`, of another design than the
//! reference, written from the statements: ordered maps instead of sorted
//! vectors. Each key has a `BTreeMap` from version to value (`None` for a
//! delete), so a read "as of" a version is `range(..=version).next_back()`,
//! and the keys themselves live in a `BTreeMap`, so `keys_at` comes out
//! sorted. Snapshots and transactions are kept only while live; an id is
//! known as issued by comparing it with a counter.
//!
//! The change feed is a `BTreeMap` from version to the keys written at it,
//! read with a range. Snapshot expiry is eager, where the reference's is
//! lazy: live snapshots are also indexed by pin, and every write pops the
//! ones that fell too far behind from the front of that index.
//!
//! The scale stress test runs it through every scale check next to the
//! reference: a correct design with other constant factors must pass.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::Bound;

use harness_contract::versioned_kv::{KvError, VersionedKv};

struct Txn {
    start: u64,
    reads: HashSet<String>,
    /// In order; the last write of a key wins.
    writes: Vec<(String, Option<i64>)>,
}

pub struct Store {
    keys: BTreeMap<String, BTreeMap<u64, Option<i64>>>,
    /// Version → the keys written at it.
    written: BTreeMap<u64, Vec<String>>,
    version: u64,
    /// Live snapshots: id → pin, and the same as (pin, id) in pin order.
    snapshots: HashMap<u64, u64>,
    by_pin: BTreeSet<(u64, u64)>,
    expired: HashSet<u64>,
    limit: Option<u64>,
    snapshots_made: u64,
    txns: HashMap<u64, Txn>,
    txns_made: u64,
}

impl Store {
    fn at(&self, key: &str, version: u64) -> Option<i64> {
        self.keys.get(key)?.range(..=version).next_back().and_then(|(_, v)| *v)
    }

    fn write(&mut self, key: String, value: Option<i64>) -> u64 {
        self.version += 1;
        self.written.entry(self.version).or_default().push(key.clone());
        self.keys.entry(key).or_default().insert(self.version, value);
        self.expire();
        self.version
    }

    /// Expires every live snapshot older than the limit; returns how many.
    fn expire(&mut self) -> usize {
        let Some(limit) = self.limit else { return 0 };
        let mut count = 0;
        while let Some(&(pin, id)) = self.by_pin.first() {
            if self.version - pin <= limit {
                break;
            }
            self.by_pin.pop_first();
            self.snapshots.remove(&id);
            self.expired.insert(id);
            count += 1;
        }
        count
    }

    fn txn(&mut self, id: u64) -> Result<&mut Txn, KvError> {
        if id == 0 || id > self.txns_made {
            return Err(KvError::UnknownTxn);
        }
        self.txns.get_mut(&id).ok_or(KvError::Finished)
    }
}

impl VersionedKv for Store {
    fn new() -> Self {
        Store {
            keys: BTreeMap::new(),
            written: BTreeMap::new(),
            version: 0,
            snapshots: HashMap::new(),
            by_pin: BTreeSet::new(),
            expired: HashSet::new(),
            limit: None,
            snapshots_made: 0,
            txns: HashMap::new(),
            txns_made: 0,
        }
    }

    fn put(&mut self, key: String, value: i64) -> u64 {
        self.write(key, Some(value))
    }

    fn get(&self, key: String) -> Option<i64> {
        self.at(&key, self.version)
    }

    fn version(&self) -> u64 {
        self.version
    }

    fn get_at(&self, key: String, version: u64) -> Option<i64> {
        self.at(&key, version)
    }

    fn delete(&mut self, key: String) -> u64 {
        self.write(key, None)
    }

    fn keys_at(&self, version: u64) -> Vec<String> {
        self.keys.keys().filter(|k| self.at(k, version).is_some()).cloned().collect()
    }

    fn snapshot(&mut self) -> u64 {
        self.snapshots_made += 1;
        self.snapshots.insert(self.snapshots_made, self.version);
        self.by_pin.insert((self.version, self.snapshots_made));
        self.snapshots_made
    }

    fn snapshot_get(&self, snapshot: u64, key: String) -> Result<Option<i64>, KvError> {
        match self.snapshots.get(&snapshot) {
            Some(&version) => Ok(self.at(&key, version)),
            None if self.expired.contains(&snapshot) => Err(KvError::Expired),
            None if snapshot >= 1 && snapshot <= self.snapshots_made => Err(KvError::Released),
            None => Err(KvError::UnknownSnapshot),
        }
    }

    fn release(&mut self, snapshot: u64) -> bool {
        match self.snapshots.remove(&snapshot) {
            Some(pin) => self.by_pin.remove(&(pin, snapshot)),
            None => false,
        }
    }

    fn compact(&mut self) -> usize {
        let mut pins: BTreeSet<u64> = self.snapshots.values().copied().collect();
        pins.insert(self.version);
        pins.extend(self.txns.values().map(|t| t.start));
        let mut dropped = 0;
        for (key, entries) in self.keys.iter_mut() {
            let keep: HashSet<u64> =
                pins.iter().filter_map(|&pin| entries.range(..=pin).next_back().map(|(v, _)| *v)).collect();
            let before = entries.len();
            let written = &mut self.written;
            entries.retain(|v, _| {
                let kept = keep.contains(v);
                if !kept {
                    // The feed forgets what history forgets.
                    let keys = written.get_mut(v).expect("every write is in the feed");
                    keys.retain(|k| k != key);
                    if keys.is_empty() {
                        written.remove(v);
                    }
                }
                kept
            });
            dropped += before - entries.len();
        }
        dropped
    }

    fn begin(&mut self) -> u64 {
        self.txns_made += 1;
        let start = self.version;
        self.txns.insert(self.txns_made, Txn { start, reads: HashSet::new(), writes: Vec::new() });
        self.txns_made
    }

    fn txn_get(&mut self, txn: u64, key: String) -> Result<Option<i64>, KvError> {
        let t = self.txn(txn)?;
        t.reads.insert(key.clone());
        if let Some((_, v)) = t.writes.iter().rev().find(|(k, _)| *k == key) {
            return Ok(*v);
        }
        let start = t.start;
        Ok(self.at(&key, start))
    }

    fn txn_put(&mut self, txn: u64, key: String, value: i64) -> Result<(), KvError> {
        self.txn(txn)?.writes.push((key, Some(value)));
        Ok(())
    }

    fn txn_delete(&mut self, txn: u64, key: String) -> Result<(), KvError> {
        self.txn(txn)?.writes.push((key, None));
        Ok(())
    }

    fn commit(&mut self, txn: u64) -> Result<u64, KvError> {
        self.txn(txn)?;
        let t = self.txns.remove(&txn).expect("checked above");
        let written_after = |k: &String| {
            self.keys.get(k).and_then(|m| m.keys().next_back()).is_some_and(|&last| last > t.start)
        };
        if t.reads.iter().any(written_after) {
            return Err(KvError::Conflict);
        }
        if t.writes.is_empty() {
            return Ok(self.version);
        }
        self.version += 1;
        for (key, value) in t.writes {
            let keys = self.written.entry(self.version).or_default();
            if !keys.contains(&key) {
                keys.push(key.clone());
            }
            self.keys.entry(key).or_default().insert(self.version, value);
        }
        self.expire();
        Ok(self.version)
    }

    fn abort(&mut self, txn: u64) -> Result<(), KvError> {
        self.txn(txn)?;
        self.txns.remove(&txn);
        Ok(())
    }

    fn changes(&self, from: u64, to: u64) -> Vec<String> {
        // `BTreeMap::range` panics on a range that starts after it ends.
        if from >= to {
            return Vec::new();
        }
        let keys: BTreeSet<&String> =
            self.written.range((Bound::Excluded(from), Bound::Included(to))).flat_map(|(_, keys)| keys).collect();
        keys.into_iter().cloned().collect()
    }

    fn set_snapshot_limit(&mut self, limit: u64) -> usize {
        self.limit = Some(limit);
        self.expire()
    }
}

harness_contract::export!(versioned_kv, Store);
