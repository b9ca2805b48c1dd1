//! `harness replay`: run a list of operations on a solution and show each
//! result, marking those that differ from the reference.

use std::io::IsTerminal;
use std::path::Path;

use anyhow::{Context, Result, bail};
use harness_contract::wire::Outcome;
use serde_json::{Value as Json, json};

use crate::base::config::Config;
use crate::cmd::{Judged, solution_dir};
use crate::judge::compile;
use crate::judge::evaluate::{self};
use crate::judge::sandbox;
use crate::judge::suite;
use crate::problem::model::Problem;
use crate::problem::script::Call;
use crate::problem::ty::to_json;

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

pub(crate) fn replay(config: &Config, id: &str, ops: &Path, solution: Judged, json: bool) -> Result<u8> {
    let problem = Problem::load(&config.problems_dir, &config.contract_dir, id)?;
    let calls = read_ops(&problem, ops)?;
    let dir = solution_dir(config, &problem, solution)?;
    let build = compile::build(config, &dir)?;
    let Some(lib) = build.lib else {
        eprint!("{}", build.failure.clone().unwrap_or_default());
        for d in build.errors() {
            eprint!(
                "{}",
                if std::io::stderr().is_terminal() {
                    d.rendered.clone()
                } else {
                    crate::base::diag::strip_ansi(&d.rendered)
                }
            );
        }
        eprintln!("the solution does not compile");
        return Ok(1);
    };
    let target = evaluate::target(config, &problem, &lib);
    if let Err(why) = suite::probe(&target, &problem)? {
        eprintln!("{why}");
        return Ok(1);
    }
    // The reference's answers, when the problem ships one, make a replay
    // a diagnosis instead of a printout.
    let reference = reference_results(config, &problem, &calls);
    let run = sandbox::run(&target, &[&calls])?;
    let case = run.case(0);
    let outcomes = case.outcomes.clone();
    let steps: Vec<crate::problem::script::Step> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| crate::problem::script::Step {
            call: c.clone(),
            expect: reference.as_ref().and_then(|r| r.get(i).cloned()).unwrap_or(harness_contract::Value::Any),
        })
        .collect();
    let verdict = suite::evaluate(&steps, &case, &target);

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
        if verdict.failed_at == Some(i) && !matches!(verdict.verdict, crate::judge::verdict::Verdict::WrongAnswer) {
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
    let steps = suite::expect_from_reference(&target, &[calls]).ok()?.pop()?;
    Some(steps.into_iter().map(|s| s.expect).collect())
}
