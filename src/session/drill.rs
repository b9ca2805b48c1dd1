//! `harness drill` as data: the deck of recall cards, the FSRS schedule of
//! each card over an injected clock, and the drill state file.
//!
//! The deck is data. Each `drill/*.toml` is one source (the seed's Thirty
//! Questions, the Complexity Table, …), and every gate's follow-up
//! questions in `problems/*/problem.toml` are cards too, so a problem
//! author adds cards the way they add a gate. A card's id is
//! `<source>/<id>`, stable across edits of its text.
//!
//! Scheduling is FSRS (the Free Spaced Repetition Scheduler, Anki's default
//! since 23.10) through the `rs-fsrs` crate, with its default parameters,
//! its long-term scheduler (whole days, no same-day learning steps) and no
//! fuzz (the same answers give the same schedule). Three grades map onto
//! its ratings: knew it within the 15-second limit (Good), knew it slowly
//! (Hard), did not know (Again). An answer revealed after the limit counts
//! as slow whatever the grade, as the seed prescribes: "if any answer takes
//! more than fifteen seconds, that is your next study item".
//!
//! State files of format 1 (SM-2: ease and interval) are read and carried
//! over card by card: the history (reviews, lapses, slow answers, the last
//! answer) as it was, the due date unchanged, and a memory state FSRS can
//! continue from (stability = the SM-2 interval, which is the interval FSRS
//! gives at its 90 % target retention; difficulty from the ease).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use chrono::{DateTime, Utc};
use rs_fsrs::{FSRS, Parameters, Rating};

use crate::base::fsio;
use crate::problem::model::Problem;

/// The deck file format this harness reads.
pub const DECK_FORMAT_VERSION: u32 = 1;
/// The drill state file format.
pub const STATE_FORMAT_VERSION: u32 = 2;
/// The seed's limit: an answer that takes longer is a study item.
pub const LIMIT_MS: u64 = 15_000;
const DAY_MS: u64 = 24 * 60 * 60 * 1000;

/// One recall card.
#[derive(Clone, Debug, PartialEq)]
pub struct Card {
    /// `<source>/<id>`: `thirty_questions/bisect-right`, `lru_cache/g2-1`.
    pub id: String,
    /// Where it comes from, for display: "The Thirty Questions", "LRU cache, gate 2".
    pub source: String,
    /// The seed chapter (0 for general questions).
    pub chapter: Option<u32>,
    /// The problem whose follow-up this is, if it is one.
    pub problem: Option<String>,
    pub question: String,
    pub answer: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDeck {
    format_version: u32,
    source: String,
    #[serde(rename = "card")]
    cards: Vec<RawCard>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCard {
    id: String,
    #[serde(default)]
    chapter: Option<u32>,
    question: String,
    answer: String,
}

/// Parses one deck file; `stem` is the file name without `.toml`.
pub fn parse_deck(stem: &str, file: &Path, text: &str) -> Result<Vec<Card>> {
    let raw: RawDeck = toml::from_str(text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    if raw.format_version != DECK_FORMAT_VERSION {
        bail!(
            "{}: format_version {} is not supported (this harness reads {DECK_FORMAT_VERSION})",
            file.display(),
            raw.format_version
        );
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut cards = Vec::new();
    for c in raw.cards {
        if c.id.is_empty() || !c.id.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_') {
            bail!("{}: card id `{}` must be letters, digits, `-` and `_`", file.display(), c.id);
        }
        if !seen.insert(c.id.clone()) {
            bail!("{}: two cards have the id `{}`", file.display(), c.id);
        }
        if c.question.trim().is_empty() || c.answer.trim().is_empty() {
            bail!("{}: card `{}` needs a question and an answer", file.display(), c.id);
        }
        cards.push(Card {
            id: format!("{stem}/{}", c.id),
            source: raw.source.clone(),
            chapter: c.chapter,
            problem: None,
            question: reflow(&c.question),
            answer: reflow(&c.answer),
        });
    }
    Ok(cards)
}

/// Joins the lines of each paragraph, so the pane wraps the text at its
/// own width; blank lines still separate paragraphs.
fn reflow(text: &str) -> String {
    let paragraphs: Vec<String> = text
        .trim()
        .split("\n\n")
        .map(|p| p.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" "))
        .collect();
    paragraphs.join("\n\n")
}

/// The follow-up questions of a problem's gates, as cards.
pub fn followup_cards(problem: &Problem) -> Vec<Card> {
    let mut cards = Vec::new();
    for gate in &problem.gates {
        for (i, f) in gate.followups.iter().enumerate() {
            cards.push(Card {
                id: format!("{}/g{}-{}", problem.id, gate.number, i + 1),
                source: format!("{}, gate {}", problem.title, gate.number),
                chapter: problem.chapter,
                problem: Some(problem.id.clone()),
                question: reflow(&f.question),
                answer: reflow(&f.answer),
            });
        }
    }
    cards
}

/// Leaves out the follow-up cards of the gates of a graph problem the
/// candidate has never reached (`reports`): which follow-ups a problem has
/// is for its sessions to reveal. Gate 1 and linear problems keep theirs.
pub fn reached_only(cards: Vec<Card>, problems: &[Problem], reports: &[crate::session::report::Report]) -> Vec<Card> {
    let graphs: Vec<(&Problem, crate::session::path::Seen)> =
        problems.iter().filter(|p| p.is_graph()).map(|p| (p, crate::session::path::seen(&p.id, reports))).collect();
    cards
        .into_iter()
        .filter(|c| {
            let Some((p, seen)) = graphs.iter().find(|(p, _)| c.problem.as_deref() == Some(p.id.as_str())) else {
                return true;
            };
            // Follow-up ids are `<problem>/g<gate>-<i>`.
            let gate =
                c.id.strip_prefix(&format!("{}/g", p.id))
                    .and_then(|rest| rest.split('-').next())
                    .and_then(|g| g.parse::<usize>().ok());
            gate.is_none_or(|g| g == 1 || seen.contains_key(&g))
        })
        .collect()
}

/// Every deck file of `dir` (sorted by name) and the follow-ups of
/// `problems`. A missing `dir` is an empty source, not an error.
pub fn load_deck(dir: &Path, problems: &[Problem]) -> Result<Vec<Card>> {
    let mut cards = Vec::new();
    if dir.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read {}", dir.display()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
            let stem = file.file_stem().unwrap_or_default().to_string_lossy().into_owned();
            cards.extend(parse_deck(&stem, &file, &text)?);
        }
    }
    for p in problems {
        cards.extend(followup_cards(p));
    }
    Ok(cards)
}

/// Narrows the deck: `--chapter N`, `--problem ID` (its follow-ups and
/// every card of its chapter).
pub fn filter(cards: Vec<Card>, chapter: Option<u32>, problem: Option<(&str, Option<u32>)>) -> Vec<Card> {
    cards
        .into_iter()
        .filter(|c| chapter.is_none_or(|n| c.chapter == Some(n)))
        .filter(|c| match problem {
            None => true,
            Some((id, ch)) => c.problem.as_deref() == Some(id) || (ch.is_some() && c.chapter == ch),
        })
        .collect()
}

/// What the candidate pressed after the answer was revealed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grade {
    /// Knew it, within the limit.
    InTime,
    /// Knew it, but slowly (or after the limit).
    Slowly,
    /// Did not know it.
    Missed,
}

impl Grade {
    /// The grade that counts: knowing it after the limit is knowing it slowly.
    pub fn effective(self, elapsed_ms: u64) -> Grade {
        if self == Grade::InTime && elapsed_ms > LIMIT_MS { Grade::Slowly } else { self }
    }

    /// The FSRS rating of an (effective) grade.
    fn rating(self) -> Rating {
        match self {
            Grade::InTime => Rating::Good,
            Grade::Slowly => Rating::Hard,
            Grade::Missed => Rating::Again,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Grade::InTime => "in time",
            Grade::Slowly => "slowly",
            Grade::Missed => "missed",
        }
    }
}

/// One card's schedule and history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CardState {
    /// FSRS's memory of the card: stability, difficulty, state, due date.
    pub memory: rs_fsrs::Card,
    /// When the card is next due (the same instant as `memory.due`).
    pub due_ms: u64,
    pub reviews: u32,
    pub lapses: u32,
    /// Reviews answered after the limit or graded slowly.
    pub slow: u32,
    pub last_grade: Grade,
    pub last_ms: u64,
    /// How long the last answer took, shown to reveal.
    pub last_elapsed_ms: u64,
}

/// The scheduler: FSRS's defaults, whole days, no fuzz.
fn scheduler() -> FSRS {
    FSRS::new(Parameters { enable_short_term: false, enable_fuzz: false, ..Parameters::default() })
}

fn instant(ms: u64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms.min(i64::MAX as u64) as i64).unwrap_or_default()
}

fn millis(t: DateTime<Utc>) -> u64 {
    t.timestamp_millis().max(0) as u64
}

impl CardState {
    /// The schedule after a review at `now_ms`.
    pub fn review(previous: Option<&CardState>, grade: Grade, elapsed_ms: u64, now_ms: u64) -> CardState {
        let grade = grade.effective(elapsed_ms);
        let now = instant(now_ms);
        let memory = match previous {
            Some(p) => p.memory.clone(),
            None => rs_fsrs::Card { due: now, last_review: now, ..rs_fsrs::Card::default() },
        };
        let memory = scheduler().next(memory, now, grade.rating()).card;
        CardState {
            due_ms: millis(memory.due),
            memory,
            reviews: previous.map_or(0, |s| s.reviews) + 1,
            lapses: previous.map_or(0, |s| s.lapses) + u32::from(grade == Grade::Missed),
            slow: previous.map_or(0, |s| s.slow) + u32::from(grade == Grade::Slowly),
            last_grade: grade,
            last_ms: now_ms,
            last_elapsed_ms: elapsed_ms,
        }
    }

    /// Days from the last review to the next.
    pub fn interval_days(&self) -> u64 {
        self.due_ms.saturating_sub(self.last_ms) / DAY_MS
    }

    /// A study item: the last answer was missed or slow.
    pub fn needs_study(&self) -> bool {
        self.last_grade != Grade::InTime
    }
}

/// A card's schedule as format 1 (SM-2) kept it.
#[derive(Deserialize)]
struct CardStateV1 {
    reps: u32,
    ease: f64,
    interval_days: u32,
    due_ms: u64,
    reviews: u32,
    lapses: u32,
    slow: u32,
    last_grade: Grade,
    last_ms: u64,
    last_elapsed_ms: u64,
}

impl CardStateV1 {
    /// The same card under FSRS: its history and due date as they were,
    /// stability the SM-2 interval (FSRS's interval at 90 % retention equals
    /// the stability), difficulty from the ease: 2.5 (SM-2's start) is
    /// FSRS's middle, 5; the floor 1.3 its hardest, 10.
    fn migrate(self) -> CardState {
        let difficulty = (5.0 + (2.5 - self.ease) * 5.0 / 1.2).clamp(1.0, 10.0);
        let state = match (self.reviews, self.reps) {
            (0, _) => rs_fsrs::State::New,
            (_, 0) => rs_fsrs::State::Relearning,
            _ => rs_fsrs::State::Review,
        };
        CardState {
            memory: rs_fsrs::Card {
                due: instant(self.due_ms),
                stability: f64::from(self.interval_days.max(1)),
                difficulty,
                elapsed_days: 0,
                scheduled_days: i64::from(self.interval_days),
                reps: self.reviews as i32,
                lapses: self.lapses as i32,
                state,
                last_review: instant(self.last_ms),
            },
            due_ms: self.due_ms,
            reviews: self.reviews,
            lapses: self.lapses,
            slow: self.slow,
            last_grade: self.last_grade,
            last_ms: self.last_ms,
            last_elapsed_ms: self.last_elapsed_ms,
        }
    }
}

#[derive(Deserialize)]
struct DrillStateV1 {
    cards: BTreeMap<String, CardStateV1>,
}

/// Every card's schedule: `reports/drill/schedule.json`, in a folder of
/// its own so that nothing reading `reports/*.json` takes it for a report.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DrillState {
    pub format_version: u32,
    pub cards: BTreeMap<String, CardState>,
}

impl DrillState {
    pub fn path(reports_dir: &Path) -> PathBuf {
        reports_dir.join("drill").join("schedule.json")
    }

    /// Where earlier versions kept the state, beside the reports.
    fn old_path(reports_dir: &Path) -> PathBuf {
        reports_dir.join("drill.json")
    }

    /// The state in `reports_dir`, or a new one when there is none yet. A
    /// state left at the old place is moved (one rename, so nothing is lost
    /// if this is interrupted).
    pub fn load(reports_dir: &Path) -> Result<DrillState> {
        let path = Self::path(reports_dir);
        let old = Self::old_path(reports_dir);
        if !path.exists() && old.is_file() {
            let dir = path.parent().expect("the state has a folder");
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            std::fs::rename(&old, &path)
                .with_context(|| format!("cannot move {} to {}", old.display(), path.display()))?;
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(DrillState { format_version: STATE_FORMAT_VERSION, cards: BTreeMap::new() });
            }
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let not_state =
            || format!("{} is not a drill state file (move it aside to start the schedule over)", path.display());
        #[derive(Deserialize)]
        struct Version {
            format_version: u32,
        }
        let version = serde_json::from_str::<Version>(&text).with_context(not_state)?.format_version;
        match version {
            STATE_FORMAT_VERSION => serde_json::from_str(&text).with_context(not_state),
            1 => {
                let old: DrillStateV1 = serde_json::from_str(&text).with_context(not_state)?;
                let cards = old.cards.into_iter().map(|(id, c)| (id, c.migrate())).collect();
                Ok(DrillState { format_version: STATE_FORMAT_VERSION, cards })
            }
            v => bail!("{}: format_version {v} is not supported", path.display()),
        }
    }

    /// Written the way session state is: atomically.
    pub fn save(&self, reports_dir: &Path) -> Result<()> {
        let json = serde_json::to_string_pretty(self)?;
        fsio::write_atomic(&Self::path(reports_dir), json.as_bytes())
    }

    pub fn record(&mut self, card: &str, grade: Grade, elapsed_ms: u64, now_ms: u64) -> &CardState {
        let next = CardState::review(self.cards.get(card), grade, elapsed_ms, now_ms);
        self.cards.insert(card.to_string(), next);
        &self.cards[card]
    }

    /// Today's queue: cards due (most overdue first), then cards never
    /// seen (in deck order), at most `limit`.
    pub fn queue<'a>(&self, deck: &'a [Card], now_ms: u64, limit: usize) -> Vec<&'a Card> {
        let mut due: Vec<(&Card, u64)> = deck
            .iter()
            .filter_map(|c| self.cards.get(&c.id).filter(|s| s.due_ms <= now_ms).map(|s| (c, s.due_ms)))
            .collect();
        due.sort_by_key(|(_, d)| *d);
        let fresh = deck.iter().filter(|c| !self.cards.contains_key(&c.id));
        due.into_iter().map(|(c, _)| c).chain(fresh).take(limit).collect()
    }

    /// Counts for a header: (due now, never seen).
    pub fn counts(&self, deck: &[Card], now_ms: u64) -> (usize, usize) {
        let due = deck.iter().filter(|c| self.cards.get(&c.id).is_some_and(|s| s.due_ms <= now_ms)).count();
        let fresh = deck.iter().filter(|c| !self.cards.contains_key(&c.id)).count();
        (due, fresh)
    }

    /// The next study items: cards whose last answer was missed or slow,
    /// grouped by chapter (unknown chapters last), missed before slow.
    pub fn study_items<'a>(&'a self, deck: &'a [Card]) -> BTreeMap<u32, Vec<(&'a Card, &'a CardState)>> {
        let mut by_chapter: BTreeMap<u32, Vec<(&Card, &CardState)>> = BTreeMap::new();
        for card in deck {
            if let Some(s) = self.cards.get(&card.id).filter(|s| s.needs_study()) {
                by_chapter.entry(card.chapter.unwrap_or(u32::MAX)).or_default().push((card, s));
            }
        }
        for items in by_chapter.values_mut() {
            items.sort_by_key(|(c, s)| (s.last_grade != Grade::Missed, s.due_ms, c.id.clone()));
        }
        by_chapter
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_state_at_the_old_place_moves_beside_no_report() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = DrillState::load(dir.path()).unwrap();
        state.record("q1", Grade::InTime, 1000, 5);
        let json = serde_json::to_string_pretty(&state).unwrap();
        std::fs::write(dir.path().join("drill.json"), json).unwrap();
        let loaded = DrillState::load(dir.path()).unwrap();
        assert_eq!(loaded, state, "the card's history survives the move");
        assert!(!dir.path().join("drill.json").exists());
        assert!(DrillState::path(dir.path()).is_file());
        let (reports, broken) = crate::session::report::load_all(dir.path());
        assert!(reports.is_empty() && broken.is_empty(), "{broken:?}");
    }

    use super::*;

    #[test]
    fn a_graph_problems_follow_ups_wait_until_their_gate_was_reached() {
        let p = crate::problem::model::tests_support::graph_problem(&[&[], &[1], &[1]], 2);
        let card = |id: &str, problem: Option<&str>| Card {
            id: id.into(),
            source: String::new(),
            chapter: None,
            problem: problem.map(String::from),
            question: String::new(),
            answer: String::new(),
        };
        let cards =
            vec![card("g/g1-1", Some("g")), card("g/g2-1", Some("g")), card("g/g3-1", Some("g")), card("q/x", None)];
        let mut s = crate::session::state::Session::new("g", crate::session::state::Mode::Practice, 2, 60_000, 5);
        s.path = vec![1, 3];
        s.gate = 2;
        let reports = vec![crate::session::report::Report::from_session(&s, &p, 10, None)];
        let kept: Vec<String> =
            reached_only(cards.clone(), std::slice::from_ref(&p), &reports).into_iter().map(|c| c.id).collect();
        assert_eq!(kept, ["g/g1-1", "g/g3-1", "q/x"], "gate 2 was never reached");
        assert_eq!(reached_only(cards, &[p], &[]).len(), 2, "no reports: gate 1 and the general card");
    }

    const T0: u64 = 1_800_000_000_000;

    fn card(id: &str, chapter: u32) -> Card {
        Card {
            id: id.into(),
            source: "test".into(),
            chapter: Some(chapter),
            problem: None,
            question: "q".into(),
            answer: "a".into(),
        }
    }

    #[test]
    fn intervals_grow_with_each_answer_in_time() {
        let s1 = CardState::review(None, Grade::InTime, 3_000, T0);
        assert!(s1.due_ms > T0 && s1.interval_days() >= 1, "{s1:?}");
        let s2 = CardState::review(Some(&s1), Grade::InTime, 3_000, s1.due_ms);
        let s3 = CardState::review(Some(&s2), Grade::InTime, 3_000, s2.due_ms);
        assert!(s2.interval_days() > s1.interval_days(), "{s1:?} {s2:?}");
        assert!(s3.interval_days() > s2.interval_days(), "{s2:?} {s3:?}");
        assert_eq!(s3.due_ms, millis(s3.memory.due));
        assert_eq!(s3.reviews, 3);
        // Deterministic: the same answers, the same schedule.
        assert_eq!(CardState::review(Some(&s2), Grade::InTime, 3_000, s2.due_ms), s3);
    }

    #[test]
    fn a_miss_brings_the_card_back_soon_and_counts_a_lapse() {
        let mut s = CardState::review(None, Grade::InTime, 1_000, T0);
        for _ in 0..3 {
            s = CardState::review(Some(&s), Grade::InTime, 1_000, s.due_ms);
        }
        let missed = CardState::review(Some(&s), Grade::Missed, 1_000, s.due_ms);
        assert_eq!(missed.lapses, 1);
        assert!(missed.interval_days() < s.interval_days(), "{s:?} {missed:?}");
        assert!(missed.memory.difficulty > s.memory.difficulty, "a miss makes the card harder");
        let slow = CardState::review(Some(&s), Grade::Slowly, 1_000, s.due_ms);
        let good = CardState::review(Some(&s), Grade::InTime, 1_000, s.due_ms);
        assert!(slow.interval_days() < good.interval_days(), "slow {slow:?} good {good:?}");
    }

    #[test]
    fn an_sm2_state_migrates_keeping_every_cards_history_and_due_date() {
        let dir = tempfile::tempdir().unwrap();
        let v1 = r#"{ "format_version": 1, "cards": {
            "thirty/a": { "reps": 3, "ease": 2.6, "interval_days": 16, "due_ms": 1900000000000,
                          "reviews": 4, "lapses": 1, "slow": 2, "last_grade": "in_time",
                          "last_ms": 1898617600000, "last_elapsed_ms": 4000 },
            "thirty/b": { "reps": 0, "ease": 1.3, "interval_days": 1, "due_ms": 1800000000000,
                          "reviews": 2, "lapses": 2, "slow": 0, "last_grade": "missed",
                          "last_ms": 1799913600000, "last_elapsed_ms": 9000 } } }"#;
        std::fs::create_dir_all(dir.path().join("drill")).unwrap();
        std::fs::write(DrillState::path(dir.path()), v1).unwrap();
        let state = DrillState::load(dir.path()).unwrap();
        assert_eq!(state.format_version, STATE_FORMAT_VERSION);
        let a = &state.cards["thirty/a"];
        assert_eq!((a.reviews, a.lapses, a.slow, a.last_grade, a.due_ms), (4, 1, 2, Grade::InTime, 1900000000000));
        assert_eq!(a.memory.stability, 16.0);
        assert_eq!(a.memory.state, rs_fsrs::State::Review);
        let b = &state.cards["thirty/b"];
        assert_eq!(b.memory.difficulty, 10.0, "the ease floor is FSRS's hardest");
        assert_eq!(b.memory.state, rs_fsrs::State::Relearning);
        // FSRS continues from the migrated memory: knowing it on time
        // schedules further out than the SM-2 interval it had.
        let next = CardState::review(Some(a), Grade::InTime, 2_000, a.due_ms);
        assert!(next.interval_days() > 16, "{next:?}");
        assert_eq!(next.reviews, 5);
        // Saved again, it is a format-2 file that loads as it was.
        state.save(dir.path()).unwrap();
        assert_eq!(DrillState::load(dir.path()).unwrap(), state);
    }

    #[test]
    fn knowing_it_after_fifteen_seconds_counts_as_slow() {
        assert_eq!(Grade::InTime.effective(LIMIT_MS), Grade::InTime);
        assert_eq!(Grade::InTime.effective(LIMIT_MS + 1), Grade::Slowly);
        assert_eq!(Grade::Missed.effective(60_000), Grade::Missed);
        let s = CardState::review(None, Grade::InTime, 20_000, T0);
        assert_eq!((s.last_grade, s.slow), (Grade::Slowly, 1));
        assert!(s.needs_study());
        let slow = CardState::review(None, Grade::Slowly, 2_000, T0);
        assert_eq!((&s.memory, s.due_ms), (&slow.memory, slow.due_ms), "a late answer is a slow one");
    }

    #[test]
    fn the_queue_puts_due_cards_first_then_new_ones_and_skips_the_rest() {
        let deck = vec![card("a", 1), card("b", 1), card("c", 2), card("d", 3)];
        let mut state = DrillState::default();
        state.record("c", Grade::Missed, 1_000, T0 - 2 * DAY_MS); // due T0 - DAY
        state.record("b", Grade::Missed, 1_000, T0 - DAY_MS); // due T0
        state.record("d", Grade::InTime, 1_000, T0); // due in a few days
        let (c_due, b_due, d_due) = (state.cards["c"].due_ms, state.cards["b"].due_ms, state.cards["d"].due_ms);
        assert!(c_due < b_due && b_due <= T0 && d_due > T0, "{c_due} {b_due} {d_due}");
        let ids: Vec<&str> = state.queue(&deck, T0, 10).iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["c", "b", "a"]);
        assert_eq!(state.queue(&deck, T0, 2).len(), 2);
        assert_eq!(state.counts(&deck, T0), (2, 1));
        let ids: Vec<&str> = state.queue(&deck, d_due, 10).iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["c", "b", "d", "a"], "once d falls due it is queued too");
    }

    #[test]
    fn study_items_are_the_missed_and_slow_by_chapter() {
        let deck = vec![card("a", 3), card("b", 1), card("c", 1), card("d", 1)];
        let mut state = DrillState::default();
        state.record("a", Grade::Slowly, 1_000, T0);
        state.record("b", Grade::InTime, 1_000, T0);
        state.record("c", Grade::InTime, 30_000, T0);
        state.record("d", Grade::Missed, 1_000, T0);
        let items = state.study_items(&deck);
        let ids: Vec<(u32, Vec<&str>)> =
            items.iter().map(|(ch, v)| (*ch, v.iter().map(|(c, _)| c.id.as_str()).collect())).collect();
        assert_eq!(ids, [(1, vec!["d", "c"]), (3, vec!["a"])]);
    }

    #[test]
    fn state_round_trips_atomically_and_a_missing_file_is_a_new_state() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = DrillState::load(dir.path()).unwrap();
        assert!(state.cards.is_empty());
        state.record("x/y", Grade::Slowly, 9_000, T0);
        state.save(dir.path()).unwrap();
        assert_eq!(DrillState::load(dir.path()).unwrap(), state);
        std::fs::write(DrillState::path(dir.path()), "{ nope").unwrap();
        let err = DrillState::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("drill/schedule.json") && err.contains("not a drill state file"), "{err}");
    }

    #[test]
    fn decks_are_checked_and_filtered() {
        let f = Path::new("drill/x.toml");
        let ok = "format_version = 1\nsource = \"S\"\n[[card]]\nid = \"one\"\nchapter = 2\nquestion = \"Q?\"\nanswer = \"A.\"\n";
        let cards = parse_deck("x", f, ok).unwrap();
        assert_eq!(cards[0].id, "x/one");
        let dup = format!("{ok}[[card]]\nid = \"one\"\nquestion = \"Q\"\nanswer = \"A\"\n");
        assert!(parse_deck("x", f, &dup).unwrap_err().to_string().contains("two cards have the id `one`"));
        let bad = ok.replace("question", "qestion");
        let err = parse_deck("x", f, &bad).unwrap_err().to_string();
        assert!(err.contains("drill/x.toml") && err.contains("line"), "{err}");
        let mut other = cards[0].clone();
        other.id = "p/g1-1".into();
        other.chapter = Some(5);
        other.problem = Some("p".into());
        let deck = vec![cards[0].clone(), other];
        assert_eq!(filter(deck.clone(), Some(2), None).len(), 1);
        assert_eq!(filter(deck.clone(), None, Some(("p", Some(5)))).len(), 1);
        assert_eq!(filter(deck, None, Some(("p", Some(2)))).len(), 2);
    }

    #[test]
    fn the_shipped_decks_load() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let problems: Vec<Problem> = crate::problem::model::list_ids(&root.join("problems"))
            .unwrap()
            .iter()
            .map(|id| Problem::load(&root.join("problems"), &root.join("contract"), id).unwrap())
            .collect();
        let deck = load_deck(&root.join("drill"), &problems).unwrap();
        assert!(deck.iter().filter(|c| c.id.starts_with("thirty_questions/")).count() == 30);
        assert!(deck.iter().any(|c| c.id.starts_with("complexity/")));
        assert!(deck.iter().any(|c| c.problem.as_deref() == Some("lru_cache")));
        assert!(deck.iter().all(|c| c.chapter.is_some()), "every card knows its chapter");
    }
}
