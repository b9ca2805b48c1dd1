//! `harness new <id>`: the skeleton of a new problem, complete and honest
//! from the first minute (one gate, a reference, a starter, a mutant, and
//! `harness audit <id>` passes), for the author to grow into four gates.

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::base::config::Config;
use crate::base::fsio;

fn camel(id: &str) -> String {
    id.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

fn contract_module(id: &str, title: &str) -> String {
    let t = camel(id);
    format!(
        r#"//! `{id}`: {title}.
//!
//! Written by `harness new`: rename and extend the operations. This trait
//! is their one declaration: the harness reads it from this file, and a
//! `// Gate N` comment says which gate introduces the methods after it.

crate::contract! {{
    problem = "{id}";
    errors = crate::NoError;

    /// The component. Read each gate's statement for the exact rules.
    pub trait {t} {{
        /// A new, empty instance.
        fn new() -> Self;

        // Gate 1.

        /// Adds `n` to the running total; returns the new total.
        fn add(&mut self, n: i64) -> i64;
    }}
}}
"#
    )
}

fn problem_toml(title: &str) -> String {
    format!(
        r#"format_version = 1
title = "{title}"
summary = "One sentence on what the candidate builds."

[generate.params]
n = {{ ints = [-100, 100] }}

[[gate]]
title = "A running total"
minutes = 12
statement = """
Keep a running total of `i64` values, starting at 0.

- `add(n) -> i64`: adds `n` to the total and returns the new total.

### Example
```text
add(5)    -> 5
add(-2)   -> 3
```
"""
hints = ["What must the instance remember between calls?"]

[[gate.followup]]
question = "How would you make this safe to call from many threads?"
answer = "Keep the total in an atomic integer and use fetch_add, or guard it with a mutex."

[[gate.case]]
name = "the total starts at 0 and accumulates"
run = '''
add(5) -> 5
add(-2) -> 3
add(0) -> 3
'''

[gate.generate]
cases = 20
length = [5, 60]
seed = 1
weights = {{ add = 1 }}

[[mutant]]
name = "forgets_the_total"
gate = 1
mistake = "Returns the last value instead of the running total."
caught_by = "the total starts at 0 and accumulates"

[[mutant.edit]]
from = '''
        self.total += n;
'''
to = '''
        self.total = n;
'''
"#
    )
}

fn manifest(package: &str, id: &str) -> String {
    format!(
        r#"[package]
name = "{package}"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
crate-type = ["cdylib", "rlib"]

[dependencies]
harness-contract = {{ path = "../../../contract", features = ["{id}"] }}
"#
    )
}

fn reference(id: &str) -> String {
    let t = camel(id);
    format!(
        r#"//! Reference solution for `{id}`.

use harness_contract::{id}::{t};

pub struct Solution {{
    total: i64,
}}

impl {t} for Solution {{
    fn new() -> Self {{
        Solution {{ total: 0 }}
    }}

    fn add(&mut self, n: i64) -> i64 {{
        self.total += n;
        self.total
    }}
}}

harness_contract::export!({id}, Solution);
"#
    )
}

fn starter(id: &str) -> String {
    let t = camel(id);
    format!(
        r#"//! Your solution. The statement of each gate is in the harness.

use harness_contract::{id}::{t};

pub struct Solution {{}}

impl {t} for Solution {{
    fn new() -> Self {{
        Solution {{}}
    }}

    fn add(&mut self, n: i64) -> i64 {{
        harness_contract::todo!()
    }}
}}

harness_contract::export!({id}, Solution);
"#
    )
}

/// Adds `#[cfg(feature = "<id>")] pub mod <id>;` and the feature itself.
fn register(contract_dir: &Path, id: &str) -> Result<()> {
    let lib = contract_dir.join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).with_context(|| format!("cannot read {}", lib.display()))?;
    let decl = format!("#[cfg(feature = \"{id}\")]\npub mod {id};\n");
    let anchor = text.rfind("#[cfg(feature = ").with_context(|| format!("{}: no problem modules", lib.display()))?;
    let after = anchor + text[anchor..].find(";\n").map_or(0, |i| i + 2);
    let text = format!("{}{decl}{}", &text[..after], &text[after..]);
    let manifest = contract_dir.join("Cargo.toml");
    let cargo = std::fs::read_to_string(&manifest).with_context(|| format!("cannot read {}", manifest.display()))?;
    let Some(features) = cargo.find("[features]\n") else {
        bail!("{}: no [features] table", manifest.display());
    };
    let end = cargo[features..].find("\n\n").map_or(cargo.len(), |i| features + i + 1);
    let cargo = format!("{}{id} = []\n{}", &cargo[..end], &cargo[end..]);
    fsio::write_atomic(&lib, text.as_bytes())?;
    fsio::write_atomic(&manifest, cargo.as_bytes())
}

/// `manifest` (a workspace's root `Cargo.toml`) with `id` added to the
/// features its `harness-contract` dependency enables, so that `cargo test
/// --workspace` builds the new module and runs its tests. `None` when it
/// enables no features list to extend (or already has `id`).
fn with_contract_feature(manifest: &str, id: &str) -> Option<String> {
    // The dependency's line that enables features (a features list on
    // another line belongs to another dependency).
    let open = manifest.match_indices("harness-contract = {").find_map(|(dep, _)| {
        let line = &manifest[dep..manifest[dep..].find('\n').map_or(manifest.len(), |i| dep + i)];
        line.find("features = [").map(|i| dep + i + "features = [".len())
    })?;
    let close = open + manifest[open..].find(']')?;
    let list = &manifest[open..close];
    if list.contains(&format!("\"{id}\"")) {
        return None;
    }
    let body = list.trim_end();
    let insert = if list.contains('\n') {
        // One name per line or a few per line: a line of its own, before `]`.
        format!("{}{}\n    \"{id}\",\n", body, if body.ends_with(',') || body.ends_with('[') { "" } else { "," })
    } else if body.trim().is_empty() {
        format!("\"{id}\"")
    } else {
        format!("{}, \"{id}\"", body.trim_end_matches(',').trim_end())
    };
    Some(format!("{}{insert}{}", &manifest[..open], &manifest[close..]))
}

/// The root manifest's share of [`register`]: the new feature enabled for
/// the workspace's tests. A project without a root `Cargo.toml` has no
/// workspace tests to add it to; one whose manifest lists no features for
/// `harness-contract` is told what to add.
fn register_in_workspace(root: &Path, id: &str) -> Result<Option<String>> {
    let manifest = root.join("Cargo.toml");
    let Ok(text) = std::fs::read_to_string(&manifest) else { return Ok(None) };
    if !text.contains("harness-contract") {
        return Ok(None);
    }
    match with_contract_feature(&text, id) {
        Some(text) => {
            fsio::write_atomic(&manifest, text.as_bytes())?;
            Ok(None)
        }
        None if text.contains(&format!("\"{id}\"")) => Ok(None),
        None => Ok(Some(format!(
            "note: {} enables no features list of `harness-contract` that `harness new` could extend: add \"{id}\" \
             to it, or `cargo test --workspace` will not run the new module's tests",
            manifest.display()
        ))),
    }
}

pub fn command(config: &Config, id: &str, title: Option<&str>) -> Result<u8> {
    if id.is_empty()
        || !id.starts_with(|c: char| c.is_ascii_lowercase())
        || !id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        bail!("`{id}` is not a problem id: use lower_snake_case, e.g. `ring_buffer`");
    }
    let dir = config.problems_dir.join(id);
    let module = config.contract_dir.join("src").join(format!("{id}.rs"));
    for path in [&dir, &module] {
        if path.exists() {
            bail!("{} already exists: not overwriting it", path.display());
        }
    }
    let title = title.map_or_else(|| id.replace('_', " "), str::to_string);
    fsio::write_atomic(&module, contract_module(id, &title).as_bytes())?;
    fsio::write_atomic(&dir.join("problem.toml"), problem_toml(&title).as_bytes())?;
    fsio::write_atomic(&dir.join("reference/Cargo.toml"), manifest(&format!("{id}_reference"), id).as_bytes())?;
    fsio::write_atomic(&dir.join("reference/src/lib.rs"), reference(id).as_bytes())?;
    fsio::write_atomic(&dir.join("starter/Cargo.toml"), manifest(&format!("{id}_solution"), id).as_bytes())?;
    fsio::write_atomic(&dir.join("starter/src/lib.rs"), starter(id).as_bytes())?;
    register(&config.contract_dir, id)?;
    let note = register_in_workspace(&config.root, id)?;
    println!(
        "created problem `{id}`:\n  {}\n  {}/problem.toml, reference/, starter/\n\
         It is honest already (`harness audit {id}`); now grow it to four gates\n\
         (docs/authoring.md).",
        module.display(),
        dir.display()
    );
    if let Some(note) = note {
        eprintln!("{note}");
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_new_feature_is_enabled_for_the_workspace_tests() {
        let root = "[dev-dependencies]\nharness-contract = { path = \"contract\", features = [\n    \"dedupe\", \"wal\",\n] }\ntempfile = \"3\"\n";
        assert_eq!(
            with_contract_feature(root, "ring_buffer").unwrap(),
            "[dev-dependencies]\nharness-contract = { path = \"contract\", features = [\n    \"dedupe\", \"wal\",\n    \"ring_buffer\",\n] }\ntempfile = \"3\"\n"
        );
        let one_line = "harness-contract = { path = \"contract\", features = [\"dedupe\"] }\n";
        assert_eq!(
            with_contract_feature(one_line, "ring_buffer").unwrap(),
            "harness-contract = { path = \"contract\", features = [\"dedupe\", \"ring_buffer\"] }\n"
        );
        let empty = "harness-contract = { path = \"contract\", features = [] }\n";
        assert_eq!(
            with_contract_feature(empty, "ring_buffer").unwrap(),
            "harness-contract = { path = \"contract\", features = [\"ring_buffer\"] }\n"
        );
        assert_eq!(with_contract_feature(one_line, "dedupe"), None, "already there");
        let two = format!(
            "[dependencies]\nharness-contract = {{ path = \"contract\" }}\nclap = {{ version = \"4\", features = [\"derive\"] }}\n{root}"
        );
        let added = with_contract_feature(&two, "ring_buffer").unwrap();
        assert!(added.contains("features = [\"derive\"]") && added.contains("    \"ring_buffer\",\n] }"), "{added}");
        let none = "harness-contract = { path = \"contract\" }\nother = { version = \"1\", features = [\"x\"] }\n";
        assert_eq!(with_contract_feature(none, "ring_buffer"), None, "another dependency's features are not touched");
        for text in [root, one_line, empty] {
            let added = with_contract_feature(text, "ring_buffer").unwrap();
            let parsed: toml::Value = toml::from_str(&added).unwrap();
            let deps = parsed.get("dev-dependencies").unwrap_or(&parsed);
            let features = deps["harness-contract"]["features"].as_array().unwrap();
            assert!(features.iter().any(|f| f.as_str() == Some("ring_buffer")), "{added}");
        }
    }

    #[test]
    fn names() {
        assert_eq!(camel("ring_buffer"), "RingBuffer");
        assert_eq!(camel("lru2_cache"), "Lru2Cache");
    }

    #[test]
    fn the_skeleton_problem_loads() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("ring_buffer");
        std::fs::create_dir_all(p.join("reference/src")).unwrap();
        std::fs::write(p.join("problem.toml"), problem_toml("Ring buffer")).unwrap();
        std::fs::write(p.join("reference/src/lib.rs"), reference("ring_buffer")).unwrap();
        let contract = dir.path().join("contract");
        std::fs::create_dir_all(contract.join("src")).unwrap();
        std::fs::write(contract.join("src/ring_buffer.rs"), contract_module("ring_buffer", "Ring buffer")).unwrap();
        let problem = crate::problem::model::Problem::load(dir.path(), &contract, "ring_buffer").unwrap();
        assert_eq!(problem.signature.ops["add"].gate, 1);
        assert_eq!(problem.mutants.len(), 1);
        assert_eq!(problem.gates[0].cases.len(), 1);
    }
}
