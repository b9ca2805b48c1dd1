//! Judging candidate code: cargo builds, the worker process that loads a
//! solution's library, the sandbox around it, cases and verdicts, and one
//! save → verdict pass. Imports `base` and `problem`; never `session` or `ui`.

pub mod buildbox;
pub mod channel;
pub mod compile;
pub mod confine;
pub mod direct;
pub mod evaluate;
pub mod jitter;
pub mod library;
pub mod linearize;
pub mod measure;
pub mod race;
pub mod sandbox;
pub mod scale;
pub mod suite;
pub mod threads;
pub mod transcript;
pub mod verdict;
pub mod worker;
