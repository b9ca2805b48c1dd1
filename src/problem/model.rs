//! Problems as data: `problems/<id>/problem.toml` is read into a raw serde
//! mirror, then validated into [`Problem`]. Every validation error names the
//! file, line and column.

use std::collections::BTreeMap;
use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use toml::Spanned;

use crate::base::diag::Located;
use crate::problem::domain::{Domain, GenSpec, domain_for};
use crate::problem::scale::{RawScale, ScaleCheck, ScaleError};
use crate::problem::script::{self, Step};
use crate::problem::signature::parse_params;
use crate::problem::signature::{OpDef, Signature};
use crate::problem::ty::Ty;

/// The problem file format this harness reads.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProblem {
    format_version: Spanned<u32>,
    title: String,
    summary: String,
    /// The seed chapter the problem comes from (for `harness drill`).
    #[serde(default)]
    chapter: Option<u32>,
    #[serde(default)]
    errors: Vec<String>,
    #[serde(default)]
    constructor: Option<Spanned<String>>,
    ops: BTreeMap<String, Spanned<RawOp>>,
    #[serde(default)]
    generate: RawGenerate,
    #[serde(rename = "gate")]
    gates: Vec<Spanned<RawGate>>,
    #[serde(default, rename = "mutant")]
    mutants: Vec<Spanned<RawMutant>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOp {
    gate: usize,
    #[serde(default)]
    args: Option<Spanned<String>>,
    #[serde(default = "unit")]
    returns: Spanned<String>,
}

fn unit() -> Spanned<String> {
    Spanned::new(0..0, "unit".to_string())
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawGenerate {
    #[serde(default)]
    params: BTreeMap<String, Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGate {
    title: String,
    minutes: u32,
    statement: String,
    #[serde(default)]
    hints: Vec<String>,
    #[serde(default, rename = "followup")]
    followups: Vec<Followup>,
    #[serde(default, rename = "case")]
    cases: Vec<RawCase>,
    #[serde(default)]
    generate: Option<Spanned<RawGen>>,
    #[serde(default, rename = "scale")]
    scale: Vec<RawScale>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    name: Spanned<String>,
    run: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGen {
    cases: Spanned<u64>,
    length: Spanned<[u64; 2]>,
    #[serde(default)]
    seed: u64,
    weights: BTreeMap<String, Spanned<u32>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMutant {
    name: String,
    gate: usize,
    mistake: String,
    #[serde(default)]
    caught_by: Option<String>,
    #[serde(default, rename = "edit")]
    edits: Vec<RawEdit>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEdit {
    from: Spanned<String>,
    to: String,
}

/// An interviewer's follow-up question with a short model answer.
#[derive(Clone, Debug, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Followup {
    pub question: String,
    pub answer: String,
}

/// A fixed case: named for the one rule it pins.
#[derive(Clone, Debug)]
pub struct FixedCase {
    pub name: String,
    pub steps: Vec<Step>,
}

#[derive(Clone, Debug)]
pub struct Gate {
    pub number: usize,
    pub title: String,
    pub minutes: u32,
    pub statement: String,
    pub hints: Vec<String>,
    pub followups: Vec<Followup>,
    pub cases: Vec<FixedCase>,
    pub generate: Option<GenSpec>,
    /// Cost claims checked at growing sizes (`[[gate.scale]]`).
    pub scale: Vec<ScaleCheck>,
}

/// A wrong solution that the hidden tests must catch at `gate`.
///
/// Usually it is the reference with a few textual edits (`[[mutant.edit]]`:
/// the classic mistake, and nothing else, in a few lines a reviewer can
/// read); `compile::mutant_crate` writes it out as a crate. Without edits it
/// is a hand-written crate in `mutants/<name>/`.
#[derive(Clone, Debug)]
pub struct Mutant {
    pub name: String,
    pub dir: PathBuf,
    pub gate: usize,
    pub mistake: String,
    pub caught_by: Option<String>,
    pub edits: Vec<Edit>,
}

/// Replace the one occurrence of `from` in the reference's `src/lib.rs`.
#[derive(Clone, Debug)]
pub struct Edit {
    pub from: String,
    pub to: String,
    /// Where `from` stands in problem.toml, for error messages.
    pub span: Range<usize>,
}

impl Mutant {
    /// The reference source with this mutant's edits applied; an error
    /// names the edit whose `from` does not occur exactly once.
    pub fn apply(&self, reference: &str) -> std::result::Result<String, (usize, String)> {
        let mut src = reference.to_string();
        for (i, e) in self.edits.iter().enumerate() {
            match src.matches(e.from.as_str()).count() {
                1 => src = src.replacen(e.from.as_str(), &e.to, 1),
                0 => {
                    return Err((
                        i,
                        format!("mutant `{}`: edit {} does not match the reference's src/lib.rs", self.name, i + 1),
                    ));
                }
                n => {
                    return Err((
                        i,
                        format!(
                            "mutant `{}`: edit {} matches the reference's src/lib.rs {n} times; add context to make it unique",
                            self.name,
                            i + 1
                        ),
                    ));
                }
            }
        }
        Ok(src)
    }
}

#[derive(Clone, Debug)]
pub struct Problem {
    pub id: String,
    pub dir: PathBuf,
    pub title: String,
    pub summary: String,
    /// The seed chapter the problem comes from, when the file says.
    pub chapter: Option<u32>,
    pub signature: Signature,
    pub domains: BTreeMap<String, Domain>,
    pub gates: Vec<Gate>,
    pub mutants: Vec<Mutant>,
}

impl Problem {
    pub fn file(&self) -> PathBuf {
        self.dir.join("problem.toml")
    }
    pub fn reference_dir(&self) -> PathBuf {
        self.dir.join("reference")
    }
    pub fn starter_dir(&self) -> PathBuf {
        self.dir.join("starter")
    }
    pub fn total_minutes(&self) -> u32 {
        self.gates.iter().map(|g| g.minutes).sum()
    }
    pub fn has_generated_cases(&self, upto: usize) -> bool {
        self.gates.iter().take(upto).any(|g| g.generate.is_some())
    }

    /// Loads and validates `<problems_dir>/<id>/problem.toml`. The id must
    /// be a plain name: a path such as `../problems/x` is refused before it
    /// can name a folder outside `problems/` (or put a solution inside it).
    pub fn load(problems_dir: &Path, id: &str) -> Result<Problem> {
        let dir = problems_dir.join(id);
        let file = dir.join("problem.toml");
        if !is_id(id) || !dir.is_dir() {
            let known = list_ids(problems_dir).unwrap_or_default();
            let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
            if !is_id(id) {
                bail!("`{id}` is not a problem id: ids are lowercase letters, digits and `_` (known: {known})");
            }
            bail!("no problem `{id}` in {} (known: {known})", problems_dir.display());
        }
        let text = fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
        let problem = parse(id, &dir, &file, &text)?;
        // Every mutant's edits must apply to the reference as it is now.
        if problem.mutants.iter().any(|m| !m.edits.is_empty()) {
            let path = problem.reference_dir().join("src/lib.rs");
            let reference = fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
            for m in &problem.mutants {
                if let Err((i, message)) = m.apply(&reference) {
                    return Err(Located::at(&file, &text, m.edits[i].span.start, message).into());
                }
            }
        }
        Ok(problem)
    }
}

/// Generated operations per case, at most: a bound on what a typo in
/// `generate.length` can make the harness allocate.
pub const MAX_GENERATED_LENGTH: usize = 10_000;
/// Generated cases per gate, at most.
pub const MAX_GENERATED_CASES: usize = 1_000;

/// Whether `id` can name a problem: `[a-z0-9_]+`.
pub fn is_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The ids of every problem directory (those holding a `problem.toml`).
pub fn list_ids(problems_dir: &Path) -> Result<Vec<String>> {
    let mut ids = Vec::new();
    let entries = fs::read_dir(problems_dir).with_context(|| format!("cannot read {}", problems_dir.display()))?;
    for entry in entries.flatten() {
        if entry.path().join("problem.toml").is_file() {
            ids.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    ids.sort();
    Ok(ids)
}

/// Parses a problem file's text. `file` is used in error messages only.
pub fn parse(id: &str, dir: &Path, file: &Path, text: &str) -> std::result::Result<Problem, Located> {
    let at = |span: Range<usize>, msg: String| Located::at(file, text, span.start, msg);
    let raw: RawProblem = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        Located::at(file, text, offset, e.message().trim().to_string())
    })?;
    if *raw.format_version.get_ref() != FORMAT_VERSION {
        return Err(at(
            raw.format_version.span(),
            format!(
                "format_version {} is not supported: this harness reads format_version {FORMAT_VERSION}",
                raw.format_version.get_ref()
            ),
        ));
    }

    let ctor = match &raw.constructor {
        Some(c) => parse_params(c.get_ref()).map_err(|e| at(c.span(), format!("constructor: {e}")))?,
        None => Vec::new(),
    };
    let gate_count = raw.gates.len();
    if gate_count == 0 {
        return Err(at(0..0, "a problem needs at least one [[gate]]".into()));
    }
    let mut ops = BTreeMap::new();
    for (name, op) in &raw.ops {
        let span = op.span();
        let op = op.get_ref();
        if name == "new" {
            return Err(at(
                span,
                "`new` is the constructor: declare its parameters with `constructor = \"...\"`".into(),
            ));
        }
        if op.gate == 0 || op.gate > gate_count {
            return Err(at(span, format!("op `{name}`: gate {} does not exist (there are {gate_count})", op.gate)));
        }
        let params = match &op.args {
            Some(args) => parse_params(args.get_ref()).map_err(|e| at(args.span(), format!("op `{name}`: {e}")))?,
            None => Vec::new(),
        };
        let ret = op.returns.get_ref().parse::<Ty>().map_err(|e| at(op.returns.span(), format!("op `{name}`: {e}")))?;
        ops.insert(name.clone(), OpDef { gate: op.gate, params, ret });
    }
    let signature = Signature { problem: id.to_string(), ctor, ops, errors: raw.errors.clone() };

    let mut domains = BTreeMap::new();
    for (name, value) in &raw.generate.params {
        let domain =
            Domain::from_toml(value.get_ref()).map_err(|e| at(value.span(), format!("generate.params.{name}: {e}")))?;
        domains.insert(name.clone(), domain);
    }

    let mut gates = Vec::new();
    for (index, raw_gate) in raw.gates.iter().enumerate() {
        let number = index + 1;
        let gate_span = raw_gate.span();
        let g = raw_gate.get_ref();
        let mut cases = Vec::new();
        for case in &g.cases {
            let steps = script::parse(case.run.get_ref(), &signature).map_err(|e| {
                Located::at(file, text, script_offset(text, case.run.span(), e.line, e.column), e.message)
            })?;
            for step in &steps {
                let op_gate = signature.ops.get(&step.call.op).map_or(1, |d| d.gate);
                if op_gate > number {
                    return Err(at(
                        case.run.span(),
                        format!(
                            "case `{}` of gate {number} uses `{}`, which gate {op_gate} introduces",
                            case.name.get_ref(),
                            step.call.op
                        ),
                    ));
                }
            }
            if cases.iter().any(|c: &FixedCase| &c.name == case.name.get_ref()) {
                return Err(at(
                    case.name.span(),
                    format!("gate {number} has two cases named `{}`", case.name.get_ref()),
                ));
            }
            cases.push(FixedCase { name: case.name.get_ref().clone(), steps });
        }
        let generate = match &g.generate {
            None => None,
            Some(spec) => {
                let span = spec.span();
                let spec = spec.get_ref();
                let [lo, hi] = *spec.length.get_ref();
                if lo == 0 || lo > hi {
                    return Err(at(
                        spec.length.span(),
                        format!("gate {number}: generate.length must be [min, max] with 1 <= min <= max"),
                    ));
                }
                if hi > MAX_GENERATED_LENGTH as u64 {
                    return Err(at(
                        spec.length.span(),
                        format!(
                            "gate {number}: generate.length allows at most {MAX_GENERATED_LENGTH} operations per case, \
                             not {hi}"
                        ),
                    ));
                }
                let (lo, hi) = (lo as usize, hi as usize);
                let cases = *spec.cases.get_ref();
                if cases > MAX_GENERATED_CASES as u64 {
                    return Err(at(
                        spec.cases.span(),
                        format!(
                            "gate {number}: generate.cases allows at most {MAX_GENERATED_CASES} cases, not {cases}"
                        ),
                    ));
                }
                let mut weights = Vec::new();
                for (op, w) in &spec.weights {
                    let def = signature.ops.get(op).ok_or_else(|| {
                        at(w.span(), format!("weights: unknown operation `{op}` (known: {})", signature.op_names()))
                    })?;
                    if def.gate > number {
                        return Err(at(
                            w.span(),
                            format!("weights: `{op}` belongs to gate {}, not unlocked at gate {number}", def.gate),
                        ));
                    }
                    for (param, ty) in &def.params {
                        let domain = domain_for(&domains, op, param).ok_or_else(|| {
                            at(
                                w.span(),
                                format!("weights: `{op}` needs a domain for `{param}`: add generate.params.{param}"),
                            )
                        })?;
                        domain
                            .check(ty)
                            .map_err(|e| at(w.span(), format!("generate.params for `{op}.{param}`: {e}")))?;
                    }
                    if *w.get_ref() > 0 {
                        weights.push((op.clone(), *w.get_ref()));
                    }
                }
                if weights.is_empty() {
                    return Err(at(span, format!("gate {number}: generate.weights gives no operation a weight")));
                }
                for (param, ty) in &signature.ctor {
                    let domain = domain_for(&domains, "new", param).ok_or_else(|| {
                        at(
                            span.clone(),
                            format!("the constructor's `{param}` needs a domain: add generate.params.{param}"),
                        )
                    })?;
                    domain
                        .check(ty)
                        .map_err(|e| at(span.clone(), format!("generate.params for `new.{param}`: {e}")))?;
                }
                Some(GenSpec { cases: cases as usize, length: (lo, hi), seed: spec.seed, weights })
            }
        };
        let mut scale: Vec<ScaleCheck> = Vec::new();
        for raw in &g.scale {
            let check = raw.validate(&signature, number).map_err(|e| match e {
                ScaleError::Field(span, m) => at(span, format!("gate {number} scale check: {m}")),
                ScaleError::Script(span, line, column, m) => {
                    Located::at(file, text, script_offset(text, span, line, column), m)
                }
            })?;
            if scale.iter().any(|c| c.name == check.name) || cases.iter().any(|c| c.name == check.name) {
                return Err(at(raw.name.span(), format!("gate {number} has two checks named `{}`", check.name)));
            }
            scale.push(check);
        }
        if cases.is_empty() && generate.is_none() {
            return Err(at(gate_span, format!("gate {number} has no cases: add [[gate.case]] or [gate.generate]")));
        }
        gates.push(Gate {
            number,
            title: g.title.clone(),
            minutes: g.minutes,
            statement: g.statement.clone(),
            hints: g.hints.clone(),
            followups: g.followups.clone(),
            cases,
            generate,
            scale,
        });
    }

    let mut mutants = Vec::new();
    for m in &raw.mutants {
        let span = m.span();
        let m = m.get_ref();
        if m.gate == 0 || m.gate > gate_count {
            return Err(at(span, format!("mutant `{}`: gate {} does not exist", m.name, m.gate)));
        }
        if let Some(case) = &m.caught_by
            && !gates[m.gate - 1].cases.iter().any(|c| &c.name == case)
            && !gates[m.gate - 1].scale.iter().any(|c| &c.name == case)
        {
            return Err(at(
                span,
                format!("mutant `{}`: gate {} has no case or scale check named `{case}`", m.name, m.gate),
            ));
        }
        if mutants.iter().any(|other: &Mutant| other.name == m.name) {
            return Err(at(span, format!("two mutants are named `{}`", m.name)));
        }
        mutants.push(Mutant {
            name: m.name.clone(),
            dir: dir.join("mutants").join(&m.name),
            gate: m.gate,
            mistake: m.mistake.clone(),
            caught_by: m.caught_by.clone(),
            edits: m
                .edits
                .iter()
                .map(|e| Edit { from: e.from.get_ref().clone(), to: e.to.clone(), span: e.from.span() })
                .collect(),
        });
    }

    Ok(Problem {
        id: id.to_string(),
        dir: dir.to_path_buf(),
        title: raw.title,
        summary: raw.summary,
        chapter: raw.chapter,
        signature,
        domains,
        gates,
        mutants,
    })
}

/// Byte offset in the file of column `column` of line `line` of a script
/// stored as the TOML string at `span` (quotes included).
pub(crate) fn script_offset(text: &str, span: Range<usize>, line: usize, column: usize) -> usize {
    let raw = &text[span.clone()];
    let mut start = span.start;
    for quote in ["'''", "\"\"\"", "'", "\""] {
        if raw.starts_with(quote) {
            start += quote.len();
            let after = &text[start..];
            if quote.len() == 3 {
                if after.starts_with("\r\n") {
                    start += 2;
                } else if after.starts_with('\n') {
                    start += 1;
                }
            }
            break;
        }
    }
    let mut offset = start;
    for _ in 0..line {
        match text[offset..span.end].find('\n') {
            Some(i) => offset += i + 1,
            None => break,
        }
    }
    (offset + column).min(span.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
format_version = 1
title = "Counter"
summary = "Counts."
errors = ["empty"]

[ops]
add = { gate = 1, args = "n: i64", returns = "i64" }
take = { gate = 2, returns = "result<i64>" }

[generate.params]
n = { ints = [-5, 5] }

[[gate]]
title = "Add"
minutes = 10
statement = "Add numbers."
[[gate.case]]
name = "adds"
run = '''
add(1) -> 1
add(2) -> 3
'''
[gate.generate]
cases = 3
length = [5, 10]
weights = { add = 1 }

[[gate]]
title = "Take"
minutes = 10
statement = "Take."
[[gate.case]]
name = "take from empty"
run = '''
take() -> err(empty)
'''
"#;

    fn load(text: &str) -> std::result::Result<Problem, Located> {
        parse("counter", Path::new("problems/counter"), Path::new("problem.toml"), text)
    }

    #[test]
    fn a_good_problem_loads() {
        let p = load(GOOD).unwrap();
        assert_eq!(p.gates.len(), 2);
        assert_eq!(p.gates[0].cases[0].steps.len(), 3);
        assert_eq!(
            p.signature.schema().canonical_text(),
            "problem counter\nerrors empty\nnew()\nadd(n: i64) -> i64\ntake() -> result<i64>\n"
        );
    }

    #[test]
    fn a_script_error_points_into_the_file() {
        let bad = GOOD.replace("add(2) -> 3", "add(2) -> \"x\"");
        let e = load(&bad).unwrap_err();
        assert_eq!(e.line, 22, "{e}");
        assert_eq!(e.column, 11, "{e}");
        assert!(e.message.contains("expected i64"), "{e}");
    }

    #[test]
    fn a_bad_boundary_key_is_positioned() {
        let e = load(&GOOD.replace("n = { ints = [-5, 5] }", "n = { ints = [-5, 5], edges = [0, 9] }")).unwrap_err();
        assert_eq!((e.line, e.column), (12, 5), "{e}");
        assert!(e.message.contains("generate.params.n: edge 9 is outside `ints` [-5, 5]"), "{e}");
        assert!(load(&GOOD.replace("n = { ints = [-5, 5] }", "n = { ints = [-5, 5], edges = [-5, 0, 5] }")).is_ok());
    }

    #[test]
    fn malformed_toml_is_positioned() {
        let e = load("format_version = 1\ntitle = \n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.to_string().starts_with("problem.toml:2:"), "{e}");
    }

    #[test]
    fn later_gate_ops_are_refused_in_earlier_cases() {
        let bad = GOOD.replace("add(2) -> 3", "take() -> 3");
        let e = load(&bad).unwrap_err();
        assert!(e.message.contains("which gate 2 introduces"), "{e}");
    }

    #[test]
    fn unknown_fields_and_versions_are_refused() {
        let e = load(&GOOD.replace("summary", "sumary")).unwrap_err();
        assert!(e.message.contains("sumary"), "{e}");
        let e = load(&GOOD.replace("format_version = 1", "format_version = 9")).unwrap_err();
        assert!(e.message.contains("format_version 9"), "{e}");
        assert_eq!(e.line, 2);
    }

    #[test]
    fn weights_need_domains() {
        let e = load(&GOOD.replace("n = { ints = [-5, 5] }", "")).unwrap_err();
        assert!(e.message.contains("needs a domain for `n`"), "{e}");
    }
}
