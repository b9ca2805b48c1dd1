//! Problems as data: `problems/<id>/problem.toml` read into a typed model,
//! the case-script language, parameter domains and seeded generators.
//! Imports only `base`; knows nothing of processes, sessions or terminals.

pub mod contract_source;
pub mod domain;
pub mod generate;
pub mod model;
pub mod refcut;
pub mod rng;
pub mod scale;
pub mod script;
pub mod signature;
pub mod ty;
