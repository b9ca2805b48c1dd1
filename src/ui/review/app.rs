//! The review TUI's state and its key handling. Drawing reads the state
//! only (see `view`), so tests drive it with key events and snapshot the
//! screens.

use std::collections::BTreeSet;
use std::path::PathBuf;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::data;
use crate::problem::model::Followup;
use crate::session::report::Report;
use crate::ui::scroll::Scroll;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Screen {
    /// Every session, newest first.
    List,
    /// One session, in tabs.
    Detail,
    /// One problem's attempts over time.
    Progress,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Overview,
    Failures,
    Code,
    Followups,
    Reference,
}

pub const TABS: [(Tab, &str); 5] = [
    (Tab::Overview, "Overview"),
    (Tab::Failures, "Failures"),
    (Tab::Code, "Code"),
    (Tab::Followups, "Follow-ups"),
    (Tab::Reference, "Reference"),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Continue,
    Quit,
}

pub struct Review {
    /// Newest first.
    pub reports: Vec<Report>,
    /// Report files that could not be read: (path, why).
    pub broken: Vec<(PathBuf, String)>,
    pub screen: Screen,
    /// Where Esc goes from the progress screen.
    pub back: Screen,
    /// The selected (and, in the detail, the open) report.
    pub selected: usize,
    pub tab: Tab,
    pub scroll: Scroll,
    /// Index into the open report's snapshots.
    pub code_index: usize,
    /// Show the whole source instead of the diff from the previous snapshot.
    pub show_source: bool,
    /// Index into the open report's [`data::reference_entries`].
    pub reference_index: usize,
    /// Index into the open report's follow-up questions.
    pub followup: usize,
    /// Follow-ups whose model answer is showing. Hidden again when another
    /// report opens, so each review starts with answering out loud.
    pub revealed: BTreeSet<usize>,
    /// The problem on the progress screen.
    pub progress_problem: String,
}

impl Review {
    pub fn new(mut reports: Vec<Report>, broken: Vec<(PathBuf, String)>) -> Review {
        reports.sort_by(|a, b| b.started_at_ms.cmp(&a.started_at_ms).then_with(|| b.id.cmp(&a.id)));
        let progress_problem = reports.first().map(|r| r.problem.clone()).unwrap_or_default();
        Review {
            reports,
            broken,
            screen: Screen::List,
            back: Screen::List,
            selected: 0,
            tab: Tab::Overview,
            scroll: Scroll::default(),
            code_index: 0,
            show_source: false,
            reference_index: 0,
            followup: 0,
            revealed: BTreeSet::new(),
            progress_problem,
        }
    }

    /// The selected report.
    pub fn current(&self) -> Option<&Report> {
        self.reports.get(self.selected)
    }

    /// Opens the detail of the report at `index` on its overview.
    pub fn open(&mut self, index: usize) {
        if index >= self.reports.len() {
            return;
        }
        self.selected = index;
        self.screen = Screen::Detail;
        self.tab = Tab::Overview;
        self.scroll.top();
        // The last snapshot first: its diff is the latest change that passed.
        self.code_index = self.current().map_or(0, |r| data::snapshots(r).len().saturating_sub(1));
        self.show_source = false;
        self.reference_index = 0;
        self.followup = 0;
        self.revealed.clear();
    }

    /// Opens the report with this id; false if there is none.
    pub fn open_id(&mut self, id: &str) -> bool {
        match self.reports.iter().position(|r| r.id == id) {
            Some(i) => {
                self.open(i);
                true
            }
            None => false,
        }
    }

    /// The follow-up questions of the gates the open report reached.
    pub fn followups(&self) -> Vec<(usize, &Followup)> {
        self.current()
            .map(|r| {
                r.gates
                    .iter()
                    .filter(|g| g.reached)
                    .flat_map(|g| g.followups.iter().map(move |f| (g.shown(), f)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The problems with reports, for the progress screen.
    pub fn problems(&self) -> Vec<String> {
        data::problems(&self.reports)
    }

    fn show_progress(&mut self) {
        if let Some(r) = self.current() {
            self.progress_problem = r.problem.clone();
        }
        if !self.progress_problem.is_empty() {
            self.back = self.screen;
            self.screen = Screen::Progress;
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Action {
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return Action::Quit;
        }
        if key.code == KeyCode::Char('q') {
            return Action::Quit;
        }
        match self.screen {
            Screen::List => self.list_key(key),
            Screen::Detail => self.detail_key(key),
            Screen::Progress => self.progress_key(key),
        }
    }

    fn list_key(&mut self, key: KeyEvent) -> Action {
        let n = self.reports.len();
        match key.code {
            KeyCode::Esc => return Action::Quit,
            KeyCode::Down | KeyCode::Char('j') if self.selected + 1 < n => self.selected += 1,
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Home | KeyCode::Char('g') => self.selected = 0,
            KeyCode::End | KeyCode::Char('G') => self.selected = n.saturating_sub(1),
            KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => self.open(self.selected),
            KeyCode::Char('p') => self.show_progress(),
            _ => {}
        }
        Action::Continue
    }

    fn detail_key(&mut self, key: KeyEvent) -> Action {
        let tab_index = TABS.iter().position(|(t, _)| *t == self.tab).unwrap_or(0);
        let set_tab = |s: &mut Review, i: usize| {
            s.tab = TABS[i % TABS.len()].0;
            s.scroll.top();
        };
        match key.code {
            KeyCode::Esc | KeyCode::Backspace => self.screen = Screen::List,
            KeyCode::Tab => set_tab(self, tab_index + 1),
            KeyCode::BackTab => set_tab(self, tab_index + TABS.len() - 1),
            KeyCode::Char(c @ '1'..='5') => set_tab(self, c as usize - '1' as usize),
            KeyCode::Char('p') => self.show_progress(),
            KeyCode::PageDown | KeyCode::Char(' ') if self.tab != Tab::Followups => self.scroll_by(10),
            KeyCode::PageUp => self.scroll_by(-10),
            KeyCode::Home | KeyCode::Char('g') => self.scroll.top(),
            _ => match self.tab {
                Tab::Overview | Tab::Failures => self.scroll_keys(key),
                Tab::Code => self.code_key(key),
                Tab::Followups => self.followup_key(key),
                Tab::Reference => self.reference_key(key),
            },
        }
        Action::Continue
    }

    fn scroll_keys(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Down | KeyCode::Char('j') => self.scroll_by(1),
            KeyCode::Up | KeyCode::Char('k') => self.scroll_by(-1),
            _ => {}
        }
    }

    fn code_key(&mut self, key: KeyEvent) {
        let n = self.current().map_or(0, |r| data::snapshots(r).len());
        let mut index = self.code_index;
        if step(&mut index, n, key) {
            if index != self.code_index {
                self.code_index = index;
                self.scroll.top();
            }
        } else if key.code == KeyCode::Char('d') {
            self.show_source = !self.show_source;
            self.scroll.top();
        } else {
            self.scroll_keys(key);
        }
    }

    fn reference_key(&mut self, key: KeyEvent) {
        let n = self.current().map_or(0, |r| data::reference_entries(r).len());
        let mut index = self.reference_index;
        if step(&mut index, n, key) {
            if index != self.reference_index {
                self.reference_index = index;
                self.scroll.top();
            }
        } else {
            self.scroll_keys(key);
        }
    }

    fn followup_key(&mut self, key: KeyEvent) {
        let n = self.followups().len();
        match key.code {
            KeyCode::Down | KeyCode::Char('j') if self.followup + 1 < n => self.followup += 1,
            KeyCode::Up | KeyCode::Char('k') => self.followup = self.followup.saturating_sub(1),
            KeyCode::Enter | KeyCode::Char(' ') | KeyCode::Char('r') if n > 0 => self.toggle_answer(),
            _ => {}
        }
    }

    /// Shows the selected question's model answer, or hides it again.
    fn toggle_answer(&mut self) {
        if !self.revealed.remove(&self.followup) {
            self.revealed.insert(self.followup);
        }
    }

    fn progress_key(&mut self, key: KeyEvent) -> Action {
        let problems = self.problems();
        let i = problems.iter().position(|p| *p == self.progress_problem).unwrap_or(0);
        match key.code {
            KeyCode::Esc | KeyCode::Backspace => self.screen = self.back,
            KeyCode::Left | KeyCode::Char('[') if i > 0 => self.progress_problem = problems[i - 1].clone(),
            KeyCode::Right | KeyCode::Char(']') if i + 1 < problems.len() => {
                self.progress_problem = problems[i + 1].clone();
            }
            _ => {}
        }
        Action::Continue
    }

    fn scroll_by(&mut self, d: i32) {
        self.scroll.by(d);
    }
}

/// `←`/`[` and `→`/`]` move `index` within `0..n`; whether the key was one
/// of them (a move past either end is still taken, and does nothing).
fn step(index: &mut usize, n: usize, key: KeyEvent) -> bool {
    match key.code {
        KeyCode::Left | KeyCode::Char('[') => *index = index.saturating_sub(1),
        KeyCode::Right | KeyCode::Char(']') => *index = (*index + 1).min(n.saturating_sub(1)),
        _ => return false,
    }
    true
}
