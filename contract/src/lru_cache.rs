//! The `lru_cache` problem's contract (to be written; see issue 4).
