//! An alternate streaming token differ, written from the statements alone.
//!
//! Design:
//! - Matching does not scan the window: `new` indexes the baseline as
//!   token -> sorted positions, and a token's nearest match is one binary
//!   search for the first position at or after the cursor, accepted if it
//!   lies within `lookahead`. Cost per token: O(log n) plus its deletes.
//! - Events are stored compactly (`Keep`/`Del` name a baseline index, `Ins`
//!   holds the token) and rendered to strings only when handed out. Each
//!   event knows the cursor after it, so the cursor is a function of the log
//!   length: checkpoints, undo and rollback restore it by cutting the log.
//! - The history of feeds is just each feed's first log position: a feed's
//!   tokens are recovered from its `keep`/`ins` events when it is undone.
//! - Log and history live in `Shelf`s: a Vec with a moving head and an
//!   absolute numbering, compacted once the dead prefix outgrows the live
//!   part, so drained events and final feeds cost no memory.
//! - Labels: a map label -> stamp and an ordered map stamp -> checkpoint;
//!   dropping "every label after" is a `split_off`, dropping labels after an
//!   undo pops from the back (their history depths are non-decreasing).

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use harness_contract::token_stream_differ::{DiffError, TokenStreamDiffer};

/// One event of the diff.
enum Event {
    /// The stream token matched baseline position `.0`.
    Keep(usize),
    /// Baseline position `.0` is absent from the stream.
    Del(usize),
    /// A stream token without counterpart, emitted with the cursor at `cursor`.
    Ins { token: Rc<str>, cursor: usize },
}

impl Event {
    fn cursor_after(&self) -> usize {
        match self {
            Event::Keep(at) | Event::Del(at) => at + 1,
            Event::Ins { cursor, .. } => *cursor,
        }
    }

    /// The stream token behind this event, if it came from one.
    fn token(&self, baseline: &[Rc<str>]) -> Option<Rc<str>> {
        match self {
            Event::Keep(at) => Some(Rc::clone(&baseline[*at])),
            Event::Del(_) => None,
            Event::Ins { token, .. } => Some(Rc::clone(token)),
        }
    }

    fn render(&self, baseline: &[Rc<str>]) -> String {
        match self {
            Event::Keep(at) => format!("keep:{}", baseline[*at]),
            Event::Del(at) => format!("del:{}", baseline[*at]),
            Event::Ins { token, .. } => format!("ins:{token}"),
        }
    }
}

/// A sequence numbered from 0 since its creation, of which a prefix has been
/// forgotten: items `start()..end()` are live. Forgetting the front is O(1)
/// amortised; the dead prefix is reclaimed once it is as long as the live
/// part, so memory follows the live items.
struct Shelf<T> {
    items: Vec<T>,
    /// Index in `items` of the first live item.
    head: usize,
    /// Number of the first live item.
    base: usize,
}

impl<T> Shelf<T> {
    const KEEP_CAPACITY: usize = 64;

    fn new() -> Self {
        Shelf { items: Vec::new(), head: 0, base: 0 }
    }

    fn start(&self) -> usize {
        self.base
    }

    fn end(&self) -> usize {
        self.base + self.len()
    }

    fn len(&self) -> usize {
        self.items.len() - self.head
    }

    fn index(&self, number: usize) -> usize {
        number - self.base + self.head
    }

    fn get(&self, number: usize) -> &T {
        &self.items[self.index(number)]
    }

    fn range(&self, from: usize, to: usize) -> &[T] {
        &self.items[self.index(from)..self.index(to)]
    }

    fn push(&mut self, item: T) {
        self.items.push(item);
    }

    /// Drops the items numbered `end` and later.
    fn truncate(&mut self, end: usize) {
        let keep = self.index(end);
        self.items.truncate(keep);
        self.tidy();
    }

    /// Forgets the `count` oldest live items for good.
    fn forget_front(&mut self, count: usize) {
        debug_assert!(count <= self.len());
        self.head += count;
        self.base += count;
        self.tidy();
    }

    fn tidy(&mut self) {
        if self.head > 0 && self.head >= self.len() {
            self.items.drain(..self.head);
            self.head = 0;
        }
        let (len, capacity) = (self.items.len(), self.items.capacity());
        if capacity > Self::KEEP_CAPACITY && capacity > 4 * len {
            self.items.shrink_to((2 * len).max(Self::KEEP_CAPACITY));
        }
    }
}

/// A named checkpoint: the log length and the history depth when taken.
struct Mark {
    label: Rc<str>,
    log_end: usize,
    depth: usize,
}

pub struct Differ {
    baseline: Vec<Rc<str>>,
    /// Every baseline position of each token, ascending.
    positions: HashMap<Rc<str>, Vec<usize>>,
    lookahead: usize,
    log: Shelf<Event>,
    /// The cursor after the last drained event (0 before any).
    cursor_at_drained: usize,
    /// The first log position of every feed; numbered by history depth, the
    /// forgotten prefix being the feeds that can no longer be undone.
    history: Shelf<usize>,
    /// Tokens of the undone feeds; the most recently undone on top.
    redo: Vec<Vec<Rc<str>>>,
    marks: BTreeMap<u64, Mark>,
    stamps: HashMap<Rc<str>, u64>,
    next_stamp: u64,
    closed: bool,
}

impl Differ {
    /// The cursor once the log is cut back to `log_end` events.
    fn cursor_at(&self, log_end: usize) -> usize {
        if log_end > self.log.start() { self.log.get(log_end - 1).cursor_after() } else { self.cursor_at_drained }
    }

    /// The nearest baseline position in the window at `cursor` holding `token`.
    fn find(&self, token: &str, cursor: usize) -> Option<usize> {
        let spots = self.positions.get(token)?;
        let at = *spots.get(spots.partition_point(|&p| p < cursor))?;
        (at - cursor <= self.lookahead).then_some(at)
    }

    fn render(&self, from: usize, to: usize) -> Vec<String> {
        self.log.range(from, to).iter().map(|e| e.render(&self.baseline)).collect()
    }

    /// Diffs `tokens` as one feed; returns its events.
    fn apply(&mut self, tokens: Vec<Rc<str>>) -> Vec<String> {
        let start = self.log.end();
        let mut cursor = self.cursor_at(start);
        for token in tokens {
            match self.find(&token, cursor) {
                Some(at) => {
                    for skipped in cursor..at {
                        self.log.push(Event::Del(skipped));
                    }
                    self.log.push(Event::Keep(at));
                    cursor = at + 1;
                }
                None => self.log.push(Event::Ins { token, cursor }),
            }
        }
        self.history.push(start);
        self.render(start, self.log.end())
    }

    /// Drops every label whose checkpoint lies deeper than the history now.
    fn drop_marks_deeper_than(&mut self, depth: usize) {
        while let Some(entry) = self.marks.last_entry() {
            if entry.get().depth <= depth {
                break;
            }
            let mark = entry.remove();
            self.stamps.remove(&mark.label);
        }
    }
}

impl TokenStreamDiffer for Differ {
    fn new(baseline: Vec<String>, lookahead: usize) -> Self {
        let baseline: Vec<Rc<str>> = baseline.into_iter().map(Rc::from).collect();
        let mut positions: HashMap<Rc<str>, Vec<usize>> = HashMap::new();
        for (at, token) in baseline.iter().enumerate() {
            positions.entry(Rc::clone(token)).or_default().push(at);
        }
        Differ {
            baseline,
            positions,
            lookahead,
            log: Shelf::new(),
            cursor_at_drained: 0,
            history: Shelf::new(),
            redo: Vec::new(),
            marks: BTreeMap::new(),
            stamps: HashMap::new(),
            next_stamp: 0,
            closed: false,
        }
    }

    fn feed(&mut self, tokens: Vec<String>) -> Result<Vec<String>, DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        self.redo.clear();
        Ok(self.apply(tokens.into_iter().map(Rc::from).collect()))
    }

    fn close(&mut self) -> Vec<String> {
        if self.closed {
            return Vec::new();
        }
        self.closed = true;
        let start = self.log.end();
        for at in self.cursor_at(start)..self.baseline.len() {
            self.log.push(Event::Del(at));
        }
        // Nothing can be undone or redone any more.
        let depth = self.history.end();
        self.history.forget_front(depth - self.history.start());
        self.redo = Vec::new();
        self.render(start, self.log.end())
    }

    fn events(&self) -> Vec<String> {
        self.render(self.log.start(), self.log.end())
    }

    fn cursor(&self) -> usize {
        self.cursor_at(self.log.end())
    }

    fn checkpoint(&mut self, label: String) -> Result<(), DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        if let Some(old) = self.stamps.remove(label.as_str()) {
            self.marks.remove(&old);
        }
        let label: Rc<str> = Rc::from(label);
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        self.stamps.insert(Rc::clone(&label), stamp);
        self.marks.insert(stamp, Mark { label, log_end: self.log.end(), depth: self.history.end() });
        Ok(())
    }

    fn rollback(&mut self, label: String) -> Result<usize, DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        let stamp = *self.stamps.get(label.as_str()).ok_or(DiffError::UnknownLabel)?;
        let mark = &self.marks[&stamp];
        if mark.log_end < self.log.start() {
            return Err(DiffError::Drained);
        }
        let (log_end, depth) = (mark.log_end, mark.depth);
        // Every feed after the mark starts at or after `log_end`, which is not
        // drained, so none of them was forgotten: `depth >= history.start()`.
        let removed = self.log.end() - log_end;
        self.log.truncate(log_end);
        self.history.truncate(depth);
        self.redo.clear();
        for (_, later) in self.marks.split_off(&(stamp + 1)) {
            self.stamps.remove(&later.label);
        }
        Ok(removed)
    }

    fn labels(&self) -> Vec<String> {
        self.marks.values().map(|mark| mark.label.to_string()).collect()
    }

    fn undo(&mut self, count: usize) -> Result<usize, DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        if count > self.history.len() {
            return Err(DiffError::OutOfRange);
        }
        if count == 0 {
            return Ok(0);
        }
        let depth = self.history.end() - count;
        let mut end = self.log.end();
        for feed in (depth..self.history.end()).rev() {
            let start = *self.history.get(feed);
            let tokens = self.log.range(start, end).iter().filter_map(|e| e.token(&self.baseline)).collect();
            self.redo.push(tokens);
            end = start;
        }
        let removed = self.log.end() - end;
        self.log.truncate(end);
        self.history.truncate(depth);
        self.drop_marks_deeper_than(depth);
        Ok(removed)
    }

    fn redo(&mut self, count: usize) -> Result<Vec<String>, DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        if count > self.redo.len() {
            return Err(DiffError::OutOfRange);
        }
        let mut emitted = Vec::new();
        for _ in 0..count {
            let tokens = self.redo.pop().expect("count checked against the redo stack");
            emitted.extend(self.apply(tokens));
        }
        Ok(emitted)
    }

    fn undoable(&self) -> usize {
        if self.closed { 0 } else { self.history.len() }
    }

    fn redoable(&self) -> usize {
        if self.closed { 0 } else { self.redo.len() }
    }

    fn drain(&mut self, max: usize) -> Vec<String> {
        let from = self.log.start();
        let to = from + max.min(self.log.len());
        if to == from {
            return Vec::new();
        }
        let handed = self.render(from, to);
        self.cursor_at_drained = self.cursor_at(to);
        self.log.forget_front(to - from);
        // A feed starting before the drained end lost an event (or precedes
        // one that did): it and every older feed are final.
        let mut finals = 0;
        while self.history.start() + finals < self.history.end()
            && *self.history.get(self.history.start() + finals) < to
        {
            finals += 1;
        }
        self.history.forget_front(finals);
        handed
    }
}

harness_contract::export!(token_stream_differ, Differ);
