//! `spreadsheet`: cells holding numbers or formulas, kept up to date through
//! a dependency graph.
//!
//! Implement [`Spreadsheet`] for your type and export it:
//!
//! ```ignore
//! use harness_contract::spreadsheet::{Cell, Content, SheetError, Spreadsheet, parse_input};
//! struct Sheet { /* ... */ }
//! impl Spreadsheet for Sheet { /* ... */ }
//! harness_contract::export!(spreadsheet, Sheet);
//! ```
//!
//! The problem is the dependency graph, not parsing: this module gives you
//! the parser and the evaluator of the formula language ([`parse_input`],
//! [`Formula::refs`], [`Formula::eval`]), the way the chapter this problem
//! comes from treats them as a library call. Use them, or write your own
//! from the statement's grammar: the judge only sees what your operations
//! return.
//!
//! Methods of later gates have default bodies, so a solution compiles before
//! it implements them; calling one is judged `not_implemented`. Two methods,
//! [`Spreadsheet::fill_chain`] and [`Spreadsheet::cycle_len`], are helpers
//! the tests use to build and inspect very large sheets: they are written
//! here on top of your own operations. Do not override them.

use std::fmt;

crate::error_kinds! {
    /// Why an operation was refused, or why a cell has no value.
    pub enum SheetError {
        /// Not a cell name: one letter `A`-`Z`, then a row from 1 to 999999
        /// without leading zeros (`A1`, `Z999999`). The operation changes
        /// nothing.
        BadCell = "bad_cell",
        /// The input is neither empty, a number nor a well-formed formula.
        /// The operation changes nothing.
        BadFormula = "bad_formula",
        /// The value of a cell that is on a cycle of references or reads,
        /// directly or indirectly, a cell that is.
        Cycle = "cycle",
    }
}

/// One cell's address: a column `A`-`Z` and a row from 1 to 999999.
///
/// Cells are ordered by column, then by row number: `A2 < A10 < B1`. That is
/// the order the statement means whenever it compares cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cell {
    col: u8,
    row: u32,
}

impl Cell {
    /// The highest row number.
    pub const MAX_ROW: u32 = 999_999;

    /// The cell named `name` (`"B12"`), or `None` if it is not a cell name.
    pub fn parse(name: &str) -> Option<Cell> {
        let bytes = name.as_bytes();
        let (&letter, digits) = bytes.split_first()?;
        if !letter.is_ascii_uppercase() || digits.is_empty() || digits.len() > 6 || digits[0] == b'0' {
            return None;
        }
        let mut row = 0u32;
        for &d in digits {
            if !d.is_ascii_digit() {
                return None;
            }
            row = row * 10 + u32::from(d - b'0');
        }
        Some(Cell { col: letter - b'A', row })
    }

    /// The cell in column `col` (`'A'`-`'Z'`) and row `row` (1-999999).
    pub fn new(col: char, row: u32) -> Option<Cell> {
        (col.is_ascii_uppercase() && (1..=Self::MAX_ROW).contains(&row)).then(|| Cell { col: col as u8 - b'A', row })
    }

    /// The column letter.
    pub fn col(&self) -> char {
        char::from(b'A' + self.col)
    }

    /// The row number.
    pub fn row(&self) -> u32 {
        self.row
    }

    /// A dense number for this cell, from 0 to 26 * 999999 - 1 (column-major,
    /// so it sorts like the cell): handy as an index.
    pub fn index(&self) -> u32 {
        u32::from(self.col) * Self::MAX_ROW + (self.row - 1)
    }

    /// The cell whose [`Cell::index`] is `index`.
    pub fn from_index(index: u32) -> Option<Cell> {
        let col = index / Self::MAX_ROW;
        (col < 26).then(|| Cell { col: col as u8, row: index % Self::MAX_ROW + 1 })
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.col(), self.row)
    }
}

/// What a cell holds, as typed by the user.
#[derive(Clone, Debug, PartialEq)]
pub enum Content {
    /// Nothing: the cell reads as 0.
    Empty,
    /// A number.
    Number(i64),
    /// A formula (the input started with `=`).
    Formula(Formula),
}

impl Content {
    /// The cells this content reads: a formula's [`Formula::refs`], none
    /// otherwise.
    pub fn refs(&self) -> &[Cell] {
        match self {
            Content::Formula(f) => f.refs(),
            _ => &[],
        }
    }
}

/// A parsed formula: its expression and every cell it reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Formula {
    expr: Expr,
    refs: Vec<Cell>,
    volatile: bool,
}

/// A formula's expression tree.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Number(i64),
    Ref(Cell),
    /// `SUM(a:b)`: the rectangle from `top_left` to `bottom_right`, whatever
    /// corners the formula named.
    Sum {
        top_left: Cell,
        bottom_right: Cell,
    },
    /// `NOW()`: the sheet's clock (gate 4).
    Now,
    Neg(Box<Expr>),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
}

impl Formula {
    /// Every cell the formula reads, each once, in cell order (column, then
    /// row): the cells it names and every cell of every `SUM` range, empty
    /// ones included.
    pub fn refs(&self) -> &[Cell] {
        &self.refs
    }

    /// Whether the formula calls `NOW()` (gate 4).
    pub fn is_volatile(&self) -> bool {
        self.volatile
    }

    /// The expression tree, for those who want to walk it themselves.
    pub fn expr(&self) -> &Expr {
        &self.expr
    }

    /// The formula's value, given the value of each cell it reads (an empty
    /// cell is 0) and the sheet's clock for `NOW()`. `value_of` is called
    /// only with cells from [`Formula::refs`]. Arithmetic wraps around on
    /// overflow; the tests never overflow.
    pub fn eval(&self, now: i64, mut value_of: impl FnMut(Cell) -> i64) -> i64 {
        eval(&self.expr, now, &mut value_of)
    }
}

fn eval(expr: &Expr, now: i64, value_of: &mut dyn FnMut(Cell) -> i64) -> i64 {
    match expr {
        Expr::Number(n) => *n,
        Expr::Ref(c) => value_of(*c),
        Expr::Sum { top_left, bottom_right } => {
            let mut total = 0i64;
            for col in top_left.col..=bottom_right.col {
                for row in top_left.row..=bottom_right.row {
                    total = total.wrapping_add(value_of(Cell { col, row }));
                }
            }
            total
        }
        Expr::Now => now,
        Expr::Neg(e) => eval(e, now, value_of).wrapping_neg(),
        Expr::Add(a, b) => eval(a, now, value_of).wrapping_add(eval(b, now, value_of)),
        Expr::Sub(a, b) => eval(a, now, value_of).wrapping_sub(eval(b, now, value_of)),
        Expr::Mul(a, b) => eval(a, now, value_of).wrapping_mul(eval(b, now, value_of)),
    }
}

/// The most cells one `SUM` range may cover.
pub const MAX_RANGE_CELLS: u64 = 10_000;
/// The deepest nesting of parentheses and unary minus signs a formula may use.
pub const MAX_NESTING: usize = 64;

/// Parses what a user typed into a cell.
///
/// - `""`: [`Content::Empty`].
/// - an optional `-` and decimal digits that fit an `i64` (`"42"`, `"-7"`),
///   nothing else, no spaces: [`Content::Number`].
/// - `=` and an expression: [`Content::Formula`]. The grammar below; spaces
///   (not tabs) may stand anywhere after the `=`, before the first token and
///   after the last one included, but never inside a token (a `number`, a
///   `cell`, `SUM`, `NOW`):
///
///   ```text
///   expr   := term (('+' | '-') term)*
///   term   := unary ('*' unary)*
///   unary  := '-' unary | atom
///   atom   := number | cell | 'SUM' '(' cell ':' cell ')' | 'NOW' '(' ')' | '(' expr ')'
///   ```
///
///   A `number` is decimal digits that fit an `i64`; a `cell` is a cell name
///   ([`Cell::parse`]); `SUM` and `NOW` are upper case. A `SUM` range is the
///   rectangle between any two opposite corners and covers at most
///   [`MAX_RANGE_CELLS`] cells. Parentheses and unary minus signs nest at
///   most [`MAX_NESTING`] deep.
///
/// Anything else is [`SheetError::BadFormula`].
pub fn parse_input(input: &str) -> Result<Content, SheetError> {
    if input.is_empty() {
        return Ok(Content::Empty);
    }
    if let Some(body) = input.strip_prefix('=') {
        let mut p = Parser { s: body.as_bytes(), pos: 0, depth: 0, refs: Vec::new(), volatile: false };
        let expr = p.expr()?;
        p.skip_spaces();
        if p.pos != p.s.len() {
            return Err(SheetError::BadFormula);
        }
        let mut refs = p.refs;
        refs.sort_unstable();
        refs.dedup();
        return Ok(Content::Formula(Formula { expr, refs, volatile: p.volatile }));
    }
    let digits = input.strip_prefix('-').unwrap_or(input);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SheetError::BadFormula);
    }
    input.parse::<i64>().map(Content::Number).map_err(|_| SheetError::BadFormula)
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
    refs: Vec<Cell>,
    volatile: bool,
}

impl<'a> Parser<'a> {
    fn skip_spaces(&mut self) {
        while self.s.get(self.pos) == Some(&b' ') {
            self.pos += 1;
        }
    }

    /// The next non-space byte, not consumed.
    fn peek(&mut self) -> Option<u8> {
        self.skip_spaces();
        self.s.get(self.pos).copied()
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_spaces();
        if self.s[self.pos..].starts_with(token.as_bytes()) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), SheetError> {
        if self.eat(token) { Ok(()) } else { Err(SheetError::BadFormula) }
    }

    fn nest(&mut self) -> Result<(), SheetError> {
        self.depth += 1;
        if self.depth > MAX_NESTING { Err(SheetError::BadFormula) } else { Ok(()) }
    }

    fn expr(&mut self) -> Result<Expr, SheetError> {
        let mut left = self.term()?;
        loop {
            match self.peek() {
                Some(b'+') => {
                    self.pos += 1;
                    left = Expr::Add(Box::new(left), Box::new(self.term()?));
                }
                Some(b'-') => {
                    self.pos += 1;
                    left = Expr::Sub(Box::new(left), Box::new(self.term()?));
                }
                _ => return Ok(left),
            }
        }
    }

    fn term(&mut self) -> Result<Expr, SheetError> {
        let mut left = self.unary()?;
        while self.peek() == Some(b'*') {
            self.pos += 1;
            left = Expr::Mul(Box::new(left), Box::new(self.unary()?));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, SheetError> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
            self.nest()?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(Expr::Neg(Box::new(inner)));
        }
        self.atom()
    }

    /// A run of bytes that may form a number, a cell name or a function name.
    fn word(&mut self) -> &'a [u8] {
        let start = self.pos;
        while self.s.get(self.pos).is_some_and(|b| b.is_ascii_alphanumeric()) {
            self.pos += 1;
        }
        &self.s[start..self.pos]
    }

    fn cell(&mut self) -> Result<Cell, SheetError> {
        self.skip_spaces();
        let word = self.word();
        std::str::from_utf8(word).ok().and_then(Cell::parse).ok_or(SheetError::BadFormula)
    }

    fn atom(&mut self) -> Result<Expr, SheetError> {
        match self.peek() {
            Some(b'(') => {
                self.pos += 1;
                self.nest()?;
                let inner = self.expr()?;
                self.expect(")")?;
                self.depth -= 1;
                Ok(inner)
            }
            Some(b) if b.is_ascii_digit() => {
                let word = self.word();
                if !word.iter().all(u8::is_ascii_digit) {
                    return Err(SheetError::BadFormula);
                }
                let text = std::str::from_utf8(word).map_err(|_| SheetError::BadFormula)?;
                text.parse::<i64>().map(Expr::Number).map_err(|_| SheetError::BadFormula)
            }
            Some(b) if b.is_ascii_uppercase() => {
                let start = self.pos;
                let word = self.word();
                if word == b"SUM" && self.eat("(") {
                    let a = self.cell()?;
                    self.expect(":")?;
                    let b = self.cell()?;
                    self.expect(")")?;
                    let (top_left, bottom_right) = (
                        Cell { col: a.col.min(b.col), row: a.row.min(b.row) },
                        Cell { col: a.col.max(b.col), row: a.row.max(b.row) },
                    );
                    let cols = u64::from(bottom_right.col - top_left.col) + 1;
                    let rows = u64::from(bottom_right.row - top_left.row) + 1;
                    if cols * rows > MAX_RANGE_CELLS {
                        return Err(SheetError::BadFormula);
                    }
                    for col in top_left.col..=bottom_right.col {
                        for row in top_left.row..=bottom_right.row {
                            self.refs.push(Cell { col, row });
                        }
                    }
                    return Ok(Expr::Sum { top_left, bottom_right });
                }
                if word == b"NOW" && self.eat("(") {
                    self.expect(")")?;
                    self.volatile = true;
                    return Ok(Expr::Now);
                }
                self.pos = start;
                let cell = self.cell()?;
                self.refs.push(cell);
                Ok(Expr::Ref(cell))
            }
            _ => Err(SheetError::BadFormula),
        }
    }
}

/// The stack size of the thread the deep-sheet helpers run your code on:
/// 256 KiB, a stand-in for a sheet millions of cells deep. Recursion as
/// deep as a chain of 4,000 cells does not fit in it: that leaves about 65
/// bytes a level, where a recursive search takes about 150 in a debug
/// build. Loops that keep their own stack on the heap need a few
/// kilobytes, and parsing a formula nested 64 deep (128 to 192 KiB in a
/// debug build) fits.
pub const SMALL_STACK: usize = 256 << 10;

/// Moves a value to the helper thread and back. Sound here because the
/// calling thread blocks until the helper thread has finished, so the sheet
/// is never touched by two threads at once.
struct Handover<T>(T);
// SAFETY: see above; the value is used by one thread at a time.
unsafe impl<T> Send for Handover<T> {}

/// Runs `job` on a thread with a [`SMALL_STACK`] and waits for it. A panic
/// comes back to the calling thread with its message, where the harness
/// reports it as usual.
fn on_small_stack<R>(job: impl FnOnce() -> R) -> R {
    let job = Handover(job);
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("small-stack".into())
            .stack_size(SMALL_STACK)
            .spawn_scoped(scope, move || {
                let job = job;
                Handover((job.0)())
            })
            .expect("cannot start the small-stack thread")
            .join()
    });
    match outcome {
        Ok(result) => result.0,
        Err(payload) => {
            if payload.is::<crate::NotImplemented>() {
                std::panic::resume_unwind(payload);
            }
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".into());
            panic!("{message}")
        }
    }
}

crate::contract! {
    problem = "spreadsheet";
    errors = SheetError;

    /// The sheet. Read each gate's statement for the exact rules.
    pub trait Spreadsheet {
        /// An empty sheet: every cell empty, no evaluations yet, the clock at 0.
        fn new() -> Self;

        // Gate 1: values and formulas.

        /// Stores `input` (empty, a number or `=formula`) in `cell`; afterwards
        /// every cell's value is up to date.
        fn set(&mut self, cell: String, input: String) -> Result<(), SheetError>;
        /// The value of `cell`: a number (an empty cell is 0), or
        /// `Err(SheetError::Cycle)`.
        fn get(&mut self, cell: String) -> Result<i64, SheetError>;

        // Gate 2: the cycle, named.

        /// For a cell on a cycle, the shortest cycle through it, from the cell
        /// back to itself, each cell reading the next; `None` otherwise.
        fn cycle_path(&mut self, cell: String) -> Result<Option<Vec<String>>, SheetError>;

        // Gate 3: recompute only what changed, counted.

        /// How many evaluations the sheet has performed since it was created.
        fn evaluations(&mut self) -> u64;

        /// Helper for the tests; do not override. Runs on a thread with a
        /// [`SMALL_STACK`]: for every row `r` from `first_row + 1` to `last_row`,
        /// top to bottom, sets `{col}{r}` to `={col}{r-1}+1`, a chain hanging
        /// below `{col}{first_row}`, which is left as it is. Stops at the first
        /// error.
        fn fill_chain(&mut self, col: String, first_row: u32, last_row: u32) -> Result<(), SheetError> {
            on_small_stack(|| {
                for row in first_row.saturating_add(1)..=last_row {
                    self.set(format!("{col}{row}"), format!("={col}{}+1", row - 1))?;
                }
                Ok(())
            })
        }

        /// Helper for the tests; do not override. `set(cell, input)`, run on a
        /// thread with a [`SMALL_STACK`].
        fn set_small_stack(&mut self, cell: String, input: String) -> Result<(), SheetError> {
            on_small_stack(|| self.set(cell, input))
        }

        /// Helper for the tests; do not override. The number of entries of
        /// `cycle_path(cell)` (the cell counts twice), so that a long cycle is
        /// not printed whole; run on a thread with a [`SMALL_STACK`].
        fn cycle_len(&mut self, cell: String) -> Result<Option<usize>, SheetError> {
            on_small_stack(|| self.cycle_path(cell).map(|path| path.map(|p| p.len())))
        }

        // Gate 4: volatile cells.

        /// Moves the sheet's clock to `now_ms` and recomputes every cell whose
        /// formula calls `NOW()` and every cell that depends on one.
        fn recalc(&mut self, now_ms: i64);

        // Gate 5: recalculation in waves.

        /// The recomputation an edit of `cell` would set off, as waves of cells
        /// that could be computed at the same time: `[[cell], ...]`, each cell
        /// one wave after the latest wave among the cells it reads; cells
        /// without a value are in no wave, and a `cell` without a value gives
        /// `[]`. Changes nothing.
        fn waves(&mut self, cell: String) -> Result<Vec<Vec<String>>, SheetError>;

        // Gate 6: early cutoff.

        /// Turns early cutoff on or off (off on a new sheet). While it is on, a
        /// `set` evaluates a dependent only when a cell it reads changed value
        /// in that same `set`; values stay exactly as without it. Evaluates
        /// nothing itself.
        fn early_cutoff(&mut self, on: bool);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn formula(input: &str) -> Formula {
        match parse_input(input) {
            Ok(Content::Formula(f)) => f,
            other => panic!("{input:?} parsed as {other:?}"),
        }
    }

    fn cells(names: &[&str]) -> Vec<Cell> {
        names.iter().map(|n| Cell::parse(n).unwrap()).collect()
    }

    #[test]
    fn cell_names() {
        assert_eq!(Cell::parse("A1").unwrap().to_string(), "A1");
        assert_eq!(Cell::parse("Z999999").unwrap().row(), 999_999);
        for bad in ["", "A", "1", "a1", "A0", "A01", "AA1", "A1000000", "A-1", "A1 "] {
            assert_eq!(Cell::parse(bad), None, "{bad:?}");
        }
        assert!(Cell::parse("A2").unwrap() < Cell::parse("A10").unwrap());
        assert!(Cell::parse("A10").unwrap() < Cell::parse("B1").unwrap());
        let c = Cell::parse("C77").unwrap();
        assert_eq!(Cell::from_index(c.index()), Some(c));
    }

    #[test]
    fn inputs() {
        assert_eq!(parse_input(""), Ok(Content::Empty));
        assert_eq!(parse_input("-12"), Ok(Content::Number(-12)));
        for bad in
            ["x", " 1", "1 ", "--1", "-", "=", "=1+", "=A0", "=a1", "=SUM(A1)", "=NOW", "=(1", "=1)", "=SUM(A1:A10001)"]
        {
            assert_eq!(parse_input(bad), Err(SheetError::BadFormula), "{bad:?}");
        }
        assert!(parse_input("=SUM(A1:A10000)").is_ok());
    }

    #[test]
    fn refs_are_sorted_and_distinct() {
        let f = formula("= B2 + A10 * SUM(A3:B2) - A2 + B2");
        assert_eq!(f.refs(), cells(&["A2", "A3", "A10", "B2", "B3"]).as_slice());
        assert!(!f.is_volatile());
        assert!(formula("=NOW()+1").is_volatile());
    }

    #[test]
    fn evaluation_follows_precedence() {
        let f = formula("=1+2*3-(4-5)*-2 + SUM(A1:B2) + NOW()");
        let v = f.eval(100, |c| if c.col() == 'A' { 10 } else { 1 });
        assert_eq!(v, 1 + 6 - 2 + 22 + 100);
    }

    #[test]
    fn the_deepest_formula_parses_and_evaluates_on_the_small_stack() {
        // The deep-sheet helpers run `set` on SMALL_STACK: what the statement
        // allows (64 levels of nesting) must fit there in a debug build.
        let deep = format!("={}A1{} + {}1", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING), "-".repeat(MAX_NESTING));
        let value = on_small_stack(|| formula(&deep).eval(0, |_| 2));
        assert_eq!(value, 3);
    }

    #[test]
    fn nesting_is_bounded() {
        assert!(parse_input(&format!("={}1{}", "(".repeat(64), ")".repeat(64))).is_ok());
        assert!(parse_input(&format!("={}1{}", "(".repeat(65), ")".repeat(65))).is_err());
        assert!(parse_input(&format!("={}1", "-".repeat(65))).is_err());
    }
}
