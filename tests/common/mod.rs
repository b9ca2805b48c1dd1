//! Helpers shared by the integration tests (and the bench): the repository,
//! scratch projects, running the binary, and judged-run fixtures.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use harness::judge::evaluate::{BuildInfo, Evaluation, GateResult};
use harness::judge::suite::{Case, CaseKind, CaseResult};
use harness::judge::verdict::Verdict;
use harness::problem::model::Problem;
use harness::problem::script::{Call, Step};
use harness_contract::Value;

/// 2026-11-30T00:53:20Z.
pub const T0: u64 = 1_796_000_000_000;
pub const MIN: u64 = 60_000;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Copies a folder, without `target/` and `Cargo.lock`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != "target" {
                copy_dir(&entry.path(), &target);
            }
        } else if entry.file_name() != "Cargo.lock" {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Runs the harness binary in `dir`.
pub fn harness(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness")).current_dir(dir).args(args).output().expect("run harness")
}

/// stdout and stderr together.
pub fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A scratch project with its own harness.toml whose contract and build
/// output point back into this repository; its problems are this
/// repository's when `shared_problems`, else its own (empty) folder.
pub fn scratch(shared_problems: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let problems = if shared_problems { format!("problems = {:?}\n", root().join("problems")) } else { String::new() };
    let toml = format!(
        "[paths]\n{problems}contract = {:?}\ntarget = {:?}\n[limits]\ncase_timeout_ms = 1500\n[practice]\nfirst_ninety = false\n",
        root().join("contract"),
        root().join("target/harness-scratch")
    );
    std::fs::write(dir.path().join("harness.toml"), toml).unwrap();
    dir
}

/// A project holding only versioned_kv's problem.toml, reference and
/// starter (what `start` needs), building into `target/<target>`.
pub fn versioned_kv_project(target: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let src = root().join("problems/versioned_kv");
    let dst = p.join("problems/versioned_kv");
    std::fs::create_dir_all(&dst).unwrap();
    std::fs::copy(src.join("problem.toml"), dst.join("problem.toml")).unwrap();
    for krate in ["reference", "starter"] {
        copy_dir(&src.join(krate), &dst.join(krate));
        let manifest = dst.join(krate).join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        let text = harness::judge::compile::point_at_contract(&text, &dst.join(krate), &root().join("contract"));
        std::fs::write(&manifest, text).unwrap();
    }
    std::fs::write(
        p.join("harness.toml"),
        format!(
            "[paths]\ncontract = {:?}\ntarget = {:?}\n[practice]\nfirst_ninety = false\n",
            root().join("contract"),
            root().join("target").join(target)
        ),
    )
    .unwrap();
    dir
}

/// Builds a problem's crate (reference, alternate, mutant) and says how to
/// run it; the private copy of the library lives as long as the first value.
pub fn build_lib(
    config: &harness::base::config::Config,
    problem: &Problem,
    dir: &Path,
) -> (harness::judge::compile::LoadedLib, harness::judge::sandbox::Target) {
    let build = harness::judge::compile::build(config, dir).unwrap();
    let lib = build.lib.unwrap_or_else(|| panic!("{} does not build: {:?}", dir.display(), build.failure));
    let target = harness::judge::evaluate::target(config, problem, &lib);
    (lib, target)
}

pub fn versioned_kv() -> Problem {
    Problem::load(&root().join("problems"), &root().join("contract"), "versioned_kv").unwrap()
}

fn step(op: &str, args: Vec<Value>, expect: Value) -> Step {
    Step { call: Call { op: op.into(), args }, expect }
}

/// versioned_kv's "delete keeps history" case failing at `gate` with a
/// wrong answer, after printing `output`.
pub fn failing_case(gate: usize, output: &str) -> (Case, CaseResult) {
    let s = |x: &str| Value::Str(x.into());
    let steps = vec![
        step("new", vec![], Value::Unit),
        step("put", vec![s("a"), Value::Int(10)], Value::Int(1)),
        step("delete", vec![s("a")], Value::Int(2)),
        step("get_at", vec![s("a"), Value::Int(1)], Value::Int(10)),
    ];
    let case = Case {
        gate,
        name: "delete keeps history: earlier versions still see the old value".into(),
        kind: CaseKind::Fixed,
        steps: steps.clone(),
    };
    let result = CaseResult {
        verdict: Verdict::WrongAnswer,
        message: "`get_at(\"a\", 1)` expected 10, got None".into(),
        failed_at: Some(3),
        steps,
        actual: vec![Value::Unit, Value::Int(1), Value::Int(2), Value::Nil],
        output: output.into(),
        output_dropped: 0,
        shrunk_from: None,
        elapsed: Duration::from_millis(2),
    };
    (case, result)
}

/// A judged run of versioned_kv: (gate, passed, total) per gate, with the
/// given failures filed under their gates.
pub fn evaluation(gates: &[(usize, usize, usize)], failures: Vec<(Case, CaseResult)>) -> Evaluation {
    let p = versioned_kv();
    Evaluation {
        build: BuildInfo { ok: true, duration: Duration::from_millis(210), diagnostics: vec![], failure: None },
        gates: gates
            .iter()
            .map(|&(gate, passed, total)| GateResult {
                gate,
                title: p.gates[gate - 1].title.clone(),
                total,
                passed,
                failures: failures.iter().filter(|(c, _)| c.gate == gate).cloned().collect(),
                scale: Vec::new(),
                scale_skipped: Vec::new(),
                scale_pending: Vec::new(),
            })
            .collect(),
        run_time: Duration::from_millis(180),
    }
}

/// `harness start <problem>` in a real pseudo-terminal, its screen kept
/// by a vt100 parser fed from a reader thread.
pub struct Pty {
    pub parser: std::sync::Arc<std::sync::Mutex<vt100::Parser>>,
    pub child: Box<dyn portable_pty::Child + Send + Sync>,
    pub writer: Box<dyn std::io::Write + Send>,
}

impl Pty {
    pub fn start(dir: &Path, problem: &str, rows: u16, cols: u16) -> Pty {
        Pty::spawn(dir, &["start", problem], rows, cols)
    }

    /// `harness <args>` in a real pseudo-terminal.
    pub fn spawn(dir: &Path, args: &[&str], rows: u16, cols: u16) -> Pty {
        Pty::spawn_env(dir, args, &[], rows, cols)
    }

    /// `harness <args>` in a real pseudo-terminal, with extra environment.
    pub fn spawn_env(dir: &Path, args: &[&str], env: &[(&str, &str)], rows: u16, cols: u16) -> Pty {
        use portable_pty::{CommandBuilder, PtySize, native_pty_system};
        use std::io::Read;
        let pair = native_pty_system().openpty(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 }).unwrap();
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_harness"));
        cmd.args(args);
        cmd.cwd(dir);
        cmd.env("TERM", "xterm-256color");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).unwrap();
        // Without dropping the slave the reader never sees EOF.
        drop(pair.slave);
        let size = |n: u16| std::num::NonZeroU16::new(n).unwrap();
        let parser = std::sync::Arc::new(std::sync::Mutex::new(vt100::Parser::new(size(rows), size(cols), 0)));
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let p = parser.clone();
        std::thread::spawn(move || {
            let _master = pair.master;
            let mut buf = [0u8; 16384];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                p.lock().unwrap().process(&buf[..n]);
            }
        });
        Pty { parser, child, writer }
    }

    pub fn contents(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Polls the screen until it shows `what`; returns the screen.
    pub fn wait_for(&self, what: &str, timeout: Duration) -> String {
        let start = std::time::Instant::now();
        loop {
            let text = self.contents();
            if text.contains(what) {
                return text;
            }
            if start.elapsed() > timeout {
                panic!("timed out waiting for {what:?}; the screen shows:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Waits for the process to end.
    pub fn wait_exit(&mut self, timeout: Duration) -> portable_pty::ExitStatus {
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(start.elapsed() < timeout, "harness did not exit within {timeout:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// Two threads burning CPU until dropped: the stress tests' load, so that
/// a check proven stable here is stable on a busy machine.
pub struct Burners {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Burners {
    pub fn start() -> Burners {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads = (0..2)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 1u64;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..100_000 {
                            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        }
                        std::hint::black_box(x);
                    }
                })
            })
            .collect();
        Burners { stop, threads }
    }
}

impl Drop for Burners {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
