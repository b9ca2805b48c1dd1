//! Running a gate's scale checks and deciding them: does the candidate's
//! cost grow as the statement claims?
//!
//! For each size `n` of a check, the reference and then the candidate build
//! the same state (the check's `setup` at `n`, the same seeded calls) in a
//! measuring worker of their own (`judge::measure`): the two are
//! interleaved size by size, so a change in the machine's load between
//! sizes hits both. A time check records the minimum CPU time per measured
//! call over several repetitions; a memory check the live heap bytes the
//! state holds, counted exactly by the library's allocator.
//!
//! The decision is relative: the candidate's growth (its cost at the
//! largest size over its cost at the smallest) divided by the reference's
//! growth. A correct solution of another design has another constant
//! factor, not another growth, so its ratio stays near 1; a linear scan
//! where the claim is `log n` shows ×30 and more over a 64× span. The
//! threshold sits far from both ([`TIME_LIMIT_RATIO`], [`MEMORY_LIMIT_RATIO`]),
//! and a time failure is measured a second time, at the two ends, before it
//! is reported: a false `too_slow` costs a candidate more than a missed one.
//! A size that is already far over the reference's curve ends the check
//! early, and a candidate worker that runs far longer than the reference's
//! at the same size is stopped, so a quadratic solution is judged in about
//! a second.

use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use harness_contract::wire::{self, Outcome};
use serde::Serialize;

use crate::judge::channel::frame;
use crate::judge::measure::{self, Stats};
use crate::judge::sandbox::{Target, signal_name};
use crate::judge::verdict::Verdict;
use crate::problem::scale::{Kind, ScaleCheck};
use crate::problem::script::Call;
use crate::problem::signature::Signature;

/// A time check fails when the candidate's per-call cost grows more than
/// this many times as much as the reference's between the smallest and
/// largest size. Measured on the shipped problems (see ARCHITECTURE.md):
/// correct designs stay under ×2, the cost mistakes show ×10 and more.
pub const TIME_LIMIT_RATIO: f64 = 5.0;
/// At an intermediate size, a ratio this far over ends the check early,
/// and a failure this far over needs no second measurement.
pub const TIME_FAR_RATIO: f64 = 10.0;
/// A memory check fails when the candidate's live heap grows more than
/// this many times as much as the reference's. Heap counts are exact, so
/// this only has to absorb design differences (a hash table's doubling).
pub const MEMORY_LIMIT_RATIO: f64 = 4.0;
/// Heap sizes are compared with this many bytes added to both, so a tiny
/// baseline (an empty map) does not turn a few bytes into a large ratio.
pub const MEMORY_FLOOR: f64 = 4096.0;
/// Timed repetitions of the measured calls (after one warm-up).
pub const REPS: u32 = 5;
/// A candidate worker is stopped after this many times the reference's
/// wall time at the same size (and at least [`MIN_CANDIDATE_LIMIT`]).
pub const CANDIDATE_TIME_FACTOR: u32 = 25;
pub const MIN_CANDIDATE_LIMIT: Duration = Duration::from_millis(1500);
/// The reference's own limit per size: beyond it the check is broken.
pub const REFERENCE_LIMIT: Duration = Duration::from_secs(20);
/// The quick pass ([`judge_check`]) passes a time check only this far
/// under [`TIME_LIMIT_RATIO`]; between the two the full measurement decides.
pub const QUICK_MARGIN: f64 = 0.8;
/// In the quick pass a candidate worker gets this many times the
/// reference's wall time at the same size, plus [`QUICK_SLACK`]; past it
/// the full measurement decides.
pub const QUICK_TIME_FACTOR: u32 = 8;
pub const QUICK_SLACK: Duration = Duration::from_millis(150);
/// Measurements of each reference point when warming a curve.
const WARM_RUNS: usize = 2;
/// Encoded requests kept for a session, in all (larger ones are rebuilt).
const KEPT_REQUEST_BYTES: usize = 64 << 20;

/// One size's measurements: cost per call in nanoseconds (time) or live
/// bytes (memory).
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Point {
    pub n: u64,
    pub yours: Option<f64>,
    pub reference: f64,
}

/// How one scale check went.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct ScaleResult {
    pub name: String,
    /// `time` or `memory`.
    pub kind: String,
    /// What the statement asks ("O(log w)").
    pub says: String,
    pub verdict: Verdict,
    /// One line: what was measured against what was asked.
    pub message: String,
    /// `ns/op` or `bytes`.
    pub unit: String,
    pub points: Vec<Point>,
    /// Cost at the largest size measured over the smallest, yours and the
    /// reference's.
    pub yours_growth: Option<f64>,
    pub reference_growth: Option<f64>,
    pub elapsed_ms: u64,
}

impl ScaleResult {
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Pass
    }
}

/// A digest of a library's bytes: scale results are reused while it holds.
/// A library that cannot be read gets a fresh digest (no reuse).
pub fn digest(lib: &std::path::Path) -> u64 {
    match std::fs::read(lib) {
        Ok(bytes) => {
            use std::hash::Hasher;
            let mut h = std::collections::hash_map::DefaultHasher::new();
            h.write(&bytes);
            h.finish()
        }
        Err(_) => std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64),
    }
}

/// What one measuring worker produced.
enum Measured {
    Stats(Stats, Duration),
    /// Stopped at the wall-clock limit.
    Stopped(Duration),
    /// An operation did not return, or the process died: verdict, message.
    Failed(Verdict, String),
}

/// The reference's measurements and the encoded requests of each check and
/// size, kept for as long as one reference library judges (a session).
///
/// The reference's curve cannot change while its library does not, so a
/// check's quick pass ([`judge_check`]) measures only the candidate. The
/// curve is used only to *pass* a check: a failure is always decided by
/// the full measurement, with the reference measured again alongside.
#[derive(Default)]
pub struct Curves {
    points: std::sync::Mutex<std::collections::HashMap<(u64, u64), (f64, Duration)>>,
    /// Bytes kept, and the requests by (check, size).
    requests: std::sync::Mutex<(usize, KeptRequests)>,
}

type KeptRequests = std::collections::HashMap<(u64, u64), std::sync::Arc<Requests>>;

impl Curves {
    /// How many reference points are known.
    pub fn len(&self) -> usize {
        self.points.lock().map_or(0, |p| p.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn point(&self, key: (u64, u64)) -> Option<(f64, Duration)> {
        self.points.lock().ok()?.get(&key).copied()
    }

    /// Keeps the lowest cost and wall time measured at a point: load only
    /// ever adds to a measurement, so the lowest is the closest to the
    /// curve itself.
    fn keep_point(&self, key: (u64, u64), point: (f64, Duration)) {
        if let Ok(mut p) = self.points.lock() {
            let kept = p.entry(key).or_insert(point);
            *kept = (kept.0.min(point.0), kept.1.min(point.1));
        }
    }

    fn requests(&self, check: &ScaleCheck, sig: &Signature, n: u64) -> Result<std::sync::Arc<Requests>> {
        let key = (check_key(check), n);
        if let Some(r) = self.requests.lock().ok().and_then(|r| r.1.get(&key).cloned()) {
            return Ok(r);
        }
        let req = std::sync::Arc::new(requests(check, sig, n)?);
        if let Ok(mut kept) = self.requests.lock() {
            let size = req.bytes();
            if kept.0 + size <= KEPT_REQUEST_BYTES {
                kept.0 += size;
                kept.1.insert(key, req.clone());
            }
        }
        Ok(req)
    }

    /// Measures the reference at both ends of each check that it does not
    /// know yet (what a session does while the candidate reads); stops
    /// between two measurements once `cancel` is set.
    pub fn warm(
        &self,
        checks: &[&ScaleCheck],
        sig: &Signature,
        reference: &Target,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<()> {
        for check in checks {
            for n in ends(check) {
                if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                    return Ok(());
                }
                let key = (check_key(check), n);
                if self.point(key).is_none() {
                    let req = self.requests(check, sig, n)?;
                    // Twice, the lower kept: a moment's load at one end
                    // would bend the curve every later pass compares with.
                    for _ in 0..WARM_RUNS {
                        if let Measured::Stats(s, wall) = measure_one(reference, &req, REFERENCE_LIMIT)? {
                            self.keep_point(key, (cost(check.kind, &s, req.per_batch), wall));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// A check's identity for [`Curves`]: everything that decides what it
/// measures.
fn check_key(check: &ScaleCheck) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{check:?}").hash(&mut h);
    h.finish()
}

/// Expanded and encoded requests for one size, shared by both libraries.
struct Requests {
    setup: Vec<Vec<u8>>,
    /// Batches of measured calls: a warm-up and [`REPS`] timed ones for a
    /// time check, each drawn with its own seed; one for a memory check.
    batches: Vec<Vec<Vec<u8>>>,
    /// Calls in a batch.
    per_batch: usize,
    /// Every call in request order, to name a failing one.
    calls: Vec<Call>,
}

fn requests(check: &ScaleCheck, sig: &Signature, n: u64) -> Result<Requests> {
    let seed = check.name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    let bad = |(_, m): (usize, String)| anyhow!("scale check `{}` at n = {n}: {m}", check.name);
    let setup = check.setup.expand_setup(n, seed, sig).map_err(bad)?;
    let enc = |calls: &[Call]| calls.iter().map(|c| wire::encode_request(&c.op, &c.args)).collect::<Vec<_>>();
    let mut calls = setup.clone();
    let mut batches = Vec::new();
    let mut per_batch = 0;
    if let Some(m) = &check.measure {
        let count = if check.kind == Kind::Memory { 1 } else { 1 + REPS as u64 };
        for b in 0..count {
            let batch = m.expand_batch(n, b, seed.wrapping_add(1 + b), sig).map_err(bad)?;
            per_batch = batch.len();
            batches.push(enc(&batch));
            calls.extend(batch);
        }
    }
    Ok(Requests { setup: enc(&setup), batches, per_batch, calls })
}

impl Requests {
    fn bytes(&self) -> usize {
        let list = |l: &[Vec<u8>]| l.iter().map(|r| r.len() + 24).sum::<usize>();
        list(&self.setup) + self.batches.iter().map(|b| list(b)).sum::<usize>() + self.calls.len() * 64
    }
}

/// Decides one check as a session does: first a quick pass, the candidate
/// at the smallest and largest size against the reference's curve from
/// `curves` (measured and kept there when it is not known yet). It can
/// only pass a check, and only well inside the limit. Anything else (over
/// [`QUICK_MARGIN`] of the limit, a stop, a failure) goes to the full
/// measurement ([`run_check_cancellable`]): every size, the reference
/// measured again alongside, a confirmation before a time failure. So a
/// failure is never decided on a kept curve, and a pass costs the
/// candidate's two ends only. `None` when `cancel` was set.
pub fn judge_check(
    check: &ScaleCheck,
    sig: &Signature,
    reference: &Target,
    candidate: &Target,
    curves: &Curves,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<Option<ScaleResult>> {
    if let Some(r) = quick_check(check, sig, reference, candidate, curves, cancel)? {
        return Ok(Some(r));
    }
    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(None);
    }
    full_check(check, sig, reference, candidate, curves, cancel)
}

/// [`judge_check`]'s quick pass alone: `Some` only for a pass; `None` when
/// it was not clearly one (then [`full_check`] decides) or cancelled.
pub fn quick_check(
    check: &ScaleCheck,
    sig: &Signature,
    reference: &Target,
    candidate: &Target,
    curves: &Curves,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<Option<ScaleResult>> {
    let started = Instant::now();
    let mut points = Vec::new();
    for n in ends(check) {
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(None);
        }
        match quick_point(check, sig, reference, candidate, curves, n)? {
            Some(p) => points.push(p),
            None => return Ok(None),
        }
    }
    Ok(quick_decide(check, points, started.elapsed()))
}

/// One end of a quick pass, the part that can run beside others: the
/// candidate measured at `n` (one of [`ends`]), against the reference's
/// kept point there (measured and kept first when it is not known).
/// `None` when the candidate did not finish within its quick limit or
/// failed: the full measurement names what is wrong.
pub fn quick_point(
    check: &ScaleCheck,
    sig: &Signature,
    reference: &Target,
    candidate: &Target,
    curves: &Curves,
    n: u64,
) -> Result<Option<Point>> {
    let req = curves.requests(check, sig, n)?;
    let key = (check_key(check), n);
    let (r, r_wall) = match curves.point(key) {
        Some(p) => p,
        None => match measure_one(reference, &req, REFERENCE_LIMIT)? {
            Measured::Stats(s, wall) => {
                let p = (cost(check.kind, &s, req.per_batch), wall);
                curves.keep_point(key, p);
                p
            }
            _ => return Ok(None),
        },
    };
    let limit = r_wall * QUICK_TIME_FACTOR + QUICK_SLACK;
    Ok(match measure_one(candidate, &req, limit)? {
        Measured::Stats(s, _) => Some(Point { n, yours: Some(cost(check.kind, &s, req.per_batch)), reference: r }),
        _ => None,
    })
}

/// The two ends' points of a quick pass decide a pass, well inside the
/// limit, or nothing (`None`: the full measurement decides).
pub fn quick_decide(check: &ScaleCheck, points: Vec<Point>, elapsed: Duration) -> Option<ScaleResult> {
    let limit = match check.kind {
        Kind::Time => TIME_LIMIT_RATIO * QUICK_MARGIN,
        // Heap counts are exact, the kept curve's as much as a new one's.
        Kind::Memory => MEMORY_LIMIT_RATIO,
    };
    if points.len() != 2 || !relative(check.kind, &points).is_some_and(|r| r <= limit) {
        return None;
    }
    let mut result = scale_result(check, Verdict::Pass, message(check, &points, false), points, Instant::now());
    result.elapsed_ms = elapsed.as_millis() as u64;
    Some(result)
}

/// What a quick pass's end at `n` is expected to cost, to start the
/// longest first: the reference's kept wall time there, or, when it is not
/// known yet (the reference is measured too), more than any known one.
pub fn quick_estimate(check: &ScaleCheck, curves: &Curves, n: u64) -> Duration {
    match curves.point((check_key(check), n)) {
        Some((_, wall)) => wall,
        None => REFERENCE_LIMIT + Duration::from_micros(n),
    }
}

/// The smallest and the largest size: the two a quick pass compares.
pub fn ends(check: &ScaleCheck) -> [u64; 2] {
    [check.sizes[0], check.sizes[check.sizes.len() - 1]]
}

/// [`judge_check`]'s full measurement alone ([`run_check_cancellable`],
/// with the requests `curves` keeps).
pub fn full_check(
    check: &ScaleCheck,
    sig: &Signature,
    reference: &Target,
    candidate: &Target,
    curves: &Curves,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<Option<ScaleResult>> {
    run_check_with(check, sig, reference, candidate, Some(curves), cancel)
}

/// Runs one check against the candidate, with the reference alongside.
/// `Err` is the problem's or the machine's fault (the reference failed).
pub fn run_check(check: &ScaleCheck, sig: &Signature, reference: &Target, candidate: &Target) -> Result<ScaleResult> {
    let never = std::sync::atomic::AtomicBool::new(false);
    Ok(run_check_cancellable(check, sig, reference, candidate, &never)?.expect("never cancelled"))
}

/// Like [`run_check`]; `None` when `cancel` was set (it is looked at
/// before each measurement, so a newer save waits for one at most).
pub fn run_check_cancellable(
    check: &ScaleCheck,
    sig: &Signature,
    reference: &Target,
    candidate: &Target,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<Option<ScaleResult>> {
    run_check_with(check, sig, reference, candidate, None, cancel)
}

/// The full measurement; `curves` only lends its kept requests (the
/// reference is measured here, never taken from a curve).
fn run_check_with(
    check: &ScaleCheck,
    sig: &Signature,
    reference: &Target,
    candidate: &Target,
    curves: Option<&Curves>,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<Option<ScaleResult>> {
    let cancelled = || cancel.load(std::sync::atomic::Ordering::Relaxed);
    let started = Instant::now();
    let mut points: Vec<Point> = Vec::new();
    let result =
        |verdict: Verdict, message: String, points: Vec<Point>| scale_result(check, verdict, message, points, started);
    let mut per_size = Vec::new();
    for &n in &check.sizes {
        if cancelled() {
            return Ok(None);
        }
        let req = match curves {
            Some(c) => c.requests(check, sig, n)?,
            None => std::sync::Arc::new(requests(check, sig, n)?),
        };
        let (r, r_wall) = reference_point(check, reference, &req, n, curves)?;
        let limit = (r_wall * CANDIDATE_TIME_FACTOR).max(MIN_CANDIDATE_LIMIT);
        match measure_one(candidate, &req, limit)? {
            Measured::Stats(s, _) => {
                points.push(Point { n, yours: Some(cost(check.kind, &s, req.per_batch)), reference: r });
            }
            Measured::Stopped(wall) => {
                points.push(Point { n, yours: None, reference: r });
                let message = format!(
                    "{}: at n = {} yours was stopped after {:.1} s, over {CANDIDATE_TIME_FACTOR}× the reference's {:.3} s; \
                     the statement asks {}",
                    check.name,
                    size_text(n),
                    wall.as_secs_f64(),
                    r_wall.as_secs_f64(),
                    check.says
                );
                return Ok(Some(result(failure(check.kind), message, points)));
            }
            Measured::Failed(v, m) => {
                points.push(Point { n, yours: None, reference: r });
                return Ok(Some(result(v, format!("{}: at n = {}: {m}", check.name, size_text(n)), points)));
            }
        }
        per_size.push(req);
        // Heap counts are exact, so a memory check may stop as soon as it
        // is over its limit; a time check only when far over.
        let stop_at = match check.kind {
            Kind::Time => TIME_FAR_RATIO,
            Kind::Memory => MEMORY_LIMIT_RATIO,
        };
        if points.len() > 1
            && points.len() < check.sizes.len()
            && relative(check.kind, &points).is_some_and(|r| r > stop_at)
        {
            let message = message(check, &points, true);
            return Ok(Some(result(Verdict::from_kind(check.kind), message, points)));
        }
    }
    let first = relative(check.kind, &points).unwrap_or(1.0);
    let limit = match check.kind {
        Kind::Time => TIME_LIMIT_RATIO,
        Kind::Memory => MEMORY_LIMIT_RATIO,
    };
    // A time failure is confirmed at both ends first; the lower figure
    // decides.
    let mut rel = first;
    if rel > limit && rel < TIME_FAR_RATIO * 2.0 && check.kind == Kind::Time {
        let Some(again) = confirm(check, reference, candidate, &per_size, &points, &cancelled)? else {
            return Ok(None);
        };
        rel = rel.min(again);
    }
    let mut message = message(check, &points, false);
    if first > limit && rel <= limit {
        // The second run decided: say so, or the message would show the
        // first run's growth on a pass.
        message.push_str(&format!(
            "; measured again at both ends: ×{} the reference's growth, within the ×{limit} limit",
            times_text(rel)
        ));
    }
    let verdict = if rel > limit { Verdict::from_kind(check.kind) } else { Verdict::Pass };
    Ok(Some(result(verdict, message, points)))
}

/// The reference's cost at `n` and its wall time, kept in `curves` for
/// the session's quick passes. The reference failing is the problem's
/// bug, an error.
fn reference_point(
    check: &ScaleCheck,
    reference: &Target,
    req: &Requests,
    n: u64,
    curves: Option<&Curves>,
) -> Result<(f64, Duration)> {
    match measure_one(reference, req, REFERENCE_LIMIT)? {
        Measured::Stats(s, wall) => {
            let point = (cost(check.kind, &s, req.per_batch), wall);
            if let Some(c) = curves {
                c.keep_point((check_key(check), n), point);
            }
            Ok(point)
        }
        Measured::Stopped(_) => {
            bail!("the reference took over {REFERENCE_LIMIT:?} in scale check `{}` at n = {n}", check.name)
        }
        Measured::Failed(v, m) => bail!("the reference failed scale check `{}` at n = {n}: {v}: {m}", check.name),
    }
}

/// A time failure's confirmation: both ends measured again, interleaved,
/// the reference alongside. The growth relative to the reference's (or
/// infinity when the candidate did not finish), `None` when cancelled.
fn confirm(
    check: &ScaleCheck,
    reference: &Target,
    candidate: &Target,
    per_size: &[std::sync::Arc<Requests>],
    points: &[Point],
    cancelled: &dyn Fn() -> bool,
) -> Result<Option<f64>> {
    let mut again = Vec::new();
    for (req, p) in [(&per_size[0], &points[0]), (&per_size[per_size.len() - 1], &points[points.len() - 1])] {
        if cancelled() {
            return Ok(None);
        }
        let Measured::Stats(rs, r_wall) = measure_one(reference, req, REFERENCE_LIMIT)? else {
            bail!("the reference failed scale check `{}` on a second run", check.name)
        };
        let limit = (r_wall * CANDIDATE_TIME_FACTOR).max(MIN_CANDIDATE_LIMIT);
        let Measured::Stats(cs, _) = measure_one(candidate, req, limit)? else {
            return Ok(Some(f64::INFINITY));
        };
        again.push(Point {
            n: p.n,
            yours: Some(cost(check.kind, &cs, req.per_batch)),
            reference: cost(check.kind, &rs, req.per_batch),
        });
    }
    Ok(Some(relative(check.kind, &again).unwrap_or(f64::INFINITY)))
}

/// A check's result from its measured points.
fn scale_result(
    check: &ScaleCheck,
    verdict: Verdict,
    message: String,
    points: Vec<Point>,
    started: Instant,
) -> ScaleResult {
    let (yours_growth, reference_growth) = growths(check.kind, &points);
    ScaleResult {
        name: check.name.clone(),
        kind: kind_name(check.kind).into(),
        says: check.says.clone(),
        verdict,
        message,
        unit: unit(check.kind).into(),
        points,
        yours_growth,
        reference_growth,
        elapsed_ms: started.elapsed().as_millis() as u64,
    }
}

fn failure(kind: Kind) -> Verdict {
    Verdict::from_kind(kind)
}

impl Verdict {
    /// The verdict of a failed scale check of this kind.
    pub fn from_kind(kind: Kind) -> Verdict {
        match kind {
            Kind::Time => Verdict::TooSlow,
            Kind::Memory => Verdict::UnboundedMemory,
        }
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Time => "time",
        Kind::Memory => "memory",
    }
}

fn unit(kind: Kind) -> &'static str {
    match kind {
        Kind::Time => "ns/op",
        Kind::Memory => "bytes",
    }
}

fn cost(kind: Kind, s: &Stats, measured_calls: usize) -> f64 {
    match kind {
        Kind::Time => s.reps_ns.iter().copied().min().unwrap_or(0) as f64 / measured_calls.max(1) as f64,
        Kind::Memory if measured_calls > 0 => s.measured_bytes as f64,
        Kind::Memory => s.live_bytes as f64,
    }
}

fn growth(kind: Kind, first: f64, last: f64) -> f64 {
    match kind {
        Kind::Time => last / first.max(1e-3),
        Kind::Memory => (last + MEMORY_FLOOR) / (first + MEMORY_FLOOR),
    }
}

/// Yours and the reference's growth from the first to the last point
/// measured for both.
fn growths(kind: Kind, points: &[Point]) -> (Option<f64>, Option<f64>) {
    let measured: Vec<&Point> = points.iter().filter(|p| p.yours.is_some()).collect();
    let (Some(first), Some(last)) = (measured.first(), measured.last()) else {
        return (None, None);
    };
    if measured.len() < 2 {
        return (None, None);
    }
    (
        Some(growth(kind, first.yours.unwrap_or(0.0), last.yours.unwrap_or(0.0))),
        Some(growth(kind, first.reference, last.reference)),
    )
}

fn relative(kind: Kind, points: &[Point]) -> Option<f64> {
    match growths(kind, points) {
        (Some(y), Some(r)) => Some(y / r.max(1e-9)),
        _ => None,
    }
}

/// `1k`, `64k`, `1.5M`, `300`.
pub fn size_text(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(100_000) {
        format!("{}M", n as f64 / 1e6)
    } else if n >= 1000 && n.is_multiple_of(1000) {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

fn exponent(growth: f64, span: f64) -> f64 {
    if span <= 1.0 { 0.0 } else { growth.max(1e-9).ln() / span.ln() }
}

/// `get_at on a key with n writes: yours grows ~n^1.0 per call (1k → 64k:
/// ×61), the reference ~n^0.1 (×1.4); the statement asks O(log w)`.
fn message(check: &ScaleCheck, points: &[Point], early: bool) -> String {
    let measured: Vec<&Point> = points.iter().filter(|p| p.yours.is_some()).collect();
    let (Some(first), Some(last)) = (measured.first(), measured.last()) else {
        return check.name.clone();
    };
    let span = last.n as f64 / first.n as f64;
    let (yg, rg) = growths(check.kind, points);
    let (yg, rg) = (yg.unwrap_or(1.0), rg.unwrap_or(1.0));
    let what = match (check.kind, &check.measure) {
        (Kind::Time, _) => "per call",
        (Kind::Memory, Some(_)) => "in the heap the measured calls add",
        (Kind::Memory, None) => "in live heap",
    };
    let ends = match check.kind {
        Kind::Time => String::new(),
        Kind::Memory => {
            format!(", {} → {}", bytes_text(first.yours.unwrap_or(0.0)), bytes_text(last.yours.unwrap_or(0.0)))
        }
    };
    let stop = if early { "; stopped early, already far over the reference's curve" } else { "" };
    format!(
        "{}: yours grows ~n^{:.1} {what} ({} → {}: ×{}{ends}), the reference ~n^{:.1} (×{}); the statement asks {}{stop}",
        check.name,
        exponent(yg, span),
        size_text(first.n),
        size_text(last.n),
        times_text(yg),
        exponent(rg, span),
        times_text(rg),
        check.says
    )
}

fn times_text(x: f64) -> String {
    if x >= 10.0 { format!("{x:.0}") } else { format!("{x:.1}") }
}

pub fn bytes_text(b: f64) -> String {
    if b >= 1024.0 * 1024.0 {
        format!("{:.1} MB", b / (1024.0 * 1024.0))
    } else if b >= 1024.0 {
        format!("{:.1} KB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

/// Spawns `harness __measure` on one library and one size.
fn measure_one(target: &Target, req: &Requests, limit: Duration) -> Result<Measured> {
    let ended = crate::judge::sandbox::drive(
        crate::judge::sandbox::exe()?,
        crate::judge::sandbox::Spawn {
            subcommand: "__measure",
            args: vec![
                target.lib.clone().into(),
                format!("{:016x}", target.schema_hash).into(),
                target.limits.memory_bytes.to_string().into(),
                target.limits.stack_bytes.to_string().into(),
                (limit.as_secs() + 2).to_string().into(),
            ],
            request: measure::encode_request(&req.setup, &req.batches),
            limit,
            cancel: None,
            // A handful of small frames; more is a candidate writing.
            frames_cap: 1 << 20,
            output_cap: 16 << 10,
        },
    )?;
    let wall = ended.wall;
    let output = String::from_utf8_lossy(&ended.output).into_owned();

    // The candidate runs in the writing process: the frames are hostile
    // input. The one order a measuring worker writes is `H`, then `T` and
    // `Z`, or one `F`; or a single `L`. Anything else is tampering.
    let tampered =
        |why: &str| Ok(Measured::Failed(Verdict::Tampered, format!("the result channel was written to: {why}")));
    let frames = match crate::judge::channel::split(&ended.frames) {
        Ok(frames) => frames,
        Err(crate::judge::channel::Broken::Tampered(why) | crate::judge::channel::Broken::TooLarge(why)) => {
            return tampered(&why);
        }
    };
    match frames.as_slice() {
        [] => {}
        [(frame::LOAD_ERROR, body)] => {
            return Ok(Measured::Failed(Verdict::Crash, String::from_utf8_lossy(body).into_owned()));
        }
        [(frame::HELLO, _), (frame::STATS, body), (frame::DONE, _)] => {
            return match Stats::decode(body) {
                Ok(stats) => Ok(Measured::Stats(stats, wall)),
                Err(e) => tampered(&format!("garbled measurements ({e})")),
            };
        }
        [(frame::HELLO, _), (frame::FAILED, body)] if body.len() >= 4 => {
            let index = u32::from_le_bytes(body[..4].try_into().unwrap()) as usize;
            let call = req.calls.get(index).map(|c| c.to_string()).unwrap_or_default();
            let Ok(outcome) = wire::decode_outcome(&mut wire::Reader::new(&body[4..])) else {
                return tampered("a garbled outcome");
            };
            return Ok(match outcome {
                Outcome::Panicked { message, location } => {
                    let at = if location.is_empty() { String::new() } else { format!(" at {location}") };
                    Measured::Failed(Verdict::Panic, format!("`{call}` panicked{at}: {message}"))
                }
                Outcome::NotImplemented { op } => {
                    Measured::Failed(Verdict::NotImplemented, format!("`{op}` is not implemented yet"))
                }
                Outcome::Rejected(why) => {
                    Measured::Failed(Verdict::WrongAnswer, format!("`{call}` was refused: {why}"))
                }
                Outcome::Returned(_) => Measured::Failed(Verdict::Tampered, "a failure report that is not one".into()),
            });
        }
        // A worker stopped or killed part way: judged by how it ended.
        [(frame::HELLO, _)] | [(frame::HELLO, _), (frame::STATS, _)] => {}
        _ => return tampered("frames out of order"),
    }
    if ended.timed_out {
        return Ok(Measured::Stopped(wall));
    }
    let status = ended.status;
    if status.code() == Some(crate::judge::channel::LOST_EXIT) {
        return tampered("the channel was closed or replaced");
    }
    Ok(Measured::Failed(
        match status.signal() {
            Some(6) if output.contains("has overflowed its stack") => Verdict::StackOverflow,
            Some(6) if output.contains("memory allocation of") => Verdict::MemoryLimit,
            Some(6) => Verdict::Abort,
            Some(9) => Verdict::MemoryLimit,
            Some(24) => Verdict::TooSlow,
            Some(_) => Verdict::Crash,
            None => Verdict::Exited,
        },
        match status.signal() {
            Some(sig) => format!("the process was killed by {} while measuring", signal_name(sig)),
            None => format!("the process exited ({}) while measuring", status.code().unwrap_or(-1)),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(v: &[(u64, f64, f64)]) -> Vec<Point> {
        v.iter().map(|&(n, y, r)| Point { n, yours: Some(y), reference: r }).collect()
    }

    #[test]
    fn growth_is_relative_to_the_reference() {
        let linear = pts(&[(1000, 10.0, 5.0), (64000, 640.0, 7.0)]);
        let rel = relative(Kind::Time, &linear).unwrap();
        assert!((rel - 64.0 / 1.4).abs() < 1e-9, "{rel}");
        let same = pts(&[(1000, 30.0, 5.0), (64000, 42.0, 7.0)]);
        assert!((relative(Kind::Time, &same).unwrap() - 1.0).abs() < 1e-9);
        // Memory: a floor keeps tiny baselines from inflating the ratio.
        let tiny = pts(&[(1000, 0.0, 0.0), (64000, 400.0, 0.0)]);
        assert!(relative(Kind::Memory, &tiny).unwrap() < 1.2);
    }

    fn time_check() -> ScaleCheck {
        crate::problem::scale::RawScale::validate(
            &toml::from_str(
                "name = 'ping'\nkind = 'time'\nclaim = '1'\nsays = 'O(1)'\n\
                 sizes = [1000, 8000, 64000]\nsetup = 'new()'\nmeasure = 'repeat 2 { ping() }'",
            )
            .unwrap(),
            &Signature::parse_for_tests(&[], &[("ping", "", "unit")], &[]),
            1,
            &Default::default(),
        )
        .unwrap()
    }

    #[test]
    fn a_quick_pass_only_passes_well_inside_the_limit() {
        let check = time_check();
        assert_eq!(ends(&check), [1000, 64000]);
        let now = Duration::ZERO;
        // ×3 against the reference: a pass, on the two ends.
        let pass = quick_decide(&check, pts(&[(1000, 10.0, 10.0), (64000, 30.0, 10.0)]), now).unwrap();
        assert_eq!(pass.verdict, Verdict::Pass);
        assert_eq!(pass.points.len(), 2);
        // ×4.5: under the limit (×5) but over the quick margin: undecided.
        assert!(quick_decide(&check, pts(&[(1000, 10.0, 10.0), (64000, 45.0, 10.0)]), now).is_none());
        // One end only (the other was stopped or failed): undecided.
        assert!(quick_decide(&check, pts(&[(1000, 10.0, 10.0)]), now).is_none());
    }

    #[test]
    fn the_message_names_growths_and_the_claim() {
        let check = crate::problem::scale::RawScale::validate(
            &toml::from_str(
                "name = 'get_at on a key with n writes'\nkind = 'time'\nclaim = 'log n'\nsays = 'O(log w)'\n\
                 sizes = [1000, 64000]\nsetup = 'new()'\nmeasure = 'new()'",
            )
            .unwrap(),
            &Signature::parse_for_tests(&[], &[], &[]),
            1,
            &Default::default(),
        );
        // `measure` may not construct: the entry is refused.
        assert!(check.is_err());
        let check = crate::problem::scale::RawScale::validate(
            &toml::from_str(
                "name = 'get_at on a key with n writes'\nkind = 'time'\nclaim = 'log n'\nsays = 'O(log w)'\n\
                 sizes = [1000, 64000]\nsetup = 'new()'\nmeasure = 'repeat 2 { ping() }'",
            )
            .unwrap(),
            &Signature::parse_for_tests(&[], &[("ping", "", "unit")], &[]),
            1,
            &Default::default(),
        )
        .unwrap();
        let m = message(&check, &pts(&[(1000, 10.0, 5.0), (64000, 610.0, 7.0)]), false);
        assert_eq!(
            m,
            "get_at on a key with n writes: yours grows ~n^1.0 per call (1k → 64k: ×61), \
             the reference ~n^0.1 (×1.4); the statement asks O(log w)"
        );
    }
}
