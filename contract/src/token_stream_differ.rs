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

crate::contract! {
    problem = "token_stream_differ";
    errors = DiffError;

    /// The differ. Read each gate's statement for the exact rules.
    pub trait TokenStreamDiffer {
        /// A differ against `baseline` that looks at most `lookahead`
        /// positions past its cursor for a match. Cursor at 0, no events.
        fn new(baseline: Vec<String>, lookahead: usize) -> Self;

        // Gate 1: the online diff.

        /// Diffs `tokens`, in order, from the current cursor; returns the
        /// events this call emitted. Fails with `closed` after `close`.
        fn feed(&mut self, tokens: Vec<String>) -> Result<Vec<String>, DiffError>;
        /// Ends the stream: deletes every baseline token from the cursor on and
        /// returns those events. Later calls return an empty list.
        fn close(&mut self) -> Vec<String>;
        /// The event log, oldest first (each gate's statement says what
        /// leaves it).
        fn events(&self) -> Vec<String>;
        /// The baseline position of the next expected token.
        fn cursor(&self) -> usize;

        // Gate 2: named checkpoints.

        /// Remembers the current state under `label` (replacing an older
        /// checkpoint of that name).
        fn checkpoint(&mut self, label: String) -> Result<(), DiffError>;
        /// Returns to the state saved under `label`; returns how many events
        /// were removed.
        fn rollback(&mut self, label: String) -> Result<usize, DiffError>;
        /// The live labels, in the order they were (last) taken.
        fn labels(&self) -> Vec<String>;

        // Gate 3: undo and redo.

        /// Takes back the last `count` feeds; returns how many events were
        /// removed.
        fn undo(&mut self, count: usize) -> Result<usize, DiffError>;
        /// Applies the last `count` undone feeds again; returns the events
        /// they emitted.
        fn redo(&mut self, count: usize) -> Result<Vec<String>, DiffError>;
        /// How many feeds `undo` could take back now.
        fn undoable(&self) -> usize;
        /// How many feeds `redo` could apply again now.
        fn redoable(&self) -> usize;

        // Gate 4: draining events.

        /// Hands over up to `max` of the oldest undrained events; once drained,
        /// an event is final.
        fn drain(&mut self, max: usize) -> Vec<String>;

        // Gate 5: replacing the baseline mid-stream.

        /// Deletes the rest of the current baseline (from the cursor on), then
        /// diffs what follows against `baseline` from position 0; returns the
        /// deletes. Fails with `closed` after `close`.
        fn rebase(&mut self, baseline: Vec<String>) -> Result<Vec<String>, DiffError>;

        // Gate 6: a bounded undo history.

        /// From now on at most `limit` feeds can be undone; the oldest beyond
        /// that become final. Returns how many became final by this call.
        fn set_undo_limit(&mut self, limit: usize) -> Result<usize, DiffError>;
    }
}
