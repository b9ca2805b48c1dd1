//! harness: timed, gated practice for stateful-component coding interviews.
//!
//! See ARCHITECTURE.md for the map. In short: `problem` reads problems,
//! `compile` builds solutions, `sandbox` + `worker` run them in isolated
//! processes, `judge` turns gates into cases and verdicts, `evaluate` ties a
//! save to a verdict, and the commands render the result.

pub mod audit;
pub mod cli;
pub mod commands;
pub mod compile;
pub mod config;
pub mod diag;
pub mod evaluate;
pub mod export;
pub mod fsio;
pub mod generate;
pub mod judge;
pub mod mock;
pub mod problem;
pub mod report;
pub mod report_text;
pub mod review;
pub mod sandbox;
pub mod scaffold;
pub mod score;
pub mod script;
pub mod session;
pub mod start;
pub mod tui;
pub mod ty;
pub mod verdict;
pub mod worker;
