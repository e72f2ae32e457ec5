//! The rules likely next, whose result and evidence a rescan may take ahead of their own
//! attempts (`attempt/evidence.rs`, `check/`): only when they add little to that rescan.
use super::Offer;
use crate::ralph::error::LoopResult;
use temper_journal::Engine;

impl Offer<'_> {
    /// The rule to look ahead to while `rule` is rescanned: the first other open candidate with a
    /// stock fix (the stock Architect's next pick), when it adds little to the rescan (one OVAL
    /// definition, not a tree walk; with the xccdf engine, one more `--rule`).
    pub async fn next_up(&self, rule: &str) -> LoopResult<Option<String>> {
        // Candidates are open (pending) rules in scope.
        let next = self.offered().await?.into_iter().find(|c| c.rule_id != rule && c.has_stock_fix && c.attempts == 0);
        let Some(next) = next.map(|c| c.rule_id) else { return Ok(None) };
        // Planned with the rule: a variable the two bind differently would send it to xccdf.
        let pair = [rule.to_string(), next.clone()];
        let cheap = self.scanner.tree_walkers(&pair[1..]).is_empty() && self.scanner.without_own_xccdf(&pair).contains(&next);
        Ok(cheap.then_some(next))
    }

    /// The next `n` open untried candidates with a stock fix (the stock Architect's next picks)
    /// whose evidence a batch's check can take beside `rules` at no `oscap xccdf eval` of their
    /// own, nor any more for `rules`. None with the xccdf engine.
    pub async fn next_stock(&self, n: usize, rules: &[String]) -> LoopResult<Vec<String>> {
        if self.scanner.engine() != Engine::Oval || n == 0 {
            return Ok(Vec::new());
        }
        let next: Vec<String> = self
            .offered()
            .await?
            .into_iter()
            .filter(|c| c.has_stock_fix && c.attempts == 0 && !rules.contains(&c.rule_id))
            .take(n)
            .map(|c| c.rule_id)
            .collect();
        let next = self.scanner.cheap_evidence(&next);
        let with: Vec<String> = rules.iter().chain(&next).cloned().collect();
        let own = |rules: &[String]| rules.len() - self.scanner.without_own_xccdf(rules).len();
        Ok(if own(&with) == own(rules) { next } else { Vec::new() })
    }
}
