//! harness: timed, gated practice for stateful-component coding interviews.
//!
//! The folders are layers, each importing only the layers listed before it
//! (`tests/testsuite/layers.rs` keeps this true); ARCHITECTURE.md draws the map:
//! - `base`: settings, positioned diagnostics, atomic files;
//! - `problem`: the problem model, types, case scripts and generators;
//! - `judge`: building, sandboxing and judging candidate code;
//! - `session`: a practice session, its reports and score;
//! - `ui`: the practice and review TUIs and the text of results;
//! - `cmd`: one file per subcommand.

pub mod base;
pub mod cli;
pub mod cmd;
pub mod judge;
pub mod problem;
pub mod session;
pub mod ui;
