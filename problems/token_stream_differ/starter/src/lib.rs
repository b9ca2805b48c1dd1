//! Your streaming token differ. The statement of each gate is in the
//! harness; the trait's documentation is one hover away in your editor.
//!
//! Later gates add methods to `TokenStreamDiffer`; until you write them they
//! keep their default bodies, which the harness reports as `not_implemented`.

use harness_contract::token_stream_differ::{DiffError, TokenStreamDiffer};

pub struct Differ {}

impl TokenStreamDiffer for Differ {
    fn new(baseline: Vec<String>, lookahead: usize) -> Self {
        Differ {}
    }

    fn feed(&mut self, tokens: Vec<String>) -> Result<Vec<String>, DiffError> {
        harness_contract::todo!()
    }

    fn close(&mut self) -> Vec<String> {
        harness_contract::todo!()
    }

    fn events(&self) -> Vec<String> {
        harness_contract::todo!()
    }

    fn cursor(&self) -> usize {
        harness_contract::todo!()
    }
}

harness_contract::export!(token_stream_differ, Differ);
