//! Reference solution for `token_stream_differ`.
//!
//! The state is a delta log, never a copy: a cursor into the baseline and
//! an event log that only grows at its end.
// @gate 2
//! A checkpoint remembers where the differ stood (the log's length and the
//! cursor), and rollback truncates back to it.
// @end
// @gate 3
//! Each feed remembers where the cursor and the log stood before it: undo
//! pops feeds off that history, and a checkpoint also counts the feeds made
//! before it.
// @end
// @gate 4
//! Positions are absolute (counted since `new`), so draining events from
//! the front of the log does not disturb any stored position.
// @end
// @gate 5
//!
//! A cursor means nothing without the baseline it indexes, so the baseline
//! is shared (`Rc`) and each checkpoint holds the one it was taken against:
//! no copy, and a replaced baseline is freed once no label can return to it.
// @end
// @gate 6
//!
//! The undo limit makes the oldest feeds final by forgetting them from the
//! front of the history, so the history never holds more than the limit.
// @end

use std::collections::VecDeque; // @gate 4,6
use std::rc::Rc; // @gate 5

use harness_contract::token_stream_differ::{DiffError, TokenStreamDiffer};

// @gate 3
/// One feed as the history remembers it: enough to take it back (where the
/// cursor and the log stood before it) and to apply it again (its tokens).
struct Feed {
    tokens: Vec<String>,
    cursor_before: usize,
    // @gate 4
    /// Absolute position of the feed's first event: the log length before it.
    // @else
    //~ /// Position of the feed's first event: the log length before it.
    // @end
    events_before: usize,
}
// @end

// @gate 2
/// Where the differ stood when the label was taken. No copies.
struct Checkpoint {
    label: String,
    // @gate 4
    /// Absolute log length.
    // @else
    //~ /// The log's length.
    // @end
    events: usize,
    cursor: usize,
    // @gate 3
    /// How many feeds had been made, and not taken back, when it was taken.
    feeds: usize,
    // @end
    // @gate 5
    /// The baseline `cursor` indexes: shared, never copied.
    baseline: Rc<Vec<String>>,
    // @end
}
// @end

pub struct Differ {
    // @gate 5
    baseline: Rc<Vec<String>>,
    // @else
    //~ baseline: Vec<String>,
    // @end
    lookahead: usize,
    cursor: usize,
    // @gate 4
    /// The undrained events; `log[0]` sits at absolute position `drained`.
    log: VecDeque<String>,
    drained: usize,
    // @else
    //~ /// The event log, oldest first.
    //~ log: Vec<String>,
    // @end
    // @gate 3
    // @gate 4,5,6
    /// The feeds undo can still reach; `history[0]` is feed number `sealed`.
    // @else
    //~ /// The feeds undo can still reach, oldest first.
    // @end
    // @gate 4,6
    history: VecDeque<Feed>,
    // @else
    //~ history: Vec<Feed>,
    // @end
    sealed: usize, // @gate 4,5,6
    // @end
    // @gate 6
    /// At most this many feeds stay undoable (`usize::MAX`: no limit).
    undo_limit: usize,
    // @end
    // @gate 3
    /// Token lists of undone feeds; the next one to redo is last.
    redo: Vec<Vec<String>>,
    // @end
    // @gate 2
    /// In the order the labels were (last) taken.
    checkpoints: Vec<Checkpoint>,
    // @end
    closed: bool,
}

fn event(kind: &str, token: &str) -> String {
    format!("{kind}:{token}")
}

impl Differ {
    // @gate 4
    fn total_events(&self) -> usize {
        self.drained + self.log.len()
    }

    // @end
    // @gate 3
    // @gate 4,5,6
    fn total_feeds(&self) -> usize {
        self.sealed + self.history.len()
    }

    // @end
    // @end
    /// The nearest position in `cursor ..= cursor + lookahead` (cut at the
    /// end of the baseline) that holds `token`. Scanning forward and
    /// stopping at the first hit is what makes the match the nearest one.
    fn nearest_match(&self, token: &str) -> Option<usize> {
        let end = self.cursor.saturating_add(self.lookahead).saturating_add(1).min(self.baseline.len());
        (self.cursor..end).find(|&j| self.baseline[j] == token)
    }

    // @gate 3
    /// Diffs one feed and records it in the history. Shared by `feed` and
    /// `redo`; only `feed` empties the redo stack.
    // @else
    //~ /// Diffs one feed and appends its events to the log.
    // @end
    fn apply(&mut self, tokens: Vec<String>) -> Vec<String> {
        // @gate 3
        let cursor_before = self.cursor;
        // @gate 4
        let events_before = self.total_events();
        // @else
        //~ let events_before = self.log.len();
        // @end
        // @end
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
        // @gate 3
        // @gate 4,6
        self.history.push_back(Feed { tokens, cursor_before, events_before });
        // @else
        //~ self.history.push(Feed { tokens, cursor_before, events_before });
        // @end
        // @end
        // @gate 6
        // Here, not in `feed`: a redone feed counts against the limit too.
        self.enforce_undo_limit();
        // @end
        emitted
    }
    // @gate 6

    /// Makes the oldest undoable feeds final until at most `undo_limit`
    /// remain; returns how many it made final. Popped from the front, so
    /// the history never holds more than the limit.
    fn enforce_undo_limit(&mut self) -> usize {
        let over = self.history.len().saturating_sub(self.undo_limit);
        self.history.drain(..over);
        self.sealed += over;
        over
    }
    // @end
    // @gate 5
    // @gate 3

    /// Every feed so far becomes final (nothing before this point can be
    /// undone any more).
    fn seal_all(&mut self) {
        self.sealed += self.history.len();
        self.history.clear();
    }
    // @end
    // @end
}

impl TokenStreamDiffer for Differ {
    fn new(baseline: Vec<String>, lookahead: usize) -> Self {
        Differ {
            // @gate 5
            baseline: Rc::new(baseline),
            // @else
            //~ baseline,
            // @end
            lookahead,
            cursor: 0,
            // @gate 4
            log: VecDeque::new(),
            drained: 0,
            // @else
            //~ log: Vec::new(),
            // @end
            // @gate 3
            // @gate 4,6
            history: VecDeque::new(),
            // @else
            //~ history: Vec::new(),
            // @end
            sealed: 0, // @gate 4,5,6
            // @end
            undo_limit: usize::MAX,  // @gate 6
            redo: Vec::new(),        // @gate 3
            checkpoints: Vec::new(), // @gate 2
            closed: false,
        }
    }

    fn feed(&mut self, tokens: Vec<String>) -> Result<Vec<String>, DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        // @gate 3
        // A new edit abandons the undone branch: those feeds were diffed
        // against a state that no longer exists.
        self.redo.clear();
        // @end
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
        // @gate 3
        // The stream is final: nothing will ever be undone or redone.
        self.history.clear();
        self.redo.clear();
        // @end
        trailing
    }

    fn events(&self) -> Vec<String> {
        self.log.iter().cloned().collect()
    }

    fn cursor(&self) -> usize {
        self.cursor
    }
    // @gate 2

    fn checkpoint(&mut self, label: String) -> Result<(), DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        // Re-using a label replaces its checkpoint and makes it the newest.
        self.checkpoints.retain(|c| c.label != label);
        self.checkpoints.push(Checkpoint {
            label,
            // @gate 4
            events: self.total_events(),
            // @else
            //~ events: self.log.len(),
            // @end
            cursor: self.cursor,
            // @gate 3
            // @gate 4,5,6
            feeds: self.total_feeds(),
            // @else
            //~ feeds: self.history.len(),
            // @end
            // @end
            baseline: Rc::clone(&self.baseline), // @gate 5
        });
        Ok(())
    }

    fn rollback(&mut self, label: String) -> Result<usize, DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        let index = self.checkpoints.iter().position(|c| c.label == label).ok_or(DiffError::UnknownLabel)?;
        let target = &self.checkpoints[index];
        // @gate 4
        if target.events < self.drained {
            return Err(DiffError::Drained);
        }
        // @end
        // @gate 3
        let (events, cursor, feeds) = (target.events, target.cursor, target.feeds);
        // @else
        //~ let (events, cursor) = (target.events, target.cursor);
        // @end
        let baseline = Rc::clone(&target.baseline); // @gate 5
        // @gate 4
        let removed = self.total_events() - events;
        self.log.truncate(events - self.drained);
        // @else
        //~ let removed = self.log.len() - events;
        //~ self.log.truncate(events);
        // @end
        // @gate 3
        // The feeds made after the label are taken back with it.
        // @gate 4,5,6
        // @gate 5,6
        // A rollback needs no history, only the label's positions: feeds
        // made final since the label was taken may lie after it.
        if feeds >= self.sealed {
            self.history.truncate(feeds - self.sealed);
        } else {
            self.history.clear();
            self.sealed = feeds;
        }
        // @else
        //~ // A label taken before a drained event was refused above, so every
        //~ // feed made after it is still in the history.
        //~ self.history.truncate(feeds - self.sealed);
        // @end
        // @else
        //~ self.history.truncate(feeds);
        // @end
        // @end
        self.cursor = cursor;
        // @gate 5
        // The cursor indexes the baseline the label was taken against.
        self.baseline = baseline;
        // @end
        self.redo.clear(); // @gate 3
        // Later labels point into the abandoned future; a rollback to one of
        // them would "truncate" to a length past the end and corrupt state.
        self.checkpoints.truncate(index + 1);
        Ok(removed)
    }

    fn labels(&self) -> Vec<String> {
        self.checkpoints.iter().map(|c| c.label.clone()).collect()
    }
    // @end
    // @gate 3

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
            // @gate 4,6
            let feed = self.history.pop_back().expect("count was checked");
            // @else
            //~ let feed = self.history.pop().expect("count was checked");
            // @end
            // One feed may have emitted many events (deletes before a keep):
            // the log position says how many, a token count would not.
            // @gate 4
            removed += self.total_events() - feed.events_before;
            self.log.truncate(feed.events_before - self.drained);
            // @else
            //~ removed += self.log.len() - feed.events_before;
            //~ self.log.truncate(feed.events_before);
            // @end
            self.cursor = feed.cursor_before;
            self.redo.push(feed.tokens);
        }
        // A label taken after an undone feed describes a state that no
        // longer exists, exactly like a label after a rollback's target.
        // @gate 4,5,6
        let feeds = self.total_feeds();
        // @else
        //~ let feeds = self.history.len();
        // @end
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
    // @end
    // @gate 4

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
    // @end
    // @gate 5

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
        // @gate 3
        // History entries hold cursors into the old baseline: no feed before
        // the rebase can be undone or redone.
        self.seal_all();
        self.redo.clear();
        // @end
        Ok(trailing)
    }
    // @end
    // @gate 6

    fn set_undo_limit(&mut self, limit: usize) -> Result<usize, DiffError> {
        if self.closed {
            return Err(DiffError::Closed);
        }
        self.undo_limit = limit;
        Ok(self.enforce_undo_limit())
    }
    // @end
}

harness_contract::export!(token_stream_differ, Differ);
