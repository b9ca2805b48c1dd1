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
    Clock { step: (i128, i128), start: (i128, i128), late: f64 },
}

impl Domain {
    pub fn from_toml(v: &toml::Value) -> Result<Domain, String> {
        let t = v.as_table().ok_or("a domain is a table, e.g. { ints = [0, 9] }")?;
        let pair = |key: &str| -> Result<[toml::Value; 2], String> {
            match t.get(key).and_then(|v| v.as_array()) {
                Some(a) if a.len() == 2 => Ok([a[0].clone(), a[1].clone()]),
                _ => Err(format!("`{key}` must be [low, high]")),
            }
        };
        if t.contains_key("ints") {
            let [lo, hi] = pair("ints")?;
            let (Some(lo), Some(hi)) = (lo.as_integer(), hi.as_integer()) else {
                return Err("`ints` bounds must be integers".into());
            };
            if lo > hi {
                return Err("`ints` needs low <= high".into());
            }
            Ok(Domain::Ints(lo as i128, hi as i128))
        } else if t.contains_key("floats") {
            let [lo, hi] = pair("floats")?;
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
            let ints = |key: &str| -> Result<(i128, i128), String> {
                let [lo, hi] = pair(key)?;
                match (lo.as_integer(), hi.as_integer()) {
                    (Some(lo), Some(hi)) if 0 <= lo && lo <= hi => Ok((lo as i128, hi as i128)),
                    _ => Err(format!("`{key}` must be [low, high] with 0 <= low <= high")),
                }
            };
            let step = ints("clock")?;
            let start = if t.contains_key("start") { ints("start")? } else { (0, 0) };
            let late = match t.get("late") {
                None => 0.0,
                Some(v) => v
                    .as_float()
                    .filter(|p| (0.0..=1.0).contains(p))
                    .ok_or("`late` must be a probability from 0.0 to 1.0")?,
            };
            Ok(Domain::Clock { step, start, late })
        } else if let Some(inner) = t.get("list") {
            let [lo, hi] = pair("len")?;
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
            (Domain::Ints(lo, hi), Ty::Int(_)) => {
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
            Domain::Ints(..) => "ints",
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
            Domain::Clock { step, start, late } => {
                let now = match *clock {
                    None => range(rng, start.0, start.1),
                    Some(now) if *late > 0.0 && rng.unit() < *late => {
                        return Value::Int(range(rng, start.0.min(now), now));
                    }
                    Some(now) => now + range(rng, step.0, step.1),
                };
                *clock = Some(now);
                Value::Int(now)
            }
            Domain::Ints(lo, hi) => Value::Int(lo + rng.below((hi - lo + 1) as u64) as i128),
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
}
