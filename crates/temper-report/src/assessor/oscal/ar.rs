//! OSCAL assessment results (JSON, OSCAL 1.1.2) of one run: the target as the subject, one
//! observation per rule with its scan results and evidence, one finding per rule that failed a
//! scan (not satisfied while it still fails), each kept fix as the completed remediation of a
//! closed risk, and the reboot proof as an observation. temper writes no assessment plan: the
//! imported plan is a back-matter resource that names the profile and content it stands for.
use serde_json::{Value, json};
use temper_journal::RuleStatus;
use temper_journal::controls::RunControls;
use temper_scap::Benchmark;

use crate::assessor::oscal::{self, Doc, RuleDoc, UuidKind, failing, prop, props, text};
use crate::error::ReportError;
use crate::run::RunData;

pub fn render(data: &RunData, content: Option<&Benchmark>) -> Result<String, ReportError> {
    let base = Doc::new(data, content);
    let (run, ids, p, rules) = (&data.run, &base.ids, &base.parties, &base.rules);
    let waivers = base.waivers();
    let mut observations: Vec<Value> = rules.iter().map(|d| oscal::observation(data, ids, p, d)).collect();
    observations.push(oscal::reboot_observation(data, ids, p));
    // A finding and a risk for each rule in the run's scope that failed a scan; the rules outside
    // it have their observation only.
    let in_scope = |d: &&RuleDoc| d.rule.status != RuleStatus::OutOfScope;
    let at_risk: Vec<&RuleDoc> = rules.iter().filter(in_scope).filter(|d| failing(d.rule.initial_result) || failing(d.result)).collect();
    let risks: Vec<Value> = at_risk.iter().map(|d| oscal::risk(data, content, ids, p, d, oscal::waiver_of(&waivers, d.rule))).collect();
    let findings: Vec<Value> = at_risk.iter().map(|d| oscal::finding(ids, p, d, true)).collect();
    let profile_title = content.and_then(|c| c.profile.as_ref()).map_or(run.profile.as_str(), |p| p.title.as_str());
    let plan = ids.of(UuidKind::Plan, "");
    let still = at_risk.iter().filter(|d| failing(d.result)).count();
    let mut doc = json!({
        "assessment-results": {
            "uuid": ids.of(UuidKind::AssessmentResults, ""),
            "metadata": oscal::metadata(run, format!("temper run {}: {profile_title} on {}", run.id, run.target)),
            "import-ap": {
                "href": format!("#{plan}"),
                "remarks": "temper writes no assessment plan: the back-matter resource this points to names the profile, content and tailoring the run assessed.",
            },
            "results": [{
                "uuid": ids.of(UuidKind::Result, ""),
                "title": text(&format!("temper run {}", run.id)),
                "description": text(&format!(
                    "temper run {} on {}: {} rules scanned, {} failed a scan, {still} still fail. Score {} before, {} after. Reboot proof: {}.",
                    run.id,
                    run.target,
                    rules.len(),
                    at_risk.len(),
                    score(run.score_before),
                    score(run.score_after),
                    oscal::reboot_value(data)
                )),
                "start": oscal::stamp(&run.started_at),
                "end": oscal::last_modified(run),
                "props": props([
                    prop("run-status", run.status.as_str()),
                    prop("exit-code", &run.exit_code.map_or("none".into(), |c| c.to_string())),
                    prop("score-before", &score(run.score_before)),
                    prop("score-after", &score(run.score_after)),
                    prop("reboot-proof", oscal::reboot_value(data)),
                    prop("agent", &run.agent),
                ]),
                "local-definitions": {
                    "components": p.components(data, content),
                    "inventory-items": p.inventory(run),
                    "assessment-assets": {
                        "assessment-platforms": [{
                            "uuid": ids.of(UuidKind::Platform, ""),
                            "title": "temper",
                            "uses-components": [{"component-uuid": p.tool}],
                        }],
                    },
                },
                "reviewed-controls": {
                    "description": text(&format!("The rules of {} that the run scanned.", run.profile)),
                    "control-selections": [{"include-all": {}}],
                },
                "observations": observations,
            }],
            "back-matter": {"resources": [plan_resource(data, content, &plan)]},
        }
    });
    // OSCAL wants these lists absent rather than empty.
    let result = &mut doc["assessment-results"]["results"][0];
    for (key, list) in [("risks", risks), ("findings", findings)] {
        if !list.is_empty() {
            result[key] = Value::Array(list);
        }
    }
    Ok(serde_json::to_string_pretty(&doc)?)
}

fn score(s: Option<f64>) -> String {
    s.map_or("none".into(), |v| format!("{v:.2}"))
}

/// The assessment plan the run stands for: its profile, datastream and tailoring.
fn plan_resource(data: &RunData, content: Option<&Benchmark>, uuid: &str) -> Value {
    let run = &data.run;
    let mut what = format!("Profile {} of {}", run.profile, run.datastream);
    if let Some(v) = run.content_version.as_deref().or(content.map(|c| c.version.as_str())) {
        what.push_str(&format!(" (SCAP Security Guide {v})"));
    }
    if let Some(t) = RunControls::of(run).tailoring {
        what.push_str(&format!(", tailored by {} (profile {}, sha256 {})", t.name(), t.profile, t.sha256));
    }
    json!({
        "uuid": uuid,
        "title": "temper's assessment plan (placeholder)",
        "description": text(&format!("{what}: every rule the profile selects, scanned by OpenSCAP before and after temper's fixes.")),
        "props": props([prop("profile", &run.profile), prop("datastream", &run.datastream)]),
    })
}
