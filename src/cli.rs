//! Command-line arguments (clap derive). Validation beyond what clap does
//! happens in the commands.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "harness", version, about = "Timed, gated practice for stateful-component coding interviews")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List the problems: gates, paths and minutes (a graph problem's
    /// follow-ups stay unnamed: they are drawn as a session goes).
    List {
        /// Print JSON instead of a table: each problem's graph of gates
        /// (ids and what each builds on).
        #[arg(long)]
        json: bool,
        /// With --json: the gates' titles too (they give follow-ups away).
        #[arg(long, requires = "json")]
        spoilers: bool,
    },
    /// Build a solution and judge it against every gate's hidden cases.
    ///
    /// Exit status: 0 when every gate passes, 1 when the solution fails
    /// (compile error or a failing case), 2 when the harness cannot run.
    Check {
        /// The problem id (see `harness list`).
        problem: String,
        /// The solution crate [default: solutions/<problem>].
        #[arg(long, conflicts_with = "mutant")]
        solution: Option<PathBuf>,
        /// Judge one of the problem's mutants instead (see `harness audit`).
        #[arg(long, value_name = "NAME")]
        mutant: Option<String>,
        /// Judge the first N gates of the path only.
        #[arg(long, value_name = "N")]
        gate: Option<usize>,
        /// The path of gates to judge, e.g. `1,2,5,6` [default: the path of
        /// the solution's session if it has one, else the problem's
        /// default path (the first in order; every gate of a linear one)].
        #[arg(long, value_name = "GATES")]
        path: Option<String>,
        /// Base seed for generated cases instead of the problem's own.
        #[arg(long)]
        seed: Option<u64>,
        /// Print the machine-readable report (schema in docs/check.md).
        #[arg(long)]
        json: bool,
        /// Report failing generated cases whole instead of shrinking them
        /// (faster when only the verdicts matter).
        #[arg(long)]
        no_shrink: bool,
    },
    /// Run an operation sequence against a solution and print each result.
    Replay {
        problem: String,
        /// JSON file: an array of { "op": "<name>", "args": [...] }; `-` for stdin.
        #[arg(long)]
        ops: PathBuf,
        /// The solution crate [default: solutions/<problem>].
        #[arg(long, conflicts_with = "mutant")]
        solution: Option<PathBuf>,
        /// Run one of the problem's mutants instead.
        #[arg(long, value_name = "NAME")]
        mutant: Option<String>,
        /// Print a JSON array of { "op", "args", "result" }.
        #[arg(long)]
        json: bool,
    },
    /// Practise a problem: statement, timer, and a verdict on every save.
    ///
    /// Creates solutions/<problem> from the starter if it does not exist
    /// (never overwriting), and resumes the session in progress if there
    /// is one.
    Start {
        /// The problem id; without one, the problems and your progress on each.
        problem: Option<String>,
        /// Time budget of a new session [default: the problem's suggested minutes].
        #[arg(long, value_name = "N")]
        minutes: Option<u32>,
        /// Move the existing solution aside (to a dated folder) and start over.
        #[arg(long)]
        fresh: bool,
        /// Practise this path of gates (e.g. `1,2,5,6`) instead of drawing
        /// the follow-ups; starts a new session unless the one in progress
        /// is on this path.
        #[arg(long, value_name = "GATES")]
        path: Option<String>,
    },
    /// A mock interview: a problem drawn at random, a fixed budget, no hints.
    ///
    /// The draw favours problems attempted least or done worst on. The
    /// solution starts from the starter in solutions/mock/<problem>; the
    /// report is marked as a mock and scored.
    Mock {
        /// Pick this problem instead of drawing one.
        #[arg(long)]
        problem: Option<String>,
        /// Time budget [default: `[mock] minutes` in harness.toml].
        #[arg(long, value_name = "N")]
        minutes: Option<u32>,
    },
    /// Review past sessions: a TUI, or headless with --list, --markdown or --json.
    Report {
        /// A report id (or a unique prefix of one), as `--list` shows.
        #[arg(conflicts_with = "list")]
        id: Option<String>,
        /// Print every session: date, problem, mode, status, gates, time, score, id.
        #[arg(long)]
        list: bool,
        /// Print the report <id> as Markdown.
        #[arg(long, conflicts_with_all = ["json", "list"])]
        markdown: bool,
        /// Print the report <id> as JSON (with --list: the list as JSON).
        #[arg(long)]
        json: bool,
    },
    /// Timed recall with spaced repetition: the seed's Thirty Questions,
    /// the Complexity Table and every gate's follow-up questions, one card
    /// at a time against a 15-second clock.
    Drill {
        /// Print the study items (cards missed or slow on their last drill)
        /// by chapter instead of drilling.
        #[arg(long)]
        list: bool,
        /// With --list: print JSON.
        #[arg(long, requires = "list")]
        json: bool,
        /// Only cards of this seed chapter (0 = general).
        #[arg(long, value_name = "N")]
        chapter: Option<u32>,
        /// Only this problem's follow-ups and its chapter's cards.
        #[arg(long, value_name = "ID")]
        problem: Option<String>,
        /// Cards in one sitting: due ones first, then new ones.
        #[arg(long, value_name = "N", default_value_t = 20)]
        limit: usize,
    },
    /// Check that problems are honest: the reference passes, the starter
    /// fails gate 1 with not_implemented only, every mutant is caught at
    /// its gate. Exit 0 when all is well, 1 with findings.
    Audit {
        /// Problem ids [default: every problem].
        problems: Vec<String>,
        /// Print the findings as JSON.
        #[arg(long)]
        json: bool,
    },
    /// For problem authors: create the skeleton of a new problem (its
    /// contract module, problem.toml, reference, starter and a mutant).
    New {
        /// The new problem's id, in lower_snake_case.
        id: String,
        /// Its title [default: the id in words].
        #[arg(long)]
        title: Option<String>,
    },
    /// Say which protections against candidate code are in force on this
    /// machine, and why the others are not.
    Doctor {
        /// Print JSON (the same object as `check --json`'s "sandbox").
        #[arg(long)]
        json: bool,
    },
    /// Internal: the isolated process that runs candidate code.
    #[command(name = "__worker", hide = true)]
    Worker {
        lib: PathBuf,
        hash: String,
        memory: u64,
        stack: usize,
        cpu: u64,
        timeout_ms: u64,
        output: usize,
        mode: String,
    },
    /// Internal: the isolated process that measures candidate code at one size.
    #[command(name = "__measure", hide = true)]
    Measure { lib: PathBuf, hash: String, memory: u64, stack: usize, cpu: u64 },
}
