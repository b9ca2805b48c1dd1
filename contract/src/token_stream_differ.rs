//! The `token_stream_differ` problem's contract (to be written; see issue 4).
