//! Dispatch, and the headless commands `list`, `check` and `replay` (the
//! others live in `start`, `mock` and `review`). Each returns the exit
//! status (0 success, 1 the solution failed); an `Err` becomes status 2.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result, bail};
use harness_contract::wire::Outcome;
use serde_json::{Value as Json, json};

use crate::cli::{Cli, Command};
use crate::compile;
use crate::config::Config;
use crate::evaluate::{self, Judge};
use crate::judge;
use crate::problem::{self, Problem};
use crate::report_text;
use crate::sandbox;
use crate::script::Call;
use crate::ty::to_json;

pub fn run(cli: Cli) -> Result<u8> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let config = Config::discover(&cwd)?;
    match cli.command {
        Command::List { json } => list(&config, json),
        Command::Check { problem, solution, mutant, gate, seed, json, no_shrink } => {
            check(&config, &problem, Judged::pick(solution, mutant), gate, seed, json, no_shrink)
        }
        Command::Replay { problem, ops, solution, mutant, json } => {
            replay(&config, &problem, &ops, Judged::pick(solution, mutant), json)
        }
        Command::Start { problem: Some(problem), minutes, fresh } => {
            crate::start::start(&config, &problem, minutes, fresh)
        }
        Command::Start { problem: None, .. } => crate::start::choose(&config),
        Command::Mock { problem, minutes } => crate::mock::mock(&config, problem.as_deref(), minutes),
        Command::Report { id, list, markdown, json } => {
            crate::review::report(&config, id.as_deref(), list, markdown, json)
        }
        Command::Audit { problems, json } => crate::audit::command(&config, &problems, json),
        Command::New { id, title } => crate::scaffold::command(&config, &id, title.as_deref()),
        Command::Worker { .. } => unreachable!("handled in main"),
    }
}

fn list(config: &Config, json: bool) -> Result<u8> {
    let ids = problem::list_ids(&config.problems_dir)?;
    let mut rows = Vec::new();
    let mut broken = 0;
    for id in &ids {
        // One broken problem must not hide the others.
        match Problem::load(&config.problems_dir, id) {
            Ok(p) => rows.push(p),
            Err(e) => {
                broken += 1;
                eprintln!("error: {e:#}");
            }
        }
    }
    if json {
        let items: Vec<Json> = rows
            .iter()
            .map(|p| {
                json!({
                    "id": p.id,
                    "title": p.title,
                    "summary": p.summary,
                    "gates": p.gates.len(),
                    "minutes": p.total_minutes(),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&items)?);
    } else {
        for p in &rows {
            println!("{:<22} {:<40} {} gates, {} min", p.id, p.title, p.gates.len(), p.total_minutes());
            println!("{:<22} {}", "", p.summary);
        }
        if rows.is_empty() {
            println!("no problems in {}", config.problems_dir.display());
        }
    }
    Ok(if broken > 0 { 2 } else { 0 })
}

/// What `check` and `replay` judge.
enum Judged {
    /// `solutions/<problem>`.
    Default,
    Crate(PathBuf),
    Mutant(String),
}

impl Judged {
    fn pick(solution: Option<PathBuf>, mutant: Option<String>) -> Judged {
        match (solution, mutant) {
            (Some(dir), _) => Judged::Crate(dir),
            (None, Some(name)) => Judged::Mutant(name),
            (None, None) => Judged::Default,
        }
    }
}

fn solution_dir(config: &Config, problem: &Problem, judged: Judged) -> Result<PathBuf> {
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

fn check(
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
        println!("{}", serde_json::to_string_pretty(&report_text::render_json(&judge.problem, &dir, &eval))?);
    } else {
        print!("{}", report_text::render_text(&judge.problem, &eval, std::io::stdout().is_terminal()));
    }
    Ok(if eval.all_passed() { 0 } else { 1 })
}

fn read_ops(problem: &Problem, path: &Path) -> Result<Vec<Call>> {
    let text = if path == Path::new("-") {
        std::io::read_to_string(std::io::stdin()).context("cannot read the operations from stdin")?
    } else {
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?
    };
    let items: Vec<Json> = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}:{}:{}: {e}", path.display(), e.line(), e.column()))?;
    let sig = &problem.signature;
    let mut calls = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let here = || format!("{}: operation {i}", path.display());
        let op = item["op"].as_str().with_context(|| format!("{}: needs \"op\": \"<name>\"", here()))?;
        let (params, _) = sig
            .lookup(op)
            .with_context(|| format!("{}: unknown operation `{op}` (known: {})", here(), sig.op_names()))?;
        let args = match &item["args"] {
            Json::Null => Vec::new(),
            Json::Array(a) => a.clone(),
            _ => bail!("{}: \"args\" must be an array", here()),
        };
        if args.len() != params.len() {
            let names: Vec<String> = params.iter().map(|(n, t)| format!("{n}: {t}")).collect();
            bail!("{}: `{op}` takes ({}), given {} argument(s)", here(), names.join(", "), args.len());
        }
        let mut values = Vec::new();
        for ((name, ty), arg) in params.iter().zip(&args) {
            values.push(
                ty.from_json(arg, &sig.errors).map_err(|e| anyhow::anyhow!("{}: argument `{name}`: {e}", here()))?,
            );
        }
        if op == "new" && !calls.is_empty() {
            bail!("{}: `new` may only come first", here());
        }
        calls.push(Call { op: op.to_string(), args: values });
    }
    if calls.first().is_none_or(|c| c.op != "new") {
        if !sig.ctor.is_empty() {
            bail!("{}: the first operation must be `{}`", path.display(), sig.ctor_template());
        }
        calls.insert(0, Call { op: "new".into(), args: Vec::new() });
    }
    Ok(calls)
}

fn replay(config: &Config, id: &str, ops: &Path, solution: Judged, json: bool) -> Result<u8> {
    let problem = Problem::load(&config.problems_dir, id)?;
    let calls = read_ops(&problem, ops)?;
    let dir = solution_dir(config, &problem, solution)?;
    let build = compile::build(config, &dir)?;
    let Some(lib) = build.lib else {
        eprint!("{}", build.failure.clone().unwrap_or_default());
        for d in build.errors() {
            eprint!(
                "{}",
                if std::io::stderr().is_terminal() { d.rendered.clone() } else { report_text::strip_ansi(&d.rendered) }
            );
        }
        eprintln!("the solution does not compile");
        return Ok(1);
    };
    let target = evaluate::target(config, &problem, &lib);
    if let Err(why) = judge::probe(&target, &problem)? {
        eprintln!("{why}");
        return Ok(1);
    }
    // The reference's answers, when the problem ships one, make a replay
    // a diagnosis instead of a printout.
    let reference = reference_results(config, &problem, &calls);
    let run = sandbox::run(&target, &[&calls])?;
    let outcomes = run.cases.first().cloned().unwrap_or_default();
    let steps: Vec<crate::script::Step> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| crate::script::Step {
            call: c.clone(),
            expect: reference.as_ref().and_then(|r| r.get(i).cloned()).unwrap_or(harness_contract::Value::Any),
        })
        .collect();
    let verdict = judge::evaluate(&steps, &run, &target);

    let mut rows = Vec::new();
    let mut text = String::new();
    for (i, call) in calls.iter().enumerate() {
        let expected = reference.as_ref().and_then(|r| r.get(i));
        let mut row = json!({
            "op": call.op,
            "args": call.args.iter().map(to_json).collect::<Vec<_>>(),
        });
        match outcomes.get(i) {
            Some(Outcome::Returned(v)) => {
                row["result"] = to_json(v);
                let mark = match expected {
                    Some(e) if !e.accepts(v) => format!("   ✗ reference: {e}"),
                    _ => String::new(),
                };
                text.push_str(&format!("{call} -> {v}{mark}\n"));
            }
            Some(_) | None if verdict.failed_at == Some(i) => {
                row["result"] = Json::Null;
                row["verdict"] = json!(verdict.verdict);
                row["message"] = json!(verdict.message);
                text.push_str(&format!("{call} -> <{}> {}\n", verdict.verdict, verdict.message));
            }
            _ => break,
        }
        if let Some(e) = expected {
            row["expected"] = to_json(e);
        }
        rows.push(row);
        if verdict.failed_at == Some(i) && !matches!(verdict.verdict, crate::verdict::Verdict::WrongAnswer) {
            break;
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&Json::Array(rows))?);
    } else {
        print!("{text}");
        if !run.output.is_empty() {
            println!("--- output ---\n{}", run.output.trim_end());
        }
        if !verdict.passed() && verdict.failed_at.is_none() {
            println!("{}: {}", verdict.verdict, verdict.message);
        }
    }
    let clean = outcomes.len() == calls.len()
        && outcomes.iter().zip(&steps).all(|(o, s)| matches!(o, Outcome::Returned(v) if s.expect.accepts(v)));
    Ok(if clean { 0 } else { 1 })
}

fn reference_results(config: &Config, problem: &Problem, calls: &[Call]) -> Option<Vec<harness_contract::Value>> {
    if !problem.reference_dir().join("Cargo.toml").is_file() {
        return None;
    }
    let (_lib, target) = evaluate::build_reference(config, problem).ok()?;
    let steps = judge::expect_from_reference(&target, &[calls]).ok()?.pop()?;
    Some(steps.into_iter().map(|s| s.expect).collect())
}
