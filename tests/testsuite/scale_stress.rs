//! Scale checks never fail a correct solution, even on a busy machine, and
//! always catch a cost mistake.
//!
//! Every problem's reference, and its `alternate/` (a second correct
//! solution of another design) where there is one, go through every scale
//! check of every gate `HARNESS_STRESS_ROUNDS` times (20 by default) with
//! two threads burning CPU alongside; none may fail. Every cost mutant (one
//! whose `caught_by` names a scale check) goes through its check as often
//! (`HARNESS_STRESS_MUTANT_ROUNDS` rounds when that is set: a mutant's round
//! costs several correct ones', and a false failure is the worse risk), and
//! must be caught in at least three rounds of four: under two burners on
//! two cores a mutant near its check's limit can slip once, which is a
//! missed bug (its catch rate is printed), where a correct solution failing
//! once is a false failure and fails this test. `harness audit` proves
//! each mutant caught at its gate on a machine at rest. A memory check runs 3 rounds at most:
//! heap counts are exact, so its figures do not change from one round to
//! the next. Slow (minutes), so `#[ignore]`d and run
//! by `.ci/run` explicitly. It prints the growth measured for each check.
//! `SCALE_STRESS_PROBLEMS=dedupe,wal` (or `HARNESS_TEST_PROBLEM=wal`)
//! limits it to some problems.

use crate::common;

use std::sync::atomic::AtomicBool;

use harness::base::config::Config;
use harness::judge::compile;
use harness::judge::scale::{Curves, judge_check};
use harness::problem::model::Problem;
use harness::problem::scale::Kind;

/// Rounds of a memory check, whatever `HARNESS_STRESS_ROUNDS` says.
const MEMORY_ROUNDS: usize = 3;

/// Rounds in `rounds` a cost mutant may survive under the burners: one in
/// four (none in fewer than four). A miss is a missed bug, reported with
/// its rate; a correct solution may fail in no round at all.
fn allowed_misses(rounds: usize) -> usize {
    rounds / 4
}

#[test]
#[ignore = "minutes of CPU; .ci/run runs it"]
fn scale_checks_are_stable_under_load() {
    harness::judge::sandbox::use_worker_exe(std::path::Path::new(env!("CARGO_BIN_EXE_harness")));
    let rounds: usize = std::env::var("HARNESS_STRESS_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(20);
    // A cost mutant's round costs several correct ones' (it runs into the
    // limits, then is measured in full), and a miss is the lesser risk: it
    // may run fewer rounds (HARNESS_STRESS_MUTANT_ROUNDS, default: as many).
    let mutant_rounds: usize =
        std::env::var("HARNESS_STRESS_MUTANT_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(rounds);
    // Problem ids, comma-separated; all of them when neither is set.
    let only: Option<Vec<String>> = std::env::var("SCALE_STRESS_PROBLEMS")
        .or_else(|_| std::env::var("HARNESS_TEST_PROBLEM"))
        .ok()
        .map(|list| list.split(',').map(|id| id.trim().to_string()).filter(|id| !id.is_empty()).collect());
    let config = Config::discover(&common::root()).unwrap();
    let burners = common::Burners::start();
    let mut failures = Vec::new();
    let mut ids = harness::problem::model::list_ids(&config.problems_dir).unwrap();
    if let Some(only) = &only {
        let unknown: Vec<&String> = only.iter().filter(|o| !ids.contains(o)).collect();
        assert!(unknown.is_empty(), "no such problem: {unknown:?}");
    }
    ids.retain(|id| only.as_ref().is_none_or(|o| o.contains(id)));
    for id in &ids {
        let problem = Problem::load(&config.problems_dir, &config.contract_dir, id).unwrap();
        if problem.gates.iter().all(|g| g.scale.is_empty()) {
            continue;
        }
        let (_reference_lib, reference) = common::build_lib(&config, &problem, &problem.reference_dir());
        let mut correct =
            vec![("reference".to_string(), common::build_lib(&config, &problem, &problem.reference_dir()))];
        let alternate = problem.dir.join("alternate");
        if alternate.join("Cargo.toml").is_file() {
            correct.push(("alternate".to_string(), common::build_lib(&config, &problem, &alternate)));
        }
        let mut mutants = Vec::new();
        for m in &problem.mutants {
            let gate = &problem.gates[m.gate - 1];
            if let Some(check) = gate.scale.iter().find(|c| m.caught_by.as_deref() == Some(c.name.as_str())) {
                let dir = compile::mutant_crate(&config, &problem, m).unwrap();
                mutants.push((m.name.clone(), check.clone(), common::build_lib(&config, &problem, &dir)));
            }
        }
        // Each round judges as a session does (`judge_check`): the
        // reference's curve measured once (here under the burners, as a
        // session's warm-up may be under a build), then the quick pass
        // against it, and the full measurement for whatever it leaves.
        let never = AtomicBool::new(false);
        for gate in &problem.gates {
            for check in &gate.scale {
                let mine: Vec<_> = mutants.iter().filter(|(_, c, _)| c.name == check.name).collect();
                let mut worst = vec![(0.0f64, 0u64, 0usize); correct.len()];
                // Per mutant: least growth, slowest run, rounds it survived
                // and what the first survival said.
                let mut least = vec![(f64::MAX, 0u64, 0usize, String::new()); mine.len()];
                // Heap counts are exact: a memory check gives the same
                // figures every round, and only its wall-time stop can
                // feel the load, so a few rounds say all there is.
                let rounds = match check.kind {
                    Kind::Time => rounds,
                    Kind::Memory => rounds.min(MEMORY_ROUNDS),
                };
                let mutant_rounds = mutant_rounds.min(rounds);
                for round in 0..rounds {
                    let curves = Curves::default();
                    curves.warm(&[check], &problem.signature, &reference, &never).unwrap();
                    for (k, (who, (_, subject))) in correct.iter().enumerate() {
                        let r = judge_check(check, &problem.signature, &reference, subject, &curves, &never)
                            .unwrap()
                            .unwrap();
                        let rel = r.yours_growth.unwrap_or(0.0) / r.reference_growth.unwrap_or(1.0);
                        worst[k].0 = worst[k].0.max(rel);
                        worst[k].1 = worst[k].1.max(r.elapsed_ms);
                        worst[k].2 += usize::from(r.points.len() == 2 && check.sizes.len() > 2);
                        if !r.passed() {
                            failures.push(format!("{id} {who}: {}", r.message));
                        }
                    }
                    for (k, (_, _, (_, subject))) in mine.iter().enumerate() {
                        if round >= mutant_rounds {
                            break;
                        }
                        let r = judge_check(check, &problem.signature, &reference, subject, &curves, &never)
                            .unwrap()
                            .unwrap();
                        let rel = r.yours_growth.unwrap_or(f64::INFINITY) / r.reference_growth.unwrap_or(1.0);
                        least[k].0 = least[k].0.min(rel);
                        least[k].1 = least[k].1.max(r.elapsed_ms);
                        if r.passed() {
                            least[k].2 += 1;
                            if least[k].3.is_empty() {
                                least[k].3 = r.message.clone();
                            }
                        }
                    }
                }
                for ((who, _), (worst, ms, quick)) in correct.iter().zip(&worst) {
                    // A quick pass measures two sizes: told apart only when
                    // the check has more.
                    let quick = if check.sizes.len() > 2 {
                        format!(", {quick}/{rounds} passed on the quick pass")
                    } else {
                        String::new()
                    };
                    eprintln!(
                        "{id} g{} {:<55} {who:<10} worst yours/ref growth ×{worst:.2}, slowest {ms} ms{quick}",
                        gate.number, check.name
                    );
                }
                for ((name, _, _), (least, ms, missed, first)) in mine.iter().zip(&least) {
                    let caught = mutant_rounds - missed;
                    if *missed > allowed_misses(mutant_rounds) {
                        failures.push(format!(
                            "{id} mutant {name} survived {missed} of {mutant_rounds} rounds (at most {} may): {first}",
                            allowed_misses(mutant_rounds)
                        ));
                    }
                    let least = if *least > 1e12 { "stopped early".to_string() } else { format!("×{least:.1}") };
                    eprintln!(
                        "{id} {:<58} mutant {name}: caught {caught}/{mutant_rounds}, least yours/ref growth {least}, \
                         slowest {ms} ms",
                        check.name
                    );
                }
            }
        }
    }
    drop(burners);
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}
