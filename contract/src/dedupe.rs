//! The `dedupe` problem's contract (to be written; see issue 4).
