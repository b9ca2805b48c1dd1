//! Parameter domains (`[generate.params]`) and generation specs
//! (`[gate.generate]`): how the values of generated cases are drawn.

use std::collections::BTreeMap;

use harness_contract::Value;

use crate::problem::rng::Rng;
use crate::problem::ty::Ty;

/// How to draw one parameter's values (`[generate.params]` in the TOML).
#[derive(Clone, Debug, PartialEq)]
pub enum Domain {
    /// `{ ints = [lo, hi] }`, inclusive.
    Ints(i128, i128),
    /// `{ ints = [lo, hi], edges = [e, ...], edge_share = 0.3 }`: like
    /// `Ints`, except that with probability `edge_share` (0.3 when left
    /// out) the value is one of `edges`, uniformly: boundary values (a
    /// capacity of exactly 1, a window that divides the clock's snap) drawn
    /// far more often than a uniform draw would. A separate variant so that
    /// a plain `ints` draws exactly as it always did (old seeds replay).
    IntsEdges { lo: i128, hi: i128, edges: Vec<i128>, share: f64 },
    /// `{ floats = [lo, hi] }`.
    Floats(f64, f64),
    /// `{ strings = ["a", "b"] }`.
    Strings(Vec<String>),
    /// `{ bools = true }`.
    Bools,
    /// `{ list = <domain>, len = [lo, hi] }`.
    List(Box<Domain>, usize, usize),
    /// `{ clock = [step_lo, step_hi], start = [lo, hi], late = 0.1 }`: a
    /// time that moves forward through a case. The first draw is uniform in
    /// `start`; each later one adds a step uniform in `clock`, except that
    /// with probability `late` it is an earlier time (a late arrival),
    /// uniform between the start and the current time. Every parameter
    /// drawn from the same `[generate.params]` entry shares one clock.
    ///
    /// With `snap = w, snap_share = p` (p is 0.3 when left out), a forward
    /// step is, with probability p, snapped instead: the time lands on the
    /// first multiple of `w` at least one past `now + step_lo`, or one
    /// before or one after it (uniformly), so exact window edges, expiries
    /// and deadlines happen often. A snapped step can be longer than
    /// `step_hi` (by up to `w + 1`). Without `snap` no draw is added, so old
    /// seeds replay the same.
    Clock { step: (i128, i128), start: (i128, i128), late: f64, snap: Option<(i128, f64)> },
}

impl Domain {
    pub fn from_toml(v: &toml::Value) -> Result<Domain, String> {
        let t = v.as_table().ok_or("a domain is a table, e.g. { ints = [0, 9] }")?;
        for (key, owner, companion) in [
            ("edges", "ints", None),
            ("edge_share", "ints", Some("edges")),
            ("snap", "clock", None),
            ("snap_share", "clock", Some("snap")),
        ] {
            if t.contains_key(key) && !t.contains_key(owner) {
                let article = if owner == "ints" { "an" } else { "a" };
                return Err(format!("`{key}` belongs to {article} `{owner}` domain only"));
            }
            if let Some(c) = companion
                && t.contains_key(key)
                && !t.contains_key(c)
            {
                return Err(format!("`{key}` needs `{c}`"));
            }
        }
        if t.contains_key("ints") {
            ints(t)
        } else if t.contains_key("floats") {
            let [lo, hi] = pair(t, "floats")?;
            let f = |v: &toml::Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
            let (Some(lo), Some(hi)) = (f(&lo), f(&hi)) else {
                return Err("`floats` bounds must be numbers".into());
            };
            Ok(Domain::Floats(lo, hi))
        } else if let Some(s) = t.get("strings") {
            let items = s.as_array().ok_or("`strings` must be an array")?;
            let strings: Option<Vec<String>> = items.iter().map(|v| v.as_str().map(str::to_string)).collect();
            let strings = strings.ok_or("`strings` must hold strings")?;
            if strings.is_empty() {
                return Err("`strings` must not be empty".into());
            }
            Ok(Domain::Strings(strings))
        } else if t.contains_key("bools") {
            Ok(Domain::Bools)
        } else if t.contains_key("clock") {
            clock(t)
        } else if let Some(inner) = t.get("list") {
            let [lo, hi] = pair(t, "len")?;
            let (Some(lo), Some(hi)) = (lo.as_integer(), hi.as_integer()) else {
                return Err("`len` bounds must be integers".into());
            };
            if lo < 0 || lo > hi {
                return Err("`len` needs 0 <= low <= high".into());
            }
            if hi > MAX_LIST_LEN as i64 {
                return Err(format!("`len` allows lists of at most {MAX_LIST_LEN} items, not {hi}"));
            }
            Ok(Domain::List(Box::new(Domain::from_toml(inner)?), lo as usize, hi as usize))
        } else {
            Err("unknown domain: use ints, floats, strings, bools, list or clock".into())
        }
    }

    /// Whether values of this domain fit parameters of type `ty`.
    pub fn check(&self, ty: &Ty) -> Result<(), String> {
        match (self, ty) {
            (_, Ty::Option(inner)) => self.check(inner),
            (Domain::Ints(lo, hi) | Domain::IntsEdges { lo, hi, .. }, Ty::Int(_)) => {
                ty.check(Value::Int(*lo), &[], false)?;
                ty.check(Value::Int(*hi), &[], false).map(|_| ())
            }
            (Domain::Clock { start, .. }, Ty::Int(_)) => ty.check(Value::Int(start.0), &[], false).map(|_| ()),
            (Domain::Floats(..), Ty::Float) | (Domain::Strings(_), Ty::Str) | (Domain::Bools, Ty::Bool) => Ok(()),
            (Domain::List(inner, ..), Ty::List(t)) => inner.check(t),
            (d, t) => Err(format!("a {} domain cannot produce {t}", d.kind())),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Domain::Ints(..) | Domain::IntsEdges { .. } => "ints",
            Domain::Floats(..) => "floats",
            Domain::Strings(_) => "strings",
            Domain::Bools => "bools",
            Domain::List(..) => "list",
            Domain::Clock { .. } => "clock",
        }
    }

    /// Draws one value; `clock` is the running time of this domain in this
    /// case (used by [`Domain::Clock`] only).
    pub fn draw(&self, rng: &mut Rng, clock: &mut Option<i128>) -> Value {
        fn range(rng: &mut Rng, lo: i128, hi: i128) -> i128 {
            lo + rng.below((hi - lo + 1) as u64) as i128
        }
        match self {
            Domain::Clock { step, start, late, snap } => {
                let now = match *clock {
                    None => range(rng, start.0, start.1),
                    Some(now) if *late > 0.0 && rng.unit() < *late => {
                        return Value::Int(range(rng, start.0.min(now), now));
                    }
                    Some(now) => match snap {
                        Some((w, p)) if rng.unit() < *p => {
                            // The first multiple of w with one before it still
                            // a legal step, then -1, 0 or +1.
                            let floor = now + step.0 + 1;
                            let edge = (floor + w - 1).div_euclid(*w) * w;
                            edge + range(rng, -1, 1)
                        }
                        _ => now + range(rng, step.0, step.1),
                    },
                };
                *clock = Some(now);
                Value::Int(now)
            }
            Domain::Ints(lo, hi) => Value::Int(lo + rng.below((hi - lo + 1) as u64) as i128),
            Domain::IntsEdges { lo, hi, edges, share } => {
                if rng.unit() < *share {
                    Value::Int(edges[rng.below(edges.len() as u64) as usize])
                } else {
                    Value::Int(range(rng, *lo, *hi))
                }
            }
            Domain::Floats(lo, hi) => Value::Float(lo + (hi - lo) * rng.unit()),
            Domain::Strings(s) => Value::Str(s[rng.below(s.len() as u64) as usize].clone()),
            Domain::Bools => Value::Bool(rng.below(2) == 1),
            Domain::List(inner, lo, hi) => {
                let n = lo + rng.below((hi - lo + 1) as u64) as usize;
                Value::List((0..n).map(|_| inner.draw(rng, &mut None)).collect())
            }
        }
    }
}

/// The share of boundary draws when `edge_share` / `snap_share` is left out.
pub const DEFAULT_BOUNDARY_SHARE: f64 = 0.3;

/// Items in one generated list, at most: a bound on what a typo in `len`
/// can make the harness allocate.
pub const MAX_LIST_LEN: usize = 1_000;

/// `[gate.generate]`: how many cases, how long, which operations how often.
#[derive(Clone, Debug)]
pub struct GenSpec {
    pub cases: usize,
    pub length: (usize, usize),
    pub seed: u64,
    pub weights: Vec<(String, u32)>,
}

/// The domain for `op`'s parameter: `"op.param"` wins over `"param"`.
pub fn domain_for<'a>(domains: &'a BTreeMap<String, Domain>, op: &str, param: &str) -> Option<&'a Domain> {
    domain_key_for(domains, op, param).map(|(_, d)| d)
}

/// Like [`domain_for`], with the key the domain was found under.
pub fn domain_key_for<'a>(
    domains: &'a BTreeMap<String, Domain>,
    op: &str,
    param: &str,
) -> Option<(&'a str, &'a Domain)> {
    domains
        .get_key_value(&format!("{op}.{param}"))
        .or_else(|| domains.get_key_value(param))
        .map(|(k, d)| (k.as_str(), d))
}

/// A probability under `key`, [`DEFAULT_BOUNDARY_SHARE`] when absent.
fn share(t: &toml::Table, key: &str) -> Result<f64, String> {
    match t.get(key) {
        None => Ok(DEFAULT_BOUNDARY_SHARE),
        Some(v) => v
            .as_float()
            .filter(|p| (0.0..=1.0).contains(p))
            .ok_or_else(|| format!("`{key}` must be a probability from 0.0 to 1.0")),
    }
}

/// `[low, high]` under `key`.
fn pair(t: &toml::Table, key: &str) -> Result<[toml::Value; 2], String> {
    match t.get(key).and_then(|v| v.as_array()) {
        Some(a) if a.len() == 2 => Ok([a[0].clone(), a[1].clone()]),
        _ => Err(format!("`{key}` must be [low, high]")),
    }
}

/// `{ ints = [lo, hi] }`, with `edges` and `edge_share` if given.
fn ints(t: &toml::Table) -> Result<Domain, String> {
    let [lo, hi] = pair(t, "ints")?;
    let (Some(lo), Some(hi)) = (lo.as_integer(), hi.as_integer()) else {
        return Err("`ints` bounds must be integers".into());
    };
    if lo > hi {
        return Err("`ints` needs low <= high".into());
    }
    let Some(edges) = t.get("edges") else { return Ok(Domain::Ints(lo as i128, hi as i128)) };
    let edges: Option<Vec<i64>> = edges.as_array().and_then(|a| a.iter().map(|v| v.as_integer()).collect());
    let edges = edges.filter(|e| !e.is_empty()).ok_or("`edges` must be a non-empty array of integers")?;
    if let Some(e) = edges.iter().find(|e| !(lo..=hi).contains(*e)) {
        return Err(format!("edge {e} is outside `ints` [{lo}, {hi}]"));
    }
    Ok(Domain::IntsEdges {
        lo: lo as i128,
        hi: hi as i128,
        edges: edges.into_iter().map(i128::from).collect(),
        share: share(t, "edge_share")?,
    })
}

/// `{ clock = [lo, hi] }`: a step, with `start`, `late` and `snap`.
fn clock(t: &toml::Table) -> Result<Domain, String> {
    let ints = |key: &str| -> Result<(i128, i128), String> {
        let [lo, hi] = pair(t, key)?;
        match (lo.as_integer(), hi.as_integer()) {
            (Some(lo), Some(hi)) if 0 <= lo && lo <= hi => Ok((lo as i128, hi as i128)),
            _ => Err(format!("`{key}` must be [low, high] with 0 <= low <= high")),
        }
    };
    let step = ints("clock")?;
    let start = if t.contains_key("start") { ints("start")? } else { (0, 0) };
    let late = match t.get("late") {
        None => 0.0,
        Some(v) => {
            v.as_float().filter(|p| (0.0..=1.0).contains(p)).ok_or("`late` must be a probability from 0.0 to 1.0")?
        }
    };
    let snap = match t.get("snap") {
        None => None,
        Some(v) => {
            let w = v.as_integer().filter(|w| *w >= 1).ok_or("`snap` must be an integer >= 1")?;
            Some((w as i128, share(t, "snap_share")?))
        }
    };
    Ok(Domain::Clock { step, start, late, snap })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_lengths_are_bounded() {
        let domain = |text: &str| Domain::from_toml(&text.parse::<toml::Table>().unwrap()["d"]);
        assert!(domain("d = { list = { bools = true }, len = [0, 1000] }").is_ok());
        let err = domain("d = { list = { bools = true }, len = [0, 4000000000] }").err().unwrap();
        assert!(err.contains("at most 1000 items"), "{err}");
    }

    fn parse(text: &str) -> Result<Domain, String> {
        Domain::from_toml(&text.parse::<toml::Table>().unwrap()["d"])
    }

    fn int(v: Value) -> i128 {
        match v {
            Value::Int(i) => i,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn domains_without_the_new_keys_draw_as_before() {
        // The draws of plain `ints` and `clock`, written out as they were
        // before edges and snaps: an old printed seed must replay the same.
        let ints = parse("d = { ints = [3, 120] }").unwrap();
        assert_eq!(ints, Domain::Ints(3, 120));
        let (mut a, mut b) = (Rng::new(11), Rng::new(11));
        for _ in 0..300 {
            assert_eq!(int(ints.draw(&mut a, &mut None)), 3 + b.below(118) as i128);
        }
        let clock = parse("d = { clock = [2, 9], start = [5, 40], late = 0.25 }").unwrap();
        let (mut a, mut b) = (Rng::new(12), Rng::new(12));
        let (mut c, mut now) = (None, None::<i128>);
        for _ in 0..300 {
            let expected = match now {
                None => 5 + b.below(36) as i128,
                Some(n) if b.unit() < 0.25 => {
                    let lo = 5.min(n);
                    let t = lo + b.below((n - lo + 1) as u64) as i128;
                    assert_eq!(int(clock.draw(&mut a, &mut c)), t);
                    continue;
                }
                Some(n) => n + 2 + b.below(8) as i128,
            };
            now = Some(expected);
            assert_eq!(int(clock.draw(&mut a, &mut c)), expected);
        }
    }

    #[test]
    fn edges_are_drawn_at_their_share_and_the_rest_uniformly() {
        let d = parse("d = { ints = [0, 120], edges = [0, 60, 120], edge_share = 0.5 }").unwrap();
        assert!(d.check(&"u64".parse().unwrap()).is_ok());
        let mut r = Rng::new(4);
        let draws: Vec<i128> = (0..2000).map(|_| int(d.draw(&mut r, &mut None))).collect();
        assert!(draws.iter().all(|v| (0..=120).contains(v)));
        let on_edges = draws.iter().filter(|v| [0, 60, 120].contains(*v)).count();
        // 50 % by the share, plus the uniform half's 3 in 121.
        assert!((900..=1150).contains(&on_edges), "{on_edges} of 2000 on edges");
        assert!(draws.iter().any(|v| ![0, 60, 120].contains(v)));
        // Left out, the share is the default.
        match parse("d = { ints = [0, 9], edges = [9] }").unwrap() {
            Domain::IntsEdges { share, .. } => assert_eq!(share, DEFAULT_BOUNDARY_SHARE),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_snapped_clock_lands_on_multiples_of_its_window_and_one_either_side() {
        let d = parse("d = { clock = [1, 200], start = [0, 0], snap = 60, snap_share = 0.4 }").unwrap();
        let mut r = Rng::new(9);
        let mut clock = None;
        let mut prev = int(d.draw(&mut r, &mut clock));
        let mut offsets = [0usize; 3];
        for _ in 0..3000 {
            let t = int(d.draw(&mut r, &mut clock));
            assert!(t > prev, "{prev} -> {t}: a clock without `late` moves forward");
            assert!(t - prev <= 200 + 61, "{prev} -> {t}");
            match t.rem_euclid(60) {
                59 => offsets[0] += 1,
                0 => offsets[1] += 1,
                1 => offsets[2] += 1,
                _ => {}
            }
            prev = t;
        }
        // 40 % snapped (about 400 each side), plus the uniform steps' share.
        assert!(offsets.iter().all(|n| (300..=600).contains(n)), "{offsets:?}");
    }

    #[test]
    fn boundary_keys_are_validated() {
        let err = |text: &str| parse(text).err().unwrap_or_else(|| panic!("{text} parsed"));
        assert!(err("d = { ints = [0, 9], edges = [10] }").contains("edge 10 is outside `ints` [0, 9]"));
        assert!(err("d = { ints = [0, 9], edges = [] }").contains("non-empty array of integers"));
        assert!(err("d = { ints = [0, 9], edges = [\"a\"] }").contains("non-empty array of integers"));
        assert!(err("d = { ints = [0, 9], edge_share = 0.2 }").contains("`edge_share` needs `edges`"));
        assert!(
            err("d = { ints = [0, 9], edges = [1], edge_share = 2.0 }").contains("`edge_share` must be a probability")
        );
        assert!(err("d = { strings = [\"a\"], edges = [1] }").contains("`edges` belongs to an `ints` domain only"));
        assert!(err("d = { ints = [0, 9], snap = 5 }").contains("`snap` belongs to a `clock` domain only"));
        assert!(err("d = { clock = [0, 9], snap = 0 }").contains("`snap` must be an integer >= 1"));
        assert!(err("d = { clock = [0, 9], snap_share = 0.5 }").contains("`snap_share` needs `snap`"));
    }
}
