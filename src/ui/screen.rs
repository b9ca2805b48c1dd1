//! One loop for the small full-screen steps before a session (the first
//! ninety seconds, the mock's ready screen): take the terminal, draw, feed
//! keys, give the terminal back however the step ends.

use std::time::Duration;

use anyhow::{Context, Result};
use ratatui::Frame;
use ratatui::crossterm::event::{self, Event, KeyEvent};

/// Runs `state` until `done` says so: `tick` before each draw (clocks),
/// `on_key` for each key event.
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
            {
                on_key(state, key);
            }
        }
    })();
    ratatui::restore();
    result
}
