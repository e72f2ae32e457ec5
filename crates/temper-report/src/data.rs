//! Loading one run from the store.

use serde::Serialize;
use temper_core::journal::{Attempt, Ban, Event, EventKind, Journal, Lesson, Recall, Rule, RuleStatus, Run, RunSummary, Turn};

use crate::ReportError;

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
    pub turns: Vec<Turn>,
    /// This run's active lessons, oldest first (a forgotten lesson is left out).
    pub lessons: Vec<Lesson>,
    /// This run's active bans.
    pub bans: Vec<Ban>,
    /// The reboot proof's events: each reboot, checkpoint proven to boot and fix it blamed.
    pub reboots: Vec<Event>,
}

/// `latest` or a run number, checked against the store.
pub async fn resolve_run(store: &dyn Journal, spec: &str) -> Result<i64, ReportError> {
    let spec = spec.trim();
    if spec.is_empty() || spec.eq_ignore_ascii_case("latest") {
        return store.latest_run().await?.map(|r| r.id).ok_or(ReportError::NoRuns);
    }
    let id: i64 = spec.parse().map_err(|_| ReportError::BadRun(spec.to_string()))?;
    Ok(store.run(id).await?.id)
}

/// Reads run `run_id`. A summary that does not parse is dropped (the rows are the record).
pub async fn load(store: &dyn Journal, run_id: i64) -> Result<RunData, ReportError> {
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
    let reboot_kinds = [EventKind::Reboot, EventKind::Booted, EventKind::RebootBlamed];
    let reboots = store.events(run_id, 0).await?.into_iter().filter(|e| reboot_kinds.contains(&e.kind)).collect();
    Ok(RunData { run, summary, rules, attempts, turns, lessons, bans, reboots })
}
