//! The practice session's terminal UI: one loop over one channel of
//! messages, fed by an input thread, a file watcher and the runner thread
//! that builds and judges in the background.
//!
//! Each turn drains the channel, applies the messages to the [`App`],
//! performs the effects they asked for, and draws once. Idle means idle:
//! the loop blocks on the channel and wakes once a second for the clock.

pub mod app;

pub mod view;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use notify::EventKind;
use ratatui::crossterm::event::{self, Event};
use ratatui::crossterm::{execute, terminal};

use crate::base::config::Config;
use crate::base::fsio;
use crate::judge::compile;
use crate::judge::evaluate::Judge;
use crate::problem::model::Problem;
use crate::session::report::{self, Report};
use crate::session::state::{Session, SourceFile};
use app::{App, Effect, Msg, RunnerMsg};

/// How long the solution folder must be quiet before a change counts.
const DEBOUNCE: Duration = Duration::from_millis(50);

/// Commands to the runner thread.
enum RunnerCmd {
    Run { upto: usize, cancel: Arc<AtomicBool> },
}

/// Restores the terminal however the session ends (an error included; a
/// panic is covered by the hook `ratatui::init` installs).
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// Runs a session until the candidate quits; returns the final state and
/// the path of the last report written.
pub fn run(
    config: &Config,
    problem: Problem,
    session: Session,
    solution_dir: PathBuf,
    notes: Vec<String>,
) -> Result<(Session, Option<PathBuf>)> {
    let (tx, rx) = mpsc::channel::<Msg>();
    let (cmd_tx, cmd_rx) = mpsc::channel::<RunnerCmd>();
    {
        let (config, problem, dir, tx) = (config.clone(), problem.clone(), solution_dir.clone(), tx.clone());
        std::thread::Builder::new()
            .name("runner".into())
            .spawn(move || runner(&config, problem, &dir, cmd_rx, tx))
            .context("cannot start the runner thread")?;
    }
    let _watcher = watch(&solution_dir, tx.clone())?;
    let input = InputControl::default();
    {
        let (tx, input) = (tx.clone(), input.clone());
        std::thread::Builder::new()
            .name("input".into())
            .spawn(move || read_input(tx, input))
            .context("cannot start the input thread")?;
    }
    drop(tx);

    let mut terminal = ratatui::init();
    let _restore = Restore;
    let lib = fsio::shown(&solution_dir.join("src/lib.rs"));
    let mut app = App::new(problem, session, solution_dir, fsio::now_ms());
    app.intro = notes;
    app.intro.push(format!("your solution: {lib} (every save is judged)"));
    if !app.session.is_running() {
        app.report_path = Some(write_report(config, &app)?);
    }
    let mut cancel: Option<Arc<AtomicBool>> = None;
    let mut last_tick = Instant::now();
    let mut change_due: Option<Instant> = None;
    // Closing the terminal or `kill` ends the session as `q` + `y` would:
    // state and report saved, terminal restored.
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, stop.clone()).context("cannot install a signal handler")?;
    }
    'outer: loop {
        app.now_ms = fsio::now_ms();
        let stopping = stop.load(Ordering::Relaxed);
        if !stopping {
            terminal.draw(|f| view::draw(f, &app)).context("cannot draw")?;
        }
        let fast = app.busy() || app.runner == app::Runner::Preparing;
        let tick = if fast { Duration::from_millis(100) } else { Duration::from_millis(1000 - app.now_ms % 1000 + 5) };
        let mut wait = tick.saturating_sub(last_tick.elapsed().min(tick));
        if let Some(due) = change_due {
            wait = wait.min(due.saturating_duration_since(Instant::now()));
        }
        let first = match if stopping { Ok(Msg::Tick) } else { rx.recv_timeout(wait) } {
            Ok(m) => Some(m),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let mut msgs: Vec<Msg> = Vec::new();
        if stopping {
            msgs.push(Msg::Stop);
        }
        for msg in first.into_iter().chain(rx.try_iter()) {
            match msg {
                // Held back until the folder has been quiet for DEBOUNCE.
                Msg::Changed => change_due = Some(Instant::now() + DEBOUNCE),
                other => msgs.push(other),
            }
        }
        if change_due.is_some_and(|due| Instant::now() >= due) {
            change_due = None;
            msgs.push(Msg::Changed);
        }
        if last_tick.elapsed() >= tick || (msgs.is_empty() && change_due.is_none()) {
            last_tick = Instant::now();
            msgs.push(Msg::Tick);
        }
        for msg in msgs {
            app.now_ms = fsio::now_ms();
            for effect in app.update(msg) {
                match effect {
                    Effect::Run { upto } => {
                        // Anything the runner still does for an older run
                        // (shrinking its failures) is stale now.
                        if let Some(old) = &cancel {
                            old.store(true, Ordering::Relaxed);
                        }
                        let flag = Arc::new(AtomicBool::new(false));
                        cancel = Some(flag.clone());
                        let _ = cmd_tx.send(RunnerCmd::Run { upto, cancel: flag });
                    }
                    Effect::Cancel => {
                        if let Some(flag) = &cancel {
                            flag.store(true, Ordering::Relaxed);
                        }
                    }
                    Effect::Persist => {
                        if let Err(e) = report::save_state(&config.reports_dir, &app.session) {
                            app.notify(format!("cannot save the session: {e:#}"), false);
                        }
                    }
                    Effect::Report => match write_report(config, &app) {
                        Ok(path) => app.report_path = Some(path),
                        Err(e) => app.notify(format!("cannot write the report: {e:#}"), false),
                    },
                    Effect::OpenEditor => {
                        let file = app.solution_dir.join("src/lib.rs");
                        let result = suspended(&input, || open_editor(&file));
                        terminal.clear().ok();
                        if let Err(e) = result {
                            app.notify(format!("{e:#}"), false);
                        }
                    }
                    Effect::Export { case, steps } => {
                        match crate::session::export::write_test(
                            &app.solution_dir,
                            &app.problem.signature,
                            &case,
                            &steps,
                        ) {
                            Ok(e) => {
                                let mut text = if e.already {
                                    format!("already exported: {}", fsio::shown(&e.path))
                                } else {
                                    format!("exported to {}", fsio::shown(&e.path))
                                };
                                if let Some(n) = e.note {
                                    text.push_str(&format!(" — {n}"));
                                }
                                app.notify(text, true);
                            }
                            Err(e) => app.notify(format!("export failed: {e:#}"), false),
                        }
                    }
                    Effect::Quit => break 'outer,
                }
            }
        }
    }
    // Whatever still runs for this session ends with it.
    if let Some(flag) = &cancel {
        flag.store(true, Ordering::Relaxed);
    }
    compile::stop_all_builds();
    drop(_restore);
    Ok((app.session, app.report_path))
}

fn write_report(config: &Config, app: &App) -> Result<PathBuf> {
    let report =
        Report::from_session(&app.session, &app.problem, app.now_ms, crate::session::score::score_of(&app.session));
    report::write(&config.reports_dir, &report)
}

/// The runner: prepares the judge once, then builds and judges on request.
fn runner(config: &Config, problem: Problem, dir: &Path, rx: Receiver<RunnerCmd>, tx: Sender<Msg>) {
    let send = |m: RunnerMsg| {
        let _ = tx.send(Msg::Runner(m));
    };
    let gates = problem.gates.len();
    let judge = match Judge::new(config, problem, gates, None) {
        Ok(j) => j,
        Err(e) => return send(RunnerMsg::Failed(format!("{e:#}"))),
    };
    send(RunnerMsg::Ready);
    while let Ok(mut cmd) = rx.recv() {
        // Only the newest request matters.
        while let Ok(next) = rx.try_recv() {
            cmd = next;
        }
        let RunnerCmd::Run { upto, cancel } = cmd;
        send(RunnerMsg::Compiling);
        let sources: Vec<SourceFile> =
            fsio::read_sources(dir).into_iter().map(|(path, content)| SourceFile { path, content }).collect();
        let build = match compile::build_cancellable(config, dir, Some(cancel.clone())) {
            Ok(b) => b,
            Err(e) => {
                send(RunnerMsg::Error(format!("{e:#}")));
                continue;
            }
        };
        send(RunnerMsg::Built {
            ok: build.ok(),
            duration_ms: build.duration.as_millis() as u64,
            errors: build.errors().count() as u32 + u32::from(build.failure.is_some()),
        });
        if cancel.load(Ordering::Relaxed) {
            send(RunnerMsg::Cancelled);
            continue;
        }
        let progress = |done, total| {
            let _ = tx.send(Msg::Runner(RunnerMsg::Progress { done, total }));
        };
        // The verdict goes out before shrinking; the shrunk cases follow.
        let sent_early = std::cell::Cell::new(false);
        let early = |eval: &crate::judge::evaluate::Evaluation| {
            sent_early.set(true);
            send(RunnerMsg::Finished(Box::new(eval.clone()), sources.clone()));
        };
        let result = judge.evaluate_build(build, upto, &cancel, &progress, Some(&early));
        // Once the verdict went out the run is over for the UI; what
        // remains is an optional refinement, dropped when stale.
        match (result, sent_early.get(), cancel.load(Ordering::Relaxed)) {
            (_, true, true) | (Err(_), true, _) => {}
            (Ok(eval), true, false) => send(RunnerMsg::Refined(Box::new(eval))),
            (_, false, true) => send(RunnerMsg::Cancelled),
            (Ok(eval), false, false) => send(RunnerMsg::Finished(Box::new(eval), sources)),
            (Err(e), false, false) => send(RunnerMsg::Error(format!("{e:#}"))),
        }
    }
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

/// Watches the solution folder. Raw events only mark "something relevant
/// changed"; the loop debounces them ([`DEBOUNCE`]), so editors that save by
/// writing a temporary file and renaming it over the original (a burst of
/// create, rename and remove events) cause one run, and an idle session has
/// no timer thread waking up.
fn watch(dir: &Path, tx: Sender<Msg>) -> Result<notify::RecommendedWatcher> {
    use notify::Watcher;
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let watch_root = root.clone();
    let mut watcher = notify::recommended_watcher(move |result: notify::Result<notify::Event>| {
        let Ok(event) = result else { return };
        if !matches!(event.kind, EventKind::Access(_)) && event.paths.iter().any(|p| relevant(&root, p)) {
            let _ = tx.send(Msg::Changed);
        }
    })
    .context("cannot start the file watcher")?;
    watcher
        .watch(&watch_root, notify::RecursiveMode::Recursive)
        .with_context(|| format!("cannot watch {}", dir.display()))?;
    Ok(watcher)
}

/// Lets the loop stop the input thread while an editor owns the terminal.
#[derive(Clone, Default)]
struct InputControl {
    paused: Arc<AtomicBool>,
    parked: Arc<AtomicBool>,
}

fn read_input(tx: Sender<Msg>, ctl: InputControl) {
    loop {
        if ctl.paused.load(Ordering::Acquire) {
            ctl.parked.store(true, Ordering::Release);
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        ctl.parked.store(false, Ordering::Release);
        match event::poll(Duration::from_millis(250)) {
            Ok(true) => {
                let msg = match event::read() {
                    Ok(Event::Key(k)) => Msg::Key(k),
                    Ok(Event::Resize(..)) => Msg::Tick,
                    Ok(_) => continue,
                    Err(_) => return,
                };
                if tx.send(msg).is_err() {
                    return;
                }
            }
            Ok(false) => {}
            Err(_) => return,
        }
    }
}

/// Runs `f` with the terminal handed back to the shell.
fn suspended<T>(input: &InputControl, f: impl FnOnce() -> T) -> T {
    input.paused.store(true, Ordering::Release);
    let deadline = Instant::now() + Duration::from_millis(500);
    while !input.parked.load(Ordering::Acquire) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    ratatui::restore();
    let out = f();
    let _ = terminal::enable_raw_mode();
    let _ = execute!(std::io::stdout(), terminal::EnterAlternateScreen);
    input.paused.store(false, Ordering::Release);
    out
}

/// `$VISUAL`, then `$EDITOR`, then the first of nano and vi on the PATH.
fn open_editor(file: &Path) -> Result<()> {
    let configured = ["VISUAL", "EDITOR"].iter().find_map(|v| std::env::var(v).ok().filter(|s| !s.trim().is_empty()));
    let command = match configured {
        Some(c) => c,
        None => ["nano", "vi"]
            .iter()
            .find(|e| std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(e).is_file())))
            .map(|s| s.to_string())
            .context("no editor: set $EDITOR (or $VISUAL)")?,
    };
    // The variable may carry arguments, e.g. `code --wait`.
    let mut parts = command.split_whitespace();
    let program = parts.next().context("$EDITOR is empty")?;
    let status = std::process::Command::new(program)
        .args(parts)
        .arg(file)
        .status()
        .with_context(|| format!("cannot run the editor `{command}`"))?;
    if !status.success() {
        anyhow::bail!("the editor `{command}` exited with {status}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
