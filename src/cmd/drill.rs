//! `harness drill`: timed recall of the seed's Thirty Questions, the
//! Complexity Table and every gate's follow-up questions, scheduled by
//! spaced repetition. `--list` prints the study items instead.

use std::io::IsTerminal;

use anyhow::{Result, bail};
use serde_json::json;

use crate::base::config::Config;
use crate::base::fsio;
use crate::problem::model::{self, Problem};
use crate::session::drill::{self, DrillState};
use crate::ui::drill::{Drill, run};

pub const NO_TTY: &str = "`harness drill` needs an interactive terminal (stdin and stdout must be a TTY). \
     For scripts, use `harness drill --list` (or `--list --json`).";

pub struct Options<'a> {
    pub list: bool,
    pub json: bool,
    pub chapter: Option<u32>,
    pub problem: Option<&'a str>,
    pub limit: usize,
}

pub fn command(config: &Config, opts: Options) -> Result<u8> {
    let mut problems = Vec::new();
    for id in model::list_ids(&config.problems_dir)? {
        problems.push(Problem::load(&config.problems_dir, &config.contract_dir, &id)?);
    }
    let narrow = match opts.problem {
        None => None,
        Some(id) => match problems.iter().find(|p| p.id == id) {
            Some(p) => Some((p.id.as_str(), p.chapter)),
            None => bail!("no problem `{id}` in {} (see `harness list`)", config.problems_dir.display()),
        },
    };
    let (reports, _) = crate::session::report::load_all(&config.reports_dir);
    let deck = drill::reached_only(drill::load_deck(&config.drill_dir(), &problems)?, &problems, &reports);
    let deck = drill::filter(deck, opts.chapter, narrow);
    if deck.is_empty() {
        bail!(
            "no cards match: the deck is {}/*.toml plus every gate's follow-up questions",
            config.drill_dir().display()
        );
    }
    let state = DrillState::load(&config.reports_dir)?;
    let now = fsio::now_ms();
    let (due, fresh) = state.counts(&deck, now);
    if opts.list {
        print_list(&state, &deck, now, opts.json)?;
        return Ok(0);
    }
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        bail!(NO_TTY);
    }
    let queue = state.queue(&deck, now, opts.limit).into_iter().cloned().collect();
    let mut app = Drill::new(queue, state, due, fresh, now);
    app.reports_dir = Some(config.reports_dir.clone());
    let app = run(app)?;
    let (in_time, slowly, missed) = app.tally();
    if !app.graded.is_empty() {
        println!(
            "drill: {in_time} in time, {slowly} slowly, {missed} missed; `harness drill --list` shows your study items"
        );
    }
    Ok(0)
}

fn print_list(state: &DrillState, deck: &[drill::Card], now: u64, as_json: bool) -> Result<()> {
    let (due, fresh) = state.counts(deck, now);
    let items = state.study_items(deck);
    if as_json {
        let chapters: Vec<_> = items
            .iter()
            .map(|(ch, cards)| {
                json!({
                    "chapter": if *ch == u32::MAX { None } else { Some(*ch) },
                    "cards": cards.iter().map(|(c, s)| json!({
                        "id": c.id, "question": c.question, "last": s.last_grade,
                        "last_seconds": s.last_elapsed_ms as f64 / 1000.0,
                        "lapses": s.lapses, "slow": s.slow, "due": fsio::iso(s.due_ms),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let out = json!({ "cards": deck.len(), "due": due, "new": fresh, "study_items": chapters });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!("{} cards: {due} due now, {fresh} never drilled.", deck.len());
    if items.is_empty() {
        println!("No study items: nothing missed or slow on its last drill.");
        return Ok(());
    }
    println!("Study items (missed or slower than 15 s on their last drill), by chapter:");
    for (ch, cards) in items {
        if ch == u32::MAX {
            println!("\nno chapter");
        } else {
            println!("\nchapter {ch}");
        }
        for (c, s) in cards {
            println!(
                "  {:<7} {:>5.1} s  {}  [{}]",
                s.last_grade.label(),
                s.last_elapsed_ms as f64 / 1000.0,
                c.question.lines().next().unwrap_or(""),
                c.id
            );
        }
    }
    Ok(())
}
