//! One loop for the full-screen TUIs other than a session's (the first
//! ninety seconds, the mock's ready screen, the drill, the report review):
//! take the terminal, draw, feed keys, give the terminal back however it
//! ends. (A session's loop also waits on the runner and the file watcher:
//! `ui::practice`.)

use std::time::Duration;

use anyhow::{Context, Result};
use ratatui::Frame;
use ratatui::crossterm::event::{self, Event, KeyEvent, KeyEventKind};

/// Runs `state` until `done` says so: `tick` before each draw (clocks, at
/// least four times a second), `on_key` for each key pressed (a release,
/// which some terminals report, is not a key).
pub fn run<S>(
    state: &mut S,
    draw: impl Fn(&mut Frame, &S),
    mut tick: impl FnMut(&mut S),
    mut on_key: impl FnMut(&mut S, KeyEvent),
    done: impl Fn(&S) -> bool,
) -> Result<()> {
    let mut terminal = ratatui::init();
    let result = (|| -> Result<()> {
        loop {
            tick(state);
            terminal.draw(|f| draw(f, state)).context("cannot draw")?;
            if done(state) {
                return Ok(());
            }
            if event::poll(Duration::from_millis(250)).context("cannot read the terminal")?
                && let Event::Key(key) = event::read().context("cannot read the terminal")?
                && key.kind != KeyEventKind::Release
            {
                on_key(state, key);
            }
        }
    })();
    ratatui::restore();
    result
}
