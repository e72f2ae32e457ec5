//! One rule in the OSCAL documents: its observation, finding and risk, and its kept fixes.
use serde_json::{Value, json};
use temper_journal::Verdict;
use temper_journal::waiver::{Waiver, WaiverState};
use temper_journal::{Attempt, Rule, RuleStatus, ScanResult};
use temper_scap::Benchmark;

use super::{Ids, Parties, UuidKind, code, failing, last_modified, last_result, oscal_start, prop, props, sha256, text, token};
use crate::run::RunData;
use crate::text::short;
use crate::view::{next_steps, rule_info};

/// One rule, what the documents say of it.
pub struct RuleDoc<'a> {
    pub rule: &'a Rule,
    pub title: String,
    pub severity: String,
    pub result: ScanResult,
    pub attempts: Vec<&'a Attempt>,
}

impl<'a> RuleDoc<'a> {
    pub fn new(data: &'a RunData, content: Option<&Benchmark>, rule: &'a Rule) -> Self {
        let info = rule_info(rule, content.and_then(|c| c.rule(&rule.rule_id)));
        Self {
            rule,
            title: info.title,
            severity: info.severity.as_str().to_string(),
            result: last_result(data, rule),
            attempts: data.attempts.iter().filter(|a| a.spec.rule_id == rule.rule_id).collect(),
        }
    }

    pub fn short(&self) -> &str {
        short(&self.rule.rule_id)
    }

    /// `first scan fail, final scan pass; temper: fixed (reason)`.
    pub fn summary(&self) -> String {
        let r = self.rule;
        let mut s = format!(
            "{}: first scan {}, final scan {}; temper: {}",
            r.rule_id,
            r.initial_result,
            r.final_result.map_or("none", ScanResult::as_str),
            r.status
        );
        if let Some(reason) = r.reason.as_deref().filter(|s| !s.is_empty()) {
            s.push_str(&format!(" ({reason})"));
        }
        s
    }
}

/// The rule's observation: its scan results and, where stored, the OVAL evidence.
pub fn observation(data: &RunData, ids: &Ids, p: &Parties, d: &RuleDoc) -> Value {
    let r = d.rule;
    let mut evidence = vec![json!({"description": text(&format!("OpenSCAP results: {}.", d.summary()))})];
    for a in &d.attempts {
        evidence.push(json!({"description": attempt_text(a)}));
    }
    if let Some((when, e)) = data.evidence_of(&r.rule_id) {
        evidence.push(json!({
            "description": format!("What the scanner found {when} (the OVAL items found against the state expected):\n\n{}", code(&e.to_text())),
        }));
    }
    json!({
        "uuid": ids.of(UuidKind::Observation, &r.rule_id),
        "title": text(&d.title),
        "description": text(&d.summary()),
        "props": props([
            prop("rule-id", &r.rule_id),
            prop("severity", &d.severity),
            prop("first-scan", r.initial_result.as_str()),
            prop("final-scan", r.final_result.map_or("none", ScanResult::as_str)),
            prop("temper-status", r.status.as_str()),
            prop("attempts", &r.attempts.to_string()),
        ]),
        "methods": ["TEST"],
        "types": if failing(d.result) { json!(["finding"]) } else { json!(["control-objective"]) },
        "origins": p.origins(),
        "subjects": p.subjects(&data.run),
        "relevant-evidence": evidence,
        "collected": last_modified(&data.run),
    })
}

/// One attempt in a sentence: its verdict and what the checks said.
fn attempt_text(a: &Attempt) -> String {
    let said = |v: Option<bool>, yes: &str, no: &str| match v {
        Some(true) => yes.to_string(),
        Some(false) => no.to_string(),
        None => "not checked".into(),
    };
    text(&format!(
        "Attempt {} ({} fix, sha256 {}): {}; rule {}, health {}, access {}, regressions {}{}.",
        a.n,
        a.source_label(),
        sha256(&a.spec.fix_script),
        a.outcome(),
        a.findings.rule_result.map_or("not scanned", ScanResult::as_str),
        said(a.findings.health_ok, "healthy", "broken"),
        said(a.findings.access_ok, "kept", "lost"),
        match &a.findings.regressions {
            v if v.is_empty() => "none".to_string(),
            v => v.join(", "),
        },
        a.verdict_reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default()
    ))
}

/// The finding of a rule that failed at some scan: not satisfied when it still fails.
pub fn finding(ids: &Ids, p: &Parties, d: &RuleDoc, risk: bool) -> Value {
    let r = d.rule;
    let (state, reason) = if failing(d.result) { ("not-satisfied", "fail") } else { ("satisfied", "pass") };
    let mut f = json!({
        "uuid": ids.of(UuidKind::Finding, &r.rule_id),
        "title": text(&d.title),
        "description": text(&d.summary()),
        "origins": p.origins(),
        "target": {
            "type": "objective-id",
            "target-id": token(d.short()),
            "title": text(&d.title),
            "status": {"state": state, "reason": reason},
        },
        "related-observations": [{"observation-uuid": ids.of(UuidKind::Observation, &r.rule_id)}],
    });
    if risk {
        f["related-risks"] = json!([{"risk-uuid": ids.of(UuidKind::Risk, &r.rule_id)}]);
    }
    f
}

/// The waiver in force for a rule, when the run waived it.
pub fn waiver_of<'w>(waivers: &'w [(&'w Waiver, WaiverState)], r: &Rule) -> Option<&'w Waiver> {
    if r.status != RuleStatus::Waived {
        return None;
    }
    waivers.iter().find(|(w, s)| *s == WaiverState::Active && w.matches(short(&r.rule_id))).map(|(w, _)| *w)
}

/// The risk of a rule: closed by its kept fix, accepted by a waiver, else open with its next step.
pub fn risk(data: &RunData, content: Option<&Benchmark>, ids: &Ids, p: &Parties, d: &RuleDoc, waiver: Option<&Waiver>) -> Value {
    let r = d.rule;
    let kept: Vec<&&Attempt> = d.attempts.iter().filter(|a| a.in_force()).collect();
    let mut related = vec![json!({"observation-uuid": ids.of(UuidKind::Observation, &r.rule_id)})];
    let (status, remediations) = if !failing(d.result) && !kept.is_empty() {
        related.push(json!({"observation-uuid": ids.of(UuidKind::Reboot, "")}));
        ("closed", kept.iter().map(|a| remediation(ids, p, a)).collect::<Vec<_>>())
    } else {
        let info = rule_info(r, content.and_then(|c| c.rule(&r.rule_id)));
        let steps = next_steps(&info, r, &d.attempts, data);
        let lifecycle = if waiver.is_some() { "planned" } else { "recommendation" };
        let recs = steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                json!({
                    "uuid": ids.of(UuidKind::Remediation, &format!("{}:next:{i}", r.rule_id)),
                    "lifecycle": lifecycle,
                    "title": text(&format!("Next step ({})", s.cause)),
                    "description": text(&format!("{} {}", s.check, s.try_)),
                    "props": props([prop("cause", s.cause.as_str())]),
                    "origins": p.origins(),
                })
            })
            .collect();
        (if waiver.is_some() { "deviation-approved" } else { "open" }, recs)
    };
    let mut risk = json!({
        "uuid": ids.of(UuidKind::Risk, &r.rule_id),
        "title": text(&d.title),
        "description": text(&d.summary()),
        "statement": text(&format!(
            "The target fails {} ({} severity): {}.",
            r.rule_id,
            d.severity,
            if failing(d.result) { "it still fails after the run" } else { "it failed the first scan, and temper's kept fix made it pass" }
        )),
        "props": props([prop("rule-id", &r.rule_id), prop("severity", &d.severity), prop("temper-status", r.status.as_str())]),
        "status": status,
        "origins": p.origins(),
        "related-observations": related,
    });
    if !remediations.is_empty() {
        risk["remediations"] = Value::Array(remediations);
    }
    if let Some(w) = waiver {
        risk["props"].as_array_mut().expect("props is an array").extend(
            [prop("waiver-approved-by", &w.approved_by), prop("waiver-expires", &w.expires.to_string()), prop("waiver-rule", &w.rule)]
                .into_iter()
                .flatten(),
        );
        risk["deadline"] = json!(format!("{}T23:59:59.000Z", w.expires));
        risk["risk-log"] = json!({"entries": [{
            "uuid": ids.of(UuidKind::Remediation, &format!("{}:waiver", r.rule_id)),
            "title": "Waiver approved",
            "description": text(&format!("Accepted by waiver: {} (approved by {}, expires {}, from {}).", w.reason, w.approved_by, w.expires, w.source)),
            "start": oscal_start(&data.run),
            "status-change": "deviation-approved",
        }]});
    }
    risk
}

/// A kept fix as a completed remediation: its script's sha256, its verdict and its checks.
fn remediation(ids: &Ids, p: &Parties, a: &Attempt) -> Value {
    fn checks(v: Option<bool>, yes: &'static str, no: &'static str) -> &'static str {
        match v {
            Some(true) => yes,
            Some(false) => no,
            None => "not-checked",
        }
    }
    let verdict = a.verdict.map_or("none", Verdict::as_str);
    json!({
        "uuid": ids.of(UuidKind::Remediation, &a.id.to_string()),
        "lifecycle": "completed",
        "title": text(&format!("Attempt {}: {}", a.n, a.spec.description)),
        "description": attempt_text(a),
        "props": props([
            prop("attempt", &a.n.to_string()),
            prop("fix-source", &a.source_label()),
            prop("fix-sha256", &sha256(&a.spec.fix_script)),
            prop("verdict", verdict),
            prop("rule-result", a.findings.rule_result.map_or("not-scanned", ScanResult::as_str)),
            prop("health-check", checks(a.findings.health_ok, "healthy", "broken")),
            prop("access-check", checks(a.findings.access_ok, "kept", "lost")),
            prop("regressions", &a.findings.regressions.len().to_string()),
            prop("exit-code", &a.findings.fix_exit_code.map_or("none".into(), |c| c.to_string())),
            prop("snapshot", a.snapshot.as_deref().unwrap_or("")),
        ]),
        "origins": p.origins(),
        "remarks": format!("The fix script:\n\n{}", code(&a.spec.fix_script)),
    })
}
