//! The reboot proof in the OSCAL documents.
use serde_json::{Value, json};
use temper_journal::{AttemptId, Event, EventData};

use super::{Ids, Parties, UuidKind, last_modified, prop, props, text};
use crate::run::RunData;

/// Whether the final state survived a cold reboot, as a property value.
pub fn reboot_value(data: &RunData) -> &'static str {
    match data.summary.as_ref().map(|s| s.rebooted) {
        Some(Some(true)) => "proven",
        Some(Some(false)) => "not-proven",
        Some(None) => "not-run",
        None => "unfinished",
    }
}

/// The reboot proof: its outcome, and each reboot, proven checkpoint and fix it blamed.
pub fn reboot_observation(data: &RunData, ids: &Ids, p: &Parties) -> Value {
    let line = data.summary.as_ref().map_or("the run has not finished", |s| temper_journal::reboot_line(s.rebooted));
    let mut evidence: Vec<Value> = data.reboots.iter().filter_map(reboot_event).map(|d| json!({"description": text(&d)})).collect();
    if evidence.is_empty() {
        evidence.push(json!({"description": "No reboot is recorded for this run."}));
    }
    json!({
        "uuid": ids.of(UuidKind::Reboot, ""),
        "title": "Reboot proof",
        "description": text(&format!("Reboot proof: {line}.")),
        "props": props([prop("reboot-proof", reboot_value(data))]),
        "methods": ["TEST"],
        "origins": p.origins(),
        "subjects": p.subjects(&data.run),
        "relevant-evidence": evidence,
        "collected": last_modified(&data.run),
    })
}

fn reboot_event(e: &Event) -> Option<String> {
    let yes_no = |b: bool| if b { "came back" } else { "did NOT come back" };
    Some(match &e.data {
        EventData::Reboot { why, fixes, power_off, down_secs, secs, up, problem } => format!(
            "{}: cold reboot ({why}) with {fixes} fix(es) kept; power-off {power_off}, down {down_secs:.1} s, {} after {secs:.1} s{}.",
            e.ts,
            yes_no(*up),
            problem.as_deref().map(|p| format!(": {p}")).unwrap_or_default()
        ),
        EventData::Booted(b) => {
            // The attempt's id; 0 before any fix (the baseline), as the text always said.
            let through = b.through.map_or(0, AttemptId::get);
            format!("{}: checkpoint {} proven to boot, holding the fixes through attempt {through}.", e.ts, b.snapshot)
        }
        EventData::RebootBlamed(b) => {
            format!("{}: attempt {}'s fix rolled back by the reboot proof: {} ({}); fix: {}.", e.ts, b.attempt, b.verdict, b.reason, b.fix)
        }
        _ => return None,
    })
}
