//! The stock fixes' second pass. oscap runs every fix in one pass, so their side effects add
//! up; temper verifies one at a time, so a stock fix that failed early may work once later fixes
//! are in. When nothing else is left to pick, each rule escalated after its stock fix failed or
//! left it failing gets that fix once more, fully verified, in the skill's order, provided a fix
//! kept since has changed the system.

use super::Picker;
use crate::ralph::error::LoopResult;
use crate::ralph::trial::Pick;
use temper_journal::Verdict;
use temper_journal::{Attempt, EventData, Picked, PickedBy, Rule, RuleStatus};

impl Picker<'_> {
    /// The next rule for the second pass, reopened; `None` when there is none.
    pub(super) async fn second_pass(&self) -> LoopResult<Option<Pick>> {
        let attempts = self.books.journal().attempts().await?;
        let mut due: Vec<(_, Rule, usize)> = Vec::new();
        for r in self.books.journal().rules().await? {
            if r.status != RuleStatus::Escalated || !self.offer.in_scope(&r.rule_id) {
                continue;
            }
            let stock: Vec<&Attempt> = attempts.iter().filter(|a| a.spec.rule_id == r.rule_id && a.is_stock_try()).collect();
            // Once: the first pass's stock attempt, and no second one yet.
            let [first] = stock.as_slice() else { continue };
            if !matches!(first.verdict, Some(Verdict::ApplyFailed | Verdict::StillFailing)) {
                continue;
            }
            let kept_since = attempts.iter().filter(|a| a.id > first.id && a.in_force()).count();
            if kept_since == 0 {
                continue;
            }
            due.push((self.offer.rank(&r), r, kept_since));
        }
        due.sort_by_key(|(rank, r, _)| (*rank, r.id));
        let Some((_, rule, kept_since)) = due.into_iter().next() else { return Ok(None) };
        let Some(preset) = self.offer.stock_fix(&rule.rule_id, "") else { return Ok(None) };
        let plan = format!("second pass: the stock fix again, after {kept_since} fixes kept since its first try");
        self.books.journal().set_rule_status(&rule.rule_id, RuleStatus::Pending, Some(&plan)).await?;
        let by = PickedBy::SecondPass { second_pass: true, kept_since };
        self.books.note(Some(&rule.rule_id), EventData::Pick(Picked { plan: plan.clone(), by })).await?;
        Ok(Some(Pick { rule_id: rule.rule_id, plan, preset: Some(preset) }))
    }
}
