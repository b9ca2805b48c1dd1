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
//! - A baseline (its tokens and its index) is an `Rc<Base>` that each event
//!   naming one of its positions, and each mark taken against it, holds:
//!   an index means nothing without its baseline. A replaced baseline lives
//!   exactly as long as something still refers to it. The cursor at a log
//!   position is the last event's if that event was against the baseline
//!   asked about, else 0 (nothing was diffed against it yet).
//! - The undo limit forgets the front of the history `Shelf`; a rollback to
//!   a mark below the forgotten prefix restarts the shelf's numbering there.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use harness_contract::token_stream_differ::{DiffError, TokenStreamDiffer};

/// A baseline and its index: every position of each token, ascending.
struct Base {
    tokens: Vec<Rc<str>>,
    positions: HashMap<Rc<str>, Vec<usize>>,
}

impl Base {
    fn new(tokens: Vec<String>) -> Rc<Base> {
        let tokens: Vec<Rc<str>> = tokens.into_iter().map(Rc::from).collect();
        let mut positions: HashMap<Rc<str>, Vec<usize>> = HashMap::new();
        for (at, token) in tokens.iter().enumerate() {
            positions.entry(Rc::clone(token)).or_default().push(at);
        }
        Rc::new(Base { tokens, positions })
    }
}

/// One event of the diff.
enum Event {
    /// The stream token matched position `.1` of baseline `.0`.
    Keep(Rc<Base>, usize),
    /// Position `.1` of baseline `.0` is absent from the stream.
    Del(Rc<Base>, usize),
    /// A stream token without counterpart, emitted with the cursor at
    /// `cursor` of `base`.
    Ins { token: Rc<str>, base: Rc<Base>, cursor: usize },
}

impl Event {
    fn base(&self) -> &Rc<Base> {
        match self {
            Event::Keep(base, _) | Event::Del(base, _) | Event::Ins { base, .. } => base,
        }
    }

    fn cursor_after(&self) -> usize {
        match self {
            Event::Keep(_, at) | Event::Del(_, at) => at + 1,
            Event::Ins { cursor, .. } => *cursor,
        }
    }

    /// The stream token behind this event, if it came from one.
    fn token(&self) -> Option<Rc<str>> {
        match self {
            Event::Keep(base, at) => Some(Rc::clone(&base.tokens[*at])),
            Event::Del(..) => None,
            Event::Ins { token, .. } => Some(Rc::clone(token)),
        }
    }

    fn render(&self) -> String {
        match self {
            Event::Keep(base, at) => format!("keep:{}", base.tokens[*at]),
            Event::Del(base, at) => format!("del:{}", base.tokens[*at]),
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

    /// Drops the items numbered `end` and later. An `end` inside the
    /// forgotten prefix empties the shelf and numbers the next item `end`.
    fn truncate(&mut self, end: usize) {
        if end < self.base {
            self.items.clear();
            self.head = 0;
            self.base = end;
        } else {
            let keep = self.index(end);
            self.items.truncate(keep);
        }
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

/// A named checkpoint: the log length, the history depth and the baseline
/// when taken.
struct Mark {
    label: Rc<str>,
    log_end: usize,
    depth: usize,
    base: Rc<Base>,
}

pub struct Differ {
    base: Rc<Base>,
    lookahead: usize,
    log: Shelf<Event>,
    /// The baseline of the last drained event and the cursor after it.
    drained_tail: Option<(Rc<Base>, usize)>,
    /// The first log position of every feed; numbered by history depth, the
    /// forgotten prefix being the feeds that can no longer be undone.
    history: Shelf<usize>,
    /// Tokens of the undone feeds; the most recently undone on top.
    redo: Vec<Vec<Rc<str>>>,
    marks: BTreeMap<u64, Mark>,
    stamps: HashMap<Rc<str>, u64>,
    next_stamp: u64,
    /// At most this many feeds stay in the history.
    undo_limit: usize,
    closed: bool,
}

impl Differ {
    /// The cursor in `base` once the log is cut back to `log_end` events:
    /// the last event's, if it was against `base`; else nothing was diffed
    /// against `base` before that point, and it is 0.
    fn cursor_at(&self, log_end: usize, base: &Rc<Base>) -> usize {
        let last = if log_end > self.log.start() {
            let event = self.log.get(log_end - 1);
            Some((event.base(), event.cursor_after()))
        } else {
            self.drained_tail.as_ref().map(|(b, cursor)| (b, *cursor))
        };
        match last {
            Some((b, cursor)) if Rc::ptr_eq(b, base) => cursor,
            _ => 0,
        }
    }

    fn cursor_now(&self) -> usize {
        self.cursor_at(self.log.end(), &self.base)
    }

    /// The nearest baseline position in the window at `cursor` holding `token`.
    fn find(&self, token: &str, cursor: usize) -> Option<usize> {
        let spots = self.base.positions.get(token)?;
        let at = *spots.get(spots.partition_point(|&p| p < cursor))?;
        (at - cursor <= self.lookahead).then_some(at)
    }

    fn render(&self, from: usize, to: usize) -> Vec<String> {
        self.log.range(from, to).iter().map(Event::render).collect()
    }

    /// Deletes the current baseline from the cursor to its end.
    fn delete_rest(&mut self) {
        for at in self.cursor_now()..self.base.tokens.len() {
            self.log.push(Event::Del(Rc::clone(&self.base), at));
        }
    }

    /// Diffs `tokens` as one feed; returns its events.
    fn apply(&mut self, tokens: Vec<Rc<str>>) -> Vec<String> {
        let start = self.log.end();
        let mut cursor = self.cursor_now();
        for token in tokens {
            match self.find(&token, cursor) {
                Some(at) => {
                    for skipped in cursor..at {
                        self.log.push(Event::Del(Rc::clone(&self.base), skipped));
                    }
                    self.log.push(Event::Keep(Rc::clone(&self.base), at));
                    cursor = at + 1;
                }
                None => self.log.push(Event::Ins { token, base: Rc::clone(&self.base), cursor }),
            }
        }
        self.history.push(start);
        self.forget_over_limit();
        self.render(start, self.log.end())
    }

    /// Forgets the oldest feeds of the history beyond the undo limit.
    fn forget_over_limit(&mut self) -> usize {
        let over = self.history.len().saturating_sub(self.undo_limit);
        self.history.forget_front(over);
        over
    }

    /// No feed so far can be undone any more.
    fn forget_history(&mut self) {
        let all = self.history.len();
        self.history.forget_front(all);
        self.redo = Vec::new();
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
        Differ {
            base: Base::new(baseline),
            lookahead,
            log: Shelf::new(),
            drained_tail: None,
            history: Shelf::new(),
            redo: Vec::new(),
            marks: BTreeMap::new(),
            stamps: HashMap::new(),
            next_stamp: 0,
            undo_limit: usize::MAX,
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
        self.delete_rest();
        // Nothing can be undone or redone any more.
        self.forget_history();
        self.render(start, self.log.end())
    }

    fn events(&self) -> Vec<String> {
        self.render(self.log.start(), self.log.end())
    }

    fn cursor(&self) -> usize {
        self.cursor_now()
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
        let mark = Mark { label, log_end: self.log.end(), depth: self.history.end(), base: Rc::clone(&self.base) };
        self.marks.insert(stamp, mark);
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
        let (log_end, depth, base) = (mark.log_end, mark.depth, Rc::clone(&mark.base));
        // Feeds after the mark may have been forgotten (the undo limit, a
        // rebase): truncating below the forgotten prefix empties the history.
        let removed = self.log.end() - log_end;
        self.log.truncate(log_end);
        self.history.truncate(depth);
        self.base = base;
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
            let tokens = self.log.range(start, end).iter().filter_map(Event::token).collect();
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
        let last = self.log.get(to - 1);
        self.drained_tail = Some((Rc::clone(last.base()), last.cursor_after()));
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

    fn rebase(&mut self, baseline: Vec<String>) -> Result<Vec<String>, DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        let start = self.log.end();
        self.delete_rest();
        self.base = Base::new(baseline);
        // The history's feeds were diffed against the old baseline.
        self.forget_history();
        Ok(self.render(start, self.log.end()))
    }

    fn set_undo_limit(&mut self, limit: usize) -> Result<usize, DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        self.undo_limit = limit;
        Ok(self.forget_over_limit())
    }
}

harness_contract::export!(token_stream_differ, Differ);
