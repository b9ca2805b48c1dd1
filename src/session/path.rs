//! Drawing a session's path through a problem's gates: when the current
//! gate passes, the next one is chosen among the gates it may go on to,
//! preferring follow-ups this candidate has never reached, then the ones
//! seen least recently, ties broken by the session's seeded generator.
//! Pure: the reports read from disk come in as [`Seen`].

use std::collections::BTreeMap;

use crate::problem::model::Problem;
use crate::problem::rng::Rng;
use crate::session::report::Report;

/// For each gate of one problem a candidate has reached: when they last
/// reached it (ms since the epoch, the session's start).
pub type Seen = BTreeMap<usize, u64>;

/// The gates of `problem` reached in `reports` (a report's gates up to
/// where its session got, on its path), each with its latest session start.
pub fn seen(problem: &str, reports: &[Report]) -> Seen {
    let mut out = Seen::new();
    for r in reports.iter().filter(|r| r.problem == problem) {
        let path = r.path();
        for (i, g) in r.gates.iter().enumerate() {
            let number = path.get(i).copied().unwrap_or(g.gate);
            if g.reached && number > 0 {
                let at = out.entry(number).or_insert(r.started_at_ms);
                *at = (*at).max(r.started_at_ms);
            }
        }
    }
    out
}

/// The gates a path may go on to after `path`: not on it yet, every gate
/// they build on already on it, and some full path of the problem still
/// begins with `path` followed by them. Ascending.
pub fn next_choices(problem: &Problem, path: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = problem
        .paths()
        .into_iter()
        .filter(|p| p.len() > path.len() && p.starts_with(path))
        .map(|p| p[path.len()])
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The next gate of a session on `path`: among [`next_choices`], the
/// never reached first, then the least recently reached; among equals the
/// one the seeded generator picks (the same `seed` and `path` pick the
/// same gate, so a report can be replayed). None when the path is full.
pub fn draw(problem: &Problem, path: &[usize], seen: &Seen, seed: u64) -> Option<usize> {
    let choices = next_choices(problem, path);
    let rank = |g: &usize| seen.get(g).map_or((0, 0), |&at| (1, at));
    let best = choices.iter().map(rank).min()?;
    let tied: Vec<usize> = choices.iter().copied().filter(|g| rank(g) == best).collect();
    let mut rng = Rng::new(seed ^ (path.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    Some(tied[rng.below(tied.len() as u64) as usize])
}

/// A whole path drawn at once, as `harness mock` does before it starts:
/// each step as [`draw`] would take it.
pub fn draw_path(problem: &Problem, seen: &Seen, seed: u64) -> Vec<usize> {
    let mut path = vec![1];
    while let Some(g) = draw(problem, &path, seen, seed) {
        path.push(g);
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::state::{Mode, Session};

    /// Gate 1; 2 and 3 build on 1; 4 on 2; 5 on 2 and 3; paths of 3.
    fn graph() -> Problem {
        crate::problem::model::tests_support::graph_problem(&[&[], &[1], &[1], &[2], &[2, 3]], 3)
    }

    #[test]
    fn choices_are_the_gates_whose_prerequisites_are_on_the_path_and_that_complete_a_path() {
        let p = graph();
        assert_eq!(next_choices(&p, &[1]), vec![2, 3]);
        assert_eq!(next_choices(&p, &[1, 2]), vec![3, 4]);
        // 5 builds on 2 and 3: after 1, 3 only 2 leads on (4 needs 2, 5 needs 2).
        assert_eq!(next_choices(&p, &[1, 3]), vec![2]);
        assert_eq!(next_choices(&p, &[1, 2, 4]), Vec::<usize>::new());
    }

    #[test]
    fn a_never_reached_gate_comes_first_then_the_least_recently_seen() {
        let p = graph();
        let mut seen = Seen::new();
        seen.insert(2, 100);
        for seed in 0..20 {
            assert_eq!(draw(&p, &[1], &seen, seed), Some(3), "3 was never reached");
        }
        seen.insert(3, 50);
        for seed in 0..20 {
            assert_eq!(draw(&p, &[1], &seen, seed), Some(3), "3 was seen longer ago");
        }
        seen.insert(3, 200);
        assert_eq!(draw(&p, &[1], &seen, 7), Some(2));
    }

    #[test]
    fn ties_are_broken_by_the_seed_and_the_same_seed_draws_the_same() {
        let p = graph();
        let seen = Seen::new();
        let drawn: std::collections::BTreeSet<usize> = (0..40).filter_map(|s| draw(&p, &[1], &seen, s)).collect();
        assert_eq!(drawn, [2, 3].into(), "both untried follow-ups get drawn across seeds");
        for s in 0..40 {
            assert_eq!(draw(&p, &[1], &seen, s), draw(&p, &[1], &seen, s));
        }
    }

    #[test]
    fn a_drawn_path_is_a_path_and_a_full_one_draws_nothing() {
        let p = graph();
        for s in 0..30 {
            let path = draw_path(&p, &Seen::new(), s);
            assert_eq!(p.check_path(&path), Ok(()), "{path:?}");
            assert_eq!(draw(&p, &path, &Seen::new(), s), None);
        }
    }

    #[test]
    fn reports_say_which_gates_were_reached_and_when_last() {
        let p = graph();
        let mut s = Session::new("g", Mode::Practice, 3, 60_000, 1_000);
        s.path = vec![1, 3];
        s.gate = 2;
        let old = Report::from_session(&s, &p, 2_000, None);
        s.started_at_ms = 5_000;
        s.path = vec![1, 2];
        let new = Report::from_session(&s, &p, 6_000, None);
        let seen = seen("g", &[old, new]);
        assert_eq!(seen, [(1, 5_000), (2, 5_000), (3, 1_000)].into());
    }
}
