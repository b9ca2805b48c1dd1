//! The folders of `src/` are layers, and each imports only the layers below
//! it; no two modules import each other, directly or in a circle.
//!
//! This reads the source as text: every `crate::<layer>` path in a file of
//! one layer must name the same layer or a lower one, and the graph of
//! `crate::` paths between files must have no cycle. ARCHITECTURE.md draws
//! the same map.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lowest first. `cli` is arguments only and imports nothing.
const LAYERS: &[&str] = &["base", "cli", "problem", "judge", "session", "ui", "cmd"];

fn rank(layer: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == layer)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/judge/suite.rs` → `judge::suite`; `src/judge.rs` → `judge`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("::")
}

/// Every `crate::a::b…` path in `text` outside comments, as its segments.
fn crate_paths(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue; // `harness_contract::…` or `$crate::…`
            }
            let path: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
            let segs: Vec<String> = path.split("::").filter(|s| !s.is_empty()).map(str::to_string).collect();
            if !segs.is_empty() {
                out.push(segs);
            }
        }
    }
    out
}

struct Tree {
    /// module → the modules its file names through `crate::`.
    edges: BTreeMap<String, BTreeSet<String>>,
    /// `file: crate::path` lines that import upwards.
    upward: Vec<String>,
}

fn read_tree(src: &Path) -> Tree {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(src, f)).collect();
    let mut edges = BTreeMap::new();
    let mut upward = Vec::new();
    for file in &files {
        let module = module_of(src, file);
        if module == "main" || module == "lib" {
            continue;
        }
        let layer = module.split("::").next().unwrap().to_string();
        let own = rank(&layer).unwrap_or_else(|| panic!("{}: `{layer}` is not a layer in {LAYERS:?}", file.display()));
        let text = std::fs::read_to_string(file).unwrap();
        let targets: &mut BTreeSet<String> = edges.entry(module.clone()).or_default();
        for path in crate_paths(&text) {
            let Some(other) = rank(&path[0]) else { continue };
            if other > own {
                upward.push(format!("{}: crate::{} ({} imports {})", file.display(), path.join("::"), layer, path[0]));
            }
            // The longest prefix that is a module file.
            let target = (1..=path.len()).rev().map(|n| path[..n].join("::")).find(|m| modules.contains(m));
            if let Some(target) = target
                && target != module
                && !module.starts_with(&format!("{target}::"))
            {
                targets.insert(target);
            }
        }
    }
    Tree { edges, upward }
}

/// A cycle in the module graph, if there is one, as its path.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        stack.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next.as_str()).copied().unwrap_or(0) {
                1 => {
                    let start = stack.iter().position(|m| m == next).unwrap();
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(next, edges, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        if state.get(node.as_str()).copied().unwrap_or(0) == 0
            && let Some(c) = visit(node, edges, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_layer_imports_only_layers_below_it() {
    let tree = read_tree(&src());
    assert!(tree.upward.is_empty(), "upward imports:\n{}", tree.upward.join("\n"));
}

#[test]
fn no_module_imports_itself_through_a_circle() {
    let tree = read_tree(&src());
    assert!(tree.edges.len() > 20, "the source tree was read");
    if let Some(cycle) = find_cycle(&tree.edges) {
        panic!("import circle: {}", cycle.join(" → "));
    }
}

#[test]
fn the_checks_catch_what_they_claim_to() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("judge")).unwrap();
    std::fs::create_dir_all(src.join("ui")).unwrap();
    std::fs::write(src.join("judge.rs"), "pub mod a;\npub mod b;\n").unwrap();
    std::fs::write(src.join("ui.rs"), "pub mod view;\n").unwrap();
    std::fs::write(src.join("ui/view.rs"), "use crate::judge::a::X;\n").unwrap();
    std::fs::write(src.join("judge/a.rs"), "use crate::judge::b::Y; // crate::ui::view\n").unwrap();
    std::fs::write(src.join("judge/b.rs"), "use crate::judge::a::X;\nfn f() { crate::ui::view::draw() }\n").unwrap();
    let tree = read_tree(src);
    assert_eq!(tree.upward.len(), 1, "{:?}", tree.upward);
    assert!(tree.upward[0].contains("judge imports ui"), "{:?}", tree.upward);
    let cycle = find_cycle(&tree.edges).expect("a circle");
    assert!(cycle.contains(&"judge::a".to_string()) && cycle.contains(&"judge::b".to_string()), "{cycle:?}");
}

/// Every module of `src/` is on ARCHITECTURE.md's map: a layer's modules
/// are named in that layer's row, as `` `name` `` (or `` `name/` `` for a
/// folder), and a folder's own modules by name in the same row.
#[test]
fn architecture_maps_every_module() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let src = src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut missing = Vec::new();
    for file in &files {
        let module = module_of(&src, file);
        let segs: Vec<&str> = module.split("::").collect();
        let (layer, rest) = match segs.as_slice() {
            [layer, rest @ ..] if rank(layer).is_some() && !rest.is_empty() => (*layer, rest),
            _ => continue,
        };
        let Some(row) = map.lines().find(|l| l.starts_with(&format!("| `src/{layer}/`"))) else {
            missing.push(format!("{layer} (no row for the layer)"));
            continue;
        };
        let top = rest[0];
        let named = row.contains(&format!("`{top}`")) || row.contains(&format!("`{top}/"));
        let nested_named = rest.len() < 2 || {
            let leaf = rest[rest.len() - 1];
            row.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w == leaf)
        };
        if !named || !nested_named {
            missing.push(module.clone());
        }
    }
    assert!(missing.is_empty(), "ARCHITECTURE.md's map does not name: {}", missing.join(", "));
}
