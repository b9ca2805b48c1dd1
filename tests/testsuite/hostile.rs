//! Hostile solutions against the sandbox, on a scratch copy of the fixture
//! project's `escape` problem: each case of its solution tries one way out
//! (a `setsid` child holding a pipe, writes into problems/, reports/ and
//! its own src/, deleting the loaded library, stopping or killing the
//! harness, opening the terminal, statics carried from case to case), and
//! returns 1 when the attempt was refused. Around every run: a deadline,
//! the harness's peak memory, the files of problems/, reports/ and the
//! solution hashed before and after, and the process table scanned for the
//! fixture's marker (`sleep 74242…`). The tests run one at a time: they
//! share the marker.

use crate::common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{copy_dir, root};
use serde_json::Value;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A copy of tests/fixtures/project whose contract and build output point
/// back into this repository.
fn project(extra_toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let fixture = root().join("tests/fixtures/project");
    copy_dir(&fixture.join("problems"), &p.join("problems"));
    for solution in ["escape", "confine"] {
        let crate_dir = p.join("solutions").join(solution);
        copy_dir(&fixture.join("solutions").join(solution), &crate_dir);
        let manifest = crate_dir.join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        let text = harness::judge::compile::point_at_contract(&text, &crate_dir, &root().join("contract"));
        std::fs::write(&manifest, text).unwrap();
    }
    std::fs::create_dir_all(p.join("reports/sessions")).unwrap();
    std::fs::write(p.join("reports/sessions/keep.json"), b"{\"untouched\": true}").unwrap();
    std::fs::write(
        p.join("harness.toml"),
        format!(
            "[paths]\ncontract = {:?}\ntarget = {:?}\n[limits]\ncase_timeout_ms = 2500\nmemory_mb = 256\n{extra_toml}",
            root().join("contract"),
            root().join("target/harness-fixtures")
        ),
    )
    .unwrap();
    dir
}

/// Every file under `dirs` with a hash of its content.
fn hashes(base: &Path, dirs: &[&str]) -> BTreeMap<PathBuf, u64> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, u64>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if entry.file_name() != "target" {
                    walk(&path, out);
                }
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                out.insert(path, harness_contract::schema::fnv1a(&bytes));
            }
        }
    }
    let mut out = BTreeMap::new();
    for d in dirs {
        walk(&base.join(d), &mut out);
    }
    out
}

/// Processes whose command line carries the fixture's marker.
fn marked() -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if cmdline.windows(11).any(|w| w == b"sleep\x0074242") {
            found.push(format!("{name}: {}", String::from_utf8_lossy(&cmdline).replace('\0', " ")));
        }
    }
    found
}

/// The case processes of harness `harness` running candidate code: in one
/// of its scratch folders, with a thread named `candidate`. (Candidate code
/// starts no process of its own: that is refused.)
fn running_cases(harness: u32) -> Vec<u32> {
    let scratch = format!("harness-scratch-{harness}-");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok().map(|pid| (pid, e.path())))
        .filter(|(_, path)| std::fs::read_link(path.join("cwd")).is_ok_and(|c| c.to_string_lossy().contains(&scratch)))
        .filter(|(_, path)| {
            std::fs::read_dir(path.join("task"))
                .into_iter()
                .flatten()
                .flatten()
                .any(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "candidate"))
        })
        .map(|(pid, _)| pid)
        .collect()
}

/// Waits until one case process of harness `harness` has run candidate
/// code for `settled` (a case that hangs, not one passing by).
fn wait_for_running_case(harness: u32, settled: Duration, within: Duration, what: impl Fn() -> String) {
    let start = Instant::now();
    let mut seen: Option<(u32, Instant)> = None;
    loop {
        let running = running_cases(harness);
        seen = match seen {
            Some((pid, since)) if running.contains(&pid) => {
                if since.elapsed() >= settled {
                    return;
                }
                Some((pid, since))
            }
            _ => running.first().map(|pid| (*pid, Instant::now())),
        };
        assert!(start.elapsed() < within, "no case kept running: {}", what());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits up to `within` for no marked process to be left.
fn assert_none_left(within: Duration) {
    let start = Instant::now();
    loop {
        let left = marked();
        if left.is_empty() {
            return;
        }
        assert!(start.elapsed() < within, "left running: {left:#?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

struct Finished {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    peak_kb: u64,
    took: Duration,
}

/// Runs the harness in `dir`, failing the test if it is not done within
/// `deadline`; `during` is called once with its pid while it runs.
fn run(dir: &Path, args: &[&str], deadline: Duration, during: impl FnOnce(u32)) -> Finished {
    run_env(dir, args, &[], deadline, during)
}

/// [`run`] with variables added to the harness's environment.
fn run_env(
    dir: &Path,
    args: &[&str],
    env: &[(&str, String)],
    deadline: Duration,
    during: impl FnOnce(u32),
) -> Finished {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .current_dir(dir)
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let mut during = Some(during);
    let mut peak_kb = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        if let Some(kb) = status.lines().find_map(|l| l.strip_prefix("VmHWM:")) {
            peak_kb = peak_kb.max(kb.trim().trim_end_matches(" kB").trim().parse().unwrap_or(0));
        }
        if let Some(f) = during.take() {
            f(pid);
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            panic!("`harness {}` hung: not done within {deadline:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Finished {
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        peak_kb,
        took: started.elapsed(),
    }
}

fn verdicts(report: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for gate in report["gates"].as_array().unwrap() {
        for f in gate["failures"].as_array().unwrap() {
            out.insert(f["case"].as_str().unwrap().to_string(), f["verdict"].as_str().unwrap().to_string());
        }
    }
    out
}

#[test]
fn escape_attempts_are_refused_and_statics_never_carry_over() {
    let _serial = serial();
    let project = project("");
    let dir = project.path();
    let watched = ["problems", "reports", "solutions/escape/src", "solutions/escape/Cargo.toml"];
    let before = hashes(dir, &watched);
    // Twice: the first run tried to delete its library, the second must
    // still load (and build) it.
    for round in 0..2 {
        let done = run(dir, &["check", "escape", "--gate", "1", "--json"], Duration::from_secs(120), |_| {});
        assert_eq!(done.code, Some(1), "round {round}: {}{}", done.stdout, done.stderr);
        let report: Value = serde_json::from_str(&done.stdout).unwrap();
        let gate = &report["gates"][0];
        // Every escape is refused: a pass, or `refused` where the case
        // tried to start a process (setsid, kill); only the two cases that
        // need a second instance in their process fail otherwise, and
        // always the same way.
        let expected: BTreeMap<String, String> = [
            ("not the first instance, 1", "wrong_answer"),
            ("not the first instance, 2", "wrong_answer"),
            ("a setsid child keeps the output pipe", "refused"),
            ("a setsid child with every fd closed", "refused"),
            ("stops and kills the harness", "refused"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into();
        assert_eq!(verdicts(&report), expected, "round {round}");
        assert_eq!(gate["cases_total"], 14);
        // In force on this machine (CI is the same kind).
        for p in [
            "pid_namespace",
            "filesystem",
            "signals",
            "no_terminal",
            "process_per_case",
            "network",
            "processes",
            "disk",
        ] {
            assert_eq!(report["sandbox"][p]["active"], true, "{p}: {}", report["sandbox"][p]);
        }
        assert!(done.peak_kb > 0 && done.peak_kb < 200_000, "harness peak memory {} kB", done.peak_kb);
        assert_none_left(Duration::from_secs(2));
    }
    assert_eq!(hashes(dir, &watched), before, "files changed under {watched:?}");
}

#[test]
fn sigterm_sigint_and_sighup_of_check_end_every_worker_and_child() {
    let _serial = serial();
    let project = project("");
    let dir = project.path();
    let mut killed = Vec::new();
    for signal in ["-TERM", "-INT", "-HUP"] {
        let done = run(dir, &["check", "escape", "--gate", "2"], Duration::from_secs(120), |pid| {
            killed.push(pid);
            // The hanging case is running (its children were refused).
            wait_for_running_case(pid, Duration::from_millis(300), Duration::from_secs(60), || {
                "the hanging case never started".into()
            });
            Command::new("kill").args([signal, &pid.to_string()]).status().unwrap();
        });
        assert_ne!(done.code, Some(0), "{signal}");
        assert!(done.took < Duration::from_secs(60), "{signal}: took {:?}", done.took);
        assert_none_left(Duration::from_secs(2));
        let pid = *killed.last().unwrap();
        let start = Instant::now();
        while !(workers_of(pid).is_empty() && running_cases(pid).is_empty()) {
            assert!(start.elapsed() < Duration::from_secs(2), "{signal}: workers left: {:?}", workers_of(pid));
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    // The scratch folders the killed runs could not remove go with the
    // next run.
    let done = run(dir, &["doctor"], Duration::from_secs(30), |_| {});
    assert_eq!(done.code, Some(0), "{}{}", done.stdout, done.stderr);
    let left: Vec<String> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| killed.iter().any(|pid| n.starts_with(&format!("harness-scratch-{pid}-"))))
        .collect();
    assert!(left.is_empty(), "scratch folders left: {left:?}");
}

#[test]
fn a_build_script_that_never_ends_meets_the_build_deadline() {
    let _serial = serial();
    let project = project("[build]\ndeadline_s = 3\n");
    let dir = project.path();
    let crate_dir = dir.join("solutions/escape");
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    // A package of its own, so the slow build does not share the fixture's
    // build folder.
    std::fs::write(
        crate_dir.join("Cargo.toml"),
        manifest
            .replace("name = \"escape_fixture\"", "name = \"escape_slow_build\"")
            .replace("[lib]", "build = \"build.rs\"\n\n[lib]"),
    )
    .unwrap();
    std::fs::write(
        crate_dir.join("build.rs"),
        "fn main() { std::process::Command::new(\"sleep\").arg(\"742425\").status().unwrap(); }\n",
    )
    .unwrap();
    let done = run(dir, &["check", "escape", "--gate", "1", "--json"], Duration::from_secs(120), |_| {});
    assert_eq!(done.code, Some(1), "{}{}", done.stdout, done.stderr);
    let report: Value = serde_json::from_str(&done.stdout).unwrap();
    let failure = report["build"]["failure"].as_str().unwrap_or_default().to_string();
    assert!(failure.contains("did not finish within 3 s"), "{}", report["build"]);
    assert!(failure.contains("deadline_s"), "names the setting: {failure}");
    assert_none_left(Duration::from_secs(2));
}

#[test]
fn a_tui_killed_with_sigkill_leaves_nothing_running_and_resumes() {
    let _serial = serial();
    // The starter with a constructor that blocks.
    let (project, lib, starter) = blocking_starter("742426");
    let dir = project.path();
    let mut first = common::Pty::start(dir, "versioned_kv", 24, 80);
    wait_for_marker(&first);
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    assert_none_left(Duration::from_secs(2));
    // No worker of that harness either (case or measuring worker): they
    // ran in its scratch folders.
    let workers = workers_of(first.child.process_id().unwrap_or(0));
    assert!(workers.is_empty(), "workers left: {workers:?}");

    resumes(dir, &lib, &starter);
}

/// Turns the project's `escape` solution into a package of its own named
/// `package` with the build script `build_rs`.
fn with_build_script(dir: &Path, package: &str, build_rs: &str) {
    let crate_dir = dir.join("solutions/escape");
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    std::fs::write(
        crate_dir.join("Cargo.toml"),
        manifest
            .replace("name = \"escape_fixture\"", &format!("name = \"{package}\""))
            .replace("[lib]", "build = \"build.rs\"\n\n[lib]"),
    )
    .unwrap();
    std::fs::write(crate_dir.join("build.rs"), build_rs).unwrap();
}

/// Build-script (and scale-check) code that tries to write outside, and
/// to stop and kill the harness; `$out` collects one `name: refused` or
/// `name: GOT THROUGH` per attempt. `$project` is the project folder and
/// `$src` the crate's src/.
const ESCAPES: &str = r#"
fn attempts(project: &str, src: &str) -> String {
    use std::process::{Command, Stdio};
    let mut out = Vec::new();
    let mut note = |name: &str, r: std::io::Result<()>| {
        out.push(format!("{name}: {}", if r.is_ok() { "GOT THROUGH" } else { "refused" }))
    };
    let append = |path: String| {
        std::fs::OpenOptions::new().append(true).open(path).and_then(|mut f| std::io::Write::write_all(&mut f, b"\n# planted\n"))
    };
    note("problems", append(format!("{project}/problems/escape/problem.toml")).or_else(|_| append(format!("{project}/problems/versioned_kv/problem.toml"))));
    note("reports", std::fs::write(format!("{project}/reports/sessions/planted.json"), b"{}"));
    note("src", std::fs::write(format!("{src}/planted.rs"), b""));
    note("harness.toml", append(format!("{project}/harness.toml")));
    // The harness's pids as the host sees them, from /proc.
    let mut reached = false;
    let mut pid = "self".to_string();
    for _ in 0..8 {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { break };
        let Some(ppid) = status.lines().find_map(|l| l.strip_prefix("PPid:")).map(|p| p.trim().to_string()) else { break };
        if ppid == "0" { break; }
        // Only the harness binary itself (argv[0]), never a test named after it.
        let cmdline = std::fs::read(format!("/proc/{ppid}/cmdline")).unwrap_or_default();
        let argv0 = cmdline.split(|b| *b == 0).next().unwrap_or_default();
        if argv0.ends_with(b"/harness") || argv0 == b"harness" {
            for sig in ["-STOP", "-KILL"] {
                let st = Command::new("kill").args([sig, &ppid]).stderr(Stdio::null()).status();
                reached |= st.is_ok_and(|s| s.success());
            }
        }
        pid = ppid;
    }
    note("signal", if reached { Ok(()) } else { Err(std::io::Error::other("no")) });
    out.join(", ")
}
"#;

#[test]
fn a_build_script_cannot_write_problems_reports_or_its_src_nor_signal_the_harness() {
    let _serial = serial();
    let project = project("");
    let dir = project.path();
    let watched = ["problems", "reports", "solutions/escape/src", "harness.toml"];
    let before = hashes(dir, &watched);
    with_build_script(
        dir,
        "escape_build_writes",
        &format!(
            "{ESCAPES}\nfn main() {{\n    let manifest = std::env::var(\"CARGO_MANIFEST_DIR\").unwrap();\n    \
             let results = attempts(&format!(\"{{manifest}}/../..\"), &format!(\"{{manifest}}/src\"));\n    \
             panic!(\"build.rs escape: {{results}}\");\n}}\n"
        ),
    );
    let done = run(dir, &["check", "escape", "--gate", "1", "--json"], Duration::from_secs(180), |_| {});
    assert_eq!(done.code, Some(1), "{}{}", done.stdout, done.stderr);
    let report: Value = serde_json::from_str(&done.stdout).unwrap();
    // The verdict: a failed build whose text shows every attempt refused.
    let failure = report["build"]["failure"].as_str().unwrap_or_default().to_string();
    for attempt in ["problems", "reports", "src", "harness.toml", "signal"] {
        assert!(failure.contains(&format!("{attempt}: refused")), "{attempt}: {failure}");
    }
    assert!(!failure.contains("GOT THROUGH"), "{failure}");
    for p in ["build_filesystem", "build_pid_namespace"] {
        assert_eq!(report["sandbox"][p]["active"], true, "{p}: {}", report["sandbox"][p]);
    }
    assert_eq!(hashes(dir, &watched), before, "files changed under {watched:?}");
    assert_none_left(Duration::from_secs(2));
}

#[test]
fn a_harness_killed_with_sigkill_during_a_build_leaves_no_build_script_running() {
    let _serial = serial();
    let project = project("");
    let dir = project.path();
    // One build script process leaves cargo's process group (setsid): only
    // the build's PID namespace can end it.
    with_build_script(
        dir,
        "escape_build_sleeps",
        "fn main() {\n    use std::process::{Command, Stdio};\n    \
         Command::new(\"setsid\").args([\"sleep\", \"742427\"]).stdin(Stdio::null()).stdout(Stdio::null())\
         .stderr(Stdio::null()).spawn().unwrap();\n    \
         Command::new(\"sleep\").arg(\"742428\").status().unwrap();\n}\n",
    );
    let done = run(dir, &["check", "escape", "--gate", "1"], Duration::from_secs(180), |pid| {
        let start = Instant::now();
        while marked().len() < 2 {
            assert!(start.elapsed() < Duration::from_secs(150), "the build script never started: {:?}", marked());
            std::thread::sleep(Duration::from_millis(10));
        }
        Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
    });
    assert_eq!(done.code, None, "killed: {}{}", done.stdout, done.stderr);
    assert_none_left(Duration::from_secs(2));
}

/// A versioned_kv project whose solution is the reference with `hook`
/// run first in `get_at` (what gate 2's scale check measures) when it runs
/// in the measuring worker.
fn measured_solution(hook: &str) -> tempfile::TempDir {
    let project = common::versioned_kv_project("harness-fixtures");
    let dir = project.path();
    std::fs::create_dir_all(dir.join("reports/sessions")).unwrap();
    std::fs::write(dir.join("reports/sessions/keep.json"), b"{\"untouched\": true}").unwrap();
    let sol = dir.join("solutions/versioned_kv");
    copy_dir(&dir.join("problems/versioned_kv/reference"), &sol);
    let manifest = sol.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap().replace("versioned_kv_reference", "kv_measure_escape");
    std::fs::write(
        &manifest,
        harness::judge::compile::point_at_contract(&text, &sol, &common::root().join("contract")),
    )
    .unwrap();
    let lib = sol.join("src/lib.rs");
    let code = std::fs::read_to_string(&lib).unwrap();
    let needle = "    fn get_at(&self, key: String, version: u64) -> Option<i64> {\n";
    assert!(code.contains(needle), "the reference has get_at");
    let hook = format!(
        "        if std::fs::read(\"/proc/self/cmdline\").is_ok_and(|c| c.windows(9).any(|w| w == b\"__measure\")) {{\n{hook}\n        }}\n"
    );
    std::fs::write(&lib, format!("{}{ESCAPES}", code.replacen(needle, &format!("{needle}{hook}"), 1))).unwrap();
    project
}

#[test]
fn code_run_by_a_scale_check_cannot_write_outside_or_signal_the_harness() {
    let _serial = serial();
    // It tries every escape, leaves a `setsid` child behind, and panics
    // with what it found.
    let project = measured_solution(
        "            std::process::Command::new(\"setsid\").args([\"sleep\", \"742429\"]).stdin(std::process::Stdio::null())\
         .stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().ok();\n            \
         let results = attempts(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/../..\"), concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/src\"));\n            \
         panic!(\"measure escape: {results}\");",
    );
    let dir = project.path();
    let watched = ["problems", "reports", "solutions/versioned_kv/src", "harness.toml"];
    // The reference's Cargo.lock is written by its own (trusted) build.
    let hashed = || {
        let mut h = hashes(dir, &watched);
        h.retain(|p, _| !p.ends_with("reference/Cargo.lock"));
        h
    };
    let before = hashed();

    let done = run(dir, &["check", "versioned_kv", "--gate", "2", "--json"], Duration::from_secs(240), |_| {});
    assert_eq!(done.code, Some(1), "{}{}", done.stdout, done.stderr);
    let report: Value = serde_json::from_str(&done.stdout).unwrap();
    let gate = &report["gates"][1];
    assert_eq!(gate["cases_total"], gate["cases_passed"], "the cases run the reference's code: {gate}");
    let check = &gate["scale"][0];
    assert_eq!(check["verdict"], "panic", "{check}");
    let message = check["message"].as_str().unwrap_or_default();
    for attempt in ["problems", "reports", "src", "harness.toml", "signal"] {
        assert!(message.contains(&format!("{attempt}: refused")), "{attempt}: {message}");
    }
    assert_eq!(hashed(), before, "files changed under {watched:?}");
    assert!(done.peak_kb > 0 && done.peak_kb < 200_000, "harness peak memory {} kB", done.peak_kb);
    assert_none_left(Duration::from_secs(2));
}

/// A versioned_kv project whose solution is the starter with a
/// constructor that sleeps `<marker>` seconds; returns the
/// project, the solution's lib.rs and the starter's text.
fn blocking_starter(marker: &str) -> (tempfile::TempDir, PathBuf, String) {
    let project = common::versioned_kv_project("harness-e2e");
    let dir = project.path();
    let sol = dir.join("solutions/versioned_kv");
    copy_dir(&dir.join("problems/versioned_kv/starter"), &sol);
    let manifest = sol.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        harness::judge::compile::point_at_contract(&text, &sol, &common::root().join("contract")),
    )
    .unwrap();
    let lib = sol.join("src/lib.rs");
    let starter = std::fs::read_to_string(&lib).unwrap();
    let needle = "fn new() -> Self {";
    assert!(starter.contains(needle), "the starter has a constructor");
    // It sleeps in its own process: candidate code may start none.
    let blocking = format!("{needle}\n        std::thread::sleep(std::time::Duration::from_secs({marker}));");
    std::fs::write(&lib, starter.replacen(needle, &blocking, 1)).unwrap();
    (project, lib, starter)
}

/// Waits until a case of the TUI's run has reached the blocking `new()`.
fn wait_for_marker(tui: &common::Pty) {
    let pid = tui.child.process_id().unwrap_or(0);
    wait_for_running_case(pid, Duration::from_millis(100), Duration::from_secs(120), || {
        format!("no case reached new(): {}", tui.contents())
    });
}

/// The workers still running in the scratch folders of harness `pid`.
/// A new session on the same solution, with `starter` put back in `lib`:
/// it resumes the one the harness left (its state says so) and quits
/// cleanly, leaving nothing running.
fn resumes(dir: &std::path::Path, lib: &std::path::Path, starter: &str) {
    std::fs::write(lib, starter).unwrap();
    let mut second = common::Pty::start(dir, "versioned_kv", 24, 80);
    second.wait_for("Gate 1: Store and read", Duration::from_secs(60));
    second.wait_for("not_implemented", Duration::from_secs(60));
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("reports/sessions/versioned_kv.json")).unwrap())
            .unwrap();
    let kinds: Vec<&str> = state["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"resumed"), "{kinds:?}");
    second.writer.write_all(b"qy").unwrap();
    second.writer.flush().unwrap();
    second.wait_exit(Duration::from_secs(20));
    assert_none_left(Duration::from_secs(2));
}

fn workers_of(pid: u32) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| c.windows(8).any(|w| w == b"__worker" || w == b"_measure"))
        })
        .filter_map(|e| std::fs::read_link(e.path().join("cwd")).ok())
        .filter(|cwd| cwd.to_string_lossy().contains(&format!("harness-scratch-{pid}-")))
        .map(|cwd| cwd.display().to_string())
        .collect()
}

#[test]
fn a_tui_that_panics_during_a_run_restores_the_terminal_and_leaves_nothing_running() {
    let _serial = serial();
    let (project, _, _) = blocking_starter("7424201");
    let dir = project.path();
    let trigger = dir.join("panic-now");
    let mut tui = common::Pty::spawn_env(
        dir,
        &["start", "versioned_kv"],
        &[("HARNESS_DEBUG_PANIC_FILE", trigger.to_str().unwrap())],
        24,
        80,
    );
    wait_for_marker(&tui);
    let pid = tui.child.process_id().unwrap_or(0);
    std::fs::write(&trigger, b"").unwrap();
    let status = tui.wait_exit(Duration::from_secs(20));
    assert!(!status.success(), "a panic is a failure exit");
    // The panic hook restored the terminal, then printed the message.
    let screen = tui.wait_for("HARNESS_DEBUG_PANIC_FILE", Duration::from_secs(5));
    {
        let parser = tui.parser.lock().unwrap();
        assert!(!parser.screen().alternate_screen(), "still on the alternate screen:\n{screen}");
        assert!(!parser.screen().hide_cursor(), "the cursor is still hidden:\n{screen}");
    }
    assert_none_left(Duration::from_secs(2));
    let workers = workers_of(pid);
    assert!(workers.is_empty(), "workers left: {workers:?}");
}

#[test]
fn a_tui_that_loses_its_terminal_during_a_run_leaves_nothing_running_and_resumes() {
    let _serial = serial();
    let (project, lib, starter) = blocking_starter("7424202");
    let dir = project.path();
    let mut first = common::Pty::start(dir, "versioned_kv", 24, 80);
    wait_for_marker(&first);
    let pid = first.child.process_id().unwrap_or(0);
    // What a closed terminal sends its session's processes.
    Command::new("kill").args(["-HUP", &pid.to_string()]).status().unwrap();
    first.wait_exit(Duration::from_secs(20));
    assert_none_left(Duration::from_secs(2));
    let workers = workers_of(pid);
    assert!(workers.is_empty(), "workers left: {workers:?}");

    resumes(dir, &lib, &starter);
}

#[test]
fn a_scale_check_still_names_how_the_measured_code_died_inside_its_namespace() {
    let _serial = serial();
    // The measured code runs as pid 2 of its namespace, never pid 1 (which
    // would ignore its own SIGABRT and SIGXCPU): each end keeps its name.
    for (what, verdict) in [
        ("std::process::abort();", "abort"),
        (
            "fn f(n: u64) -> u64 { if n == 0 { 0 } else { 1 + f(std::hint::black_box(n - 1)) } } f(u64::MAX);",
            "stack_overflow",
        ),
        ("loop { std::hint::black_box(0); }", "too_slow"),
    ] {
        let project = measured_solution(&format!("            {what}"));
        let done =
            run(project.path(), &["check", "versioned_kv", "--gate", "2", "--json"], Duration::from_secs(240), |_| {});
        assert_eq!(done.code, Some(1), "{what}: {}{}", done.stdout, done.stderr);
        let report: Value = serde_json::from_str(&done.stdout).unwrap();
        let check = &report["gates"][1]["scale"][0];
        assert_eq!(check["verdict"], verdict, "{what}: {check}");
    }
}

/// The failure of case `name` in a `check --json` report.
fn failure<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["gates"][0]["failures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["case"] == name)
        .unwrap_or_else(|| panic!("case `{name}` did not fail: {report}"))
}

/// A loopback port nothing listens on right now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Judges the fixture's `confine` problem (every act, one case each) with
/// `env`; `during` runs on a thread of its own while the harness does, until
/// the flag says it has ended. Returns the report and what `during` found.
fn judge_confine<T: Send>(
    env: &[(&str, String)],
    during: impl FnOnce(&std::sync::atomic::AtomicBool) -> T + Send,
) -> (Value, T) {
    let project = project("");
    let dir = project.path();
    let ended = std::sync::atomic::AtomicBool::new(false);
    let (done, found) = std::thread::scope(|scope| {
        let watcher = scope.spawn(|| during(&ended));
        let done = run_env(dir, &["check", "confine", "--json"], env, Duration::from_secs(180), |_| {});
        ended.store(true, std::sync::atomic::Ordering::Release);
        (done, watcher.join().unwrap())
    });
    assert_eq!(done.code, Some(1), "{}{}", done.stdout, done.stderr);
    let report: Value = serde_json::from_str(&done.stdout).unwrap();
    // The acts that need no outside all pass: threads and a small file
    // in the scratch folder are fine.
    let failed: Vec<&str> =
        report["gates"][0]["failures"].as_array().unwrap().iter().map(|f| f["case"].as_str().unwrap()).collect();
    for fine in ["writes a little and reads it back", "computes on a thread"] {
        assert!(!failed.contains(&fine), "`{fine}` failed: {report}");
    }
    for p in ["network", "processes", "disk"] {
        assert_eq!(report["sandbox"][p]["active"], true, "{p}: {}", report["sandbox"][p]);
    }
    assert_none_left(Duration::from_secs(2));
    (report, found)
}

/// Asserts that case `name` is `refused` for `act` and that its own panic
/// message (the proof it tried) contains `tried`.
fn assert_refused(report: &Value, name: &str, act: &str, tried: &str) {
    let f = failure(report, name);
    assert_eq!(f["verdict"], "refused", "{f}");
    let message = f["message"].as_str().unwrap();
    assert!(message.contains(act), "names what was refused ({act}): {message}");
    assert!(message.contains(tried), "the case's own panic shows the attempt ({tried}): {message}");
}

#[test]
fn a_tcp_connection_to_a_listener_on_loopback_never_arrives() {
    let _serial = serial();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (report, arrived) = judge_confine(&[("CONFINE_TCP", port.to_string())], |ended| {
        let mut arrived = 0;
        while !ended.load(std::sync::atomic::Ordering::Acquire) {
            arrived += usize::from(listener.accept().is_ok());
            std::thread::sleep(Duration::from_millis(5));
        }
        arrived + usize::from(listener.accept().is_ok())
    });
    assert_eq!(arrived, 0, "connections reached the test's listener");
    assert_refused(
        &report,
        "connects over TCP to a listener on 127.0.0.1",
        "open a socket",
        &format!("tcp_connect to 127.0.0.1:{port}: Operation not permitted"),
    );
}

#[test]
fn a_listener_candidate_code_opens_on_0_0_0_0_is_not_reachable() {
    let _serial = serial();
    let port = free_port();
    let (report, reached) = judge_confine(&[("CONFINE_LISTEN", port.to_string())], |ended| {
        // Knock all the while the harness runs (the case would listen 1.5 s).
        let mut reached = 0;
        while !ended.load(std::sync::atomic::Ordering::Acquire) {
            let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
            reached += usize::from(std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(50)).is_ok());
            std::thread::sleep(Duration::from_millis(10));
        }
        reached
    });
    assert_eq!(reached, 0, "the candidate's listener on 0.0.0.0:{port} was reached from outside");
    assert_refused(
        &report,
        "listens on 0.0.0.0",
        "open a socket",
        &format!("tcp_listen on 0.0.0.0:{port}: Operation not permitted"),
    );
}

#[test]
fn a_udp_datagram_to_loopback_never_arrives() {
    let _serial = serial();
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    let port = socket.local_addr().unwrap().port();
    let (report, received) = judge_confine(&[("CONFINE_UDP", port.to_string())], |ended| {
        let mut received = 0;
        let mut buf = [0u8; 64];
        loop {
            let last = ended.load(std::sync::atomic::Ordering::Acquire);
            received += usize::from(socket.recv_from(&mut buf).is_ok());
            if last {
                return received;
            }
        }
    });
    assert_eq!(received, 0, "datagrams reached the test's socket");
    assert_refused(
        &report,
        "sends a UDP datagram to 127.0.0.1",
        "open a socket",
        &format!("udp datagram to 127.0.0.1:{port}: Operation not permitted"),
    );
}

#[test]
fn a_unix_socket_outside_the_sandbox_is_not_reached() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("outside.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let (report, arrived) = judge_confine(&[("CONFINE_UNIX", path.display().to_string())], |ended| {
        let mut arrived = 0;
        while !ended.load(std::sync::atomic::Ordering::Acquire) {
            arrived += usize::from(listener.accept().is_ok());
            std::thread::sleep(Duration::from_millis(5));
        }
        arrived + usize::from(listener.accept().is_ok())
    });
    assert_eq!(arrived, 0, "connections reached the test's unix socket");
    assert_refused(
        &report,
        "connects to a unix socket outside",
        "open a socket",
        &format!("unix socket {}: Operation not permitted", path.display()),
    );
}

#[test]
fn a_fork_flood_starts_no_process_and_is_refused_quickly() {
    let _serial = serial();
    // Processes of the flood (`sleep 742431`) alive at once, sampled.
    let (report, peak) = judge_confine(&[], |ended| {
        let mut peak = 0;
        while !ended.load(std::sync::atomic::Ordering::Acquire) {
            peak = peak.max(marked().iter().filter(|m| m.contains("742431")).count());
            std::thread::sleep(Duration::from_millis(2));
        }
        peak
    });
    assert_eq!(peak, 0, "processes of the flood were alive at once");
    let f = failure(&report, "starts 3000 processes");
    assert_refused(
        &report,
        "starts 3000 processes",
        "start a process",
        "fork_flood started 0 of 3000 processes; spawn: Operation not permitted",
    );
    assert!(f["message"].as_str().unwrap().contains("(3000 times)"), "every try counted: {f}");
}

#[test]
fn filling_the_disk_stops_at_the_scratch_bound_and_leaves_nothing() {
    let _serial = serial();
    let free = || {
        let s = rustix::fs::statvfs(std::env::temp_dir()).unwrap();
        s.f_bavail * s.f_frsize
    };
    let before = free();
    let (report, lowest) = judge_confine(&[], |ended| {
        let mut lowest = u64::MAX;
        while !ended.load(std::sync::atomic::Ordering::Acquire) {
            lowest = lowest.min(free());
            std::thread::sleep(Duration::from_millis(2));
        }
        lowest
    });
    let after = free();
    // The case tries 1 GiB; the bound is 16 MiB, and it lives in memory
    // (tmpfs), not on the disk. Other work on the machine moves the
    // figure a little, so allow some slack.
    let slack = 256 << 20;
    assert!(before.saturating_sub(lowest) < slack, "free space fell by {} MiB during the run", (before - lowest) >> 20);
    assert!(before.saturating_sub(after) < slack, "free space fell by {} MiB after the run", (before - after) >> 20);
    assert_refused(
        &report,
        "writes 1 GiB into its folder",
        "write more than the scratch folder's 16 MiB",
        "disk: wrote ",
    );
    let message = failure(&report, "writes 1 GiB into its folder")["message"].as_str().unwrap().to_string();
    let wrote: u64 = message.split("disk: wrote ").nth(1).and_then(|r| r.split(' ').next()?.parse().ok()).unwrap();
    assert!((8..=16).contains(&wrote), "wrote {wrote} MiB before the bound: {message}");
    assert!(message.contains("No space left on device"), "{message}");
    // The tmpfs was the worker's own: the host has no such mount.
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains("harness-scratch"), "a scratch tmpfs is left mounted on the host");
}

#[test]
fn a_build_script_reaches_no_listener_once_its_dependencies_are_cached() {
    let _serial = serial();
    let project = project("");
    let dir = project.path();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    // The escape crate depends on the contract by path only: nothing to
    // download, so its build has no network.
    with_build_script(
        dir,
        "escape_build_connects",
        "fn main() {\n    let port: u16 = std::env::var(\"CONFINE_TCP\").unwrap().parse().unwrap();\n    \
         match std::net::TcpStream::connect((\"127.0.0.1\", port)) {\n        \
         Ok(_) => panic!(\"build.rs connect: GOT THROUGH\"),\n        \
         Err(e) => panic!(\"build.rs connect to 127.0.0.1:{port}: {e}\"),\n    }\n}\n",
    );
    let done = run_env(
        dir,
        &["check", "escape", "--gate", "1", "--json"],
        &[("CONFINE_TCP", port.to_string())],
        Duration::from_secs(180),
        |_| {},
    );
    assert_eq!(done.code, Some(1), "{}{}", done.stdout, done.stderr);
    assert!(listener.accept().is_err(), "a connection reached the test's listener");
    let report: Value = serde_json::from_str(&done.stdout).unwrap();
    let failure = report["build"]["failure"].as_str().unwrap_or_default().to_string();
    assert!(
        failure.contains(&format!("build.rs connect to 127.0.0.1:{port}: Operation not permitted")),
        "the build script tried and was refused: {failure}"
    );
    assert_eq!(report["sandbox"]["build_network"]["active"], true, "{}", report["sandbox"]["build_network"]);
    assert_none_left(Duration::from_secs(2));
}

#[test]
fn a_worker_whose_harness_is_gone_ends_at_once_and_one_started_by_its_harness_runs() {
    // A worker arms its own parent-death signal after exec; if the process
    // that started it is no longer its parent by then, it must not run.
    let run = |parent: &str| {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(["__measure", "/nonexistent/lib.so", "0", "1000000", "1000000", "1"])
            .env("HARNESS_WORKER_PARENT", parent)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdin.take());
        child.wait().unwrap().code()
    };
    // pid 1 is never this test's process: the worker's parent is gone.
    let orphaned = Some(harness::judge::confine::ORPHANED);
    assert_eq!(run("1"), orphaned, "a worker whose harness is gone stops before anything else");
    let ours = std::process::id().to_string();
    assert_ne!(run(&ours), orphaned, "started by its harness, it goes on (and fails later, on the missing library)");
}
