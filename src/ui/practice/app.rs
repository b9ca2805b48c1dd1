//! The practice session's state and its `update`: every input (keys, file
//! changes, the runner's progress, the clock) is a [`Msg`]; `update`
//! changes the state and returns the [`Effect`]s for the loop to perform.
//! Drawing reads the state only (see `view`).

use std::path::PathBuf;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::judge::evaluate::Evaluation;
use crate::judge::suite::{Case, CaseResult};
use crate::problem::model::Problem;
use crate::problem::script::Step;
use crate::session::state::{FailureSummary, GateOutcome, Mode, RunSummary, Session, SourceFile, Transition};
use crate::ui::results;
use crate::ui::scroll::Scroll;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Statement,
    Results,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlay {
    Help,
    ConfirmQuit,
    Summary,
}

/// What the background runner is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runner {
    /// Building the reference and the hidden cases, once per session.
    Preparing,
    Idle,
    Compiling {
        since_ms: u64,
    },
    Running {
        since_ms: u64,
        done: usize,
        total: usize,
    },
    /// The cases' verdict is on screen; the cost of the gates whose cases
    /// pass is being measured, and decides whether they pass.
    Measuring {
        since_ms: u64,
        checks: usize,
    },
}

/// Reports from the runner thread.
#[derive(Debug)]
pub enum RunnerMsg {
    Ready,
    /// The judge could not be prepared (a broken problem, no toolchain).
    Failed(String),
    Compiling,
    Built {
        ok: bool,
        duration_ms: u64,
        errors: u32,
    },
    Progress {
        done: usize,
        total: usize,
    },
    /// The cases' verdict, with the sources it judged. When scale checks
    /// are still pending ([`Evaluation::settled`] is false), `Settled`
    /// follows with the gates' outcome.
    Finished(Box<Evaluation>, Vec<SourceFile>),
    /// The same run with its pending scale checks measured.
    Settled(Box<Evaluation>),
    /// The same run with its first failing generated cases shrunk.
    Refined(Box<Evaluation>),
    /// The run was abandoned because a newer save arrived.
    Cancelled,
    Error(String),
}

#[derive(Debug)]
pub enum Msg {
    Key(KeyEvent),
    Tick,
    /// The solution's sources changed on disk (a settled save).
    Changed,
    /// One raw file event; the event loop debounces these into `Changed`.
    FileEvent(super::watch::Change),
    /// Saving the session state failed (it is saved off the event loop).
    SaveFailed(String),
    Runner(RunnerMsg),
    /// The process was asked to end (SIGTERM, SIGHUP, SIGINT): quit at once.
    Stop,
}

#[derive(Debug, PartialEq)]
pub enum Effect {
    /// Build and judge these gates (the path's unlocked ones, in order) now.
    Run {
        path: Vec<usize>,
    },
    /// Abandon the run in progress (a newer one is queued).
    Cancel,
    /// Save the session state.
    Persist,
    /// Write the gate report.
    Report,
    OpenEditor,
    Export {
        case: String,
        steps: Vec<Step>,
    },
    /// Leave no record of this session (its state and any report go).
    Discard,
    Quit,
}

/// A transient message in the footer.
#[derive(Clone, Debug, PartialEq)]
pub struct Notice {
    pub text: String,
    pub good: bool,
    pub until_ms: u64,
}

pub struct App {
    pub problem: Problem,
    pub session: Session,
    pub solution_dir: PathBuf,
    pub now_ms: u64,
    pub runner: Runner,
    /// A save arrived during a run: exactly one more run follows it.
    pub rerun_queued: bool,
    pub last: Option<Evaluation>,
    pub focus: Focus,
    /// The focused pane fills the screen (`z`): room for long statements,
    /// diffs, compiler errors and cost charts on a small terminal.
    pub zoom: bool,
    pub statement_gate: usize,
    pub statement_scroll: Scroll,
    pub detail_scroll: Scroll,
    pub selected: usize,
    pub overlay: Option<Overlay>,
    pub notice: Option<Notice>,
    /// The budget ran out during a run: freeze when it finishes.
    pub time_up_pending: bool,
    /// The sources of a verdict whose outcome awaits its scale checks.
    pub unsettled: Option<Vec<SourceFile>>,
    /// `session.last_run` is behind `last`: see [`App::before_writes`].
    pub summary_due: bool,
    /// Runs judged since this screen opened (a settled or shrunk run is
    /// the same run): names a run for `Session::meet`.
    pub runs_judged: u64,
    /// Path of the last report written, for the summary.
    pub report_path: Option<PathBuf>,
    pub error: Option<String>,
    pub frame: usize,
    /// What the command said before the TUI opened (a resumed session, a
    /// solution created or moved, where the solution is): shown on the
    /// first screen until the first key or save.
    pub intro: Vec<String>,
    /// The gates of this problem the candidate reached in earlier sessions
    /// (from `reports/`), for drawing the next follow-up.
    pub seen: crate::session::path::Seen,
}

const NOTICE_MS: u64 = 6_000;

impl App {
    pub fn new(problem: Problem, session: Session, solution_dir: PathBuf, now_ms: u64) -> App {
        let gate = session.gate;
        let overlay = (!session.is_running()).then_some(Overlay::Summary);
        App {
            problem,
            session,
            solution_dir,
            now_ms,
            runner: Runner::Preparing,
            rerun_queued: false,
            last: None,
            focus: Focus::Results,
            zoom: false,
            statement_gate: gate,
            statement_scroll: Scroll::default(),
            detail_scroll: Scroll::default(),
            selected: 0,
            overlay,
            notice: None,
            time_up_pending: false,
            unsettled: None,
            summary_due: false,
            runs_judged: 0,
            report_path: None,
            error: None,
            frame: 0,
            intro: Vec::new(),
            seen: Default::default(),
        }
    }

    /// Where gate number `gate` stands on the session's path (1-based);
    /// its number when it is not on it (a linear problem's are the same).
    pub fn position_of(&self, gate: usize) -> usize {
        self.session.path.iter().position(|&g| g == gate).map_or(gate, |i| i + 1)
    }

    /// Brings `session.last_run` up to date with the verdict on screen.
    /// Summing up a run (a diff per failing case) takes longer than drawing
    /// it, so the event loop calls this after the draw, before it saves the
    /// session or writes a report.
    pub fn before_writes(&mut self) {
        // Due only for runs judged while the session ran (it may have
        // frozen since, on the same verdict).
        if std::mem::take(&mut self.summary_due)
            && let Some(eval) = &self.last
        {
            let run = summarize(eval);
            self.session.meet(&run, self.runs_judged, self.now_ms);
            self.session.last_run = Some(run);
        }
    }

    pub fn busy(&self) -> bool {
        matches!(self.runner, Runner::Compiling { .. } | Runner::Running { .. } | Runner::Measuring { .. })
    }

    /// Shows a transient message in the footer.
    pub fn notify(&mut self, text: impl Into<String>, good: bool) {
        self.notice = Some(Notice { text: text.into(), good, until_ms: self.now_ms + NOTICE_MS });
    }

    /// The failing cases of the last run, in gate order.
    pub fn failures(&self) -> Vec<&(Case, CaseResult)> {
        self.last.iter().flat_map(|e| e.gates.iter().flat_map(|g| g.failures.iter())).collect()
    }

    pub fn selected_failure(&self) -> Option<&(Case, CaseResult)> {
        self.failures().get(self.selected).copied()
    }

    pub fn hints(&self) -> &[String] {
        self.problem.gates.get(self.session.current_gate() - 1).map_or(&[], |g| g.hints.as_slice())
    }

    /// Whether the session has ended and no longer judges saves.
    pub fn frozen(&self) -> bool {
        !self.session.is_running()
    }

    fn request_run(&mut self) -> Vec<Effect> {
        if self.frozen() || self.time_up_pending {
            return Vec::new();
        }
        match self.runner {
            Runner::Preparing => {
                self.rerun_queued = true;
                Vec::new()
            }
            Runner::Compiling { .. } | Runner::Running { .. } | Runner::Measuring { .. } => {
                self.rerun_queued = true;
                vec![Effect::Cancel]
            }
            Runner::Idle => {
                self.runner = Runner::Compiling { since_ms: self.now_ms };
                vec![Effect::Run { path: self.session.unlocked() }]
            }
        }
    }

    pub fn update(&mut self, msg: Msg) -> Vec<Effect> {
        if self.notice.as_ref().is_some_and(|n| n.until_ms <= self.now_ms) {
            self.notice = None;
        }
        match msg {
            Msg::Key(key) if key.kind != KeyEventKind::Release => {
                self.intro.clear();
                self.on_key(key)
            }
            Msg::Key(_) => Vec::new(),
            Msg::Tick => self.on_tick(),
            Msg::Changed => {
                if self.frozen() {
                    self.notify("the session has ended: saves are no longer judged", false);
                    return Vec::new();
                }
                self.intro.clear();
                self.session.on_save(self.now_ms);
                let mut fx = vec![Effect::Persist];
                fx.extend(self.request_run());
                fx
            }
            Msg::Runner(m) => self.on_runner(m),
            Msg::FileEvent(_) => Vec::new(),
            Msg::SaveFailed(e) => {
                self.notify(e, false);
                Vec::new()
            }
            Msg::Stop => self.quit(),
        }
    }

    fn on_tick(&mut self) -> Vec<Effect> {
        self.frame = self.frame.wrapping_add(1);
        if self.session.time_is_up(self.now_ms) {
            if self.busy() {
                // Judging of the last save completes first.
                self.time_up_pending = true;
                return Vec::new();
            }
            return self.freeze();
        }
        Vec::new()
    }

    fn freeze(&mut self) -> Vec<Effect> {
        self.time_up_pending = false;
        self.rerun_queued = false;
        self.session.on_time_up(self.now_ms);
        self.overlay = Some(Overlay::Summary);
        vec![Effect::Persist, Effect::Report]
    }

    fn on_runner(&mut self, msg: RunnerMsg) -> Vec<Effect> {
        let mut fx = Vec::new();
        match msg {
            RunnerMsg::Ready => {
                self.runner = Runner::Idle;
                self.rerun_queued = false;
                fx.extend(self.request_run());
            }
            RunnerMsg::Failed(e) => {
                self.runner = Runner::Idle;
                self.error = Some(e);
            }
            RunnerMsg::Compiling => self.runner = Runner::Compiling { since_ms: self.now_ms },
            RunnerMsg::Built { ok, duration_ms, errors } => {
                if self.session.is_running() {
                    self.session.on_build(self.now_ms, ok, duration_ms, errors);
                    fx.push(Effect::Persist);
                }
                if ok {
                    self.runner = Runner::Running { since_ms: self.now_ms, done: 0, total: 0 };
                }
            }
            RunnerMsg::Progress { done, total } => {
                if let Runner::Running { since_ms, .. } = self.runner {
                    self.runner = Runner::Running { since_ms, done, total };
                }
            }
            RunnerMsg::Finished(eval, sources) if !eval.settled() => {
                // On screen now; the outcome waits for the cost.
                self.error = None;
                let checks = eval.gates.iter().map(|g| g.scale_pending.len()).sum();
                self.runner = Runner::Measuring { since_ms: self.now_ms, checks };
                self.unsettled = Some(sources);
                self.last = Some(*eval);
                self.selected = self.selected.min(self.failures().len().saturating_sub(1));
                self.detail_scroll.top();
            }
            RunnerMsg::Settled(eval) => {
                let Some(sources) = self.unsettled.take() else { return fx };
                let selected = self.selected;
                let scroll = std::mem::take(&mut self.detail_scroll);
                fx.extend(self.finished(*eval, sources));
                // The same verdict, completed: keep the reader's place.
                self.selected = selected.min(self.failures().len().saturating_sub(1));
                self.detail_scroll = scroll;
            }
            RunnerMsg::Finished(eval, sources) => {
                self.runs_judged += 1;
                fx.extend(self.finished(*eval, sources))
            }
            RunnerMsg::Refined(eval) => {
                // Only if nothing newer is on its way.
                if !self.busy() && !self.rerun_queued {
                    let selected = self.selected;
                    if self.session.is_running() {
                        self.summary_due = true;
                        fx.push(Effect::Persist);
                    }
                    self.last = Some(*eval);
                    self.selected = selected.min(self.failures().len().saturating_sub(1));
                }
            }
            RunnerMsg::Cancelled => {
                self.runner = Runner::Idle;
                self.unsettled = None;
                if self.time_up_pending {
                    fx.extend(self.freeze());
                } else if self.rerun_queued {
                    self.rerun_queued = false;
                    fx.extend(self.request_run());
                }
            }
            RunnerMsg::Error(e) => {
                self.runner = Runner::Idle;
                self.unsettled = None;
                self.notify(format!("error: {e}"), false);
                self.error = Some(e);
                if self.time_up_pending {
                    fx.extend(self.freeze());
                }
            }
        }
        fx
    }

    /// A run whose every gate's outcome is known: the verdict, the gate
    /// passes and regressions it makes, then what was waiting for it.
    fn finished(&mut self, eval: Evaluation, sources: Vec<SourceFile>) -> Vec<Effect> {
        self.runner = Runner::Idle;
        self.error = None;
        let mut fx = self.on_evaluation(eval, sources);
        if self.time_up_pending && self.session.is_running() {
            fx.extend(self.freeze());
        } else if self.rerun_queued {
            self.rerun_queued = false;
            fx.extend(self.request_run());
        }
        fx
    }

    fn on_evaluation(&mut self, eval: Evaluation, sources: Vec<SourceFile>) -> Vec<Effect> {
        let mut fx = vec![Effect::Persist];
        let eval_ok = eval.build.ok;
        let outcomes: Vec<GateOutcome> =
            eval.gates.iter().map(|g| GateOutcome { gate: g.gate, passed: g.passed, total: g.total }).collect();
        self.last = Some(eval);
        self.selected = self.selected.min(self.failures().len().saturating_sub(1));
        self.detail_scroll.top();
        if !self.session.is_running() {
            return fx;
        }
        // The counts now (the mock's score reads them on this very frame);
        // the failures' diffs after the draw.
        self.session.last_run = Some(RunSummary {
            build_ok: eval_ok,
            gates: outcomes.iter().map(|o| (o.gate, o.passed, o.total)).collect(),
            ..Default::default()
        });
        self.summary_due = true;
        if outcomes.is_empty() {
            return fx;
        }
        let before = self.session.gate;
        let (problem, seen, seed) = (&self.problem, &self.seen, self.session.draw_seed);
        // The next gate is drawn when the current one passes; a path given
        // in full (`--path`) is only walked.
        let draw = |path: &[usize]| {
            crate::session::path::draw(problem, path, seen, seed).unwrap_or_else(|| path.last().map_or(1, |g| g + 1))
        };
        for t in self.session.on_run_drawing(self.now_ms, &outcomes, draw) {
            match t {
                Transition::GatePassed { gate, split_ms } => {
                    self.intro.clear();
                    self.session.snapshots.insert(gate, sources.clone());
                    self.notify(format!("gate {gate} passed at {}", crate::base::fsio::clock(split_ms)), true);
                    fx.push(Effect::Report);
                }
                Transition::Regression { gate } => {
                    self.notify(format!("regression: gate {gate} passed before and fails now"), false);
                }
                Transition::Completed => {
                    self.overlay = Some(Overlay::Summary);
                }
            }
        }
        if self.session.gate != before && self.session.is_running() {
            // The next statement unlocks; judge the new gate at once.
            self.statement_gate = self.session.gate;
            self.statement_scroll.top();
            fx.extend(self.request_run());
        }
        fx
    }

    fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let ctrl_c = key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        match self.overlay {
            Some(Overlay::Help) => {
                self.overlay = None;
                return Vec::new();
            }
            Some(Overlay::ConfirmQuit) => {
                return match key.code {
                    KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter => self.quit(),
                    KeyCode::Char('d') | KeyCode::Char('D') if self.session.discardable(self.now_ms) => {
                        self.session.discarded = true;
                        vec![Effect::Cancel, Effect::Discard, Effect::Quit]
                    }
                    _ if ctrl_c => self.quit(),
                    _ => {
                        self.overlay = None;
                        Vec::new()
                    }
                };
            }
            Some(Overlay::Summary) => match key.code {
                KeyCode::Char('q') | KeyCode::Enter => return self.quit(),
                KeyCode::Char('o') => return self.overtime(),
                KeyCode::Esc => {
                    self.overlay = None;
                    return Vec::new();
                }
                _ if ctrl_c => return self.quit(),
                _ => return Vec::new(),
            },
            None => {}
        }
        if ctrl_c {
            return self.ask_quit();
        }
        match key.code {
            KeyCode::Char('?') => self.overlay = Some(Overlay::Help),
            KeyCode::Esc if self.zoom => self.zoom = false,
            KeyCode::Char('z') => self.zoom = !self.zoom,
            KeyCode::Char('q') | KeyCode::Esc => return self.ask_quit(),
            KeyCode::Char('e') => return vec![Effect::OpenEditor],
            KeyCode::Char('r') => return self.request_run(),
            KeyCode::Char('h') => return self.hint(),
            KeyCode::Char('o') => return self.overtime(),
            KeyCode::Char('s') => self.overlay = Some(Overlay::Summary),
            KeyCode::Char('x') => return self.export(),
            KeyCode::Tab | KeyCode::BackTab => {
                self.focus = if self.focus == Focus::Statement { Focus::Results } else { Focus::Statement };
            }
            KeyCode::Left | KeyCode::Char('[') if self.statement_gate > 1 => {
                self.statement_gate -= 1;
                self.statement_scroll.top();
            }
            KeyCode::Right | KeyCode::Char(']') if self.statement_gate < self.session.gate => {
                self.statement_gate += 1;
                self.statement_scroll.top();
            }
            KeyCode::Down | KeyCode::Char('j') => self.move_by(1),
            KeyCode::Up | KeyCode::Char('k') => self.move_by(-1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll_by(10),
            KeyCode::PageUp => self.scroll_by(-10),
            KeyCode::Home | KeyCode::Char('g') => {
                self.statement_scroll.top();
                self.detail_scroll.top();
            }
            _ => {}
        }
        Vec::new()
    }

    fn move_by(&mut self, d: i32) {
        match self.focus {
            Focus::Statement => self.scroll_by(d),
            Focus::Results => {
                let n = self.failures().len();
                if n > 0 {
                    self.selected = (self.selected as i32 + d).clamp(0, n as i32 - 1) as usize;
                    self.detail_scroll.top();
                }
            }
        }
    }

    fn scroll_by(&mut self, d: i32) {
        let target = match self.focus {
            Focus::Statement => &mut self.statement_scroll,
            Focus::Results => &mut self.detail_scroll,
        };
        target.by(d);
    }

    fn ask_quit(&mut self) -> Vec<Effect> {
        if self.session.is_running() {
            self.overlay = Some(Overlay::ConfirmQuit);
            Vec::new()
        } else {
            self.quit()
        }
    }

    fn quit(&mut self) -> Vec<Effect> {
        self.session.on_quit(self.now_ms);
        vec![Effect::Cancel, Effect::Persist, Effect::Report, Effect::Quit]
    }

    fn overtime(&mut self) -> Vec<Effect> {
        if self.session.continue_overtime(self.now_ms) {
            self.overlay = None;
            self.notify("overtime: the clock counts up; splits keep being recorded", true);
            let mut fx = vec![Effect::Persist];
            fx.extend(self.request_run());
            fx
        } else {
            Vec::new()
        }
    }

    fn hint(&mut self) -> Vec<Effect> {
        if self.session.mode == Mode::Mock {
            self.notify("no hints in a mock interview", false);
            return Vec::new();
        }
        let available = self.hints().len();
        match self.session.on_hint(self.now_ms, available) {
            Some(i) => {
                // Hints sit above the statement; the focus stays where it
                // was, so j/k keep selecting cases.
                self.statement_gate = self.session.gate;
                self.statement_scroll.top();
                self.notify(
                    format!("hint {} of {available} revealed above the statement (counted in the report)", i + 1),
                    true,
                );
                vec![Effect::Persist]
            }
            None if available == 0 => {
                self.notify("this gate has no hints", false);
                Vec::new()
            }
            None => {
                self.notify("no hints left for this gate", false);
                Vec::new()
            }
        }
    }

    fn export(&mut self) -> Vec<Effect> {
        match self.selected_failure() {
            Some((case, result)) => vec![Effect::Export { case: case.name.clone(), steps: result.steps.clone() }],
            None => {
                self.notify("no failing case to export", false);
                Vec::new()
            }
        }
    }
}

/// What the report keeps of an evaluation.
pub fn summarize(eval: &Evaluation) -> RunSummary {
    RunSummary {
        build_ok: eval.build.ok,
        build_errors: eval
            .build
            .failure
            .iter()
            .cloned()
            .chain(
                eval.build
                    .diagnostics
                    .iter()
                    .filter(|d| d.level == "error")
                    .map(|d| crate::base::diag::strip_ansi(&d.rendered)),
            )
            .collect(),
        gates: eval.gates.iter().map(|g| (g.gate, g.passed, g.total)).collect(),
        failures: eval
            .gates
            .iter()
            .flat_map(|g| g.failures.iter())
            .map(|(case, r)| FailureSummary {
                gate: case.gate,
                case: case.name.clone(),
                verdict: r.verdict,
                message: r.message.clone(),
                diff: crate::judge::transcript::diff(r)
                    .into_iter()
                    .map(|(sign, line)| format!("{sign} {line}"))
                    .collect(),
                ops: match crate::session::check_report::ops_json(r) {
                    serde_json::Value::Array(ops) => ops,
                    _ => Vec::new(),
                },
                shrunk_from: r.shrunk_from.map(|n| n - 1),
            })
            .chain(eval.gates.iter().flat_map(|g| {
                // A failing scale check is kept like a failing case, its
                // measured points as the "diff".
                g.scale.iter().filter(|s| !s.passed()).map(move |s| FailureSummary {
                    gate: g.gate,
                    case: format!("cost: {}", s.name),
                    verdict: s.verdict,
                    message: s.message.clone(),
                    diff: results::scale_points(s),
                    ops: Vec::new(),
                    shrunk_from: None,
                })
            }))
            .collect(),
    }
}
