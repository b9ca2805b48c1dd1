//! What a person sees: the practice TUI, the review TUI, shared widgets
//! (Markdown and ANSI rendering), and the text of results for `check`.
//! Drawing is pure (`view::draw(&state)`); every layer below may be used,
//! `cmd` never is.

pub mod ansi;
pub mod drill;
pub mod markdown;
pub mod ninety;
pub mod practice;
pub mod ready;
pub mod results;
pub mod review;
pub mod scale_chart;
pub mod screen;
pub mod scroll;
pub mod theme;
pub mod wrap;
