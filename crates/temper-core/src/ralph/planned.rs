//! A proven plan's steps (`temper run --plan`): before the Architect is asked, the first step, in
//! the plan's order, whose rule is offered and has no plan attempt yet is run as the rule's
//! attempt (source `plan`), checked like any fix. A step that fails is reflected on and its rule
//! goes to the normal loop: the content's own fix next (unless the step was that fix), then
//! whatever the agent offers. A rule the target passes already is never offered.
//!
//! The skill's order holds a step back while other rules are open (`last`, `after`). In a batch,
//! the steps before it count as done. When the held steps wait only on the loop's other rules,
//! and all the plan's untried steps would fit in one batch, that batch waits: the loop works
//! the other rules first, so the held steps join the batch and need no check of their own.
use super::steps::{Batch, Picker};
use std::collections::HashSet;

use super::pick::{Pick, Preset};
use super::{LoopResult, Ralph};
use crate::agent::{ApplyFix, Candidate, FixContext, FixSource};
use crate::journal::{EventData, Picked, PickedBy, RuleStatus};
use crate::plan::PlannedFix;

/// The plan's untried steps whose rules are open and in scope, as the next batch may take them.
#[derive(Debug, Default)]
pub(super) struct Tail {
    /// The next batch's steps, in the plan's order: those the skill's order lets go now.
    pub due: Vec<PlannedFix>,
    /// The untried steps left for later: held back, or past the batch's room.
    pub after: Vec<PlannedFix>,
    /// The batch waits for the loop's other rules, which hold steps back (see above).
    pub waits: bool,
}

impl Tail {
    /// Whether `rule` is an untried step's, which the Architect is not offered while it waits.
    fn holds(&self, rule: &str) -> bool {
        self.due.iter().chain(&self.after).any(|s| s.rule == rule)
    }
}

impl Ralph<'_> {
    /// The plan's tail, for a batch of at most `room` steps.
    pub(super) async fn plan_tail(&self, room: usize) -> LoopResult<Tail> {
        if self.settings.plan.is_empty() {
            return Ok(Tail::default());
        }
        let tried = Batch::new(self).plan_tried().await?;
        let rules = self.journal.rules().await?;
        let open: Vec<&str> =
            rules.iter().filter(|r| r.status == RuleStatus::Pending && self.in_scope(&r.rule_id)).map(|r| r.rule_id.as_str()).collect();
        let mut tail = Tail::default();
        let mut held = false;
        for step in self.settings.plan.iter().filter(|s| open.contains(&s.rule.as_str()) && !tried.contains(&s.rule)) {
            let others: Vec<&str> =
                open.iter().filter(|r| !tail.due.iter().any(|d| d.rule == **r)).map(|r| temper_scap::short_rule_id(r)).collect();
            let holds = self.skill.held_back(temper_scap::short_rule_id(&step.rule), &others).is_some();
            held |= holds;
            if holds || tail.due.len() == room {
                tail.after.push(step.clone());
            } else {
                tail.due.push(step.clone());
            }
        }
        let fits = tail.due.len() + tail.after.len() <= room;
        if held && fits && self.settings.max_rules.is_none() {
            let others = self.candidates().await?.into_iter().filter(|c| !tail.holds(&c.rule_id)).count();
            tail.waits = others > 0;
        }
        Ok(tail)
    }

    /// The open rules the Architect is offered now: [`Self::candidates`], less the plan's steps
    /// while their batch waits for the others.
    pub(super) async fn offered(&self) -> LoopResult<Vec<Candidate>> {
        let mut candidates = self.candidates().await?;
        let tail = self.plan_tail(super::plan_batch::PLAN_BATCH).await?;
        if tail.waits {
            candidates.retain(|c| !tail.holds(&c.rule_id));
        }
        Ok(candidates)
    }

    /// A plan's derived step `n`, derived again from this target's own evidence and tries (the
    /// ones `ctx` holds): its fix, or why there is none (the step is then refused, nothing run).
    pub(super) fn derive_step(&self, n: usize, ctx: &FixContext) -> Result<ApplyFix, String> {
        let derive = self.settings.derive.ok_or("this run derives no fixes")?;
        let refused = |why: String| format!("step {n} of the proven plan is derived, and derived again on this target: {why}");
        let fix = derive(ctx.evidence.as_ref(), &ctx.tried).map_err(refused)?;
        Ok(ApplyFix { description: format!("derived again on this target from its own evidence: {}", fix.description), ..fix })
    }

    /// After a plan step on `rule` failed: the content's own fix as the next attempt, unless the
    /// step was that fix (`tried`) or there is none.
    pub(super) fn stock_after_plan(&self, rule: &str, tried: &str) -> Option<Preset> {
        let script = self.content.rule(rule)?.fix.as_ref()?.script.clone();
        if script.trim().is_empty() || script == tried {
            return None;
        }
        let fix = ApplyFix { fix_script: script, revert_script: String::new(), description: format!("stock fix for {rule}") };
        Some(Preset { fix, source: FixSource::Stock, replayed: false, remembered: None, derived: None })
    }
}

impl Picker<'_, '_> {
    /// The next plan step to apply, picked by the harness.
    pub(super) async fn planned_pick(&self, candidates: &[Candidate]) -> LoopResult<Option<Pick>> {
        if self.ralph.settings.plan.is_empty() {
            return Ok(None);
        }
        let tried = Batch::new(self.ralph).plan_tried().await?;
        let offered: HashSet<&str> = candidates.iter().map(|c| c.rule_id.as_str()).collect();
        let Some(step) = self.ralph.settings.plan.iter().find(|s| offered.contains(s.rule.as_str()) && !tried.contains(&s.rule)) else {
            return Ok(None);
        };
        let plan = format!("step {} of the proven plan", step.n);
        self.ralph.note(Some(&step.rule), EventData::Pick(Picked { plan: plan.clone(), by: PickedBy::Plan { plan_step: step.n } })).await?;
        let preset = Preset {
            fix: step.fix.clone(),
            source: FixSource::Plan,
            replayed: false,
            remembered: None,
            derived: step.derived.then_some(step.n),
        };
        Ok(Some(Pick { rule_id: step.rule.clone(), plan, preset: Some(preset) }))
    }
}
