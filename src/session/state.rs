//! A practice or mock session as pure data: the clock over an injected
//! `now`, gate progression, regressions, hints and the event timeline.
//!
//! No files, processes or terminal here: the TUI feeds events in and acts
//! on the transitions that come out, and tests drive it with fake times.
//! The whole state serializes, so a session survives the process (even
//! `kill -9`): wall time keeps running while it is closed, as it would in
//! a real interview.

use serde::{Deserialize, Serialize};

/// Version of the session-state file format.
pub const STATE_FORMAT_VERSION: u32 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Practice,
    Mock,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The clock is running.
    Running,
    /// Every gate passed.
    Completed,
    /// The budget ran out and the session froze.
    TimeUp,
    /// A mock session the candidate quit: recorded, never resumed.
    Abandoned,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Completed => "completed",
            Status::TimeUp => "time up",
            Status::Abandoned => "abandoned",
        }
    }
}

/// Per-gate counters; builds and runs count toward the gate that was
/// current when they happened.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GateStats {
    pub builds: u32,
    pub failed_builds: u32,
    pub test_runs: u32,
    pub hints_used: u32,
    pub regressions: u32,
    /// Milliseconds from the session's start to the run that passed it.
    pub passed_at_ms: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventKind {
    Started,
    Resumed,
    Save,
    BuildOk {
        ms: u64,
    },
    BuildFailed {
        errors: u32,
    },
    TestRun {
        passed_cases: u32,
        total_cases: u32,
        gates_passed: u32,
        /// Passing cases of the gate being worked on (0 in sessions
        /// recorded before this was kept).
        #[serde(default)]
        current_passed: u32,
    },
    GatePassed {
        gate: usize,
    },
    Regression {
        gate: usize,
    },
    Hint {
        gate: usize,
        index: usize,
    },
    Overtime,
    TimeUp,
    Completed,
    Quit,
    /// The process ended without quitting (a crash, `kill -9`, a lost
    /// terminal); recorded when the session resumes. `since_ms` is the last
    /// moment the session was known to be open.
    Interrupted {
        since_ms: u64,
    },
}

/// One moment on the session's timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Milliseconds since the session started.
    pub at_ms: u64,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// One gate's outcome in one run: how many of its cases passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GateOutcome {
    pub gate: usize,
    pub passed: usize,
    pub total: usize,
}

impl GateOutcome {
    pub fn all_passed(&self) -> bool {
        self.total > 0 && self.passed == self.total
    }
}

/// What a run changed, for the UI to announce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transition {
    GatePassed { gate: usize, split_ms: u64 },
    Regression { gate: usize },
    Completed,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub format_version: u32,
    /// Also the report's file stem: `<UTC stamp>-<problem>`.
    pub id: String,
    pub problem: String,
    pub mode: Mode,
    pub started_at_ms: u64,
    pub budget_ms: u64,
    /// The position on the path of the highest unlocked gate (1-based):
    /// "gate k of `gate_count`". Per-gate counters, snapshots and the
    /// `gate` of events are by position too; `path` says which gate of the
    /// problem stands at each.
    pub gate: usize,
    pub gate_count: usize,
    /// The path so far: the problem's gate numbers in the order they were
    /// unlocked (`path[k - 1]` is at position k). It grows when a gate
    /// passes and the next is drawn. Empty in session files written before
    /// paths: [`Session::upgrade`] reads those as the linear path.
    #[serde(default)]
    pub path: Vec<usize>,
    /// The seed of this session's draws (`session::path::draw`).
    #[serde(default)]
    pub draw_seed: u64,
    /// The candidate discarded the session on quitting (never saved: a
    /// discarded session leaves no file).
    #[serde(skip)]
    pub discarded: bool,
    pub status: Status,
    /// The candidate chose to keep going after the budget ran out.
    pub overtime: bool,
    pub ended_at_ms: Option<u64>,
    pub gates: Vec<GateStats>,
    /// Whether each gate passed in the latest run that judged it.
    pub passing: Vec<bool>,
    pub events: Vec<Event>,
    /// Per-gate pacing targets of a mock (ms from the start by which each
    /// gate should pass); empty in practice.
    #[serde(default)]
    pub pace_ms: Vec<u64>,
    /// The solution's sources at the moment each gate passed, by gate.
    #[serde(default)]
    pub snapshots: std::collections::BTreeMap<usize, Vec<SourceFile>>,
    /// The latest judged run, for the report.
    #[serde(default)]
    pub last_run: Option<RunSummary>,
    /// The candidate's answers on the first-ninety-seconds screen, when
    /// the session opened on it.
    #[serde(default)]
    pub first_ninety: Option<Vec<Answer>>,
    /// Each distinct failure met in a judged run, in the order first met
    /// (see [`Session::meet`]). Empty in files written before they were kept.
    #[serde(default)]
    pub met: Vec<MetFailure>,
}

/// A failure met during the session: a case (or cost check) of a gate that
/// failed with one verdict, however many runs showed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetFailure {
    /// The run it was first met in, as the first time it was shown.
    pub failure: FailureSummary,
    /// When it was first and last met (ms since the epoch).
    pub first_at_ms: u64,
    pub last_at_ms: u64,
    /// How many judged runs showed it.
    pub runs: u32,
    /// The run (the caller's count) that last showed it: a run summed up
    /// again once settled or shrunk is still one run.
    #[serde(skip)]
    pub seen_in: u64,
}

impl MetFailure {
    /// Whether the last run no longer shows it (a run that did not judge
    /// its gate, or did not build, says nothing: not fixed).
    pub fn fixed(&self, last: Option<&RunSummary>) -> bool {
        let Some(run) = last else { return false };
        let f = &self.failure;
        // A cost check is measured only once its gate's cases pass.
        let judged = |&&(g, passed, total): &&(usize, usize, usize)| {
            g == f.gate && (!f.case.starts_with("cost: ") || passed == total)
        };
        run.build_ok
            && run.gates.iter().any(|g| judged(&g))
            && !run.failures.iter().any(|o| o.gate == f.gate && o.case == f.case && o.verdict == f.verdict)
    }
}

/// Distinct failures kept per session: a session that meets more keeps
/// the first ones (and counts the rest in nothing).
pub const MET_KEPT: usize = 60;
/// Diff lines kept of a met failure (the last run keeps them all).
const MET_DIFF_LINES: usize = 24;

/// One of the seed's three questions and the candidate's one-line answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub question: String,
    pub answer: String,
}

/// One file of the solution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceFile {
    pub path: String,
    pub content: String,
}

/// A failing case as the report keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailureSummary {
    pub gate: usize,
    pub case: String,
    pub verdict: crate::judge::verdict::Verdict,
    pub message: String,
    /// The transcript diff, one line each, prefixed `  `, `- ` or `+ `.
    pub diff: Vec<String>,
    /// The case's operations, as `harness replay --ops` reads them
    /// (`[{"op": …, "args": […]}]`): the failure rebuilt from the report.
    /// Empty in reports written before they were kept.
    #[serde(default)]
    pub ops: Vec<serde_json::Value>,
    /// A shrunk generated case: how many operations it had before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrunk_from: Option<usize>,
}

/// The latest judged run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub build_ok: bool,
    /// The compiler's errors (plain text) when the build failed.
    pub build_errors: Vec<String>,
    /// (gate, cases passed, cases total).
    pub gates: Vec<(usize, usize, usize)>,
    pub failures: Vec<FailureSummary>,
}

/// How long a new session may be discarded on quitting.
pub const DISCARD_WITHIN_MS: u64 = 60_000;

impl Session {
    pub fn new(problem: &str, mode: Mode, gate_count: usize, budget_ms: u64, now_ms: u64) -> Session {
        let mut s = Session {
            format_version: STATE_FORMAT_VERSION,
            id: format!("{}-{problem}", crate::base::fsio::stamp(now_ms)),
            problem: problem.to_string(),
            mode,
            started_at_ms: now_ms,
            budget_ms,
            gate: 1,
            gate_count,
            path: vec![1],
            draw_seed: now_ms,
            discarded: false,
            status: Status::Running,
            overtime: false,
            ended_at_ms: None,
            gates: vec![GateStats::default(); gate_count],
            passing: vec![false; gate_count],
            events: Vec::new(),
            pace_ms: Vec::new(),
            snapshots: Default::default(),
            last_run: None,
            first_ninety: None,
            met: Vec::new(),
        };
        s.log(now_ms, EventKind::Started);
        s
    }

    /// The problem's gate number at `position` (1-based) of the path; the
    /// linear one where the path does not say (not drawn yet).
    pub fn gate_at(&self, position: usize) -> usize {
        self.path.get(position.wrapping_sub(1)).copied().unwrap_or(position)
    }

    /// The gate being worked on: its number in the problem.
    pub fn current_gate(&self) -> usize {
        self.gate_at(self.gate.clamp(1, self.gate_count.max(1)))
    }

    /// The path's first `gate` gates: what a run judges.
    pub fn unlocked(&self) -> Vec<usize> {
        (1..=self.gate.min(self.gate_count)).map(|p| self.gate_at(p)).collect()
    }

    /// A session written before paths were kept walked the gates in file
    /// order: give it that path.
    /// Records the failures of a judged run: each (gate, case, verdict) not
    /// met before is kept as first shown; one met before counts one more
    /// run. A build failure is not a failure of a case and is not kept.
    /// `run_number` names the run (from 1): the same run summed up again is
    /// not counted twice.
    pub fn meet(&mut self, run: &RunSummary, run_number: u64, now_ms: u64) {
        for f in &run.failures {
            let same = |m: &&mut MetFailure| {
                m.failure.gate == f.gate && m.failure.case == f.case && m.failure.verdict == f.verdict
            };
            if let Some(m) = self.met.iter_mut().find(same) {
                if m.seen_in != run_number {
                    m.runs += 1;
                    m.seen_in = run_number;
                    m.last_at_ms = now_ms;
                }
            } else if self.met.len() < MET_KEPT {
                let mut failure = f.clone();
                failure.diff.truncate(MET_DIFF_LINES);
                self.met.push(MetFailure {
                    failure,
                    first_at_ms: now_ms,
                    last_at_ms: now_ms,
                    runs: 1,
                    seen_in: run_number,
                });
            }
        }
    }

    pub fn upgrade(&mut self) {
        if self.path.is_empty() {
            self.path = (1..=self.gate.clamp(1, self.gate_count.max(1))).collect();
        }
    }

    pub fn elapsed_ms(&self, now_ms: u64) -> u64 {
        self.ended_at_ms.unwrap_or(now_ms).saturating_sub(self.started_at_ms)
    }

    /// Time left; negative in overtime.
    pub fn remaining_ms(&self, now_ms: u64) -> i64 {
        self.budget_ms as i64 - self.elapsed_ms(now_ms) as i64
    }

    pub fn is_running(&self) -> bool {
        self.status == Status::Running
    }

    /// Whether quitting now may leave no record: within the first minute,
    /// before any gate passed (trying the tool out is not a session).
    pub fn discardable(&self, now_ms: u64) -> bool {
        self.is_running() && self.gates_passed() == 0 && self.elapsed_ms(now_ms) < DISCARD_WITHIN_MS
    }

    /// Whether the budget is spent and the session should freeze now.
    pub fn time_is_up(&self, now_ms: u64) -> bool {
        self.is_running() && !self.overtime && self.remaining_ms(now_ms) <= 0
    }

    pub fn gates_passed(&self) -> usize {
        self.gates.iter().filter(|g| g.passed_at_ms.is_some()).count()
    }

    fn log(&mut self, now_ms: u64, kind: EventKind) {
        let at_ms = now_ms.saturating_sub(self.started_at_ms);
        self.events.push(Event { at_ms, kind });
    }

    fn current(&mut self) -> &mut GateStats {
        let i = self.gate.clamp(1, self.gate_count) - 1;
        &mut self.gates[i]
    }

    /// Picks the session up again. When it was not quit (its last event is
    /// not `Quit`), the gap is recorded as an interruption, not left
    /// unexplained.
    pub fn on_resume(&mut self, now_ms: u64) {
        if let Some(last) = self.events.last()
            && last.kind != EventKind::Quit
        {
            let since_ms = last.at_ms;
            self.log(now_ms, EventKind::Interrupted { since_ms });
        }
        self.log(now_ms, EventKind::Resumed);
    }

    pub fn on_save(&mut self, now_ms: u64) {
        self.log(now_ms, EventKind::Save);
    }

    pub fn on_build(&mut self, now_ms: u64, ok: bool, duration_ms: u64, errors: u32) {
        self.current().builds += 1;
        if ok {
            self.log(now_ms, EventKind::BuildOk { ms: duration_ms });
        } else {
            self.current().failed_builds += 1;
            self.log(now_ms, EventKind::BuildFailed { errors });
        }
    }

    /// [`Session::on_run_drawing`] for a linear problem: the next gate is
    /// the one after the current gate's number.
    pub fn on_run(&mut self, now_ms: u64, outcomes: &[GateOutcome]) -> Vec<Transition> {
        self.on_run_drawing(now_ms, outcomes, |path| path.last().map_or(1, |g| g + 1))
    }

    /// Records a judged run of the path's first `outcomes.len()` gates (in
    /// path order) and advances: when the current gate passes, `draw`
    /// picks the next gate from the path so far, and it is added to the
    /// path. A gate that passed before and fails now is a regression
    /// (reported once, when it starts failing). The current gate passes
    /// when it and every earlier gate pass in the same run.
    pub fn on_run_drawing(
        &mut self,
        now_ms: u64,
        outcomes: &[GateOutcome],
        draw: impl FnOnce(&[usize]) -> usize,
    ) -> Vec<Transition> {
        let mut out = Vec::new();
        if !self.is_running() {
            return out;
        }
        self.current().test_runs += 1;
        let passed_cases = outcomes.iter().map(|o| o.passed as u32).sum();
        let total_cases = outcomes.iter().map(|o| o.total as u32).sum();
        let gates_passed = outcomes.iter().take_while(|o| o.all_passed()).count() as u32;
        let current_passed = outcomes.get(self.gate - 1).map_or(0, |o| o.passed as u32);
        self.log(now_ms, EventKind::TestRun { passed_cases, total_cases, gates_passed, current_passed });
        for (i, o) in outcomes.iter().enumerate() {
            let position = i + 1;
            if i >= self.gate_count {
                continue;
            }
            let now_passing = o.all_passed();
            if position < self.gate && self.gates[i].passed_at_ms.is_some() && self.passing[i] && !now_passing {
                self.gates[i].regressions += 1;
                self.log(now_ms, EventKind::Regression { gate: position });
                out.push(Transition::Regression { gate: position });
            }
            self.passing[i] = now_passing;
        }
        let judged_current = outcomes.len() >= self.gate;
        if judged_current && outcomes.iter().take(self.gate).all(GateOutcome::all_passed) {
            let split_ms = self.elapsed_ms(now_ms);
            let g = self.gate;
            if self.gates[g - 1].passed_at_ms.is_none() {
                self.gates[g - 1].passed_at_ms = Some(split_ms);
                self.log(now_ms, EventKind::GatePassed { gate: g });
                out.push(Transition::GatePassed { gate: g, split_ms });
            }
            if g == self.gate_count {
                self.status = Status::Completed;
                self.ended_at_ms = Some(now_ms);
                self.log(now_ms, EventKind::Completed);
                out.push(Transition::Completed);
            } else {
                self.gate += 1;
                if self.path.len() < self.gate {
                    self.path.truncate(self.gate - 1);
                    let next = draw(&self.path);
                    self.path.push(next);
                }
            }
        }
        out
    }

    /// Reveals the next hint of the current gate, if there is one left;
    /// returns its index. Mocks have no hints.
    pub fn on_hint(&mut self, now_ms: u64, available: usize) -> Option<usize> {
        if self.mode == Mode::Mock || !self.is_running() {
            return None;
        }
        let gate = self.gate;
        let used = self.current().hints_used as usize;
        if used >= available {
            return None;
        }
        self.current().hints_used += 1;
        self.log(now_ms, EventKind::Hint { gate, index: used });
        Some(used)
    }

    pub fn hints_used(&self, gate: usize) -> usize {
        self.gates.get(gate.wrapping_sub(1)).map_or(0, |g| g.hints_used as usize)
    }

    /// Freezes the session at the end of the budget.
    pub fn on_time_up(&mut self, now_ms: u64) {
        if self.is_running() {
            self.status = Status::TimeUp;
            self.ended_at_ms = Some(now_ms);
            self.log(now_ms, EventKind::TimeUp);
        }
    }

    /// Practice only: keep going past the budget.
    pub fn continue_overtime(&mut self, now_ms: u64) -> bool {
        if self.mode != Mode::Practice || self.status != Status::TimeUp {
            return false;
        }
        self.status = Status::Running;
        self.overtime = true;
        self.ended_at_ms = None;
        self.log(now_ms, EventKind::Overtime);
        true
    }

    /// The candidate quits. A practice session is kept and resumes later;
    /// a mock session is recorded as abandoned.
    pub fn on_quit(&mut self, now_ms: u64) {
        self.log(now_ms, EventKind::Quit);
        if self.mode == Mode::Mock && self.is_running() {
            self.status = Status::Abandoned;
            self.ended_at_ms = Some(now_ms);
        }
    }

    /// Whether a later `harness start` should pick this session up.
    pub fn resumable(&self) -> bool {
        self.mode == Mode::Practice && self.status == Status::Running
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_000_000;
    const MIN: u64 = 60_000;

    fn run(s: &mut Session, at: u64, gates: &[(usize, usize)]) -> Vec<Transition> {
        let outcomes: Vec<GateOutcome> =
            gates.iter().enumerate().map(|(i, &(passed, total))| GateOutcome { gate: i + 1, passed, total }).collect();
        s.on_run(at, &outcomes)
    }

    fn failing(gate: usize, case: &str, verdict: crate::judge::verdict::Verdict) -> FailureSummary {
        FailureSummary {
            gate,
            case: case.into(),
            verdict,
            message: format!("{case} failed"),
            diff: (0..100).map(|i| format!("- line {i}")).collect(),
            ops: Vec::new(),
            shrunk_from: None,
        }
    }

    #[test]
    fn each_distinct_failure_is_kept_once_and_counted_per_run() {
        use crate::judge::verdict::Verdict;
        let mut s = Session::new("p", Mode::Practice, 4, 30 * MIN, T0);
        let one = RunSummary {
            build_ok: true,
            gates: vec![(1, 3, 4), (2, 0, 0)],
            failures: vec![failing(1, "empty get", Verdict::WrongAnswer)],
            ..Default::default()
        };
        s.meet(&one, 1, T0 + MIN);
        // The same run summed up again (settled, then shrunk): one run.
        s.meet(&one, 1, T0 + MIN + 5);
        let two = RunSummary {
            build_ok: true,
            gates: vec![(1, 2, 4)],
            failures: vec![
                failing(1, "empty get", Verdict::WrongAnswer),
                failing(1, "empty get", Verdict::Panic),
                failing(1, "cost: get", Verdict::TooSlow),
            ],
            ..Default::default()
        };
        s.meet(&two, 2, T0 + 2 * MIN);
        assert_eq!(s.met.len(), 3, "another verdict of the same case is another failure");
        assert_eq!((s.met[0].runs, s.met[0].first_at_ms, s.met[0].last_at_ms), (2, T0 + MIN, T0 + 2 * MIN));
        assert_eq!(s.met[0].failure.diff.len(), MET_DIFF_LINES, "a met failure keeps the start of its diff");
        // Fixed: judged again and gone. A cost check counts as judged only
        // when its gate's cases all pass.
        let three = RunSummary { build_ok: true, gates: vec![(1, 3, 4)], ..Default::default() };
        assert!(s.met[0].fixed(Some(&three)) && s.met[1].fixed(Some(&three)));
        assert!(!s.met[2].fixed(Some(&three)), "its cost was not measured");
        let broken = RunSummary { build_ok: false, ..Default::default() };
        assert!(!s.met[0].fixed(Some(&broken)) && !s.met[0].fixed(None));
        // Kept in the session file.
        let back: Session = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back.met.len(), 3);
        for i in 0..2 * MET_KEPT {
            s.meet(
                &RunSummary {
                    build_ok: true,
                    failures: vec![failing(2, &format!("case {i}"), Verdict::WrongAnswer)],
                    ..Default::default()
                },
                10 + i as u64,
                T0 + 3 * MIN,
            );
        }
        assert_eq!(s.met.len(), MET_KEPT);
    }

    #[test]
    fn the_clock_counts_down_and_into_overtime() {
        let mut s = Session::new("p", Mode::Practice, 4, 30 * MIN, T0);
        assert_eq!(s.remaining_ms(T0 + 10 * MIN), (20 * MIN) as i64);
        assert!(!s.time_is_up(T0 + 29 * MIN));
        assert!(s.time_is_up(T0 + 30 * MIN));
        s.on_time_up(T0 + 30 * MIN);
        assert_eq!(s.status, Status::TimeUp);
        // Frozen: the elapsed time stops at the freeze.
        assert_eq!(s.elapsed_ms(T0 + 99 * MIN), 30 * MIN);
        assert!(s.continue_overtime(T0 + 31 * MIN));
        assert_eq!(s.remaining_ms(T0 + 35 * MIN), -(5 * MIN as i64));
        assert!(!s.time_is_up(T0 + 35 * MIN), "overtime does not freeze again");
    }

    #[test]
    fn gates_pass_in_order_with_splits() {
        let mut s = Session::new("p", Mode::Practice, 3, 60 * MIN, T0);
        assert!(run(&mut s, T0 + MIN, &[(3, 5)]).is_empty());
        assert_eq!(run(&mut s, T0 + 5 * MIN, &[(5, 5)]), vec![Transition::GatePassed { gate: 1, split_ms: 5 * MIN }]);
        assert_eq!(s.gate, 2);
        // A run that judged only gate 1 cannot pass gate 2.
        assert!(run(&mut s, T0 + 6 * MIN, &[(5, 5)]).is_empty());
        assert!(run(&mut s, T0 + 7 * MIN, &[(5, 5), (1, 4)]).is_empty());
        assert_eq!(
            run(&mut s, T0 + 9 * MIN, &[(5, 5), (4, 4)]),
            vec![Transition::GatePassed { gate: 2, split_ms: 9 * MIN }]
        );
        let t = run(&mut s, T0 + 20 * MIN, &[(5, 5), (4, 4), (2, 2)]);
        assert_eq!(t, vec![Transition::GatePassed { gate: 3, split_ms: 20 * MIN }, Transition::Completed]);
        assert_eq!(s.status, Status::Completed);
        assert_eq!(s.gates_passed(), 3);
        assert_eq!(s.gates[0].test_runs, 2);
        assert_eq!(s.gates[1].test_runs, 3);
    }

    #[test]
    fn a_gate_that_passed_and_now_fails_is_one_regression() {
        let mut s = Session::new("p", Mode::Practice, 3, 60 * MIN, T0);
        run(&mut s, T0 + MIN, &[(5, 5)]);
        assert_eq!(run(&mut s, T0 + 2 * MIN, &[(4, 5), (0, 3)]), vec![Transition::Regression { gate: 1 }]);
        assert!(run(&mut s, T0 + 3 * MIN, &[(4, 5), (1, 3)]).is_empty(), "still failing is not a new regression");
        assert!(run(&mut s, T0 + 4 * MIN, &[(5, 5), (1, 3)]).is_empty());
        assert_eq!(run(&mut s, T0 + 5 * MIN, &[(3, 5), (1, 3)]), vec![Transition::Regression { gate: 1 }]);
        assert_eq!(s.gates[0].regressions, 2);
        // Regressions block the current gate: gate 2 passes only with gate 1.
        assert!(run(&mut s, T0 + 6 * MIN, &[(3, 5), (3, 3)]).is_empty());
        assert_eq!(s.gate, 2);
    }

    #[test]
    fn hints_are_counted_per_gate_and_mocks_have_none() {
        let mut s = Session::new("p", Mode::Practice, 2, MIN, T0);
        assert_eq!(s.on_hint(T0, 2), Some(0));
        assert_eq!(s.on_hint(T0, 2), Some(1));
        assert_eq!(s.on_hint(T0, 2), None);
        assert_eq!(s.hints_used(1), 2);
        let mut m = Session::new("p", Mode::Mock, 2, MIN, T0);
        assert_eq!(m.on_hint(T0, 2), None);
    }

    #[test]
    fn builds_count_toward_the_current_gate() {
        let mut s = Session::new("p", Mode::Practice, 2, MIN, T0);
        s.on_build(T0, false, 100, 2);
        s.on_build(T0, true, 100, 0);
        assert_eq!((s.gates[0].builds, s.gates[0].failed_builds), (2, 1));
    }

    #[test]
    fn quitting_keeps_practice_and_abandons_mocks() {
        let mut s = Session::new("p", Mode::Practice, 2, MIN, T0);
        s.on_quit(T0 + 1);
        assert!(s.resumable());
        let mut m = Session::new("p", Mode::Mock, 2, MIN, T0);
        m.on_quit(T0 + 1);
        assert_eq!(m.status, Status::Abandoned);
        assert!(!m.resumable());
    }

    #[test]
    fn a_resume_after_no_quit_records_the_interruption() {
        let mut s = Session::new("p", Mode::Practice, 2, 60 * MIN, T0);
        s.on_save(T0 + MIN);
        // Killed here: no quit event. Resumed four minutes later.
        s.on_resume(T0 + 5 * MIN);
        let kinds: Vec<&EventKind> = s.events.iter().map(|e| &e.kind).collect();
        assert_eq!(kinds[2..], [&EventKind::Interrupted { since_ms: MIN }, &EventKind::Resumed]);
        s.on_quit(T0 + 6 * MIN);
        s.on_resume(T0 + 9 * MIN);
        assert_eq!(s.events.last().unwrap().kind, EventKind::Resumed);
        assert_eq!(s.events[s.events.len() - 2].kind, EventKind::Quit, "a quit is no interruption");
    }

    #[test]
    fn the_path_grows_by_the_draw_when_a_gate_passes_and_old_files_read_as_linear() {
        let mut s = Session::new("p", Mode::Practice, 3, 60 * MIN, T0);
        assert_eq!(s.path, vec![1]);
        let outcomes = [GateOutcome { gate: 1, passed: 2, total: 2 }];
        s.on_run_drawing(T0 + MIN, &outcomes, |path| {
            assert_eq!(path, [1]);
            5
        });
        assert_eq!((s.gate, s.path.clone(), s.current_gate()), (2, vec![1, 5], 5));
        assert_eq!(s.unlocked(), vec![1, 5]);
        // Outcomes come in path order: position 2 is gate 5.
        let t = s.on_run_drawing(
            T0 + 2 * MIN,
            &[GateOutcome { gate: 1, passed: 2, total: 2 }, GateOutcome { gate: 5, passed: 1, total: 1 }],
            |_| 3,
        );
        assert_eq!(t, vec![Transition::GatePassed { gate: 2, split_ms: 2 * MIN }]);
        assert_eq!(s.path, vec![1, 5, 3]);
        // A path given in full is walked, not drawn.
        let mut forced = Session::new("p", Mode::Practice, 2, 60 * MIN, T0);
        forced.path = vec![1, 4];
        forced.on_run_drawing(T0 + MIN, &outcomes, |_| panic!("no draw on a forced path"));
        assert_eq!(forced.current_gate(), 4);
        // A file from before paths: no `path` key.
        let mut v = serde_json::to_value(&s).unwrap();
        v.as_object_mut().unwrap().remove("path");
        let mut old: Session = serde_json::from_value(v).unwrap();
        old.upgrade();
        assert_eq!(old.path, vec![1, 2, 3]);
    }

    #[test]
    fn state_round_trips_through_json() {
        let mut s = Session::new("p", Mode::Practice, 2, MIN, T0);
        s.on_save(T0 + 5);
        s.on_build(T0 + 6, true, 50, 0);
        run(&mut s, T0 + 7, &[(1, 1)]);
        let text = serde_json::to_string(&s).unwrap();
        let back: Session = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
        assert!(text.contains(r#""kind":"gate_passed","gate":1"#), "{text}");
    }
}
