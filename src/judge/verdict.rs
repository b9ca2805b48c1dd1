//! The one enum that says how a case ended.

use serde::Serialize;

/// Named exactly so in `--json` output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    WrongAnswer,
    Panic,
    Timeout,
    StackOverflow,
    MemoryLimit,
    Abort,
    /// Killed by a signal such as SIGSEGV.
    Crash,
    /// The process ended without finishing the case (`process::exit`).
    Exited,
    NotImplemented,
    /// The solution wrote into the harness's result channel, or closed it.
    Tampered,
    /// The sandbox refused the case something candidate code may not do:
    /// start a process or a program, open a socket, fill the scratch folder.
    Refused,
    /// A scale check: the cost per operation grows faster than the gate
    /// claims (relative to the reference, measured in the same run).
    TooSlow,
    /// A scale check: the live heap grows where the gate bounds it.
    UnboundedMemory,
    /// The solution did not build (a build-level verdict).
    CompileError,
    /// A concurrent case: no order of the calls, consistent with when they
    /// ran, explains the results the threads saw.
    NotLinearizable,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::WrongAnswer => "wrong_answer",
            Verdict::Panic => "panic",
            Verdict::Timeout => "timeout",
            Verdict::StackOverflow => "stack_overflow",
            Verdict::MemoryLimit => "memory_limit",
            Verdict::Abort => "abort",
            Verdict::Crash => "crash",
            Verdict::Exited => "exited",
            Verdict::NotImplemented => "not_implemented",
            Verdict::Tampered => "tampered",
            Verdict::Refused => "refused",
            Verdict::TooSlow => "too_slow",
            Verdict::UnboundedMemory => "unbounded_memory",
            Verdict::CompileError => "compile_error",
            Verdict::NotLinearizable => "not_linearizable",
        }
    }

    /// Whether shrinking a failing case with this verdict is worth it: a
    /// timeout costs the full limit per attempt.
    pub fn shrinkable(self) -> bool {
        !matches!(
            self,
            Verdict::Pass
                | Verdict::Timeout
                | Verdict::MemoryLimit
                | Verdict::CompileError
                | Verdict::TooSlow
                | Verdict::UnboundedMemory
                | Verdict::NotLinearizable
        )
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
