//! `harness mock`: a session under interview conditions.
//!
//! **Selection.** Unless `--problem` names one, the problem is drawn at
//! random from every problem that loads, weighted towards those the report
//! history shows were attempted least or went worst:
//!
//! ```text
//! weight = 1 / (1 + attempts) + (1 - best share of gates passed)
//!          + 0.5 when the latest attempt rewrote a gate
//! ```
//!
//! A problem whose gates form a graph adds the share of its follow-ups
//! (gates other than gate 1) this candidate never reached, 0 to 1: a
//! problem done once still has interviews left in it while its other
//! follow-ups are unseen. Its path is drawn whole before the session
//! starts, as `session::path::draw` draws a practice session's: follow-ups
//! never reached first, then the least recently seen.
//!
//! The last term is the seed's warning that a gate which forced a rewrite
//! means the first representation was wrong: such a problem comes back
//! sooner (`session::metrics` decides what a rewrite is).
//!
//! A problem never attempted weighs 2; one attempted once without passing a
//! gate weighs 1.5; one completed once weighs 0.5, completed three times
//! 0.25. Every weight stays positive, so no problem is ever ruled out, and
//! familiarity fades the weight slowly rather than at once. Every session
//! counts as an attempt, practice or mock, finished or not: time spent with
//! a problem is what makes it familiar. The random generator is passed in
//! (seeded from the clock only at the command's edge), so the draw is
//! testable.
//!
//! **Pacing.** Each gate's target is its share of the budget in proportion
//! to the problem's suggested minutes, cumulative from the start: for
//! gates of 12, 20, 28 and 30 minutes in a 60-minute budget the targets are
//! 8, 21:20, 40 and 60 minutes. They go into `Session::pace_ms`, which the
//! header compares with the clock and the report keeps per gate.
//!
//! **Conditions.** The candidate starts from the starter in a crate of its
//! own, `solutions/mock/<problem>` (a previous mock's crate is moved aside;
//! the practice solution and its session are never touched). The fixed
//! budget has no pause and no overtime, there are no hints, locked
//! statements stay locked, and quitting asks first and records the session
//! as abandoned. Nothing names the problem before the TUI opens: the title
//! is part of the interview.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::base::config::Config;
use crate::base::fsio;
use crate::cmd::start;
use crate::problem::model::{self, Problem};
use crate::problem::rng::Rng;
use crate::session::report::{self, Report};
use crate::session::state::{Mode, Session};

pub const NO_TTY: &str = "`harness mock` needs an interactive terminal (stdin and stdout must be a TTY). \
     For scripts and CI, use `harness check <problem>`.";

/// The one line printed before the TUI opens when the problem was drawn.
pub const DRAWN: &str = "mock interview: problem drawn; the statement appears when the session starts";

/// What the report history says about one problem.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    /// Sessions of the problem, of either mode, in any state.
    pub attempts: usize,
    /// The largest share of its gates passed in one session, 0 to 1.
    pub best_share: f64,
    /// Gates of the most recent session that were rewrites.
    pub latest_rewrites: usize,
    /// When the most recent session started.
    pub latest_at_ms: u64,
}

/// Each problem's history, from every report on disk.
pub fn history(reports: &[Report]) -> BTreeMap<String, History> {
    let mut out: BTreeMap<String, History> = BTreeMap::new();
    for r in reports {
        let h = out.entry(r.problem.clone()).or_default();
        h.attempts += 1;
        let share = if r.gate_count == 0 { 0.0 } else { r.gates_passed as f64 / r.gate_count as f64 };
        h.best_share = h.best_share.max(share);
        if h.attempts == 1 || r.started_at_ms >= h.latest_at_ms {
            h.latest_at_ms = r.started_at_ms;
            h.latest_rewrites = r.metrics.as_ref().map_or(0, |m| {
                m.gates.iter().filter(|g| g.shape == Some(crate::session::metrics::Shape::Rewrite)).count()
            });
        }
    }
    out
}

/// The selection weight of a problem with this history (none: never
/// attempted). See the module documentation.
pub fn weight(history: Option<&History>) -> f64 {
    let (attempts, best, rewrote) =
        history.map_or((0, 0.0, false), |h| (h.attempts, h.best_share, h.latest_rewrites > 0));
    1.0 / (1.0 + attempts as f64) + (1.0 - best.clamp(0.0, 1.0)) + if rewrote { 0.5 } else { 0.0 }
}

/// `(problem, weight)` for each candidate problem, in the given order.
pub fn weights(ids: &[String], reports: &[Report]) -> Vec<(String, f64)> {
    let h = history(reports);
    ids.iter().map(|id| (id.clone(), weight(h.get(id)))).collect()
}

/// For a graph problem, the share of its follow-ups (every gate but
/// the first) not reached in `reports`; 0 for a linear problem (see the
/// module documentation).
pub fn unseen_followups(problem: &Problem, reports: &[Report]) -> f64 {
    if !problem.is_graph() || problem.gates.len() < 2 {
        return 0.0;
    }
    let seen = crate::session::path::seen(&problem.id, reports);
    let unseen = (2..=problem.gates.len()).filter(|g| !seen.contains_key(g)).count();
    unseen as f64 / (problem.gates.len() - 1) as f64
}

/// Draws one problem with probability proportional to its weight.
pub fn draw<'a>(weighted: &'a [(String, f64)], rng: &mut Rng) -> Option<&'a str> {
    let total: f64 = weighted.iter().map(|(_, w)| w.max(0.0)).sum();
    if weighted.is_empty() || total <= 0.0 {
        return None;
    }
    let mut x = rng.unit() * total;
    for (id, w) in weighted {
        let w = w.max(0.0);
        if x < w {
            return Some(id);
        }
        x -= w;
    }
    // Rounding can leave `x` a hair above the last weight.
    weighted.iter().rev().find(|(_, w)| *w > 0.0).map(|(id, _)| id.as_str())
}

/// Cumulative per-gate targets (ms from the start) for `budget_ms`, each
/// gate's share in proportion to its suggested minutes; equal shares when
/// no gate suggests any. The last target is the whole budget.
pub fn pace_targets(gate_minutes: &[u32], budget_ms: u64) -> Vec<u64> {
    let total: u64 = gate_minutes.iter().map(|&m| m as u64).sum();
    let equal = total == 0;
    let whole = if equal { gate_minutes.len() as u64 } else { total };
    let mut so_far = 0u64;
    gate_minutes
        .iter()
        .map(|&m| {
            so_far += if equal { 1 } else { m as u64 };
            // In u128: a budget in ms times a sum of minutes must not overflow.
            (budget_ms as u128 * so_far as u128 / whole as u128) as u64
        })
        .collect()
}

/// A new mock session of `problem` on `path` (drawn whole beforehand)
/// with its pacing targets.
pub fn new_session(problem: &Problem, path: Vec<usize>, budget_ms: u64, now_ms: u64) -> Session {
    let mut session = Session::new(&problem.id, Mode::Mock, problem.path_length, budget_ms, now_ms);
    let minutes: Vec<u32> = problem.gates_of(&path).map(|g| g.minutes).collect();
    session.pace_ms = pace_targets(&minutes, budget_ms);
    session.path = path;
    session
}

/// The crate a mock of `problem` is written in.
pub fn solution_dir(config: &Config, problem: &str) -> PathBuf {
    config.solutions_dir.join("mock").join(problem)
}

/// A fresh crate from the starter at `dir`; an earlier one is moved aside
/// and its new place returned (printed after the session, not before,
/// since its path names the problem).
fn fresh_solution(config: &Config, problem: &Problem, dir: &Path, now_ms: u64) -> Result<Option<PathBuf>> {
    let moved = if dir.exists() { Some(start::move_aside(dir, now_ms)?) } else { None };
    start::create_solution(config, problem, dir)?;
    Ok(moved)
}

/// Every problem that loads; the broken ones are named on stderr and
/// left out of the draw.
fn loadable_ids(config: &Config) -> Result<Vec<String>> {
    let mut ids = Vec::new();
    for id in model::list_ids(&config.problems_dir)? {
        match Problem::load(&config.problems_dir, &config.contract_dir, &id) {
            Ok(_) => ids.push(id),
            Err(e) => eprintln!("warning: left out of the draw: {e:#}"),
        }
    }
    Ok(ids)
}

pub fn mock(config: &Config, chosen: Option<&str>, minutes: Option<u32>) -> Result<u8> {
    if minutes == Some(0) {
        bail!("--minutes must be at least 1");
    }
    let picked = match chosen {
        Some(id) => Some(Problem::load(&config.problems_dir, &config.contract_dir, id)?),
        None => None,
    };
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        bail!(NO_TTY);
    }
    let problem = match picked {
        Some(p) => {
            println!("mock interview: the statement appears when the session starts");
            p
        }
        None => {
            let ids = loadable_ids(config)?;
            let (reports, _broken) = report::load_all(&config.reports_dir);
            let mut weighted = weights(&ids, &reports);
            for (id, w) in weighted.iter_mut() {
                if let Ok(p) = Problem::load(&config.problems_dir, &config.contract_dir, id) {
                    *w += unseen_followups(&p, &reports);
                }
            }
            let seed = fsio::now_ms() ^ ((std::process::id() as u64) << 32);
            let Some(id) = draw(&weighted, &mut Rng::new(seed)) else {
                bail!("no problems to draw from in {}", config.problems_dir.display());
            };
            println!("{DRAWN}");
            Problem::load(&config.problems_dir, &config.contract_dir, id)?
        }
    };
    let minutes = minutes.unwrap_or(config.mock_minutes).max(1) as u64;
    // The clock starts only when the candidate is ready; leaving here
    // writes nothing at all (no lock, no state, no solution folder).
    if !crate::ui::ready::run(minutes, chosen.is_some())? {
        println!("mock not started: nothing recorded");
        return Ok(0);
    }
    let _lock = report::lock_session(&config.reports_dir, crate::session::state::Mode::Mock, &problem.id)?;
    let now = fsio::now_ms();
    let dir = solution_dir(config, &problem.id);
    let moved = fresh_solution(config, &problem, &dir, now)?;
    let budget_ms = minutes * 60_000;
    let (reports, _) = report::load_all(&config.reports_dir);
    let seen = crate::session::path::seen(&problem.id, &reports);
    let path = crate::session::path::draw_path(&problem, &seen, now ^ ((std::process::id() as u64) << 20));
    let mut session = new_session(&problem, path, budget_ms, now);
    report::save_state(&config.reports_dir, &session)?;
    start::first_ninety(config, &problem, &mut session)?;
    let notes =
        moved.iter().map(|old| format!("the previous mock's solution was moved to {}", fsio::shown(old))).collect();
    let (session, report) = crate::ui::practice::run(config, problem, session, dir.clone(), notes)?;
    start::after(&session, report.as_deref());
    if session.discarded {
        println!("your solution: {}", dir.display());
        return Ok(0);
    }
    if let Some(score) = crate::session::score::score_of(&session) {
        println!("score: {:.1}", score.total);
        for line in &score.breakdown {
            println!("  {line}");
        }
    }
    println!("your solution: {}", dir.display());
    if let Some(old) = moved {
        println!("the previous mock's solution was moved to {}", old.display());
    }
    println!("review it: harness report {}", session.id);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::state::Status;

    fn report(problem: &str, passed: usize, gates: usize, at: u64) -> Report {
        Report {
            format_version: report::REPORT_FORMAT_VERSION,
            id: format!("{at}-{problem}"),
            problem: problem.into(),
            title: problem.into(),
            mode: Mode::Practice,
            status: Status::Completed,
            in_progress: false,
            started_at: String::new(),
            started_at_ms: at,
            ended_at_ms: None,
            budget_ms: 0,
            elapsed_ms: 0,
            overtime: false,
            gate_count: gates,
            gates_passed: passed,
            path: Vec::new(),
            gates: Vec::new(),
            last_run: None,
            events: Vec::new(),
            score: None,
            metrics: None,
            first_ninety: None,
            met: Vec::new(),
            reference: Vec::new(),
        }
    }

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn weights_favour_the_unattempted_and_the_badly_done() {
        assert_eq!(weight(None), 2.0);
        let once_failed = History { attempts: 1, best_share: 0.0, ..Default::default() };
        let once_done = History { attempts: 1, best_share: 1.0, ..Default::default() };
        let thrice_done = History { attempts: 3, best_share: 1.0, ..Default::default() };
        let half = History { attempts: 1, best_share: 0.5, ..Default::default() };
        assert_eq!(weight(Some(&once_failed)), 1.5);
        assert_eq!(weight(Some(&half)), 1.0);
        assert_eq!(weight(Some(&once_done)), 0.5);
        assert_eq!(weight(Some(&thrice_done)), 0.25);
        assert!(
            weight(Some(&History { attempts: 1000, best_share: 1.0, ..Default::default() })) > 0.0,
            "never ruled out"
        );
        let rewrote = History { attempts: 1, best_share: 1.0, latest_rewrites: 1, latest_at_ms: 0 };
        assert_eq!(weight(Some(&rewrote)), 1.0, "a rewrite brings a finished problem back sooner");
    }

    #[test]
    fn history_counts_every_session_and_keeps_the_best_share() {
        let reports = vec![report("a", 1, 4, 1), report("a", 3, 4, 2), report("a", 2, 4, 3), report("b", 0, 4, 4)];
        let h = history(&reports);
        assert_eq!((h["a"].attempts, h["a"].best_share, h["a"].latest_at_ms), (3, 0.75, 3));
        assert_eq!((h["b"].attempts, h["b"].best_share), (1, 0.0));
        let w = weights(&ids(&["a", "b", "c"]), &reports);
        assert_eq!(w, vec![("a".into(), 0.5), ("b".into(), 1.5), ("c".into(), 2.0)]);
    }

    #[test]
    fn the_draw_follows_the_weights_and_is_reproducible() {
        let weighted = vec![("a".to_string(), 0.5), ("b".to_string(), 1.5), ("c".to_string(), 2.0)];
        let mut counts = BTreeMap::new();
        let mut rng = Rng::new(42);
        for _ in 0..40_000 {
            *counts.entry(draw(&weighted, &mut rng).unwrap().to_string()).or_insert(0u32) += 1;
        }
        // Expected shares 1/8, 3/8, 4/8; allow one percentage point.
        for (id, want) in [("a", 0.125), ("b", 0.375), ("c", 0.5)] {
            let got = counts[id] as f64 / 40_000.0;
            assert!((got - want).abs() < 0.01, "{id}: {got} vs {want}");
        }
        let first: Vec<&str> = (0..5).map(|_| draw(&weighted, &mut Rng::new(7)).unwrap()).collect();
        assert!(first.windows(2).all(|w| w[0] == w[1]), "one seed, one draw");
        assert_eq!(draw(&[], &mut Rng::new(1)), None);
        let only = vec![("x".to_string(), 0.0), ("y".to_string(), 1.0)];
        assert!((0..100).all(|s| draw(&only, &mut Rng::new(s)) == Some("y")), "weight 0 is never drawn");
    }

    #[test]
    fn pace_targets_scale_suggested_minutes_to_the_budget() {
        const MIN: u64 = 60_000;
        assert_eq!(pace_targets(&[12, 20, 28, 30], 90 * MIN), vec![12 * MIN, 32 * MIN, 60 * MIN, 90 * MIN]);
        assert_eq!(pace_targets(&[12, 20, 28, 30], 60 * MIN), vec![8 * MIN, 21 * MIN + 20_000, 40 * MIN, 60 * MIN]);
        assert_eq!(pace_targets(&[0, 0], 10 * MIN), vec![5 * MIN, 10 * MIN], "no suggestion: equal shares");
        let odd = pace_targets(&[7, 11, 13], 1_000_003);
        assert_eq!(*odd.last().unwrap(), 1_000_003, "the last target is the whole budget");
        assert!(odd.windows(2).all(|w| w[0] < w[1]));
        assert!(pace_targets(&[], MIN).is_empty());
    }

    #[test]
    fn unseen_follow_ups_weigh_and_the_drawn_path_prefers_them() {
        let p = crate::problem::model::tests_support::graph_problem(&[&[], &[1], &[1], &[2]], 2);
        assert_eq!(unseen_followups(&p, &[]), 1.0);
        let mut s = new_session(&p, vec![1, 2], 60_000, 1_000);
        s.gate = 2;
        let seen = vec![Report::from_session(&s, &p, 2_000, None)];
        assert!((unseen_followups(&p, &seen) - 2.0 / 3.0).abs() < 1e-9, "gate 2 was reached");
        for seed in 0..10 {
            let path = crate::session::path::draw_path(&p, &crate::session::path::seen("g", &seen), seed);
            assert_eq!(path, vec![1, 3], "gate 3 is the follow-up never reached");
        }
        let linear = crate::problem::model::tests_support::linear_problem(4);
        assert!(!linear.is_graph());
        assert_eq!(unseen_followups(&linear, &[]), 0.0, "a linear problem weighs as before");
    }

    #[test]
    fn a_new_mock_session_carries_its_pacing() {
        let p = Problem::load(
            &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("problems"),
            &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("contract"),
            "versioned_kv",
        )
        .unwrap();
        let s = new_session(&p, p.default_path(), 90 * 60_000, 1_000);
        assert_eq!(s.mode, Mode::Mock);
        assert_eq!(s.pace_ms.len(), p.path_length, "a pace for each position of the path");
        assert_eq!(*s.pace_ms.last().unwrap(), 90 * 60_000);
    }
}
