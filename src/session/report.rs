//! Gate reports and session state on disk.
//!
//! `reports/<id>.json` (schema [`Report`], `format_version` 1) and a
//! readable `reports/<id>.md` beside it are rewritten, atomically, at every
//! gate pass and at the end of a session. `reports/sessions/<problem>.json`
//! holds the state of the practice session in progress, rewritten on every
//! change, so `harness start` can resume it after any exit.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::base::fsio;
use crate::problem::model::{Followup, Problem};
use crate::session::metrics::{self, Metrics};
use crate::session::state::{Answer, Event, MetFailure, Mode, RunSummary, Session, SourceFile, Status};

/// Version of the report file format.
pub const REPORT_FORMAT_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateReport {
    /// The problem's gate number (0: a position of the path no gate was
    /// drawn for yet; it has no title).
    pub gate: usize,
    /// Its position on the session's path (1-based). 0 in reports written
    /// before paths, whose gates stood in file order.
    #[serde(default)]
    pub position: usize,
    pub title: String,
    pub target_minutes: u32,
    pub passed: bool,
    /// From the session's start to the run that passed the gate.
    pub time_to_pass_ms: Option<u64>,
    pub builds: u32,
    pub failed_builds: u32,
    pub test_runs: u32,
    pub hints_used: u32,
    pub regressions: u32,
    /// Whether the candidate reached (unlocked) this gate.
    pub reached: bool,
    /// The solution's sources when the gate passed.
    pub snapshot: Option<Vec<SourceFile>>,
    pub followups: Vec<Followup>,
    /// A mock's pacing target: ms from the session's start by which this
    /// gate should pass (the budget scaled by suggested minutes,
    /// cumulative). None in practice, and in reports written before mocks.
    #[serde(default)]
    pub pace_target_ms: Option<u64>,
}

impl GateReport {
    /// The number a review shows it by: its position on the path (the
    /// session's "gate k of n"); its gate number in reports written
    /// before paths, where the two are the same.
    pub fn shown(&self) -> usize {
        if self.position > 0 { self.position } else { self.gate }
    }
}

/// A mock session's score, explained.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Score {
    pub total: f64,
    /// One line per component, e.g. "2 gates passed: 50.0".
    pub breakdown: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub format_version: u32,
    pub id: String,
    pub problem: String,
    pub title: String,
    pub mode: Mode,
    pub status: Status,
    /// True while the session can still go on (a practice session that was
    /// quit, or a report written at a gate pass).
    pub in_progress: bool,
    pub started_at: String,
    pub started_at_ms: u64,
    pub ended_at_ms: Option<u64>,
    pub budget_ms: u64,
    pub elapsed_ms: u64,
    pub overtime: bool,
    pub gate_count: usize,
    pub gates_passed: usize,
    /// The session's path so far (gate numbers in order). Empty in reports
    /// written before paths: read as the linear one (see [`Report::path`]).
    #[serde(default)]
    pub path: Vec<usize>,
    /// One per position of the path.
    pub gates: Vec<GateReport>,
    pub last_run: Option<RunSummary>,
    pub events: Vec<Event>,
    #[serde(default)]
    pub score: Option<Score>,
    /// Throughput, additive-or-rewrite and where the time went, per gate
    /// (`session::metrics`). None in reports written before they were kept.
    #[serde(default)]
    pub metrics: Option<Metrics>,
    /// The answers given on the first-ninety-seconds screen.
    #[serde(default)]
    pub first_ninety: Option<Vec<Answer>>,
    /// Every distinct failure met during the session, first met first.
    /// Empty in reports written before they were kept.
    #[serde(default)]
    pub met: Vec<MetFailure>,
    /// Once the session is over: the reference solution cut to the gates
    /// reached by each position of the path (`problem::refcut`), so a
    /// review can show it and the candidate's code at each gate against
    /// it. Empty while the session can go on (it would give the answer
    /// away), when the reference has no gate markers (it would show
    /// follow-ups never drawn), and in reports written before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference: Vec<ReferenceCut>,
}

/// The reference as a session that reached `gates` may read it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReferenceCut {
    /// The position on the path whose gates it covers (1-based).
    pub position: usize,
    /// The gates of the path up to that position, in path order.
    pub gates: Vec<usize>,
    /// `src/lib.rs` of the reference, cut to those gates.
    pub source: String,
}

/// The reference cut for each position a finished session reached; nothing
/// while it runs. A malformed marker (which `audit` reports) keeps it out.
fn reference_cuts(session: &Session, problem: &Problem) -> Vec<ReferenceCut> {
    if session.is_running() {
        return Vec::new();
    }
    let path = session.unlocked();
    (1..=path.len())
        .filter_map(|k| {
            let set: std::collections::BTreeSet<usize> = path[..k].iter().copied().collect();
            let source = problem.reference_cut(&set).ok().flatten()?;
            Some(ReferenceCut { position: k, gates: path[..k].to_vec(), source })
        })
        .collect()
}

impl Report {
    pub fn from_session(session: &Session, problem: &Problem, now_ms: u64, score: Option<Score>) -> Report {
        // A linear problem's path is known in full; a graph's is named
        // only as far as the session reached (a mock draws it whole at the
        // start, and `--path` fixes it, but a gate ahead stays unnamed).
        let known = |position: usize| -> Option<&crate::problem::model::Gate> {
            let number = match session.path.get(position - 1) {
                _ if !problem.is_graph() => session.gate_at(position),
                Some(&n) if position <= session.gate => n,
                _ => return None,
            };
            problem.gates.get(number - 1)
        };
        let gates = session
            .gates
            .iter()
            .enumerate()
            .map(|(i, stats)| {
                let position = i + 1;
                let g = known(position);
                GateReport {
                    gate: g.map_or(0, |g| g.number),
                    position,
                    title: g.map_or_else(|| "—".to_string(), |g| g.title.clone()),
                    target_minutes: g.map_or(0, |g| g.minutes),
                    passed: stats.passed_at_ms.is_some(),
                    time_to_pass_ms: stats.passed_at_ms,
                    builds: stats.builds,
                    failed_builds: stats.failed_builds,
                    test_runs: stats.test_runs,
                    hints_used: stats.hints_used,
                    regressions: stats.regressions,
                    reached: position <= session.gate,
                    snapshot: session.snapshots.get(&position).cloned(),
                    followups: g.map_or_else(Vec::new, |g| g.followups.clone()),
                    pace_target_ms: session.pace_ms.get(i).copied(),
                }
            })
            .collect();
        Report {
            format_version: REPORT_FORMAT_VERSION,
            id: session.id.clone(),
            problem: problem.id.clone(),
            title: problem.title.clone(),
            mode: session.mode,
            status: session.status,
            in_progress: session.status == Status::Running,
            started_at: fsio::iso(session.started_at_ms),
            started_at_ms: session.started_at_ms,
            ended_at_ms: session.ended_at_ms,
            budget_ms: session.budget_ms,
            elapsed_ms: session.elapsed_ms(now_ms),
            overtime: session.overtime,
            gate_count: session.gate_count,
            gates_passed: session.gates_passed(),
            path: session.unlocked(),
            gates,
            last_run: session.last_run.clone(),
            events: session.events.clone(),
            score,
            metrics: Some(session_metrics(session, problem, now_ms)),
            first_ninety: session.first_ninety.clone(),
            met: session.met.clone(),
            reference: reference_cuts(session, problem),
        }
    }

    /// The session's path: as recorded, or for a report written before
    /// paths, its gates in file order.
    pub fn path(&self) -> Vec<usize> {
        if self.path.is_empty() {
            self.gates.iter().filter(|g| g.reached).map(|g| g.gate).collect()
        } else {
            self.path.clone()
        }
    }

    /// Where a gate is listed: "gate 2" for a linear problem, "gate 2
    /// (#5)" on a graph's path, whose position and number differ.
    pub fn gate_label(&self, g: &GateReport) -> String {
        if g.position == 0 || g.position == g.gate || g.gate == 0 {
            format!("{}", g.position.max(g.gate))
        } else {
            format!("{} (#{})", g.position, g.gate)
        }
    }

    /// How gate 3 went, in the words of the first-ninety-seconds screen:
    /// additive, a rewrite, or not passed (None when there is no gate 3).
    pub fn gate_3_outcome(&self) -> Option<String> {
        let g3 = self.gates.get(2)?;
        let shape = self.metrics.as_ref().and_then(|m| m.gates.get(2)).and_then(|g| g.shape);
        Some(match (g3.passed, shape) {
            (true, Some(s)) => {
                format!("gate 3 was {}", if s == metrics::Shape::Rewrite { "a rewrite" } else { "additive" })
            }
            (true, None) => "gate 3 passed".to_string(),
            (false, _) if g3.reached => "gate 3 was not passed".to_string(),
            (false, _) => "gate 3 was not reached".to_string(),
        })
    }

    fn ninety_markdown(&self, md: &mut String) {
        let Some(answers) = &self.first_ninety else { return };
        let _ = writeln!(md, "\n## The first ninety seconds\n");
        for a in answers {
            let said = if a.answer.is_empty() { "(no answer)" } else { a.answer.as_str() };
            let _ = writeln!(md, "- **{}** {said}", a.question);
        }
        if let Some(outcome) = self.gate_3_outcome() {
            let _ = writeln!(
                md,
                "\nThese are the questions that decide whether gate 3 is additive or a rewrite. In this session, {outcome}."
            );
        }
    }

    /// The "Numbers" section of the Markdown: the seed's yardsticks.
    fn numbers_markdown(&self, md: &mut String) {
        let Some(m) = &self.metrics else { return };
        let _ = writeln!(md, "\n## Numbers\n");
        let (lo, hi) = metrics::YARDSTICK_SIZE;
        let size = m
            .solution_lines
            .map_or("—".to_string(), |n| format!("{n} code lines (a four-gate solution is {lo}–{hi})"));
        let _ = writeln!(md, "- throughput: {}\n- solution size: {size}", metrics::throughput_text(m.lines_per_10_min));
        let _ = writeln!(
            md,
            "\n| gate | lines +added ~changed −removed | shape | lines/10 min | first compiling build | first case passing | time with the build failing |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|---|");
        let t = |ms: Option<u64>| ms.map_or("—".to_string(), fsio::clock);
        for g in &m.gates {
            let lines =
                if g.shape.is_some() { format!("+{} ~{} −{}", g.added, g.changed, g.removed) } else { "—".into() };
            let _ = writeln!(
                md,
                "| {} | {lines} | {} | {} | {} | {} | {} |",
                g.gate,
                g.shape.map_or("—", |s| s.label()),
                g.lines_per_10_min.map_or("—".to_string(), |r| format!("{r:.0}")),
                t(g.first_build_ok_ms),
                t(g.first_case_ms),
                fsio::clock(g.failing_build_ms)
            );
        }
        let _ = writeln!(
            md,
            "\nCode lines exclude blank lines, comments and lone braces. A gate is a *rewrite* when it changed or removed more than {:.0} % of the previous gate's code lines; the seed's yardstick is {:.0} lines of correct code per 10 minutes.",
            metrics::REWRITE_SHARE * 100.0,
            metrics::YARDSTICK_LINES_PER_10_MIN
        );
    }

    /// The state the session was left in; a practice session that can
    /// still be resumed is "in progress".
    pub fn status_label(&self) -> &'static str {
        if self.status == Status::Running && self.in_progress { "in progress" } else { self.status.label() }
    }

    /// The readable version written beside the JSON.
    pub fn to_markdown(&self) -> String {
        let mut md = String::new();
        self.head_markdown(&mut md);
        self.gates_markdown(&mut md);
        self.numbers_markdown(&mut md);
        self.ninety_markdown(&mut md);
        self.last_run_markdown(&mut md);
        self.met_markdown(&mut md);
        self.snapshots_markdown(&mut md);
        self.followups_markdown(&mut md);
        md
    }

    /// The title, the session's facts and its score.
    fn head_markdown(&self, md: &mut String) {
        let _ = writeln!(md, "# {} — {}\n", self.problem, self.title);
        let status = self.status_label();
        let mode = match self.mode {
            Mode::Practice => "practice",
            Mode::Mock => "mock",
        };
        let _ = writeln!(
            md,
            "- {mode} session, started {}\n- status: {status}{}\n- gates passed: {}/{}\n- time: {} of {}{}",
            self.started_at,
            if self.overtime { " (continued in overtime)" } else { "" },
            self.gates_passed,
            self.gate_count,
            fsio::clock(self.elapsed_ms),
            fsio::clock(self.budget_ms),
            if self.path.iter().enumerate().any(|(i, &g)| g != i + 1) {
                let p: Vec<String> = self.path.iter().map(|g| g.to_string()).collect();
                format!("\n- path: gates {}", p.join(", "))
            } else {
                String::new()
            }
        );
        if let Some(score) = &self.score {
            let _ = writeln!(md, "- score: {:.1} of 100 (+ up to 10 for finishing early)", score.total);
            for line in &score.breakdown {
                let _ = writeln!(md, "  - {line}");
            }
        }
    }

    /// The gates table: when each passed, its target, its builds and runs.
    fn gates_markdown(&self, md: &mut String) {
        let _ = writeln!(md, "\n## Gates\n");
        let _ = writeln!(
            md,
            "| gate | title | passed at (from the start) | {} | builds | failed builds | test runs | hints | regressions |",
            if self.mode == Mode::Mock { "pace target (from the start)" } else { "suggested time for the gate" }
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|");
        for g in &self.gates {
            let at = g
                .time_to_pass_ms
                .map_or_else(|| if g.reached { "—".to_string() } else { "not reached".to_string() }, fsio::clock);
            // A mock's target is its pace through its own budget, not the
            // practice minutes (12 min of a 5-minute mock would mislead).
            let target = g
                .pace_target_ms
                .map_or_else(|| format!("{} min", g.target_minutes), |p| format!("by {}", fsio::clock(p)));
            let _ = writeln!(
                md,
                "| {} | {} | {at} | {target} | {} | {} | {} | {} | {} |",
                self.gate_label(g),
                g.title,
                g.builds,
                g.failed_builds,
                g.test_runs,
                g.hints_used,
                g.regressions
            );
        }
    }

    /// The last run: its build, each gate's count and each failure's diff.
    fn last_run_markdown(&self, md: &mut String) {
        if let Some(run) = &self.last_run {
            let _ = writeln!(md, "\n## The last run\n");
            if !run.build_ok {
                let _ = writeln!(md, "The build failed:\n\n```text\n{}\n```", run.build_errors.join("\n"));
            }
            for (gate, passed, total) in &run.gates {
                let _ = writeln!(md, "- gate {gate}: {passed}/{total} cases");
            }
            for f in &run.failures {
                let shrunk = f.shrunk_from.map_or_else(String::new, |n| {
                    format!(" (shrunk from {n} to {} operations)", f.ops.len().saturating_sub(1))
                });
                let _ = writeln!(
                    md,
                    "\n### Gate {}: {} — `{}`\n\n{}{shrunk}\n\n```diff\n{}\n```",
                    f.gate,
                    f.case,
                    f.verdict,
                    f.message,
                    f.diff.join("\n")
                );
            }
            if run.failures.iter().any(|f| !f.ops.is_empty()) {
                let _ = writeln!(
                    md,
                    "\nThe JSON beside this file keeps each case's `ops`: save them to a file and run \
                     `harness replay {} --ops FILE` to rebuild the transcript.",
                    self.problem
                );
            }
        }
    }

    /// Every distinct failure met in the session, in the order first met.
    fn met_markdown(&self, md: &mut String) {
        if !self.met.is_empty() {
            let _ = writeln!(
                md,
                "\n## Every failure met on the way\n\nEach distinct failing case (or cost check) of the session, \
                 in the order first met.\n"
            );
            let _ = writeln!(
                md,
                "| first met (from the start) | gate | case | verdict | runs that showed it | at the end |"
            );
            let _ = writeln!(md, "|---|---|---|---|---|---|");
            for m in &self.met {
                let f = &m.failure;
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | `{}` | {} | {} |",
                    fsio::clock(m.first_at_ms.saturating_sub(self.started_at_ms)),
                    f.gate,
                    f.case.replace('|', "\\|"),
                    f.verdict,
                    m.runs,
                    if m.fixed(self.last_run.as_ref()) { "fixed" } else { "still failing" }
                );
            }
        }
    }

    /// The solution as it was when each gate passed.
    fn snapshots_markdown(&self, md: &mut String) {
        for g in &self.gates {
            if let Some(files) = &g.snapshot {
                let _ = writeln!(md, "\n## Solution when gate {} passed\n", self.gate_label(g));
                for f in files {
                    let lang = if f.path.ends_with(".rs") { "rust" } else { "toml" };
                    let _ = writeln!(md, "`{}`\n\n```{lang}\n{}\n```\n", f.path, f.content.trim_end());
                }
            }
        }
    }

    /// The follow-up questions of the gates reached, answers folded.
    fn followups_markdown(&self, md: &mut String) {
        let reached: Vec<&GateReport> = self.gates.iter().filter(|g| g.reached && !g.followups.is_empty()).collect();
        if !reached.is_empty() {
            let _ = writeln!(
                md,
                "\n## Follow-up questions\n\nSay your answer out loud before you read the model answer.\n"
            );
            for g in reached {
                for f in &g.followups {
                    let _ = writeln!(
                        md,
                        "- **Gate {}: {}**\n  <details><summary>model answer</summary>{}</details>",
                        self.gate_label(g),
                        f.question,
                        f.answer
                    );
                }
            }
        }
    }
}

/// The session's numbers, with the problem's starter as gate 1's baseline.
fn session_metrics(session: &Session, problem: &Problem, now_ms: u64) -> Metrics {
    let starter: Vec<SourceFile> = fsio::read_sources(&problem.dir.join("starter"))
        .into_iter()
        .map(|(path, content)| SourceFile { path, content })
        .collect();
    let passes: Vec<Option<u64>> = session.gates.iter().map(|g| g.passed_at_ms).collect();
    let snapshots: Vec<Option<&[SourceFile]>> =
        (1..=session.gate_count).map(|g| session.snapshots.get(&g).map(Vec::as_slice)).collect();
    metrics::compute(&passes, &snapshots, &starter, &session.events, session.elapsed_ms(now_ms))
}

/// Writes `<reports>/<id>.json` and `<id>.md`; returns the JSON's path.
pub fn write(reports_dir: &Path, report: &Report) -> Result<PathBuf> {
    let json = reports_dir.join(format!("{}.json", report.id));
    fsio::write_atomic(&json, serde_json::to_string_pretty(report)?.as_bytes())?;
    fsio::write_atomic(&reports_dir.join(format!("{}.md", report.id)), report.to_markdown().as_bytes())?;
    Ok(json)
}

/// Where a problem's session state lives.
pub fn state_path(reports_dir: &Path, problem: &str) -> PathBuf {
    reports_dir.join("sessions").join(format!("{problem}.json"))
}

/// Where the state of a mock in progress lives: apart from the practice
/// session of the same problem, which a mock must not replace.
pub fn mock_state_path(reports_dir: &Path, problem: &str) -> PathBuf {
    reports_dir.join("sessions").join("mock").join(format!("{problem}.json"))
}

fn session_state_path(reports_dir: &Path, mode: Mode, problem: &str) -> PathBuf {
    match mode {
        Mode::Practice => state_path(reports_dir, problem),
        Mode::Mock => mock_state_path(reports_dir, problem),
    }
}

/// Removes every file a discarded session left: its state (only if it is
/// still this session's) and its report, if one was written.
pub fn forget(reports_dir: &Path, session: &Session) -> Result<()> {
    let state = session_state_path(reports_dir, session.mode, &session.problem);
    let ours = std::fs::read_to_string(&state)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v["id"] == session.id.as_str());
    let mut files =
        vec![reports_dir.join(format!("{}.json", session.id)), reports_dir.join(format!("{}.md", session.id))];
    if ours {
        files.push(state);
    }
    for f in files {
        match std::fs::remove_file(&f) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot remove {}", f.display())),
        }
    }
    Ok(())
}

pub fn save_state(reports_dir: &Path, session: &Session) -> Result<()> {
    let path = session_state_path(reports_dir, session.mode, &session.problem);
    fsio::write_atomic(&path, serde_json::to_string_pretty(session)?.as_bytes())
}

/// Holds the session's lock for as long as it lives: two terminals running
/// the same session would each overwrite the other's state.
pub struct SessionLock {
    _file: std::fs::File,
}

/// Takes the lock of the `mode` session of `problem` (beside its state
/// file), or says who holds it.
pub fn lock_session(reports_dir: &Path, mode: Mode, problem: &str) -> Result<SessionLock> {
    use rustix::fs::{FlockOperation, flock};
    let path = session_state_path(reports_dir, mode, problem).with_extension("lock");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    if flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
        let holder = std::fs::read_to_string(&path).unwrap_or_default();
        anyhow::bail!(
            "this {} session of `{}` is already open in another terminal{} ({}): quit it there first",
            if mode == Mode::Mock { "mock" } else { "practice" },
            problem,
            if holder.trim().is_empty() { String::new() } else { format!(", process {}", holder.trim()) },
            path.display()
        );
    }
    use std::io::Write;
    let _ = file.set_len(0);
    let _ = write!(file, "{}", std::process::id());
    Ok(SessionLock { _file: file })
}

/// The saved session of `problem`, if any. A state file that cannot be
/// read is an error naming it, never silently replaced.
pub fn load_state(reports_dir: &Path, problem: &str) -> Result<Option<Session>> {
    let path = state_path(reports_dir, problem);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut session: Session = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}:{}: {e} (start with --fresh to begin a new session; the file is kept)",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    session.upgrade();
    Ok(Some(session))
}

/// Reads every report in `reports_dir`. Files that cannot be read are
/// returned by name with the reason, and the rest still load.
pub fn load_all(reports_dir: &Path) -> (Vec<Report>, Vec<(PathBuf, String)>) {
    let mut reports = Vec::new();
    let mut broken = Vec::new();
    let Ok(entries) = std::fs::read_dir(reports_dir) else { return (reports, broken) };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") || !path.is_file() {
            continue;
        }
        match std::fs::read_to_string(&path) {
            Err(e) => broken.push((path, e.to_string())),
            Ok(text) => match serde_json::from_str::<Report>(&text) {
                Ok(r) if r.format_version != REPORT_FORMAT_VERSION => broken.push((
                    path,
                    format!(
                        "format_version {} is not supported (this harness reads {REPORT_FORMAT_VERSION})",
                        r.format_version
                    ),
                )),
                Ok(r) => reports.push(r),
                Err(e) => broken.push((path, format!("line {}, column {}: {e}", e.line(), e.column()))),
            },
        }
    }
    reports.sort_by(|a, b| a.started_at_ms.cmp(&b.started_at_ms).then_with(|| a.id.cmp(&b.id)));
    (reports, broken)
}

#[cfg(test)]
mod tests {
    #[test]
    fn forgetting_a_session_removes_its_state_and_report_only() {
        let dir = tempfile::tempdir().unwrap();
        let problem = Problem::load(
            &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("problems"),
            &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("contract"),
            "wal",
        )
        .unwrap();
        let s = Session::new("wal", Mode::Practice, problem.gates.len(), 60_000, 1_000);
        save_state(dir.path(), &s).unwrap();
        write(dir.path(), &Report::from_session(&s, &problem, 2_000, None)).unwrap();
        let other = Session::new("wal", Mode::Practice, problem.gates.len(), 60_000, 9_000_000);
        write(dir.path(), &Report::from_session(&other, &problem, 9_000_001, None)).unwrap();
        forget(dir.path(), &s).unwrap();
        assert!(!state_path(dir.path(), "wal").exists());
        let (reports, _) = load_all(dir.path());
        assert_eq!(reports.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), [other.id.as_str()]);
        // A report of another format is named and skipped, not misread.
        let mut newer = Report::from_session(&other, &problem, 9_000_002, None);
        newer.id = "newer".into();
        newer.format_version = REPORT_FORMAT_VERSION + 1;
        write(dir.path(), &newer).unwrap();
        let (reports, broken) = load_all(dir.path());
        assert_eq!(reports.len(), 1);
        assert!(
            broken
                .iter()
                .any(|(p, why)| p.ends_with("newer.json") && why.contains("format_version 2 is not supported"))
        );
        std::fs::remove_file(dir.path().join("newer.json")).unwrap();
        // A newer session's state is not this one's to remove.
        save_state(dir.path(), &other).unwrap();
        forget(dir.path(), &s).unwrap();
        assert!(state_path(dir.path(), "wal").exists());
    }

    use super::*;

    #[test]
    fn the_first_ninety_seconds_sit_next_to_how_gate_3_went() {
        let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let problem = Problem::load(&root.join("problems"), &root.join("contract"), "versioned_kv").unwrap();
        let mut s = Session::new("versioned_kv", Mode::Practice, 4, 90 * 60_000, 0);
        s.first_ninety = Some(vec![
            Answer { question: "Is the input replayable, or immutable?".into(), answer: "yes".into() },
            Answer { question: "Will I ever need to undo?".into(), answer: String::new() },
        ]);
        let r = Report::from_session(&s, &problem, 60_000, None);
        assert_eq!(r.gate_3_outcome().as_deref(), Some("gate 3 was not reached"));
        let md = r.to_markdown();
        assert!(md.contains("## The first ninety seconds"), "{md}");
        assert!(md.contains("- **Is the input replayable, or immutable?** yes"), "{md}");
        assert!(md.contains("- **Will I ever need to undo?** (no answer)"), "{md}");
        assert!(md.contains("In this session, gate 3 was not reached."), "{md}");
        let json = serde_json::to_string(&r).unwrap();
        let back: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(back.first_ninety, s.first_ninety);
    }

    #[test]
    fn corrupt_reports_are_named_and_skipped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bad.json"), "{ not json").unwrap();
        std::fs::write(dir.path().join("notes.md"), "ignored").unwrap();
        let (reports, broken) = load_all(dir.path());
        assert!(reports.is_empty());
        assert_eq!(broken.len(), 1);
        assert!(broken[0].0.ends_with("bad.json"));
    }

    #[test]
    fn a_session_can_be_open_in_one_terminal_only() {
        let dir = tempfile::tempdir().unwrap();
        let held = lock_session(dir.path(), Mode::Practice, "kv").unwrap();
        let e = lock_session(dir.path(), Mode::Practice, "kv").err().expect("a second lock is refused").to_string();
        assert!(e.contains("already open in another terminal"), "{e}");
        assert!(e.contains(&std::process::id().to_string()), "{e}");
        // A mock of the same problem is another session.
        drop(lock_session(dir.path(), Mode::Mock, "kv").unwrap());
        drop(held);
        lock_session(dir.path(), Mode::Practice, "kv").unwrap();
    }

    #[test]
    fn state_round_trips_and_a_corrupt_state_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let s = Session::new("kv", Mode::Practice, 4, 1000, 5);
        save_state(dir.path(), &s).unwrap();
        assert_eq!(load_state(dir.path(), "kv").unwrap(), Some(s));
        assert_eq!(load_state(dir.path(), "other").unwrap(), None);
        std::fs::write(state_path(dir.path(), "kv"), "{").unwrap();
        let e = load_state(dir.path(), "kv").unwrap_err().to_string();
        assert!(e.contains("kv.json:1:"), "{e}");
    }

    #[test]
    fn a_mock_never_replaces_the_practice_state_of_its_problem() {
        let dir = tempfile::tempdir().unwrap();
        let practice = Session::new("kv", Mode::Practice, 4, 1000, 5);
        save_state(dir.path(), &practice).unwrap();
        save_state(dir.path(), &Session::new("kv", Mode::Mock, 4, 1000, 9)).unwrap();
        assert_eq!(load_state(dir.path(), "kv").unwrap(), Some(practice));
        assert!(mock_state_path(dir.path(), "kv").is_file());
    }
}
