//! Building a solution crate into a loadable library with cargo.
//!
//! Builds go to the harness's target directory, outside the watched
//! solution folders. A candidate's crate gets a directory of its own
//! (`target/harness/<package>-<hash of its path>`): two crates may share a
//! library name (a starter and the solution made from it do), and cdylib
//! outputs are not disambiguated by cargo's metadata hash, so one shared
//! directory would let one build overwrite another's library. The crates
//! of a problem have distinct names and share one directory.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value as Json;

use crate::base::config::Config;
use crate::judge::direct;

/// One compiler diagnostic.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Diagnostic {
    pub level: String,
    pub message: String,
    pub file: Option<String>,
    pub line: Option<u64>,
    pub column: Option<u64>,
    /// As rustc prints it, with ANSI colours.
    pub rendered: String,
}

/// What a build produced.
#[derive(Debug)]
pub struct Build {
    /// The library, copied to a path of its own, when the build succeeded.
    pub lib: Option<LoadedLib>,
    /// Errors and warnings, in the order rustc emitted them.
    pub diagnostics: Vec<Diagnostic>,
    /// Why the build failed when rustc said nothing (bad manifest, wrong
    /// crate type); shown instead of diagnostics.
    pub failure: Option<String>,
    pub duration: Duration,
    /// Built by running rustc directly (see `direct`), not through cargo.
    pub direct: bool,
}

impl Build {
    pub fn ok(&self) -> bool {
        self.lib.is_some()
    }
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.level == "error")
    }
}

/// A private copy of a built library. Workers load this copy, so the next
/// build can replace cargo's output while cases still run; the copy is
/// removed when dropped.
#[derive(Debug)]
pub struct LoadedLib {
    pub path: PathBuf,
}

impl Drop for LoadedLib {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The target directory for the crate at `crate_dir`.
///
/// The crates of one problem (reference, starter, mutants) have distinct
/// package names and share one directory, so the contract crate is
/// compiled once for all of them. Any other crate (a candidate's solution)
/// gets a directory of its own.
pub fn target_dir_for(config: &Config, crate_dir: &Path, package: &str) -> PathBuf {
    let canonical = std::fs::canonicalize(crate_dir).unwrap_or_else(|_| crate_dir.to_path_buf());
    // A problem's own crates sit below its problem.toml; mutants written out
    // from edits sit below a marker naming the problem's folder.
    let problem_root = canonical.ancestors().skip(1).take(3).find_map(|d| {
        if d.join("problem.toml").is_file() {
            Some(d.to_path_buf())
        } else {
            std::fs::read_to_string(d.join(GROUP_MARKER)).ok().map(|p| PathBuf::from(p.trim()))
        }
    });
    let (name, key) = match problem_root {
        Some(root) => (
            format!("problem-{}", root.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned())),
            root,
        ),
        None => (package.to_string(), canonical),
    };
    let hash = harness_contract::schema::fnv1a(key.to_string_lossy().as_bytes());
    config.target_dir.join(format!("{name}-{:08x}", hash as u32))
}

/// Whether a crate is a problem's own code (below the problems folder, or a
/// mutant or reference cut written out below the target folder), which
/// builds unconfined.
fn is_problem_code(config: &Config, crate_dir: &Path) -> bool {
    let canonical = |p: &Path| std::fs::canonicalize(p).ok();
    let Some(dir) = canonical(crate_dir) else { return false };
    [
        canonical(&config.problems_dir),
        canonical(&config.target_dir.join("mutants")),
        canonical(&config.target_dir.join("cuts")),
    ]
    .into_iter()
    .flatten()
    .any(|root| dir.starts_with(root))
}

/// In a folder of generated crates: the problem folder they belong to.
const GROUP_MARKER: &str = ".harness-problem";

/// Points a manifest's `harness-contract` path dependency at `contract`,
/// relative to `crate_dir`, and makes the crate a workspace of its own.
pub fn point_at_contract(manifest: &str, crate_dir: &Path, contract: &Path) -> String {
    let abs_dir = std::fs::canonicalize(crate_dir).unwrap_or_else(|_| crate_dir.to_path_buf());
    let contract = std::fs::canonicalize(contract).unwrap_or_else(|_| contract.to_path_buf());
    let rel = crate::base::fsio::relative(&abs_dir, &contract);
    let mut out = String::new();
    for line in manifest.lines() {
        if line.trim_start().starts_with("harness-contract")
            && let Some(start) = line.find("path = \"")
            && let Some(len) = line[start + 8..].find('"')
        {
            out.push_str(&line[..start + 8]);
            out.push_str(&rel.to_string_lossy());
            out.push_str(&line[start + 8 + len..]);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    if !out.contains("[workspace]") {
        out.push_str("\n# A workspace of its own, wherever it lives.\n[workspace]\n");
    }
    out
}

/// Writes `mutant` of `problem` out as a crate (the reference with the
/// mutant's edits) under the target directory and returns its folder; a
/// hand-written mutant is its own folder. Files are rewritten only when
/// their content changes, so repeated builds stay incremental.
pub fn mutant_crate(
    config: &Config,
    problem: &crate::problem::model::Problem,
    mutant: &crate::problem::model::Mutant,
) -> Result<PathBuf> {
    if mutant.edits.is_empty() {
        return Ok(mutant.dir.clone());
    }
    let reference = problem.reference_dir();
    let lib = reference.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib).with_context(|| format!("cannot read {}", lib.display()))?;
    let edited = mutant.apply(&source).map_err(|(_, why)| anyhow::anyhow!("{}: {why}", problem.file().display()))?;
    let header = format!(
        "// MUTANT `{}` of the `{}` reference, written by harness from its problem.toml:\n// {}\n\n",
        mutant.name, problem.id, mutant.mistake
    );
    derived_crate(config, problem, "mutants", &mutant.name, &(header + &edited))
}

/// Writes `source` out as a crate of its own, the reference's manifest
/// renamed, at `<target>/<group>/<problem>/<name>`, and returns its folder.
/// The crate is judged as a candidate's would be: without the oracle.
pub fn derived_crate(
    config: &Config,
    problem: &crate::problem::model::Problem,
    group: &str,
    name: &str,
    source: &str,
) -> Result<PathBuf> {
    let reference = problem.reference_dir();
    let source = source.replace(", oracle);", ");");
    let group_dir = config.target_dir.join(group).join(&problem.id);
    let dir = group_dir.join(name);
    let manifest_path = reference.join("Cargo.toml");
    let manifest =
        std::fs::read_to_string(&manifest_path).with_context(|| format!("cannot read {}", manifest_path.display()))?;
    let singular = group.strip_suffix('s').unwrap_or(group);
    let manifest = manifest.replacen(
        &format!("name = \"{}_reference\"", problem.id),
        &format!("name = \"{}_{singular}_{name}\"", problem.id),
        1,
    );
    std::fs::create_dir_all(dir.join("src")).with_context(|| format!("cannot create {}", dir.display()))?;
    let problem_dir = std::fs::canonicalize(&problem.dir).unwrap_or_else(|_| problem.dir.clone());
    write_if_changed(&group_dir.join(GROUP_MARKER), problem_dir.to_string_lossy().as_bytes())?;
    write_if_changed(&dir.join("Cargo.toml"), point_at_contract(&manifest, &dir, &config.contract_dir).as_bytes())?;
    write_if_changed(&dir.join("src/lib.rs"), source.as_bytes())?;
    Ok(dir)
}

fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<()> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    crate::base::fsio::write_atomic(path, bytes)
}

/// Reads `[package] name` and checks that the crate builds a cdylib.
fn read_manifest(manifest: &Path) -> Result<String> {
    let text = std::fs::read_to_string(manifest).with_context(|| format!("cannot read {}", manifest.display()))?;
    let doc: toml::Table = toml::from_str(&text).map_err(|e| {
        crate::base::diag::Located::at(manifest, &text, e.span().map_or(0, |s| s.start), e.message().trim().to_string())
    })?;
    let name = doc
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .with_context(|| format!("{}: no [package] name", manifest.display()))?;
    Ok(name.to_string())
}

static COPIES: AtomicU64 = AtomicU64::new(0);

/// Builds the crate at `crate_dir`. An `Err` means the harness could not
/// run cargo at all; a compile error is an `Ok` with no library.
pub fn build(config: &Config, crate_dir: &Path) -> Result<Build> {
    build_cancellable(config, crate_dir, None)
}

/// Like [`build`]. Cargo runs in a process group of its own, killed with
/// its build scripts when `config.build_deadline` passes (a build failure
/// that says so) or when `cancel` is set (a failure saying it was
/// cancelled, which the caller discards).
pub fn build_cancellable(config: &Config, crate_dir: &Path, cancel: Option<Arc<AtomicBool>>) -> Result<Build> {
    build_with(config, crate_dir, cancel, false)
}

/// Like [`build_cancellable`], for a session that builds the same crate
/// again and again: after the first build, an edit of the sources is built
/// by running rustc directly as cargo did (see `direct`), with cargo as the
/// fallback.
pub fn build_fast(config: &Config, crate_dir: &Path, cancel: Option<Arc<AtomicBool>>) -> Result<Build> {
    build_with(config, crate_dir, cancel, true)
}

fn build_with(config: &Config, crate_dir: &Path, cancel: Option<Arc<AtomicBool>>, fast: bool) -> Result<Build> {
    let started = Instant::now();
    let manifest = crate_dir.join("Cargo.toml");
    if !manifest.is_file() {
        bail!("{} does not exist: a solution is a cargo crate", manifest.display());
    }
    // A manifest that does not parse is the crate author's mistake, shown
    // like a compile error; the reference's is caught by its caller.
    let package = match read_manifest(&manifest) {
        Ok(package) => package,
        Err(e) => {
            return Ok(Build {
                lib: None,
                diagnostics: Vec::new(),
                failure: Some(e.to_string()),
                duration: started.elapsed(),
                direct: false,
            });
        }
    };
    let target = target_dir_for(config, crate_dir, &package);
    // A solution's build scripts and proc macros are candidate code; the
    // problem's own crates (reference, mutants) are trusted and built as
    // they are.
    let confined = (!is_problem_code(config, crate_dir)).then_some((target.as_path(), crate_dir));
    if fast
        && let Some(inv) = direct::reusable(crate_dir, &target)
        && let Some(build) = build_direct(config, &inv, cancel.clone(), started, &package, confined)?
    {
        return Ok(build);
    }
    direct::forget(crate_dir, &target);
    let cmd = cargo_build(config, &manifest, &target, fast);
    let (mut child, watch) = start(cmd, confined, config, started, cancel)
        .context("cannot run cargo: is a Rust toolchain installed and on PATH? (https://rustup.rs)")?;
    let stderr_reader = read_all(child.stderr.take().expect("piped"), "cargo-stderr")?;

    let Messages { diagnostics, artifact, saw_lib_without_cdylib } =
        read_messages(child.stdout.take().expect("piped"), &package, crate_dir);
    let status = child.wait().context("cargo did not finish")?;
    let stopped = watch.finish();
    let stderr = stderr_reader.join().unwrap_or_default();
    let duration = started.elapsed();
    if fast && stopped.is_none() && status.success() {
        direct::remember(crate_dir, &target, &stderr);
    }

    let mut failure = None;
    let lib = if let Some(why) = stopped {
        failure = Some(stop_text(config, why));
        None
    } else if !status.success() {
        if !diagnostics.iter().any(|d| d.level == "error") {
            failure = Some(cargo_error_text(&stderr));
        } else if diagnostics.iter().any(|d| d.level == "error" && d.message.contains("global allocator")) {
            failure = Some(GLOBAL_ALLOCATOR_ERR.to_string());
        }
        None
    } else if let Some(path) = artifact {
        Some(private_copy(config, &path, &package)?)
    } else if saw_lib_without_cdylib {
        failure = Some(format!(
            "{}: the library is not built as a cdylib, so the harness cannot load it.\n\
             Add this to the manifest:\n\n[lib]\ncrate-type = [\"cdylib\"]",
            manifest.display()
        ));
        None
    } else {
        failure = Some(format!("{}: cargo built no library (is there a src/lib.rs?)", manifest.display()));
        None
    };
    Ok(Build { lib, diagnostics, failure, duration, direct: false })
}

/// The cargo command that builds a solution's library, its messages as
/// JSON on stdout.
fn cargo_build(config: &Config, manifest: &Path, target: &Path, fast: bool) -> Command {
    let profile_var = config.profile.to_uppercase().replace('-', "_");
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.arg("build")
        .arg("--lib")
        .arg("--manifest-path")
        .arg(manifest)
        .arg("--message-format=json-diagnostic-rendered-ansi")
        .arg("--target-dir")
        .arg(target)
        .arg("--profile")
        .arg(&config.profile)
        // With -vv cargo prints how it ran rustc, for the next build.
        .args(fast.then_some("-vv"))
        .env("CARGO_TERM_COLOR", "never")
        // Panics must unwind for the library to catch them and name them,
        // whatever the candidate's manifest says; a profile setting from
        // the environment overrides the manifest's. It is the default, so
        // it changes no fingerprint and costs no rebuild.
        .env(format!("CARGO_PROFILE_{}_PANIC", profile_var), "unwind")
        // No debug info: nothing reads it (panics carry their location
        // without it, backtraces are off), and without it an incremental
        // build of a one-line edit is ~20 % faster and the library ~7×
        // smaller to copy and load (`cargo bench --bench save_to_verdict`).
        .env(format!("CARGO_PROFILE_{}_DEBUG", profile_var), "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// What a cargo build said on stdout: the diagnostics, and the library
/// it wrote for the package (or whether it built a library that is not a
/// cdylib).
struct Messages {
    diagnostics: Vec<Diagnostic>,
    artifact: Option<PathBuf>,
    saw_lib_without_cdylib: bool,
}

/// Reads cargo's JSON messages to the end of its stdout.
fn read_messages(stdout: std::process::ChildStdout, package: &str, crate_dir: &Path) -> Messages {
    let mut diagnostics = Vec::new();
    let mut artifact: Option<PathBuf> = None;
    let mut saw_lib_without_cdylib = false;
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = serde_json::from_str::<Json>(&line) else {
            continue;
        };
        match msg["reason"].as_str() {
            Some("compiler-message") => {
                if let Some(d) = diagnostic(&msg["message"]) {
                    diagnostics.push(d);
                }
            }
            Some("compiler-artifact")
                if msg["package_id"].as_str().is_some_and(|id| is_package(id, package, crate_dir)) =>
            {
                let kinds: Vec<&str> =
                    msg["target"]["kind"].as_array().into_iter().flatten().filter_map(|k| k.as_str()).collect();
                if kinds.contains(&"cdylib") {
                    artifact = msg["filenames"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|f| f.as_str())
                        .find(|f| f.ends_with(std::env::consts::DLL_SUFFIX))
                        .map(PathBuf::from);
                } else if kinds.iter().any(|k| k.ends_with("lib")) {
                    saw_lib_without_cdylib = true;
                }
            }
            _ => {}
        }
    }
    Messages { diagnostics, artifact, saw_lib_without_cdylib }
}

/// Runs rustc as cargo last did. `None` when the result cannot be
/// trusted to be what cargo would have built (rustc failed without a
/// compile error, or wrote no library): the caller then runs cargo.
fn build_direct(
    config: &Config,
    inv: &direct::Invocation,
    cancel: Option<Arc<AtomicBool>>,
    started: Instant,
    package: &str,
    confined: Option<(&Path, &Path)>,
) -> Result<Option<Build>> {
    let mut cmd = Command::new(&inv.program);
    cmd.args(&inv.args)
        .envs(inv.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&inv.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let Ok((mut child, watch)) = start(cmd, confined, config, started, cancel) else { return Ok(None) };
    let stdout_reader = read_all(child.stdout.take().expect("piped"), "rustc-stdout")?;
    let (mut diagnostics, mut artifact) = (Vec::new(), None);
    for line in BufReader::new(child.stderr.take().expect("piped")).lines() {
        let Ok(line) = line else { break };
        match direct::line(&line) {
            direct::Line::Diagnostic(m) => diagnostics.extend(diagnostic(&m)),
            direct::Line::Artifact(path) if path.to_string_lossy().ends_with(std::env::consts::DLL_SUFFIX) => {
                artifact = Some(path)
            }
            _ => {}
        }
    }
    let status = child.wait().context("rustc did not finish")?;
    let stopped = watch.finish();
    let _ = stdout_reader.join();
    let duration = started.elapsed();
    if let Some(why) = stopped {
        let failure = Some(stop_text(config, why));
        return Ok(Some(Build { lib: None, diagnostics, failure, duration, direct: true }));
    }
    let errors = diagnostics.iter().any(|d| d.level == "error");
    match (status.success(), artifact) {
        (true, Some(path)) => {
            let lib = private_copy(config, &path, package)?;
            Ok(Some(Build { lib: Some(lib), diagnostics, failure: None, duration, direct: true }))
        }
        // An error about a dependency's build, not the candidate's code
        // (the toolchain was updated, a dependency rebuilt meanwhile): only
        // cargo can put that right.
        (false, _) if errors && !diagnostics.iter().any(|d| direct::about_dependencies(&d.message)) => {
            let failure = diagnostics
                .iter()
                .any(|d| d.level == "error" && d.message.contains("global allocator"))
                .then(|| GLOBAL_ALLOCATOR_ERR.to_string());
            Ok(Some(Build { lib: None, diagnostics, failure, duration, direct: true }))
        }
        _ => {
            crate::base::trace::mark("direct-build-refused");
            Ok(None)
        }
    }
}

/// Starts a build command in a process group of its own (confined when
/// `confined` names its target and crate), watched for the deadline and
/// for `cancel`.
fn start(
    mut cmd: Command,
    confined: Option<(&Path, &Path)>,
    config: &Config,
    started: Instant,
    cancel: Option<Arc<AtomicBool>>,
) -> Result<(std::process::Child, Watchdog)> {
    crate::judge::confine::group_of_its_own(&mut cmd);
    if let Some((target, crate_dir)) = confined {
        crate::judge::buildbox::confine(&mut cmd, target, crate_dir);
    }
    let child = cmd.spawn()?;
    let group = rustix::process::Pid::from_raw(child.id() as i32).context("a build without a pid")?;
    let watch = Watchdog::start(group, started + config.build_deadline, cancel)?;
    Ok((child, watch))
}

/// Reads a pipe to its end on a thread of its own.
fn read_all(mut pipe: impl Read + Send + 'static, name: &str) -> Result<std::thread::JoinHandle<String>> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let mut s = String::new();
            let _ = pipe.read_to_string(&mut s);
            s
        })
        .context("cannot start a thread")
}

/// Why a solution may not declare its own global allocator.
const GLOBAL_ALLOCATOR_ERR: &str = "The solution declares a #[global_allocator]: `harness_contract::export!` already \
     installs one (it counts the heap exactly, for the memory checks), and a library can have only one. Remove yours.";

fn stop_text(config: &Config, why: Stop) -> String {
    match why {
        Stop::Deadline => format!(
            "the build did not finish within {} s and was stopped (a build script that never ends?); \
             the limit is `[build] deadline_s` in harness.toml",
            config.build_deadline.as_secs()
        ),
        Stop::Cancelled => "the build was cancelled".to_string(),
    }
}

/// Why a build was stopped.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stop {
    Deadline,
    Cancelled,
}

/// Kills cargo's process group at the deadline or on cancel, and in any
/// case when the build is over (so no build script outlives it).
struct Watchdog {
    done: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Option<Stop>>,
    group: rustix::process::Pid,
}

impl Watchdog {
    fn start(group: rustix::process::Pid, deadline: Instant, cancel: Option<Arc<AtomicBool>>) -> Result<Watchdog> {
        let done = Arc::new(AtomicBool::new(false));
        let thread = {
            let done = done.clone();
            std::thread::Builder::new()
                .name("build-watchdog".into())
                .spawn(move || {
                    while !done.load(Ordering::Relaxed) {
                        let why = if cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)) {
                            Some(Stop::Cancelled)
                        } else if Instant::now() >= deadline {
                            Some(Stop::Deadline)
                        } else {
                            None
                        };
                        if let Some(why) = why {
                            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
                            return Some(why);
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    None
                })
                .context("cannot start a thread")?
        };
        BUILDS.lock().unwrap_or_else(|e| e.into_inner()).push(group);
        Ok(Watchdog { done, thread, group })
    }

    fn finish(self) -> Option<Stop> {
        self.done.store(true, Ordering::Relaxed);
        let why = self.thread.join().unwrap_or(None);
        let _ = rustix::process::kill_process_group(self.group, rustix::process::Signal::KILL);
        BUILDS.lock().unwrap_or_else(|e| e.into_inner()).retain(|g| *g != self.group);
        why
    }
}

/// The process groups of the builds running now.
static BUILDS: std::sync::Mutex<Vec<rustix::process::Pid>> = std::sync::Mutex::new(Vec::new());

/// Kills every running build with its build scripts: for the harness's
/// exit paths (quit, a signal, a panic). Cargo itself would die with the
/// harness (`PR_SET_PDEATHSIG`); what it started would not.
pub fn stop_all_builds() {
    for group in BUILDS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        let _ = rustix::process::kill_process_group(*group, rustix::process::Signal::KILL);
    }
}

/// Whether a cargo package id names the crate we built (not a dependency).
fn is_package(id: &str, package: &str, crate_dir: &Path) -> bool {
    // Ids look like `path+file:///abs/dir#name@0.1.0` (or `#0.1.0` when the
    // directory name equals the package name).
    let dir = std::fs::canonicalize(crate_dir).unwrap_or_else(|_| crate_dir.to_path_buf());
    id.contains(&format!("{}#", dir.display())) || id.starts_with(&format!("{package} "))
}

fn diagnostic(m: &Json) -> Option<Diagnostic> {
    let level = m["level"].as_str()?.to_string();
    if level != "error" && level != "warning" {
        return None;
    }
    let primary = m["spans"].as_array().and_then(|s| s.iter().find(|s| s["is_primary"].as_bool() == Some(true)));
    Some(Diagnostic {
        message: m["message"].as_str().unwrap_or_default().to_string(),
        rendered: m["rendered"].as_str().unwrap_or_default().to_string(),
        file: primary.and_then(|s| s["file_name"].as_str()).map(str::to_string),
        line: primary.and_then(|s| s["line_start"].as_u64()),
        column: primary.and_then(|s| s["column_start"].as_u64()),
        level,
    })
}

/// The lines of cargo's stderr that say what went wrong.
fn cargo_error_text(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().skip_while(|l| !l.trim_start().starts_with("error")).collect();
    if lines.is_empty() { stderr.trim().to_string() } else { lines.join("\n") }
}

fn private_copy(config: &Config, built: &Path, package: &str) -> Result<LoadedLib> {
    let dir = config.target_dir.join("loaded");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| remove_stale_copies(&dir));
    let n = COPIES.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("{package}-{}-{n}{}", std::process::id(), std::env::consts::DLL_SUFFIX));
    // A hard link is instant; rustc replaces its output rather than
    // rewriting it in place, so the link keeps the bytes we built.
    if std::fs::hard_link(built, &path).is_err() {
        std::fs::copy(built, &path)
            .with_context(|| format!("cannot copy {} to {}", built.display(), path.display()))?;
    }
    Ok(LoadedLib { path })
}

/// Removes the private copies left by harness processes that are gone (a
/// `kill -9`, a crash): a copy is named `<package>-<pid>-<n>.so` after the
/// process that made it, and is stale once no process has that pid. A
/// reused pid only keeps a stale copy a while longer.
fn remove_stale_copies(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = copy_owner(&name)
            && pid != std::process::id()
            && !process_alive(pid)
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The pid in a private copy's name `<package>-<pid>-<n><suffix>`.
fn copy_owner(name: &str) -> Option<u32> {
    let stem = name.strip_suffix(std::env::consts::DLL_SUFFIX)?;
    let mut parts = stem.rsplit('-');
    parts.next()?.parse::<u64>().ok()?;
    parts.next()?.parse().ok()
}

fn process_alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else { return false };
    // EPERM means it exists but is not ours: alive.
    !matches!(rustix::process::test_kill_process(pid), Err(rustix::io::Errno::SRCH))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_of_dead_processes_are_removed_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let suffix = std::env::consts::DLL_SUFFIX;
        let me = std::process::id();
        // A pid above the kernel's maximum (2^22) belongs to no process.
        let names =
            [format!("my-crate-{me}-0{suffix}"), format!("my-crate-99999999-3{suffix}"), "notes-1.txt".to_string()];
        for n in &names {
            std::fs::write(dir.path().join(n), b"x").unwrap();
        }
        remove_stale_copies(dir.path());
        let left: Vec<bool> = names.iter().map(|n| dir.path().join(n).exists()).collect();
        assert_eq!(left, [true, false, true]);
        assert_eq!(copy_owner(&format!("a-b-12-7{suffix}")), Some(12));
        assert_eq!(copy_owner("a-12-7.txt"), None);
    }
}
