//! A run's rules counted within its scope: the one count `temper status`, the web view's
//! progress, the loop's progress line and the summary's exit code share. Rules out of the run's
//! scope (`out_of_scope`) are counted apart and in nothing else.
use std::collections::BTreeMap;
use std::fmt::Display;

use serde::Serialize;

use crate::{Attempt, RevertMethod, Rule, RuleStatus, ScanResult};

/// How many of `items` have each key, by the key's name, in name order: rules by status or by
/// scan result, attempts by revert method. An item without a key (`None`) is not counted. The
/// summary and the reports count with it.
pub fn count_by<T, K: Display>(items: &[T], key: impl Fn(&T) -> Option<K>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for k in items.iter().filter_map(key) {
        *m.entry(k.to_string()).or_insert(0) += 1;
    }
    m
}

/// The attempts reverted, by how: those that needed no revert left out.
pub fn reverts(attempts: &[Attempt]) -> BTreeMap<String, usize> {
    count_by(attempts, |a| a.revert_method.filter(|m| *m != RevertMethod::None))
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Rules in scope that failed the first scan.
    pub failing_at_start: usize,
    pub fixed: usize,
    pub escalated: usize,
    pub still_failing: usize,
    /// Failing rules in scope still open (pending).
    pub open: usize,
    pub skipped: usize,
    pub waived: usize,
    pub deferred: usize,
    pub out_of_scope: usize,
}

impl Tally {
    pub fn of(rules: &[Rule]) -> Self {
        let count = |s: RuleStatus| rules.iter().filter(|r| r.status == s).count();
        Self {
            failing_at_start: rules.iter().filter(|r| r.initial_result == ScanResult::Fail && r.status != RuleStatus::OutOfScope).count(),
            fixed: count(RuleStatus::Fixed),
            escalated: count(RuleStatus::Escalated),
            still_failing: count(RuleStatus::StillFailing),
            open: count(RuleStatus::Pending),
            skipped: count(RuleStatus::Skipped),
            waived: count(RuleStatus::Waived),
            deferred: count(RuleStatus::Deferred),
            out_of_scope: count(RuleStatus::OutOfScope),
        }
    }

    /// Rules in scope left for a human: still failing or escalated.
    pub fn remaining(&self) -> usize {
        self.escalated + self.still_failing
    }
}

#[cfg(test)]
mod tests {
    use crate::*;

    fn rule(initial: ScanResult, status: RuleStatus) -> Rule {
        Rule {
            id: 0,
            run_id: RunId(1),
            rule_id: "r".into(),
            title: String::new(),
            severity: Default::default(),
            initial_result: initial,
            final_result: None,
            status,
            reason: None,
            escalation_cause: None,
            attempts: 0,
            elapsed_ms: 0,
            final_evidence: None,
            offline_verdict: None,
        }
    }

    #[test]
    fn rules_out_of_scope_count_in_nothing_but_their_own_count() {
        let rules = [
            rule(ScanResult::Fail, RuleStatus::Fixed),
            rule(ScanResult::Fail, RuleStatus::Pending),
            rule(ScanResult::Fail, RuleStatus::OutOfScope),
            rule(ScanResult::Fail, RuleStatus::OutOfScope),
            rule(ScanResult::Pass, RuleStatus::Passing),
        ];
        let t = Tally::of(&rules);
        assert_eq!((t.failing_at_start, t.open, t.fixed, t.out_of_scope, t.remaining()), (2, 1, 1, 2, 0));
    }

    #[test]
    fn count_by_names_each_key_and_skips_none() {
        let rules = [
            rule(ScanResult::Fail, RuleStatus::Fixed),
            rule(ScanResult::Fail, RuleStatus::Fixed),
            rule(ScanResult::Pass, RuleStatus::Passing),
        ];
        let by_status = count_by(&rules, |r| Some(r.status));
        assert_eq!(by_status.into_iter().collect::<Vec<_>>(), [("fixed".to_string(), 2), ("passing".to_string(), 1)]);
        let failing = count_by(&rules, |r| (r.initial_result == ScanResult::Fail).then_some(r.initial_result));
        assert_eq!(failing.into_iter().collect::<Vec<_>>(), [("fail".to_string(), 2)]);
    }
}
