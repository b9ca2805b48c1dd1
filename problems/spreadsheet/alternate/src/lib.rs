//! A second solution for `spreadsheet`, written from the statements alone.
//!
//! Design, deliberately unlike a map of cells walked depth first:
//! - cells are interned into an arena (`Vec<Node>`) and refer to each other
//!   by `u32` id; the name → id map is the only hash map;
//! - formulas are parsed by this crate's own recursive-descent parser into
//!   a small AST whose references are arena ids;
//! - recomputation is Kahn's algorithm over the affected cells, with
//!   in-degrees counted inside the affected set: whatever is left when the
//!   queue runs dry is on a cycle or reads one;
//! - the cycle path is built greedily from distances *to* the cell, found by
//!   a breadth-first search over the reverse edges.

use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use harness_contract::spreadsheet::{SheetError, Spreadsheet};

type Id = u32;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
struct Addr {
    col: u8,
    row: u32,
}

fn parse_addr(s: &str) -> Option<Addr> {
    let b = s.as_bytes();
    if b.len() < 2 || b.len() > 7 || !b[0].is_ascii_uppercase() || b[1] == b'0' {
        return None;
    }
    let mut row: u32 = 0;
    for &c in &b[1..] {
        if !c.is_ascii_digit() {
            return None;
        }
        row = row * 10 + (c - b'0') as u32;
    }
    Some(Addr { col: b[0], row })
}

fn addr_name(a: Addr) -> String {
    format!("{}{}", a.col as char, a.row)
}

enum Ast {
    Lit(i64),
    Cell(Id),
    Sum(Vec<Id>),
    Now,
    Neg(Box<Ast>),
    Bin(u8, Box<Ast>, Box<Ast>),
}

enum Held {
    Nothing,
    Num(i64),
    Formula { ast: Ast, reads: Vec<Id>, volatile: bool },
}

struct Node {
    addr: Addr,
    held: Held,
    value: Option<i64>,
    /// Ids of the cells whose formula reads this one.
    readers: Vec<Id>,
}

impl Node {
    fn reads(&self) -> &[Id] {
        match &self.held {
            Held::Formula { reads, .. } => reads,
            _ => &[],
        }
    }
}

pub struct Book {
    ids: HashMap<Addr, Id>,
    nodes: Vec<Node>,
    clock: i64,
    count: u64,
    volatile: BTreeSet<Id>,
    cutoff: bool,
}

/// A parsed input, before it is placed: references still as addresses.
enum Parsed {
    Nothing,
    Num(i64),
    Formula(PAst, bool),
}

enum PAst {
    Lit(i64),
    Cell(Addr),
    Sum(Addr, Addr),
    Now,
    Neg(Box<PAst>),
    Bin(u8, Box<PAst>, Box<PAst>),
}

struct P<'a> {
    b: &'a [u8],
    i: usize,
    nest: usize,
    volatile: bool,
}

impl P<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && self.b[self.i] == b' ' {
            self.i += 1;
        }
    }
    fn at(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }
    fn sum_expr(&mut self) -> Option<PAst> {
        let mut l = self.product()?;
        while let Some(op @ (b'+' | b'-')) = self.at() {
            self.i += 1;
            let r = self.product()?;
            l = PAst::Bin(op, Box::new(l), Box::new(r));
        }
        Some(l)
    }
    fn product(&mut self) -> Option<PAst> {
        let mut l = self.prefix()?;
        while self.at() == Some(b'*') {
            self.i += 1;
            let r = self.prefix()?;
            l = PAst::Bin(b'*', Box::new(l), Box::new(r));
        }
        Some(l)
    }
    fn deeper(&mut self) -> Option<()> {
        self.nest += 1;
        (self.nest <= 64).then_some(())
    }
    fn prefix(&mut self) -> Option<PAst> {
        if self.at() == Some(b'-') {
            self.i += 1;
            self.deeper()?;
            let inner = self.prefix()?;
            self.nest -= 1;
            return Some(PAst::Neg(Box::new(inner)));
        }
        self.primary()
    }
    fn token(&mut self) -> &[u8] {
        let s = self.i;
        while self.i < self.b.len() && self.b[self.i].is_ascii_alphanumeric() {
            self.i += 1;
        }
        &self.b[s..self.i]
    }
    fn punct(&mut self, c: u8) -> Option<()> {
        (self.at() == Some(c)).then(|| self.i += 1)
    }
    fn addr(&mut self) -> Option<Addr> {
        self.ws();
        let t = self.token();
        parse_addr(std::str::from_utf8(t).ok()?)
    }
    fn primary(&mut self) -> Option<PAst> {
        let c = self.at()?;
        if c == b'(' {
            self.i += 1;
            self.deeper()?;
            let e = self.sum_expr()?;
            self.punct(b')')?;
            self.nest -= 1;
            return Some(e);
        }
        if c.is_ascii_digit() {
            let t = self.token();
            return std::str::from_utf8(t)
                .ok()?
                .parse::<i64>()
                .ok()
                .filter(|_| t.iter().all(u8::is_ascii_digit))
                .map(PAst::Lit);
        }
        let save = self.i;
        let t = self.token().to_vec();
        if self.at() == Some(b'(') && (t == b"SUM" || t == b"NOW") {
            self.i += 1;
            if t == b"NOW" {
                self.punct(b')')?;
                self.volatile = true;
                return Some(PAst::Now);
            }
            let a = self.addr()?;
            self.punct(b':')?;
            let z = self.addr()?;
            self.punct(b')')?;
            let cells = (a.col.abs_diff(z.col) as u64 + 1) * (a.row.abs_diff(z.row) as u64 + 1);
            if cells > 10_000 {
                return None;
            }
            return Some(PAst::Sum(a, z));
        }
        self.i = save;
        self.addr().map(PAst::Cell)
    }
}

fn parse(input: &str) -> Option<Parsed> {
    if input.is_empty() {
        return Some(Parsed::Nothing);
    }
    if let Some(rest) = input.strip_prefix('=') {
        let mut p = P { b: rest.as_bytes(), i: 0, nest: 0, volatile: false };
        let e = p.sum_expr()?;
        p.ws();
        return (p.i == p.b.len()).then_some(Parsed::Formula(e, p.volatile));
    }
    let digits = input.strip_prefix('-').unwrap_or(input);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    input.parse().ok().map(Parsed::Num)
}

impl Book {
    fn id(&mut self, a: Addr) -> Id {
        if let Some(&id) = self.ids.get(&a) {
            return id;
        }
        let id = self.nodes.len() as Id;
        self.nodes.push(Node { addr: a, held: Held::Nothing, value: Some(0), readers: Vec::new() });
        self.ids.insert(a, id);
        id
    }

    fn place(&mut self, p: PAst, reads: &mut Vec<Id>) -> Ast {
        match p {
            PAst::Lit(n) => Ast::Lit(n),
            PAst::Now => Ast::Now,
            PAst::Cell(a) => {
                let id = self.id(a);
                reads.push(id);
                Ast::Cell(id)
            }
            PAst::Sum(a, z) => {
                let mut ids = Vec::new();
                for col in a.col.min(z.col)..=a.col.max(z.col) {
                    for row in a.row.min(z.row)..=a.row.max(z.row) {
                        ids.push(self.id(Addr { col, row }));
                    }
                }
                reads.extend(&ids);
                Ast::Sum(ids)
            }
            PAst::Neg(x) => Ast::Neg(Box::new(self.place(*x, reads))),
            PAst::Bin(op, l, r) => {
                let l = self.place(*l, reads);
                let r = self.place(*r, reads);
                Ast::Bin(op, Box::new(l), Box::new(r))
            }
        }
    }

    fn calc(&self, ast: &Ast) -> i64 {
        match ast {
            Ast::Lit(n) => *n,
            Ast::Now => self.clock,
            Ast::Cell(id) => self.nodes[*id as usize].value.unwrap_or(0),
            Ast::Sum(ids) => ids.iter().fold(0i64, |t, id| t.wrapping_add(self.nodes[*id as usize].value.unwrap_or(0))),
            Ast::Neg(x) => self.calc(x).wrapping_neg(),
            Ast::Bin(op, l, r) => {
                let (l, r) = (self.calc(l), self.calc(r));
                match op {
                    b'+' => l.wrapping_add(r),
                    b'-' => l.wrapping_sub(r),
                    _ => l.wrapping_mul(r),
                }
            }
        }
    }

    /// Kahn's algorithm over `roots` and everything that reads them.
    fn refresh(&mut self, roots: Vec<Id>) {
        // Collect the affected cells (breadth first over the readers).
        let mut affected: HashMap<Id, u32> = HashMap::new(); // id -> in-degree inside the set
        let mut queue: VecDeque<Id> = VecDeque::new();
        for &r in &roots {
            if affected.insert(r, 0).is_none() {
                queue.push_back(r);
            }
        }
        let mut list = Vec::new();
        while let Some(id) = queue.pop_front() {
            list.push(id);
            for &rd in &self.nodes[id as usize].readers {
                if let Entry::Vacant(e) = affected.entry(rd) {
                    e.insert(0);
                    queue.push_back(rd);
                }
            }
        }
        // In-degrees: how many distinct affected cells each one reads.
        for &id in &list {
            let n = self.nodes[id as usize].reads().iter().filter(|r| affected.contains_key(r)).count();
            *affected.get_mut(&id).unwrap() = n as u32;
        }
        let mut ready: VecDeque<Id> = list.iter().copied().filter(|id| affected[id] == 0).collect();
        let mut done = 0usize;
        // With early cutoff, the cells whose value this pass changed.
        let mut changed: HashSet<Id> = HashSet::new();
        while let Some(id) = ready.pop_front() {
            done += 1;
            let node = &self.nodes[id as usize];
            let old = node.value;
            let wake = !self.cutoff || roots.contains(&id) || node.reads().iter().any(|r| changed.contains(r));
            let value = if !wake {
                old
            } else {
                match &node.held {
                    Held::Nothing => Some(0),
                    Held::Num(n) => {
                        self.count += 1;
                        Some(*n)
                    }
                    Held::Formula { ast, reads, .. } => {
                        if reads.iter().any(|r| self.nodes[*r as usize].value.is_none()) {
                            None
                        } else {
                            self.count += 1;
                            Some(self.calc(ast))
                        }
                    }
                }
            };
            if value != old {
                changed.insert(id);
            }
            self.nodes[id as usize].value = value;
            let readers = std::mem::take(&mut self.nodes[id as usize].readers);
            for &rd in &readers {
                if let Some(d) = affected.get_mut(&rd) {
                    *d -= 1;
                    if *d == 0 {
                        ready.push_back(rd);
                    }
                }
            }
            self.nodes[id as usize].readers = readers;
        }
        if done < list.len() {
            // Never reached in-degree 0: on a cycle or reading one.
            for (&id, &d) in &affected {
                if d > 0 {
                    self.nodes[id as usize].value = None;
                }
            }
        }
    }
}

impl Spreadsheet for Book {
    fn new() -> Self {
        Book { ids: HashMap::new(), nodes: Vec::new(), clock: 0, count: 0, volatile: BTreeSet::new(), cutoff: false }
    }

    fn set(&mut self, cell: String, input: String) -> Result<(), SheetError> {
        let a = parse_addr(&cell).ok_or(SheetError::BadCell)?;
        let parsed = parse(&input).ok_or(SheetError::BadFormula)?;
        let me = self.id(a);
        // Unhook the old reads.
        let old = std::mem::replace(&mut self.nodes[me as usize].held, Held::Nothing);
        if let Held::Formula { reads, .. } = &old {
            for r in reads {
                let readers = &mut self.nodes[*r as usize].readers;
                if let Some(pos) = readers.iter().position(|x| *x == me) {
                    readers.swap_remove(pos);
                }
            }
        }
        let held = match parsed {
            Parsed::Nothing => Held::Nothing,
            Parsed::Num(n) => Held::Num(n),
            Parsed::Formula(p, volatile) => {
                let mut reads = Vec::new();
                let ast = self.place(p, &mut reads);
                reads.sort_unstable_by_key(|id| self.nodes[*id as usize].addr);
                reads.dedup();
                for r in &reads {
                    self.nodes[*r as usize].readers.push(me);
                }
                Held::Formula { ast, reads, volatile }
            }
        };
        if matches!(held, Held::Formula { volatile: true, .. }) {
            self.volatile.insert(me);
        } else {
            self.volatile.remove(&me);
        }
        self.nodes[me as usize].held = held;
        self.refresh(vec![me]);
        Ok(())
    }

    fn get(&mut self, cell: String) -> Result<i64, SheetError> {
        let a = parse_addr(&cell).ok_or(SheetError::BadCell)?;
        match self.ids.get(&a) {
            None => Ok(0),
            Some(&id) => self.nodes[id as usize].value.ok_or(SheetError::Cycle),
        }
    }

    fn cycle_path(&mut self, cell: String) -> Result<Option<Vec<String>>, SheetError> {
        let a = parse_addr(&cell).ok_or(SheetError::BadCell)?;
        let Some(&start) = self.ids.get(&a) else { return Ok(None) };
        // Distance from every cell to `start`, following references:
        // breadth first from `start` over the reverse edges.
        let mut dist: HashMap<Id, usize> = HashMap::new();
        let mut q = VecDeque::from([(start, 0usize)]);
        let mut best: Option<usize> = None; // length of the shortest cycle
        let mut seen_start = false;
        while let Some((id, d)) = q.pop_front() {
            if id == start && seen_start {
                continue;
            }
            seen_start = true;
            for &rd in &self.nodes[id as usize].readers {
                if rd == start {
                    best = Some(best.map_or(d + 1, |b: usize| b.min(d + 1)));
                    continue;
                }
                if let Entry::Vacant(e) = dist.entry(rd) {
                    e.insert(d + 1);
                    q.push_back((rd, d + 1));
                }
            }
        }
        let Some(len) = best else { return Ok(None) };
        // Walk forward greedily: from each cell, the smallest reference that
        // is still exactly the right distance from `start`.
        let mut path = vec![addr_name(a)];
        let mut at = start;
        let mut left = len;
        while left > 0 {
            let next = if left == 1 {
                start
            } else {
                *self.nodes[at as usize]
                    .reads()
                    .iter()
                    .find(|r| **r != start && dist.get(r) == Some(&(left - 1)))
                    .expect("a reference one step closer")
            };
            path.push(addr_name(self.nodes[next as usize].addr));
            at = next;
            left -= 1;
        }
        Ok(Some(path))
    }

    fn evaluations(&mut self) -> u64 {
        self.count
    }

    fn recalc(&mut self, now_ms: i64) {
        self.clock = now_ms;
        let roots: Vec<Id> = self.volatile.iter().copied().collect();
        if !roots.is_empty() {
            self.refresh(roots);
        }
    }

    fn waves(&mut self, cell: String) -> Result<Vec<Vec<String>>, SheetError> {
        let a = parse_addr(&cell).ok_or(SheetError::BadCell)?;
        let Some(&start) = self.ids.get(&a) else { return Ok(vec![vec![addr_name(a)]]) };
        if self.nodes[start as usize].value.is_none() {
            return Ok(Vec::new());
        }
        // Not Kahn here: a depth-first search over the readers (explicit
        // stack) gives a post-order; reversed, it is a topological order of
        // the cells reached, in which each cell's wave is one more than the
        // highest wave of any member it reads (the longest path from start).
        let mut seen: HashSet<Id> = HashSet::from([start]);
        let mut post: Vec<Id> = Vec::new();
        let mut stack: Vec<(Id, usize)> = vec![(start, 0)];
        while let Some(top) = stack.last_mut() {
            let (id, i) = *top;
            let readers = &self.nodes[id as usize].readers;
            if i < readers.len() {
                top.1 += 1;
                let rd = readers[i];
                if self.nodes[rd as usize].value.is_some() && seen.insert(rd) {
                    stack.push((rd, 0));
                }
            } else {
                stack.pop();
                post.push(id);
            }
        }
        let mut level: HashMap<Id, usize> = HashMap::from([(start, 0)]);
        for &id in post.iter().rev() {
            let l = level[&id];
            for &rd in &self.nodes[id as usize].readers {
                if seen.contains(&rd) {
                    let e = level.entry(rd).or_insert(0);
                    *e = (*e).max(l + 1);
                }
            }
        }
        let depth = level.values().copied().max().unwrap_or(0);
        let mut buckets: Vec<Vec<Addr>> = vec![Vec::new(); depth + 1];
        for (&id, &l) in &level {
            buckets[l].push(self.nodes[id as usize].addr);
        }
        Ok(buckets
            .into_iter()
            .map(|mut b| {
                b.sort_unstable();
                b.into_iter().map(addr_name).collect()
            })
            .collect())
    }

    fn early_cutoff(&mut self, on: bool) {
        self.cutoff = on;
    }
}

harness_contract::export!(spreadsheet, Book);
