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
//! Written by `harness new`: rename and extend the operations, keeping this
//! trait, the `contract!` list below and `[ops]` in
//! problems/{id}/problem.toml in step (the handshake refuses a mismatch).

use crate::not_implemented;

/// The component. Read each gate's statement for the exact rules.
#[allow(unused_variables)]
pub trait {t} {{
    /// A new, empty instance.
    fn new() -> Self
    where
        Self: Sized;

    // Gate 1.

    /// Adds `n` to the running total; returns the new total.
    fn add(&mut self, n: i64) -> i64 {{
        not_implemented("add")
    }}
}}

crate::contract! {{
    problem = "{id}";
    trait = {t};
    errors = crate::NoError;
    new();
    fn add(n: i64) -> i64;
}}
"#
    )
}

fn problem_toml(title: &str) -> String {
    format!(
        r#"format_version = 1
title = "{title}"
summary = "One sentence on what the candidate builds."
errors = []

[ops]
add = {{ gate = 1, args = "n: i64", returns = "i64" }}

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
    println!(
        "created problem `{id}`:\n  {}\n  {}/problem.toml, reference/, starter/\n\
         It is honest already (`harness audit {id}`); now grow it to four gates\n\
         (docs/authoring.md).",
        module.display(),
        dir.display()
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let problem = crate::problem::model::Problem::load(dir.path(), "ring_buffer").unwrap();
        assert_eq!(problem.mutants.len(), 1);
        assert_eq!(problem.gates[0].cases.len(), 1);
    }
}
