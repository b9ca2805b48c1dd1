//! Is a history of overlapping calls linearizable? Pure: no processes.
//!
//! A history is linearizable when some total order of its calls, in which
//! a call that returned before another was invoked comes first, gives
//! every call the result the problem's reference gives when the calls are
//! replayed one by one in that order. The search is Wing & Gong's (as
//! Porcupine and Knossos run it): extend a valid prefix by a call that no
//! remaining call must precede, check its result, backtrack on a mismatch.
//!
//! The reference is a black box in another process, so its results come
//! from replays of whole orders, kept in a trie of [`Replays`]: the result
//! of a call after a prefix is known once some replayed order began with
//! that prefix and that call. A search that meets a prefix no replay
//! covered yet asks for it ([`Status::Needs`]), completed greedily (by
//! response time, the order a correct implementation most often took), so
//! one replay answers a whole branch; the caller replays every search's
//! needs in one worker run and searches again. A search never guesses: it
//! ends [`Status::Linearizable`] with an order, [`Status::Violation`] when
//! every order fails, or [`Status::GaveUp`] past its step budget, which the
//! caller counts as a pass (a miss is acceptable, a false failure is not).

use std::collections::{HashMap, HashSet};

use harness_contract::Value;

/// One completed call of a history.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    /// Which call this is, as the reference sees it: calls with equal ids
    /// are the same operation with the same arguments (so the same result
    /// after the same calls), whichever thread or run made them.
    pub id: usize,
    pub thread: usize,
    /// What was called (the operation and its arguments, displayed).
    pub call: String,
    /// What it returned.
    pub result: Value,
    /// Clock readings just before the call and just after it returned.
    pub invoked: u64,
    pub returned: u64,
}

/// The reference's results for sequences of calls, as a trie keyed by call
/// id: one trie serves every run of a case, since a sequence's results
/// depend only on its calls.
#[derive(Clone, Debug, Default)]
pub struct Replays {
    /// Per node: (call, the reference's result for it there, child). A
    /// node has few children (a call can follow a prefix only if its
    /// thread's earlier calls are in it), so a list beats a hash map.
    children: Vec<Vec<(usize, Value, usize)>>,
}

impl Replays {
    pub fn new() -> Replays {
        Replays { children: vec![Vec::new()] }
    }

    /// Records a replay: `results[i]` is the reference's result for the
    /// call with id `ids[i]` after those of `ids[..i]`.
    pub fn insert(&mut self, ids: &[usize], results: &[Value]) {
        let mut node = 0;
        for (&op, result) in ids.iter().zip(results) {
            node = match self.child(node, op) {
                Some((_, child)) => child,
                None => {
                    let child = self.children.len();
                    self.children.push(Vec::new());
                    self.children[node].push((op, result.clone(), child));
                    child
                }
            };
        }
    }

    fn child(&self, node: usize, id: usize) -> Option<(&Value, usize)> {
        self.children[node].iter().find(|(call, ..)| *call == id).map(|(_, result, child)| (result, *child))
    }

    /// Orders replayed so far (trie nodes, the root aside).
    pub fn len(&self) -> usize {
        self.children.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where every order failed: the longest valid order found, and each call
/// that could have come next with what the reference says it should have
/// returned there (`None`: no replay reached it, which only a search that
/// ran out of budget leaves).
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub prefix: Vec<usize>,
    pub next: Vec<(usize, Option<Value>)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    /// This order explains every result.
    Linearizable(Vec<usize>),
    /// No order does.
    Violation(Violation),
    /// Replay these orders on the reference, then search again.
    Needs(Vec<Vec<usize>>),
    /// The step budget ran out before an answer.
    GaveUp,
}

struct Search<'a> {
    ops: &'a [Op],
    replays: &'a Replays,
    /// The calls by response time (ties by index): the order candidates
    /// are tried in.
    by_return: Vec<usize>,
    /// The calls already ordered, a bit each: also the memo's key.
    done: Vec<u64>,
    path: Vec<usize>,
    needs: Vec<Vec<usize>>,
    max_needs: usize,
    steps: usize,
    budget: usize,
    deepest: Option<Violation>,
    /// Per trie node, the sets of calls already ordered from which the
    /// search failed: the node fixes the state, so the same calls left
    /// give the same answer.
    failed: HashMap<usize, HashSet<Vec<u64>, Fast>, Fast>,
    /// Branches met whose results no replay gave yet.
    unknown: usize,
}

/// A multiplicative hasher for the memo's keys (integers and bit sets):
/// the keys are not chosen by anyone who could make them collide, and
/// SipHash cost most of a search's time.
#[derive(Default)]
struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

type Fast = std::hash::BuildHasherDefault<FastHasher>;

/// Whether call `i` is ordered.
fn is_done(done: &[u64], i: usize) -> bool {
    done[i / 64] & (1 << (i % 64)) != 0
}

/// Flips call `i` between ordered and not.
fn flip(done: &mut [u64], i: usize) {
    done[i / 64] ^= 1 << (i % 64);
}

/// The indices of `ops` by response time, ties by index.
fn by_return(ops: &[Op]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..ops.len()).collect();
    order.sort_by_key(|&i| (ops[i].returned, i));
    order
}

/// The calls that may come next: not yet ordered, and invoked before every
/// remaining call returned (else that call must come first), earliest
/// response first. `by_return` is [`by_return`] of the same calls.
fn candidates(ops: &[Op], by_return: &[usize], done: &[u64]) -> Vec<usize> {
    // Plain loops: this runs at every step of every search, and the test
    // suite runs it unoptimised.
    let mut next = Vec::new();
    let mut first_return = None;
    for &i in by_return {
        if is_done(done, i) {
            continue;
        }
        let first = *first_return.get_or_insert(ops[i].returned);
        if ops[i].invoked <= first {
            next.push(i);
        }
    }
    next
}

/// `prefix` followed by the remaining calls, each time the candidate that
/// returned first: a full order consistent with real time.
pub fn greedy(ops: &[Op], prefix: &[usize]) -> Vec<usize> {
    greedy_by(ops, &by_return(ops), prefix)
}

fn greedy_by(ops: &[Op], by_return: &[usize], prefix: &[usize]) -> Vec<usize> {
    let mut done = vec![0u64; ops.len().div_ceil(64)];
    for &i in prefix {
        flip(&mut done, i);
    }
    let mut order = prefix.to_vec();
    while order.len() < ops.len() {
        let next = candidates(ops, by_return, &done)[0];
        flip(&mut done, next);
        order.push(next);
    }
    order
}

enum Step {
    Found,
    Exhausted,
    OutOfBudget,
}

impl Search<'_> {
    fn dfs(&mut self, node: usize) -> Step {
        if self.path.len() == self.ops.len() {
            return Step::Found;
        }
        self.steps += 1;
        if self.steps > self.budget {
            return Step::OutOfBudget;
        }
        if self.failed.get(&node).is_some_and(|sets| sets.contains(self.done.as_slice())) {
            return Step::Exhausted;
        }
        let unknown_before = self.unknown;
        let next = candidates(self.ops, &self.by_return, &self.done);
        for &c in &next {
            match self.replays.child(node, self.ops[c].id) {
                None => {
                    self.unknown += 1;
                    if self.needs.len() < self.max_needs {
                        let mut prefix = self.path.clone();
                        prefix.push(c);
                        self.needs.push(greedy_by(self.ops, &self.by_return, &prefix));
                    }
                }
                Some((expected, child)) => {
                    if !expected.accepts(&self.ops[c].result) {
                        continue;
                    }
                    flip(&mut self.done, c);
                    self.path.push(c);
                    match self.dfs(child) {
                        // The order found is `path`: leave it there.
                        Step::Exhausted => {}
                        other => return other,
                    }
                    self.path.pop();
                    flip(&mut self.done, c);
                }
            }
        }
        let deeper = self.deepest.as_ref().is_none_or(|d| self.path.len() > d.prefix.len());
        if deeper {
            // Every call that could have come next, with what the
            // reference says it should have returned here.
            let tried = next
                .iter()
                .map(|&c| (c, self.replays.child(node, self.ops[c].id).map(|(expected, _)| expected.clone())))
                .collect();
            self.deepest = Some(Violation { prefix: self.path.clone(), next: tried });
        }
        // Only a subtree without unknown branches failed for good.
        if self.unknown == unknown_before {
            self.failed.entry(node).or_default().insert(self.done.clone());
        }
        Step::Exhausted
    }
}

/// Searches for an order of `ops` that the `replays` show valid, in at
/// most `budget` steps, asking for at most `max_needs` new replays.
pub fn check(ops: &[Op], replays: &Replays, budget: usize, max_needs: usize) -> Status {
    if ops.is_empty() {
        return Status::Linearizable(Vec::new());
    }
    let mut search = Search {
        ops,
        replays,
        by_return: by_return(ops),
        done: vec![0; ops.len().div_ceil(64)],
        path: Vec::with_capacity(ops.len()),
        needs: Vec::new(),
        max_needs: max_needs.max(1),
        steps: 0,
        budget,
        deepest: None,
        failed: Default::default(),
        unknown: 0,
    };
    match search.dfs(0) {
        Step::Found => Status::Linearizable(search.path),
        Step::OutOfBudget => Status::GaveUp,
        Step::Exhausted if search.unknown > 0 => Status::Needs(search.needs),
        Step::Exhausted => Status::Violation(search.deepest.expect("an exhausted search went somewhere")),
    }
}

/// The calls of the violation's window: the calls that could have come
/// next, and every ordered call that overlaps one of them in time, in
/// invocation order. Those are the calls no order could explain; the
/// calls before (all returned before the window began) are the settled
/// state they started from.
pub fn window(ops: &[Op], v: &Violation) -> Vec<usize> {
    let next: Vec<usize> = v.next.iter().map(|(i, _)| *i).collect();
    let start = next.iter().map(|&i| ops[i].invoked).min().unwrap_or(0);
    let end = next.iter().map(|&i| ops[i].returned).max().unwrap_or(0);
    let mut calls: Vec<usize> = v
        .prefix
        .iter()
        .copied()
        .filter(|&i| ops[i].returned >= start && ops[i].invoked <= end)
        .chain(next.iter().copied())
        .collect();
    calls.sort_by_key(|&i| (ops[i].invoked, i));
    calls.dedup();
    calls
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A counter register: `inc` returns the new value, `get` the value.
    fn replay(ops: &[Op], order: &[usize]) -> Vec<Value> {
        let mut n = 0;
        order
            .iter()
            .map(|&i| {
                if ops[i].call == "inc" {
                    n += 1;
                }
                Value::Int(n)
            })
            .collect()
    }

    fn op(thread: usize, call: &str, result: i128, invoked: u64, returned: u64) -> Op {
        // Every call its own id: increments are not interchangeable here
        // (their ids stand for distinct calls in these tests).
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Op { id, thread, call: call.into(), result: Value::Int(result), invoked, returned }
    }

    fn ids(ops: &[Op], order: &[usize]) -> Vec<usize> {
        order.iter().map(|&i| ops[i].id).collect()
    }

    /// Searches until an answer, replaying what the search asks for.
    fn judge(ops: &[Op]) -> (Status, usize) {
        let mut replays = Replays::new();
        for round in 1.. {
            match check(ops, &replays, 100_000, 4) {
                Status::Needs(orders) => {
                    for o in orders {
                        replays.insert(&ids(ops, &o), &replay(ops, &o));
                    }
                }
                other => return (other, round),
            }
        }
        unreachable!()
    }

    #[test]
    fn overlapping_calls_may_take_effect_in_either_order() {
        // Two increments overlap; the one that returned 1 took effect
        // first even though it returned last.
        let ops = [op(0, "inc", 2, 0, 10), op(1, "inc", 1, 1, 20), op(0, "get", 2, 25, 30)];
        let (status, rounds) = judge(&ops);
        assert_eq!(status, Status::Linearizable(vec![1, 0, 2]));
        assert!(rounds <= 3, "{rounds} rounds");
    }

    #[test]
    fn real_time_order_is_respected() {
        // The second increment began after the first returned: it cannot
        // have taken effect first.
        let ops = [op(0, "inc", 2, 0, 10), op(1, "inc", 1, 11, 20)];
        let (status, _) = judge(&ops);
        let Status::Violation(v) = status else { panic!("{status:?}") };
        assert_eq!(v.prefix, Vec::<usize>::new());
        assert_eq!(v.next, vec![(0, Some(Value::Int(1)))]);
        assert_eq!(window(&ops, &v), vec![0]);
    }

    #[test]
    fn a_lost_update_is_found_and_its_window_is_small() {
        // Settled calls first, then two overlapping increments that both
        // returned 3, then a read.
        let ops = [
            op(0, "inc", 1, 0, 1),
            op(1, "inc", 2, 2, 3),
            op(0, "inc", 3, 10, 20),
            op(1, "inc", 3, 12, 22),
            op(0, "get", 3, 30, 31),
        ];
        let (status, _) = judge(&ops);
        let Status::Violation(v) = status else { panic!("{status:?}") };
        assert_eq!(v.prefix.len(), 3, "{v:?}");
        assert_eq!(window(&ops, &v), vec![2, 3]);
    }

    #[test]
    fn a_read_may_see_a_write_still_in_flight() {
        let ops = [op(0, "inc", 1, 0, 100), op(1, "get", 1, 10, 20), op(1, "get", 1, 30, 40)];
        assert!(matches!(judge(&ops).0, Status::Linearizable(_)));
        // ...but not undo it afterwards.
        let ops = [op(0, "inc", 1, 0, 100), op(1, "get", 1, 10, 20), op(1, "get", 0, 30, 40)];
        assert!(matches!(judge(&ops).0, Status::Violation(_)));
    }

    #[test]
    fn many_overlapping_calls_stay_within_a_few_rounds() {
        // Three threads, twelve increments each, all overlapping their
        // neighbours, results in the order they took effect.
        let mut ops = Vec::new();
        for k in 0..36u64 {
            let thread = (k % 3) as usize;
            ops.push(op(thread, "inc", k as i128 + 1, k * 10, k * 10 + 25));
        }
        // Shuffle the result order a little within overlaps.
        ops.swap(4, 5);
        ops[4].thread = 1;
        ops[5].thread = 2;
        let (status, rounds) = judge(&ops);
        assert!(matches!(status, Status::Linearizable(_)), "{status:?}");
        assert!(rounds <= 6, "{rounds} rounds");
    }

    #[test]
    fn the_budget_gives_up_rather_than_guess() {
        let ops: Vec<Op> = (0..20).map(|k| op(k, "inc", 99, 0, 100)).collect();
        let mut replays = Replays::new();
        let o = greedy(&ops, &[]);
        replays.insert(&ids(&ops, &o), &replay(&ops, &o));
        assert_eq!(check(&ops, &replays, 0, 1), Status::GaveUp);
        // With room, it asks for one more branch at a time.
        assert_eq!(check(&ops, &replays, 100, 1), Status::Needs(vec![greedy(&ops, &[1])]));
    }
}
