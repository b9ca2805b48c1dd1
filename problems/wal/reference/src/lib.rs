//! Reference solution for `wal`.
//!
// @gate 3
//! Three files: `wal`, the log; `checkpoint`, the latest snapshot; and
//! `checkpoint.tmp`, a snapshot being written. Log and snapshot use one
//! framing: `[length: u32 LE][crc32 of payload: u32 LE][payload]`.
// @else
//~ //! One file, `wal`: the log. Every record is framed as
//~ //! `[length: u32 LE][crc32 of payload: u32 LE][payload]`.
// @end
// @gate 4,6
//!
//! Every log record carries a sequence number, and the snapshot the number
//! of the last write it contains.
// @end
// @gate 4
//! Replay skips what the snapshot already holds, so a log whose truncation
//! was lost in a crash is harmless: the `add`s it holds are not applied
//! twice.
// @end

use std::collections::BTreeMap;

use harness_contract::wal::{Disk, Wal, WalError, crc32};

const LOG: &str = "wal";
const SNAPSHOT: &str = "checkpoint"; // @gate 3
const TMP: &str = "checkpoint.tmp"; // @gate 3

/// Length and checksum in front of every payload.
const HEADER: usize = 8;

const PUT: u8 = 1;
const ADD: u8 = 2;
const DELETE: u8 = 3;

/// A framed payload: length, checksum, bytes.
fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The intact frame at `pos`: its payload and where the next one starts.
/// `None` for each way a tail can be bad: no complete header, fewer bytes
/// than the length says, or a checksum that does not match.
fn next_frame(buf: &[u8], pos: usize) -> Option<(&[u8], usize)> {
    let header = buf.get(pos..pos + HEADER)?;
    let len = u32::from_le_bytes(header[..4].try_into().unwrap()) as usize;
    let crc = u32::from_le_bytes(header[4..].try_into().unwrap());
    let end = pos + HEADER + len;
    let payload = buf.get(pos + HEADER..end)?;
    if crc32(payload) != crc {
        return None;
    }
    Some((payload, end))
}

/// Reads fixed-size little-endian fields off the front of a payload.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    // @gate 3
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    // @end
    // @gate 4,6
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    // @end
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn str(&mut self, n: usize) -> Option<String> {
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
}

// @gate 6
/// A key's value and the LSN of the write that gave it.
#[derive(Clone, Copy)]
struct Entry {
    value: i64,
    lsn: u64,
}

type Map = BTreeMap<String, Entry>;
// @else
//~ type Map = BTreeMap<String, i64>;
// @end

// @gate 4,6
/// One logged write: `[seq u64][op u8][argument i64][key]`.
// @else
//~ /// One logged write: `[op u8][argument i64][key]`.
// @end
struct Record {
    seq: u64, // @gate 4,6
    op: u8,
    arg: i64,
    key: String,
}

impl Record {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.seq.to_le_bytes()); // @gate 4,6
        out.push(self.op);
        out.extend_from_slice(&self.arg.to_le_bytes());
        out.extend_from_slice(self.key.as_bytes());
        out
    }

    fn decode(payload: &[u8]) -> Option<Record> {
        let mut f = Fields(payload);
        let seq = f.u64()?; // @gate 4,6
        let op = f.u8()?;
        let arg = f.i64()?;
        let key = f.str(f.0.len())?;
        // @gate 4,6
        matches!(op, PUT | ADD | DELETE).then_some(Record { seq, op, arg, key })
        // @else
        //~ matches!(op, PUT | ADD | DELETE).then_some(Record { op, arg, key })
        // @end
    }

    /// Applies the record; returns the key's new value.
    /// The key's entry takes the record's sequence number as its LSN. // @gate 6
    fn apply(&self, map: &mut Map) -> Option<i64> {
        match self.op {
            PUT => {
                // @gate 6
                map.insert(self.key.clone(), Entry { value: self.arg, lsn: self.seq });
                // @else
                //~ map.insert(self.key.clone(), self.arg);
                // @end
                Some(self.arg)
            }
            ADD => {
                // @gate 6
                let entry = map.entry(self.key.clone()).or_insert(Entry { value: 0, lsn: self.seq });
                entry.value = entry.value.wrapping_add(self.arg);
                entry.lsn = self.seq;
                Some(entry.value)
                // @else
                //~ let value = map.entry(self.key.clone()).or_insert(0);
                //~ *value = value.wrapping_add(self.arg);
                //~ Some(*value)
                // @end
            }
            _ => {
                map.remove(&self.key);
                None
            }
        }
    }
}

// @gate 3
// @gate 4,6
/// A snapshot's sequence number and store.
fn decode_snapshot(payload: &[u8]) -> Option<(u64, Map)> {
    let mut f = Fields(payload);
    let seq = f.u64()?;
    let count = f.u32()?;
    let mut map = BTreeMap::new();
    for _ in 0..count {
        let len = f.u32()? as usize;
        let key = f.str(len)?;
        let value = f.i64()?;
        // @gate 6
        map.insert(key, Entry { value, lsn: f.u64()? });
        // @else
        //~ map.insert(key, value);
        // @end
    }
    Some((seq, map))
}
// @else
//~ fn decode_snapshot(payload: &[u8]) -> Option<Map> {
//~     let mut f = Fields(payload);
//~     let count = f.u32()?;
//~     let mut map = BTreeMap::new();
//~     for _ in 0..count {
//~         let len = f.u32()? as usize;
//~         let key = f.str(len)?;
//~         map.insert(key, f.i64()?);
//~     }
//~     Some(map)
//~ }
// @end
// @end

pub struct Store {
    disk: Disk,
    map: Map,
    // @gate 4,6
    /// Sequence number of the latest write the store holds.
    /// It is that write's LSN. // @gate 6
    seq: u64,
    // @end
    // @gate 2
    /// Sync after this many pending writes; 0: only on flush.
    every: u32,
    /// Writes appended but not synced yet.
    pending: u64,
    // @end
    // @gate 5
    /// The deadline in ms for the oldest pending write; 0: none.
    within: u64,
    /// The `now_ms` of the latest tick since the store was opened.
    clock: u64,
    /// When the oldest pending write was made (meaningful while some are pending).
    oldest: u64,
    // @end
    // @gate 2
    /// Whether the log's directory entry is durable.
    log_named: bool,
    // @end
}

impl Store {
    /// Logs the write, then applies it: nothing changes if the log refuses it.
    fn write(&mut self, op: u8, arg: i64, key: String) -> Result<Option<i64>, WalError> {
        // @gate 4,6
        let record = Record { seq: self.seq + 1, op, arg, key };
        // @else
        //~ let record = Record { op, arg, key };
        // @end
        self.disk.append(LOG, &frame(&record.encode()))?;
        // @gate 4,6
        self.seq = record.seq;
        // @end
        // @gate 2
        self.pending += 1;
        if self.every > 0 && self.pending >= u64::from(self.every) {
            self.sync_log();
        }
        // @end
        // @gate 5
        if self.pending == 1 {
            // A new batch: its deadline runs from this, its oldest write.
            self.oldest = self.clock;
        }
        // @end
        Ok(record.apply(&mut self.map))
    }
    // @gate 2

    fn sync_log(&mut self) {
        self.disk.sync(LOG);
        if !self.log_named {
            // A new file survives a power failure only with its directory entry.
            self.disk.sync_dir();
            self.log_named = true;
        }
        self.pending = 0;
    }
    // @end
    // @gate 3

    // @gate 4,6
    /// The snapshot of the store: `[seq u64][count u32]`, then per key
    // @else
    //~ /// The snapshot of the store: `[count u32]`, then per key
    // @end
    // @gate 6
    /// `[key length u32][key][value i64][lsn u64]`. `seq` is the LSN of the
    /// latest write it holds, which may be a delete no key remembers.
    // @else
    //~ /// `[key length u32][key][value i64]`.
    // @end
    /// `seq` is the sequence number of the latest write it holds. // @gate 4
    fn encode_snapshot(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.seq.to_le_bytes()); // @gate 4,6
        out.extend_from_slice(&(self.map.len() as u32).to_le_bytes());
        // @gate 6
        for (key, entry) in &self.map {
            out.extend_from_slice(&(key.len() as u32).to_le_bytes());
            out.extend_from_slice(key.as_bytes());
            out.extend_from_slice(&entry.value.to_le_bytes());
            out.extend_from_slice(&entry.lsn.to_le_bytes());
        }
        // @else
        //~ for (key, value) in &self.map {
        //~     out.extend_from_slice(&(key.len() as u32).to_le_bytes());
        //~     out.extend_from_slice(key.as_bytes());
        //~     out.extend_from_slice(&value.to_le_bytes());
        //~ }
        // @end
        out
    }
    // @end
}

impl Wal for Store {
    fn open(mut disk: Disk) -> Self {
        let mut map = BTreeMap::new();
        // @gate 4,6
        let mut seq = 0;
        // @end
        // @gate 3
        // @gate 4,6
        if let Some(bytes) = disk.read(SNAPSHOT)
            && let Some((payload, _)) = next_frame(&bytes, 0)
            && let Some((snapshot_seq, snapshot)) = decode_snapshot(payload)
        {
            seq = snapshot_seq;
            map = snapshot;
        }
        // @else
        //~ if let Some(bytes) = disk.read(SNAPSHOT)
        //~     && let Some((payload, _)) = next_frame(&bytes, 0)
        //~     && let Some(snapshot) = decode_snapshot(payload)
        //~ {
        //~     map = snapshot;
        //~ }
        // @end
        // @end
        let log = disk.read(LOG).unwrap_or_default();
        let mut pos = 0;
        while let Some((payload, next)) = next_frame(&log, pos) {
            let Some(record) = Record::decode(payload) else { break };
            // @gate 4
            if record.seq <= seq {
                // The snapshot holds it already: a checkpoint crashed before
                // it emptied the log.
                pos = next;
                continue;
            }
            // @end
            record.apply(&mut map);
            // @gate 4,6
            seq = record.seq;
            // @end
            pos = next;
        }
        if pos < log.len() {
            // Cut the bad tail off, so that the next write follows the last good one.
            disk.truncate(LOG, pos as u64);
        }
        // @gate 2
        let log_named = disk.exists(LOG);
        Store {
            disk,
            map,
            seq,        // @gate 4,6
            every: 1,   // @gate 2
            pending: 0, // @gate 2
            within: 0,  // @gate 5
            clock: 0,   // @gate 5
            oldest: 0,  // @gate 5
            log_named,  // @gate 2
        }
        // @else
        //~ Store { disk, map }
        // @end
    }

    fn put(&mut self, key: String, value: i64) -> Result<(), WalError> {
        self.write(PUT, value, key).map(|_| ())
    }

    fn add(&mut self, key: String, delta: i64) -> Result<i64, WalError> {
        Ok(self.write(ADD, delta, key)?.unwrap_or(0))
    }

    fn delete(&mut self, key: String) -> Result<bool, WalError> {
        if !self.map.contains_key(&key) {
            return Ok(false);
        }
        self.write(DELETE, 0, key)?;
        Ok(true)
    }

    fn get(&self, key: String) -> Option<i64> {
        // @gate 6
        self.map.get(&key).map(|e| e.value)
        // @else
        //~ self.map.get(&key).copied()
        // @end
    }

    fn items(&self) -> Vec<(String, i64)> {
        // @gate 6
        self.map.iter().map(|(k, e)| (k.clone(), e.value)).collect()
        // @else
        //~ self.map.iter().map(|(k, v)| (k.clone(), *v)).collect()
        // @end
    }
    // @gate 2

    fn sync_every(&mut self, n: u32) {
        self.every = n;
    }

    fn flush(&mut self) -> u64 {
        let made_durable = self.pending;
        if made_durable > 0 {
            self.sync_log();
        }
        made_durable
    }

    fn pending(&self) -> u64 {
        self.pending
    }
    // @end
    // @gate 3

    fn checkpoint(&mut self) -> Result<(), WalError> {
        // A leftover from a checkpoint that crashed must not be appended to.
        self.disk.remove(TMP);
        self.disk.append(TMP, &frame(&self.encode_snapshot()))?;
        // The snapshot's bytes must be durable before its name is.
        self.disk.sync(TMP);
        self.disk.rename(TMP, SNAPSHOT);
        // The rename must be durable before the log it replaces is emptied.
        self.disk.sync_dir();
        self.log_named = self.disk.exists(LOG);
        self.disk.truncate(LOG, 0);
        self.disk.sync(LOG);
        self.pending = 0;
        Ok(())
    }
    // @end
    // @gate 5

    fn sync_within(&mut self, ms: u64) {
        self.within = ms;
    }

    fn tick(&mut self, now_ms: u64) -> u64 {
        self.clock = now_ms;
        if self.within == 0 || self.pending == 0 {
            return 0;
        }
        // A deadline past u64::MAX never comes.
        match self.oldest.checked_add(self.within) {
            Some(due) if now_ms >= due => {}
            _ => return 0,
        }
        let made_durable = self.pending;
        self.sync_log();
        made_durable
    }
    // @end
    // @gate 6

    fn lsn(&self) -> u64 {
        self.seq
    }

    fn lsn_of(&self, key: String) -> Option<u64> {
        self.map.get(&key).map(|e| e.lsn)
    }
    // @end
}

harness_contract::export!(wal, Store);
