//! The rule before a fix: its result now, after every fix kept since the first scan (an attempt
//! runs only on a rule that still reads failing then, so no fix is credited with another's
//! work), and with the OVAL engine what the scanner finds wrong, for the Worker, the journal and
//! the report. At the end, the evidence of every rule left failing (`final_evidence`).
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

use super::ahead::Seen;
use super::{Ahead, LoopResult, Ralph, RunState};
use crate::scan::{Engine, Scan};

/// The rule before an attempt, as the guest stands now.
pub(super) struct Before {
    /// Its result and evidence; `None` when the rescan failed (the attempt goes on: the rescan
    /// after the fix judges it).
    pub seen: Option<Seen>,
    /// Taken by a rescan that looked ahead, not one of its own.
    pub looked_ahead: bool,
    /// What that rescan took for other rules, still valid while nothing runs on the guest.
    pub rest: Option<Ahead>,
}

impl Before {
    pub fn evidence(&self) -> Option<Evidence> {
        self.seen.as_ref().and_then(|s| s.evidence.clone())
    }
}

impl Ralph<'_> {
    /// The rule as a rescan of its own sees it now. Not with the xccdf engine for a rule that
    /// walks a directory tree (minutes under TCG, and no evidence): its attempt goes without.
    async fn seen_now(&self, rule: &str) -> Option<Seen> {
        let rules = [rule.to_string()];
        if self.scanner.engine() == Engine::Xccdf && !self.scanner.costly_walkers(&rules).is_empty() {
            return None;
        }
        match self.scanner.scan(self.guest, &rules).await {
            Ok(scan) => Some(Seen::of(&scan, rule)),
            Err(e) => {
                tracing::warn!(rule, error = %e, "no result before the fix: the rescan failed");
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
    /// definition, not a tree walk; with the xccdf engine, one more `--rule`).
    pub(super) async fn next_up(&self, rule: &str) -> LoopResult<Option<String>> {
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
    /// The rule before a fix: looked ahead when that is still the state, else rescanned.
    pub(super) async fn before(&self, state: &mut RunState, rule: &str) -> Before {
        let head = state.head().to_string();
        let mut ahead = state.take_ahead().and_then(|a| a.at(&head));
        match ahead.as_mut().and_then(|a| a.take(rule)) {
            Some(seen) => Before { seen: Some(seen), looked_ahead: true, rest: ahead },
            None => Before { seen: self.ralph.seen_now(rule).await, looked_ahead: false, rest: ahead },
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
        let mut ahead = rest.and_then(|a| a.at(head)).unwrap_or_else(|| Ahead { head: head.to_string(), seen: BTreeMap::new() });
        let alike: Vec<String> =
            self.ralph.offered().await?.into_iter().filter(|c| !c.has_stock_fix && c.attempts == 0).map(|c| c.rule_id).collect();
        let missing = self.ralph.scanner.cheap_evidence(&alike.into_iter().filter(|r| !ahead.seen.contains_key(r)).collect::<Vec<_>>());
        if !missing.is_empty() {
            match self.ralph.scanner.scan(self.ralph.guest, &missing).await {
                Ok(scan) => ahead.seen.extend(Ahead::of(head, &scan, &missing).seen),
                Err(e) => tracing::warn!(rules = missing.len(), error = %e, "no evidence looked ahead: the rescan failed"),
            }
        }
        Ok((!ahead.is_empty()).then_some(ahead))
    }
}
