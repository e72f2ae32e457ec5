//! A proven plan's steps (`temper run --plan`): before the Architect is asked, the first step, in
//! the plan's order, whose rule is offered and has no plan attempt yet is run as the rule's
//! attempt (source `plan`), checked like any fix. A step that fails is reflected on and its rule
//! goes to the normal loop: the content's own fix next (unless the step was that fix), then
//! whatever the agent offers. A rule the target passes already is never offered.
use super::steps::{Batch, Picker};
use std::collections::HashSet;

use super::pick::{Pick, Preset};
use super::{LoopResult, Ralph};
use crate::agent::{ApplyFix, Candidate, FixSource};
use crate::journal::{EventData, Picked, PickedBy};

impl Ralph<'_> {
    /// After a plan step on `rule` failed: the content's own fix as the next attempt, unless the
    /// step was that fix (`tried`) or there is none.
    pub(super) fn stock_after_plan(&self, rule: &str, tried: &str) -> Option<Preset> {
        let script = self.content.rule(rule)?.fix.as_ref()?.script.clone();
        if script.trim().is_empty() || script == tried {
            return None;
        }
        let fix = ApplyFix { fix_script: script, revert_script: String::new(), description: format!("stock fix for {rule}") };
        Some(Preset { fix, source: FixSource::Stock, replayed: false, remembered: None })
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
        let preset = Preset { fix: step.fix.clone(), source: FixSource::Plan, replayed: false, remembered: None };
        Ok(Some(Pick { rule_id: step.rule.clone(), plan, preset: Some(preset) }))
    }
}
