//! `harness start <problem>`: prepare the solution crate and the session,
//! then hand over to the TUI.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::base::config::Config;
use crate::base::fsio;
use crate::problem::model::Problem;
use crate::session::report;
use crate::session::state::{Mode, Session, Status};

pub const NO_TTY: &str = "`harness start` needs an interactive terminal (stdin and stdout must be a TTY). \
     For scripts and CI, use `harness check <problem>`.";

/// Creates `dir` from the problem's starter, pointing its contract
/// dependency at this project's contract crate. Never overwrites.
pub fn create_solution(config: &Config, problem: &Problem, dir: &Path) -> Result<()> {
    let starter = problem.starter_dir();
    fsio::copy_crate(&starter, dir)
        .with_context(|| format!("cannot create {} from {}", dir.display(), starter.display()))?;
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).with_context(|| format!("cannot read {}", manifest.display()))?;
    fsio::write_atomic(&manifest, crate::judge::compile::point_at_contract(&text, dir, &config.contract_dir).as_bytes())
}

/// Moves an existing solution aside to `<dir>.<stamp>` and returns where.
pub fn move_aside(dir: &Path, now_ms: u64) -> Result<PathBuf> {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut target = dir.with_file_name(format!("{name}.{}", fsio::stamp(now_ms)));
    let mut n = 2;
    while target.exists() {
        target = dir.with_file_name(format!("{name}.{}-{n}", fsio::stamp(now_ms)));
        n += 1;
    }
    std::fs::rename(dir, &target).with_context(|| format!("cannot move {} to {}", dir.display(), target.display()))?;
    Ok(target)
}

/// What `start` sets up: the solution crate, the session to run, and
/// what the candidate should be told about it (printed, and shown again
/// inside the TUI, whose screen would hide the printed lines).
pub struct Prepared {
    pub dir: PathBuf,
    pub session: Session,
    pub notes: Vec<String>,
    /// A new session rather than one resumed.
    pub new: bool,
}

/// Why `start` opens no session: the last one of `problem` ended (every
/// gate passed, or the time ran out) and its solution is still in place. A
/// new session on that solution would pass its gates at once and record an
/// attempt the candidate never made. None when a session may start.
pub fn ended(saved: Option<&Session>, dir: &Path) -> Option<String> {
    let s = saved?;
    if s.resumable() || s.mode != Mode::Practice || !dir.exists() {
        return None;
    }
    let how = match s.status {
        Status::Completed => format!("is complete: all {} gates passed", s.gate_count),
        _ => format!("ended when its time ran out, with {} of {} gates passed", s.gates_passed(), s.gate_count),
    };
    Some(format!(
        "The last `{p}` session (started {started}) {how}.\n\
         Nothing was recorded now: a new session on the same solution would pass its gates at once.\n\
         \n  harness report {id}           review it (follow-up questions on tab 4)\n  \
         harness start {p} --fresh   start over (your solution is moved aside, dated)\n  \
         harness check {p}           judge the solution again, without a clock",
        p = s.problem,
        started = fsio::iso(s.started_at_ms),
        id = s.id,
    ))
}

/// Sets up the solution and the session of `problem` in `mode`, or says
/// why not (see [`ended`]).
pub fn prepare(
    config: &Config,
    problem: &Problem,
    mode: Mode,
    minutes: Option<u32>,
    fresh: bool,
    path: Option<Vec<usize>>,
) -> Result<std::result::Result<Prepared, String>> {
    let now = fsio::now_ms();
    let dir = config.solution_dir(&problem.id);
    let saved = if fresh || mode == Mode::Mock { None } else { report::load_state(&config.reports_dir, &problem.id)? };
    // `--path` on a session in progress: it may fix the rest of its path,
    // not rewrite what it has walked.
    if let (Some(p), Some(s)) = (&path, saved.as_ref().filter(|s| s.resumable()))
        && !p.starts_with(&s.path[..s.gate.min(s.path.len())])
    {
        bail!(
            "the `{id}` session in progress is on gates {walked}, which --path {asked} does not begin with: \
             `harness start {id}` resumes it, `harness start {id} --fresh --path {asked}` starts over",
            id = problem.id,
            walked = crate::cmd::path_text(&s.path[..s.gate.min(s.path.len())]),
            asked = crate::cmd::path_text(p),
        );
    }
    if let Some(why) = ended(saved.as_ref(), &dir) {
        return Ok(Err(why));
    }
    let mut notes = Vec::new();
    if fresh && dir.exists() {
        let old = move_aside(&dir, now)?;
        notes.push(format!("moved your previous solution to {}", fsio::shown(&old)));
    }
    if !dir.exists() {
        create_solution(config, problem, &dir)?;
        notes.push(format!("created {} from the starter", fsio::shown(&dir)));
    }
    let new = !saved.as_ref().is_some_and(Session::resumable);
    let session = match saved {
        Some(mut s) if s.resumable() => {
            s.on_resume(now);
            if let Some(p) = path {
                s.path = p;
            }
            notes.push(format!(
                "resumed the session started {} ({} elapsed; the clock kept running)",
                fsio::iso(s.started_at_ms),
                fsio::clock(s.elapsed_ms(now))
            ));
            s
        }
        _ => {
            let suggested = match &path {
                Some(p) => problem.gates_of(p).map(|g| g.minutes).sum(),
                None => problem.session_minutes(),
            };
            let minutes = minutes.unwrap_or_else(|| if mode == Mode::Mock { config.mock_minutes } else { suggested });
            if minutes == 0 {
                bail!("--minutes must be at least 1");
            }
            let mut s = Session::new(&problem.id, mode, problem.path_length, minutes as u64 * 60_000, now);
            if let Some(p) = path {
                s.path = p;
            }
            s
        }
    };
    report::save_state(&config.reports_dir, &session)?;
    for note in &notes {
        println!("{note}");
    }
    Ok(Ok(Prepared { dir, session, notes, new }))
}

pub fn start(config: &Config, id: &str, minutes: Option<u32>, fresh: bool, path: Option<&str>) -> Result<u8> {
    let problem = Problem::load(&config.problems_dir, &config.contract_dir, id)?;
    let path = path.map(|text| crate::cmd::parse_path(&problem, text)).transpose()?;
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        bail!(NO_TTY);
    }
    let _lock = report::lock_session(&config.reports_dir, Mode::Practice, &problem.id)?;
    let Prepared { dir, mut session, notes, new } =
        match prepare(config, &problem, Mode::Practice, minutes, fresh, path)? {
            Ok(p) => p,
            Err(why) => {
                println!("{why}");
                return Ok(0);
            }
        };
    if new {
        first_ninety(config, &problem, &mut session)?;
    }
    let (session, report) = crate::ui::practice::run(config, problem, session, dir, notes)?;
    after(&session, report.as_deref());
    Ok(0)
}

/// The first-ninety-seconds screen of a new session, unless `harness.toml`
/// turns it off; its answers are saved with the session at once. The
/// session's clock is already running: the ninety seconds are part of it.
pub fn first_ninety(config: &Config, problem: &Problem, session: &mut Session) -> Result<()> {
    if !config.first_ninety {
        return Ok(());
    }
    let answers = crate::ui::ninety::run(problem)?;
    session.first_ninety = Some(
        answers.into_iter().map(|(question, answer)| crate::session::state::Answer { question, answer }).collect(),
    );
    report::save_state(&config.reports_dir, session)
}

/// What to print once the terminal is back.
pub fn after(session: &Session, report: Option<&Path>) {
    if session.discarded {
        println!("session discarded: nothing recorded (your code stays where it was)");
        return;
    }
    match session.status {
        Status::Running => println!(
            "session kept ({} elapsed, the clock keeps running): `harness start {}` resumes it",
            fsio::clock(session.elapsed_ms(fsio::now_ms())),
            session.problem
        ),
        status => {
            println!("session {}: {} of {} gates passed", status.label(), session.gates_passed(), session.gate_count)
        }
    }
    if let Some(r) = report {
        println!("report: {} (and .md beside it)", r.display());
    }
}

/// `harness start` without a problem: what there is to practise, with the
/// best result so far on each, and how to begin.
pub fn choose(config: &Config) -> Result<u8> {
    let ids = crate::problem::model::list_ids(&config.problems_dir)?;
    let (reports, _) = report::load_all(&config.reports_dir);
    println!("Which problem? `harness start <problem>`:\n");
    for id in &ids {
        let Ok(problem) = Problem::load(&config.problems_dir, &config.contract_dir, id) else { continue };
        let attempts: Vec<&report::Report> = reports.iter().filter(|r| &r.problem == id).collect();
        let best = attempts.iter().map(|r| r.gates_passed).max();
        let progress = match best {
            None => "not tried yet".to_string(),
            Some(b) => format!("{} attempt(s), best {b}/{} gates", attempts.len(), problem.path_length),
        };
        let resumable = report::load_state(&config.reports_dir, id).ok().flatten().is_some_and(|s| s.resumable());
        println!(
            "  {:<22} {:<34} {}{}",
            id,
            problem.title,
            progress,
            if resumable { " · a session is waiting to resume" } else { "" }
        );
    }
    Ok(2)
}
