//! Which file events mean "the candidate saved", and when a burst of them
//! has settled into one save.
//!
//! Editors save in different ways: in place (open, truncate, write, close:
//! VS Code, nano, helix, emacs after its first backup), by writing a
//! temporary file and renaming it over the original (VS Code's and
//! JetBrains' atomic saves, `sed -i`), or by renaming the original to a
//! backup and writing a new file (vim and neovim with `writebackup`). Each
//! is a burst of events. Two kinds matter:
//! - a **completed** source: a write to it was closed, or a file was renamed
//!   onto it. Its content is whole now, so a short [`SETTLE`] suffices;
//! - any other change (created, truncated, written, removed, renamed away):
//!   more is probably coming, so the burst must be quiet for [`QUIET`].
//!
//! Metadata alone (`chmod`, `touch`) starts a run only when nothing else is
//! pending, and never delays one that is.

use std::path::Path;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use notify::EventKind;
use notify::event::{AccessKind, AccessMode, ModifyKind, RenameMode};

/// After a completed source, how long the folder must stay quiet.
pub const SETTLE: Duration = Duration::from_millis(8);
/// After any other relevant change, how long the folder must stay quiet.
pub const QUIET: Duration = Duration::from_millis(50);

/// What one file event says about the solution's sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// A source's new content is whole: a write closed, a rename onto it.
    Completed,
    /// A source changed and more may follow.
    Partial,
    /// Only a source's metadata changed.
    Touched,
}

/// Whether a changed path should trigger a run: Rust sources and the
/// manifest of the solution, not build output, VCS data, editor swap files
/// or the tests `x` exports.
pub fn relevant(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else { return false };
    let mut parts = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned());
    let Some(first) = parts.next() else { return false };
    if first == "target" || first == "tests" || first.starts_with('.') {
        return false;
    }
    let name = rel.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    !name.starts_with('.') && (name.ends_with(".rs") || name == "Cargo.toml")
}

/// Classifies one event under the solution folder `root`; `None` when it
/// says nothing about the sources (reads, opens, other files).
pub fn classify(root: &Path, kind: &EventKind, paths: &[std::path::PathBuf]) -> Option<Change> {
    let any = || paths.iter().any(|p| relevant(root, p));
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => any().then_some(Change::Completed),
        EventKind::Access(_) => None,
        // A rename: what matters is where the file landed (the last path).
        EventKind::Modify(ModifyKind::Name(RenameMode::To)) => any().then_some(Change::Completed),
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => match paths.last() {
            Some(to) if relevant(root, to) => Some(Change::Completed),
            _ => any().then_some(Change::Partial),
        },
        EventKind::Modify(ModifyKind::Metadata(_)) => any().then_some(Change::Touched),
        _ => any().then_some(Change::Partial),
    }
}

/// Turns a burst of changes into one "saved" at the moment it settles.
#[derive(Debug, Default)]
pub struct Debouncer {
    due: Option<Instant>,
}

impl Debouncer {
    pub fn on(&mut self, change: Change, now: Instant) {
        let wait = match change {
            Change::Completed => SETTLE,
            Change::Partial => QUIET,
            Change::Touched if self.due.is_some() => return,
            Change::Touched => QUIET,
        };
        self.due = Some(now + wait);
    }

    /// When the pending save settles, if one is pending.
    pub fn due(&self) -> Option<Instant> {
        self.due
    }

    /// Whether the pending save has settled by `now`; it is then consumed.
    pub fn fire(&mut self, now: Instant) -> bool {
        if self.due.is_some_and(|due| now >= due) {
            self.due = None;
            return true;
        }
        false
    }
}

/// Watches the solution folder; every event that concerns its sources goes
/// to `send`, classified. No timer thread: the loop that receives them
/// debounces.
pub fn watch(dir: &Path, send: impl Fn(Change) + Send + 'static) -> Result<notify::RecommendedWatcher> {
    use notify::Watcher;
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let watch_root = root.clone();
    let mut watcher = notify::recommended_watcher(move |result: notify::Result<notify::Event>| {
        let Ok(event) = result else { return };
        if let Some(change) = classify(&root, &event.kind, &event.paths) {
            crate::base::trace::mark("watch");
            send(change);
        }
    })
    .context("cannot start the file watcher")?;
    watcher
        .watch(&watch_root, notify::RecursiveMode::Recursive)
        .with_context(|| format!("cannot watch {}", dir.display()))?;
    Ok(watcher)
}

/// Sends every change to `tx` (for tests and tools that debounce themselves).
pub fn watch_into(dir: &Path, tx: Sender<Change>) -> Result<notify::RecommendedWatcher> {
    watch(dir, move |c| {
        let _ = tx.send(c);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn only_sources_and_the_manifest_trigger_runs() {
        let root = Path::new("/s");
        assert!(relevant(root, Path::new("/s/src/lib.rs")));
        assert!(relevant(root, Path::new("/s/src/store/mod.rs")));
        assert!(relevant(root, Path::new("/s/Cargo.toml")));
        assert!(!relevant(root, Path::new("/s/target/debug/x.rs")));
        assert!(!relevant(root, Path::new("/s/src/.lib.rs.swp")));
        assert!(!relevant(root, Path::new("/s/src/lib.rs~")));
        assert!(!relevant(root, Path::new("/s/tests/harness_case.rs")));
        assert!(!relevant(root, Path::new("/s/Cargo.lock")));
        assert!(!relevant(root, Path::new("/elsewhere/src/lib.rs")));
    }

    #[test]
    fn a_rename_counts_where_the_file_lands() {
        let root = Path::new("/s");
        let both = EventKind::Modify(ModifyKind::Name(RenameMode::Both));
        let p = |s: &str| PathBuf::from(s);
        // sed -i, atomic saves: a temporary file renamed onto the source.
        assert_eq!(classify(root, &both, &[p("/s/src/sedAb12"), p("/s/src/lib.rs")]), Some(Change::Completed));
        // vim's backup: the source renamed away is not a finished save.
        assert_eq!(classify(root, &both, &[p("/s/src/lib.rs"), p("/s/src/lib.rs~")]), Some(Change::Partial));
        let close = EventKind::Access(AccessKind::Close(AccessMode::Write));
        assert_eq!(classify(root, &close, &[p("/s/src/lib.rs")]), Some(Change::Completed));
        assert_eq!(classify(root, &close, &[p("/s/src/.lib.rs.swp")]), None);
        let open = EventKind::Access(AccessKind::Open(AccessMode::Any));
        assert_eq!(classify(root, &open, &[p("/s/src/lib.rs")]), None);
    }

    /// Replays changes `ms` milliseconds apart; returns the instants (in ms
    /// from the first change) at which a save settled.
    fn replay(changes: &[(u64, Change)]) -> Vec<u64> {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut d = Debouncer::default();
        let mut fired = Vec::new();
        let end = changes.last().map_or(0, |c| c.0) + 1000;
        let mut next = changes.iter().peekable();
        for ms in 0..=end {
            while let Some((_, c)) = next.next_if(|(t, _)| *t == ms) {
                d.on(*c, at(ms));
            }
            if d.fire(at(ms)) {
                fired.push(ms);
            }
        }
        fired
    }

    #[test]
    fn a_completed_save_settles_fast_and_a_partial_one_waits() {
        use Change::*;
        // In place: truncate-and-write events, then the close.
        assert_eq!(replay(&[(0, Partial), (0, Partial), (1, Completed)]), vec![1 + 8]);
        // vim: original renamed away, new file created, written, closed,
        // chmod'ed afterwards (metadata never delays a pending save).
        assert_eq!(replay(&[(0, Partial), (1, Partial), (2, Partial), (3, Completed), (4, Touched)]), vec![3 + 8]);
        // Only partial changes (no close events on this platform): quiet.
        assert_eq!(replay(&[(0, Partial), (20, Partial)]), vec![20 + 50]);
        // Two saves far apart are two runs.
        assert_eq!(replay(&[(0, Completed), (200, Completed)]), vec![8, 208]);
        // A touch alone is a run, after the quiet period.
        assert_eq!(replay(&[(0, Touched)]), vec![50]);
    }

    /// The events each editor's way of saving produces on this machine end
    /// in a completed source, so every one of them gets the short settle,
    /// and the burst yields exactly one save.
    #[test]
    fn every_editors_way_of_saving_is_one_save_that_settles_fast() {
        type Save = fn(&Path);
        let in_place: Save = |src| std::fs::write(src.join("lib.rs"), "// in place\n").unwrap();
        let atomic: Save = |src| {
            std::fs::write(src.join(".lib.rs.tmp-1234"), "// atomic\n").unwrap();
            std::fs::rename(src.join(".lib.rs.tmp-1234"), src.join("lib.rs")).unwrap();
        };
        let sed: Save = |src| {
            let ok = std::process::Command::new("sed")
                .args(["-i", "s/^.*$/\\/\\/ sed/"])
                .arg(src.join("lib.rs"))
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                // No sed here: what it does, by hand.
                std::fs::write(src.join("sedXy12Ab"), "// sed\n").unwrap();
                std::fs::rename(src.join("sedXy12Ab"), src.join("lib.rs")).unwrap();
            }
        };
        let vim: Save = |src| {
            use std::io::Write;
            // The writability probe, the backup by rename, a new file.
            std::fs::write(src.join("4913"), "").unwrap();
            std::fs::remove_file(src.join("4913")).unwrap();
            std::fs::rename(src.join("lib.rs"), src.join("lib.rs~")).unwrap();
            let mut f = std::fs::File::create(src.join("lib.rs")).unwrap();
            f.write_all(b"// vim\n").unwrap();
            f.sync_all().unwrap();
            drop(f);
            std::fs::set_permissions(src.join("lib.rs"), std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
            std::fs::remove_file(src.join("lib.rs~")).unwrap();
        };
        let helix: Save = |src| {
            use std::io::Write;
            // A backup copy beside the file, then a write in place in two
            // chunks, then the backup removed.
            std::fs::copy(src.join("lib.rs"), src.join(".lib.rs.bck")).unwrap();
            let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(src.join("lib.rs")).unwrap();
            f.write_all(b"// helix, ").unwrap();
            f.write_all(b"two chunks\n").unwrap();
            f.flush().unwrap();
            drop(f);
            std::fs::remove_file(src.join(".lib.rs.bck")).unwrap();
        };
        for (name, save) in
            [("in place", in_place), ("atomic rename", atomic), ("sed -i", sed), ("vim", vim), ("helix", helix)]
        {
            let dir = tempfile::tempdir().unwrap();
            let src = dir.path().join("src");
            std::fs::create_dir_all(&src).unwrap();
            std::fs::write(src.join("lib.rs"), "// before\n").unwrap();
            let (tx, rx) = std::sync::mpsc::channel();
            let _w = watch_into(dir.path(), tx).unwrap();
            save(&src);
            // Everything the save produced: up to the completed source,
            // then whatever trails it.
            let mut changes = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(10);
            while !changes.contains(&Change::Completed) && Instant::now() < deadline {
                if let Ok(c) = rx.recv_timeout(Duration::from_millis(50)) {
                    changes.push(c);
                }
            }
            changes.extend(rx.recv_timeout(Duration::from_millis(300)).into_iter().chain(rx.try_iter()));
            let content: Vec<&Change> = changes.iter().filter(|c| **c != Change::Touched).collect();
            assert_eq!(content.last(), Some(&&Change::Completed), "{name}: {changes:?}");
            // Delivered in one burst (1 ms apart), they settle once, fast.
            let timed: Vec<(u64, Change)> = changes.iter().enumerate().map(|(i, c)| (i as u64, *c)).collect();
            let last_completed = timed.iter().rposition(|(_, c)| *c == Change::Completed).unwrap() as u64;
            assert_eq!(replay(&timed), vec![last_completed + 8], "{name}: {changes:?}");
        }
    }
}
