//! Heimdall Data Format (HDF, InSpec's exec JSON) of one run, as Heimdall and MITRE's `saf`
//! read it: one profile (the SCAP profile), one control per rule, each with one result, the
//! rule's state at the run's last scan. The result's `code_desc` says what temper did, its
//! `message` carries the evidence (the OVAL items found against the state expected) and the
//! next step. A waived rule keeps its failed result and gets `waiver_data` (it was scanned, not
//! skipped). Text is plain (HDF is not markup): JSON escaping keeps it a string value.
use serde_json::{Value, json};
use temper_journal::controls::RunControls;
use temper_journal::{Attempt, RuleStatus, ScanResult};
use temper_scap::{Benchmark, Severity};

use super::oscal::{RuleDoc, sha256, stamp, waiver_of};
use crate::error::ReportError;
use crate::run::RunData;
use crate::view::{next_steps, rule_info};

/// An HDF result status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HdfStatus {
    Passed,
    Failed,
    Skipped,
    Error,
}

impl HdfStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Passed => "passed",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
            Self::Error => "error",
        }
    }

    /// The status of a scan result: a rule not checked, not selected or not applicable is skipped.
    pub fn of(r: ScanResult) -> Self {
        match r {
            ScanResult::Pass | ScanResult::Fixed => Self::Passed,
            ScanResult::Fail => Self::Failed,
            ScanResult::Error => Self::Error,
            ScanResult::NotApplicable
            | ScanResult::NotChecked
            | ScanResult::NotSelected
            | ScanResult::Informational
            | ScanResult::Unknown
            | ScanResult::Missing => Self::Skipped,
        }
    }
}

/// HDF's impact: high 0.7, medium 0.5, low 0.3; SSG's unknown and info as medium (as the
/// checklists write them); 0 for a rule not applicable, which Heimdall shows as such.
fn impact(severity: Severity, result: ScanResult) -> f64 {
    if result == ScanResult::NotApplicable {
        return 0.0;
    }
    match severity {
        Severity::High => 0.7,
        Severity::Low => 0.3,
        Severity::Medium | Severity::Info | Severity::Unknown => 0.5,
    }
}

pub fn render(data: &RunData, content: Option<&Benchmark>) -> Result<String, ReportError> {
    let run = &data.run;
    let controls = RunControls::of(run);
    let waivers = controls.waiver_states(run);
    let started = stamp(&run.started_at);
    let list: Vec<Value> = data
        .rules
        .iter()
        .map(|r| {
            let d = RuleDoc::new(data, content, r);
            let mut c = control(data, content, &d, &started);
            if let Some(w) = waiver_of(&waivers, r) {
                c["waiver_data"] = json!({
                    "justification": w.reason,
                    "run": true,
                    "skipped_due_to_waiver": false,
                    "message": format!("waived by temper: approved by {}, expires {} ({})", w.approved_by, w.expires, w.source),
                    "expiration_date": w.expires.to_string(),
                });
            }
            c
        })
        .collect();
    let ids: Vec<String> = data.rules.iter().map(|r| crate::text::short(&r.rule_id).to_string()).collect();
    let profile = content.and_then(|c| c.profile.as_ref());
    let content_version = run.content_version.clone().or_else(|| content.map(|c| c.version.clone()));
    let wall = data.summary.as_ref().map_or(run.wall_ms as f64 / 1000.0, |s| s.wall_secs);
    let doc = json!({
        "platform": {"name": "temper", "release": env!("CARGO_PKG_VERSION"), "target_id": run.target},
        "version": env!("CARGO_PKG_VERSION"),
        "statistics": {"duration": wall},
        "profiles": [{
            "name": run.profile,
            "title": profile.map_or(run.profile.as_str(), |p| p.title.as_str()),
            "version": content_version,
            "summary": profile.map(|p| p.description.clone()),
            "maintainer": content.map(|c| c.title.clone()),
            "license": Value::Null,
            "copyright": Value::Null,
            "copyright_email": Value::Null,
            // What identifies the profile as run: its id, content version and rules.
            "sha256": sha256(&format!("{}\n{}\n{}", run.profile, content_version.as_deref().unwrap_or(""), ids.join("\n"))),
            "supports": [],
            "attributes": [],
            "groups": [{"id": run.datastream, "title": format!("temper run {}", run.id), "controls": ids}],
            "status": "loaded",
            "controls": list,
        }],
        "passthrough": {
            "temper": {
                "run": run.id,
                "status": run.status.as_str(),
                "exit_code": run.exit_code,
                "score_before": run.score_before,
                "score_after": run.score_after,
                "reboot_proof": super::oscal::reboot_value(data),
                "started_at": started,
            }
        },
    });
    Ok(serde_json::to_string_pretty(&doc)?)
}

fn control(data: &RunData, content: Option<&Benchmark>, d: &RuleDoc, started: &str) -> Value {
    let r = d.rule;
    let c = content.and_then(|c| c.rule(&r.rule_id));
    let info = rule_info(r, c);
    // A rule outside the run's scope was scanned, not worked on: counted with nothing.
    let out_of_scope = r.status == RuleStatus::OutOfScope;
    let status = if out_of_scope { HdfStatus::Skipped } else { HdfStatus::of(d.result) };
    let mut descriptions = vec![json!({"label": "default", "data": info.description})];
    if !info.rationale.is_empty() {
        descriptions.push(json!({"label": "rationale", "data": info.rationale}));
    }
    if let Some(o) = &info.oval {
        descriptions.push(json!({"label": "check", "data": format!("OVAL definition {o}, run by `oscap xccdf eval --profile {} --rule {}`.", data.run.profile, r.rule_id)}));
    }
    if let Some(f) = &info.stock_fix {
        descriptions.push(json!({"label": "fix", "data": f}));
    }
    let kept: Vec<&&Attempt> = d.attempts.iter().filter(|a| a.in_force()).collect();
    let mut code_desc = format!("{} (temper run {}).", d.summary(), data.run.id);
    for a in &kept {
        code_desc.push_str(&format!(
            "\nFixed by attempt {} ({} fix, sha256 {}): {}.",
            a.n,
            a.source_label(),
            sha256(&a.spec.fix_script),
            a.outcome()
        ));
    }
    let mut result = json!({"status": status.as_str(), "code_desc": code_desc, "start_time": started, "run_time": Value::Null});
    match status {
        HdfStatus::Failed | HdfStatus::Error => {
            let mut msg = String::new();
            if let Some((when, e)) = data.evidence_of(&r.rule_id) {
                msg.push_str(&format!("What the scanner found {when}:\n{}", e.brief()));
            }
            for s in next_steps(&info, r, &d.attempts, data) {
                msg.push_str(&format!("\nNext step ({}): {} {}", s.cause, s.check, s.try_));
            }
            result["message"] = json!(msg.trim_start());
        }
        HdfStatus::Skipped if out_of_scope => {
            result["skip_message"] =
                json!(format!("Outside this run's scope (`--rules` or its plan): OpenSCAP gave `{}`, not worked on.", d.result))
        }
        HdfStatus::Skipped => result["skip_message"] = json!(format!("OpenSCAP gave `{}`: no pass or fail to report.", d.result)),
        HdfStatus::Passed => {}
    }
    json!({
        "id": crate::text::short(&r.rule_id),
        "title": info.title,
        "desc": info.description,
        "descriptions": descriptions,
        "impact": impact(info.severity, d.result),
        "refs": [],
        "tags": {
            "severity": d.severity,
            "rid": r.rule_id,
            "stig_id": info.stig_ids,
            "gid": info.v_ids,
            "srg": info.srg_ids,
            "cci": info.cci,
            "temper_status": r.status.as_str(),
            "first_scan": r.initial_result.as_str(),
            "attempts": r.attempts,
        },
        "code": kept.last().map(|a| a.spec.fix_script.clone()),
        "source_location": {"ref": data.run.datastream, "line": Value::Null},
        "results": [result],
    })
}
