//! A second solution for `wal`, written from the statements alone, with a
//! different design from the reference:
//!
//! - records log the value a write produced (an after-image: `add` is
//!   logged as the sum it made), so replaying a record twice is harmless
//!   and no sequence numbers are needed;
//! - frames are `[crc32 of (length ++ payload): u32 BE][length: u32 BE][payload]`,
//!   so the checksum covers the length too;
//! - instead of a temporary file renamed over the snapshot, every checkpoint
//!   starts a new *generation* `g`: `snap.g` and `log.g`. Recovery loads the
//!   newest intact snapshot and replays only its own generation's log, then
//!   removes every other file;
//! - the store is a `HashMap`, sorted only when `items` asks.

use std::collections::HashMap;

use harness_contract::wal::{Disk, Wal, WalError, crc32, crc32_update};

fn snap_name(g: u64) -> String {
    format!("snap.{g}")
}

fn log_name(g: u64) -> String {
    format!("log.{g}")
}

/// `("snap", 3)` for `snap.3`.
fn parse_name(name: &str) -> Option<(&str, u64)> {
    let (kind, number) = name.split_once('.')?;
    Some((kind, number.parse().ok()?))
}

fn checksum(len: [u8; 4], payload: &[u8]) -> u32 {
    crc32_update(crc32(&len), payload)
}

fn frame(payload: &[u8]) -> Vec<u8> {
    let len = (payload.len() as u32).to_be_bytes();
    let mut out = Vec::with_capacity(8 + payload.len());
    out.extend_from_slice(&checksum(len, payload).to_be_bytes());
    out.extend_from_slice(&len);
    out.extend_from_slice(payload);
    out
}

/// Splits `bytes` into intact frames; returns them and the length of the
/// intact prefix. Stops at the first frame that is short or damaged.
fn frames(bytes: &[u8]) -> (Vec<&[u8]>, usize) {
    let mut out = Vec::new();
    let mut rest = bytes;
    let mut good = 0;
    while rest.len() >= 8 {
        let crc = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]);
        let len_bytes = [rest[4], rest[5], rest[6], rest[7]];
        let len = u32::from_be_bytes(len_bytes) as usize;
        if rest.len() - 8 < len {
            break;
        }
        let payload = &rest[8..8 + len];
        if checksum(len_bytes, payload) != crc {
            break;
        }
        out.push(payload);
        rest = &rest[8 + len..];
        good += 8 + len;
    }
    (out, good)
}

/// A record: the key's state after the write.
enum Image {
    Set(String, i64),
    Gone(String),
}

impl Image {
    fn encode(&self) -> Vec<u8> {
        match self {
            Image::Set(key, value) => {
                let mut out = vec![b'S'];
                out.extend_from_slice(&value.to_be_bytes());
                out.extend_from_slice(key.as_bytes());
                out
            }
            Image::Gone(key) => {
                let mut out = vec![b'D'];
                out.extend_from_slice(key.as_bytes());
                out
            }
        }
    }

    fn decode(payload: &[u8]) -> Option<Image> {
        match payload.split_first()? {
            (b'S', rest) if rest.len() >= 8 => {
                let value = i64::from_be_bytes(rest[..8].try_into().ok()?);
                Some(Image::Set(String::from_utf8(rest[8..].to_vec()).ok()?, value))
            }
            (b'D', rest) => Some(Image::Gone(String::from_utf8(rest.to_vec()).ok()?)),
            _ => None,
        }
    }

    /// Applies the image as the write numbered `lsn`.
    fn apply(self, map: &mut Entries, lsn: u64) {
        match self {
            Image::Set(key, value) => {
                map.insert(key, (value, lsn));
            }
            Image::Gone(key) => {
                map.remove(&key);
            }
        }
    }
}

/// Each key's value and the number of the write that gave it.
type Entries = HashMap<String, (i64, u64)>;

/// `[latest lsn u64]` then `[key length u32][key][value i64][lsn u64]` per key.
fn encode_snapshot(lsn: u64, map: &Entries) -> Vec<u8> {
    let mut out = lsn.to_be_bytes().to_vec();
    for (key, (value, at)) in map {
        out.extend_from_slice(&(key.len() as u32).to_be_bytes());
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(&value.to_be_bytes());
        out.extend_from_slice(&at.to_be_bytes());
    }
    out
}

fn decode_snapshot(payload: &[u8]) -> Option<(u64, Entries)> {
    let lsn = u64::from_be_bytes(payload.get(..8)?.try_into().ok()?);
    let mut payload = &payload[8..];
    let mut map = HashMap::new();
    while !payload.is_empty() {
        let len = u32::from_be_bytes(payload.get(..4)?.try_into().ok()?) as usize;
        let key = String::from_utf8(payload.get(4..4 + len)?.to_vec()).ok()?;
        let value = i64::from_be_bytes(payload.get(4 + len..12 + len)?.try_into().ok()?);
        let at = u64::from_be_bytes(payload.get(12 + len..20 + len)?.try_into().ok()?);
        map.insert(key, (value, at));
        payload = &payload[20 + len..];
    }
    Some((lsn, map))
}

/// Reads a snapshot file: exactly one intact frame.
fn read_snapshot(disk: &Disk, name: &str) -> Option<(u64, Entries)> {
    let bytes = disk.read(name)?;
    let (found, good) = frames(&bytes);
    if found.len() != 1 || good != bytes.len() {
        return None;
    }
    decode_snapshot(found[0])
}

pub struct Alt {
    disk: Disk,
    map: Entries,
    /// The number of the latest write held: the snapshot's, plus one per
    /// record of this generation's log (records carry no number).
    lsn: u64,
    generation: u64,
    every: u32,
    unsynced: u64,
    /// Whether the current log file's directory entry is known durable.
    log_entry_durable: bool,
    /// The deadline, if one is set.
    deadline: Option<u64>,
    now: u64,
    /// When the current batch of pending writes began: its oldest write.
    batch_since: Option<u64>,
}

impl Alt {
    fn log(&self) -> String {
        log_name(self.generation)
    }

    fn make_durable(&mut self) {
        let log = self.log();
        self.disk.sync(&log);
        if !self.log_entry_durable {
            self.disk.sync_dir();
            self.log_entry_durable = true;
        }
        self.unsynced = 0;
        self.batch_since = None;
    }

    fn record(&mut self, image: Image) -> Result<(), WalError> {
        let bytes = frame(&image.encode());
        let log = self.log();
        if !self.disk.exists(&log) {
            self.log_entry_durable = false;
        }
        self.disk.append(&log, &bytes)?;
        self.lsn += 1;
        image.apply(&mut self.map, self.lsn);
        self.batch_since.get_or_insert(self.now);
        self.unsynced += 1;
        if self.every != 0 && self.unsynced >= self.every as u64 {
            self.make_durable();
        }
        Ok(())
    }
}

impl Wal for Alt {
    fn open(mut disk: Disk) -> Self {
        // The newest generation whose snapshot is intact; generation 0 has
        // an implicit empty one.
        let mut snapshots: Vec<u64> = disk
            .list()
            .iter()
            .filter_map(|n| parse_name(n))
            .filter(|(kind, _)| *kind == "snap")
            .map(|(_, g)| g)
            .collect();
        snapshots.sort_unstable_by(|a, b| b.cmp(a));
        let (generation, (mut lsn, mut map)) = snapshots
            .into_iter()
            .find_map(|g| read_snapshot(&disk, &snap_name(g)).map(|m| (g, m)))
            .unwrap_or((0, (0, HashMap::new())));

        let log = log_name(generation);
        if let Some(bytes) = disk.read(&log) {
            let (found, mut good) = frames(&bytes);
            for (i, payload) in found.iter().enumerate() {
                match Image::decode(payload) {
                    Some(image) => {
                        lsn += 1;
                        image.apply(&mut map, lsn);
                    }
                    None => {
                        good = found[..i].iter().map(|p| 8 + p.len()).sum();
                        break;
                    }
                }
            }
            if good < bytes.len() {
                disk.truncate(&log, good as u64);
            }
        }
        // Everything of other generations is a leftover.
        let keep = [snap_name(generation), log.clone()];
        for name in disk.list() {
            if !keep.contains(&name) {
                disk.remove(&name);
            }
        }
        let log_entry_durable = disk.exists(&log);
        Alt {
            disk,
            map,
            lsn,
            generation,
            every: 1,
            unsynced: 0,
            log_entry_durable,
            deadline: None,
            now: 0,
            batch_since: None,
        }
    }

    fn put(&mut self, key: String, value: i64) -> Result<(), WalError> {
        self.record(Image::Set(key, value))
    }

    fn add(&mut self, key: String, delta: i64) -> Result<i64, WalError> {
        let value = self.map.get(&key).map_or(0, |e| e.0).wrapping_add(delta);
        self.record(Image::Set(key, value))?;
        Ok(value)
    }

    fn delete(&mut self, key: String) -> Result<bool, WalError> {
        if !self.map.contains_key(&key) {
            return Ok(false);
        }
        self.record(Image::Gone(key))?;
        Ok(true)
    }

    fn get(&self, key: String) -> Option<i64> {
        self.map.get(&key).map(|e| e.0)
    }

    fn items(&self) -> Vec<(String, i64)> {
        let mut all: Vec<(String, i64)> = self.map.iter().map(|(k, e)| (k.clone(), e.0)).collect();
        all.sort();
        all
    }

    fn sync_every(&mut self, n: u32) {
        self.every = n;
    }

    fn flush(&mut self) -> u64 {
        let n = self.unsynced;
        if n != 0 {
            self.make_durable();
        }
        n
    }

    fn pending(&self) -> u64 {
        self.unsynced
    }

    fn checkpoint(&mut self) -> Result<(), WalError> {
        let next = self.generation + 1;
        let snap = snap_name(next);
        // A crashed checkpoint may have left a piece of this file.
        self.disk.remove(&snap);
        self.disk.append(&snap, &frame(&encode_snapshot(self.lsn, &self.map)))?;
        self.disk.sync(&snap);
        // From here on recovery finds the new generation.
        self.disk.sync_dir();
        let old_log = self.log();
        self.disk.remove(&old_log);
        self.disk.remove(&snap_name(self.generation));
        self.disk.sync_dir();
        self.generation = next;
        self.log_entry_durable = false;
        self.unsynced = 0;
        self.batch_since = None;
        Ok(())
    }

    fn sync_within(&mut self, ms: u64) {
        self.deadline = (ms > 0).then_some(ms);
    }

    fn tick(&mut self, now_ms: u64) -> u64 {
        self.now = now_ms;
        let (Some(ms), Some(since)) = (self.deadline, self.batch_since) else {
            return 0;
        };
        // Compared without adding, so that nothing overflows.
        if now_ms < since || now_ms - since < ms {
            return 0;
        }
        let n = self.unsynced;
        self.make_durable();
        n
    }

    fn lsn(&self) -> u64 {
        self.lsn
    }

    fn lsn_of(&self, key: String) -> Option<u64> {
        self.map.get(&key).map(|e| e.1)
    }
}

harness_contract::export!(wal, Alt);
