//! Where a run stands ([`Standing`], as `temper status` and the loop's progress line show it),
//! with its status, counts by rule status, elapsed time and an ETA. The run page shows it and
//! the event stream sends it again whenever its [`LoopState`] changes.
use chrono::{DateTime, Utc};
use serde::Serialize;
use temper_journal::{
    Event, Outlook, Remembered, Rule, RuleStatus, Run, RunStatus, Standing, now_ms, open_and_not_applicable, predict_end,
};

use crate::WebError;
use crate::state::AppState;
use temper_journal::RunId;
use temper_report::human_duration;

/// What changes as the loop works; a change sends a `state` event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoopState {
    pub status: RunStatus,
    /// Phase, rule, attempts and the rules in scope counted (`phase`, `open`, `in_scope`...).
    #[serde(flatten)]
    pub standing: Standing,
    /// Rule statuses present in the run, in review order (`RuleStatus::REVIEW_ORDER`).
    pub counts: Vec<StatusCount>,
    pub score_before: Option<f64>,
    pub score_after: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusCount {
    pub status: RuleStatus,
    pub n: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunProgress {
    pub run: RunId,
    #[serde(flatten)]
    pub state: LoopState,
    /// The current rule's short id.
    pub rule_short: Option<String>,
    /// The rules open, of what the states add up to ([`Standing::open_of`]).
    pub open_of: String,
    pub elapsed_secs: i64,
    pub elapsed: String,
    /// The time left, predicted from what the run has measured (`journal::predict_end`).
    pub eta_secs: Option<i64>,
    pub eta: Option<String>,
}

impl RunProgress {
    pub async fn load(app: &AppState, run: RunId) -> Result<Self, WebError> {
        let row = app.run(run).await?;
        let rules = app.journal.rules(run).await?;
        let events = if row.status == RunStatus::Running { app.journal.events(run, None).await? } else { Vec::new() };
        Ok(Self::of(&row, &rules, &events, &remembered(app, &row).await?))
    }

    /// `events`: the run's, for the ETA of a running run (none for one that is over), with what
    /// its skill remembers ([`remembered`]).
    pub fn of(run: &Run, rules: &[Rule], events: &[Event], memory: &Remembered) -> Self {
        let count = |s: RuleStatus| rules.iter().filter(|r| r.status == s).count();
        let counts = RuleStatus::REVIEW_ORDER.iter().map(|&status| StatusCount { status, n: count(status) }).filter(|c| c.n > 0).collect();
        let at = Standing::of_run(run, rules);
        let (pending, not_applicable) = open_and_not_applicable(rules);
        let outlook = Outlook::new(events, &pending).remembering(&not_applicable, memory);
        let eta = (run.status == RunStatus::Running).then(|| predict_end(&outlook, Utc::now().fixed_offset())).flatten();
        let elapsed_secs = elapsed_secs(run);
        let status = if run.driver_gone(now_ms()) { RunStatus::Interrupted } else { run.status };
        Self {
            run: run.id,
            open_of: at.open_of(),
            rule_short: at.rule.as_deref().map(|r| temper_scap::short_rule_id(r).to_string()),
            state: LoopState { status, standing: at, counts, score_before: run.score_before, score_after: run.score_after },
            elapsed_secs,
            elapsed: human_duration(elapsed_secs * 1000),
            eta_secs: eta.map(|e| e.secs),
            eta: eta.map(|e| e.human()),
        }
    }

    /// Finished or failed: nothing will change any more.
    pub fn is_over(&self) -> bool {
        matches!(self.state.status, RunStatus::Finished | RunStatus::Failed)
    }
}

/// What the runs of `run`'s skill remember, for the ETA of a running run (nothing for one that
/// is over).
pub async fn remembered(app: &AppState, run: &Run) -> Result<Remembered, WebError> {
    Ok(match run.status {
        RunStatus::Running => Remembered::of(&app.journal.recalled_times(&run.skill).await?),
        _ => Remembered::default(),
    })
}

/// From the start to the end, or to now while the run goes on.
fn elapsed_secs(run: &Run) -> i64 {
    let parse = |t: &str| DateTime::parse_from_rfc3339(t).ok().map(|t| t.with_timezone(&Utc));
    let end = run.ended_at.as_deref().and_then(parse).unwrap_or_else(Utc::now);
    parse(&run.started_at).map_or(0, |start| (end - start).num_seconds().max(0))
}
