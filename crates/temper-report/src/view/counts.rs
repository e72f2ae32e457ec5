//! The summary's counts: scan results, dispositions before and after, time per role, reverts.
use std::collections::BTreeMap;

use serde::Serialize;
use temper_journal::{self as journal, Attempt, RuleStatus, ScanResult, count_by};

use crate::run::RunData;
use crate::text::ms;

#[derive(Debug, Serialize)]
pub struct RoleTime {
    pub role: String,
    pub turns: usize,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub time: String,
    pub errors: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct BeforeAfter {
    pub name: String,
    pub before: usize,
    pub after: usize,
}

/// The dispositions shown even at zero, in this order.
pub(super) const DISPOSITIONS: [RuleStatus; 6] =
    [RuleStatus::Fixed, RuleStatus::Escalated, RuleStatus::StillFailing, RuleStatus::Skipped, RuleStatus::Waived, RuleStatus::Deferred];

pub(super) fn results(rules: &[journal::Rule]) -> Vec<BeforeAfter> {
    let mut m: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (name, n) in count_by(rules, |r| Some(r.initial_result)) {
        m.entry(name).or_default().0 = n;
    }
    for (name, n) in count_by(rules, |r| r.final_result) {
        m.entry(name).or_default().1 = n;
    }
    let rank = |s: &str| ["fail", "error", "unknown", "pass", "notapplicable", "notchecked"].iter().position(|x| *x == s).unwrap_or(9);
    let mut v: Vec<BeforeAfter> = m.into_iter().map(|(name, (before, after))| BeforeAfter { name, before, after }).collect();
    v.sort_by_key(|c| (rank(&c.name), c.name.clone()));
    v
}

/// Before the run every failing rule is open (its first-scan status); after, its final status.
pub(super) fn dispositions(rules: &[journal::Rule]) -> Vec<BeforeAfter> {
    let after = |s: RuleStatus| rules.iter().filter(|r| r.status == s).count();
    // Other statuses, where rules have them, by name.
    let mut others: Vec<RuleStatus> = RuleStatus::ALL.iter().copied().filter(|s| !DISPOSITIONS.contains(s) && after(*s) > 0).collect();
    others.sort_by_key(|s| s.as_str());
    DISPOSITIONS.into_iter().chain(others).map(|s| BeforeAfter { name: s.to_string(), before: before(s, rules), after: after(s) }).collect()
}

/// How many rules the first scan left as `status`: failing rules open, the rest as scanned.
pub(super) fn before(status: RuleStatus, rules: &[journal::Rule]) -> usize {
    let scanned = |s: ScanResult| rules.iter().filter(|r| r.initial_result == s).count();
    match status {
        // Set aside at the first scan: so they stay.
        RuleStatus::Skipped | RuleStatus::Waived | RuleStatus::Deferred | RuleStatus::OutOfScope => {
            rules.iter().filter(|r| r.status == status).count()
        }
        RuleStatus::StillFailing => rules.iter().filter(|r| r.initial_result == ScanResult::Fail && !r.status.set_aside()).count(),
        RuleStatus::Passing => scanned(ScanResult::Pass),
        RuleStatus::Fixed | RuleStatus::Escalated | RuleStatus::Pending | RuleStatus::Unstable => 0,
        RuleStatus::NotApplicable => scanned(ScanResult::NotApplicable),
        RuleStatus::NotChecked => scanned(ScanResult::NotChecked),
        RuleStatus::NotSelected => scanned(ScanResult::NotSelected),
        RuleStatus::Error => scanned(ScanResult::Error),
        RuleStatus::Unknown => scanned(ScanResult::Unknown),
        RuleStatus::Informational => scanned(ScanResult::Informational),
    }
}

pub(super) fn roles(data: &RunData) -> Vec<RoleTime> {
    let mut m: BTreeMap<String, RoleTime> = BTreeMap::new();
    let mut lat: BTreeMap<String, i64> = BTreeMap::new();
    for t in &data.turns {
        let e = m.entry(t.role.to_string()).or_insert_with(|| RoleTime {
            role: t.role.to_string(),
            turns: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            time: String::new(),
            errors: 0,
        });
        e.turns += 1;
        e.prompt_tokens += t.prompt_tokens.unwrap_or(t.prompt_tokens_est);
        e.completion_tokens += t.completion_tokens.unwrap_or(0);
        e.errors += usize::from(t.error.is_some());
        *lat.entry(t.role.to_string()).or_default() += t.latency_ms;
    }
    m.into_values()
        .map(|mut r| {
            r.time = ms(lat.get(&r.role).copied().unwrap_or(0));
            r
        })
        .collect()
}

pub(super) fn reverts(attempts: &[Attempt]) -> Vec<BeforeAfter> {
    journal::reverts(attempts).into_iter().map(|(name, n)| BeforeAfter { name, before: 0, after: n }).collect()
}
