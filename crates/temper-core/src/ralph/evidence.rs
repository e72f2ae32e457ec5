//! The rule's evidence before a fix: with the OVAL engine, what the scanner finds wrong now,
//! after every fix kept since the first scan, for the Worker, the journal and the report. At the
//! end, the same for every rule left failing (`final_evidence`).
//!
//! It costs a one-rule rescan, unless the rescan after the previous fix looked ahead: that rescan
//! also evaluates the rule likely to be picked next, and once the fix is kept the machine is just
//! as the next attempt starts from, so its evidence is that rule's before-evidence.
use temper_scap::Outcome;
use temper_scap::oval::Evidence;

use super::{LoopResult, Ralph, RunState};
use crate::scan::{Engine, Scan};

/// A rule's evidence, taken by a rescan that looked ahead, valid while the guest is at `head`.
#[derive(Debug, Clone)]
pub struct Ahead {
    pub rule: String,
    pub head: String,
    pub evidence: Option<Evidence>,
}

impl Ahead {
    /// The evidence, when the attempt is of this rule and starts where the rescan saw the guest.
    pub fn for_attempt(self, rule: &str, head: &str) -> Option<Option<Evidence>> {
        (self.rule == rule && self.head == head).then_some(self.evidence)
    }
}

impl Ralph<'_> {
    /// The evidence before a fix of `rule`, and whether it was looked ahead (when that is still
    /// the state) rather than rescanned. `None` with the xccdf engine, when the rule passes, or
    /// when the scan fails (the attempt goes on without it: evidence informs, the rescan after
    /// the fix judges).
    pub(super) async fn evidence_before(&self, state: &mut RunState, rule: &str) -> (Option<Evidence>, bool) {
        let head = state.head().to_string();
        match state.ahead.take().and_then(|a| a.for_attempt(rule, &head)) {
            Some(evidence) => (evidence, true),
            None => (self.evidence_now(rule).await, false),
        }
    }

    async fn evidence_now(&self, rule: &str) -> Option<Evidence> {
        if self.scanner.engine() != Engine::Oval {
            return None;
        }
        match self.scanner.scan(self.guest, &[rule.to_string()]).await {
            Ok(scan) => scan.evidence_of(rule).cloned(),
            Err(e) => {
                tracing::warn!(rule, error = %e, "no evidence before the fix: the rescan failed");
                None
            }
        }
    }

    /// What the final scan found wrong with each rule still failing, attempted or not, kept
    /// with the rule for the reports: from the scan where it has it (the tree walkers it split
    /// off), else from one rescan of the rest through the OVAL engine. None with the xccdf
    /// engine; a rescan that fails leaves them without (evidence informs, it judges nothing).
    pub(super) async fn final_evidence(&self, scan: &Scan) -> LoopResult<()> {
        if self.scanner.engine() != Engine::Oval {
            return Ok(());
        }
        let known: Vec<String> = self.store.rules(self.run).await?.into_iter().map(|r| r.rule_id).collect();
        let failing: Vec<String> = scan.with(Outcome::Fail).into_iter().filter(|r| known.contains(r)).collect();
        let rest: Vec<String> = failing.iter().filter(|r| scan.evidence_of(r).is_none()).cloned().collect();
        let rescan = if rest.is_empty() {
            None
        } else {
            let scan = self.scanner.scan(self.guest, &rest).await;
            scan.inspect_err(
                |e| tracing::warn!(rules = rest.len(), error = %e, "no evidence for the rules left failing: the rescan failed"),
            )
            .ok()
        };
        for rule in &failing {
            if let Some(e) = scan.evidence_of(rule).or_else(|| rescan.as_ref()?.evidence_of(rule)) {
                self.store.set_final_evidence(self.run, rule, e).await?;
            }
        }
        Ok(())
    }

    /// The rule to look ahead to while `rule` is rescanned: the first other open candidate with a
    /// stock fix (the stock Architect's next pick), when it adds little to the rescan (one OVAL
    /// definition, not a tree walk). `None` with the xccdf engine.
    pub(super) async fn next_up(&self, rule: &str) -> LoopResult<Option<String>> {
        if self.scanner.engine() != Engine::Oval {
            return Ok(None);
        }
        // Candidates are open (pending) rules in scope.
        let next = self.candidates().await?.into_iter().find(|c| c.rule_id != rule && c.has_stock_fix && c.attempts == 0);
        let Some(next) = next.map(|c| c.rule_id) else { return Ok(None) };
        // Planned with the rule: a variable the two bind differently would send it to xccdf.
        let pair = [rule.to_string(), next.clone()];
        let cheap = self.scanner.tree_walkers(&pair[1..]).is_empty() && self.scanner.without_own_xccdf(&pair).contains(&next);
        Ok(cheap.then_some(next))
    }
}

#[cfg(test)]
mod tests {
    use super::Ahead;

    #[test]
    fn looked_ahead_evidence_serves_only_that_rule_at_that_head() {
        let ahead = || Ahead { rule: "b".into(), head: "s-a".into(), evidence: None };
        assert_eq!(ahead().for_attempt("b", "s-a"), Some(None), "the rule looked ahead to, where the rescan saw it");
        assert_eq!(ahead().for_attempt("c", "s-a"), None, "another rule was picked: it gets a rescan");
        assert_eq!(ahead().for_attempt("b", "s-z"), None, "the guest moved (a bisection restored another snapshot)");
    }
}
