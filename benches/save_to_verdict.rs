//! Save → verdict, the number users feel, against its baseline: the bare
//! incremental `cargo build` of the same one-line edit, measured in the
//! same run on the same machine.
//!
//! `cargo bench --bench save_to_verdict` (`BENCH_ROUNDS` edits in each
//! direction, default 15; `BENCH_SCALE=0` skips the per-gate table of
//! scale-check times at the end).
//!
//! The solution is `versioned_kv`'s gate-4 mutant, so the session stays at
//! gate 4 and every save judges all four gates (142 cases). Edits alternate
//! between two one-line changes of function bodies, each also changing a
//! marker that `new()` prints, so the new verdict is recognisable on screen:
//! - **fix**: `version()` is right: gates 1–3 pass, with their cost
//!   checks, and gate 4 fails the mutant's case(s);
//! - **break**: `version()` is off by one: most cases of every gate fail.
//!
//! Figures:
//! - bare: `cargo build` of the solution crate alone (its own target dir),
//!   after every edit;
//! - check: `harness check versioned_kv --json`, end to end;
//! - TUI: `harness start` in a real pseudo-terminal, from the moment the
//!   edited file is renamed into place (as editors save) to the moment the
//!   verdict is on screen, and (fix) to the moment it is settled: the cost
//!   checks of the passing gates on screen too. Every fix saves new library
//!   bytes (its marker changes), so no fix reuses a measured result; the
//!   settle time per save (settled − verdict) is printed with its p90;
//! - the phases of the TUI path, from the harness's own trace
//!   (`HARNESS_TRACE`): watch → debounce → build → cases → draw;
//! - the TUI's CPU use while idle.
//!
//! It prints medians and 90th percentiles and their ratios to the bare
//! build. A bench, not a test: nothing here asserts a time.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{copy_dir, root};

#[path = "../tests/common/mod.rs"]
mod common;

/// A gate-4 mutant keeps the session at gate 4, so every save judges the
/// full suite.
const MUTANT: &str = "empty_commit_takes_a_version";

#[derive(Clone, Copy, PartialEq)]
enum Dir {
    Fix,
    Break,
}

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
    let problem =
        harness::problem::model::Problem::load(&config.problems_dir, &config.contract_dir, "versioned_kv").unwrap();
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

const NEW: &str = "    fn new() -> Self {\n";
const VERSION: &str = "    fn version(&self) -> u64 {\n        self.version\n";

impl Project {
    /// Saves the solution as an editor does (write aside, rename over):
    /// marker `n` in `new()`, and `version()` right or off by one.
    fn edit(&self, n: usize, dir: Dir) {
        assert!(self.original.contains(NEW) && self.original.contains(VERSION));
        let mut edited = self.original.replacen(NEW, &format!("{NEW}        eprintln!(\"edit {n:04}\");\n"), 1);
        if dir == Dir::Break {
            edited = edited.replacen(VERSION, &VERSION.replace("self.version\n", "self.version + 1\n"), 1);
        }
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

fn quantile(v: &[Duration], q: f64) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn median(v: &[Duration]) -> Duration {
    quantile(v, 0.5)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn now_us() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros()
}

/// The CPU time (user + system) a process has used, from /proc.
fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// The phases of one save in the TUI, from its trace: each phase's end is
/// the first mark of that name after the previous phase's end.
const PHASES: [(&str, &str); 7] = [
    ("watch", "edit renamed → first watch event"),
    ("debounced", "debounce (quiet period)"),
    ("build-start", "to the runner"),
    ("build-end", "cargo build"),
    ("cases", "workers start, 142 cases run"),
    ("verdict-sent", "verdict assembled"),
    ("drawn", "to the screen"),
];

fn phases(trace: &[(u128, String)], from_us: u128) -> Option<Vec<Duration>> {
    let mut at = from_us;
    let mut out = Vec::new();
    for (name, _) in PHASES {
        let (t, _) = trace.iter().find(|(t, what)| *t >= at && what == name)?;
        out.push(Duration::from_micros((t - at) as u64));
        at = *t;
    }
    Some(out)
}

fn row(label: &str, v: &[Duration], base: &[Duration]) {
    let (m, p, b) = (median(v), quantile(v, 0.9), median(base));
    println!(
        "{label:<44} {:>7.0} {:>7.0} {:>7.2} {:>+9.0} {:>+9.0}",
        ms(m),
        ms(p),
        ms(m) / ms(b),
        ms(m) - ms(b),
        ms(p) - ms(b)
    );
}

fn main() {
    let rounds: usize = std::env::var("BENCH_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(15);
    let project = project();
    let dirs = || (0..2 * rounds).map(|i| if i % 2 == 0 { Dir::Break } else { Dir::Fix });
    // Warm every cache first: the reference, both target directories.
    project.edit(0, Dir::Fix);
    project.bare_build();
    project.check();

    let (mut bare, mut check_fix, mut check_break) = (Vec::new(), Vec::new(), Vec::new());
    for (i, dir) in dirs().enumerate() {
        project.edit(i + 1, dir);
        bare.push(project.bare_build());
        let t = project.check();
        if dir == Dir::Fix { check_fix.push(t) } else { check_break.push(t) }
    }

    project.edit(999, Dir::Fix);
    let trace_file = tempfile::NamedTempFile::new().unwrap();
    // BENCH_TRACE=<file> keeps the trace for a closer look.
    let trace_path = std::env::var("BENCH_TRACE").unwrap_or_else(|_| trace_file.path().to_str().unwrap().to_string());
    let mut tui = common::Pty::spawn_env(
        &project.root,
        &["start", "versioned_kv", "--path", "1,2,3,4"],
        &[("HARNESS_TRACE", &trace_path)],
        50,
        160,
    );
    tui.wait_for("edit 0999", Duration::from_secs(180));
    let idle = |tui: &common::Pty, marker: &str| {
        let s = tui.contents();
        s.contains(marker) && s.contains("idle ·") && !s.contains("measuring")
    };
    let wait = |tui: &common::Pty, marker: &str| {
        let start = Instant::now();
        while !idle(tui, marker) {
            assert!(start.elapsed() < Duration::from_secs(60), "no verdict; the screen shows:\n{}", tui.contents());
            std::thread::sleep(Duration::from_millis(2));
        }
    };
    wait(&tui, "edit 0999");
    let (mut tui_fix, mut tui_fix_cost, mut tui_break) = (Vec::new(), Vec::new(), Vec::new());
    // Per fix: from the verdict on screen to every cost check on screen.
    let mut settle = Vec::new();
    let mut phase_times: Vec<Vec<Duration>> = vec![Vec::new(); PHASES.len()];
    for (i, dir) in dirs().enumerate() {
        let marker = format!("edit {:04}", 1000 + i);
        std::thread::sleep(Duration::from_millis(200));
        let (saved, saved_us) = (Instant::now(), now_us());
        project.edit(1000 + i, dir);
        tui.wait_for(&marker, Duration::from_secs(60));
        let verdict = saved.elapsed();
        wait(&tui, &marker);
        let settled = saved.elapsed();
        // Before the bare build, the harness finishes what the save started
        // (shrinking the failures), so the two never share the machine.
        let start = Instant::now();
        loop {
            let trace = std::fs::read_to_string(&trace_path).unwrap_or_default();
            let marks = harness::base::trace::parse(&trace);
            if marks.iter().any(|(t, what)| *t >= saved_us && what == "quiet") {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "the harness never went quiet");
            std::thread::sleep(Duration::from_millis(10));
        }
        match dir {
            Dir::Fix => {
                tui_fix.push(verdict);
                tui_fix_cost.push(settled);
                settle.push(settled - verdict);
            }
            Dir::Break => tui_break.push(verdict),
        }
        let trace = harness::base::trace::parse(&std::fs::read_to_string(&trace_path).unwrap_or_default());
        if let Some(p) = phases(&trace, saved_us) {
            for (k, d) in p.into_iter().enumerate() {
                phase_times[k].push(d);
            }
        }
        // The same edit, built bare: the bare target has not seen it yet.
        bare.push(project.bare_build());
    }
    // Idle: nothing changes for ten seconds.
    std::thread::sleep(Duration::from_secs(2));
    let pid = tui.child.process_id().unwrap();
    let before = cpu_time(pid);
    let idle_for = Duration::from_secs(10);
    std::thread::sleep(idle_for);
    let idle_cpu = cpu_time(pid).zip(before).map(|(a, b)| (a - b).as_secs_f64() / idle_for.as_secs_f64() * 100.0);
    let _ = tui.child.kill();
    drop(tui);

    println!(
        "\nsave → verdict, versioned_kv at gate 4, {rounds} fix and {rounds} break edits, all in one run \
         (cargo bench --bench save_to_verdict)"
    );
    println!("{:<44} {:>7} {:>7} {:>7} {:>9} {:>9}", "", "median", "p90", "× bare", "med−bare", "p90−bare");
    row("bare incremental cargo build (baseline)", &bare, &bare);
    row("TUI fix → verdict on screen", &tui_fix, &bare);
    row("TUI fix → settled (every cost check on screen)", &tui_fix_cost, &bare);
    row("TUI break → verdict on screen (most cases fail)", &tui_break, &bare);
    row("check, fix", &check_fix, &bare);
    row("check, break", &check_break, &bare);
    println!(
        "\nfix: verdict on screen → settled, per save: median {:.0} ms, p90 {:.0} ms \
         (every fix saves new library bytes: its marker changes)",
        ms(median(&settle)),
        ms(quantile(&settle, 0.9))
    );
    println!("\nwhere the TUI's time goes (medians over {} saves, from HARNESS_TRACE)", phase_times[0].len());
    for ((_, label), times) in PHASES.iter().zip(&phase_times) {
        if !times.is_empty() {
            println!("{label:<44} {:>7.1}", ms(median(times)));
        }
    }
    match idle_cpu {
        Some(p) => println!("\nidle CPU of the TUI over {} s: {p:.2} % of a core", idle_for.as_secs()),
        None => println!("\nidle CPU: /proc not readable"),
    }
    if std::env::var("BENCH_SCALE").as_deref() != Ok("0") {
        scale_per_gate(rounds.min(5));
    }
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
        for (gate, times) in per_gate {
            println!("{:<40} {:>9.0}", format!("{id} gate {gate}"), ms(median(&times)));
        }
    }
}
