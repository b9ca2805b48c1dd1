//! `harness doctor`: which protections against candidate code are in force
//! on this machine, and why the others are not. A worker that loads no
//! library reports what it could set up (`judge::confine`); a probe run
//! the way a solution's build runs reports what confines builds
//! (`judge::buildbox`); the build settings come from `harness.toml`.

use anyhow::Result;
use serde_json::{Value as Json, json};

use crate::base::config::Config;
use crate::judge::sandbox;

/// The `sandbox` object of `check --json` and `doctor --json`.
pub fn sandbox_json(config: &Config) -> Result<Json> {
    let protections = sandbox::protections(&config.limits)?;
    let mut out = serde_json::to_value(&protections)?;
    out["builds"] = json!({
        "active": true,
        "detail": format!(
            "cargo runs in a process group of its own, killed with its build scripts after {} s, \
             on a new save and on quit",
            config.build_deadline.as_secs()
        ),
    });
    let (filesystem, pid_namespace, network) = crate::judge::buildbox::report();
    out["build_filesystem"] = serde_json::to_value(filesystem)?;
    out["build_pid_namespace"] = serde_json::to_value(pid_namespace)?;
    out["build_network"] = serde_json::to_value(network)?;
    Ok(out)
}

pub(crate) fn doctor(config: &Config, json: bool) -> Result<u8> {
    let sandbox = sandbox_json(config)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&sandbox)?);
        return Ok(0);
    }
    println!("Protections against candidate code on this machine:\n");
    let Some(map) = sandbox.as_object() else { return Ok(0) };
    let mut missing = 0;
    for (name, p) in map {
        let active = p["active"].as_bool().unwrap_or(false);
        missing += usize::from(!active && name != "user_namespace");
        let mark = if active { "on " } else { "off" };
        println!("  {mark}  {:<20} {}", name.replace('_', " "), p["detail"].as_str().unwrap_or_default());
    }
    println!();
    if missing == 0 {
        println!("Every protection is in force.");
    } else {
        println!(
            "{missing} protection(s) are off: the harness still judges, with a weaker sandbox \
             (see docs/isolation.md)."
        );
    }
    Ok(0)
}
