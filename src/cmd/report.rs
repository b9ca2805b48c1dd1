//! `harness report`: reviewing past sessions from their gate reports.
//!
//! With a terminal it opens the review TUI: the list of sessions, one
//! session's detail (timeline chart, time per gate against its target, the
//! last run's failing cases with their diffs, the solution at each gate
//! pass and what changed between passes, the follow-up questions with
//! their answers hidden until asked for) and a problem's progress across
//! attempts. Headless, `--list`, `<id> --markdown` and `<id> --json` print
//! the same data.
//!
//! Reports are read from `reports/*.json`. A file that cannot be read, or
//! a `.md` whose `.json` is missing, is named and skipped; the rest still
//! loads.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::base::config::Config;
use crate::session::report::{self, REPORT_FORMAT_VERSION, Report};
use crate::ui::review::app::{Action, Review};
use crate::ui::review::{text, view};

pub const NO_TTY: &str = "`harness report` needs an interactive terminal (stdin and stdout must be a TTY). \
     For scripts, use `harness report --list`, `harness report <id> --markdown` or `harness report <id> --json`.";

/// The reports of `dir`, and the files that could not be used with why.
pub fn load(dir: &Path) -> (Vec<Report>, Vec<(PathBuf, String)>) {
    let (loaded, mut broken) = report::load_all(dir);
    let mut reports = Vec::new();
    for r in loaded {
        if r.format_version == REPORT_FORMAT_VERSION {
            reports.push(r);
        } else {
            broken.push((
                dir.join(format!("{}.json", r.id)),
                format!("format_version {} (this harness reads {REPORT_FORMAT_VERSION})", r.format_version),
            ));
        }
    }
    // A readable `.md` says a session happened; without its `.json` the
    // review cannot show it, and should say so rather than forget it.
    let stems: BTreeSet<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    let mut orphans: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md"))
        .filter(|p| p.file_stem().is_some_and(|s| !stems.contains(&*s.to_string_lossy())))
        .collect();
    orphans.sort();
    for md in orphans {
        let name = md.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        broken.push((md.with_extension("json"), format!("missing, though {name} is there")));
    }
    broken.sort();
    (reports, broken)
}

/// The report named by `query`: its id, or a prefix of exactly one id.
pub fn find<'a>(reports: &'a [Report], broken: &[(PathBuf, String)], query: &str) -> Result<&'a Report> {
    if let Some(r) = reports.iter().find(|r| r.id == query) {
        return Ok(r);
    }
    let matches: Vec<&Report> = reports.iter().filter(|r| r.id.starts_with(query)).collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => {
            if let Some((path, why)) =
                broken.iter().find(|(p, _)| p.file_stem().is_some_and(|s| s.to_string_lossy().starts_with(query)))
            {
                bail!("{}: {why}", path.display());
            }
            bail!("no report `{query}` (see `harness report --list`)")
        }
        many => {
            let ids: Vec<&str> = many.iter().map(|r| r.id.as_str()).collect();
            bail!("`{query}` matches {} reports: {}", many.len(), ids.join(", "))
        }
    }
}

/// The report of the session that started last.
pub fn latest(reports: &[Report]) -> Option<&Report> {
    reports.iter().max_by(|a, b| a.started_at_ms.cmp(&b.started_at_ms).then_with(|| a.id.cmp(&b.id)))
}

/// `harness report`. Returns the exit status: 0 success; an `Err` (no
/// such report, no terminal for the TUI) becomes 2.
pub fn report(config: &Config, id: Option<&str>, list: bool, markdown: bool, json: bool) -> Result<u8> {
    let headless = list || markdown || json;
    let (reports, broken) = load(&config.reports_dir);
    // An id that names nothing is the first thing to say, terminal or not.
    if let Some(id) = id {
        find(&reports, &broken, id)?;
    }
    if !headless && (!std::io::stdin().is_terminal() || !std::io::stdout().is_terminal()) {
        bail!(NO_TTY);
    }
    if headless {
        for (path, why) in &broken {
            eprintln!("warning: skipped {}: {why}", path.display());
        }
    }
    if list {
        let mut newest: Vec<&Report> = reports.iter().collect();
        newest.sort_by(|a, b| b.started_at_ms.cmp(&a.started_at_ms).then_with(|| b.id.cmp(&a.id)));
        if json {
            println!("{}", serde_json::to_string_pretty(&text::list_json(&newest))?);
        } else if newest.is_empty() {
            println!("no reports in {}", config.reports_dir.display());
        } else {
            print!("{}", text::list(&newest));
        }
        return Ok(0);
    }
    if markdown || json {
        // Without an id: the newest session, the one just finished.
        let r = match id {
            Some(id) => find(&reports, &broken, id)?,
            None => latest(&reports).ok_or_else(|| {
                anyhow::anyhow!("no reports in {} yet: finish a session first", config.reports_dir.display())
            })?,
        };
        if json {
            println!("{}", serde_json::to_string_pretty(r)?);
        } else {
            print!("{}", text::markdown(r, &reports));
        }
        return Ok(0);
    }
    let mut app = Review::new(reports, broken);
    if let Some(id) = id {
        let found = find(&app.reports, &app.broken, id)?.id.clone();
        app.open_id(&found);
    }
    run(app)?;
    Ok(0)
}

/// The review loop: the screen loop, until `q`.
fn run(app: Review) -> Result<()> {
    let mut state = (app, false);
    crate::ui::screen::run(
        &mut state,
        |f, (app, _)| view::draw(f, app),
        |_| {},
        |(app, quit), key| *quit = app.on_key(key) == Action::Quit,
        |(_, quit)| *quit,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::state::{Mode, Session};

    fn write(dir: &Path, id: &str, started: u64) {
        let p = crate::problem::model::Problem::load(
            &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("problems"),
            &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("contract"),
            "versioned_kv",
        )
        .unwrap();
        let mut s = Session::new("versioned_kv", Mode::Practice, p.gates.len(), 60_000, started);
        s.id = id.into();
        report::write(dir, &Report::from_session(&s, &p, started, None)).unwrap();
    }

    #[test]
    fn corrupt_missing_and_future_reports_are_named_and_the_rest_load() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a-versioned_kv", 1);
        write(dir.path(), "b-versioned_kv", 2);
        std::fs::write(dir.path().join("bad.json"), "{ nope").unwrap();
        std::fs::write(dir.path().join("gone.md"), "# a session").unwrap();
        let future = std::fs::read_to_string(dir.path().join("b-versioned_kv.json"))
            .unwrap()
            .replace("\"format_version\": 1", "\"format_version\": 2");
        std::fs::write(dir.path().join("b-versioned_kv.json"), future).unwrap();
        let (reports, broken) = load(dir.path());
        assert_eq!(reports.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["a-versioned_kv"]);
        let names: Vec<String> =
            broken.iter().map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["b-versioned_kv.json", "bad.json", "gone.json"]);
        assert!(broken[0].1.contains("format_version 2"), "{:?}", broken[0]);
        assert!(broken[2].1.starts_with("missing"), "{:?}", broken[2]);
        assert!(load(&dir.path().join("nowhere")).0.is_empty(), "no reports folder: nothing to show");
    }

    #[test]
    fn the_latest_report_is_the_one_started_last() {
        let dir = tempfile::tempdir().unwrap();
        assert!(latest(&load(dir.path()).0).is_none());
        write(dir.path(), "b-versioned_kv", 5);
        write(dir.path(), "a-versioned_kv", 9);
        write(dir.path(), "c-versioned_kv", 1);
        assert_eq!(latest(&load(dir.path()).0).unwrap().id, "a-versioned_kv");
    }

    #[test]
    fn find_takes_an_id_or_a_unique_prefix() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "20261129T080000Z-versioned_kv", 1);
        write(dir.path(), "20261130T080000Z-versioned_kv", 2);
        std::fs::write(dir.path().join("20261201T000000Z-x.json"), "{").unwrap();
        let (reports, broken) = load(dir.path());
        assert_eq!(find(&reports, &broken, "20261129").unwrap().id, "20261129T080000Z-versioned_kv");
        let e = find(&reports, &broken, "2026").unwrap_err().to_string();
        assert!(e.contains("matches 2 reports"), "{e}");
        let e = find(&reports, &broken, "20261201").unwrap_err().to_string();
        assert!(e.contains("20261201T000000Z-x.json: line 1"), "{e}");
        let e = find(&reports, &broken, "nope").unwrap_err().to_string();
        assert!(e.contains("no report `nope`"), "{e}");
    }
}
