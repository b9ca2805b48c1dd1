//! Your pipeline. The statement of each gate is in the harness; the
//! trait's documentation is one hover away in your editor.
//!
//! Later gates add methods to `Pipeline`; until you write them they keep
//! their default bodies, which the harness reports as `not_implemented`.
//! `complete_nth` and `fail_nth` are provided by the contract: leave them
//! alone, they call your `running`, `complete` and `fail`.

use harness_contract::bounded_pipeline::{Admission, PipeError, Pipeline};

pub struct Pool {}

impl Pipeline for Pool {
    fn new(capacity: usize, workers: usize, initial_service_ms: u64) -> Self {
        Pool {}
    }

    fn submit(&mut self, now_ms: u64) -> Result<Admission, PipeError> {
        harness_contract::todo!()
    }

    fn take(&mut self, now_ms: u64) -> Option<u64> {
        harness_contract::todo!()
    }

    fn complete(&mut self, id: u64, now_ms: u64) -> Result<u64, PipeError> {
        harness_contract::todo!()
    }

    fn fail(&mut self, id: u64, now_ms: u64) -> Result<u64, PipeError> {
        harness_contract::todo!()
    }

    fn running(&self) -> Vec<u64> {
        harness_contract::todo!()
    }

    fn queued(&self) -> Vec<u64> {
        harness_contract::todo!()
    }

    fn stats(&self) -> (u64, u64, u64, u64) {
        harness_contract::todo!()
    }
}

harness_contract::export!(bounded_pipeline, Pool);
