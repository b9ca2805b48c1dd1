//! The fast path of a practice session's incremental build: run rustc
//! directly with the invocation cargo used for the solution crate last
//! time, skipping cargo's start-up, dependency resolution and
//! fingerprinting (a sizeable share of a one-line edit's build; see the
//! docs/performance.md).
//!
//! Cargo stays the build of record. It runs (with `-vv`, which prints each
//! rustc invocation with the environment cargo set for it) on the first
//! save, whenever the manifest or the lock file changed, for a crate with a
//! build script, and whenever a direct build fails without a compile error
//! to show for it (a dependency's file gone, a toolchain update). After a
//! direct build cargo's fingerprint is stale, so its next run compiles the
//! crate again: correct, only slower.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// How cargo ran rustc for a crate, and what that depended on.
#[derive(Clone, Debug, PartialEq)]
pub struct Invocation {
    pub program: String,
    pub args: Vec<String>,
    /// The variables cargo set for rustc (on top of its own environment).
    pub env: Vec<(String, String)>,
    /// Cargo runs rustc in the package's folder (the workspace root).
    pub cwd: PathBuf,
    inputs: Inputs,
}

/// What must not have changed for an invocation to be reused.
#[derive(Clone, Debug, PartialEq)]
struct Inputs {
    manifest: Option<Vec<u8>>,
    lock: Option<Vec<u8>>,
}

impl Inputs {
    fn of(crate_dir: &Path) -> Inputs {
        Inputs {
            manifest: std::fs::read(crate_dir.join("Cargo.toml")).ok(),
            lock: std::fs::read(crate_dir.join("Cargo.lock")).ok(),
        }
    }
}

/// Invocations by (crate folder, target folder), for this process.
static CACHE: Mutex<Vec<((PathBuf, PathBuf), Invocation)>> = Mutex::new(Vec::new());

/// The invocation to reuse for the crate, if nothing it depends on changed.
pub fn reusable(crate_dir: &Path, target: &Path) -> Option<Invocation> {
    let cache = CACHE.lock().ok()?;
    let (_, inv) = cache.iter().find(|(k, _)| k.0 == crate_dir && k.1 == target)?;
    let fresh = inv.inputs == Inputs::of(crate_dir)
        && !crate_dir.join("build.rs").exists()
        && extern_files(&inv.args).all(|f| Path::new(&f).exists());
    fresh.then(|| inv.clone())
}

/// Remembers the invocation found in cargo's `-vv` output, or forgets the
/// crate's when there is none (cargo did not compile it, or it has a build
/// script).
pub fn remember(crate_dir: &Path, target: &Path, cargo_stderr: &str) {
    let found = if crate_dir.join("build.rs").exists() { None } else { find(cargo_stderr, crate_dir) };
    let Ok(mut cache) = CACHE.lock() else { return };
    cache.retain(|(k, _)| !(k.0 == crate_dir && k.1 == target));
    if let Some(inv) = found {
        cache.push(((crate_dir.to_path_buf(), target.to_path_buf()), inv));
    }
}

/// Forgets the crate's invocation (a direct build went wrong).
pub fn forget(crate_dir: &Path, target: &Path) {
    if let Ok(mut cache) = CACHE.lock() {
        cache.retain(|(k, _)| !(k.0 == crate_dir && k.1 == target));
    }
}

/// The files an invocation links against (`--extern name=path`).
fn extern_files(args: &[String]) -> impl Iterator<Item = String> + '_ {
    args.windows(2)
        .filter(|w| w[0] == "--extern")
        .filter_map(|w| w[1].split_once('=').map(|(_, path)| path.to_string()))
}

/// The rustc invocation of the primary package's cdylib in cargo's `-vv`
/// output: a line `Running `VAR=value … /path/rustc args…``.
fn find(stderr: &str, crate_dir: &Path) -> Option<Invocation> {
    stderr.lines().rev().find_map(|line| {
        let command = line.trim_start().strip_prefix("Running `")?.strip_suffix('`')?;
        let words = shell_words(command)?;
        let split = words.iter().position(|w| !is_assignment(w))?;
        let env: Vec<(String, String)> = words[..split]
            .iter()
            .filter_map(|w| w.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
            .collect();
        let primary = env.iter().any(|(k, v)| k == "CARGO_PRIMARY_PACKAGE" && v == "1");
        let args = words[split + 1..].to_vec();
        let cdylib = args.windows(2).any(|w| w[0] == "--crate-type" && w[1] == "cdylib");
        let rustc = Path::new(&words[split]).file_stem().is_some_and(|s| s == "rustc");
        // The package root: where cargo runs rustc and relative paths start.
        let cwd = env.iter().find(|(k, _)| k == "CARGO_MANIFEST_DIR").map(|(_, v)| PathBuf::from(v))?;
        (primary && cdylib && rustc).then(|| Invocation {
            program: words[split].clone(),
            args,
            env,
            cwd,
            inputs: Inputs::of(crate_dir),
        })
    })
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty()
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !k.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// Splits a command line as a POSIX shell would, for what cargo prints:
/// words separated by spaces, `'single quotes'`, backslash escapes outside
/// them. `None` when a quote is left open.
fn shell_words(s: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// Whether a rustc error is about the dependencies' builds rather than the
/// crate's code: a crate missing, or built by another rustc.
pub fn about_dependencies(message: &str) -> bool {
    ["can't find crate", "compiled by an incompatible version of rustc", "found possibly newer version of crate"]
        .iter()
        .any(|m| message.contains(m))
}

/// What rustc's JSON stream (on stderr) says: a diagnostic, or that an
/// artifact was written.
pub enum Line {
    Diagnostic(serde_json::Value),
    Artifact(PathBuf),
    Other,
}

/// Reads one line of rustc's `--error-format=json --json=artifacts` output.
pub fn line(text: &str) -> Line {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else { return Line::Other };
    if let Some(path) = v["artifact"].as_str() {
        return if v["emit"] == "link" { Line::Artifact(PathBuf::from(path)) } else { Line::Other };
    }
    if v["level"].is_string() && v["message"].is_string() {
        return Line::Diagnostic(v);
    }
    Line::Other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_reads_what_cargo_prints() {
        assert_eq!(
            shell_words(r#"A='' B=x rustc --check-cfg 'cfg(feature, values())' a\ b 'it'\''s'"#).unwrap(),
            vec!["A=", "B=x", "rustc", "--check-cfg", "cfg(feature, values())", "a b", "it's"]
        );
        assert_eq!(shell_words("  a   b "), Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(shell_words("'open"), None);
    }

    #[test]
    fn the_primary_cdylib_invocation_is_found_in_cargo_output() {
        let out = "   Compiling harness-contract v0.1.0 (/c)\n     \
            Running `CARGO_CRATE_NAME=harness_contract CARGO_MANIFEST_DIR=/c /t/rustc --crate-name harness_contract --crate-type lib`\n   \
            Compiling s v0.1.0 (/s)\n     \
            Running `CARGO=/t/cargo CARGO_MANIFEST_DIR=/s CARGO_PKG_AUTHORS='' CARGO_PRIMARY_PACKAGE=1 LD_LIBRARY_PATH='/t/a:/t/b' /t/rustc --crate-name s --edition=2024 src/lib.rs --crate-type cdylib --check-cfg 'cfg(docsrs,test)' --extern harness_contract=/t/deps/libharness_contract-1.rlib`\n    \
            Finished `dev` profile [unoptimized] target(s) in 0.21s\n";
        let inv = find(out, Path::new("/nonexistent")).unwrap();
        assert_eq!(inv.program, "/t/rustc");
        assert_eq!(inv.cwd, PathBuf::from("/s"));
        assert!(inv.env.contains(&("CARGO_PKG_AUTHORS".into(), String::new())));
        assert!(inv.env.contains(&("LD_LIBRARY_PATH".into(), "/t/a:/t/b".into())));
        assert_eq!(
            inv.args,
            [
                "--crate-name",
                "s",
                "--edition=2024",
                "src/lib.rs",
                "--crate-type",
                "cdylib",
                "--check-cfg",
                "cfg(docsrs,test)",
                "--extern",
                "harness_contract=/t/deps/libharness_contract-1.rlib"
            ]
        );
        assert_eq!(extern_files(&inv.args).collect::<Vec<_>>(), ["/t/deps/libharness_contract-1.rlib"]);
        // Only the contract compiled (the crate was fresh): nothing to reuse.
        assert!(find(&out.replace("CARGO_PRIMARY_PACKAGE=1 ", ""), Path::new("/nonexistent")).is_none());
    }

    #[test]
    fn errors_about_the_dependencies_builds_are_told_from_the_candidates() {
        assert!(about_dependencies("found crate `harness_contract` compiled by an incompatible version of rustc"));
        assert!(about_dependencies("can't find crate for `harness_contract`"));
        assert!(!about_dependencies("cannot find value `versoin` in this scope"));
    }

    #[test]
    fn rustc_json_lines_are_told_apart() {
        assert!(
            matches!(line(r#"{"artifact":"/t/deps/libs.so","emit":"link"}"#), Line::Artifact(p) if p == Path::new("/t/deps/libs.so"))
        );
        assert!(matches!(line(r#"{"artifact":"/t/deps/s.d","emit":"dep-info"}"#), Line::Other));
        assert!(matches!(
            line(r#"{"$message_type":"diagnostic","message":"m","level":"error","spans":[],"rendered":"r"}"#),
            Line::Diagnostic(_)
        ));
        assert!(matches!(line("error: could not write output"), Line::Other));
    }
}
