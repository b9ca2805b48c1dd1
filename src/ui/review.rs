//! The review TUI of `harness report`: the state and keys (`app`), the
//! report data it derives (`data`), its headless text (`text`) and the
//! drawing (`view`).

pub mod app;
pub mod data;
pub mod text;
pub mod view;
