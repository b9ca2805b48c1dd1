//! Problems as data: `problems/<id>/problem.toml` is read into a raw serde
//! mirror, then validated into [`Problem`]. Every validation error names the
//! file, line and column.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use toml::Spanned;

use crate::base::diag::Located;
use crate::problem::contract_source::{self, Contract};
use crate::problem::domain::{Domain, GenSpec, domain_for};
use crate::problem::scale::{RawScale, ScaleCheck, ScaleError};
use crate::problem::script::{self, Call, Step};
use crate::problem::signature::may_use;
use crate::problem::signature::{OpDef, Signature};

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
    /// The contract module that declares the operations, relative to this
    /// file's folder (default: the contract crate's `src/<id>.rs`).
    #[serde(default)]
    contract: Option<Spanned<String>>,
    /// Operations the contract runs on a thread with a stack of this many
    /// KiB (a helper such as the spreadsheet's `fill_chain`).
    #[serde(default)]
    stack_kib: BTreeMap<String, Spanned<u32>>,
    /// Keys of an older layout, refused with a pointer to the contract.
    #[serde(default)]
    ops: Option<Spanned<toml::Value>>,
    #[serde(default)]
    errors: Option<Spanned<toml::Value>>,
    #[serde(default)]
    constructor: Option<Spanned<toml::Value>>,
    #[serde(default)]
    generate: RawGenerate,
    #[serde(rename = "gate")]
    gates: Vec<Spanned<RawGate>>,
    #[serde(default, rename = "mutant")]
    mutants: Vec<Spanned<RawMutant>>,
    #[serde(default, rename = "variant")]
    variants: Vec<Spanned<RawVariant>>,
    /// Gates per session path when the gates form a graph (default 4).
    #[serde(default)]
    path_length: Option<Spanned<usize>>,
    /// The three questions of the first ninety seconds, in this problem's
    /// terms (default: the seed's three).
    #[serde(default)]
    first_ninety: Option<Spanned<Vec<Question>>>,
}

/// A question of the first ninety seconds, with why its answer matters.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    pub question: String,
    pub why: String,
}

/// How many questions the first ninety seconds ask.
pub const NINETY_QUESTIONS: usize = 3;

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
    /// The gates (1-based, in file order, all above this one) this gate
    /// builds on. Absent: the gate right above it (a linear problem).
    #[serde(default)]
    builds_on: Option<Spanned<Vec<usize>>>,
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
    /// Its operations are called on one shared instance from several
    /// threads at once (`&self`), and judged for linearizability.
    #[serde(default)]
    concurrent: Option<Spanned<bool>>,
    /// A concurrent gate's threads per generated case (2 to 4; default 3).
    #[serde(default)]
    threads: Option<Spanned<usize>>,
    /// How often a concurrent case runs, each time on a fresh instance
    /// with other start offsets (default 200).
    #[serde(default)]
    repeat: Option<Spanned<usize>>,
    /// A parameter of every operation of a concurrent gate whose values
    /// name independent parts of the state (`"key"`): the history is
    /// checked one value at a time.
    #[serde(default)]
    independent: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    name: Spanned<String>,
    run: Spanned<String>,
    /// A concurrent case: one script per thread, without results (the run
    /// script is the setup, called before the threads start).
    #[serde(default)]
    threads: Option<Spanned<Vec<Spanned<String>>>>,
    /// A concurrent case's runs, instead of its gate's `repeat`.
    #[serde(default)]
    repeat: Option<Spanned<usize>>,
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
struct RawVariant {
    name: String,
    choice: String,
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
    /// A concurrent case's thread scripts (empty for a sequential case,
    /// whose `steps` are all there is; here `steps` is the setup).
    pub threads: Vec<Vec<Call>>,
    /// A concurrent case's own runs, where it sets them (else the gate's).
    pub repeat: Option<usize>,
}

/// How a concurrent gate's cases run (see `judge::race`).
#[derive(Clone, Debug, PartialEq)]
pub struct Concurrency {
    /// Threads of a generated case.
    pub threads: usize,
    /// Runs of each case, each on a fresh instance.
    pub repeat: usize,
    /// The parameter whose values partition the state, if any.
    pub independent: Option<String>,
}

/// Threads of a concurrent case, at least and at most.
pub const THREADS: std::ops::RangeInclusive<usize> = 2..=4;
/// Runs of a concurrent case, at most.
pub const MAX_REPEAT: usize = 5000;

#[derive(Clone, Debug)]
pub struct Gate {
    pub number: usize,
    pub title: String,
    /// The gates this one builds on directly (empty for gate 1).
    pub builds_on: Vec<usize>,
    /// Every gate this one builds on, directly or not: its operations are
    /// the ones this gate's cases, generators and scale checks may use.
    pub requires: BTreeSet<usize>,
    pub minutes: u32,
    pub statement: String,
    pub hints: Vec<String>,
    pub followups: Vec<Followup>,
    pub cases: Vec<FixedCase>,
    pub generate: Option<GenSpec>,
    /// Cost claims checked at growing sizes (`[[gate.scale]]`).
    pub scale: Vec<ScaleCheck>,
    /// A concurrent gate's settings; `None` for a sequential gate.
    pub concurrency: Option<Concurrency>,
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

/// A correct solution that takes the other side of a choice the statements
/// leave open (`[[variant]]`): the reference with a few textual edits, like a
/// mutant's. `audit` requires it to pass every gate on every seed it tries,
/// so no generated case turns the reference's choice into a hidden rule.
#[derive(Clone, Debug)]
pub struct Variant {
    pub name: String,
    /// The open choice it flips, in one sentence.
    pub choice: String,
    pub edits: Vec<Edit>,
}

impl Variant {
    /// The variant as the mutant machinery sees it (`Mutant::apply`,
    /// `compile::mutant_crate`): edits of the reference, under a crate name
    /// of its own (`variant_<name>`), expected at no gate.
    pub fn as_mutant(&self, problem_dir: &Path) -> Mutant {
        let name = format!("variant_{}", self.name);
        Mutant {
            dir: problem_dir.join("mutants").join(&name),
            name,
            gate: 0,
            mistake: format!("VARIANT, a correct solution: {}", self.choice),
            caught_by: None,
            edits: self.edits.clone(),
        }
    }
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
    /// How messages name it: `mutant `x``, or `variant `x`` for a variant
    /// seen through [`Variant::as_mutant`].
    fn label(&self) -> String {
        match self.name.strip_prefix("variant_") {
            Some(v) if self.gate == 0 => format!("variant `{v}`"),
            _ => format!("mutant `{}`", self.name),
        }
    }

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
                        format!("{}: edit {} does not match the reference's src/lib.rs", self.label(), i + 1),
                    ));
                }
                n => {
                    return Err((
                        i,
                        format!(
                            "{}: edit {} matches the reference's src/lib.rs {n} times; add context to make it unique",
                            self.label(),
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
    /// Correct solutions that flip an open choice (`[[variant]]`).
    pub variants: Vec<Variant>,
    /// Gates in one session's path: every gate for a linear problem, the
    /// file's `path_length` (default 4) for a graph.
    pub path_length: usize,
    /// The first ninety seconds' questions (`[[first_ninety]]`); empty: the
    /// seed's own three.
    pub first_ninety: Vec<Question>,
}

/// Paths enumerated at most (a guard against a pathological graph).
pub const MAX_PATHS: usize = 10_000;

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

    /// The reference as a candidate may read it after a session that
    /// reached `reached`: cut to those gates (see `refcut`), without the
    /// harness's own `oracle` argument. `None` when the reference has no
    /// gate markers and `reached` is not every gate: whole, it would show
    /// the code of gates never reached. An error names the file and line of
    /// a malformed marker.
    pub fn reference_cut(&self, reached: &BTreeSet<usize>) -> Result<Option<String>> {
        let file = self.reference_dir().join("src/lib.rs");
        let text = fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
        if reached.len() < self.gates.len() && !crate::problem::refcut::has_markers(&text) {
            return Ok(None);
        }
        let cut = crate::problem::refcut::cut(&text, reached, self.gates.len())
            .map_err(|(line, why)| anyhow::anyhow!("{}:{line}: {why}", file.display()))?;
        Ok(Some(cut.replace(", oracle);", ");")))
    }

    /// Every set of gates a session can have reached: each beginning of
    /// each path (for a linear problem, the first k gates), smallest first,
    /// with a path and length that reach it.
    pub fn reachable_gate_sets(&self) -> Vec<(BTreeSet<usize>, Vec<usize>, usize)> {
        let paths = if self.is_graph() { self.paths() } else { vec![(1..=self.gates.len()).collect()] };
        let mut sets: Vec<(BTreeSet<usize>, Vec<usize>, usize)> = Vec::new();
        for path in paths {
            for k in 1..=path.len() {
                let set: BTreeSet<usize> = path[..k].iter().copied().collect();
                if !sets.iter().any(|(s, _, _)| *s == set) {
                    sets.push((set, path.clone(), k));
                }
            }
        }
        sets.sort_by(|a, b| (a.0.len(), &a.0).cmp(&(b.0.len(), &b.0)));
        sets
    }
    pub fn total_minutes(&self) -> u32 {
        self.gates.iter().map(|g| g.minutes).sum()
    }
    /// Whether any gate names what it builds on (else one linear path).
    pub fn is_graph(&self) -> bool {
        self.gates.iter().enumerate().any(|(i, g)| g.builds_on != linear_builds_on(i + 1))
    }

    /// Whether an operation introduced at `op_gate` may be used by gate
    /// `gate`'s cases, generators and scale checks.
    pub fn gate_may_use(&self, gate: usize, op_gate: usize) -> bool {
        may_use(&self.gates[gate - 1].requires, gate, op_gate)
    }

    /// Every path: sequences of `path_length` gates starting at gate 1 in
    /// which each gate comes after every gate it builds on. In
    /// lexicographic order, so the first is the default path.
    pub fn paths(&self) -> Vec<Vec<usize>> {
        enumerate_paths(&self.gates.iter().map(|g| g.builds_on.clone()).collect::<Vec<_>>(), self.path_length)
    }

    /// The path `check` and `audit` judge when none is asked for: the
    /// first in lexicographic order (for a linear problem, all its gates).
    pub fn default_path(&self) -> Vec<usize> {
        self.paths().into_iter().next().unwrap_or_else(|| (1..=self.gates.len()).collect())
    }

    /// Checks that `path` is a path of this problem; the error says why not.
    pub fn check_path(&self, path: &[usize]) -> std::result::Result<(), String> {
        if path.len() != self.path_length {
            return Err(format!("a path of `{}` has {} gates, not {}", self.id, self.path_length, path.len()));
        }
        self.check_prefix(path)
    }

    /// Checks that `path` is the beginning of some path of this problem
    /// (a session's path so far); the error says why not.
    pub fn check_prefix(&self, path: &[usize]) -> std::result::Result<(), String> {
        if path.len() > self.path_length {
            return Err(format!("a path of `{}` has {} gates, not {}", self.id, self.path_length, path.len()));
        }
        if path.first() != Some(&1) {
            return Err("a path starts at gate 1".into());
        }
        for (i, &g) in path.iter().enumerate() {
            if g == 0 || g > self.gates.len() {
                return Err(format!("gate {g} does not exist (there are {})", self.gates.len()));
            }
            if path[..i].contains(&g) {
                return Err(format!("gate {g} appears twice"));
            }
            if let Some(missing) = self.gates[g - 1].builds_on.iter().find(|b| !path[..i].contains(b)) {
                return Err(format!("gate {g} builds on gate {missing}, which must come before it"));
            }
        }
        if !self.paths().iter().any(|p| p.starts_with(path)) {
            return Err(format!("no path of {} gates continues it", self.path_length));
        }
        Ok(())
    }

    /// The gates of `path` as problem gates, in its order (unknown numbers
    /// left out).
    pub fn gates_of<'a>(&'a self, path: &'a [usize]) -> impl Iterator<Item = &'a Gate> + 'a {
        path.iter().filter_map(|&g| self.gates.get(g.wrapping_sub(1)))
    }

    /// A session's time budget by default: every gate's minutes for a
    /// linear problem; for a graph, the longest path's (so the budget
    /// suffices whichever follow-ups are drawn).
    pub fn session_minutes(&self) -> u32 {
        if !self.is_graph() {
            return self.total_minutes();
        }
        self.paths().iter().map(|p| self.gates_of(p).map(|g| g.minutes).sum()).max().unwrap_or(0)
    }

    /// Whether any of `gates` (gate numbers) generates cases.
    pub fn has_generated_cases(&self, gates: &[usize]) -> bool {
        gates.iter().filter_map(|&g| self.gates.get(g.wrapping_sub(1))).any(|g| g.generate.is_some())
    }

    /// Loads and validates `<problems_dir>/<id>/problem.toml`. The id must
    /// be a plain name: a path such as `../problems/x` is refused before it
    /// can name a folder outside `problems/` (or put a solution inside it).
    /// `contract_dir` is the contract crate, whose `src/<id>.rs` declares
    /// the problem's operations unless problem.toml names another file.
    pub fn load(problems_dir: &Path, contract_dir: &Path, id: &str) -> Result<Problem> {
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
        let problem = parse(id, &dir, &file, &text, contract_dir)?;
        // Every mutant's and variant's edits must apply to the reference
        // as it is now.
        let variants: Vec<Mutant> = problem.variants.iter().map(|v| v.as_mutant(&dir)).collect();
        if problem.mutants.iter().chain(&variants).any(|m| !m.edits.is_empty()) {
            let path = problem.reference_dir().join("src/lib.rs");
            let reference = fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
            for m in problem.mutants.iter().chain(&variants) {
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

/// How `parse`'s parts say where a problem is.
type At<'a> = &'a dyn Fn(Range<usize>, String) -> Located;
/// The same for a place in another file, by offset.
type At1<'a> = &'a dyn Fn(usize, String) -> Located;
type Parsed<T> = std::result::Result<T, Located>;

/// Parses a problem file's text, reading its contract module from
/// `contract_dir` (or where the file's `contract` key says). `file` is used
/// in error messages only.
pub fn parse(id: &str, dir: &Path, file: &Path, text: &str, contract_dir: &Path) -> Parsed<Problem> {
    let at = |span: Range<usize>, msg: String| Located::at(file, text, span.start, msg);
    let raw = raw_problem(file, text)?;
    let (contract_file, span) = match &raw.contract {
        Some(c) => (dir.join(c.get_ref()), c.span()),
        None => (contract_dir.join("src").join(format!("{id}.rs")), 0..0),
    };
    let contract_text = fs::read_to_string(&contract_file).map_err(|e| {
        at(
            span,
            format!("cannot read the contract module {}, which declares the operations: {e}", contract_file.display()),
        )
    })?;
    build(id, dir, file, text, raw, &contract_file, &contract_text)
}

/// The file's serde mirror, of a format this harness reads.
fn raw_problem(file: &Path, text: &str) -> Parsed<RawProblem> {
    let raw: RawProblem = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        Located::at(file, text, offset, e.message().trim().to_string())
    })?;
    if *raw.format_version.get_ref() != FORMAT_VERSION {
        return Err(Located::at(
            file,
            text,
            raw.format_version.span().start,
            format!(
                "format_version {} is not supported: this harness reads format_version {FORMAT_VERSION}",
                raw.format_version.get_ref()
            ),
        ));
    }
    Ok(raw)
}

/// [`parse`], with the contract module's text given.
#[cfg(test)]
fn parse_with_contract(
    id: &str,
    dir: &Path,
    file: &Path,
    text: &str,
    contract_file: &Path,
    contract_text: &str,
) -> Parsed<Problem> {
    build(id, dir, file, text, raw_problem(file, text)?, contract_file, contract_text)
}

/// The problem from its file's mirror and its contract module's text.
fn build(
    id: &str,
    dir: &Path,
    file: &Path,
    text: &str,
    raw: RawProblem,
    contract_file: &Path,
    contract_text: &str,
) -> Parsed<Problem> {
    let at = |span: Range<usize>, msg: String| Located::at(file, text, span.start, msg);

    let gate_count = raw.gates.len();
    if gate_count == 0 {
        return Err(at(0..0, "a problem needs at least one [[gate]]".into()));
    }
    let Graph { builds_on, requires, path_length } = gate_graph(&raw, &at)?;

    let contract = contract_source::parse(contract_file, contract_text)?;
    let in_contract = |offset: usize, msg: String| Located::at(contract_file, contract_text, offset, msg);
    let signature = signature(id, &raw, contract, &at, &in_contract)?;

    let domains = parse_domains(&raw, &at)?;

    let mut gates = Vec::new();
    for (index, raw_gate) in raw.gates.iter().enumerate() {
        let number = index + 1;
        let gate_span = raw_gate.span();
        let g = raw_gate.get_ref();
        let concurrency = concurrency(g, number, &signature, &at)?;
        let cases = gate_cases(g, number, &requires[index], concurrency.is_some(), &signature, file, text, &at)?;
        let generate = match &g.generate {
            None => None,
            Some(spec) => {
                Some(gen_spec(spec, number, &requires[index], concurrency.is_some(), &signature, &domains, &at)?)
            }
        };
        let scale = gate_scale(g, number, &requires[index], &cases, &signature, file, text, &at)?;
        if cases.is_empty() && generate.is_none() {
            return Err(at(gate_span, format!("gate {number} has no cases: add [[gate.case]] or [gate.generate]")));
        }
        gates.push(Gate {
            number,
            title: g.title.clone(),
            builds_on: builds_on[index].clone(),
            requires: requires[index].clone(),
            minutes: g.minutes,
            statement: g.statement.clone(),
            hints: g.hints.clone(),
            followups: g.followups.clone(),
            cases,
            generate,
            scale,
            concurrency,
        });
    }

    let first_ninety = match &raw.first_ninety {
        None => Vec::new(),
        Some(q) if q.get_ref().len() != NINETY_QUESTIONS => {
            return Err(at(
                q.span(),
                format!(
                    "first_ninety asks {NINETY_QUESTIONS} questions, not {} (leave it out for the seed's own)",
                    q.get_ref().len()
                ),
            ));
        }
        Some(q) => q.get_ref().clone(),
    };

    let mutants = parse_mutants(&raw, dir, &gates, &at)?;
    let variants = parse_variants(&raw, &at)?;

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
        variants,
        path_length,
        first_ninety,
    })
}

/// The gate graph, checked: each gate's direct `builds_on`, the gates it
/// requires (their transitive closure), and the path length.
struct Graph {
    builds_on: Vec<Vec<usize>>,
    requires: Vec<BTreeSet<usize>>,
    path_length: usize,
}

/// [`Graph`] from the gates' `builds_on` and `path_length`.
fn gate_graph(raw: &RawProblem, at: At) -> Parsed<Graph> {
    let gate_count = raw.gates.len();
    // The graph: each gate builds only on gates above it, so there can be
    // no cycle; `requires` is the transitive closure.
    let mut builds_on: Vec<Vec<usize>> = Vec::new();
    let mut requires: Vec<BTreeSet<usize>> = Vec::new();
    for (index, raw_gate) in raw.gates.iter().enumerate() {
        let number = index + 1;
        let direct = match &raw_gate.get_ref().builds_on {
            None => linear_builds_on(number),
            Some(list) => {
                let mut direct = Vec::new();
                for &b in list.get_ref() {
                    if b == 0 || b > gate_count {
                        return Err(at(list.span(), format!("gate {number} builds on gate {b}, which does not exist")));
                    }
                    if b >= number {
                        return Err(at(
                            list.span(),
                            format!(
                                "gate {number} builds on gate {b}: a gate builds only on gates above it in the file \
                                 (this also rules out cycles)"
                            ),
                        ));
                    }
                    if direct.contains(&b) {
                        return Err(at(list.span(), format!("gate {number} names gate {b} twice in builds_on")));
                    }
                    direct.push(b);
                }
                if number > 1 && direct.is_empty() {
                    return Err(at(
                        list.span(),
                        format!("gate {number} builds on nothing: only gate 1, the root, may (name at least [1])"),
                    ));
                }
                if number == 1 && !direct.is_empty() {
                    return Err(at(list.span(), "gate 1 is the root: it builds on nothing".into()));
                }
                direct
            }
        };
        let mut closure = BTreeSet::new();
        for &b in &direct {
            closure.insert(b);
            closure.extend(requires[b - 1].iter().copied());
        }
        builds_on.push(direct);
        requires.push(closure);
    }
    let is_graph = builds_on.iter().enumerate().any(|(i, b)| *b != linear_builds_on(i + 1));
    let path_length = match &raw.path_length {
        Some(n) if !is_graph => {
            return Err(at(n.span(), "path_length is for gates that form a graph (no gate names builds_on)".into()));
        }
        Some(n) if *n.get_ref() == 0 || *n.get_ref() > gate_count => {
            return Err(at(n.span(), format!("path_length {} is not between 1 and {gate_count}", n.get_ref())));
        }
        Some(n) => *n.get_ref(),
        None if is_graph => 4.min(gate_count),
        None => gate_count,
    };
    if is_graph && enumerate_paths(&builds_on, path_length).is_empty() {
        return Err(at(
            raw.gates[0].span(),
            format!(
                "these gates form no path of {path_length}: a path starts at gate 1 and each gate comes after the gates it builds on"
            ),
        ));
    }
    Ok(Graph { builds_on, requires, path_length })
}

/// The operations the contract module declares, checked against the
/// gates, with the file's small stacks.
fn signature(id: &str, raw: &RawProblem, contract: Contract, at: At, in_contract: At1) -> Parsed<Signature> {
    let retired = [("ops", &raw.ops), ("errors", &raw.errors), ("constructor", &raw.constructor)];
    if let Some((key, old)) = retired.iter().find_map(|(k, v)| v.as_ref().map(|v| (k, v))) {
        return Err(at(
            old.span(),
            format!(
                "`{key}` is no longer read: the contract module declares the operations, their types, the \
                 constructor and the errors (contract/src/{id}.rs, or the file `contract = \"...\"` names)"
            ),
        ));
    }
    if contract.problem != id {
        return Err(in_contract(
            contract.problem_offset,
            format!("this declares problem `{}`, but it is read for problem `{id}`", contract.problem),
        ));
    }
    let gate_count = raw.gates.len();
    let concurrent: Vec<usize> = (1..=gate_count)
        .filter(|n| raw.gates[n - 1].get_ref().concurrent.as_ref().is_some_and(|c| *c.get_ref()))
        .collect();
    let mut ops = BTreeMap::new();
    for op in contract.ops {
        let name = &op.name;
        let gate = match (op.gate, concurrent.as_slice()) {
            (Some(g), _) => g,
            (None, [g]) => *g,
            (None, _) => {
                return Err(in_contract(
                    op.offset,
                    format!(
                        "`{name}` is a shared operation, and problem.toml has {} concurrent gates: say which with a \
                         `// Gate N` comment",
                        concurrent.len()
                    ),
                ));
            }
        };
        if gate == 0 || gate > gate_count {
            return Err(in_contract(
                op.offset,
                format!("`{name}`: gate {gate} does not exist (there are {gate_count})"),
            ));
        }
        let def = OpDef { gate, params: op.params, ret: op.ret, stack_kib: None, shared: op.shared };
        ops.insert(op.name, def);
    }
    for (name, kib) in &raw.stack_kib {
        match ops.get_mut(name) {
            Some(def) => def.stack_kib = Some(*kib.get_ref()),
            None => return Err(at(kib.span(), format!("stack_kib: the contract declares no operation `{name}`"))),
        }
    }
    Ok(Signature { problem: id.to_string(), ctor: contract.ctor, ops, errors: contract.errors })
}

/// A gate's fixed cases, each script checked against the operations the
/// gate may use.
#[allow(clippy::too_many_arguments)]
fn gate_cases(
    g: &RawGate,
    number: usize,
    required: &BTreeSet<usize>,
    concurrent: bool,
    signature: &Signature,
    file: &Path,
    text: &str,
    at: At,
) -> Parsed<Vec<FixedCase>> {
    let mut cases = Vec::new();
    for case in &g.cases {
        let steps = script::parse(case.run.get_ref(), signature)
            .map_err(|e| Located::at(file, text, script_offset(text, case.run.span(), e.line, e.column), e.message))?;
        for step in &steps {
            let op_gate = signature.ops.get(&step.call.op).map_or(1, |d| d.gate);
            if !may_use(required, number, op_gate) {
                return Err(at(
                    case.run.span(),
                    format!(
                        "case `{}` of gate {number} uses `{}`, which gate {op_gate} introduces{}",
                        case.name.get_ref(),
                        step.call.op,
                        not_built_on(number, op_gate)
                    ),
                ));
            }
        }
        if cases.iter().any(|c: &FixedCase| &c.name == case.name.get_ref()) {
            return Err(at(case.name.span(), format!("gate {number} has two cases named `{}`", case.name.get_ref())));
        }
        let threads = match &case.threads {
            None => Vec::new(),
            Some(list) => thread_scripts(list, case.name.get_ref(), number, concurrent, signature, file, text)?,
        };
        let repeat = match &case.repeat {
            None => None,
            Some(r) if threads.is_empty() => {
                return Err(at(
                    r.span(),
                    format!("case `{}`: `repeat` is for a concurrent case (one with `threads`)", case.name.get_ref()),
                ));
            }
            Some(r) if *r.get_ref() == 0 || *r.get_ref() > MAX_REPEAT => {
                return Err(at(
                    r.span(),
                    format!("case `{}`: repeat = {}: use 1 to {MAX_REPEAT}", case.name.get_ref(), r.get_ref()),
                ));
            }
            Some(r) => Some(*r.get_ref()),
        };
        cases.push(FixedCase { name: case.name.get_ref().clone(), steps, threads, repeat });
    }
    Ok(cases)
}

/// A gate's `[gate.generate]`, checked: bounds, and a domain for every
/// parameter of every weighted operation and of the constructor.
fn gen_spec(
    spec: &Spanned<RawGen>,
    number: usize,
    required: &BTreeSet<usize>,
    concurrent: bool,
    signature: &Signature,
    domains: &BTreeMap<String, Domain>,
    at: At,
) -> Parsed<GenSpec> {
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
            format!("gate {number}: generate.cases allows at most {MAX_GENERATED_CASES} cases, not {cases}"),
        ));
    }
    let mut weights = Vec::new();
    for (op, w) in &spec.weights {
        let def = signature.ops.get(op).ok_or_else(|| {
            at(w.span(), format!("weights: unknown operation `{op}` (known: {})", signature.op_names()))
        })?;
        if concurrent && !def.shared {
            return Err(at(
                w.span(),
                format!(
                    "weights: gate {number} is concurrent, so its generated threads call only shared \
                         operations (a concurrent gate's own); `{op}` takes `&mut self`"
                ),
            ));
        }
        if !may_use(required, number, def.gate) {
            return Err(at(
                w.span(),
                format!(
                    "weights: `{op}` belongs to gate {}, not unlocked at gate {number}{}",
                    def.gate,
                    not_built_on(number, def.gate)
                ),
            ));
        }
        for (param, ty) in &def.params {
            let domain = domain_for(domains, op, param).ok_or_else(|| {
                at(w.span(), format!("weights: `{op}` needs a domain for `{param}`: add generate.params.{param}"))
            })?;
            domain.check(ty).map_err(|e| at(w.span(), format!("generate.params for `{op}.{param}`: {e}")))?;
        }
        if *w.get_ref() > 0 {
            weights.push((op.clone(), *w.get_ref()));
        }
    }
    if weights.is_empty() {
        return Err(at(span, format!("gate {number}: generate.weights gives no operation a weight")));
    }
    for (param, ty) in &signature.ctor {
        let domain = domain_for(domains, "new", param).ok_or_else(|| {
            at(span.clone(), format!("the constructor's `{param}` needs a domain: add generate.params.{param}"))
        })?;
        domain.check(ty).map_err(|e| at(span.clone(), format!("generate.params for `new.{param}`: {e}")))?;
    }
    Ok(GenSpec { cases: cases as usize, length: (lo, hi), seed: spec.seed, weights })
}

/// A gate's scale checks, each validated, no name shared with another
/// check or a case.
#[allow(clippy::too_many_arguments)]
fn gate_scale(
    g: &RawGate,
    number: usize,
    required: &BTreeSet<usize>,
    cases: &[FixedCase],
    signature: &Signature,
    file: &Path,
    text: &str,
    at: At,
) -> Parsed<Vec<ScaleCheck>> {
    let mut scale: Vec<ScaleCheck> = Vec::new();
    for raw in &g.scale {
        let check = raw.validate(signature, number, required).map_err(|e| match e {
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
    Ok(scale)
}

/// `[generate.params]`: each parameter's domain.
fn parse_domains(raw: &RawProblem, at: At) -> Parsed<BTreeMap<String, Domain>> {
    let mut domains = BTreeMap::new();
    for (name, value) in &raw.generate.params {
        let domain =
            Domain::from_toml(value.get_ref()).map_err(|e| at(value.span(), format!("generate.params.{name}: {e}")))?;
        domains.insert(name.clone(), domain);
    }
    Ok(domains)
}

/// The mutants, checked against the gates (a named `caught_by` exists).
fn parse_mutants(raw: &RawProblem, dir: &Path, gates: &[Gate], at: At) -> Parsed<Vec<Mutant>> {
    let gate_count = gates.len();
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
    Ok(mutants)
}

/// The variants: named, with edits and the choice they flip.
fn parse_variants(raw: &RawProblem, at: At) -> Parsed<Vec<Variant>> {
    let mut variants: Vec<Variant> = Vec::new();
    for v in &raw.variants {
        let span = v.span();
        let v = v.get_ref();
        if !is_id(&v.name) {
            return Err(at(span, format!("variant `{}`: a name is lowercase letters, digits and `_`", v.name)));
        }
        if variants.iter().any(|other| other.name == v.name) {
            return Err(at(span, format!("two variants are named `{}`", v.name)));
        }
        if v.edits.is_empty() {
            return Err(at(span, format!("variant `{}` has no [[variant.edit]]: it would be the reference", v.name)));
        }
        if v.choice.trim().is_empty() {
            return Err(at(span, format!("variant `{}`: say the open choice it flips in `choice`", v.name)));
        }
        variants.push(Variant {
            name: v.name.clone(),
            choice: v.choice.clone(),
            edits: v
                .edits
                .iter()
                .map(|e| Edit { from: e.from.get_ref().clone(), to: e.to.clone(), span: e.from.span() })
                .collect(),
        });
    }
    Ok(variants)
}

/// A gate's concurrency settings, checked: `threads`, `repeat` and
/// `independent` only with `concurrent = true`, within their bounds, and
/// `independent` a parameter of every operation the gate introduces.
fn concurrency(
    g: &RawGate,
    number: usize,
    signature: &Signature,
    at: &dyn Fn(Range<usize>, String) -> Located,
) -> std::result::Result<Option<Concurrency>, Located> {
    let on = g.concurrent.as_ref().is_some_and(|c| *c.get_ref());
    if !on {
        let stray = [
            g.threads.as_ref().map(|t| ("threads", t.span())),
            g.repeat.as_ref().map(|r| ("repeat", r.span())),
            g.independent.as_ref().map(|i| ("independent", i.span())),
        ];
        if let Some((name, span)) = stray.into_iter().flatten().next() {
            return Err(at(span, format!("gate {number}: `{name}` is for a concurrent gate: add `concurrent = true`")));
        }
        return Ok(None);
    }
    let threads = g.threads.as_ref().map_or(3, |t| *t.get_ref());
    if let Some(t) = &g.threads
        && !THREADS.contains(&threads)
    {
        return Err(at(
            t.span(),
            format!("gate {number}: threads = {threads}: use {} to {}", THREADS.start(), THREADS.end()),
        ));
    }
    let repeat = g.repeat.as_ref().map_or(200, |r| *r.get_ref());
    if let Some(r) = &g.repeat
        && (repeat == 0 || repeat > MAX_REPEAT)
    {
        return Err(at(r.span(), format!("gate {number}: repeat = {repeat}: use 1 to {MAX_REPEAT}")));
    }
    let own: Vec<(&String, &OpDef)> = signature.ops.iter().filter(|(_, d)| d.gate == number).collect();
    if own.is_empty() {
        let span = g.concurrent.as_ref().map_or(0..0, |c| c.span());
        return Err(at(
            span,
            format!("gate {number} is concurrent but introduces no operation: its threads call the ones it adds"),
        ));
    }
    let independent = match &g.independent {
        None => None,
        Some(param) => {
            let name = param.get_ref();
            if let Some((op, _)) = own.iter().find(|(_, d)| !d.params.iter().any(|(p, _)| p == name)) {
                return Err(at(
                    param.span(),
                    format!(
                        "gate {number}: independent = \"{name}\", but `{op}` has no parameter `{name}`: every \
                         operation of the gate must name the part of the state it touches"
                    ),
                ));
            }
            Some(name.clone())
        }
    };
    Ok(Some(Concurrency { threads, repeat, independent }))
}

/// A concurrent case's thread scripts: 2 to 4, each calling only shared
/// operations, without results (which order the calls took is what the
/// judge finds out).
fn thread_scripts(
    list: &Spanned<Vec<Spanned<String>>>,
    case: &str,
    number: usize,
    concurrent: bool,
    signature: &Signature,
    file: &Path,
    text: &str,
) -> std::result::Result<Vec<Vec<Call>>, Located> {
    let at = |span: Range<usize>, msg: String| Located::at(file, text, span.start, msg);
    if !concurrent {
        return Err(at(
            list.span(),
            format!(
                "case `{case}`: `threads` is for a concurrent gate, and gate {number} is not (`concurrent = true`)"
            ),
        ));
    }
    let scripts = list.get_ref();
    if !THREADS.contains(&scripts.len()) {
        return Err(at(
            list.span(),
            format!("case `{case}`: {} threads: use {} to {}", scripts.len(), THREADS.start(), THREADS.end()),
        ));
    }
    let mut threads = Vec::new();
    for script in scripts {
        let calls = script::parse_calls(script.get_ref(), signature)
            .map_err(|e| Located::at(file, text, script_offset(text, script.span(), e.line, e.column), e.message))?;
        for call in &calls {
            let shared = signature.ops.get(&call.op).is_some_and(|d| d.shared && d.gate == number);
            if !shared {
                return Err(at(
                    script.span(),
                    format!("case `{case}`: a thread calls only gate {number}'s shared operations, not `{}`", call.op),
                ));
            }
        }
        threads.push(calls);
    }
    Ok(threads)
}

/// What a gate of a linear problem builds on: the gate above it.
fn linear_builds_on(number: usize) -> Vec<usize> {
    if number > 1 { vec![number - 1] } else { Vec::new() }
}

/// The tail of an error about an operation a gate may not use.
fn not_built_on(number: usize, op_gate: usize) -> String {
    if op_gate < number { format!(", and gate {number} does not build on gate {op_gate}") } else { String::new() }
}

/// Every sequence of `len` gates from gate 1 in which each gate follows
/// all the gates it builds on (`builds_on[g - 1]`), lexicographic, at most
/// [`MAX_PATHS`].
fn enumerate_paths(builds_on: &[Vec<usize>], len: usize) -> Vec<Vec<usize>> {
    fn extend(builds_on: &[Vec<usize>], len: usize, path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if out.len() >= MAX_PATHS {
            return;
        }
        if path.len() == len {
            out.push(path.clone());
            return;
        }
        for g in 2..=builds_on.len() {
            if !path.contains(&g) && builds_on[g - 1].iter().all(|b| path.contains(b)) {
                path.push(g);
                extend(builds_on, len, path, out);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    if len == 0 || builds_on.is_empty() {
        return out;
    }
    let mut path = vec![1];
    extend(builds_on, len, &mut path, &mut out);
    out
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

/// Problems for other modules' unit tests.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    /// Parses a test problem `id` with `contract` as its contract module.
    pub(crate) fn parse_test(id: &str, text: &str, contract: &str) -> Parsed<Problem> {
        let dir = PathBuf::from(format!("/nonexistent/{id}"));
        parse_with_contract(id, &dir, &dir.join("problem.toml"), text, Path::new("contract.rs"), contract)
    }

    /// The contract of a problem whose one operation, `a()`, gate 1 adds.
    pub(crate) fn one_op_contract(id: &str) -> String {
        format!(
            "contract! {{ problem = \"{id}\"; errors = NoError;\n\
             pub trait P {{ fn new() -> Self;\n// Gate 1.\nfn a(&mut self); }} }}"
        )
    }

    /// A problem whose gate `i + 1` builds on `builds_on[i]` (gate 1's is
    /// ignored), with paths of `path_length`; one operation, a case each.
    /// A problem of `gates` gates and no `builds_on`: one path, in file
    /// order.
    pub(crate) fn linear_problem(gates: usize) -> Problem {
        let mut text = "format_version = 1\ntitle = \"L\"\nsummary = \"l\"\n".to_string();
        for i in 0..gates {
            text.push_str(&format!(
                "[[gate]]\ntitle = \"Gate {}\"\nminutes = 5\nstatement = \"s\"\ncase = [{{ name = \"c\", run = \"a()\" }}]\n",
                i + 1
            ));
        }
        parse_test("l", &text, &one_op_contract("l")).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    pub(crate) fn graph_problem(builds_on: &[&[usize]], path_length: usize) -> Problem {
        let mut text = format!("format_version = 1\ntitle = \"G\"\nsummary = \"g\"\npath_length = {path_length}\n");
        for (i, b) in builds_on.iter().enumerate() {
            text.push_str(&format!(
                "[[gate]]\ntitle = \"Gate {}\"\nminutes = 5\nstatement = \"s\"\ncase = [{{ name = \"c\", run = \"a()\" }}]\n",
                i + 1
            ));
            if i > 0 {
                let list: Vec<String> = b.iter().map(|g| g.to_string()).collect();
                text.push_str(&format!("builds_on = [{}]\n", list.join(", ")));
            }
        }
        parse_test("g", &text, &one_op_contract("g")).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
format_version = 1
title = "Counter"
summary = "Counts."

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

    /// GOOD's contract module.
    const CONTRACT: &str = r#"
error_kinds! { pub enum CounterError { Empty = "empty" } }
contract! {
    problem = "counter";
    errors = CounterError;
    pub trait Counter {
        fn new() -> Self;
        // Gate 1: adding.
        fn add(&mut self, n: i64) -> i64;
        // Gate 2: taking.
        fn take(&mut self) -> Result<i64, CounterError>;
    }
}
"#;

    fn load(text: &str) -> std::result::Result<Problem, Located> {
        load_with(text, CONTRACT)
    }

    fn load_with(text: &str, contract: &str) -> std::result::Result<Problem, Located> {
        parse_with_contract(
            "counter",
            Path::new("problems/counter"),
            Path::new("problem.toml"),
            text,
            Path::new("contract.rs"),
            contract,
        )
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
    fn the_operations_come_from_the_contract_and_its_mistakes_are_placed() {
        let p = load(GOOD).unwrap();
        assert_eq!((p.signature.ops["add"].gate, p.signature.ops["take"].gate), (1, 2));
        // The older layout is refused with a pointer, not silently ignored.
        let old = GOOD.replace("[generate.params]", "[ops]\nadd = { gate = 1 }\n\n[generate.params]");
        let e = load(&old).unwrap_err();
        assert!(e.message.contains("`ops` is no longer read: the contract module declares"), "{e}");
        assert_eq!(e.file, Path::new("problem.toml"));
        // A contract for another problem, or naming a gate the file lacks.
        let e = load_with(GOOD, &CONTRACT.replace("\"counter\"", "\"count\"")).unwrap_err();
        assert!(e.message.contains("declares problem `count`, but it is read for problem `counter`"), "{e}");
        assert_eq!((e.file.as_path(), e.line), (Path::new("contract.rs"), 4));
        let e = load_with(GOOD, &CONTRACT.replace("// Gate 2", "// Gate 3")).unwrap_err();
        assert!(e.message.contains("`take`: gate 3 does not exist (there are 2)"), "{e}");
        assert_eq!((e.file.as_path(), e.line), (Path::new("contract.rs"), 11));
        // A shared operation without a gate needs exactly one concurrent gate.
        let e = load_with(GOOD, &shared_contract().replace("// Gate 3.", "")).unwrap_err();
        assert!(e.message.contains("`bump` is a shared operation, and problem.toml has 0 concurrent gates"), "{e}");
        // Small stacks name operations the contract declares.
        let p = load(&GOOD.replace("[generate.params]", "[stack_kib]\ntake = 256\n\n[generate.params]")).unwrap();
        assert_eq!(p.signature.small_stacks(), [("take".to_string(), 256)]);
        let e = load(&GOOD.replace("[generate.params]", "[stack_kib]\ntale = 256\n\n[generate.params]")).unwrap_err();
        assert!(e.message.contains("stack_kib: the contract declares no operation `tale`"), "{e}");
    }

    #[test]
    fn a_missing_contract_module_is_named() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("counter")).unwrap();
        std::fs::write(root.path().join("counter/problem.toml"), GOOD).unwrap();
        let e = Problem::load(root.path(), &root.path().join("contract"), "counter").unwrap_err().to_string();
        assert!(e.contains("cannot read the contract module") && e.contains("contract/src/counter.rs"), "{e}");
        let moved = GOOD.replace("summary = \"Counts.\"", "summary = \"Counts.\"\ncontract = \"decl.rs\"");
        std::fs::write(root.path().join("counter/problem.toml"), moved).unwrap();
        std::fs::write(root.path().join("counter/decl.rs"), CONTRACT).unwrap();
        assert!(Problem::load(root.path(), Path::new("/nowhere"), "counter").is_ok());
    }

    #[test]
    fn a_script_error_points_into_the_file() {
        let bad = GOOD.replace("add(2) -> 3", "add(2) -> \"x\"");
        let e = load(&bad).unwrap_err();
        assert_eq!(e.line, 17, "{e}");
        assert_eq!(e.column, 11, "{e}");
        assert!(e.message.contains("expected i64"), "{e}");
    }

    #[test]
    fn a_bad_boundary_key_is_positioned() {
        let e = load(&GOOD.replace("n = { ints = [-5, 5] }", "n = { ints = [-5, 5], edges = [0, 9] }")).unwrap_err();
        assert_eq!((e.line, e.column), (7, 5), "{e}");
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
    fn a_problem_may_ask_its_own_three_questions() {
        assert!(load(GOOD).unwrap().first_ninety.is_empty());
        let q = |n: usize| {
            let one = "{ question = \"Q?\", why = \"W.\" }";
            format!("first_ninety = [{}]", vec![one; n].join(", "))
        };
        let p = load(&GOOD.replace("summary = \"Counts.\"", &format!("summary = \"Counts.\"\n{}", q(3)))).unwrap();
        assert_eq!(p.first_ninety[2], Question { question: "Q?".into(), why: "W.".into() });
        let e = load(&GOOD.replace("summary = \"Counts.\"", &format!("summary = \"Counts.\"\n{}", q(2)))).unwrap_err();
        assert!(e.message.contains("asks 3 questions, not 2"), "{e}");
        assert_eq!(e.line, 5, "{e}");
    }

    #[test]
    fn weights_need_domains() {
        let e = load(&GOOD.replace("n = { ints = [-5, 5] }", "")).unwrap_err();
        assert!(e.message.contains("needs a domain for `n`"), "{e}");
    }

    /// GOOD with two more gates: gate 3 builds on 1 only, gate 4 on 2 and 3.
    fn graph(extra: &str) -> String {
        format!(
            "{}\n[[gate]]\ntitle = \"Three\"\nbuilds_on = [1]\nminutes = 5\nstatement = \"x\"\n\
             [[gate.case]]\nname = \"adds again\"\nrun = 'add(1) -> 1'\n\
             [[gate]]\ntitle = \"Four\"\nbuilds_on = [2, 3]\nminutes = 5\nstatement = \"x\"\n\
             [[gate.case]]\nname = \"takes\"\nrun = 'take() -> err(empty)'\n",
            GOOD.replace("format_version = 1", &format!("format_version = 1\n{extra}"))
        )
    }

    #[test]
    fn a_linear_problem_is_one_path_of_all_its_gates() {
        let p = load(GOOD).unwrap();
        assert!(!p.is_graph());
        assert_eq!(p.paths(), vec![vec![1, 2]]);
        assert_eq!(p.default_path(), vec![1, 2]);
        assert_eq!(p.gates[1].builds_on, vec![1]);
    }

    #[test]
    fn a_graph_enumerates_its_paths_in_order() {
        let p = load(&graph("path_length = 3")).unwrap();
        assert!(p.is_graph());
        assert_eq!(p.path_length, 3);
        assert_eq!(p.paths(), vec![vec![1, 2, 3], vec![1, 3, 2]]);
        assert_eq!(p.gates[3].requires, BTreeSet::from([1, 2, 3]));
        let p = load(&graph("")).unwrap();
        assert_eq!(p.paths(), vec![vec![1, 2, 3, 4], vec![1, 3, 2, 4]]);
        assert!(p.check_path(&[1, 3, 2, 4]).is_ok());
        assert!(p.check_path(&[1, 4, 2, 3]).unwrap_err().contains("builds on gate 2"));
        assert!(p.check_path(&[1, 2, 3]).unwrap_err().contains("not 3"));
    }

    #[test]
    fn a_gate_may_use_only_what_it_builds_on() {
        // Gate 3 builds on gate 1 alone: `take` (gate 2's) is refused there.
        let text = graph("").replace("run = 'add(1) -> 1'", "run = 'take() -> 1'");
        let e = load(&text).unwrap_err();
        assert!(e.message.contains("gate 3 does not build on gate 2"), "{e}");
    }

    #[test]
    fn bad_graphs_are_positioned() {
        let e = load(&graph("").replace("builds_on = [1]", "builds_on = [4]")).unwrap_err();
        assert!(e.message.contains("only on gates above it"), "{e}");
        assert!(e.line > 30, "{e}");
        let e = load(&graph("").replace("builds_on = [1]", "builds_on = [9]")).unwrap_err();
        assert!(e.message.contains("does not exist"), "{e}");
        let e = load(&graph("").replace("builds_on = [1]", "builds_on = []")).unwrap_err();
        assert!(e.message.contains("builds on nothing"), "{e}");
        let e = load(&graph("path_length = 9")).unwrap_err();
        assert!(e.message.contains("path_length 9"), "{e}");
        let e = load(&graph("").replace("builds_on = [2, 3]", "builds_on = [2, 2]")).unwrap_err();
        assert!(e.message.contains("twice"), "{e}");
        let e = load(&GOOD.replace("format_version = 1", "format_version = 1\npath_length = 2")).unwrap_err();
        assert!(e.message.contains("graph"), "{e}");
    }

    const VARIANT: &str = r#"
[[variant]]
name = "count_down"
choice = "whether the count may go down"
[[variant.edit]]
from = "self.n += n"
to = "self.n -= n"
"#;

    #[test]
    fn variants_load_and_bad_ones_are_positioned() {
        let p = load(&format!("{GOOD}{VARIANT}")).unwrap();
        assert_eq!(p.variants.len(), 1);
        assert_eq!(p.variants[0].choice, "whether the count may go down");
        let m = p.variants[0].as_mutant(&p.dir);
        assert_eq!(m.name, "variant_count_down");
        assert_eq!(m.apply("fn add() { self.n += n }").unwrap(), "fn add() { self.n -= n }");

        let text = format!("{GOOD}{}", VARIANT.replace("choice =", "chose ="));
        let e = load(&text).unwrap_err();
        assert!(e.message.contains("chose"), "{e}");
        assert_eq!(e.line, text.lines().position(|l| l.starts_with("chose")).unwrap() + 1);
        let e = load(&format!("{GOOD}{}", VARIANT.split("[[variant.edit]]").next().unwrap())).unwrap_err();
        assert!(e.message.contains("no [[variant.edit]]"), "{e}");
        let e = load(&format!("{GOOD}{VARIANT}{VARIANT}")).unwrap_err();
        assert!(e.message.contains("two variants"), "{e}");
    }

    #[test]
    fn a_variant_edit_must_match_the_reference_once() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("counter");
        std::fs::create_dir_all(dir.join("reference/src")).unwrap();
        let contract = root.path().join("contract");
        std::fs::create_dir_all(contract.join("src")).unwrap();
        std::fs::write(contract.join("src/counter.rs"), CONTRACT).unwrap();
        let text = format!("{GOOD}{VARIANT}");
        std::fs::write(dir.join("problem.toml"), &text).unwrap();
        let line = text.lines().position(|l| l.starts_with("from = \"self.n")).unwrap() + 1;
        for (source, why) in [("fn add() {}", "does not match"), ("self.n += n; self.n += n", "2 times")] {
            std::fs::write(dir.join("reference/src/lib.rs"), source).unwrap();
            let e = Problem::load(root.path(), &contract, "counter").unwrap_err();
            let e = e.downcast_ref::<Located>().expect("a positioned error");
            assert!(e.message.contains("variant `count_down`: edit 1") && e.message.contains(why), "{e}");
            assert_eq!(e.line, line);
        }
        std::fs::write(dir.join("reference/src/lib.rs"), "self.n += n").unwrap();
        assert!(Problem::load(root.path(), &contract, "counter").is_ok());
    }

    /// CONTRACT with gate 3's shared operation `bump`.
    fn shared_contract() -> String {
        let shared = "    pub trait SharedCounter: Send + Sync {\n        // Gate 3.\n        fn bump(&self, n: i64) -> i64;\n    }\n}";
        let end = CONTRACT.rfind('}').unwrap();
        format!("{}{shared}\n", &CONTRACT[..end])
    }

    fn load_shared(text: &str) -> std::result::Result<Problem, Located> {
        load_with(text, &shared_contract())
    }

    /// GOOD with a third, concurrent gate building on gate 1.
    fn concurrent(gate: &str, case: &str) -> String {
        format!(
            "{GOOD}\n[[gate]]\ntitle = \"Shared\"\nbuilds_on = [1]\n{gate}\nminutes = 5\nstatement = \"x\"\n\
             [[gate.case]]\nname = \"races\"\nrun = 'add(1) -> 1'\n{case}\n"
        )
    }

    #[test]
    fn a_concurrent_gate_loads_with_its_threads() {
        let p = load_shared(&concurrent(
            "concurrent = true\nthreads = 2\nindependent = \"n\"",
            "threads = [\"\"\"\nbump(1)\nbump(2)\n\"\"\", 'bump(3)']",
        ))
        .unwrap();
        let g = &p.gates[2];
        assert_eq!(g.concurrency, Some(Concurrency { threads: 2, repeat: 200, independent: Some("n".into()) }));
        assert_eq!(g.cases[0].threads.len(), 2);
        assert_eq!(g.cases[0].threads[0].len(), 2);
        assert_eq!(g.cases[0].repeat, None);
        assert!(p.signature.ops["bump"].shared && !p.signature.ops["add"].shared);
        assert!(p.signature.schema().canonical_text().contains("shared bump(n: i64) -> i64"));
    }

    #[test]
    fn concurrent_gate_mistakes_are_positioned() {
        let e = load_shared(&concurrent("threads = 2", "")).unwrap_err();
        assert!(e.message.contains("`threads` is for a concurrent gate"), "{e}");
        assert!(e.line > 30, "{e}");
        let e = load_shared(&concurrent("concurrent = true\nthreads = 9", "")).unwrap_err();
        assert!(e.message.contains("threads = 9: use 2 to 4"), "{e}");
        let e = load_shared(&concurrent("concurrent = true\nrepeat = 0", "")).unwrap_err();
        assert!(e.message.contains("repeat = 0"), "{e}");
        let e = load_shared(&concurrent("concurrent = true\nindependent = \"key\"", "")).unwrap_err();
        assert!(e.message.contains("`bump` has no parameter `key`"), "{e}");
        let e = load_shared(&concurrent("", "threads = ['bump(1)', 'bump(2)']")).unwrap_err();
        assert!(e.message.contains("not (`concurrent = true`)"), "{e}");
        let e = load_shared(&concurrent("concurrent = true", "threads = ['bump(1)']")).unwrap_err();
        assert!(e.message.contains("1 threads: use 2 to 4"), "{e}");
        let e = load_shared(&concurrent("concurrent = true", "threads = ['bump(1) -> 1', 'bump(2)']")).unwrap_err();
        assert!(e.message.contains("no expected results"), "{e}");
        let e = load_shared(&concurrent("concurrent = true", "threads = ['add(1)', 'bump(2)']")).unwrap_err();
        assert!(e.message.contains("only gate 3's shared operations, not `add`"), "{e}");
        let e = load_shared(&concurrent("concurrent = true", "repeat = 5")).unwrap_err();
        assert!(e.message.contains("case `races`: `repeat` is for a concurrent case"), "{e}");
        let e =
            load_shared(&concurrent("concurrent = true", "threads = ['bump(1)', 'bump(2)']\nrepeat = 0")).unwrap_err();
        assert!(e.message.contains("case `races`: repeat = 0: use 1 to"), "{e}");
    }

    /// A concurrent case may set its own `repeat` (the judge runs it that
    /// often: `problems::a_concurrent_case_runs_as_often_as_it_says`).
    #[test]
    fn a_concurrent_case_may_set_its_own_runs() {
        let p = load_shared(&concurrent(
            "concurrent = true\nrepeat = 50",
            "threads = ['bump(1)', 'bump(2)']\nrepeat = 400",
        ))
        .unwrap();
        assert_eq!(p.gates[2].cases[0].repeat, Some(400));
    }
}
