//! Your scheduler. The statement of each gate is in the harness; the
//! trait's documentation is one hover away in your editor.
//!
//! Later gates add methods to `Scheduler`; until you write them they keep
//! their default bodies, which the harness reports as `not_implemented`.

use harness_contract::scheduler::Scheduler;

pub struct Sched {}

impl Scheduler for Sched {
    fn new() -> Self {
        Sched {}
    }

    fn schedule(&mut self, at_ms: u64, payload: String) -> u64 {
        harness_contract::todo!()
    }

    fn run_due(&mut self, now_ms: u64) -> Vec<u64> {
        harness_contract::todo!()
    }

    fn next_due(&mut self) -> Option<u64> {
        harness_contract::todo!()
    }
}

harness_contract::export!(scheduler, Sched);
