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
use std::collections::HashSet;
use temper_journal::FixSource;
use temper_journal::turn::ApplyFix;

use super::Offer;
use crate::agent::{Candidate, FixContext};
use crate::ralph::error::LoopResult;
use temper_journal::plan::PlannedFix;
use temper_journal::{AttemptState, EventData, RuleStatus};

/// The plan's untried steps whose rules are open and in scope, as the next batch may take them.
#[derive(Debug, Default)]
pub(in crate::ralph) struct PlanTail {
    /// The next batch's steps, in the plan's order: those the skill's order lets go now.
    pub due: Vec<PlannedFix>,
    /// The untried steps left for later: held back, or past the batch's room.
    pub after: Vec<PlannedFix>,
    /// The batch waits for the loop's other rules, which hold steps back (see above).
    pub waits: bool,
}

impl PlanTail {
    /// Whether `rule` is an untried step's, which the Architect is not offered while it waits.
    pub fn holds(&self, rule: &str) -> bool {
        self.due.iter().chain(&self.after).any(|s| s.rule == rule)
    }
}

impl Offer<'_> {
    /// The plan's steps, in order.
    pub fn plan(&self) -> &[PlannedFix] {
        &self.plan
    }

    /// The plan's tail, for a batch of at most `room` steps.
    pub async fn plan_tail(&self, room: usize) -> LoopResult<PlanTail> {
        if self.plan.is_empty() {
            return Ok(PlanTail::default());
        }
        let tried = self.plan_tried().await?;
        let rules = self.journal.rules().await?;
        let open: Vec<&str> =
            rules.iter().filter(|r| r.status == RuleStatus::Pending && self.in_scope(&r.rule_id)).map(|r| r.rule_id.as_str()).collect();
        let mut tail = PlanTail::default();
        let mut held = false;
        for step in self.plan.iter().filter(|s| open.contains(&s.rule.as_str()) && !tried.contains(&s.rule)) {
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
        if held && fits && self.max_rules.is_none() {
            let others = self.candidates().await?.into_iter().filter(|c| !tail.holds(&c.rule_id)).count();
            tail.waits = others > 0;
        }
        Ok(tail)
    }

    /// The open rules the Architect is offered now: [`Self::candidates`], less the plan's steps
    /// while their batch waits for the others.
    pub async fn offered(&self) -> LoopResult<Vec<Candidate>> {
        let mut candidates = self.candidates().await?;
        if self.plan.is_empty() {
            return Ok(candidates);
        }
        let room = self.plan_room(self.clean_plan_batches().await?);
        let tail = self.plan_tail(room).await?;
        if tail.waits {
            candidates.retain(|c| !tail.holds(&c.rule_id));
        }
        Ok(candidates)
    }

    /// The plan batches the journal has checked clean since the last that failed.
    pub async fn clean_plan_batches(&self) -> LoopResult<usize> {
        let events = self.journal.events(None).await?;
        let checked = events.iter().rev().filter_map(|e| match &e.data {
            EventData::PlanBatch(b) => Some(b.failed.is_empty() && b.guard.is_none()),
            _ => None,
        });
        Ok(checked.take_while(|clean| *clean).count())
    }

    /// How many steps a plan batch may take after `clean` clean batches in a row
    /// ([`PlanBatches`](crate::ralph::settings::PlanBatches)).
    pub fn plan_room(&self, clean: usize) -> usize {
        self.plan_batches.room(clean)
    }

    /// A plan's derived step `n`, derived again from this target's own evidence and tries (the
    /// ones `ctx` holds): its fix, or why there is none (the step is then refused, nothing run).
    pub fn derive_step(&self, n: usize, ctx: &FixContext) -> Result<ApplyFix, String> {
        let derive = self.derive.ok_or("this run derives no fixes")?;
        let refused = |why: String| format!("step {n} of the proven plan is derived, and derived again on this target: {why}");
        let fix = derive(ctx.evidence.as_ref(), &ctx.tried).map_err(refused)?;
        Ok(ApplyFix { description: format!("derived again on this target from its own evidence: {}", fix.description), ..fix })
    }

    /// The rules with a plan attempt that counts (not one set aside or interrupted).
    pub async fn plan_tried(&self) -> LoopResult<HashSet<String>> {
        let attempts = self.journal.attempts().await?;
        let counts = |a: &temper_journal::Attempt| a.spec.source == FixSource::Plan && a.state != AttemptState::Interrupted;
        Ok(attempts.into_iter().filter(counts).map(|a| a.spec.rule_id).collect())
    }
}
