//! What the run shares with its skill's memory: the rule's episodes, and the fixes remembered
//! across targets (`pick/remembered.rs` tries them). An LLM-written fix that is kept and passes
//! its regression check is remembered; each try of a remembered fix is counted, and two failures
//! in a row retire it.
use super::Books;
use crate::ralph::error::LoopResult;
use temper_journal::FixSource;
use temper_journal::Verdict;
use temper_journal::{Attempt, MemoryId, NewRememberedFix};

impl Books<'_> {
    /// The rule's episodic memory: its distilled lessons, oldest first.
    pub async fn episodes(&self, rule: &str) -> LoopResult<Vec<String>> {
        Ok(self.journal.memory().lessons(self.recall().rule(rule)).await?.into_iter().rev().map(|l| l.distilled).collect())
    }

    /// Counts a remembered fix's try: kept or not.
    pub async fn count_remembered(&self, id: MemoryId, verdict: Verdict) -> LoopResult<()> {
        let f = self.journal.memory().count_remembered(id, verdict == Verdict::Fixed).await?;
        if f.retired_at.is_some() && verdict != Verdict::Fixed {
            tracing::info!(fix = id.get(), rule = %f.rule_id, "remembered fix retired after failing twice in a row");
        }
        Ok(())
    }

    /// Remembers the LLM-written fixes among `kept` (kept, regression set clean).
    pub async fn remember(&self, kept: impl IntoIterator<Item = Attempt>) -> LoopResult<()> {
        for a in kept.into_iter().filter(|a| matches!(a.spec.source, FixSource::Llm | FixSource::LlmText)) {
            let fix = NewRememberedFix {
                skill: self.skill.clone(),
                rule_id: a.spec.rule_id,
                fix_script: a.spec.fix_script,
                revert_script: a.spec.revert_script,
                description: a.spec.description,
                run_id: self.id(),
                attempt_id: a.id,
            };
            self.journal.memory().remember_fix(&fix).await?;
        }
        Ok(())
    }
}
