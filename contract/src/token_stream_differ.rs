//! `token_stream_differ`: an online diff of a token stream against a fixed
//! baseline, with checkpoints, undo and redo.
//!
//! Implement [`TokenStreamDiffer`] for your type and export it:
//!
//! ```ignore
//! use harness_contract::token_stream_differ::{DiffError, TokenStreamDiffer};
//! struct Differ { /* ... */ }
//! impl TokenStreamDiffer for Differ { /* ... */ }
//! harness_contract::export!(token_stream_differ, Differ);
//! ```
//!
//! Methods of later gates have default bodies, so a solution compiles before
//! it implements them; calling one is judged `not_implemented`.
//!
//! Events are strings `"keep:<token>"`, `"del:<token>"` and `"ins:<token>"`,
//! with the token written verbatim after the first colon.

use crate::not_implemented;

crate::error_kinds! {
    /// Why an operation was refused. A refused operation changes nothing.
    pub enum DiffError {
        /// Gate 1: the stream was closed, so it accepts no more edits.
        Closed = "closed",
        /// Gate 2: no live checkpoint has this label.
        UnknownLabel = "unknown_label",
        /// Gate 3: more feeds to undo or redo than there are.
        OutOfRange = "out_of_range",
        /// Gate 4: the rollback would take back events already drained.
        Drained = "drained",
    }
}

/// The differ. Read each gate's statement for the exact rules.
#[allow(unused_variables)]
pub trait TokenStreamDiffer {
    /// A differ against `baseline` that looks at most `lookahead`
    /// positions past its cursor for a match. Cursor at 0, no events.
    fn new(baseline: Vec<String>, lookahead: usize) -> Self
    where
        Self: Sized;

    // Gate 1: the online diff.

    /// Diffs `tokens`, in order, from the current cursor; returns the
    /// events this call emitted. Fails with `closed` after `close`.
    fn feed(&mut self, tokens: Vec<String>) -> Result<Vec<String>, DiffError> {
        not_implemented("feed")
    }
    /// Ends the stream: deletes every baseline token from the cursor on and
    /// returns those events. Later calls return an empty list.
    fn close(&mut self) -> Vec<String> {
        not_implemented("close")
    }
    /// The event log, oldest first (each gate's statement says what
    /// leaves it).
    fn events(&self) -> Vec<String> {
        not_implemented("events")
    }
    /// The baseline position of the next expected token.
    fn cursor(&self) -> usize {
        not_implemented("cursor")
    }

    // Gate 2: named checkpoints.

    /// Remembers the current state under `label` (replacing an older
    /// checkpoint of that name).
    fn checkpoint(&mut self, label: String) -> Result<(), DiffError> {
        not_implemented("checkpoint")
    }
    /// Returns to the state saved under `label`; returns how many events
    /// were removed.
    fn rollback(&mut self, label: String) -> Result<usize, DiffError> {
        not_implemented("rollback")
    }
    /// The live labels, in the order they were (last) taken.
    fn labels(&self) -> Vec<String> {
        not_implemented("labels")
    }

    // Gate 3: undo and redo.

    /// Takes back the last `count` feeds; returns how many events were
    /// removed.
    fn undo(&mut self, count: usize) -> Result<usize, DiffError> {
        not_implemented("undo")
    }
    /// Applies the last `count` undone feeds again; returns the events
    /// they emitted.
    fn redo(&mut self, count: usize) -> Result<Vec<String>, DiffError> {
        not_implemented("redo")
    }
    /// How many feeds `undo` could take back now.
    fn undoable(&self) -> usize {
        not_implemented("undoable")
    }
    /// How many feeds `redo` could apply again now.
    fn redoable(&self) -> usize {
        not_implemented("redoable")
    }

    // Gate 4: draining events.

    /// Hands over up to `max` of the oldest undrained events; once drained,
    /// an event is final.
    fn drain(&mut self, max: usize) -> Vec<String> {
        not_implemented("drain")
    }

    // Gate 5: replacing the baseline mid-stream.

    /// Deletes the rest of the current baseline (from the cursor on), then
    /// diffs what follows against `baseline` from position 0; returns the
    /// deletes. Fails with `closed` after `close`.
    fn rebase(&mut self, baseline: Vec<String>) -> Result<Vec<String>, DiffError> {
        not_implemented("rebase")
    }

    // Gate 6: a bounded undo history.

    /// From now on at most `limit` feeds can be undone; the oldest beyond
    /// that become final. Returns how many became final by this call.
    fn set_undo_limit(&mut self, limit: usize) -> Result<usize, DiffError> {
        not_implemented("set_undo_limit")
    }
}

crate::contract! {
    problem = "token_stream_differ";
    trait = TokenStreamDiffer;
    errors = DiffError;
    new(baseline: Vec<String>, lookahead: usize);
    fn feed(tokens: Vec<String>) -> Result<Vec<String>, DiffError>;
    fn close() -> Vec<String>;
    fn events() -> Vec<String>;
    fn cursor() -> usize;
    fn checkpoint(label: String) -> Result<(), DiffError>;
    fn rollback(label: String) -> Result<usize, DiffError>;
    fn labels() -> Vec<String>;
    fn undo(count: usize) -> Result<usize, DiffError>;
    fn redo(count: usize) -> Result<Vec<String>, DiffError>;
    fn undoable() -> usize;
    fn redoable() -> usize;
    fn drain(max: usize) -> Vec<String>;
    fn rebase(baseline: Vec<String>) -> Result<Vec<String>, DiffError>;
    fn set_undo_limit(limit: usize) -> Result<usize, DiffError>;
}
