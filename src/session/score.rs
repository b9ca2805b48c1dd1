//! The score of a mock interview, explained line by line.
//!
//! Out of 100: each gate is worth an equal share; the gate in progress
//! earns half its share in proportion to the cases of it that passed in the
//! last run; finishing every gate early earns a bonus of up to 10 points,
//! in proportion to the share of the budget left.

use crate::session::report::Score;
use crate::session::state::{Mode, Session, Status};

pub fn score(session: &Session) -> Score {
    let per_gate = 100.0 / session.gate_count.max(1) as f64;
    let passed = session.gates_passed();
    let mut breakdown = vec![format!(
        "{passed} of {} gates passed × {per_gate:.1}: {:.1}",
        session.gate_count,
        passed as f64 * per_gate
    )];
    let mut total = passed as f64 * per_gate;
    if session.status != Status::Completed
        && let Some(run) = &session.last_run
        && let Some(&(gate, ok, all)) = run.gates.iter().find(|(g, _, _)| *g == session.current_gate())
        && all > 0
        && passed < session.gate_count
    {
        let partial = per_gate * 0.5 * ok as f64 / all as f64;
        breakdown
            .push(format!("gate {gate} in progress, {ok}/{all} cases passing × {:.1}: {partial:.1}", per_gate * 0.5));
        total += partial;
    }
    if session.status == Status::Completed && session.budget_ms > 0 {
        let used = session.ended_at_ms.unwrap_or(session.started_at_ms).saturating_sub(session.started_at_ms);
        let left = session.budget_ms.saturating_sub(used) as f64 / session.budget_ms as f64;
        let bonus = 10.0 * left;
        breakdown.push(format!("finished with {:.0}% of the budget left: +{bonus:.1}", left * 100.0));
        total += bonus;
    }
    Score { total: (total * 10.0).round() / 10.0, breakdown }
}

/// Mocks are scored; practice sessions are not.
pub fn score_of(session: &Session) -> Option<Score> {
    (session.mode == Mode::Mock).then(|| score(session))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::state::{GateOutcome, RunSummary};

    const MIN: u64 = 60_000;

    #[test]
    fn gates_partial_credit_and_time_bonus() {
        let mut s = Session::new("p", Mode::Mock, 4, 80 * MIN, 0);
        s.on_run(10 * MIN, &[GateOutcome { gate: 1, passed: 4, total: 4 }]);
        s.last_run = Some(RunSummary { build_ok: true, gates: vec![(1, 4, 4), (2, 3, 6)], ..Default::default() });
        let sc = score(&s);
        assert_eq!(sc.total, 25.0 + 6.3);
        assert_eq!(sc.breakdown.len(), 2, "{:?}", sc.breakdown);
        for g in 2..=4 {
            let outcomes: Vec<GateOutcome> = (1..=g).map(|n| GateOutcome { gate: n, passed: 1, total: 1 }).collect();
            s.on_run(40 * MIN, &outcomes);
        }
        assert_eq!(s.status, Status::Completed);
        let sc = score(&s);
        assert_eq!(sc.total, 105.0, "{:?}", sc.breakdown);
    }

    #[test]
    fn an_abandoned_mock_keeps_its_partial_credit_but_earns_no_bonus() {
        let mut s = Session::new("p", Mode::Mock, 2, 60 * MIN, 0);
        s.on_run(5 * MIN, &[GateOutcome { gate: 1, passed: 2, total: 2 }]);
        s.last_run = Some(RunSummary { build_ok: true, gates: vec![(1, 2, 2), (2, 1, 4)], ..Default::default() });
        s.on_quit(6 * MIN);
        assert_eq!(s.status, Status::Abandoned);
        let sc = score(&s);
        assert_eq!(sc.total, 50.0 + 6.3);
        assert!(sc.breakdown[1].starts_with("gate 2 in progress, 1/4 cases passing"), "{:?}", sc.breakdown);
        assert!(!sc.breakdown.iter().any(|l| l.contains("budget left")));
    }

    #[test]
    fn finishing_early_earns_a_bonus_in_proportion_to_the_time_left() {
        let mut s = Session::new("p", Mode::Mock, 1, 60 * MIN, 0);
        s.on_run(15 * MIN, &[GateOutcome { gate: 1, passed: 3, total: 3 }]);
        let sc = score(&s);
        assert_eq!(sc.total, 107.5, "{:?}", sc.breakdown);
        assert_eq!(sc.breakdown[1], "finished with 75% of the budget left: +7.5");
    }

    #[test]
    fn only_mocks_are_scored() {
        assert!(score_of(&Session::new("p", Mode::Practice, 2, MIN, 0)).is_none());
        assert!(score_of(&Session::new("p", Mode::Mock, 2, MIN, 0)).is_some());
    }
}
