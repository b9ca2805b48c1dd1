//! A second correct solution of `versioned_kv`, of another design than the
//! reference, written from the statements: ordered maps instead of sorted
//! vectors. Each key has a `BTreeMap` from version to value (`None` for a
//! delete), so a read "as of" a version is `range(..=version).next_back()`,
//! and the keys themselves live in a `BTreeMap`, so `keys_at` comes out
//! sorted. Snapshots and transactions are kept only while live; an id is
//! known as issued by comparing it with a counter.
//!
//! The scale stress test runs it through every scale check next to the
//! reference: a correct design with other constant factors must pass.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use harness_contract::versioned_kv::{KvError, VersionedKv};

struct Txn {
    start: u64,
    reads: HashSet<String>,
    /// In order; the last write of a key wins.
    writes: Vec<(String, Option<i64>)>,
}

pub struct Store {
    keys: BTreeMap<String, BTreeMap<u64, Option<i64>>>,
    version: u64,
    snapshots: HashMap<u64, u64>,
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
        self.keys.entry(key).or_default().insert(self.version, value);
        self.version
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
            version: 0,
            snapshots: HashMap::new(),
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
        self.snapshots_made
    }

    fn snapshot_get(&self, snapshot: u64, key: String) -> Result<Option<i64>, KvError> {
        match self.snapshots.get(&snapshot) {
            Some(&version) => Ok(self.at(&key, version)),
            None if snapshot >= 1 && snapshot <= self.snapshots_made => Err(KvError::Released),
            None => Err(KvError::UnknownSnapshot),
        }
    }

    fn release(&mut self, snapshot: u64) -> bool {
        self.snapshots.remove(&snapshot).is_some()
    }

    fn compact(&mut self) -> usize {
        let mut pins: BTreeSet<u64> = self.snapshots.values().copied().collect();
        pins.insert(self.version);
        pins.extend(self.txns.values().map(|t| t.start));
        let mut dropped = 0;
        for entries in self.keys.values_mut() {
            let keep: HashSet<u64> =
                pins.iter().filter_map(|&pin| entries.range(..=pin).next_back().map(|(v, _)| *v)).collect();
            let before = entries.len();
            entries.retain(|v, _| keep.contains(v));
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
            self.keys.entry(key).or_default().insert(self.version, value);
        }
        Ok(self.version)
    }

    fn abort(&mut self, txn: u64) -> Result<(), KvError> {
        self.txn(txn)?;
        self.txns.remove(&txn);
        Ok(())
    }
}

harness_contract::export!(versioned_kv, Store);
