//! Generated cases: seeded random operation sequences.
//!
//! Only the operations are generated here; their expected results come from
//! running the problem's reference solution (see `judge`). The generator is
//! a SplitMix64 written out in full so that a printed seed replays the same
//! case on any machine and any version of any crate.

use harness_contract::Value;

use crate::problem::{Problem, Signature, domain_key_for};
use crate::script::Call;
use crate::ty::Ty;

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

/// `[gate.generate]`: how many cases, how long, which operations how often.
#[derive(Clone, Debug)]
pub struct GenSpec {
    pub cases: usize,
    pub length: (usize, usize),
    pub seed: u64,
    pub weights: Vec<(String, u32)>,
}

/// SplitMix64: tiny, fast, and fixed forever.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), by rejection so there is no modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }

    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The seed of case `index` of `gate`'s generator: printed with every
/// generated failure, and enough (with the problem) to rebuild the case.
pub fn case_seed(base: u64, gate: usize, index: usize) -> u64 {
    let mut r = Rng::new(base ^ ((gate as u64) << 32) ^ index as u64);
    r.next_u64()
}

/// The operations of one generated case, constructor first.
pub fn generate(problem: &Problem, spec: &GenSpec, seed: u64) -> Vec<Call> {
    let sig: &Signature = &problem.signature;
    let mut rng = Rng::new(seed);
    let (lo, hi) = spec.length;
    let len = lo + rng.below((hi - lo + 1) as u64) as usize;
    // The running value of each clock domain, by its key in the problem.
    let mut clocks: std::collections::HashMap<String, Option<i128>> = std::collections::HashMap::new();
    let mut draw_args = |rng: &mut Rng, op: &str, params: &[(String, Ty)]| -> Vec<Value> {
        params
            .iter()
            .map(|(name, _)| {
                let (key, domain) = domain_key_for(&problem.domains, op, name)
                    .expect("validated at load: every weighted op has domains");
                domain.draw(rng, clocks.entry(key.to_string()).or_default())
            })
            .collect()
    };
    let mut calls = Vec::with_capacity(len + 1);
    calls.push(Call { op: "new".into(), args: draw_args(&mut rng, "new", &sig.ctor) });
    let total: u64 = spec.weights.iter().map(|(_, w)| *w as u64).sum();
    for _ in 0..len {
        let mut pick = rng.below(total);
        let op = spec
            .weights
            .iter()
            .find(|(_, w)| {
                if pick < *w as u64 {
                    true
                } else {
                    pick -= *w as u64;
                    false
                }
            })
            .map(|(op, _)| op.as_str())
            .expect("pick < total");
        let params = &sig.ops[op].params;
        calls.push(Call { op: op.to_string(), args: draw_args(&mut rng, op, params) });
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_is_stable() {
        // Fixed outputs: changing the generator would silently change every
        // generated case and every printed seed.
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = Rng::new(7);
        let mut seen = [false; 5];
        for _ in 0..200 {
            let x = r.below(5) as usize;
            seen[x] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn a_clock_moves_forward_with_occasional_late_arrivals() {
        let v = toml::from_str::<toml::Value>("d = { clock = [1, 5], start = [100, 100], late = 0.2 }").unwrap();
        let d = Domain::from_toml(&v["d"]).unwrap();
        assert!(d.check(&"u64".parse().unwrap()).is_ok());
        let mut r = Rng::new(3);
        let mut clock = None;
        let mut latest = 0;
        let (mut late, mut forward) = (0, 0);
        for i in 0..400 {
            let Value::Int(t) = d.draw(&mut r, &mut clock) else { panic!() };
            if i == 0 {
                assert_eq!(t, 100);
            } else if t <= latest {
                late += 1;
                assert!(t >= 100);
            } else {
                forward += 1;
                assert!((1..=5).contains(&(t - latest)), "a step of {}", t - latest);
            }
            latest = latest.max(t);
        }
        assert!(late > 40 && forward > 250, "late {late}, forward {forward}");
        assert!(Domain::from_toml(&toml::from_str::<toml::Value>("d = { clock = [5, 1] }").unwrap()["d"]).is_err());
    }

    #[test]
    fn domains_parse_and_check() {
        let d = Domain::from_toml(
            &toml::from_str::<toml::Value>("d = { list = { strings = [\"a\"] }, len = [0, 3] }").unwrap()["d"],
        )
        .unwrap();
        assert!(d.check(&"list<str>".parse().unwrap()).is_ok());
        assert!(d.check(&"str".parse().unwrap()).is_err());
        let ints = Domain::Ints(-1, 3);
        assert!(ints.check(&"u64".parse().unwrap()).is_err());
        assert!(ints.check(&"i64".parse().unwrap()).is_ok());
        let mut r = Rng::new(1);
        for _ in 0..50 {
            match d.draw(&mut r, &mut None) {
                Value::List(items) => assert!(items.len() <= 3),
                other => panic!("{other:?}"),
            }
        }
    }
}
