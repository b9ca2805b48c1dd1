//! A practice or mock session as data over an injected clock, the gate
//! reports written from it, the mock's score, and exporting a case as a
//! test. Imports `base`, `problem` and `judge`; never `ui` or `cmd`.

pub mod check_report;
pub mod drill;
pub mod export;
pub mod metrics;
pub mod path;
pub mod report;
pub mod score;
pub mod state;
