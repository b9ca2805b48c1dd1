//! `harness check --json`: the report's types (format_version
//! [`CHECK_FORMAT_VERSION`], documented in docs/check.md), built from an
//! [`Evaluation`]. Fields serialise in the order they are declared, which
//! is the order the docs show.

use serde::Serialize;
use serde_json::{Value as Json, json};

use crate::base::diag::strip_ansi;
use crate::judge::evaluate::{Evaluation, GateResult};
use crate::judge::scale::ScaleResult;
use crate::judge::suite::{Case, CaseKind, CaseResult};
use crate::judge::verdict::Verdict;
use crate::problem::model::Problem;
use crate::problem::ty::to_json;

/// Version of the `--json` output of `check`.
pub const CHECK_FORMAT_VERSION: u32 = 1;

/// The whole report of one `check`.
#[derive(Debug, Serialize)]
pub struct CheckReport {
    pub format_version: u32,
    pub problem: String,
    /// The path judged, by gate number.
    pub path: Vec<usize>,
    pub solution: String,
    pub build: BuildReport,
    /// The gates judged, in path order.
    pub gates: Vec<GateReport>,
    pub gates_passed: usize,
    pub passed: bool,
    /// Which protections were in force, as `harness doctor --json` prints
    /// them (filled in by the command).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Json>,
}

#[derive(Debug, Serialize)]
pub struct BuildReport {
    pub ok: bool,
    pub duration_ms: u64,
    /// A failed build that is not a compiler error (wrong crate type,
    /// contract mismatch, a build past its deadline).
    pub failure: Option<String>,
    pub errors: Vec<BuildError>,
}

/// One compiler error.
#[derive(Debug, Serialize)]
pub struct BuildError {
    pub message: String,
    pub file: Option<String>,
    pub line: Option<u64>,
    pub column: Option<u64>,
    /// As rustc prints it, without colours.
    pub rendered: String,
}

#[derive(Debug, Serialize)]
pub struct GateReport {
    pub gate: usize,
    /// Its position on the path, from 1.
    pub position: usize,
    pub title: String,
    pub passed: bool,
    pub cases_total: usize,
    pub cases_passed: usize,
    pub failures: Vec<FailureReport>,
    pub scale: Vec<ScaleResult>,
    pub scale_skipped: Vec<String>,
}

/// One failing case.
#[derive(Debug, Serialize)]
pub struct FailureReport {
    pub case: String,
    /// `fixed` or `generated`.
    pub kind: &'static str,
    /// A generated case's seed, `0x` and 16 hex digits.
    pub seed: Option<String>,
    pub verdict: Verdict,
    pub message: String,
    pub op_index: Option<usize>,
    /// As `harness replay --ops` reads them, `new` first.
    pub ops: Vec<OpCall>,
    /// One per op.
    pub expected: Vec<Json>,
    /// One per op that returned.
    pub actual: Vec<Json>,
    pub output: String,
    /// How many operations it had before shrinking.
    pub shrunk_from: Option<usize>,
}

/// An operation and its arguments.
#[derive(Debug, Serialize)]
pub struct OpCall {
    pub op: String,
    pub args: Vec<Json>,
}

/// A case's operations as `harness replay --ops` reads them.
pub fn ops(result: &CaseResult) -> Vec<OpCall> {
    result
        .steps
        .iter()
        .map(|s| OpCall { op: s.call.op.clone(), args: s.call.args.iter().map(to_json).collect() })
        .collect()
}

/// [`ops`] as JSON.
pub fn ops_json(result: &CaseResult) -> Json {
    json!(ops(result))
}

impl CheckReport {
    /// `path` is the path judged (`eval` covers it, or its first gates).
    pub fn new(problem: &Problem, solution: &std::path::Path, eval: &Evaluation, path: &[usize]) -> CheckReport {
        CheckReport {
            format_version: CHECK_FORMAT_VERSION,
            problem: problem.id.clone(),
            path: path.to_vec(),
            solution: solution.display().to_string(),
            build: BuildReport {
                ok: eval.build.ok,
                duration_ms: eval.build.duration.as_millis() as u64,
                failure: eval.build.failure.clone(),
                errors: eval
                    .build
                    .diagnostics
                    .iter()
                    .filter(|d| d.level == "error")
                    .map(|d| BuildError {
                        message: d.message.clone(),
                        file: d.file.clone(),
                        line: d.line,
                        column: d.column,
                        rendered: strip_ansi(&d.rendered),
                    })
                    .collect(),
            },
            gates: eval.gates.iter().enumerate().map(|(i, g)| GateReport::new(g, i + 1)).collect(),
            gates_passed: eval.gates_passed(),
            passed: eval.all_passed(),
            sandbox: None,
        }
    }
}

impl GateReport {
    fn new(g: &GateResult, position: usize) -> GateReport {
        GateReport {
            gate: g.gate,
            position,
            title: g.title.clone(),
            passed: g.all_passed(),
            cases_total: g.cases_total(),
            cases_passed: g.cases_passed(),
            failures: g.failures.iter().map(|(case, r)| FailureReport::new(case, r)).collect(),
            scale: g.scale.clone(),
            scale_skipped: g.scale_skipped.clone(),
        }
    }
}

impl FailureReport {
    fn new(case: &Case, r: &CaseResult) -> FailureReport {
        let (kind, seed) = match case.kind {
            CaseKind::Fixed => ("fixed", None),
            CaseKind::Generated { seed } => ("generated", Some(format!("{seed:#018x}"))),
        };
        FailureReport {
            case: case.name.clone(),
            kind,
            seed,
            verdict: r.verdict,
            message: r.message.clone(),
            op_index: r.failed_at,
            ops: ops(r),
            expected: r.steps.iter().map(|s| to_json(&s.expect)).collect(),
            actual: r.actual.iter().map(to_json).collect(),
            output: r.output.clone(),
            shrunk_from: r.shrunk_from.map(|n| n - 1),
        }
    }
}
