//! A proven plan's next step, picked by the harness before the Architect is asked (`offer/plan.rs`
//! says which steps are due and which wait).
use std::collections::HashSet;
use temper_journal::FixSource;

use super::Picker;
use crate::agent::Candidate;
use crate::ralph::error::LoopResult;
use crate::ralph::trial::{Pick, Preset};
use temper_journal::{EventData, Picked, PickedBy};

impl Picker<'_> {
    /// The next plan step to apply, picked by the harness.
    pub(super) async fn planned_pick(&self, candidates: &[Candidate]) -> LoopResult<Option<Pick>> {
        if self.offer.plan().is_empty() {
            return Ok(None);
        }
        let tried = self.offer.plan_tried().await?;
        let offered: HashSet<&str> = candidates.iter().map(|c| c.rule_id.as_str()).collect();
        let Some(step) = self.offer.plan().iter().find(|s| offered.contains(s.rule.as_str()) && !tried.contains(&s.rule)) else {
            return Ok(None);
        };
        let plan = format!("step {} of the proven plan", step.n);
        self.books.note(Some(&step.rule), EventData::Pick(Picked { plan: plan.clone(), by: PickedBy::Plan { plan_step: step.n } })).await?;
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
