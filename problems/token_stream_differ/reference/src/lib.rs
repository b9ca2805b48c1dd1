//! Reference solution for `token_stream_differ`.
//!
//! The state is a delta log, never a copy: the event log only grows at its
//! end, and each feed remembers where the cursor and the log stood before
//! it. Undo pops feeds off that history, a checkpoint is three integers
//! (log length, cursor, number of feeds) and a shared pointer to its
//! baseline, and rollback truncates to them.
//! Positions are absolute (counted since `new`), so draining events from
//! the front of the log does not disturb any stored position.
//!
//! A cursor means nothing without the baseline it indexes, so the baseline
//! is shared (`Rc`) and each checkpoint holds the one it was taken against:
//! no copy, and a replaced baseline is freed once no label can return to it.

use std::collections::VecDeque;
use std::rc::Rc;

use harness_contract::token_stream_differ::{DiffError, TokenStreamDiffer};

/// One feed as the history remembers it: enough to take it back (where the
/// cursor and the log stood before it) and to apply it again (its tokens).
struct Feed {
    tokens: Vec<String>,
    cursor_before: usize,
    /// Absolute position of the feed's first event: the log length before it.
    events_before: usize,
}

/// Where the differ stood when the label was taken. No copies.
struct Checkpoint {
    label: String,
    /// Absolute log length.
    events: usize,
    cursor: usize,
    /// Absolute number of feeds in the history.
    feeds: usize,
    /// The baseline `cursor` indexes: shared, never copied.
    baseline: Rc<Vec<String>>,
}

pub struct Differ {
    baseline: Rc<Vec<String>>,
    lookahead: usize,
    cursor: usize,
    /// The undrained events; `log[0]` sits at absolute position `drained`.
    log: VecDeque<String>,
    drained: usize,
    /// The feeds undo can still reach; `history[0]` is feed number `sealed`.
    history: VecDeque<Feed>,
    sealed: usize,
    /// At most this many feeds stay undoable (`usize::MAX`: no limit).
    undo_limit: usize,
    /// Token lists of undone feeds; the next one to redo is last.
    redo: Vec<Vec<String>>,
    /// In the order the labels were (last) taken.
    checkpoints: Vec<Checkpoint>,
    closed: bool,
}

fn event(kind: &str, token: &str) -> String {
    format!("{kind}:{token}")
}

impl Differ {
    fn total_events(&self) -> usize {
        self.drained + self.log.len()
    }

    fn total_feeds(&self) -> usize {
        self.sealed + self.history.len()
    }

    /// The nearest position in `cursor ..= cursor + lookahead` (cut at the
    /// end of the baseline) that holds `token`. Scanning forward and
    /// stopping at the first hit is what makes the match the nearest one.
    fn nearest_match(&self, token: &str) -> Option<usize> {
        let end = self.cursor.saturating_add(self.lookahead).saturating_add(1).min(self.baseline.len());
        (self.cursor..end).find(|&j| self.baseline[j] == token)
    }

    /// Diffs one feed and records it in the history. Shared by `feed` and
    /// `redo`; only `feed` empties the redo stack.
    fn apply(&mut self, tokens: Vec<String>) -> Vec<String> {
        let cursor_before = self.cursor;
        let events_before = self.total_events();
        let mut emitted = Vec::new();
        for token in &tokens {
            match self.nearest_match(token) {
                Some(j) => {
                    let skipped = &self.baseline[self.cursor..j];
                    emitted.extend(skipped.iter().map(|t| event("del", t)));
                    emitted.push(event("keep", token));
                    self.cursor = j + 1;
                }
                // Outside the window: an insert, and the cursor stays. A
                // skip longer than the window is misreported this way; that
                // is the bounded price of diffing online.
                None => emitted.push(event("ins", token)),
            }
        }
        self.log.extend(emitted.iter().cloned());
        self.history.push_back(Feed { tokens, cursor_before, events_before });
        // Here, not in `feed`: a redone feed counts against the limit too.
        self.enforce_undo_limit();
        emitted
    }

    /// Makes the oldest undoable feeds final until at most `undo_limit`
    /// remain; returns how many it made final. Popped from the front, so
    /// the history never holds more than the limit.
    fn enforce_undo_limit(&mut self) -> usize {
        let over = self.history.len().saturating_sub(self.undo_limit);
        self.history.drain(..over);
        self.sealed += over;
        over
    }

    /// Every feed so far becomes final (nothing before this point can be
    /// undone any more).
    fn seal_all(&mut self) {
        self.sealed += self.history.len();
        self.history.clear();
    }
}

impl TokenStreamDiffer for Differ {
    fn new(baseline: Vec<String>, lookahead: usize) -> Self {
        Differ {
            baseline: Rc::new(baseline),
            lookahead,
            cursor: 0,
            log: VecDeque::new(),
            drained: 0,
            history: VecDeque::new(),
            sealed: 0,
            undo_limit: usize::MAX,
            redo: Vec::new(),
            checkpoints: Vec::new(),
            closed: false,
        }
    }

    fn feed(&mut self, tokens: Vec<String>) -> Result<Vec<String>, DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        // A new edit abandons the undone branch: those feeds were diffed
        // against a state that no longer exists.
        self.redo.clear();
        Ok(self.apply(tokens))
    }

    fn close(&mut self) -> Vec<String> {
        if self.closed {
            return Vec::new();
        }
        self.closed = true;
        let trailing: Vec<String> = self.baseline[self.cursor..].iter().map(|t| event("del", t)).collect();
        self.log.extend(trailing.iter().cloned());
        self.cursor = self.baseline.len();
        // The stream is final: nothing will ever be undone or redone.
        self.history.clear();
        self.redo.clear();
        trailing
    }

    fn events(&self) -> Vec<String> {
        self.log.iter().cloned().collect()
    }

    fn cursor(&self) -> usize {
        self.cursor
    }

    fn checkpoint(&mut self, label: String) -> Result<(), DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        // Re-using a label replaces its checkpoint and makes it the newest.
        self.checkpoints.retain(|c| c.label != label);
        self.checkpoints.push(Checkpoint {
            label,
            events: self.total_events(),
            cursor: self.cursor,
            feeds: self.total_feeds(),
            baseline: Rc::clone(&self.baseline),
        });
        Ok(())
    }

    fn rollback(&mut self, label: String) -> Result<usize, DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        let index = self.checkpoints.iter().position(|c| c.label == label).ok_or(DiffError::UnknownLabel)?;
        let target = &self.checkpoints[index];
        if target.events < self.drained {
            return Err(DiffError::Drained);
        }
        let (events, cursor, feeds) = (target.events, target.cursor, target.feeds);
        let baseline = Rc::clone(&target.baseline);
        let removed = self.total_events() - events;
        self.log.truncate(events - self.drained);
        // A rollback needs no history, only the label's positions: feeds
        // made final by the undo limit or a rebase may lie after the label.
        // (Drained ones never do: such a label is refused above.)
        if feeds >= self.sealed {
            self.history.truncate(feeds - self.sealed);
        } else {
            self.history.clear();
            self.sealed = feeds;
        }
        self.cursor = cursor;
        // The cursor indexes the baseline the label was taken against.
        self.baseline = baseline;
        self.redo.clear();
        // Later labels point into the abandoned future; a rollback to one of
        // them would "truncate" to a length past the end and corrupt state.
        self.checkpoints.truncate(index + 1);
        Ok(removed)
    }

    fn labels(&self) -> Vec<String> {
        self.checkpoints.iter().map(|c| c.label.clone()).collect()
    }

    fn undo(&mut self, count: usize) -> Result<usize, DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        // Validate before mutating: a refused undo changes nothing.
        if count > self.history.len() {
            return Err(DiffError::OutOfRange);
        }
        let mut removed = 0;
        for _ in 0..count {
            let feed = self.history.pop_back().expect("count was checked");
            // One feed may have emitted many events (deletes before a keep):
            // the log position says how many, a token count would not.
            removed += self.total_events() - feed.events_before;
            self.log.truncate(feed.events_before - self.drained);
            self.cursor = feed.cursor_before;
            self.redo.push(feed.tokens);
        }
        // A label taken after an undone feed describes a state that no
        // longer exists, exactly like a label after a rollback's target.
        let feeds = self.total_feeds();
        self.checkpoints.retain(|c| c.feeds <= feeds);
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
            let tokens = self.redo.pop().expect("count was checked");
            // Through `apply`, not `feed`: redoing must keep the rest of the
            // redo stack.
            emitted.extend(self.apply(tokens));
        }
        Ok(emitted)
    }

    fn undoable(&self) -> usize {
        self.history.len()
    }

    fn redoable(&self) -> usize {
        self.redo.len()
    }

    fn drain(&mut self, max: usize) -> Vec<String> {
        let n = max.min(self.log.len());
        let out: Vec<String> = self.log.drain(..n).collect();
        self.drained += n;
        // A feed with a drained event can never be undone, and neither can
        // any feed before it: forget them, so memory stays bounded. A feed
        // that starts before the boundary has a drained event, or (if it
        // emitted nothing) is followed by a feed that does.
        while self.history.front().is_some_and(|f| f.events_before < self.drained) {
            self.history.pop_front();
            self.sealed += 1;
        }
        out
    }

    fn rebase(&mut self, baseline: Vec<String>) -> Result<Vec<String>, DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        // The rest of the old baseline is accounted for first, as close
        // would do, against the old baseline.
        let trailing: Vec<String> = self.baseline[self.cursor..].iter().map(|t| event("del", t)).collect();
        self.log.extend(trailing.iter().cloned());
        self.baseline = Rc::new(baseline);
        self.cursor = 0;
        // History entries hold cursors into the old baseline: no feed before
        // the rebase can be undone or redone.
        self.seal_all();
        self.redo.clear();
        Ok(trailing)
    }

    fn set_undo_limit(&mut self, limit: usize) -> Result<usize, DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        self.undo_limit = limit;
        Ok(self.enforce_undo_limit())
    }
}

harness_contract::export!(token_stream_differ, Differ);
