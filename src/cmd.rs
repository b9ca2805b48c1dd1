//! The subcommands, one file each, and the dispatch from parsed arguments.
//! Each returns the exit status (0 success, 1 the solution failed); an
//! `Err` becomes status 2. The top layer: it may use every other layer.

pub mod audit;
pub mod check;
pub mod doctor;
pub mod drill;
pub mod list;
pub mod mock;
pub mod new;
pub mod replay;
pub mod report;
pub mod start;

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::base::config::Config;
use crate::cli::{Cli, Command};
use crate::judge::compile;
use crate::problem::model::Problem;

pub fn run(cli: Cli) -> Result<u8> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let config = Config::discover(&cwd)?;
    if matches!(cli.command, Command::Check { .. } | Command::Replay { .. } | Command::Audit { .. }) {
        end_on_signal();
    }
    match cli.command {
        Command::Doctor { json } => doctor::doctor(&config, json),
        Command::List { json, spoilers } => list::list(&config, json, spoilers),
        Command::Check { problem, solution, mutant, gate, path, seed, json, no_shrink } => check::check(
            &config,
            &problem,
            Judged::pick(solution, mutant),
            check::Options { gate, path: path.as_deref(), seed, json, no_shrink },
        ),
        Command::Replay { problem, ops, solution, mutant, json } => {
            replay::replay(&config, &problem, &ops, Judged::pick(solution, mutant), json)
        }
        Command::Start { problem: Some(problem), minutes, fresh, path } => {
            start::start(&config, &problem, minutes, fresh, path.as_deref())
        }
        Command::Start { problem: None, .. } => start::choose(&config),
        Command::Mock { problem, minutes } => mock::mock(&config, problem.as_deref(), minutes),
        Command::Report { id, list, markdown, json } => report::report(&config, id.as_deref(), list, markdown, json),
        Command::Drill { list, json, chapter, problem, limit } => drill::command(
            &config,
            drill::Options { list, json, chapter, problem: problem.as_deref(), limit: limit.max(1) },
        ),
        Command::Audit { problems, json } => audit::command(&config, &problems, json),
        Command::New { id, title } => new::command(&config, &id, title.as_deref()),
        Command::Worker { .. } | Command::Measure { .. } => unreachable!("handled in main"),
    }
}

/// Headless commands end on SIGINT, SIGTERM or SIGHUP with every build
/// they started (workers die with the threads that started them, by
/// `PR_SET_PDEATHSIG`).
fn end_on_signal() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else { return };
    let _ = std::thread::Builder::new().name("signals".into()).spawn(move || {
        if let Some(sig) = signals.forever().next() {
            compile::stop_all_builds();
            std::process::exit(128 + sig);
        }
    });
}

/// What `check` and `replay` judge.
pub(crate) enum Judged {
    /// `solutions/<problem>`.
    Default,
    Crate(PathBuf),
    Mutant(String),
}

impl Judged {
    pub(crate) fn pick(solution: Option<PathBuf>, mutant: Option<String>) -> Judged {
        match (solution, mutant) {
            (Some(dir), _) => Judged::Crate(dir),
            (None, Some(name)) => Judged::Mutant(name),
            (None, None) => Judged::Default,
        }
    }
}

pub(crate) fn solution_dir(config: &Config, problem: &Problem, judged: Judged) -> Result<PathBuf> {
    let dir = match judged {
        Judged::Default => {
            let dir = config.solution_dir(&problem.id);
            if !dir.is_dir() {
                bail!(
                    "no solution crate at {}: `harness start {}` creates it from the starter",
                    dir.display(),
                    problem.id
                );
            }
            dir
        }
        Judged::Crate(dir) => {
            if !dir.is_dir() {
                bail!("no solution crate at {}", dir.display());
            }
            contract_reachable(config, problem, &dir)?;
            dir
        }
        Judged::Mutant(name) => {
            let Some(m) = problem.mutants.iter().find(|m| m.name == name) else {
                let names: Vec<&str> = problem.mutants.iter().map(|m| m.name.as_str()).collect();
                bail!("`{}` has no mutant `{name}` (it has: {})", problem.id, names.join(", "));
            };
            compile::mutant_crate(config, problem, m)?
        }
    };
    Ok(dir)
}

/// A solution crate names the contract by a relative path; copied out of
/// the project, the path leads nowhere and cargo's own error ("failed to
/// read …/contract/Cargo.toml") hides why. Say so, with the line to use.
fn contract_reachable(config: &Config, problem: &Problem, dir: &std::path::Path) -> Result<()> {
    let manifest = dir.join("Cargo.toml");
    let Ok(text) = std::fs::read_to_string(&manifest) else { return Ok(()) };
    let Ok(doc) = toml::from_str::<toml::Table>(&text) else { return Ok(()) };
    let Some(path) = doc
        .get("dependencies")
        .and_then(|d| d.get("harness-contract"))
        .and_then(|c| c.get("path"))
        .and_then(|p| p.as_str())
    else {
        return Ok(());
    };
    if dir.join(path).join("Cargo.toml").is_file() {
        return Ok(());
    }
    bail!(
        "{}: `harness-contract` has `path = {path:?}`, which leads to no contract crate from {} \
         (was the crate copied out of the project?). Point it at this project's contract:\n  \
         harness-contract = {{ path = {:?}, features = [{:?}] }}",
        manifest.display(),
        dir.display(),
        std::fs::canonicalize(&config.contract_dir).unwrap_or_else(|_| config.contract_dir.clone()),
        problem.id
    )
}

/// Parses `--path 1,2,5,6` and checks it is a path of `problem`; the error
/// says what is wrong and lists the problem's paths when there are few.
pub(crate) fn parse_path(problem: &Problem, text: &str) -> Result<Vec<usize>> {
    let mut path = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        match part.parse::<usize>() {
            Ok(g) => path.push(g),
            Err(_) => {
                bail!("--path {text}: `{part}` is not a gate number (write gate numbers joined by commas, e.g. 1,2,3)")
            }
        }
    }
    if let Err(why) = problem.check_path(&path) {
        let paths = problem.paths();
        let known = if paths.len() <= 12 {
            let list: Vec<String> = paths.iter().map(|p| path_text(p)).collect();
            format!(" (its paths: {})", list.join("; "))
        } else {
            format!(" ({} paths; `harness list --json` shows the graph)", paths.len())
        };
        bail!("--path {text} is not a path of `{}`: {why}{known}", problem.id);
    }
    Ok(path)
}

/// A path as the candidate types it: `1,2,5,6`.
pub(crate) fn path_text(path: &[usize]) -> String {
    path.iter().map(|g| g.to_string()).collect::<Vec<_>>().join(",")
}
