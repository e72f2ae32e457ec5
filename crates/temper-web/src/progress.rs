//! Where a run stands: status, phase, rule, counts by rule status, elapsed time and an ETA.
//! The run page shows it and the event stream sends it again whenever its [`LoopState`] changes.
use chrono::{DateTime, Utc};
use serde::Serialize;
use temper_journal::{Event, Outlook, Phase, Remembered, Rule, RuleStatus, Run, RunStatus, Tally, now_ms, predict_end, standing};

use crate::state::AppState;
use crate::{WebError, pages::duration};
use temper_journal::RunId;

/// What changes as the loop works; a change sends a `state` event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoopState {
    pub status: RunStatus,
    pub phase: Phase,
    pub rule: Option<String>,
    /// Rule statuses present in the run, in review order (`RuleStatus::REVIEW_ORDER`).
    pub counts: Vec<StatusCount>,
    pub failing_at_start: usize,
    pub open: usize,
    pub done: usize,
    pub attempts: i64,
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
        let events = if row.status == RunStatus::Running { app.journal.events(run, 0).await? } else { Vec::new() };
        Ok(Self::of(&row, &rules, &events, &remembered(app, &row).await?))
    }

    /// `events`: the run's, for the ETA of a running run (none for one that is over), with what
    /// its skill remembers ([`remembered`]).
    pub fn of(run: &Run, rules: &[Rule], events: &[Event], memory: &Remembered) -> Self {
        let count = |s: RuleStatus| rules.iter().filter(|r| r.status == s).count();
        let counts = RuleStatus::REVIEW_ORDER.iter().map(|&status| StatusCount { status, n: count(status) }).filter(|c| c.n > 0).collect();
        // Rules the loop has settled after working on them; their mean time predicts the rest.
        let worked: Vec<&Rule> = rules
            .iter()
            .filter(|r| matches!(r.status, RuleStatus::Fixed | RuleStatus::Escalated | RuleStatus::StillFailing))
            .filter(|r| r.attempts > 0 || r.elapsed_ms > 0)
            .collect();
        let tally = Tally::of(rules);
        let open = tally.open;
        let (pending, not_applicable) = standing(rules);
        let outlook = Outlook::new(events, &pending).remembering(&not_applicable, memory);
        let eta = (run.status == RunStatus::Running).then(|| predict_end(&outlook, Utc::now().fixed_offset())).flatten();
        let elapsed_secs = elapsed_secs(run);
        let status = if run.driver_gone(now_ms()) { RunStatus::Interrupted } else { run.status };
        Self {
            run: run.id,
            state: LoopState {
                status,
                phase: run.phase,
                rule: run.current_rule.clone(),
                counts,
                failing_at_start: tally.failing_at_start,
                open,
                done: worked.len(),
                attempts: rules.iter().map(|r| r.attempts).sum(),
                score_before: run.score_before,
                score_after: run.score_after,
            },
            rule_short: run.current_rule.as_deref().map(|r| temper_scap::short_rule_id(r).to_string()),
            elapsed_secs,
            elapsed: duration(elapsed_secs * 1000),
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
