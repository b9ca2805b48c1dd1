//! `harness check`: judge a solution headless, as text or `--json`.

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;

use anyhow::{Result, bail};

use crate::base::config::Config;
use crate::cmd::{Judged, solution_dir};
use crate::judge::compile;
use crate::judge::evaluate::Judge;
use crate::problem::model::Problem;
use crate::ui::results;

pub(crate) fn check(
    config: &Config,
    id: &str,
    solution: Judged,
    gate: Option<usize>,
    seed: Option<u64>,
    json: bool,
    no_shrink: bool,
) -> Result<u8> {
    let problem = Problem::load(&config.problems_dir, id)?;
    let dir = solution_dir(config, &problem, solution)?;
    if let Some(g) = gate
        && (g == 0 || g > problem.gates.len())
    {
        bail!("--gate {g}: `{id}` has gates 1 to {}", problem.gates.len());
    }
    let upto = gate.unwrap_or(problem.gates.len());
    // The solution builds while the reference builds and computes the
    // generated cases' expectations: two cargo runs in two target folders.
    let (judge, build) = std::thread::scope(|s| {
        let build = s.spawn(|| compile::build(config, &dir));
        let judge = Judge::new(config, problem, upto, seed);
        (judge, build.join().unwrap_or_else(|_| Err(anyhow::anyhow!("the build thread panicked"))))
    });
    let (mut judge, build) = (judge?, build?);
    judge.shrink = !no_shrink;
    let eval = judge.evaluate_build(build, upto, &AtomicBool::new(false), &|_, _| {}, None)?;
    if json {
        let mut out = results::render_json(&judge.problem, &dir, &eval);
        out["sandbox"] = crate::cmd::doctor::sandbox_json(config)?;
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", results::render_text(&judge.problem, &eval, std::io::stdout().is_terminal()));
    }
    Ok(if eval.all_passed() { 0 } else { 1 })
}
