//! Reference solution for `wal`.
//!
//! Three files: `wal`, the log; `checkpoint`, the latest snapshot; and
//! `checkpoint.tmp`, a snapshot being written. Log and snapshot use one
//! framing: `[length: u32 LE][crc32 of payload: u32 LE][payload]`.
//!
//! Every log record carries a sequence number, and the snapshot the number
//! of the last write it contains. Replay skips what the snapshot already
//! holds, so a log whose truncation was lost in a crash is harmless: the
//! `add`s it holds are not applied twice.

use std::collections::BTreeMap;

use harness_contract::wal::{Disk, Wal, WalError, crc32};

const LOG: &str = "wal";
const SNAPSHOT: &str = "checkpoint";
const TMP: &str = "checkpoint.tmp";

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
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn str(&mut self, n: usize) -> Option<String> {
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
}

/// A key's value and the LSN of the write that gave it.
#[derive(Clone, Copy)]
struct Entry {
    value: i64,
    lsn: u64,
}

type Map = BTreeMap<String, Entry>;

/// One logged write: `[seq u64][op u8][argument i64][key]`.
struct Record {
    seq: u64,
    op: u8,
    arg: i64,
    key: String,
}

impl Record {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(17 + self.key.len());
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.push(self.op);
        out.extend_from_slice(&self.arg.to_le_bytes());
        out.extend_from_slice(self.key.as_bytes());
        out
    }

    fn decode(payload: &[u8]) -> Option<Record> {
        let mut f = Fields(payload);
        let seq = f.u64()?;
        let op = f.u8()?;
        let arg = f.i64()?;
        let key = f.str(f.0.len())?;
        matches!(op, PUT | ADD | DELETE).then_some(Record { seq, op, arg, key })
    }

    /// Applies the record; returns the key's new value.
    /// The key's entry takes the record's sequence number as its LSN.
    fn apply(&self, map: &mut Map) -> Option<i64> {
        match self.op {
            PUT => {
                map.insert(self.key.clone(), Entry { value: self.arg, lsn: self.seq });
                Some(self.arg)
            }
            ADD => {
                let entry = map.entry(self.key.clone()).or_insert(Entry { value: 0, lsn: self.seq });
                entry.value = entry.value.wrapping_add(self.arg);
                entry.lsn = self.seq;
                Some(entry.value)
            }
            _ => {
                map.remove(&self.key);
                None
            }
        }
    }
}

/// A snapshot: `[seq u64][count u32]` then `[key length u32][key][value i64][lsn u64]`
/// per key. `seq` is the LSN of the latest write it holds, which may be a
/// delete no key remembers.
fn encode_snapshot(seq: u64, map: &Map) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&(map.len() as u32).to_le_bytes());
    for (key, entry) in map {
        out.extend_from_slice(&(key.len() as u32).to_le_bytes());
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(&entry.value.to_le_bytes());
        out.extend_from_slice(&entry.lsn.to_le_bytes());
    }
    out
}

fn decode_snapshot(payload: &[u8]) -> Option<(u64, Map)> {
    let mut f = Fields(payload);
    let seq = f.u64()?;
    let count = f.u32()?;
    let mut map = BTreeMap::new();
    for _ in 0..count {
        let len = f.u32()? as usize;
        let key = f.str(len)?;
        let value = f.i64()?;
        map.insert(key, Entry { value, lsn: f.u64()? });
    }
    Some((seq, map))
}

pub struct Store {
    disk: Disk,
    map: Map,
    /// Sequence number of the latest write applied: the LSN of the latest
    /// write the store holds.
    seq: u64,
    /// Sync after this many pending writes; 0: only on flush.
    every: u32,
    /// Writes appended but not synced yet.
    pending: u64,
    /// The deadline in ms for the oldest pending write; 0: none.
    within: u64,
    /// The `now_ms` of the latest tick since the store was opened.
    clock: u64,
    /// When the oldest pending write was made (meaningful while some are pending).
    oldest: u64,
    /// Whether the log's directory entry is durable.
    log_named: bool,
}

impl Store {
    /// Logs the write, then applies it: nothing changes if the log refuses it.
    fn write(&mut self, op: u8, arg: i64, key: String) -> Result<Option<i64>, WalError> {
        let record = Record { seq: self.seq + 1, op, arg, key };
        self.disk.append(LOG, &frame(&record.encode()))?;
        self.seq = record.seq;
        self.pending += 1;
        if self.every > 0 && self.pending >= u64::from(self.every) {
            self.sync_log();
        }
        if self.pending == 1 {
            // A new batch: its deadline runs from this, its oldest write.
            self.oldest = self.clock;
        }
        Ok(record.apply(&mut self.map))
    }

    fn sync_log(&mut self) {
        self.disk.sync(LOG);
        if !self.log_named {
            // A new file survives a power failure only with its directory entry.
            self.disk.sync_dir();
            self.log_named = true;
        }
        self.pending = 0;
    }
}

impl Wal for Store {
    fn open(mut disk: Disk) -> Self {
        let mut map = BTreeMap::new();
        let mut seq = 0;
        if let Some(bytes) = disk.read(SNAPSHOT)
            && let Some((payload, _)) = next_frame(&bytes, 0)
            && let Some((snapshot_seq, snapshot)) = decode_snapshot(payload)
        {
            seq = snapshot_seq;
            map = snapshot;
        }
        let log = disk.read(LOG).unwrap_or_default();
        let mut pos = 0;
        while let Some((payload, next)) = next_frame(&log, pos) {
            let Some(record) = Record::decode(payload) else { break };
            if record.seq > seq {
                record.apply(&mut map);
                seq = record.seq;
            }
            pos = next;
        }
        if pos < log.len() {
            // Cut the bad tail off, so that the next write follows the last good one.
            disk.truncate(LOG, pos as u64);
        }
        let log_named = disk.exists(LOG);
        Store { disk, map, seq, every: 1, pending: 0, log_named, within: 0, clock: 0, oldest: 0 }
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
        self.map.get(&key).map(|e| e.value)
    }

    fn items(&self) -> Vec<(String, i64)> {
        self.map.iter().map(|(k, e)| (k.clone(), e.value)).collect()
    }

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

    fn checkpoint(&mut self) -> Result<(), WalError> {
        // A leftover from a checkpoint that crashed must not be appended to.
        self.disk.remove(TMP);
        self.disk.append(TMP, &frame(&encode_snapshot(self.seq, &self.map)))?;
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

    fn lsn(&self) -> u64 {
        self.seq
    }

    fn lsn_of(&self, key: String) -> Option<u64> {
        self.map.get(&key).map(|e| e.lsn)
    }
}

harness_contract::export!(wal, Store);
