//! `harness check`: judge a solution headless, as text or `--json`.

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;

use anyhow::{Result, bail};

use crate::base::config::Config;
use crate::cmd::{Judged, parse_path, path_text, solution_dir};
use crate::judge::compile;
use crate::judge::evaluate::Judge;
use crate::problem::model::Problem;
use crate::ui::results;

/// What `check` was asked besides the problem and the solution.
pub(crate) struct Options<'a> {
    /// Judge the first N gates of the path only.
    pub gate: Option<usize>,
    /// `--path`, as typed.
    pub path: Option<&'a str>,
    pub seed: Option<u64>,
    pub json: bool,
    pub no_shrink: bool,
}

/// The path `check` judges: `--path` when given; else, for the default
/// solution of a graph problem, the path its session has walked so far
/// (when there is a session: the gates beyond it are not drawn yet, and
/// naming them would give them away); else the problem's default path
/// (every gate of a linear problem, as always).
pub(crate) fn path_to_judge(
    config: &Config,
    problem: &Problem,
    solution: &Judged,
    asked: Option<&str>,
) -> Result<Vec<usize>> {
    if let Some(text) = asked {
        return parse_path(problem, text);
    }
    if matches!(solution, Judged::Default)
        && problem.is_graph()
        && let Ok(Some(s)) = crate::session::report::load_state(&config.reports_dir, &problem.id)
        && !s.path.is_empty()
        && s.path.len() <= problem.path_length
        && problem.check_prefix(&s.path).is_ok()
    {
        return Ok(s.unlocked());
    }
    Ok(problem.default_path())
}

pub(crate) fn check(config: &Config, id: &str, solution: Judged, opts: Options<'_>) -> Result<u8> {
    let problem = Problem::load(&config.problems_dir, &config.contract_dir, id)?;
    let path = path_to_judge(config, &problem, &solution, opts.path)?;
    let dir = solution_dir(config, &problem, solution)?;
    if let Some(g) = opts.gate
        && (g == 0 || g > path.len())
    {
        if problem.is_graph() {
            bail!("--gate {g}: the path {} has gates 1 to {} (by position)", path_text(&path), path.len());
        }
        bail!("--gate {g}: `{id}` has gates 1 to {}", problem.gates.len());
    }
    let judged = &path[..opts.gate.unwrap_or(path.len())];
    // The solution builds while the reference builds and computes the
    // generated cases' expectations: two cargo runs in two target folders.
    let (judge, build) = std::thread::scope(|s| {
        let build = s.spawn(|| compile::build(config, &dir));
        let judge = Judge::new(config, problem, judged, opts.seed);
        (judge, build.join().unwrap_or_else(|_| Err(anyhow::anyhow!("the build thread panicked"))))
    });
    let (mut judge, build) = (judge?, build?);
    judge.shrink = !opts.no_shrink;
    let eval = judge.evaluate_build(build, judged, &AtomicBool::new(false), &|_, _| {}, None)?;
    if opts.json {
        let mut out = crate::session::check_report::CheckReport::new(&judge.problem, &dir, &eval, &path);
        out.sandbox = Some(crate::cmd::doctor::sandbox_json(config)?);
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", results::render_text(&judge.problem, &eval, &path, std::io::stdout().is_terminal()));
    }
    Ok(if eval.all_passed() { 0 } else { 1 })
}
