//! `harness.toml`: found, like `Cargo.toml`, in the current directory or
//! one of its parents. Its directory is the project root; every relative
//! path in it is relative to that root.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

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
    case_timeout_ms: Option<u64>,
    memory_mb: Option<u64>,
    stack_mb: Option<u64>,
    output_kb: Option<usize>,
    jobs: Option<usize>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawBuild {
    profile: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawMock {
    minutes: Option<u32>,
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
    pub limits: Limits,
    pub mock_minutes: u32,
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
            limits: Limits {
                case_timeout: Duration::from_millis(raw.limits.case_timeout_ms.unwrap_or(2000)),
                memory_bytes: raw.limits.memory_mb.unwrap_or(1024) << 20,
                stack_bytes: (raw.limits.stack_mb.unwrap_or(64) << 20) as usize,
                output_bytes: raw.limits.output_kb.unwrap_or(64) << 10,
                jobs,
            },
            mock_minutes: raw.mock.minutes.unwrap_or(90),
        })
    }

    /// Where the candidate's solution for `problem` lives.
    /// The drill's decks: `drill/*.toml` beside `harness.toml`.
    pub fn drill_dir(&self) -> PathBuf {
        self.root.join("drill")
    }

    pub fn solution_dir(&self, problem: &str) -> PathBuf {
        self.solutions_dir.join(problem)
    }
}
