//! The rule's evidence before a fix: with the OVAL engine, what the scanner finds wrong now,
//! after every fix kept since the first scan, for the Worker, the journal and the report. At the
//! end, the same for every rule left failing (`final_evidence`).
//!
//! It costs a one-rule rescan, unless a rescan looked ahead to the rule:
//! - the rescan after a fix also evaluates the rule likely to be picked next, and once the fix is
//!   kept the machine is just as the next attempt starts from;
//! - a rule escalated with no fix to try ran nothing on the guest, and the rules likely to follow
//!   it the same way (open, untried, no stock fix) are evaluated together, once (`ahead_past`).
use super::steps::Attempter;
use std::collections::BTreeMap;

use temper_scap::Outcome;
use temper_scap::oval::Evidence;

use super::{Ahead, LoopResult, Ralph, RunState};
use crate::scan::{Engine, Scan};

/// The evidence before an attempt.
pub(super) struct Before {
    pub evidence: Option<Evidence>,
    /// Taken by a rescan that looked ahead, not one of its own.
    pub looked_ahead: bool,
    /// What that rescan took for other rules, still valid while nothing runs on the guest.
    pub rest: Option<Ahead>,
}

impl Ralph<'_> {
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
    /// with the rule for the reports: from the scan (its OVAL results, and the tree walkers it
    /// split off), else from one rescan through the OVAL engine of those it can give evidence
    /// for. None with the xccdf engine; a rescan that fails leaves them without (evidence
    /// informs, it judges nothing).
    pub(super) async fn final_evidence(&self, scan: &Scan) -> LoopResult<()> {
        if self.scanner.engine() != Engine::Oval {
            return Ok(());
        }
        let known: Vec<String> = self.journal.rules().await?.into_iter().map(|r| r.rule_id).collect();
        let failing: Vec<String> = scan.with(Outcome::Fail).into_iter().filter(|r| known.contains(r)).collect();
        let without: Vec<String> = failing.iter().filter(|r| scan.evidence_of(r).is_none()).cloned().collect();
        let rest = self.scanner.without_own_xccdf(&without);
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
                self.journal.set_final_evidence(rule, e).await?;
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
        let next = self.offered().await?.into_iter().find(|c| c.rule_id != rule && c.has_stock_fix && c.attempts == 0);
        let Some(next) = next.map(|c| c.rule_id) else { return Ok(None) };
        // Planned with the rule: a variable the two bind differently would send it to xccdf.
        let pair = [rule.to_string(), next.clone()];
        let cheap = self.scanner.tree_walkers(&pair[1..]).is_empty() && self.scanner.without_own_xccdf(&pair).contains(&next);
        Ok(cheap.then_some(next))
    }

    /// What is left of the evidence looked ahead (`rest`) past a deferred stock fix kept pending
    /// at `head`: that of rules with a stock fix, which their own fix is likely to be next
    /// (the stock Worker derives fixes from evidence, so a derived fix gets fresh evidence).
    pub(super) fn carry(&self, head: &str, rest: Option<Ahead>) -> Option<Ahead> {
        let stock = |r: &str| self.content.rule(r).is_some_and(|c| c.has_fix());
        rest.map(|a| a.carried(head, stock)).filter(|a| !a.evidence.is_empty())
    }

    /// The next `n` open untried candidates with a stock fix (the stock Architect's next picks)
    /// whose evidence a batch's check can take beside `rules` at no `oscap xccdf eval` of their
    /// own, nor any more for `rules`. None with the xccdf engine.
    pub(super) async fn next_stock(&self, n: usize, rules: &[String]) -> LoopResult<Vec<String>> {
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

impl Attempter<'_, '_> {
    /// The evidence before a fix of `rule`: looked ahead when that is still the state, else
    /// rescanned. `None` with the xccdf engine, when the rule passes, or when the scan fails
    /// (the attempt goes on without it: evidence informs, the rescan after the fix judges).
    pub(super) async fn evidence_before(&self, state: &mut RunState, rule: &str) -> Before {
        let head = state.head().to_string();
        let mut ahead = state.take_ahead().and_then(|a| a.at(&head));
        match ahead.as_mut().and_then(|a| a.take(rule)) {
            Some(evidence) => Before { evidence, looked_ahead: true, rest: ahead },
            None if state.batched() => self.evidence_with_next(state, rule).await,
            None => Before { evidence: self.ralph.evidence_now(rule).await, looked_ahead: false, rest: ahead },
        }
    }

    /// The rule's evidence by one rescan that also looks ahead to the next stock fixes (a
    /// batch's worth): while checks are batched those defer their rescans, so nothing else
    /// would take it for them.
    async fn evidence_with_next(&self, state: &RunState, rule: &str) -> Before {
        let none = Before { evidence: None, looked_ahead: false, rest: None };
        let own = [rule.to_string()];
        let next = match self.ralph.next_stock(state.regression_every() as usize, &own).await {
            Ok(next) if !next.is_empty() => next,
            _ => return Before { evidence: self.ralph.evidence_now(rule).await, ..none },
        };
        let rules: Vec<String> = own.into_iter().chain(next.iter().cloned()).collect();
        match self.ralph.scanner.scan(self.ralph.guest, &rules).await {
            Ok(scan) => {
                Before { evidence: scan.evidence_of(rule).cloned(), looked_ahead: false, rest: Some(Ahead::of(state.head(), &scan, &next)) }
            }
            Err(e) => {
                tracing::warn!(rule, error = %e, "no evidence before the fix: the rescan failed");
                none
            }
        }
    }

    /// After `rule` was escalated with nothing run on the guest: `rest`, with the evidence of the
    /// open untried rules with no stock fix that it lacks, taken by one rescan (the stock Worker
    /// derives their fixes from it, or escalates them as well). Tree walkers and rules that need
    /// an `oscap xccdf eval` of their own are left to a rescan each. `None` with the xccdf engine.
    pub(super) async fn ahead_past(&self, state: &RunState, rest: Option<Ahead>) -> LoopResult<Option<Ahead>> {
        if self.ralph.scanner.engine() != Engine::Oval {
            return Ok(None);
        }
        let head = state.head();
        let mut ahead = rest.and_then(|a| a.at(head)).unwrap_or_else(|| Ahead { head: head.to_string(), evidence: BTreeMap::new() });
        let alike: Vec<String> =
            self.ralph.offered().await?.into_iter().filter(|c| !c.has_stock_fix && c.attempts == 0).map(|c| c.rule_id).collect();
        let missing = self.ralph.scanner.cheap_evidence(&alike.into_iter().filter(|r| !ahead.evidence.contains_key(r)).collect::<Vec<_>>());
        if !missing.is_empty() {
            match self.ralph.scanner.scan(self.ralph.guest, &missing).await {
                Ok(scan) => ahead.evidence.extend(Ahead::of(head, &scan, &missing).evidence),
                Err(e) => tracing::warn!(rules = missing.len(), error = %e, "no evidence looked ahead: the rescan failed"),
            }
        }
        Ok((!ahead.evidence.is_empty()).then_some(ahead))
    }
}
