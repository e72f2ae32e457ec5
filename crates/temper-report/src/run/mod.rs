//! One run as the store holds it, loaded once: its rows, and what its events say (the fixes
//! blamed at the end, progress over time, the plan it applied, its interruptions). Every view
//! and format reads this.
mod applied;
mod interruptions;
mod progress;

use serde::Serialize;
use temper_journal::{
    Attempt, Ban, Event, EventData, EventKind, Lesson, ReadJournal, Recall, Regressed, Rule, RuleStatus, Run, RunId, RunSummary,
    StoredTurn, TimeSplit,
};
use temper_scap::oval::Evidence;

pub use applied::{NotApplied, PlanCounts, PlanTry, PlanView, StepOutcome, StepView, applied};
pub use interruptions::{Interruption, interruptions};
pub use progress::ProgressChart;

/// Reading a run or a fleet from the store.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("store: {0}")]
    Store(#[from] temper_journal::JournalError),
    #[error("no run in the store yet: start one with `temper run`")]
    NoRuns,
    #[error("`{0}` is not a run: give a run number or `latest`")]
    BadRun(String),
    #[error("{}", match .0 { Some(f) => format!("no run belongs to fleet `{f}`"), None => "no fleet run in the store yet: start one with `temper fleet run`".into() })]
    NoFleet(Option<String>),
}

/// Everything the store holds about one run.
#[derive(Debug, Clone, Serialize)]
pub struct RunData {
    pub run: Run,
    /// `runs.summary_json`, when the run finished: the summary the loop returned.
    pub summary: Option<RunSummary>,
    /// In first-scan order.
    pub rules: Vec<Rule>,
    /// In the order they started.
    pub attempts: Vec<Attempt>,
    pub turns: Vec<StoredTurn>,
    /// This run's active lessons, oldest first (a forgotten lesson is left out).
    pub lessons: Vec<Lesson>,
    /// This run's active bans.
    pub bans: Vec<Ban>,
    /// The reboot proof's events: each reboot, checkpoint proven to boot and fix it blamed.
    pub reboots: Vec<Event>,
    /// Kept fixes rolled back after the fact by the reboot proof or the final scan (a batch's
    /// regression check blames the rest), from the run's events.
    pub blamed: Vec<Blame>,
    /// Rules fixed and scores over time, from the run's events.
    pub progress: ProgressChart,
    /// The proven plan the run applied (`temper run --plan`), step by step.
    pub plan: Option<PlanView>,
    /// Each time the run stopped and was resumed, in order.
    pub interruptions: Vec<Interruption>,
    /// Where its wall time went: the fix scripts and the proof around them (a finished run).
    pub split: Option<TimeSplit>,
}

/// A kept fix rolled back once the run was ending, and what found it wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Blame {
    pub rule_id: String,
    /// The attempt's number on its rule.
    pub attempt: temper_journal::AttemptNo,
    pub by: BlamedBy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlamedBy {
    /// After a cold reboot (`reboot_blamed`).
    RebootProof,
    /// By the final scan, in a run without the reboot proof.
    FinalScan,
}

impl RunData {
    /// A rule's newest evidence and when it was taken: at the final scan, else after its last
    /// attempt's fix, else before it.
    pub fn evidence_of(&self, rule: &str) -> Option<(String, &Evidence)> {
        if let Some(e) = self.rules.iter().find(|r| r.rule_id == rule).and_then(|r| r.final_evidence.as_ref()) {
            return Some(("at the final scan".into(), e));
        }
        self.attempts.iter().rev().filter(|a| a.spec.rule_id == rule).find_map(|a| {
            match (&a.findings.evidence_after, &a.spec.evidence_before) {
                (Some(e), _) => Some((format!("after attempt #{}", a.n), e)),
                (None, Some(e)) => Some((format!("before attempt #{}", a.n), e)),
                (None, None) => None,
            }
        })
    }

    /// What rolled back `a`'s kept fix, when the reboot proof or the final scan did.
    pub fn blamed_by(&self, a: &Attempt) -> Option<BlamedBy> {
        self.blamed.iter().rev().find(|b| b.rule_id == a.spec.rule_id && b.attempt == a.n).map(|b| b.by)
    }
}

/// The fixes the reboot proof and the final scan blamed, from the events.
fn blames(events: &[Event]) -> Vec<Blame> {
    events
        .iter()
        .filter_map(|e| {
            let (b, by) = match &e.data {
                EventData::RebootBlamed(b) => (b, BlamedBy::RebootProof),
                EventData::RegressionFound(Regressed::AtFinalScan(b)) => (b, BlamedBy::FinalScan),
                _ => return None,
            };
            Some(Blame { rule_id: e.rule_id.clone()?, attempt: b.attempt, by })
        })
        .collect()
}

/// `latest` or a run number, checked against the store.
pub async fn resolve_run(store: &dyn ReadJournal, spec: &str) -> Result<RunId, LoadError> {
    let spec = spec.trim();
    if spec.is_empty() || spec.eq_ignore_ascii_case("latest") {
        return store.latest_run().await?.map(|r| r.id).ok_or(LoadError::NoRuns);
    }
    let id: RunId = spec.parse().map_err(|_| LoadError::BadRun(spec.to_string()))?;
    Ok(store.run(id).await?.id)
}

impl RunData {
    /// What the proven plan is made of (`temper_journal::plan::build`).
    pub fn records(&self) -> temper_journal::plan::Records<'_> {
        temper_journal::plan::Records { run: &self.run, summary: self.summary.as_ref(), rules: &self.rules, attempts: &self.attempts }
    }
}

/// Reads run `run_id`. A summary that does not parse is dropped (the rows are the record).
pub async fn load(store: &dyn ReadJournal, run_id: RunId) -> Result<RunData, LoadError> {
    let run = store.run(run_id).await?;
    let summary = run.summary_json.as_deref().and_then(|s| serde_json::from_str(s).ok());
    let rules = store.rules(run_id).await?;
    let attempts = store.attempts(run_id).await?;
    let turns = store.turns(run_id).await?;
    let mut lessons = Vec::new();
    for rule in rules.iter().filter(|r| r.attempts > 0 || r.status == RuleStatus::Escalated) {
        lessons.extend(store.lessons(Recall::all().rule(&rule.rule_id)).await?.into_iter().filter(|l| l.run_id == Some(run_id)));
    }
    lessons.sort_by_key(|l| l.id);
    let bans = store.bans(Recall::all()).await?.into_iter().filter(|b| b.run_id == Some(run_id)).collect();
    let events = store.events(run_id, None).await?;
    let blamed = blames(&events);
    let progress = ProgressChart::of(&events);
    let plan = applied(&run, &rules, &attempts, &events);
    let interruptions = interruptions(&events);
    let reboot_kinds = [EventKind::Reboot, EventKind::Booted, EventKind::RebootBlamed];
    let split = summary.as_ref().map(|s: &RunSummary| TimeSplit::of(&events, &attempts, &turns, s.wall_secs));
    let reboots = events.into_iter().filter(|e| reboot_kinds.contains(&e.kind)).collect();
    Ok(RunData { run, summary, rules, attempts, turns, lessons, bans, reboots, blamed, progress, plan, interruptions, split })
}
