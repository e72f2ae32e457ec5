//! OSCAL plan of action and milestones (JSON, OSCAL 1.1.2) of one run: one item per rule left
//! failing or escalated, each with its observation (the evidence), its finding, and its risk
//! whose remediations are the next steps; a rule under an active waiver is an accepted risk
//! (`deviation-approved`, the approver and expiry as properties, the expiry as its deadline).
//! UUIDs are those of the assessment results of the same run, so the two cross-reference.
use serde_json::{Value, json};
use temper_journal::RuleStatus;
use temper_scap::Benchmark;

use crate::assessor::oscal::{self, Doc, RuleDoc, UuidKind, failing, prop, props, text};
use crate::error::ReportError;
use crate::run::RunData;

/// The rules a POA&M lists: those in the run's scope the last scan leaves failing, and the
/// escalated ones.
pub fn open_rules<'a>(rules: &'a [RuleDoc<'a>]) -> impl Iterator<Item = &'a RuleDoc<'a>> {
    rules.iter().filter(|d| d.rule.status != RuleStatus::OutOfScope && (failing(d.result) || d.rule.status == RuleStatus::Escalated))
}

pub fn render(data: &RunData, content: Option<&Benchmark>) -> Result<String, ReportError> {
    let base = Doc::new(data, content);
    let (run, ids, p, rules) = (&data.run, &base.ids, &base.parties, &base.rules);
    let waivers = base.waivers();
    let open: Vec<&RuleDoc> = open_rules(rules).collect();
    let (mut observations, mut risks, mut findings, mut items) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for d in &open {
        let waiver = oscal::waiver_of(&waivers, d.rule);
        observations.push(oscal::observation(data, ids, p, d));
        risks.push(oscal::risk(data, content, ids, p, d, waiver));
        findings.push(oscal::finding(ids, p, d, true));
        let rule = &d.rule.rule_id;
        items.push(json!({
            "uuid": ids.of(UuidKind::PoamItem, rule),
            "title": text(&d.title),
            "description": text(&format!(
                "{}{}",
                d.summary(),
                waiver.map(|w| format!(". Accepted by waiver until {} (approved by {}).", w.expires, w.approved_by)).unwrap_or_default()
            )),
            "props": props([
                prop("rule-id", rule),
                prop("severity", &d.severity),
                prop("temper-status", d.rule.status.as_str()),
                prop("final-scan", d.result.as_str()),
            ]),
            "origins": p.origins(),
            "related-findings": [{"finding-uuid": ids.of(UuidKind::Finding, rule)}],
            "related-observations": [{"observation-uuid": ids.of(UuidKind::Observation, rule)}],
            "related-risks": [{"risk-uuid": ids.of(UuidKind::Risk, rule)}],
        }));
    }
    let profile_title = content.and_then(|c| c.profile.as_ref()).map_or(run.profile.as_str(), |p| p.title.as_str());
    let mut poam = json!({
        "uuid": ids.of(UuidKind::Poam, ""),
        "metadata": oscal::metadata(run, format!("temper run {}: plan of action and milestones for {} ({profile_title})", run.id, run.target)),
        "system-id": {"identifier-type": "http://ietf.org/rfc/rfc4122", "id": p.target},
        "local-definitions": {
            "components": p.components(data, content),
            "inventory-items": p.inventory(run),
        },
        "poam-items": items,
    });
    // OSCAL wants these lists absent rather than empty.
    for (key, list) in [("observations", observations), ("risks", risks), ("findings", findings)] {
        if !list.is_empty() {
            poam[key] = Value::Array(list);
        }
    }
    Ok(serde_json::to_string_pretty(&json!({"plan-of-action-and-milestones": poam}))?)
}
