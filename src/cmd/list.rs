//! `harness list`: the problems, their gates, paths and minutes.
//!
//! A problem whose gates form a graph names only gate 1: which follow-ups
//! a session meets is drawn as it goes, and a title is already a hint.
//! `--json` gives each problem's graph (every gate's id, its number, and
//! the gates it builds on) for tools and authors, titles only with
//! `--spoilers`.

use anyhow::Result;
use serde_json::{Value as Json, json};

use crate::base::config::Config;
use crate::problem::model::{self, Problem};

pub fn list(config: &Config, json: bool, spoilers: bool) -> Result<u8> {
    let ids = model::list_ids(&config.problems_dir)?;
    let mut rows = Vec::new();
    let mut broken = 0;
    for id in &ids {
        // One broken problem must not hide the others.
        match Problem::load(&config.problems_dir, &config.contract_dir, id) {
            Ok(p) => rows.push(p),
            Err(e) => {
                broken += 1;
                eprintln!("error: {e:#}");
            }
        }
    }
    if json {
        let items: Vec<Json> = rows
            .iter()
            .map(|p| {
                let graph: Vec<Json> = p
                    .gates
                    .iter()
                    .map(|g| {
                        let mut node = json!({ "id": g.number, "builds_on": g.builds_on });
                        if spoilers {
                            node["title"] = json!(g.title);
                        }
                        node
                    })
                    .collect();
                json!({
                    "id": p.id,
                    "title": p.title,
                    "summary": p.summary,
                    "gates": p.gates.len(),
                    "paths": p.paths().len(),
                    "path_length": p.path_length,
                    "minutes": p.session_minutes(),
                    "graph": graph,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&items)?);
    } else {
        for p in &rows {
            if !p.is_graph() {
                println!("{:<22} {:<40} {} gates, {} min", p.id, p.title, p.gates.len(), p.total_minutes());
                println!("{:<22} {}", "", p.summary);
                for g in &p.gates {
                    println!("{:<22}   gate {} {:<40} {:>3} min", "", g.number, g.title, g.minutes);
                }
                continue;
            }
            let paths = p.paths().len();
            println!(
                "{:<22} {:<40} {} gates, {paths} paths of {}, up to {} min",
                p.id,
                p.title,
                p.gates.len(),
                p.path_length,
                p.session_minutes()
            );
            println!("{:<22} {}", "", p.summary);
            let root = &p.gates[0];
            println!("{:<22}   gate 1 {:<40} {:>3} min", "", root.title, root.minutes);
            println!(
                "{:<22}   then {} follow-ups: a session draws {} of them as it goes",
                "",
                p.gates.len() - 1,
                p.path_length - 1
            );
        }
        if rows.is_empty() {
            println!("no problems in {}", config.problems_dir.display());
        }
    }
    Ok(if broken > 0 { 2 } else { 0 })
}
