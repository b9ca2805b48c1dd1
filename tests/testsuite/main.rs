//! Every integration test in one binary (cargo's own `tests/testsuite`
//! layout), so the crate is linked once for all of them, not once per file.
//! Each module is one area; `cargo test --test testsuite <module>::`
//! runs one of them, e.g. `cargo test --test testsuite review::`.
//!
//! The fast tier is `cargo test --lib` (the pure logic, seconds); this
//! binary runs the real harness on fixture and shipped problems.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod direct_build;
mod drill;
mod e2e_pty;
mod graph;
mod hostile;
mod layers;
mod mock;
mod problems;
mod race_stress;
mod report_replay;
mod review;
mod scale_stress;
mod tamper;
mod tui;
