//! `harness list`: the problems, their gates and minutes.

use anyhow::Result;
use serde_json::{Value as Json, json};

use crate::base::config::Config;
use crate::problem::model::{self, Problem};

pub fn list(config: &Config, json: bool) -> Result<u8> {
    let ids = model::list_ids(&config.problems_dir)?;
    let mut rows = Vec::new();
    let mut broken = 0;
    for id in &ids {
        // One broken problem must not hide the others.
        match Problem::load(&config.problems_dir, id) {
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
                json!({
                    "id": p.id,
                    "title": p.title,
                    "summary": p.summary,
                    "gates": p.gates.len(),
                    "minutes": p.total_minutes(),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&items)?);
    } else {
        for p in &rows {
            println!("{:<22} {:<40} {} gates, {} min", p.id, p.title, p.gates.len(), p.total_minutes());
            println!("{:<22} {}", "", p.summary);
            for g in &p.gates {
                println!("{:<22}   gate {} {:<40} {:>3} min", "", g.number, g.title, g.minutes);
            }
        }
        if rows.is_empty() {
            println!("no problems in {}", config.problems_dir.display());
        }
    }
    Ok(if broken > 0 { 2 } else { 0 })
}
