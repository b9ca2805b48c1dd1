//! The real binary against a solution that attacks the harness's result
//! channel (`tests/fixtures/project/solutions/tamper`), and against bad
//! input a user can hand it: solution manifests, problem ids, generator
//! sizes, settings. Each asserts the verdict or the exit code and message.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{root, text};
use serde_json::Value;

/// Runs the harness in `dir`, sampling its peak resident memory (VmHWM)
/// until it exits; kills it after `deadline`. Returns the output and the
/// peak in KiB.
fn harness_measured(dir: &std::path::Path, args: &[&str], deadline: Duration) -> (std::process::Output, u64) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run harness");
    let status_file = format!("/proc/{}/status", child.id());
    // Drain the pipes on threads so a large output cannot stall the child.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut b).unwrap();
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut b).unwrap();
        b
    });
    let started = Instant::now();
    let mut peak = 0;
    let status = loop {
        if let Ok(s) = std::fs::read_to_string(&status_file)
            && let Some(line) = s.lines().find(|l| l.starts_with("VmHWM:"))
        {
            peak = peak.max(line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0));
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            panic!("harness {args:?} still running after {deadline:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let output = std::process::Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() };
    (output, peak)
}

#[test]
fn attacks_on_the_result_channel_are_named_and_never_grow_the_harness() {
    let project = root().join("tests/fixtures/project");
    let (out, peak_kib) = harness_measured(&project, &["check", "tamper", "--json"], Duration::from_secs(120));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let gate = &report["gates"][0];
    let failure = |case: &str| gate["failures"].as_array().unwrap().iter().find(|f| f["case"] == case).cloned();
    let verdict = |case: &str| failure(case).map_or("pass".to_string(), |f| f["verdict"].as_str().unwrap().to_string());
    let message = |case: &str| failure(case).map_or(String::new(), |f| f["message"].as_str().unwrap().to_string());
    let expected = [
        ("returns", "pass"),
        ("writes junk to every fd", "tampered"),
        ("forges a frame nested a million deep", "tampered"),
        ("floods the channel with 1 GiB", "tampered"),
        ("closes the channel", "tampered"),
        ("dup2s over the channel", "tampered"),
        ("panics under a panic = abort profile", "panic"),
        ("panics again while unwinding", "panic"),
        ("panics saying not implemented", "panic"),
        ("marks itself not written yet", "not_implemented"),
    ];
    for (case, want) in expected {
        assert_eq!(verdict(case), want, "case `{case}`: {}", message(case));
    }
    assert_eq!(gate["cases_total"], expected.len());
    for case in
        ["writes junk to every fd", "floods the channel with 1 GiB", "closes the channel", "dup2s over the channel"]
    {
        let m = message(case);
        assert!(m.contains("the solution wrote into the harness's result channel"), "{case}: {m}");
        assert!(!m.contains("exited with code"), "{case}: {m}");
    }
    assert!(message("forges a frame nested a million deep").contains("nested more than 64 deep"));
    assert!(message("closes the channel").contains("closed or replaced"));
    assert!(message("panics under a panic = abort profile").contains("deliberate panic under panic = abort"));
    let double = message("panics again while unwinding");
    assert!(double.contains("first panic, the one that matters") && double.contains("src/lib.rs:"), "{double}");
    assert!(message("panics saying not implemented").contains("not implemented: this message is not the marker"));
    // 1 GiB went down the channel; the harness read it without keeping it.
    eprintln!("harness peak memory: {} MiB", peak_kib / 1024);
    assert!(peak_kib < 200 * 1024, "the harness peaked at {} MiB", peak_kib / 1024);
}

/// A copy of versioned_kv's reference as a crate of its own in `dir`.
fn solution_copy(dir: &std::path::Path) -> std::path::PathBuf {
    let crate_dir = dir.join("sol");
    common::copy_dir(&root().join("problems/versioned_kv/reference"), &crate_dir);
    let manifest = crate_dir.join("Cargo.toml");
    let m = std::fs::read_to_string(&manifest).unwrap();
    let m = harness::judge::compile::point_at_contract(&m, &crate_dir, &root().join("contract"));
    std::fs::write(&manifest, m).unwrap();
    crate_dir
}

#[test]
fn a_broken_solution_manifest_is_a_build_failure_not_a_harness_error() {
    let dir = tempfile::tempdir().unwrap();
    let crate_dir = solution_copy(dir.path());
    let manifest = crate_dir.join("Cargo.toml");
    let good = std::fs::read_to_string(&manifest).unwrap();
    let cases = [
        ("syntax error", good.replacen("[package]", "[package", 1), "Cargo.toml:1:"),
        ("no package name", good.replacen("name = \"versioned_kv_reference\"", "", 1), "no [package] name"),
    ];
    for (what, bad, says) in cases {
        std::fs::write(&manifest, &bad).unwrap();
        let out = common::harness(
            &root(),
            &["check", "versioned_kv", "--gate", "1", "--solution", crate_dir.to_str().unwrap(), "--json"],
        );
        assert_eq!(out.status.code(), Some(1), "{what}: {}", text(&out));
        let r: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{what}: {e}: {}", text(&out)));
        assert_eq!(r["build"]["ok"], false, "{what}");
        let why = r["build"]["failure"].as_str().unwrap_or_default();
        assert!(why.contains(says), "{what}: {why}");
    }
}

#[test]
fn a_problem_id_that_is_a_path_is_refused_and_nothing_moves() {
    let project = common::versioned_kv_project("harness-scratch");
    let p = project.path();
    std::fs::create_dir_all(p.join("solutions")).unwrap();
    let before = std::fs::read_dir(p.join("problems")).unwrap().count();
    for id in ["../problems/versioned_kv", "versioned_kv/", "Versioned_KV", ""] {
        for args in [vec!["start", id, "--fresh"], vec!["check", id], vec!["replay", id, "--ops", "-"]] {
            let out = common::harness(p, &args);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
            if !id.is_empty() {
                assert!(text(&out).contains("is not a problem id"), "{args:?}: {}", text(&out));
            }
        }
    }
    assert!(p.join("problems/versioned_kv/problem.toml").is_file(), "the problem stayed where it was");
    assert_eq!(std::fs::read_dir(p.join("problems")).unwrap().count(), before, "nothing was moved aside");
}

#[test]
fn absurd_generator_sizes_and_limits_are_positioned_errors_naming_the_setting() {
    let project = common::versioned_kv_project("harness-scratch");
    let p = project.path();
    let file = p.join("problems/versioned_kv/problem.toml");
    let good = std::fs::read_to_string(&file).unwrap();
    let at = |text: &str, needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;

    let first = good.lines().find(|l| l.starts_with("length = [")).unwrap();
    let bad = good.replacen(first, "length = [10, 4000000000]", 1);
    std::fs::write(&file, &bad).unwrap();
    let out = common::harness(p, &["check", "versioned_kv"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let line = at(&bad, "4000000000");
    assert!(text(&out).contains(&format!("problem.toml:{line}:")), "{}", text(&out));
    assert!(text(&out).contains("at most 10000 operations"), "{}", text(&out));

    std::fs::write(&file, &good).unwrap();

    let config = p.join("harness.toml");
    let base = std::fs::read_to_string(&config).unwrap();
    for (limits, says) in [
        ("memory_mb = 1", "limits.memory_mb = 1 is too small"),
        ("stack_mb = 0", "limits.stack_mb = 0"),
        ("case_timeout_ms = 0", "limits.case_timeout_ms = 0"),
    ] {
        std::fs::write(&config, format!("{base}\n[limits]\n{limits}\n")).unwrap();
        let out = common::harness(p, &["check", "versioned_kv"]);
        assert_eq!(out.status.code(), Some(2), "{limits}: {}", text(&out));
        assert!(text(&out).contains(says), "{limits}: {}", text(&out));
        assert!(text(&out).contains("harness.toml:"), "positioned: {}", text(&out));
        assert!(!text(&out).contains("cannot be judged"), "{limits}: {}", text(&out));
    }
}
