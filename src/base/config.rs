//! `harness.toml`: found, like `Cargo.toml`, in the current directory or
//! one of its parents. Its directory is the project root; every relative
//! path in it is relative to that root.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use toml::Spanned;

use crate::base::diag::Located;

pub const FILE_NAME: &str = "harness.toml";

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    paths: RawPaths,
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    build: RawBuild,
    #[serde(default)]
    mock: RawMock,
    #[serde(default)]
    practice: RawPractice,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPaths {
    problems: Option<PathBuf>,
    solutions: Option<PathBuf>,
    reports: Option<PathBuf>,
    target: Option<PathBuf>,
    contract: Option<PathBuf>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    case_timeout_ms: Option<Spanned<u64>>,
    memory_mb: Option<Spanned<u64>>,
    stack_mb: Option<Spanned<u64>>,
    output_kb: Option<usize>,
    jobs: Option<usize>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawBuild {
    profile: Option<String>,
    deadline_s: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawMock {
    minutes: Option<u32>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPractice {
    first_ninety: Option<bool>,
}

/// Limits applied to every run of candidate code.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Wall-clock limit of one case, process start to last result.
    pub case_timeout: Duration,
    /// Address-space limit of a worker (`RLIMIT_AS`).
    pub memory_bytes: u64,
    /// Stack of the thread that runs candidate code.
    pub stack_bytes: usize,
    /// How much of a case's stdout/stderr is kept.
    pub output_bytes: usize,
    /// Cases run at once.
    pub jobs: usize,
}

/// Resolved settings: absolute paths, defaults applied.
#[derive(Clone, Debug)]
pub struct Config {
    pub root: PathBuf,
    pub problems_dir: PathBuf,
    pub solutions_dir: PathBuf,
    pub reports_dir: PathBuf,
    pub target_dir: PathBuf,
    pub contract_dir: PathBuf,
    pub profile: String,
    /// How long one `cargo build` may take before it is killed.
    pub build_deadline: Duration,
    pub limits: Limits,
    pub mock_minutes: u32,
    /// Whether a new session opens on the first-ninety-seconds screen.
    pub first_ninety: bool,
}

impl Config {
    /// Finds `harness.toml` from `start` upwards and loads it.
    pub fn discover(start: &Path) -> Result<Config> {
        let mut dir = Some(start);
        while let Some(d) = dir {
            let candidate = d.join(FILE_NAME);
            if candidate.is_file() {
                return Config::load(&candidate);
            }
            dir = d.parent();
        }
        bail!(
            "no {FILE_NAME} in {} or any parent directory: run harness from inside a harness project \
             (the repository's root holds one)",
            start.display()
        )
    }

    pub fn load(file: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
        let raw: RawConfig = toml::from_str(&text)
            .map_err(|e| Located::at(file, &text, e.span().map_or(0, |s| s.start), e.message().trim().to_string()))?;
        let root = file.parent().unwrap_or(Path::new(".")).to_path_buf();
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        let path = |p: Option<PathBuf>, default: &str| root.join(p.unwrap_or_else(|| default.into()));
        let profile = raw.build.profile.unwrap_or_else(|| "dev".into());
        if !matches!(profile.as_str(), "dev" | "release") {
            bail!("{}: build.profile must be \"dev\" or \"release\", not {profile:?}", file.display());
        }
        let limits = limits(file, &text, &raw.limits)?;
        let jobs = raw
            .limits
            .jobs
            .filter(|&j| j > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
        Ok(Config {
            problems_dir: path(raw.paths.problems, "problems"),
            solutions_dir: path(raw.paths.solutions, "solutions"),
            reports_dir: path(raw.paths.reports, "reports"),
            target_dir: path(raw.paths.target, "target/harness"),
            contract_dir: path(raw.paths.contract, "contract"),
            root,
            profile,
            build_deadline: Duration::from_secs(raw.build.deadline_s.unwrap_or(60).max(1)),
            limits: Limits { output_bytes: raw.limits.output_kb.unwrap_or(64) << 10, jobs, ..limits },
            mock_minutes: raw.mock.minutes.unwrap_or(90),
            first_ninety: raw.practice.first_ninety.unwrap_or(true),
        })
    }

    /// The drill's decks: `drill/*.toml` beside `harness.toml`.
    pub fn drill_dir(&self) -> PathBuf {
        self.root.join("drill")
    }

    /// Where the candidate's solution for `problem` lives.
    pub fn solution_dir(&self, problem: &str) -> PathBuf {
        self.solutions_dir.join(problem)
    }
}

/// Address space a worker needs for itself, beyond the candidate's stack:
/// the harness binary, its libraries and the candidate's library mapped.
/// Measured: a debug build of the harness fails to load a library below
/// about 24 MiB of headroom; this leaves room for larger libraries.
pub const WORKER_HEADROOM_MB: u64 = 64;

/// The time, memory and stack limits, each checked for a value that could
/// judge anything at all; an error names the setting and its position.
fn limits(file: &Path, text: &str, raw: &RawLimits) -> Result<Limits> {
    let value =
        |s: &Option<Spanned<u64>>, default: u64| s.as_ref().map_or((default, 0), |s| (*s.get_ref(), s.span().start));
    let (timeout_ms, timeout_at) = value(&raw.case_timeout_ms, 2000);
    let (stack_mb, stack_at) = value(&raw.stack_mb, 64);
    let (memory_mb, memory_at) = value(&raw.memory_mb, 1024);
    let err = |at: usize, msg: String| -> anyhow::Error { Located::at(file, text, at, msg).into() };
    if timeout_ms == 0 || timeout_ms > 3_600_000 {
        return Err(err(timeout_at, format!("limits.case_timeout_ms = {timeout_ms}: use 1 to 3600000 (an hour)")));
    }
    if stack_mb == 0 || stack_mb > 4096 {
        return Err(err(stack_at, format!("limits.stack_mb = {stack_mb}: use 1 to 4096")));
    }
    let least = stack_mb + WORKER_HEADROOM_MB;
    if memory_mb < least {
        return Err(err(
            memory_at,
            format!(
                "limits.memory_mb = {memory_mb} is too small: a worker needs the candidate's stack \
                 (limits.stack_mb = {stack_mb}) plus {WORKER_HEADROOM_MB} MiB for itself; use at least {least}"
            ),
        ));
    }
    if memory_mb > 1 << 20 {
        return Err(err(memory_at, format!("limits.memory_mb = {memory_mb} is more than a TiB")));
    }
    Ok(Limits {
        case_timeout: Duration::from_millis(timeout_ms),
        memory_bytes: memory_mb << 20,
        stack_bytes: (stack_mb << 20) as usize,
        output_bytes: 0,
        jobs: 1,
    })
}
