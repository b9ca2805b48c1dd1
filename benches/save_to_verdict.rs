//! Save → verdict, the number users feel, against its baseline: the bare
//! incremental `cargo build` of the same one-line edit, measured in the
//! same run on the same machine.
//!
//! `cargo bench --bench save_to_verdict` (set `BENCH_ROUNDS`, default 11).
//!
//! Three figures per round, each after a fresh one-line edit of a function
//! body in the `versioned_kv` solution:
//! - bare: `cargo build` of the solution crate alone (its own target dir);
//! - check: `harness check versioned_kv`, end to end: build, contract
//!   probe, all 142 cases of the four gates in isolated workers;
//! - screen: in a real pseudo-terminal running `harness start`, from the
//!   moment the edited file is renamed into place (as editors save) to the
//!   moment the new verdict is on screen (watch debounce included).
//!
//! It reports medians and the ratios to the bare build. A bench, not a
//! test: nothing here asserts a time.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{copy_dir, root};

#[path = "../tests/common/mod.rs"]
mod common;

/// A gate-4 mutant keeps the session at gate 4, so every save judges the
/// full suite (and some cases fail, so their output is on screen).
const MUTANT: &str = "empty_commit_takes_a_version";

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    lib: PathBuf,
    original: String,
}

fn project() -> Project {
    let dir = common::versioned_kv_project("harness-bench");
    let p = dir.path().to_path_buf();
    let sol = p.join("solutions/versioned_kv");
    let config = harness::base::config::Config::discover(&root()).unwrap();
    let problem = harness::problem::model::Problem::load(&config.problems_dir, "versioned_kv").unwrap();
    let mutant = problem.mutants.iter().find(|m| m.name == MUTANT).unwrap();
    copy_dir(&harness::judge::compile::mutant_crate(&config, &problem, mutant).unwrap(), &sol);
    let manifest = sol.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap().replace("[workspace]", "");
    std::fs::write(&manifest, harness::judge::compile::point_at_contract(&text, &sol, &root().join("contract")))
        .unwrap();
    let lib = sol.join("src/lib.rs");
    let original = std::fs::read_to_string(&lib).unwrap();
    Project { _dir: dir, root: p, lib, original }
}

impl Project {
    /// A one-line edit in a function body: the store's constructor prints
    /// a marker, so the new verdict is recognisable on screen.
    fn edit(&self, n: usize) {
        let needle = "    fn new() -> Self {\n";
        assert!(self.original.contains(needle));
        let edited = self.original.replacen(needle, &format!("{needle}        eprintln!(\"edit {n:04}\");\n"), 1);
        let tmp = self.lib.with_file_name(".lib.rs.tmp");
        std::fs::write(&tmp, edited).unwrap();
        std::fs::rename(&tmp, &self.lib).unwrap();
    }

    fn bare_build(&self) -> Duration {
        let started = Instant::now();
        let out = Command::new(env!("CARGO"))
            .args(["build", "--lib", "--quiet", "--manifest-path"])
            .arg(self.root.join("solutions/versioned_kv/Cargo.toml"))
            .arg("--target-dir")
            .arg(root().join("target/harness-bench-bare"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        started.elapsed()
    }

    fn check(&self) -> Duration {
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(["check", "versioned_kv", "--json"])
            .current_dir(&self.root)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "the gate-4 mutant fails: {}", String::from_utf8_lossy(&out.stderr));
        started.elapsed()
    }
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let rounds: usize = std::env::var("BENCH_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(11);
    let project = project();
    // Warm every cache first: the reference, both target directories.
    project.edit(0);
    project.bare_build();
    project.check();

    let (mut bare, mut check) = (Vec::new(), Vec::new());
    for n in 1..=rounds {
        project.edit(n);
        bare.push(project.bare_build());
        check.push(project.check());
    }

    let tui = common::Pty::start(&project.root, "versioned_kv", 50, 160);
    tui.wait_for("edit 0", Duration::from_secs(120));
    let (mut bare2, mut screen) = (Vec::new(), Vec::new());
    for n in 1..=rounds {
        let marker = format!("edit {:04}", 1000 + n);
        let saved = Instant::now();
        project.edit(1000 + n);
        tui.wait_for(&marker, Duration::from_secs(60));
        screen.push(saved.elapsed());
        // The same edit, built bare: the bare target has not seen it yet.
        bare2.push(project.bare_build());
    }
    drop(tui);

    let (b, c) = (median(&mut bare), median(&mut check));
    let (b2, s) = (median(&mut bare2), median(&mut screen));
    println!("save → verdict, versioned_kv, {rounds} rounds, medians (cargo bench --bench save_to_verdict)");
    println!("{:<52} {:>9} {:>8}", "", "ms", "× bare");
    println!("{:<52} {:>9.0} {:>8.2}", "bare incremental cargo build (baseline)", ms(b), 1.0);
    println!("{:<52} {:>9.0} {:>8.2}", "harness check, build → verdict, 142 cases", ms(c), ms(c) / ms(b));
    println!("{:<52} {:>9.0} {:>8}", "  difference (probe + judging + process start)", ms(c) - ms(b), "");
    println!("{:<52} {:>9.0} {:>8.2}", "bare incremental cargo build (baseline, TUI rounds)", ms(b2), 1.0);
    println!("{:<52} {:>9.0} {:>8.2}", "harness start, save → verdict on screen", ms(s), ms(s) / ms(b2));
    println!("{:<52} {:>9.0} {:>8}", "  difference (debounce + judging + drawing)", ms(s) - ms(b2), "");
    scale_per_gate(rounds);
}

/// The scale checks' time per gate, reference against reference (what a
/// correct solution pays once its cases pass), for every problem.
fn scale_per_gate(rounds: usize) {
    let config = harness::base::config::Config::discover(&root()).unwrap();
    println!("\nscale checks per gate, a correct solution (the reference), medians of {rounds} runs");
    println!("{:<40} {:>9}", "", "ms");
    for id in harness::problem::model::list_ids(&config.problems_dir).unwrap() {
        let reference = config.problems_dir.join(&id).join("reference");
        let mut per_gate: std::collections::BTreeMap<u64, Vec<Duration>> = Default::default();
        for _ in 0..rounds {
            let out = Command::new(env!("CARGO_BIN_EXE_harness"))
                .args(["check", &id, "--json", "--no-shrink", "--solution"])
                .arg(&reference)
                .current_dir(root())
                .output()
                .unwrap();
            let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            for g in json["gates"].as_array().unwrap() {
                let total: u64 = g["scale"].as_array().unwrap().iter().map(|s| s["elapsed_ms"].as_u64().unwrap()).sum();
                if !g["scale"].as_array().unwrap().is_empty() {
                    per_gate.entry(g["gate"].as_u64().unwrap()).or_default().push(Duration::from_millis(total));
                }
            }
        }
        for (gate, mut times) in per_gate {
            println!("{:<40} {:>9.0}", format!("{id} gate {gate}"), ms(median(&mut times)));
        }
    }
}
