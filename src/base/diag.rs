//! Errors that point into a file: `path:line:column: message`, followed by
//! the offending line and a caret, as rustc prints them.

use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct Located {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
    source_line: String,
}

impl Located {
    /// `offset` is a byte offset into `text`, the whole file.
    pub fn at(file: &Path, text: &str, offset: usize, message: impl Into<String>) -> Self {
        let offset = offset.min(text.len());
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = text[line_start..offset].chars().count() + 1;
        let source_line = text[line_start..].lines().next().unwrap_or("").to_string();
        Located { file: file.to_path_buf(), line, column, message: message.into(), source_line }
    }
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}:{}:{}: {}", self.file.display(), self.line, self.column, self.message)?;
        let gutter = self.line.to_string().len();
        writeln!(f, "{:gutter$} |", "")?;
        writeln!(f, "{} | {}", self.line, self.source_line)?;
        write!(f, "{:gutter$} | {:>col$}", "", "^", col = self.column)
    }
}

impl std::error::Error for Located {}

/// Removes ANSI escape sequences.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_at_line_and_column() {
        let text = "a = 1\nb = oops\n";
        let e = Located::at(Path::new("p.toml"), text, 10, "bad value");
        assert_eq!((e.line, e.column), (2, 5));
        assert_eq!(e.to_string(), "p.toml:2:5: bad value\n  |\n2 | b = oops\n  |     ^");
    }
}
