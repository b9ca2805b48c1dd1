//! The `scheduler` problem's contract (to be written; see issue 4).
