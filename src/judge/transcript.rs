//! A failing case as people read it: the expected and the actual
//! transcript, one `op(args) -> result` line per operation up to the
//! failing one, and the diff between them that `check`, the practice view
//! and the report show.

use crate::judge::suite::CaseResult;

/// The two transcripts of a failing case, up to the failing operation:
/// expected and actual, one `op(args) -> result` line per operation.
pub fn of(result: &CaseResult) -> (Vec<String>, Vec<String>) {
    let last = result.failed_at.unwrap_or(result.steps.len().saturating_sub(1));
    let expected: Vec<String> = result.steps.iter().take(last + 1).map(|s| s.to_string()).collect();
    let mut actual: Vec<String> =
        result.steps.iter().zip(&result.actual).take(last + 1).map(|(s, v)| format!("{} -> {v}", s.call)).collect();
    if actual.len() <= last
        && let Some(step) = result.steps.get(last)
    {
        actual.push(format!("{} -> <{}>", step.call, result.verdict));
    }
    (expected, actual)
}

/// Transcripts up to this many operations are shown whole.
pub const WHOLE_UP_TO: usize = 40;

/// A unified line diff of the transcripts: `  ` same, `- ` expected only,
/// `+ ` actual only. A shrunk case, or any short one, is shown whole: the
/// operation that set up the failure may be far from where it shows. Only
/// the long runs of equal lines of a long, unshrunk case are folded.
pub fn diff(result: &CaseResult) -> Vec<(char, String)> {
    let (expected, actual) = of(result);
    let whole = result.shrunk_from.is_some() || expected.len() <= WHOLE_UP_TO;
    let context = if whole { expected.len().max(actual.len()) + 1 } else { 3 };
    let expected = expected.join("\n") + "\n";
    let actual = actual.join("\n") + "\n";
    let mut lines = Vec::new();
    for hunk in crate::base::diff::lines(&expected, &actual, crate::base::diff::Context::Lines(context)) {
        if !lines.is_empty() {
            lines.push((' ', "…".to_string()));
        }
        lines.extend(hunk.lines.into_iter().map(|l| (l.change.sign(), l.text)));
    }
    lines
}
