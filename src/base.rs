//! The lowest layer: what every other layer may use. Settings from
//! `harness.toml`, errors positioned in a file, and atomic file writes.
//! Imports nothing from the crate.

pub mod config;
pub mod diag;
pub mod diff;
pub mod fsio;
pub mod trace;
