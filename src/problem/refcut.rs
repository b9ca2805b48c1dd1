//! The reference cut to the gates a session reached, so that a report can
//! show the candidate the solution of what they met and nothing of the
//! follow-ups they were not drawn.
//!
//! A reference marks which lines belong to which gates with comments, so
//! the file as compiled is the whole reference:
//!
//! ```text
//! // @gate 5            a block kept when gate 5 was reached
//! // @gate 5,6          … when any of them was
//! // @else              optional: what a session that reached none sees,
//! //~ code             each line written `//~ code` (the cut uncomments it)
//! // @end               closes the block
//! code;  // @gate 5     one line kept only when gate 5 was reached
//! ```
//!
//! Blocks nest inside a block's main part, not inside an `@else` part.
//! `harness audit` builds the cut for every set of gates a session can
//! reach and requires it to pass those gates.

use std::collections::BTreeSet;

/// A malformed marker: the 1-based line and what is wrong.
pub type MarkError = (usize, String);

#[derive(Clone, Copy, PartialEq)]
enum Marker<'a> {
    Open(&'a str),
    Else,
    End,
    /// Code, then the gates of a trailing marker.
    Trailing(&'a str, &'a str),
    None,
}

fn marker(line: &str) -> Marker<'_> {
    let t = line.trim();
    if let Some(gates) = t.strip_prefix("// @gate ") {
        return Marker::Open(gates);
    }
    match t {
        "// @else" => return Marker::Else,
        "// @end" => return Marker::End,
        _ => {}
    }
    if let Some(at) = line.rfind("// @gate ") {
        let code = line[..at].trim_end();
        if !code.trim().is_empty() {
            return Marker::Trailing(code, &line[at + "// @gate ".len()..]);
        }
    }
    Marker::None
}

fn parse_gates(text: &str, gates: usize, line: usize) -> Result<BTreeSet<usize>, MarkError> {
    let mut set = BTreeSet::new();
    for part in text.split(',') {
        let part = part.trim();
        match part.parse::<usize>() {
            Ok(g) if (1..=gates).contains(&g) => {
                set.insert(g);
            }
            _ => return Err((line, format!("`{part}` is not a gate (gates are 1..={gates}, separated by commas)"))),
        }
    }
    Ok(set)
}

/// Whether `text` carries any gate marker.
pub fn has_markers(text: &str) -> bool {
    text.lines().any(|l| marker(l) != Marker::None)
}

/// `text` cut to the gates in `reached` (of a problem with `gates` gates),
/// with every marker line removed and no run of blank lines left where a
/// block was cut.
pub fn cut(text: &str, reached: &BTreeSet<usize>, gates: usize) -> Result<String, MarkError> {
    // Each open block: its line, its gates, whether in its @else part.
    let mut stack: Vec<(usize, BTreeSet<usize>, bool)> = Vec::new();
    let mut out: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let shown = stack.iter().all(|(_, g, in_else)| g.iter().any(|x| reached.contains(x)) != *in_else);
        let in_else = stack.last().is_some_and(|(_, _, e)| *e);
        match marker(line) {
            Marker::Open(g) => {
                if in_else {
                    return Err((n, "a block cannot open inside an @else part".into()));
                }
                stack.push((n, parse_gates(g, gates, n)?, false));
            }
            Marker::Else => match stack.last_mut() {
                Some((_, _, e)) if !*e => *e = true,
                _ => return Err((n, "@else without an open @gate block".into())),
            },
            Marker::End => {
                if stack.pop().is_none() {
                    return Err((n, "@end without an open @gate block".into()));
                }
            }
            _ if in_else => {
                let code = line.trim_start();
                let Some(rest) = code.strip_prefix("//~") else {
                    if code.is_empty() {
                        continue;
                    }
                    return Err((n, "a line of an @else part is written `//~ code`".into()));
                };
                if shown {
                    let indent = &line[..line.len() - code.len()];
                    let rest = rest.strip_prefix(' ').unwrap_or(rest);
                    out.push(format!("{indent}{rest}").trim_end().to_string());
                }
            }
            Marker::Trailing(code, g) => {
                let g = parse_gates(g, gates, n)?;
                if shown && g.iter().any(|x| reached.contains(x)) {
                    out.push(code.to_string());
                }
            }
            Marker::None => {
                if shown {
                    out.push(line.to_string());
                }
            }
        }
    }
    if let Some((n, _, _)) = stack.last() {
        return Err((*n, "this @gate block has no @end".into()));
    }
    let mut text = String::new();
    let mut blank = false;
    for line in out {
        let is_blank = line.trim().is_empty();
        if !(is_blank && blank) {
            text.push_str(&line);
            text.push('\n');
        }
        blank = is_blank;
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARKED: &str = "use a;
use b; // @gate 5
fn f() {
    // @gate 5
    x();
    // @gate 6
    y();
    // @end
    // @else
    //~ old();
    //~
    //~ older();
    // @end

    // @gate 6
    w();
    // @end

    z();
}
";

    fn set(g: &[usize]) -> BTreeSet<usize> {
        g.iter().copied().collect()
    }

    #[test]
    fn a_block_is_kept_only_when_one_of_its_gates_was_reached() {
        assert_eq!(
            cut(MARKED, &set(&[1, 5, 6]), 6).unwrap(),
            "use a;\nuse b;\nfn f() {\n    x();\n    y();\n\n    w();\n\n    z();\n}\n"
        );
        assert_eq!(cut(MARKED, &set(&[1, 5]), 6).unwrap(), "use a;\nuse b;\nfn f() {\n    x();\n\n    z();\n}\n");
    }

    #[test]
    fn the_else_part_is_uncommented_for_a_session_that_reached_none_of_the_gates() {
        assert_eq!(
            cut(MARKED, &set(&[1, 2]), 6).unwrap(),
            "use a;\nfn f() {\n    old();\n\n    older();\n\n    z();\n}\n"
        );
        // Gate 6 alone: its block inside gate 5's is not shown without 5.
        assert_eq!(
            cut(MARKED, &set(&[1, 6]), 6).unwrap(),
            "use a;\nfn f() {\n    old();\n\n    older();\n\n    w();\n\n    z();\n}\n"
        );
    }

    #[test]
    fn every_gate_keeps_the_file_as_compiled_without_its_markers() {
        let plain = "fn main() {\n    a();\n}\n";
        assert!(!has_markers(plain));
        assert_eq!(cut(plain, &set(&[1]), 3).unwrap(), plain);
        assert!(has_markers(MARKED));
    }

    #[test]
    fn malformed_markers_name_their_line() {
        assert_eq!(cut("// @gate 2\nx\n", &set(&[1]), 3).unwrap_err().0, 1);
        assert_eq!(cut("x\n// @end\n", &set(&[1]), 3).unwrap_err().0, 2);
        assert_eq!(cut("// @else\n", &set(&[1]), 3).unwrap_err().0, 1);
        assert_eq!(cut("// @gate 2\n// @else\nold();\n// @end\n", &set(&[1]), 3).unwrap_err().0, 3);
        assert_eq!(cut("// @gate 2\n// @else\n// @gate 3\n", &set(&[1]), 3).unwrap_err().0, 3);
        let (line, why) = cut("a; // @gate 9\n", &set(&[1]), 3).unwrap_err();
        assert_eq!(line, 1);
        assert!(why.contains("`9` is not a gate"), "{why}");
        assert!(cut("// @gate two\n// @end\n", &set(&[1]), 3).is_err());
    }
}
