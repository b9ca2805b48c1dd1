//! Reference solution for `spreadsheet`.
//!
//! Every cell that holds something, or that something reads, has a slot
//! with its content, its cached value and its *dependents*: the cells whose
//! formulas read it. The forward edges (what a cell reads) are the
//! formula's own `refs()`; the reverse edges are kept in step with them on
//! every edit, old ones removed before new ones are added.
//!
//! An edit recomputes only the *affected* cells: the edited one and
//! everything that reads it, found by walking the reverse edges. A
//! three-colour depth-first search over the forward edges, restricted to
//! the affected cells, puts them in dependency order and finds the ones
//! that are on a cycle or read one (a back edge reaches a grey cell; a
//! black one is a diamond, which is fine).
// @gate 3
//! Both walks use explicit stacks, so a chain as deep as the sheet cannot
//! overflow the thread's stack.
// @end
//! Reads return the cached value and never evaluate.
// @gate 2
//!
//! The cycle through a cell is found by a breadth-first search from it
//! along what each cell reads: the first way back is the shortest.
// @end
// @gate 4
//!
//! A `recalc` recomputes the same way, starting from every volatile cell
//! (one whose formula calls `NOW()`) at once.
// @end
// @gate 5
//!
//! The waves of a cell are Kahn's algorithm over its dependents, one wave
//! at a time.
// @end
// @gate 6
//!
//! With early cutoff on, the recomputation skips a cell when nothing it
//! reads changed value.
// @end

use std::collections::VecDeque; // @gate 2
use std::collections::hash_map::{DefaultHasher, Entry};
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

use harness_contract::spreadsheet::{Cell, Content, SheetError, Spreadsheet, parse_input};

/// Hash maps with a fixed hasher: the same edits always visit cells in the
/// same order, so a run can be replayed exactly.
type Map<K, V> = HashMap<K, V, BuildHasherDefault<DefaultHasher>>;
type Set<K> = HashSet<K, BuildHasherDefault<DefaultHasher>>;

struct Slot {
    content: Content,
    value: Result<i64, SheetError>,
    /// The cells whose formulas read this one (the reverse edges).
    dependents: Set<Cell>,
}

impl Slot {
    fn empty() -> Slot {
        Slot { content: Content::Empty, value: Ok(0), dependents: Set::default() }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Colour {
    /// Affected, not visited yet.
    White,
    /// On the current path of the search: its dependencies are being visited.
    Grey,
    /// Done: it and everything it reads are in the order already.
    Black,
}

pub struct Sheet {
    slots: Map<Cell, Slot>,
    // @gate 4
    /// Cells whose formula calls `NOW()`.
    volatile: Set<Cell>,
    /// The clock `NOW()` reads.
    now: i64,
    // @end
    evaluations: u64, // @gate 3
    // @gate 6
    /// Early cutoff: a dependent is evaluated only when a cell it reads
    /// changed value in the same recomputation.
    cutoff: bool,
    // @end
}

impl Sheet {
    fn slot(&mut self, cell: Cell) -> &mut Slot {
        self.slots.entry(cell).or_insert_with(Slot::empty)
    }

    fn refs(&self, cell: Cell) -> &[Cell] {
        self.slots.get(&cell).map_or(&[], |s| s.content.refs())
    }

    fn value(&self, cell: Cell) -> Result<i64, SheetError> {
        self.slots.get(&cell).map_or(Ok(0), |s| s.value)
    }

    /// Recomputes `sources` and every cell that reads them, directly or not.
    fn recompute(&mut self, sources: &[Cell]) {
        // The affected cells, found through the reverse edges. Each starts
        // white for the ordering search below.
        let mut colour: Map<Cell, Colour> = Map::default();
        let mut todo: Vec<Cell> = Vec::new();
        for &s in sources {
            if colour.insert(s, Colour::White).is_none() {
                todo.push(s);
            }
        }
        while let Some(cell) = todo.pop() {
            if let Some(slot) = self.slots.get(&cell) {
                for &d in &slot.dependents {
                    if let Entry::Vacant(e) = colour.entry(d) {
                        e.insert(Colour::White);
                        todo.push(d);
                    }
                }
            }
        }

        // Dependency order by a three-colour depth-first search over what
        // each affected cell reads, staying inside the affected cells (the
        // others keep their values). `path` is the explicit recursion stack:
        // a cell and how many of its references it has visited.
        let starts: Vec<Cell> = colour.keys().copied().collect();
        let mut order: Vec<Cell> = Vec::with_capacity(starts.len());
        let mut broken: Set<Cell> = Set::default();
        let mut path: Vec<(Cell, usize)> = Vec::new();
        for start in starts {
            if colour[&start] != Colour::White {
                continue;
            }
            colour.insert(start, Colour::Grey);
            path.push((start, 0));
            while let Some(&(cell, next)) = path.last() {
                let refs = self.refs(cell);
                if let Some(&dep) = refs.get(next) {
                    path.last_mut().unwrap().1 += 1;
                    match colour.get(&dep) {
                        // Not affected: its value is already final.
                        None => {}
                        // Reached by another path already: a diamond, fine.
                        Some(Colour::Black) => {}
                        // An ancestor on the current path: a back edge, so
                        // this cell is on a cycle.
                        Some(Colour::Grey) => {
                            broken.insert(cell);
                        }
                        Some(Colour::White) => {
                            colour.insert(dep, Colour::Grey);
                            path.push((dep, 0));
                        }
                    }
                } else {
                    path.pop();
                    colour.insert(cell, Colour::Black);
                    // Reading a cell that is on a cycle, or reads one, leaves
                    // this one without a value too.
                    if refs.iter().any(|d| broken.contains(d)) {
                        broken.insert(cell);
                    }
                    order.push(cell);
                }
            }
        }

        // @gate 6
        if self.cutoff {
            self.evaluate_with_cutoff(&order, &broken, sources);
            return;
        }
        // @end
        for cell in order {
            let value = if broken.contains(&cell) { Err(SheetError::Cycle) } else { self.evaluate(cell) };
            self.slot(cell).value = value;
        }
    }

    // @gate 6
    /// Early cutoff: in dependency order, the sources and every cell that
    /// reads a cell whose value changed in this recomputation are
    /// evaluated; any other cell keeps its value, since nothing it reads
    /// changed. `err(cycle)` is a value here: losing or regaining one is a
    /// change.
    fn evaluate_with_cutoff(&mut self, order: &[Cell], broken: &Set<Cell>, sources: &[Cell]) {
        let mut changed: Set<Cell> = Set::default();
        for &at in order {
            let before = self.value(at);
            let after = if broken.contains(&at) {
                Err(SheetError::Cycle)
            } else if sources.contains(&at) || self.refs(at).iter().any(|r| changed.contains(r)) {
                self.evaluate(at)
            } else {
                before
            };
            if after != before {
                changed.insert(at);
            }
            self.slot(at).value = after;
        }
    }
    // @end

    /// The value of `cell` from its content and the values of what it
    /// reads, which are up to date.
    // @gate 3
    /// Counts an evaluation unless the cell is empty or reads a cell without
    /// a value.
    // @end
    fn evaluate(&mut self, cell: Cell) -> Result<i64, SheetError> {
        let value = match &self.slots[&cell].content {
            Content::Empty => return Ok(0),
            Content::Number(n) => *n,
            Content::Formula(f) => {
                if f.refs().iter().any(|&r| self.value(r).is_err()) {
                    return Err(SheetError::Cycle);
                }
                // @gate 4
                f.eval(self.now, |r| self.value(r).unwrap_or(0))
                // @else
                //~ f.eval(0, |r| self.value(r).unwrap_or(0))
                // @end
            }
        };
        self.evaluations += 1; // @gate 3
        Ok(value)
    }
}

impl Spreadsheet for Sheet {
    fn new() -> Self {
        Sheet {
            slots: Map::default(),
            volatile: Set::default(), // @gate 4
            now: 0,                   // @gate 4
            evaluations: 0,           // @gate 3
            cutoff: false,            // @gate 6
        }
    }

    fn set(&mut self, cell: String, input: String) -> Result<(), SheetError> {
        let cell = Cell::parse(&cell).ok_or(SheetError::BadCell)?;
        let content = parse_input(&input)?;
        // @gate 4
        if matches!(&content, Content::Formula(f) if f.is_volatile()) {
            self.volatile.insert(cell);
        } else {
            self.volatile.remove(&cell);
        }
        // @end
        let new_refs = content.refs().to_vec();
        let old = std::mem::replace(&mut self.slot(cell).content, content);
        // Detach the old forward edges from the reverse index before adding
        // the new ones, or stale dependents pile up and recompute for nothing.
        for dep in old.refs() {
            if let Some(slot) = self.slots.get_mut(dep) {
                slot.dependents.remove(&cell);
            }
        }
        for dep in new_refs {
            self.slot(dep).dependents.insert(cell);
        }
        self.recompute(&[cell]);
        Ok(())
    }

    fn get(&mut self, cell: String) -> Result<i64, SheetError> {
        let cell = Cell::parse(&cell).ok_or(SheetError::BadCell)?;
        self.value(cell)
    }
    // @gate 2

    fn cycle_path(&mut self, cell: String) -> Result<Option<Vec<String>>, SheetError> {
        let start = Cell::parse(&cell).ok_or(SheetError::BadCell)?;
        // Breadth first from the cell along what each cell reads, references
        // in cell order: the first edge back to the start closes the
        // shortest cycle, and among the shortest the smallest one.
        let mut parent: Map<Cell, Cell> = Map::default();
        let mut queue = VecDeque::from([start]);
        while let Some(cell) = queue.pop_front() {
            for &dep in self.refs(cell) {
                if dep == start {
                    let mut path = vec![start.to_string()];
                    let mut at = cell;
                    while at != start {
                        path.push(at.to_string());
                        at = parent[&at];
                    }
                    path.push(start.to_string());
                    path.reverse();
                    return Ok(Some(path));
                }
                if let Entry::Vacant(e) = parent.entry(dep) {
                    e.insert(cell);
                    queue.push_back(dep);
                }
            }
        }
        Ok(None)
    }
    // @end
    // @gate 3

    fn evaluations(&mut self) -> u64 {
        self.evaluations
    }
    // @end
    // @gate 4

    fn recalc(&mut self, now_ms: i64) {
        self.now = now_ms;
        let sources: Vec<Cell> = self.volatile.iter().copied().collect();
        self.recompute(&sources);
    }
    // @end
    // @gate 5

    fn waves(&mut self, cell: String) -> Result<Vec<Vec<String>>, SheetError> {
        let start = Cell::parse(&cell).ok_or(SheetError::BadCell)?;
        if self.value(start).is_err() {
            return Ok(Vec::new());
        }
        // The members: the start and its dependents that have a value. A
        // cell without a value makes everything that reads it valueless
        // too, so the walk stops there.
        let mut members: Set<Cell> = Set::default();
        members.insert(start);
        let mut walk = vec![start];
        while let Some(at) = walk.pop() {
            if let Some(slot) = self.slots.get(&at) {
                for &d in &slot.dependents {
                    if self.value(d).is_ok() && members.insert(d) {
                        walk.push(d);
                    }
                }
            }
        }
        // Kahn's algorithm, one wave at a time. A member waits only for the
        // members it reads: any other input already has its final value.
        let mut waiting: Map<Cell, usize> = Map::default();
        for &m in &members {
            if m != start {
                waiting.insert(m, self.refs(m).iter().filter(|r| members.contains(r)).count());
            }
        }
        let mut waves: Vec<Vec<String>> = Vec::new();
        let mut wave = vec![start];
        while !wave.is_empty() {
            wave.sort_unstable();
            let mut next = Vec::new();
            for &placed in &wave {
                if let Some(slot) = self.slots.get(&placed) {
                    for d in &slot.dependents {
                        if let Some(left) = waiting.get_mut(d) {
                            *left -= 1;
                            if *left == 0 {
                                next.push(*d);
                            }
                        }
                    }
                }
            }
            waves.push(wave.iter().map(Cell::to_string).collect());
            wave = next;
        }
        Ok(waves)
    }
    // @end
    // @gate 6

    fn early_cutoff(&mut self, on: bool) {
        self.cutoff = on;
    }
    // @end
}

harness_contract::export!(spreadsheet, Sheet);
