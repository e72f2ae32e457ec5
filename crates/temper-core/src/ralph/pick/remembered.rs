//! Verified fixes reused across targets. An LLM-written fix that is kept and passes its
//! regression check is remembered for its skill and rule; a run on another target tries it
//! before the Architect or the Worker is asked (source `memory`), once per rule. Each try is
//! counted, and two failures in a row retire the fix (`books/memory.rs`).
use std::collections::HashSet;
use temper_journal::FixSource;
use temper_journal::turn::ApplyFix;

use super::Picker;
use crate::agent::Candidate;
use crate::ralph::error::LoopResult;
use crate::ralph::trial::{Pick, Preset};
use temper_journal::{EventData, Picked, PickedBy};

impl Picker<'_> {
    /// The first candidate with a remembered fix this run has not tried yet, picked by the harness.
    pub(super) async fn remembered_pick(&self, candidates: &[Candidate]) -> LoopResult<Option<Pick>> {
        // Two reads, not two per candidate: the skill's rules with a fix in force (filtered in
        // the database), and the rules this run has tried a remembered fix on.
        let skill = self.skill.name();
        let known: HashSet<String> = self.books.journal().memory().remembered_rules(skill).await?.into_iter().collect();
        if known.is_empty() {
            return Ok(None);
        }
        let tried: HashSet<String> = self
            .books
            .journal()
            .attempts()
            .await?
            .into_iter()
            .filter(|a| a.spec.source == FixSource::Memory)
            .map(|a| a.spec.rule_id)
            .collect();
        for c in candidates.iter().filter(|c| known.contains(&c.rule_id) && !tried.contains(&c.rule_id)) {
            let Some(f) = self.books.journal().memory().remembered_fix(skill, &c.rule_id).await? else { continue };
            let plan = format!("a remembered fix (#{}, kept on {} of {} other targets since it was first kept)", f.id, f.kept, f.tried);
            let by = PickedBy::Memory { memory: f.id, from_run: f.run_id, tried: f.tried, kept: f.kept };
            self.books.note(Some(&c.rule_id), EventData::Pick(Picked { plan: plan.clone(), by })).await?;
            let fix = ApplyFix { fix_script: f.fix_script, revert_script: f.revert_script, description: f.description };
            let preset = Preset { fix, source: FixSource::Memory, replayed: false, remembered: Some(f.id), derived: None };
            return Ok(Some(Pick { rule_id: c.rule_id.clone(), plan, preset: Some(preset) }));
        }
        Ok(None)
    }
}
