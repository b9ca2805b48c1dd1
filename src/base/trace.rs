//! Phase timing for the save → verdict path, off unless asked for.
//!
//! With `HARNESS_TRACE=<file>` in the environment, [`mark`] appends one line
//! per phase boundary to that file: microseconds since the Unix epoch, a
//! space, the phase's name (`watch`, `debounced`, `build-start`,
//! `build-end`, `judge-start`, `cases`, `verdict-sent`, `drawn`, and
//! `quick-start <check>:<n>` / `quick-end <check>:<n>` around each end of a
//! scale check's quick pass, …). The
//! benchmark `save_to_verdict` reads it to say where the time goes. Without
//! the variable a mark costs one atomic load.

use std::io::Write;
use std::sync::{Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

static SINK: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();

fn sink() -> Option<&'static Mutex<std::fs::File>> {
    SINK.get_or_init(|| {
        let path = std::env::var_os("HARNESS_TRACE").filter(|p| !p.is_empty())?;
        std::fs::OpenOptions::new().create(true).append(true).open(path).ok().map(Mutex::new)
    })
    .as_ref()
}

/// Whether marks are being recorded.
pub fn enabled() -> bool {
    sink().is_some()
}

/// Records that the phase `what` was reached now.
pub fn mark(what: &str) {
    let Some(sink) = sink() else { return };
    let us = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros());
    if let Ok(mut f) = sink.lock() {
        let _ = writeln!(f, "{us} {what}");
    }
}

/// Parses a trace file's text into (microseconds, phase) pairs, skipping
/// lines that do not parse.
pub fn parse(text: &str) -> Vec<(u128, String)> {
    text.lines()
        .filter_map(|l| {
            let (t, what) = l.split_once(' ')?;
            Some((t.parse().ok()?, what.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_reads_marks_and_skips_junk() {
        let got = parse("12 watch\nnot a line\n15 build-start\n\n");
        assert_eq!(got, vec![(12, "watch".to_string()), (15, "build-start".to_string())]);
    }
}
