//! The practice session's fast build path: after cargo's first build, an
//! edit of the sources is built by running rustc as cargo did, and the
//! result is the same as cargo's; cargo takes over again when the manifest
//! changes or rustc fails without a compile error.

use crate::common;

use common::root;
use harness::base::config::Config;
use harness::judge::compile::{Build, build_fast};
use harness::judge::evaluate::Judge;

fn judged_ok(config: &Config, build: Build) -> bool {
    let problem = common::versioned_kv();
    let judge = Judge::new(config, problem, &[1], None).unwrap();
    let never = std::sync::atomic::AtomicBool::new(false);
    judge.measure_cost.store(false, std::sync::atomic::Ordering::Relaxed);
    judge.evaluate_build(build, &[1], &never, &|_, _| {}, None).unwrap().all_passed()
}

#[test]
fn edits_build_through_rustc_with_cargos_result_and_cargo_takes_over_when_it_must() {
    harness::judge::sandbox::use_worker_exe(std::path::Path::new(env!("CARGO_BIN_EXE_harness")));
    let project = common::versioned_kv_project("harness-test-direct");
    let config = Config::discover(project.path()).unwrap();
    let sol = project.path().join("solution");
    common::copy_dir(&root().join("problems/versioned_kv/reference"), &sol);
    let manifest = sol.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, harness::judge::compile::point_at_contract(&text, &sol, &root().join("contract")))
        .unwrap();
    let lib = sol.join("src/lib.rs");
    let original = std::fs::read_to_string(&lib).unwrap();
    let edit = |body: &str| {
        let needle = "    fn version(&self) -> u64 {\n        self.version\n";
        assert!(original.contains(needle));
        std::fs::write(&lib, original.replace(needle, &format!("    fn version(&self) -> u64 {{\n{body}\n"))).unwrap();
    };

    // The first build is cargo's.
    let first = build_fast(&config, &sol, None).unwrap();
    assert!(first.ok() && !first.direct, "{:?}", first.failure);
    assert!(judged_ok(&config, first));

    // An edit: rustc directly, a library that is judged as cargo's was.
    edit("        let unused = 1;\n        self.version");
    let second = build_fast(&config, &sol, None).unwrap();
    assert!(second.ok() && second.direct, "{:?} {:?}", second.failure, second.diagnostics);
    assert!(second.diagnostics.iter().any(|d| d.level == "warning" && d.message.contains("unused")));
    assert!(judged_ok(&config, second));

    // A wrong edit is judged wrong: the library really is the new one.
    edit("        self.version + 1");
    let wrong = build_fast(&config, &sol, None).unwrap();
    assert!(wrong.ok() && wrong.direct);
    assert!(!judged_ok(&config, wrong));

    // A compile error: positioned diagnostics, as cargo gives them.
    edit("        self.versoin");
    let broken = build_fast(&config, &sol, None).unwrap();
    assert!(!broken.ok() && broken.direct);
    let error = broken.diagnostics.iter().find(|d| d.level == "error").expect("an error");
    assert_eq!(error.file.as_deref(), Some("src/lib.rs"));
    assert!(error.line.is_some() && error.rendered.contains("versoin"), "{error:?}");

    // The manifest changed: cargo again, then rustc again.
    edit("        self.version");
    std::fs::write(&manifest, format!("{}\n# a comment\n", std::fs::read_to_string(&manifest).unwrap())).unwrap();
    let after_manifest = build_fast(&config, &sol, None).unwrap();
    assert!(after_manifest.ok() && !after_manifest.direct);
    edit("        let _b = 2;\n        self.version");
    let again = build_fast(&config, &sol, None).unwrap();
    assert!(again.ok() && again.direct);
    assert!(judged_ok(&config, again));

    // A dependency's build is gone (`cargo clean` of it): cargo rebuilds.
    for rlib in files(&config.target_dir).iter().filter(|p| p.to_string_lossy().contains("libharness_contract-")) {
        std::fs::remove_file(rlib).unwrap();
    }
    edit("        let _c = 3;\n        self.version");
    let rebuilt = build_fast(&config, &sol, None).unwrap();
    assert!(rebuilt.ok() && !rebuilt.direct, "{:?}", rebuilt.failure);
    assert!(judged_ok(&config, rebuilt));
}

fn files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() { out.extend(files(&path)) } else { out.push(path) }
    }
    out
}
