//! A run's rules counted within its scope: the one count where a run stands ([`crate::Standing`]:
//! `temper status`, the web view's progress, the loop's progress line) and the summary's exit
//! code share. Rules out of the run's scope (`out_of_scope`) are counted apart and in nothing
//! else.
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

/// A run's rules in scope, each counted in the one state it has now. In scope: the rules that
/// failed the first scan, and those that did not (not applicable then) but fail since, other
/// rules' fixes having made them applicable; less those outside the run's scope (`--rules`, a
/// plan's), counted apart in `out_of_scope` and in nothing else. At every moment:
///
/// ```text
/// in_scope == failing_at_start + became_applicable
///          == open + fixed + escalated + still_failing + skipped + waived + deferred + unstable + other
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Rules in scope that failed the first scan.
    pub failing_at_start: usize,
    /// Rules in scope that did not fail the first scan and fail since (or were fixed or set
    /// aside since): other rules' fixes made them applicable.
    pub became_applicable: usize,
    /// `failing_at_start + became_applicable`: what the states below add up to.
    pub in_scope: usize,
    /// Still to be worked on (pending).
    pub open: usize,
    pub fixed: usize,
    pub escalated: usize,
    pub still_failing: usize,
    pub skipped: usize,
    pub waived: usize,
    pub deferred: usize,
    /// Fixed, then found to flip with nothing changed.
    pub unstable: usize,
    /// Failing at the first scan, in a status none of the above (none the loop gives such a rule).
    pub other: usize,
    pub out_of_scope: usize,
}

impl Tally {
    pub fn of(rules: &[Rule]) -> Self {
        let mut t = Self::default();
        for r in rules {
            let at_start = r.initial_result == ScanResult::Fail;
            let state = match r.status {
                RuleStatus::OutOfScope => &mut t.out_of_scope,
                RuleStatus::Pending => &mut t.open,
                RuleStatus::Fixed => &mut t.fixed,
                RuleStatus::Escalated => &mut t.escalated,
                RuleStatus::StillFailing => &mut t.still_failing,
                RuleStatus::Skipped => &mut t.skipped,
                RuleStatus::Waived => &mut t.waived,
                RuleStatus::Deferred => &mut t.deferred,
                RuleStatus::Unstable if at_start => &mut t.unstable,
                _ if at_start => &mut t.other,
                // Passing, not applicable and the scanner's other outcomes: never failed.
                _ => continue,
            };
            *state += 1;
            if r.status == RuleStatus::OutOfScope {
                continue;
            }
            t.in_scope += 1;
            match at_start {
                true => t.failing_at_start += 1,
                false => t.became_applicable += 1,
            }
        }
        t
    }

    /// Rules in scope left for a human: still failing or escalated.
    pub fn remaining(&self) -> usize {
        self.escalated + self.still_failing
    }

    /// The states of the rules in scope, each once, by name: fixed, escalated and open always,
    /// the others when some rule has them. They add up to `in_scope`.
    pub fn states(&self) -> Vec<(&'static str, usize)> {
        let always = [("fixed", self.fixed), ("escalated", self.escalated), ("open", self.open)];
        let some = [
            ("still failing", self.still_failing),
            ("skipped", self.skipped),
            ("waived", self.waived),
            ("deferred", self.deferred),
            ("unstable", self.unstable),
            ("other", self.other),
        ];
        always.into_iter().chain(some.into_iter().filter(|(_, n)| *n > 0)).collect()
    }

    /// `166 in scope (145 failing at baseline, 21 became applicable; 3 out of scope)`, the
    /// parts that are zero left out.
    pub fn scope(&self) -> String {
        let mut parts = format!("{} failing at baseline", self.failing_at_start);
        if self.became_applicable > 0 {
            parts += &format!(", {} became applicable", self.became_applicable);
        }
        if self.out_of_scope > 0 {
            parts += &format!("; {} out of scope", self.out_of_scope);
        }
        format!("{} in scope ({parts})", self.in_scope)
    }
}

#[cfg(test)]
mod tests {
    use crate::*;

    fn rule(initial: ScanResult, status: RuleStatus) -> Rule {
        Rule {
            id: 0,
            run_id: RunId::new(1).unwrap(),
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
