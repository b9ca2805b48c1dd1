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

/// The relative Markdown links of `text` (`[x](target)`, no URL), without
/// their `#anchor`.
fn relative_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        if !target.contains("://") && !target.starts_with('#') && !target.contains(' ') {
            out.push(target.split('#').next().unwrap_or_default().to_string());
        }
        rest = &rest[end..];
    }
    out
}

#[test]
fn the_readme_fits_on_a_few_screens_and_every_doc_link_leads_somewhere() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 150, "README.md has {lines} lines: the rest belongs in docs/");
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap().flatten() {
        files.push(entry.path());
    }
    assert!(files.len() >= 6, "README, ARCHITECTURE and the docs pages");
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for link in relative_links(&text) {
            if !file.parent().unwrap().join(&link).exists() {
                broken.push(format!("{}: {link}", file.strip_prefix(&root).unwrap().display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing:\n{}", broken.join("\n"));
    // Every docs page is linked from the README.
    for file in &files[2..] {
        let name = format!("docs/{}", file.file_name().unwrap().to_string_lossy());
        assert!(relative_links(&readme).contains(&name), "README.md does not link {name}");
    }
    assert_eq!(relative_links("[a](docs/x.md#y) [b](https://e.org) [c](#z)"), vec!["docs/x.md"]);
}

/// The longest a function in `src/` may be, in lines from its `fn` to its
/// closing brace: a longer one is several steps that want names.
const MOST_LINES: usize = 100;

/// `text` with the insides of string and char literals and of comments
/// blanked (their newlines kept), so that braces can be counted.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |out: &mut String, s: &[u8]| {
        for &c in s {
            out.push(if c == b'\n' { '\n' } else { ' ' });
        }
    };
    while i < b.len() {
        let rest = &b[i..];
        let word_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with(b"/*") {
            let end = rest.windows(2).skip(2).position(|w| w == b"*/").map_or(rest.len(), |p| p + 4);
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'r' && !word_before && rest.get(1).is_some_and(|&c| c == b'"' || c == b'#') {
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
            let body = 2 + hashes;
            let end = rest[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(rest.len(), |p| body + p + close.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'\'' {
            // A char literal ('x', '\n', '\u{..}', '{'); a lifetime has no
            // closing quote right after its first character.
            let len = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|&c| c == b'\'').map(|p| p + 3)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(1 + ch) == Some(&b'\'')).then_some(2 + ch)
            };
            match len {
                Some(n) => {
                    blank(&mut out, &rest[..n]);
                    i += n;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// Each function of `text` longer than `most` lines: its name, first line
/// and length.
fn long_functions(text: &str, most: usize) -> Vec<(String, usize, usize)> {
    let code = code_only(text);
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "fn") else { continue };
        // Only a definition: `fn` after nothing but its qualifiers.
        let qualifier = |w: &&str| {
            matches!(*w, "pub" | "const" | "unsafe" | "async" | "extern" | "\"C\"" | "default") || w.starts_with("pub(")
        };
        if !words[..at].iter().all(qualifier) {
            continue;
        }
        let Some(name) = words.get(at + 1).map(|w| w.split(['(', '<']).next().unwrap_or(w).to_string()) else {
            continue;
        };
        let mut depth = 0i64;
        let mut opened = false;
        let mut end = None;
        'scan: for (j, l) in lines.iter().enumerate().skip(i) {
            for c in l.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    // A declaration without a body (a trait's).
                    ';' if !opened && depth == 0 => break 'scan,
                    _ => {}
                }
                if opened && depth == 0 {
                    end = Some(j);
                    break 'scan;
                }
            }
        }
        if let Some(end) = end
            && end - i + 1 > most
        {
            out.push((name, i + 1, end - i + 1));
        }
    }
    out
}

#[test]
fn no_function_in_src_is_over_a_hundred_lines() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut long = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (name, line, len) in long_functions(&text, MOST_LINES) {
            long.push(format!("{}:{line}: `{name}` is {len} lines", file.strip_prefix(src()).unwrap().display()));
        }
    }
    assert!(long.is_empty(), "functions over {MOST_LINES} lines (give their steps names):\n{}", long.join("\n"));
}

#[test]
fn the_length_check_counts_what_it_claims_to() {
    let body = "    let x = 1;\n".repeat(5);
    let text = format!(
        "pub(crate) fn long(a: &str) -> usize {{\n{body}    let s = \"}} {{ // \";\n    let c = '{{';\n    \
         let r = r#\"}}\"#;\n    /* }} */\n    x\n}}\n\nfn short<'a>(x: &'a str) -> &'a str {{ x }}\n\
         trait T {{\n    fn declared(&self);\n}}\n"
    );
    let found = long_functions(&text, 5);
    assert_eq!(found, vec![("long".to_string(), 1, 12)], "{text}");
    assert!(long_functions(&text, 12).is_empty());
}
