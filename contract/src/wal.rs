//! `wal`: a key-value store made durable by a write-ahead log.
//!
//! Implement [`Wal`] for your type and export it:
//!
//! ```ignore
//! use harness_contract::wal::{Disk, Wal, WalError, crc32};
//! struct Store { disk: Disk /* ... */ }
//! impl Wal for Store { /* ... */ }
//! harness_contract::export!(wal, Store);
//! ```
//!
//! Your store does not own its storage. The harness creates a simulated
//! [`Disk`] (a directory of files) and hands it to [`Wal::open`]; the disk
//! outlives your store. The harness's own operations (`restart`, `crash`,
//! `corrupt`, `power_loss`, `disk_full`, `crash_checkpoint`) are implemented
//! here, not by you: they throw your store away, decide which bytes survive,
//! damage them, and open a fresh store on what is left. Only the recovered
//! state is ever compared, never the bytes, so the file names and the record
//! format are yours to choose.
//!
//! Methods of later gates have default bodies, so a solution compiles before
//! it implements them; calling one is judged `not_implemented`.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::rc::Rc;

use crate::runtime::{Args, CallError};
use crate::{Value, Wire};

crate::error_kinds! {
    /// Why an operation was refused.
    pub enum WalError {
        /// Gate 2: the disk is full, so the record could not be appended.
        DiskFull = "disk_full",
    }
}

// ---------------------------------------------------------------- CRC-32

/// The table of the reflected CRC-32 (polynomial 0xEDB88320), built at
/// compile time.
const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

/// The CRC-32 of `bytes` (the common one: zlib, PNG, Ethernet; reflected
/// polynomial 0xEDB88320, initial value and final XOR 0xFFFFFFFF).
/// `crc32(b"123456789") == 0xCBF4_3926`.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32_update(0, bytes)
}

/// Extends a CRC-32 over more bytes:
/// `crc32_update(crc32(a), b) == crc32(&[a, b].concat())`.
pub fn crc32_update(crc: u32, bytes: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in bytes {
        c = CRC_TABLE[((c ^ b as u32) & 0xFF) as usize] ^ (c >> 8);
    }
    !c
}

// ---------------------------------------------------------------- the disk

/// What survives of a file's contents when the power fails: a prefix of
/// what it holds now, or (after a truncation that was not synced yet) the
/// contents it had at its last sync.
#[derive(Clone)]
enum Durable {
    Prefix(usize),
    Copy(Vec<u8>),
}

struct Inode {
    data: Vec<u8>,
    durable: Durable,
}

impl Inode {
    fn durable_bytes(&self) -> Vec<u8> {
        match &self.durable {
            Durable::Prefix(n) => self.data[..*n].to_vec(),
            Durable::Copy(v) => v.clone(),
        }
    }
}

type Node = Rc<RefCell<Inode>>;

fn new_node(data: Vec<u8>) -> Node {
    let n = data.len();
    Rc::new(RefCell::new(Inode { data, durable: Durable::Prefix(n) }))
}

/// One change to the disk, with what is needed to undo it: a crash is
/// computed after the fact by undoing what happened after the crash point.
enum Event {
    Append { name: String, node: Node, created: bool, old_len: usize, len: usize, at: Option<usize> },
    Truncate { node: Node, removed: Vec<u8>, old_durable: Durable },
    Sync { node: Node, old_durable: Durable },
    Rename { from: String, to: String, moved: Node, replaced: Option<Node> },
    Remove { name: String, node: Node },
    SyncDir { old: BTreeMap<String, Node> },
    Nothing,
}

/// Which kind of call of the candidate's store is running.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Call {
    Idle,
    /// `put`, `add` or `delete`: a crash target whose bytes are a write.
    Write,
    /// `checkpoint`: a crash target.
    Checkpoint,
    /// Any other call of the store.
    Other,
}

/// The disk's history since the start of the latest put, add, delete or
/// checkpoint (the crash target).
struct Journal {
    events: Vec<Event>,
    /// Bytes appended by the target call itself.
    target_bytes: usize,
    target_running: bool,
}

/// The bytes one write appended, for `corrupt`.
struct Write {
    ranges: Vec<(Node, usize, usize)>,
    alive: bool,
}

/// How many of the latest writes `corrupt` can reach.
const TRACKED_WRITES: usize = 64;

/// A file name → contents image: what a disk holds after a crash.
type Image = BTreeMap<String, Vec<u8>>;

struct Machine {
    dir: BTreeMap<String, Node>,
    durable_dir: BTreeMap<String, Node>,
    /// Set when the store using this disk has crashed: everything it does
    /// from then on (say, in its `Drop`) is lost.
    dead: bool,
    full: bool,
    call: Call,
    journal: Option<Journal>,
    writes: VecDeque<Write>,
    current: Vec<(Node, usize, usize)>,
}

impl Machine {
    fn from_image(image: Image) -> Self {
        let dir: BTreeMap<String, Node> = image.into_iter().map(|(name, data)| (name, new_node(data))).collect();
        Machine {
            durable_dir: dir.clone(),
            dir,
            dead: false,
            full: false,
            call: Call::Idle,
            journal: None,
            writes: VecDeque::new(),
            current: Vec::new(),
        }
    }

    fn begin(&mut self, call: Call) {
        self.call = call;
        if matches!(call, Call::Write | Call::Checkpoint) {
            self.journal = Some(Journal { events: Vec::new(), target_bytes: 0, target_running: true });
            self.current.clear();
        }
    }

    fn end(&mut self) {
        if self.call == Call::Write && !self.current.is_empty() {
            let ranges = std::mem::take(&mut self.current);
            self.writes.push_back(Write { ranges, alive: true });
            if self.writes.len() > TRACKED_WRITES {
                self.writes.pop_front();
            }
        }
        if let Some(j) = &mut self.journal {
            j.target_running = false;
        }
        self.call = Call::Idle;
    }

    fn record(&mut self, event: Event) {
        if let Some(j) = &mut self.journal {
            j.events.push(event);
        }
    }

    fn append(&mut self, name: &str, bytes: &[u8]) -> Result<(), WalError> {
        if self.dead {
            return Ok(());
        }
        if self.full {
            return Err(WalError::DiskFull);
        }
        let (node, created) = match self.dir.get(name) {
            Some(node) => (node.clone(), false),
            None => {
                let node = new_node(Vec::new());
                self.dir.insert(name.to_string(), node.clone());
                (node, true)
            }
        };
        let old_len = node.borrow().data.len();
        node.borrow_mut().data.extend_from_slice(bytes);
        let mut at = None;
        if let Some(j) = &mut self.journal
            && j.target_running
        {
            at = Some(j.target_bytes);
            j.target_bytes += bytes.len();
        }
        if self.call == Call::Write && !bytes.is_empty() {
            match self.current.last_mut() {
                Some((n, _, end)) if Rc::ptr_eq(n, &node) && *end == old_len => *end += bytes.len(),
                _ => self.current.push((node.clone(), old_len, old_len + bytes.len())),
            }
        }
        self.record(Event::Append { name: name.to_string(), node, created, old_len, len: bytes.len(), at });
        Ok(())
    }

    fn truncate(&mut self, name: &str, len: usize) {
        if self.dead {
            return;
        }
        let Some(node) = self.dir.get(name).cloned() else {
            return self.record(Event::Nothing);
        };
        let (removed, old_durable) = {
            let mut inode = node.borrow_mut();
            if len >= inode.data.len() {
                drop(inode);
                return self.record(Event::Nothing);
            }
            let old_durable = if self.journal.is_some() { inode.durable.clone() } else { Durable::Prefix(0) };
            if let Durable::Prefix(n) = inode.durable
                && n > len
            {
                inode.durable = Durable::Copy(inode.data[..n].to_vec());
            }
            let removed = inode.data.split_off(len);
            (removed, old_durable)
        };
        for w in self.writes.iter_mut() {
            if w.ranges.iter().any(|(n, _, end)| Rc::ptr_eq(n, &node) && *end > len) {
                w.alive = false;
            }
        }
        for r in &mut self.current {
            if Rc::ptr_eq(&r.0, &node) && r.2 > len {
                r.2 = r.2.min(len);
                r.1 = r.1.min(r.2);
            }
        }
        self.current.retain(|r| r.2 > r.1);
        let removed = if self.journal.is_some() { removed } else { Vec::new() };
        self.record(Event::Truncate { node, removed, old_durable });
    }

    fn sync(&mut self, name: &str) {
        if self.dead {
            return;
        }
        let Some(node) = self.dir.get(name).cloned() else {
            return self.record(Event::Nothing);
        };
        let old_durable = {
            let mut inode = node.borrow_mut();
            let len = inode.data.len();
            let old = std::mem::replace(&mut inode.durable, Durable::Prefix(len));
            if self.journal.is_some() { old } else { Durable::Prefix(0) }
        };
        self.record(Event::Sync { node, old_durable });
    }

    fn rename(&mut self, from: &str, to: &str) {
        if self.dead {
            return;
        }
        if from == to || !self.dir.contains_key(from) {
            return self.record(Event::Nothing);
        }
        let moved = self.dir.remove(from).expect("checked above");
        let replaced = self.dir.insert(to.to_string(), moved.clone());
        self.record(Event::Rename { from: from.to_string(), to: to.to_string(), moved, replaced });
    }

    fn remove(&mut self, name: &str) {
        if self.dead {
            return;
        }
        match self.dir.remove(name) {
            Some(node) => self.record(Event::Remove { name: name.to_string(), node }),
            None => self.record(Event::Nothing),
        }
    }

    fn sync_dir(&mut self) {
        if self.dead {
            return;
        }
        let old = std::mem::replace(&mut self.durable_dir, self.dir.clone());
        let old = if self.journal.is_some() { old } else { BTreeMap::new() };
        self.record(Event::SyncDir { old });
    }

    fn undo(&mut self, event: Event) {
        match event {
            Event::Append { name, node, created, old_len, .. } => {
                node.borrow_mut().data.truncate(old_len);
                if created {
                    self.dir.remove(&name);
                }
            }
            Event::Truncate { node, removed, old_durable } => {
                let mut inode = node.borrow_mut();
                inode.data.extend_from_slice(&removed);
                inode.durable = old_durable;
            }
            Event::Sync { node, old_durable } => node.borrow_mut().durable = old_durable,
            Event::Rename { from, to, moved, replaced } => {
                self.dir.remove(&to);
                if let Some(r) = replaced {
                    self.dir.insert(to, r);
                }
                self.dir.insert(from, moved);
            }
            Event::Remove { name, node } => {
                self.dir.insert(name, node);
            }
            Event::SyncDir { old } => self.durable_dir = old,
            Event::Nothing => {}
        }
    }

    /// Everything appended so far, synced or not.
    fn everything(&self) -> Image {
        self.dir.iter().map(|(name, node)| (name.clone(), node.borrow().data.clone())).collect()
    }

    /// Only what was synced, under the names of the last `sync_dir`.
    fn durable(&self) -> Image {
        self.durable_dir.iter().map(|(name, node)| (name.clone(), node.borrow().durable_bytes())).collect()
    }

    /// The disk as it was when `cut` of the target call's appended bytes
    /// had been written, everything before them included.
    fn torn(&mut self, keep: u64) -> Image {
        let Some(mut journal) = self.journal.take() else {
            return self.everything();
        };
        if journal.target_bytes == 0 {
            return self.everything();
        }
        let cut = (keep % journal.target_bytes as u64) as usize;
        while let Some(event) = journal.events.pop() {
            if let Event::Append { node, old_len, len, at: Some(at), .. } = &event
                && *at <= cut
                && cut < at + len
            {
                let kept = cut - at;
                if kept > 0 {
                    node.borrow_mut().data.truncate(old_len + kept);
                } else {
                    self.undo(event);
                }
                break;
            }
            self.undo(event);
        }
        self.everything()
    }

    /// The disk as it was after `steps` of the target call's disk
    /// operations, keeping only what was durable then.
    fn cut(&mut self, steps: u64) -> Image {
        let Some(mut journal) = self.journal.take() else {
            return self.durable();
        };
        let keep = (steps % (journal.events.len() as u64 + 1)) as usize;
        while journal.events.len() > keep {
            let event = journal.events.pop().expect("longer than keep");
            self.undo(event);
        }
        self.durable()
    }

    /// Everything written so far becomes durable.
    fn settle(&mut self) {
        for node in self.dir.values() {
            let mut inode = node.borrow_mut();
            let len = inode.data.len();
            inode.durable = Durable::Prefix(len);
        }
        self.durable_dir = self.dir.clone();
    }

    fn corrupt(&mut self, back: u64, offset: u64) -> bool {
        let Some(index) = (self.writes.len() as u64).checked_sub(back.saturating_add(1)) else {
            return false;
        };
        let write = &self.writes[index as usize];
        let reachable = |n: &Node| self.dir.values().any(|d| Rc::ptr_eq(d, n));
        if !write.alive || !write.ranges.iter().all(|(n, _, _)| reachable(n)) {
            return false;
        }
        let total: usize = write.ranges.iter().map(|(_, s, e)| e - s).sum();
        let mut at = (offset % total as u64) as usize;
        for (node, start, end) in &write.ranges {
            if at < end - start {
                node.borrow_mut().data[start + at] ^= 0xFF;
                return true;
            }
            at -= end - start;
        }
        unreachable!("offset is below the total")
    }
}

/// The simulated disk: a flat directory of named files.
///
/// It behaves like a file system with a write-back cache. What you append is
/// visible to [`Disk::read`] at once, but a **power failure** keeps only
///
/// - the contents a file had at its latest [`Disk::sync`], and
/// - the directory as it was at the latest [`Disk::sync_dir`]: creating a
///   file (its first `append`), renaming and removing one are changes to the
///   directory.
///
/// A file appears when you first append to it (an empty append creates it).
/// `rename` atomically replaces its target. Calls on a file that does not
/// exist do nothing. The store's gates say which kinds of crash the harness
/// throws at it; the disk is never damaged in any other way.
pub struct Disk {
    m: Rc<RefCell<Machine>>,
}

impl Disk {
    /// The whole contents of `name`, or `None` if there is no such file.
    pub fn read(&self, name: &str) -> Option<Vec<u8>> {
        let m = self.m.borrow();
        if m.dead {
            return None;
        }
        m.dir.get(name).map(|n| n.borrow().data.clone())
    }

    /// The size of `name` in bytes, or `None` if there is no such file.
    pub fn size(&self, name: &str) -> Option<u64> {
        let m = self.m.borrow();
        if m.dead {
            return None;
        }
        m.dir.get(name).map(|n| n.borrow().data.len() as u64)
    }

    /// Whether a file called `name` exists.
    pub fn exists(&self, name: &str) -> bool {
        self.size(name).is_some()
    }

    /// The names of all files, sorted.
    pub fn list(&self) -> Vec<String> {
        let m = self.m.borrow();
        if m.dead {
            return Vec::new();
        }
        m.dir.keys().cloned().collect()
    }

    /// Appends `bytes` to `name`, creating the file if it does not exist.
    /// Fails, changing nothing, while the disk is full (gate 2).
    pub fn append(&mut self, name: &str, bytes: &[u8]) -> Result<(), WalError> {
        self.m.borrow_mut().append(name, bytes)
    }

    /// Cuts `name` down to its first `len` bytes (nothing happens if it is
    /// not longer than that). Like any change to contents, it is durable
    /// only after the next `sync` of the file.
    pub fn truncate(&mut self, name: &str, len: u64) {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        self.m.borrow_mut().truncate(name, len)
    }

    /// Makes the current contents of `name` durable (`fsync`).
    pub fn sync(&mut self, name: &str) {
        self.m.borrow_mut().sync(name)
    }

    /// Renames `from` to `to`, atomically replacing any file called `to`.
    /// Durable only after the next `sync_dir`.
    pub fn rename(&mut self, from: &str, to: &str) {
        self.m.borrow_mut().rename(from, to)
    }

    /// Removes `name`. Durable only after the next `sync_dir`.
    pub fn remove(&mut self, name: &str) {
        self.m.borrow_mut().remove(name)
    }

    /// Makes the directory durable: which files exist and under which
    /// names (`fsync` of the directory).
    pub fn sync_dir(&mut self) {
        self.m.borrow_mut().sync_dir()
    }
}

// ---------------------------------------------------------------- the store

crate::contract! {
    problem = "wal";
    errors = WalError;
    dispatch = custom;

    /// The store. Read each gate's statement for the exact rules.
    pub trait Wal {
        /// Opens the store on `disk`: an empty store on the empty disk of
        /// `new()`, or, after a crash, the store recovered from whatever the
        /// disk holds. Keep the disk: every later write goes through it.
        fn open(disk: Disk) -> Self;

        // Gate 1: a framed log, replay and torn writes.

        /// Sets `key` to `value`.
        fn put(&mut self, key: String, value: i64) -> Result<(), WalError>;
        /// Adds `delta` to the value of `key` (0 if it has none), wrapping on
        /// overflow; returns the new value.
        fn add(&mut self, key: String, delta: i64) -> Result<i64, WalError>;
        /// Removes `key`; returns whether it had a value.
        fn delete(&mut self, key: String) -> Result<bool, WalError>;
        /// The value of `key`, if it has one.
        fn get(&self, key: String) -> Option<i64>;
        /// Every key with its value, sorted by key.
        fn items(&self) -> Vec<(String, i64)>;

        // Gate 2: durability.

        /// From now on, sync the log after every `n`-th write (0: only on
        /// `flush`).
        fn sync_every(&mut self, n: u32);
        /// Makes every write durable; returns how many were not durable before.
        fn flush(&mut self) -> u64;
        /// How many writes are not durable yet.
        fn pending(&self) -> u64;

        // Gate 3: checkpoints.

        /// Writes a durable snapshot of the whole store and empties the log.
        fn checkpoint(&mut self) -> Result<(), WalError>;

        // Gate 5: group commit with a deadline.

        /// Sets the deadline: the first `tick` at least `ms` after the oldest
        /// pending write was made makes every pending write durable (0: no
        /// deadline).
        fn sync_within(&mut self, ms: u64);
        /// The clock reads `now_ms`; makes the pending writes durable if the
        /// deadline says so; returns how many it made durable.
        fn tick(&mut self, now_ms: u64) -> u64;

        // Gate 6: log sequence numbers.

        /// The log sequence number of the latest write the store holds (0 if
        /// none).
        fn lsn(&self) -> u64;
        /// The log sequence number of the write that gave `key` its value, if
        /// it has one.
        fn lsn_of(&self, key: String) -> Option<u64>;
    }

    /// The harness's operations around the store: each damages the
    /// simulated disk, or reopens the store on it (see `dispatch`).
    harness {
        /// A store opened on an empty disk.
        fn new() -> Self;

        // Gate 1: a framed log, replay and torn writes.

        /// The process dies and starts again; every byte appended survives.
        fn restart(&mut self);
        /// The power fails during the latest write: only `keep % n` of the
        /// `n` bytes it appended reach the disk.
        fn crash(&mut self, keep: u64);
        /// Flips one byte of a recent write's bytes, then restarts; whether
        /// there was such a write.
        fn corrupt(&mut self, back: u64, offset: u64) -> bool;

        // Gate 2: durability.

        /// The machine loses power: only what was durable survives.
        fn power_loss(&mut self);
        /// While on, every `append` fails with `DiskFull`.
        fn disk_full(&mut self, on: bool);

        // Gate 4: a crash in the middle of a checkpoint.

        /// Makes the disk durable, runs `checkpoint()` and loses power at
        /// its disk call number `step`.
        fn crash_checkpoint(&mut self, step: u64);
    }
}

// ---------------------------------------------------------------- wiring

thread_local! {
    /// The disk of each session, by the address of the session's instance
    /// slot: the disk must outlive the store that uses it.
    static MACHINES: RefCell<HashMap<usize, Rc<RefCell<Machine>>>> = RefCell::new(HashMap::new());
}

fn slot<T>(instance: &Option<T>) -> usize {
    instance as *const Option<T> as usize
}

fn machine<T>(instance: &Option<T>) -> Result<Rc<RefCell<Machine>>, CallError> {
    if instance.is_none() {
        return Err(CallError::NoInstance);
    }
    MACHINES.with(|m| m.borrow().get(&slot(instance)).cloned()).ok_or(CallError::NoInstance)
}

/// Opens a fresh store on `image`, throwing the old one away first.
fn reopen<T: Wal>(instance: &mut Option<T>, image: Image) -> Result<Value, CallError> {
    let key = slot(instance);
    if let Some(old) = MACHINES.with(|m| m.borrow().get(&key).cloned()) {
        old.borrow_mut().dead = true;
    }
    drop(instance.take());
    let m = Rc::new(RefCell::new(Machine::from_image(image)));
    MACHINES.with(|all| {
        let mut all = all.borrow_mut();
        // A machine nobody else holds belongs to a closed session.
        all.retain(|_, m| Rc::strong_count(m) > 1);
        all.insert(key, m.clone());
    });
    let store = T::open(Disk { m });
    *instance = Some(store);
    Ok(Value::Unit)
}

/// Runs one call of the store, telling the disk what kind of call it is.
fn call<T, R: Wire>(instance: &mut Option<T>, kind: Call, f: impl FnOnce(&mut T) -> R) -> Result<Value, CallError> {
    let m = machine(instance)?;
    let this = instance.as_mut().ok_or(CallError::NoInstance)?;
    m.borrow_mut().begin(kind);
    let result = f(this);
    m.borrow_mut().end();
    Ok(result.into_value())
}

// No concurrent gate: the shared entry point knows no operation.
crate::contract!(@shared);

/// Runs one operation on `instance`; `new` creates it on an empty disk.
pub fn dispatch<T: Wal>(instance: &mut Option<T>, op: &str, args: Vec<Value>) -> Result<Value, CallError> {
    let mut args = Args::new(args);
    macro_rules! arg {
        ($name:literal) => {
            args.next($name)?
        };
    }
    match op {
        "new" => {
            args.finish()?;
            reopen(instance, Image::new())
        }
        "put" => {
            let (key, value): (String, i64) = (arg!("key"), arg!("value"));
            args.finish()?;
            call(instance, Call::Write, |s| s.put(key, value))
        }
        "add" => {
            let (key, delta): (String, i64) = (arg!("key"), arg!("delta"));
            args.finish()?;
            call(instance, Call::Write, |s| s.add(key, delta))
        }
        "delete" => {
            let key: String = arg!("key");
            args.finish()?;
            call(instance, Call::Write, |s| s.delete(key))
        }
        "get" => {
            let key: String = arg!("key");
            args.finish()?;
            call(instance, Call::Other, |s| s.get(key))
        }
        "items" => {
            args.finish()?;
            call(instance, Call::Other, |s| s.items())
        }
        "sync_every" => {
            let n: u32 = arg!("n");
            args.finish()?;
            call(instance, Call::Other, |s| s.sync_every(n))
        }
        "flush" => {
            args.finish()?;
            call(instance, Call::Other, |s| s.flush())
        }
        "pending" => {
            args.finish()?;
            call(instance, Call::Other, |s| s.pending())
        }
        "checkpoint" => {
            args.finish()?;
            call(instance, Call::Checkpoint, |s| s.checkpoint())
        }
        "sync_within" => {
            let ms: u64 = arg!("ms");
            args.finish()?;
            call(instance, Call::Other, |s| s.sync_within(ms))
        }
        "tick" => {
            let now_ms: u64 = arg!("now_ms");
            args.finish()?;
            call(instance, Call::Other, |s| s.tick(now_ms))
        }
        "lsn" => {
            args.finish()?;
            call(instance, Call::Other, |s| s.lsn())
        }
        "lsn_of" => {
            let key: String = arg!("key");
            args.finish()?;
            call(instance, Call::Other, |s| s.lsn_of(key))
        }
        "restart" => {
            args.finish()?;
            let image = machine(instance)?.borrow().everything();
            reopen(instance, image)
        }
        "crash" => {
            let keep: u64 = arg!("keep");
            args.finish()?;
            let image = machine(instance)?.borrow_mut().torn(keep);
            reopen(instance, image)
        }
        "corrupt" => {
            let (back, offset): (u64, u64) = (arg!("back"), arg!("offset"));
            args.finish()?;
            let m = machine(instance)?;
            let flipped = m.borrow_mut().corrupt(back, offset);
            let image = m.borrow().everything();
            reopen(instance, image)?;
            Ok(Value::Bool(flipped))
        }
        "power_loss" => {
            args.finish()?;
            let image = machine(instance)?.borrow().durable();
            reopen(instance, image)
        }
        "disk_full" => {
            let on: bool = arg!("on");
            args.finish()?;
            machine(instance)?.borrow_mut().full = on;
            Ok(Value::Unit)
        }
        "crash_checkpoint" => {
            let step: u64 = arg!("step");
            args.finish()?;
            let m = machine(instance)?;
            m.borrow_mut().settle();
            // The power fails during this checkpoint: its result never
            // reaches anyone.
            call(instance, Call::Checkpoint, |s| {
                let _ = s.checkpoint();
            })?;
            let image = m.borrow_mut().cut(step);
            reopen(instance, image)
        }
        other => Err(CallError::UnknownOp(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_standard_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32_update(crc32(b"1234"), b"56789"), 0xCBF4_3926);
    }

    fn image(pairs: &[(&str, &[u8])]) -> Image {
        pairs.iter().map(|(n, d)| (n.to_string(), d.to_vec())).collect()
    }

    /// Runs `f` as one call of the given kind, as `dispatch` does.
    fn during(m: &mut Machine, kind: Call, f: impl FnOnce(&mut Machine)) {
        m.begin(kind);
        f(m);
        m.end();
    }

    #[test]
    fn a_torn_write_keeps_a_strict_prefix_of_its_bytes_and_undoes_later_calls() {
        for keep in 0..12u64 {
            let mut m = Machine::from_image(image(&[("log", b"old")]));
            during(&mut m, Call::Write, |m| {
                m.append("log", b"abc").unwrap();
                m.append("log", b"defg").unwrap();
                m.sync("log");
            });
            during(&mut m, Call::Other, |m| m.truncate("log", 0));
            let cut = (keep % 7) as usize;
            let expect = [b"old".as_slice(), &b"abcdefg"[..cut]].concat();
            assert_eq!(m.torn(keep), image(&[("log", &expect)]), "keep {keep}");
        }
    }

    #[test]
    fn a_torn_write_that_created_a_file_keeps_it_only_with_some_bytes() {
        let mut m = Machine::from_image(Image::new());
        during(&mut m, Call::Write, |m| m.append("log", b"xy").unwrap());
        assert_eq!(m.torn(0), Image::new());
        let mut m = Machine::from_image(Image::new());
        during(&mut m, Call::Write, |m| m.append("log", b"xy").unwrap());
        assert_eq!(m.torn(1), image(&[("log", b"x")]));
    }

    #[test]
    fn a_crash_without_a_target_or_bytes_keeps_everything() {
        let mut m = Machine::from_image(image(&[("log", b"a")]));
        during(&mut m, Call::Other, |m| m.append("log", b"b").unwrap());
        assert_eq!(m.torn(5), image(&[("log", b"ab")]));
        let mut m = Machine::from_image(image(&[("log", b"a")]));
        during(&mut m, Call::Write, |_| {});
        assert_eq!(m.torn(5), image(&[("log", b"a")]));
    }

    #[test]
    fn power_loss_keeps_synced_contents_under_synced_names() {
        let mut m = Machine::from_image(image(&[("snap", b"old")]));
        m.append("log", b"1").unwrap();
        m.sync("log");
        // Contents synced, but the new file's name is not.
        assert_eq!(m.durable(), image(&[("snap", b"old")]));
        m.sync_dir();
        m.append("log", b"2").unwrap();
        assert_eq!(m.durable(), image(&[("log", b"1"), ("snap", b"old")]));
        // A rename made durable before the contents were.
        m.append("tmp", b"new").unwrap();
        m.rename("tmp", "snap");
        m.sync_dir();
        assert_eq!(m.durable(), image(&[("log", b"1"), ("snap", b"")]));
    }

    #[test]
    fn an_unsynced_truncation_is_undone_by_a_power_loss() {
        let mut m = Machine::from_image(image(&[("log", b"abcdef")]));
        m.truncate("log", 2);
        m.append("log", b"XY").unwrap();
        assert_eq!(m.everything(), image(&[("log", b"abXY")]));
        assert_eq!(m.durable(), image(&[("log", b"abcdef")]));
        m.sync("log");
        assert_eq!(m.durable(), image(&[("log", b"abXY")]));
    }

    #[test]
    fn a_step_cut_undoes_the_steps_after_it_and_keeps_only_what_was_durable() {
        let checkpoint = |m: &mut Machine| {
            m.append("tmp", b"S2").unwrap();
            m.sync("tmp");
            m.rename("tmp", "snap");
            m.sync_dir();
            m.truncate("log", 0);
            m.sync("log");
        };
        let expected = [
            image(&[("log", b"r1"), ("snap", b"S1")]),
            image(&[("log", b"r1"), ("snap", b"S1")]),
            image(&[("log", b"r1"), ("snap", b"S1")]),
            image(&[("log", b"r1"), ("snap", b"S1")]),
            image(&[("log", b"r1"), ("snap", b"S2")]),
            image(&[("log", b"r1"), ("snap", b"S2")]),
            image(&[("log", b""), ("snap", b"S2")]),
        ];
        for step in 0..14u64 {
            let mut m = Machine::from_image(image(&[("log", b"r1"), ("snap", b"S1")]));
            during(&mut m, Call::Checkpoint, checkpoint);
            assert_eq!(m.cut(step), expected[(step % 7) as usize], "step {step}");
        }
    }

    #[test]
    fn corrupt_reaches_only_writes_whose_bytes_are_still_there() {
        let mut m = Machine::from_image(Image::new());
        for record in [b"aaaa", b"bbbb", b"cccc"] {
            during(&mut m, Call::Write, |m| m.append("log", record).unwrap());
        }
        assert!(!m.corrupt(3, 0));
        assert!(m.corrupt(1, 6));
        assert_eq!(m.everything(), image(&[("log", &[b"aaaabb", &[b'b' ^ 0xFF][..], b"bcccc"].concat())]));
        m.truncate("log", 9);
        assert!(!m.corrupt(0, 0), "the latest write was cut");
        assert!(m.corrupt(2, 0), "the first one is still whole");
        m.rename("log", "old");
        assert!(m.corrupt(2, 0), "a rename keeps the bytes");
        m.remove("old");
        assert!(!m.corrupt(2, 0), "a removed file does not");
    }

    #[test]
    fn a_dead_disk_ignores_everything() {
        let mut m = Machine::from_image(image(&[("log", b"a")]));
        m.dead = true;
        m.append("log", b"b").unwrap();
        m.truncate("log", 0);
        m.remove("log");
        m.dead = false;
        assert_eq!(m.everything(), image(&[("log", b"a")]));
    }
}
