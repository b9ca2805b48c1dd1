//! The practice session's terminal UI: one loop over one channel of
//! messages, fed by an input thread, a file watcher and the runner thread
//! that builds and judges in the background.
//!
//! Each turn drains the channel, applies the messages to the [`App`],
//! performs the effects they asked for, and draws once. Idle means idle:
//! the loop blocks on the channel and wakes once a second for the clock.

pub mod app;

pub mod view;

pub mod watch;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::crossterm::event::{self, Event};
use ratatui::crossterm::{execute, terminal};

use crate::base::config::Config;
use crate::base::{fsio, trace};
use crate::judge::compile;
use crate::judge::evaluate::{Evaluation, Judge, Stage, Unshrunk};
use crate::problem::model::Problem;
use crate::session::report::{self, Report};
use crate::session::state::{Session, SourceFile};
use app::{App, Effect, Msg, RunnerMsg};

/// Commands to the runner thread.
enum RunnerCmd {
    Run { path: Vec<usize>, cancel: Arc<AtomicBool> },
}

/// Restores the terminal however the session ends (an error included; a
/// panic is covered by the hook `ratatui::init` installs).
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// Where the loop's effects go: the runner (and the cancel flag of its
/// run in flight), the writes of state and report that wait for the next
/// draw, and the input thread, paused around an editor.
struct Effects<'a> {
    cmd_tx: mpsc::Sender<RunnerCmd>,
    cancel: Option<Arc<AtomicBool>>,
    writes: Writes,
    input: &'a InputControl,
}

impl Effects<'_> {
    /// Carries out one effect of `App::update`; `true` for `Quit`.
    fn apply<B: Backend>(&mut self, effect: Effect, app: &mut App, terminal: &mut Terminal<B>) -> bool {
        match effect {
            Effect::Run { path } => {
                trace::mark("run-requested");
                // Anything the runner still does for an older run
                // (shrinking its failures) is stale now.
                if let Some(old) = &self.cancel {
                    old.store(true, Ordering::Relaxed);
                }
                let flag = Arc::new(AtomicBool::new(false));
                self.cancel = Some(flag.clone());
                let _ = self.cmd_tx.send(RunnerCmd::Run { path, cancel: flag });
            }
            Effect::Cancel => {
                if let Some(flag) = &self.cancel {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            // Written once the screen shows what changed (`Writes::flush`,
            // after the next draw).
            Effect::Persist | Effect::Report | Effect::Discard => self.writes.ask(&effect),
            Effect::OpenEditor => {
                let file = app.solution_dir.join("src/lib.rs");
                let result = suspended(self.input, || open_editor(&file));
                terminal.clear().ok();
                if let Err(e) = result {
                    app.notify(format!("{e:#}"), false);
                }
            }
            Effect::Export { case, steps } => {
                match crate::session::export::write_test(&app.solution_dir, &app.problem.signature, &case, &steps) {
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
            Effect::Quit => return true,
        }
        false
    }
}

/// Waits for the loop's next messages: until the next tick (fast while
/// something runs), a message, or a debounced save is due. A burst of file
/// events becomes one `Changed` once it settles. `None` when every sender
/// is gone.
fn next_messages(
    rx: &mpsc::Receiver<Msg>,
    app: &App,
    saves: &mut watch::Debouncer,
    last_tick: &mut Instant,
    stopping: bool,
) -> Option<Vec<Msg>> {
    let fast = app.busy() || app.runner == app::Runner::Preparing;
    let tick = if fast { Duration::from_millis(100) } else { Duration::from_millis(1000 - app.now_ms % 1000 + 5) };
    let mut wait = tick.saturating_sub(last_tick.elapsed().min(tick));
    if let Some(due) = saves.due() {
        wait = wait.min(due.saturating_duration_since(Instant::now()));
    }
    let first = match if stopping { Ok(Msg::Tick) } else { rx.recv_timeout(wait) } {
        Ok(m) => Some(m),
        Err(RecvTimeoutError::Timeout) => None,
        Err(RecvTimeoutError::Disconnected) => return None,
    };
    let mut msgs: Vec<Msg> = Vec::new();
    if stopping {
        msgs.push(Msg::Stop);
    }
    for msg in first.into_iter().chain(rx.try_iter()) {
        match msg {
            // Held back until the burst of events settles.
            Msg::FileEvent(change) => saves.on(change, Instant::now()),
            other => msgs.push(other),
        }
    }
    if saves.fire(Instant::now()) {
        trace::mark("debounced");
        msgs.push(Msg::Changed);
    }
    if last_tick.elapsed() >= tick || (msgs.is_empty() && saves.due().is_none()) {
        *last_tick = Instant::now();
        msgs.push(Msg::Tick);
    }
    Some(msgs)
}

/// The session's state for the loop, its intro notes first, and for a
/// graph problem the follow-ups earlier sessions met.
fn new_app(config: &Config, problem: Problem, session: Session, solution_dir: PathBuf, notes: Vec<String>) -> App {
    let lib = fsio::shown(&solution_dir.join("src/lib.rs"));
    let mut app = App::new(problem, session, solution_dir, fsio::now_ms());
    app.intro = notes;
    if app.problem.is_graph() {
        let (reports, _) = crate::session::report::load_all(&config.reports_dir);
        app.seen = crate::session::path::seen(&app.problem.id, &reports);
    }
    app.intro.push(format!("your solution: {lib} (every save is judged)"));
    app
}

/// A flag SIGTERM, SIGHUP and SIGINT set.
fn stop_on_signals() -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, stop.clone()).context("cannot install a signal handler")?;
    }
    Ok(stop)
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
    // The loop tells the runner when a verdict is on screen.
    let (drawn_tx, drawn_rx) = mpsc::channel::<()>();
    {
        let (config, problem, dir, tx) = (config.clone(), problem.clone(), solution_dir.clone(), tx.clone());
        std::thread::Builder::new()
            .name("runner".into())
            .spawn(move || runner(&config, problem, &dir, cmd_rx, drawn_rx, tx))
            .context("cannot start the runner thread")?;
    }
    let _watcher = {
        let tx = tx.clone();
        watch::watch(&solution_dir, move |change| {
            let _ = tx.send(Msg::FileEvent(change));
        })?
    };
    let input = InputControl::default();
    {
        let (tx, input) = (tx.clone(), input.clone());
        std::thread::Builder::new()
            .name("input".into())
            .spawn(move || read_input(tx, input))
            .context("cannot start the input thread")?;
    }
    let writes = Writes::new(config, tx.clone())?;
    drop(tx);

    let mut terminal = ratatui::init();
    let _restore = Restore;
    let mut app = new_app(config, problem, session, solution_dir, notes);
    if !app.session.is_running() {
        app.report_path = Some(write_report(&config.reports_dir, &app)?);
    }
    let mut effects = Effects { cmd_tx, cancel: None, writes, input: &input };
    // Closing the terminal or `kill` ends the session as `q` + `y` would:
    // state and report saved, terminal restored.
    let stop = stop_on_signals()?;
    event_loop(&mut terminal, &mut app, &mut effects, &rx, &drawn_tx, &config.reports_dir, &stop)?;
    effects.writes.finish(&config.reports_dir, &mut app);
    // Whatever still runs for this session ends with it.
    if let Some(flag) = &effects.cancel {
        flag.store(true, Ordering::Relaxed);
    }
    compile::stop_all_builds();
    drop(_restore);
    Ok((app.session, app.report_path))
}

/// The session's loop, on any backend: draw, write what the last turn
/// asked for, wait for messages, update the app and carry out its effects,
/// until it quits, every sender is gone, or `stop` is set.
fn event_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    effects: &mut Effects,
    rx: &Receiver<Msg>,
    drawn_tx: &Sender<()>,
    reports_dir: &Path,
    stop: &AtomicBool,
) -> Result<()> {
    let mut last_tick = Instant::now();
    let mut saves = watch::Debouncer::default();
    // Set when a verdict arrives, so the trace marks the draw that shows it.
    let mut verdict_arrived = false;
    // Debug builds only, for the tests of the panic path: the loop panics
    // once this file exists.
    let panic_file = std::env::var_os("HARNESS_DEBUG_PANIC_FILE").filter(|_| cfg!(debug_assertions));
    loop {
        if panic_file.as_ref().is_some_and(|f| Path::new(f).exists()) {
            panic!("a panic requested through HARNESS_DEBUG_PANIC_FILE (a test of the panic path)");
        }
        app.now_ms = fsio::now_ms();
        let stopping = stop.load(Ordering::Relaxed);
        if !stopping {
            if verdict_arrived {
                trace::mark("draw-start");
            }
            terminal.draw(|f| view::draw(f, app)).map_err(|e| anyhow::anyhow!("cannot draw: {e}"))?;
            if std::mem::take(&mut verdict_arrived) {
                trace::mark("drawn");
                let _ = drawn_tx.send(());
            }
        }
        // The verdict is on screen first; the files follow at once.
        effects.writes.flush(reports_dir, app);
        let Some(msgs) = next_messages(rx, app, &mut saves, &mut last_tick, stopping) else {
            return Ok(());
        };
        for msg in msgs {
            app.now_ms = fsio::now_ms();
            if matches!(msg, Msg::Runner(RunnerMsg::Finished(..) | RunnerMsg::Settled(..))) {
                trace::mark("verdict-received");
                verdict_arrived = true;
            }
            for effect in app.update(msg) {
                if effects.apply(effect, app, terminal) {
                    return Ok(());
                }
            }
        }
    }
}

/// The session state and report writes asked for since the last draw.
///
/// State is saved on a thread of its own: a save is two `fsync`s, which on
/// a busy disk take longer than judging, and the loop must stay free to
/// show the next verdict. Saves go out in order, and only the newest of
/// those waiting is written. Reports (one per gate passed) are written
/// here, after the draw.
pub struct Writes {
    state: bool,
    report: bool,
    /// The session is discarded: nothing more is written, and what was is
    /// removed once the saver has stopped.
    discard: bool,
    saver: Option<(Sender<Session>, std::thread::JoinHandle<()>)>,
}

impl Writes {
    /// With a saving thread, so that a state save never holds up a draw.
    fn new(config: &Config, tx: Sender<Msg>) -> Result<Writes> {
        let (state_tx, state_rx) = mpsc::channel::<Session>();
        let dir = config.reports_dir.clone();
        let handle = std::thread::Builder::new()
            .name("saver".into())
            .spawn(move || {
                while let Ok(mut session) = state_rx.recv() {
                    // Only the newest state matters.
                    while let Ok(newer) = state_rx.try_recv() {
                        session = newer;
                    }
                    if let Err(e) = report::save_state(&dir, &session) {
                        let _ = tx.send(Msg::SaveFailed(format!("cannot save the session: {e:#}")));
                    }
                }
            })
            .context("cannot start the saving thread")?;
        Ok(Writes { state: false, report: false, discard: false, saver: Some((state_tx, handle)) })
    }

    /// Without a saving thread: `flush` writes the state itself. For a
    /// loop driven by a test, which reads the files at once.
    pub fn synchronous() -> Writes {
        Writes { state: false, report: false, discard: false, saver: None }
    }

    /// Notes the write an effect asks for (`Persist`, `Report`,
    /// `Discard`); any other effect is not a write and changes nothing.
    pub fn ask(&mut self, effect: &Effect) {
        match effect {
            Effect::Persist => self.state = true,
            Effect::Report => self.report = true,
            Effect::Discard => self.discard = true,
            _ => {}
        }
    }

    /// Writes what was asked for since the last flush: the state (through
    /// the saver, or here without one) and the report. A failure is told
    /// on screen (and makes this `false`); nothing is lost, the next save
    /// tries again.
    pub fn flush(&mut self, reports_dir: &Path, app: &mut App) -> bool {
        if self.discard {
            (self.state, self.report) = (false, false);
        }
        if self.state || self.report {
            app.before_writes();
        }
        let mut written = true;
        if std::mem::take(&mut self.state) {
            let queued = self.saver.as_ref().is_some_and(|(tx, _)| tx.send(app.session.clone()).is_ok());
            if !queued && let Err(e) = report::save_state(reports_dir, &app.session) {
                app.notify(format!("cannot save the session: {e:#}"), false);
                written = false;
            }
        }
        if std::mem::take(&mut self.report) {
            match write_report(reports_dir, app) {
                Ok(path) => app.report_path = Some(path),
                Err(e) => {
                    app.notify(format!("cannot write the report: {e:#}"), false);
                    written = false;
                }
            }
        }
        written
    }

    /// Writes what is still asked for and waits until every state save
    /// is on disk.
    pub fn finish(mut self, reports_dir: &Path, app: &mut App) {
        self.flush(reports_dir, app);
        if let Some((tx, handle)) = self.saver.take() {
            drop(tx);
            let _ = handle.join();
        }
        if self.discard {
            app.report_path = None;
            if let Err(e) = report::forget(reports_dir, &app.session) {
                eprintln!("warning: {e:#}");
            }
        }
    }
}

fn write_report(reports_dir: &Path, app: &App) -> Result<PathBuf> {
    let report =
        Report::from_session(&app.session, &app.problem, app.now_ms, crate::session::score::score_of(&app.session));
    report::write(reports_dir, &report)
}

/// Measures the reference's scale curves gate by gate, at a low priority,
/// yielding to every save (`busy`) and starting a gate again after one.
fn warm_curves(judge: &Judge, busy: &AtomicBool) {
    let _ = rustix::process::setpriority_process(None, 10);
    for g in judge.gates.clone() {
        loop {
            while busy.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(25));
            }
            if judge.warm_scale(&[g], busy).is_err() || !busy.load(Ordering::Relaxed) {
                break;
            }
        }
    }
}

/// What a save's judging leaves to say once it returns: nothing more when
/// its outcome was settled on the way (the shrinking goes to the refiner),
/// else the settled outcome, the whole verdict, a cancel or an error.
/// `sent`: whether the verdict and the settled outcome went out already.
fn finish_run(
    result: Result<(Evaluation, Option<Unshrunk>)>,
    sent: (bool, bool),
    cancel: Arc<AtomicBool>,
    sources: Vec<SourceFile>,
    refine_tx: &Sender<(Unshrunk, Arc<AtomicBool>)>,
    send: &dyn Fn(RunnerMsg),
) {
    let (verdict, settled) = sent;
    match (result, cancel.load(Ordering::Relaxed)) {
        // Once the outcome is settled, what remains (shrinking) only
        // refines it, on the refiner's thread.
        (Ok((_, Some(unshrunk))), false) if settled => {
            let _ = refine_tx.send((unshrunk, cancel));
        }
        (_, _) if settled => trace::mark("quiet"),
        (_, true) => send(RunnerMsg::Cancelled),
        (Ok((eval, unshrunk)), false) if verdict => {
            send(RunnerMsg::Settled(Box::new(eval)));
            match unshrunk {
                Some(u) => {
                    let _ = refine_tx.send((u, cancel));
                }
                None => trace::mark("quiet"),
            }
        }
        (Ok((eval, _)), false) => {
            trace::mark("verdict-sent");
            send(RunnerMsg::Finished(Box::new(eval), sources));
            trace::mark("quiet");
        }
        (Err(e), false) => {
            send(RunnerMsg::Error(format!("{e:#}")));
            trace::mark("quiet");
        }
    }
}

/// Starts the refiner, which shrinks a settled save's failures; its
/// sender.
fn start_refiner(judge: &Arc<Judge>, tx: &Sender<Msg>) -> std::io::Result<Sender<(Unshrunk, Arc<AtomicBool>)>> {
    let (refine_tx, refine_rx) = mpsc::channel();
    let (judge, tx) = (judge.clone(), tx.clone());
    std::thread::Builder::new().name("refiner".into()).spawn(move || refiner(&judge, refine_rx, tx))?;
    Ok(refine_tx)
}

/// The runner: prepares the judge once, then builds and judges on request.
fn runner(
    config: &Config,
    problem: Problem,
    dir: &Path,
    rx: Receiver<RunnerCmd>,
    drawn: Receiver<()>,
    tx: Sender<Msg>,
) {
    let send = |m: RunnerMsg| {
        let _ = tx.send(Msg::Runner(m));
    };
    // Every gate is prepared: which follow-ups the path holds is drawn as
    // the session goes (a linear problem's path is all of its gates).
    let gates: Vec<usize> = (1..=problem.gates.len()).collect();
    let judge = match Judge::new(config, problem, &gates, None) {
        Ok(j) => Arc::new(j),
        Err(e) => return send(RunnerMsg::Failed(format!("{e:#}"))),
    };
    let refine_tx = match start_refiner(&judge, &tx) {
        Ok(refine_tx) => refine_tx,
        Err(e) => return send(RunnerMsg::Failed(format!("cannot start the refiner thread: {e}"))),
    };
    // While the candidate reads, the reference's scale curves are measured
    // (gate by gate, in the file's order), so a save whose cases pass
    // measures only the candidate. It yields to every save: `busy` is set
    // from a save's arrival to the end of its judging.
    let busy = Arc::new(AtomicBool::new(false));
    {
        let (judge, busy) = (judge.clone(), busy.clone());
        let warm = move || warm_curves(&judge, &busy);
        if let Err(e) = std::thread::Builder::new().name("warmer".into()).spawn(warm) {
            return send(RunnerMsg::Failed(format!("cannot start the warming thread: {e}")));
        }
    }
    send(RunnerMsg::Ready);
    while let Ok(mut cmd) = rx.recv() {
        busy.store(true, Ordering::Relaxed);
        // Cleared when this save's iteration ends, however it ends.
        let _busy = Busy(&busy);
        trace::mark("run-received");
        // Only the newest request matters.
        while let Ok(next) = rx.try_recv() {
            cmd = next;
        }
        let RunnerCmd::Run { path, cancel } = cmd;
        trace::mark("build-start");
        send(RunnerMsg::Compiling);
        let sources: Vec<SourceFile> =
            fsio::read_sources(dir).into_iter().map(|(path, content)| SourceFile { path, content }).collect();
        let build = match compile::build_fast(config, dir, Some(cancel.clone())) {
            Ok(b) => b,
            Err(e) => {
                send(RunnerMsg::Error(format!("{e:#}")));
                continue;
            }
        };
        trace::mark("build-end");
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
        // The cases' verdict goes out at once; the cost of the gates whose
        // cases pass settles their outcome next; shrunk failures follow.
        let (verdict_sent, settled_sent) = (std::cell::Cell::new(false), std::cell::Cell::new(false));
        let stages = |stage: Stage, eval: &Evaluation| match stage {
            Stage::Verdict => {
                verdict_sent.set(true);
                settled_sent.set(eval.settled());
                while drawn.try_recv().is_ok() {}
                trace::mark("verdict-sent");
                send(RunnerMsg::Finished(Box::new(eval.clone()), sources.clone()));
                // The scale checks that follow take both cores: the verdict
                // goes on screen first (a moment at most).
                if !eval.settled() {
                    let _ = drawn.recv_timeout(Duration::from_millis(100));
                }
            }
            Stage::Settled => {
                settled_sent.set(true);
                trace::mark("settled-sent");
                send(RunnerMsg::Settled(Box::new(eval.clone())));
            }
        };
        let result = judge.judge_build(build, &path, &cancel, &progress, Some(&stages));
        trace::mark("run-end");
        let sent = (verdict_sent.get(), settled_sent.get());
        finish_run(result, sent, cancel, sources, &refine_tx, &send);
    }
}

/// Clears a save's `busy` flag when dropped.
struct Busy<'a>(&'a AtomicBool);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// Shrinks the failing cases of settled runs, one at a time, and sends the
/// result unless a newer save made it stale.
fn refiner(judge: &Judge, rx: Receiver<(Unshrunk, Arc<AtomicBool>)>, tx: Sender<Msg>) {
    // Shrinking starts the moment a verdict goes out, while the screen is
    // drawing it and perhaps while the next save builds: it gets the CPU
    // only when they do not need it. On Linux the nice value is per thread
    // (this one) and the workers it starts inherit it.
    let _ = rustix::process::setpriority_process(None, 10);
    while let Ok((unshrunk, cancel)) = rx.recv() {
        if cancel.load(Ordering::Relaxed) {
            continue;
        }
        if let Ok(eval) = judge.shrink(unshrunk, &cancel)
            && !cancel.load(Ordering::Relaxed)
        {
            let _ = tx.send(Msg::Runner(RunnerMsg::Refined(Box::new(eval))));
        }
        // Nothing more runs for this save (the benchmark waits for this).
        trace::mark("quiet");
    }
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
    use crate::session::state::Mode;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    /// The session's own loop on a test backend: it draws, asks the runner
    /// that is ready to judge, and on `q` then `y` cancels that run and
    /// returns with the state and the report asked for, which `finish`
    /// writes (as `run` does).
    #[test]
    fn the_loop_draws_asks_the_ready_runner_to_judge_and_quits_on_q_then_y() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let problem = Problem::load(&root.join("problems"), &root.join("contract"), "versioned_kv").unwrap();
        let now = fsio::now_ms();
        let mut session = Session::new("versioned_kv", Mode::Practice, problem.path_length, 3_600_000, now);
        session.path = problem.default_path();
        let mut app = App::new(problem, session, PathBuf::from("/nonexistent/solutions/versioned_kv"), now);
        let reports = tempfile::tempdir().unwrap();
        let (tx, rx) = mpsc::channel::<Msg>();
        let (cmd_tx, cmd_rx) = mpsc::channel::<RunnerCmd>();
        let (drawn_tx, _drawn_rx) = mpsc::channel::<()>();
        let input = InputControl::default();
        let mut effects = Effects { cmd_tx, cancel: None, writes: Writes::synchronous(), input: &input };
        let key = |c| Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        for msg in [Msg::Runner(RunnerMsg::Ready), key('q'), key('y')] {
            tx.send(msg).unwrap();
        }
        // Were `y` not taken as the answer, the loop would end here, with
        // nothing left to read, and nothing cancelled or asked to be saved.
        drop(tx);
        let mut terminal = Terminal::new(TestBackend::new(110, 34)).unwrap();
        let stop = AtomicBool::new(false);
        event_loop(&mut terminal, &mut app, &mut effects, &rx, &drawn_tx, reports.path(), &stop).unwrap();

        let screen = terminal.backend().to_string();
        assert!(screen.contains("Gate 1"), "the loop drew the session:\n{screen}");
        let RunnerCmd::Run { path, cancel } = cmd_rx.try_recv().expect("the ready runner was asked to judge");
        assert_eq!(path, vec![1]);
        assert!(cancel.load(Ordering::Relaxed), "quitting cancels the run in flight");
        effects.writes.finish(reports.path(), &mut app);
        assert!(report::load_state(reports.path(), "versioned_kv").unwrap().is_some(), "the state was saved");
        assert!(app.report_path.as_ref().is_some_and(|p| p.is_file()), "the report was written");
    }
}
