//! The exported image's evidence: the run's records with each rule's result as the host judged
//! the image's own disk (`temper-offline`), not as the guest's scans said. The CKL, CKLB, OSCAL
//! assessment results, HDF and HTML beside the image render this; each rule's reason says how it
//! was judged (offline from the disk, or live only with its last live result before the
//! handover), and a held rule's says what the handover did and that its harness waiver ended.
use std::collections::HashMap;

use temper_core::handover::{HeldFor, HeldRule, Settle};
use temper_journal::offline::{DiskJudgement, OfflineVerdict};
use temper_journal::{Rule, RuleStatus, ScanResult};
use temper_report::RunData;
use temper_scap::{Benchmark, Outcome, RuleResult, TestResult};

/// `data` as the image's evidence ([`image_rules`]).
pub fn image_data(data: &RunData, judged: &DiskJudgement, held: &[HeldRule]) -> RunData {
    let mut out = data.clone();
    image_rules(&mut out.rules, judged, held);
    out
}

/// Every rule the judgement names gets its verdict, and a result judged from the disk replaces
/// the run's final one; a held rule's status becomes what the handover made of it.
pub fn image_rules(rules: &mut [Rule], judged: &DiskJudgement, held: &[HeldRule]) {
    let verdicts: HashMap<&str, &OfflineVerdict> = judged.verdicts.iter().map(|v| (v.rule.as_str(), &v.verdict)).collect();
    for r in rules {
        let Some(v) = verdicts.get(r.rule_id.as_str()) else { continue };
        let held = held.iter().find(|h| h.rule_id == r.rule_id);
        r.offline_verdict = Some((*v).clone());
        let mut said = Vec::new();
        match held {
            Some(h) if h.held_for == HeldFor::Last => said.push(format!("{}: {}", h.settle.label(), h.reason)),
            Some(h) => {
                let waiver = if h.harness_waiver_ended { "; its waiver, held for the harness, ended with it" } else { "" };
                said.push(format!("held for the harness: {}{waiver}", h.settle.label()));
            }
            None => {}
        }
        match v {
            OfflineVerdict::Offline { result, basis } => {
                said.push(format!("the exported image judged offline from its disk ({basis}): {result}"));
                let settled = held.is_some_and(|h| !matches!(h.settle, Settle::StaysWaived { .. } | Settle::Kept));
                r.status = match (*result, r.status.passes()) {
                    // The handover settled it: fixed there, or failing with its waiver ended.
                    (ScanResult::Pass, false) if settled => RuleStatus::Fixed,
                    (ScanResult::Fail, _) if settled => RuleStatus::StillFailing,
                    // The guest's scan passed it; its disk does not.
                    (ScanResult::Fail, true) => RuleStatus::StillFailing,
                    _ => r.status,
                };
                r.final_result = Some(*result);
            }
            OfflineVerdict::LiveOnly { needs, live } => {
                let needs: Vec<&str> = needs.iter().map(|n| n.as_str()).collect();
                let live = live.or(r.final_result).map_or("none".to_string(), |l| l.to_string());
                said.push(format!("judged live only ({}): its last live result, before the handover, {live}", needs.join(", ")));
            }
            OfflineVerdict::NotJudged { why, live } => {
                let live = live.or(r.final_result).map_or("none".to_string(), |l| l.to_string());
                said.push(format!("not judged offline ({why}): its last live result, before the handover, {live}"));
            }
        }
        let before = r.reason.take().filter(|s| !s.is_empty());
        r.reason = Some(said.into_iter().chain(before).collect::<Vec<_>>().join("; "));
    }
}

/// The XCCDF default score of a disk's judgement, as the run's scans are scored: each rule's
/// result from the disk, or its last live result where the disk cannot judge it.
pub fn score(judged: &DiskJudgement, live: &HashMap<String, ScanResult>, content: &Benchmark) -> Option<f64> {
    let rule_results = judged
        .verdicts
        .iter()
        .filter_map(|v| {
            let result = v.verdict.offline().or_else(|| live.get(&v.rule).copied())?;
            let outcome = result.as_str().parse::<Outcome>().ok()?;
            Some(RuleResult { idref: v.rule.clone(), result: outcome, severity: Default::default(), time: None })
        })
        .collect();
    content.score_tree.default_score(&TestResult { rule_results, ..TestResult::default() })
}

#[cfg(test)]
mod tests;
