//! The fleet report: every target of one fleet run side by side (fixed, escalated, scores,
//! wall time, health at the end), the escalations that recur across targets grouped by rule
//! with one next step each, and how to get each target's own checklist. `md` and `html` write it.
use std::collections::BTreeMap;

use serde::Serialize;
use temper_journal::RunId;
use temper_journal::plan_from::PlanFrom;
use temper_journal::{ReadJournal, RuleStatus, Run};

use super::info::rule_info;
use super::next_step::{NextStep, next_steps};
use crate::run::{LoadError, PlanCounts, RunData, load};
use crate::text::{ms, short};

/// One fleet, ready to render.
#[derive(Debug, Clone, Serialize)]
pub struct FleetReport {
    pub fleet: String,
    pub targets: Vec<TargetRow>,
    /// Escalated rules, the ones on most targets first.
    pub escalations: Vec<FleetEscalation>,
    pub fixed: usize,
    pub escalated: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct TargetRow {
    pub target: String,
    pub run: RunId,
    pub status: String,
    pub fixed: usize,
    pub escalated: usize,
    pub still_failing: usize,
    pub score_before: Option<f64>,
    pub score_after: Option<f64>,
    pub wall: String,
    pub wall_secs: f64,
    /// The guard and health check at the end; `None` when the run did not finish.
    pub healthy: Option<bool>,
    /// The command that writes this target's checklist.
    pub checklist: String,
    /// What `temper fleet run --plan-from` did with the first target's plan, for this run.
    pub plan_from: Option<PlanFrom>,
    /// The steps of the plan the run applied, by outcome.
    pub plan_counts: Option<PlanCounts>,
    /// Both in words, or that this run was the fleet's plan source.
    pub plan: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FleetEscalation {
    pub rule_id: String,
    pub short_id: String,
    pub title: String,
    pub targets: Vec<String>,
    /// On two targets or more.
    pub recurs: bool,
    /// Why, on the first target it was escalated on.
    pub reason: String,
    pub next_step: NextStep,
}

/// The fleet's name in a run's stored options.
fn fleet_of(run: &Run) -> Option<String> {
    let options: serde_json::Value = serde_json::from_str(&run.options_json).ok()?;
    options["fleet"].as_str().map(str::to_string)
}

/// `name` as a file name: what is not a letter, digit, `.`, `-` or `_` becomes `_`.
fn file_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' }).collect()
}

fn target_of(run: &Run) -> String {
    run.target_config.as_ref().map_or_else(|| run.target.clone(), |t| t.name.clone())
}

/// Reads fleet `name` (the newest fleet when `None`): its runs, oldest first.
pub async fn load_fleet(store: &dyn ReadJournal, name: Option<&str>) -> Result<FleetReport, LoadError> {
    let runs = store.list_runs(i64::MAX).await?;
    let fleet = match name {
        Some(n) => n.to_string(),
        None => runs.iter().find_map(fleet_of).ok_or(LoadError::NoFleet(None))?,
    };
    let mut ids: Vec<RunId> = runs.iter().filter(|r| fleet_of(r).as_deref() == Some(fleet.as_str())).map(|r| r.id).collect();
    if ids.is_empty() {
        return Err(LoadError::NoFleet(Some(fleet)));
    }
    ids.sort();
    let mut data = Vec::new();
    for id in ids {
        data.push(load(store, id).await?);
    }
    Ok(build(fleet, &data))
}

fn count(d: &RunData, status: RuleStatus) -> usize {
    d.rules.iter().filter(|r| r.status == status).count()
}

fn build(fleet: String, runs: &[RunData]) -> FleetReport {
    let mut targets = Vec::new();
    let mut by_rule: BTreeMap<String, FleetEscalation> = BTreeMap::new();
    for d in runs {
        let target = target_of(&d.run);
        let wall_secs = d.summary.as_ref().map_or(d.run.wall_ms as f64 / 1000.0, |s| s.wall_secs);
        targets.push(TargetRow {
            target: target.clone(),
            run: d.run.id,
            status: d.run.status.to_string(),
            fixed: count(d, RuleStatus::Fixed),
            escalated: count(d, RuleStatus::Escalated),
            still_failing: count(d, RuleStatus::StillFailing),
            score_before: d.run.score_before,
            score_after: d.run.score_after,
            wall: ms((wall_secs * 1000.0) as i64),
            wall_secs,
            healthy: d.summary.as_ref().and_then(|s| s.healthy),
            checklist: format!("temper report {} --format ckl -o {}.ckl", d.run.id, file_name(&target)),
            plan_from: PlanFrom::of(&d.run),
            plan_counts: d.plan.as_ref().map(|p| p.counts.clone()),
            plan: plan_note(d, runs),
        });
        for rule in d.rules.iter().filter(|r| r.status == RuleStatus::Escalated) {
            let e = by_rule.entry(rule.rule_id.clone()).or_insert_with(|| {
                let info = rule_info(rule, None);
                let attempts: Vec<_> = d.attempts.iter().filter(|a| a.spec.rule_id == rule.rule_id).collect();
                let step = next_steps(&info, rule, &attempts, d).into_iter().next().expect("never empty");
                FleetEscalation {
                    rule_id: rule.rule_id.clone(),
                    short_id: short(&rule.rule_id).to_string(),
                    title: rule.title.clone(),
                    targets: Vec::new(),
                    recurs: false,
                    reason: rule.reason.clone().unwrap_or_default(),
                    next_step: step,
                }
            });
            e.targets.push(target.clone());
            e.recurs = e.targets.len() > 1;
        }
    }
    let mut escalations: Vec<FleetEscalation> = by_rule.into_values().collect();
    escalations.sort_by(|a, b| b.targets.len().cmp(&a.targets.len()).then(a.rule_id.cmp(&b.rule_id)));
    let fixed = targets.iter().map(|t| t.fixed).sum();
    let escalated = targets.iter().map(|t| t.escalated).sum();
    FleetReport { fleet, targets, escalations, fixed, escalated }
}

/// A run's part in the fleet's plan: the source of the plan the others were given (or not), or
/// a run that applied one (how its steps ended) or went through the full loop without it (why).
fn plan_note(d: &RunData, runs: &[RunData]) -> Option<String> {
    let gave = runs.iter().filter_map(|o| PlanFrom::of(&o.run)).find(|p| match p {
        PlanFrom::Applied { run, .. } => *run == d.run.id,
        PlanFrom::Withheld { run, .. } => *run == Some(d.run.id),
    });
    if let Some(p) = gave {
        return Some(match p {
            PlanFrom::Applied { steps, .. } => format!("the plan's source: its proven plan ({steps} steps) was handed on"),
            PlanFrom::Withheld { why, .. } => format!("the plan's source: not handed on, {why}"),
        });
    }
    let counts = d.plan.as_ref().map(|p| {
        let c = &p.counts;
        format!("{} kept, {} redone, {} not fixed, {} not applied", c.kept, c.redone, c.escalated + c.open, c.not_applied)
    });
    match (PlanFrom::of(&d.run), counts) {
        (Some(PlanFrom::Withheld { target, why, .. }), _) => Some(format!("full loop: {target}'s plan was not handed on, {why}")),
        (Some(PlanFrom::Applied { target, run, .. }), c) => Some(format!("applied {target}'s plan (run {run}): {}", c.unwrap_or_default())),
        (None, Some(c)) => Some(format!("applied a plan: {c}")),
        (None, None) => None,
    }
}
