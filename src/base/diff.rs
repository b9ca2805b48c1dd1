//! The one line-diff model. Every diff the harness shows (a failing case's
//! transcripts, the review's code between two saves, a stale contract's
//! schema against the problem's) is a list of hunks of lines, each the
//! same, removed or added, computed here over `similar`. The views only
//! draw it: a sign and a colour per line, a header per hunk.

use similar::{ChangeTag, TextDiff};
use std::ops::Range;

/// What became of a line from the old text to the new.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Same,
    Removed,
    Added,
}

impl Change {
    /// `' '`, `'-'` or `'+'`, as in a unified diff.
    pub fn sign(self) -> char {
        match self {
            Change::Same => ' ',
            Change::Removed => '-',
            Change::Added => '+',
        }
    }
}

/// One line of a diff.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub change: Change,
    /// The line, without its line break.
    pub text: String,
    /// With [`words`]: the line in pieces, each `true` where it differs
    /// from the line it replaces. Empty from [`lines`].
    pub words: Vec<(bool, String)>,
}

/// A run of changed lines with the unchanged ones kept around them.
#[derive(Clone, Debug, PartialEq)]
pub struct Hunk {
    /// The hunk's lines in the old text and in the new, 0-based.
    pub old: Range<usize>,
    pub new: Range<usize>,
    pub lines: Vec<Line>,
}

impl Hunk {
    /// `@@ -a,b +c,d @@`, as `diff -u` writes it: 1-based, and an empty
    /// range names the line before it.
    pub fn header(&self) -> String {
        let start = |r: &Range<usize>| if r.is_empty() { r.start } else { r.start + 1 };
        format!("@@ -{},{} +{},{} @@", start(&self.old), self.old.len(), start(&self.new), self.new.len())
    }
}

/// How much of the unchanged text a diff keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    /// All of it, in one hunk: nothing is folded, and equal texts give
    /// one hunk of unchanged lines.
    All,
    /// Up to this many lines on either side of a change; what lies between
    /// two hunks is folded, and equal texts give no hunk. `Lines(0)`: the
    /// changed lines only.
    Lines(usize),
}

/// The line diff from `old` to `new`.
pub fn lines(old: &str, new: &str, context: Context) -> Vec<Hunk> {
    diff(old, new, context, false)
}

/// [`lines`], with each changed line's pieces marked where they differ
/// from the line it replaces ([`Line::words`]).
pub fn words(old: &str, new: &str, context: Context) -> Vec<Hunk> {
    diff(old, new, context, true)
}

fn diff(old: &str, new: &str, context: Context, words: bool) -> Vec<Hunk> {
    let diff = TextDiff::from_lines(old, new);
    let groups = match context {
        Context::All => vec![diff.ops().to_vec()],
        Context::Lines(n) => diff.grouped_ops(n),
    };
    let change = |tag: ChangeTag| match tag {
        ChangeTag::Equal => Change::Same,
        ChangeTag::Delete => Change::Removed,
        ChangeTag::Insert => Change::Added,
    };
    let trim = |s: &str| s.trim_end_matches(['\n', '\r']).to_string();
    let mut hunks = Vec::new();
    for group in groups {
        let (Some(first), Some(last)) = (group.first(), group.last()) else { continue };
        let mut hunk = Hunk {
            old: first.old_range().start..last.old_range().end,
            new: first.new_range().start..last.new_range().end,
            lines: Vec::new(),
        };
        for op in &group {
            if words {
                for c in diff.iter_inline_changes(op) {
                    let words: Vec<(bool, String)> = c.iter_strings_lossy().map(|(e, s)| (e, trim(&s))).collect();
                    let text = words.iter().map(|(_, s)| s.as_str()).collect();
                    hunk.lines.push(Line { change: change(c.tag()), text, words });
                }
            } else {
                for c in diff.iter_changes(op) {
                    hunk.lines.push(Line { change: change(c.tag()), text: trim(c.value()), words: Vec::new() });
                }
            }
        }
        hunks.push(hunk);
    }
    hunks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed(hunks: &[Hunk]) -> Vec<Vec<String>> {
        hunks.iter().map(|h| h.lines.iter().map(|l| format!("{}{}", l.change.sign(), l.text)).collect()).collect()
    }

    #[test]
    fn context_folds_what_lies_far_from_a_change() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new: String = (1..=20)
            .map(|i| match i {
                3 => "three\n".to_string(),
                18 => "eighteen\n".to_string(),
                _ => format!("{i}\n"),
            })
            .collect();
        let hunks = lines(&old, &new, Context::Lines(1));
        assert_eq!(signed(&hunks), vec![vec![" 2", "-3", "+three", " 4"], vec![" 17", "-18", "+eighteen", " 19"]]);
        assert_eq!(hunks[0].header(), "@@ -2,3 +2,3 @@");
        assert_eq!(lines(&old, &new, Context::All).len(), 1, "All is one hunk");
        assert_eq!(lines(&old, &new, Context::All)[0].lines.len(), 22);
        let changed: Vec<String> = signed(&lines(&old, &new, Context::Lines(0))).concat();
        assert_eq!(changed, vec!["-3", "+three", "-18", "+eighteen"]);
    }

    #[test]
    fn equal_texts_have_no_hunk_unless_everything_is_kept() {
        assert!(lines("a\nb\n", "a\nb\n", Context::Lines(3)).is_empty());
        assert_eq!(signed(&lines("a\nb\n", "a\nb\n", Context::All)), vec![vec![" a", " b"]]);
    }

    #[test]
    fn an_empty_range_names_the_line_before_it_and_line_breaks_are_dropped() {
        let hunks = lines("a\r\nb\n", "a\r\nb\nc\n", Context::Lines(0));
        assert_eq!(hunks[0].header(), "@@ -2,0 +3,1 @@");
        assert_eq!(hunks[0].lines[0].text, "c");
        assert_eq!(lines("x\r\n", "y\r\n", Context::All)[0].lines[0].text, "x");
    }

    #[test]
    fn words_mark_what_changed_inside_a_line() {
        let hunks = words("put(a, 1) -> 1\n", "put(a, 1) -> 2\n", Context::All);
        let removed = &hunks[0].lines[0];
        assert_eq!((removed.change, removed.text.as_str()), (Change::Removed, "put(a, 1) -> 1"));
        let marked: Vec<&str> = removed.words.iter().filter(|(e, _)| *e).map(|(_, s)| s.as_str()).collect();
        assert_eq!(marked, vec!["1"], "only the differing value is marked: {:?}", removed.words);
    }
}
