//! What the OSCAL assessment results and the POA&M share: stable UUIDs, the target as the
//! subject, temper as the tool, and one observation, finding and risk per rule.
//!
//! Every `title`, `description`, `statement` and `remarks` is OSCAL markup (Markdown): text from
//! the run goes through [`text`] (HTML-significant characters as entities, link brackets
//! escaped), scripts and evidence through [`code`] (a fenced block), so nothing in them renders
//! as markup. Property values are one line ([`prop`]), as OSCAL's `string` type requires.
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use temper_core::journal::{Attempt, Event, EventData, Rule, RuleStatus, Run, ScanResult};
use temper_core::verdict::Verdict;
use temper_core::waiver::{Waiver, WaiverState};
use temper_scap::Benchmark;
use uuid::Uuid;

use crate::data::RunData;
use crate::next_step::next_steps;
use crate::text::{md_code, short, xml_chars};
use crate::view::{regressions, rule_info};

/// The OSCAL version the documents follow.
pub const OSCAL_VERSION: &str = "1.1.2";
/// The namespace of temper's own properties: a name, not a location (`.invalid` is reserved).
pub const NS: &str = "https://temper.invalid/ns/oscal";

/// What a UUID names; with the run it gives the same UUID on every export.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    AssessmentResults,
    Poam,
    Result,
    Plan,
    Target,
    TargetItem,
    Tool,
    Platform,
    Observation,
    Finding,
    Risk,
    Remediation,
    Reboot,
    PoamItem,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Self::AssessmentResults => "assessment-results",
            Self::Poam => "poam",
            Self::Result => "result",
            Self::Plan => "plan",
            Self::Target => "target",
            Self::TargetItem => "target-item",
            Self::Tool => "tool",
            Self::Platform => "platform",
            Self::Observation => "observation",
            Self::Finding => "finding",
            Self::Risk => "risk",
            Self::Remediation => "remediation",
            Self::Reboot => "reboot",
            Self::PoamItem => "poam-item",
        }
    }
}

/// UUID v5s under one namespace per run (its id, target and start, so two stores' run 1 differ).
pub struct Ids(Uuid);

impl Ids {
    pub fn new(run: &Run) -> Self {
        Self(Uuid::new_v5(&Uuid::NAMESPACE_URL, format!("temper:run:{}:{}:{}", run.id, run.target, run.started_at).as_bytes()))
    }

    /// The UUID of a `kind` keyed by `key` (a rule id, an attempt id, or empty).
    pub fn of(&self, kind: Kind, key: &str) -> String {
        Uuid::new_v5(&self.0, format!("{}:{key}", kind.as_str()).as_bytes()).to_string()
    }
}

/// Text for a markup field: control characters made visible, `& < >` as entities, `[ ] \`
/// backslash-escaped (no link, image or raw HTML can form).
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in xml_chars(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '[' | ']' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A fenced code block: its content is shown as it is and never rendered.
pub fn code(s: &str) -> String {
    md_code(&xml_chars(s), "")
}

/// A temper property, its value on one line; `None` for an empty value (OSCAL forbids one).
pub fn prop(name: &str, value: &str) -> Option<Value> {
    let one: Vec<&str> = value.split(|c: char| c.is_whitespace() || c.is_control()).filter(|w| !w.is_empty()).collect();
    (!one.is_empty()).then(|| json!({"name": name, "ns": NS, "value": one.join(" ")}))
}

/// Properties, the empty ones left out.
pub fn props(list: impl IntoIterator<Item = Option<Value>>) -> Value {
    Value::Array(list.into_iter().flatten().collect())
}

/// An OSCAL token (`target-id`): letters, digits, `_ - .`, not starting with a digit or `-`.
pub fn token(s: &str) -> String {
    let mut t: String = s.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '_' }).collect();
    if !t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        t.insert(0, '_');
    }
    t
}

/// A store timestamp as OSCAL's date-time-with-timezone (UTC, milliseconds).
pub fn stamp(s: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&chrono::Utc).to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".into())
}

pub fn sha256(s: &str) -> String {
    Sha256::digest(s.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

fn oscal_start(run: &Run) -> String {
    stamp(&run.started_at)
}

/// The run's end, else its start: what every export of the same run stamps.
pub fn last_modified(run: &Run) -> String {
    stamp(run.ended_at.as_deref().unwrap_or(&run.started_at))
}

pub fn metadata(run: &Run, title: String) -> Value {
    json!({
        "title": text(&title),
        "last-modified": last_modified(run),
        "version": format!("run-{}", run.id),
        "oscal-version": OSCAL_VERSION,
        "props": props([prop("temper-version", env!("CARGO_PKG_VERSION")), prop("run", &run.id.to_string())]),
    })
}

/// The rule's result in the last scan the run has: the final scan, else the first.
pub fn last_result(data: &RunData, r: &Rule) -> ScanResult {
    if data.rules.iter().any(|r| r.final_result.is_some()) { r.final_result.unwrap_or(ScanResult::Missing) } else { r.initial_result }
}

pub fn failing(result: ScanResult) -> bool {
    matches!(result, ScanResult::Fail | ScanResult::Error)
}

/// The whole document's subject and actor: the target (component and inventory item) and temper.
pub struct Parties {
    pub target: String,
    pub target_item: String,
    pub tool: String,
}

impl Parties {
    pub fn new(ids: &Ids) -> Self {
        Self { target: ids.of(Kind::Target, ""), target_item: ids.of(Kind::TargetItem, ""), tool: ids.of(Kind::Tool, "") }
    }

    pub fn components(&self, data: &RunData, content: Option<&Benchmark>) -> Value {
        let run = &data.run;
        let content_version = run.content_version.clone().or_else(|| content.map(|c| c.version.clone())).unwrap_or_default();
        json!([
            {
                "uuid": self.target,
                "type": "this-system",
                "title": text(&run.target),
                "description": text(&format!("The machine temper hardened: {}.", run.target)),
                "props": props([prop("target", &run.target), prop("baseline-snapshot", &run.baseline)]),
                "status": {"state": "operational"},
            },
            {
                "uuid": self.tool,
                "type": "software",
                "title": "temper",
                "description": text(&format!(
                    "temper {} scanned the target with OpenSCAP against {} ({}, SCAP Security Guide {content_version}) and kept each fix only when the rule, a health check, the harness's access and a regression set held.",
                    env!("CARGO_PKG_VERSION"), run.profile, run.datastream
                )),
                "props": props([prop("version", env!("CARGO_PKG_VERSION")), prop("profile", &run.profile), prop("content-version", &content_version)]),
                "status": {"state": "operational"},
            },
        ])
    }

    pub fn inventory(&self, run: &Run) -> Value {
        json!([{
            "uuid": self.target_item,
            "description": text(&format!("The target {}", run.target)),
            "props": props([prop("asset-id", &crate::ckl::host_name(&run.target))]),
            "implemented-components": [{"component-uuid": self.target}],
        }])
    }

    /// temper, as the origin of an observation, finding or risk.
    pub fn origins(&self) -> Value {
        json!([{"actors": [{"type": "tool", "actor-uuid": self.tool}]}])
    }

    pub fn subjects(&self, run: &Run) -> Value {
        json!([{"subject-uuid": self.target_item, "type": "inventory-item", "title": text(&run.target)}])
    }
}

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
            attempts: data.attempts.iter().filter(|a| a.rule_id == rule.rule_id).collect(),
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
        "uuid": ids.of(Kind::Observation, &r.rule_id),
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
        sha256(&a.fix_script),
        a.outcome(),
        a.rule_result.map_or("not scanned", ScanResult::as_str),
        said(a.health_ok, "healthy", "broken"),
        said(a.access_ok, "kept", "lost"),
        match regressions(a) {
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
        "uuid": ids.of(Kind::Finding, &r.rule_id),
        "title": text(&d.title),
        "description": text(&d.summary()),
        "origins": p.origins(),
        "target": {
            "type": "objective-id",
            "target-id": token(d.short()),
            "title": text(&d.title),
            "status": {"state": state, "reason": reason},
        },
        "related-observations": [{"observation-uuid": ids.of(Kind::Observation, &r.rule_id)}],
    });
    if risk {
        f["related-risks"] = json!([{"risk-uuid": ids.of(Kind::Risk, &r.rule_id)}]);
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
    let mut related = vec![json!({"observation-uuid": ids.of(Kind::Observation, &r.rule_id)})];
    let (status, remediations) = if !failing(d.result) && !kept.is_empty() {
        related.push(json!({"observation-uuid": ids.of(Kind::Reboot, "")}));
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
                    "uuid": ids.of(Kind::Remediation, &format!("{}:next:{i}", r.rule_id)),
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
        "uuid": ids.of(Kind::Risk, &r.rule_id),
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
            "uuid": ids.of(Kind::Remediation, &format!("{}:waiver", r.rule_id)),
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
        "uuid": ids.of(Kind::Remediation, &a.id.to_string()),
        "lifecycle": "completed",
        "title": text(&format!("Attempt {}: {}", a.n, a.description)),
        "description": attempt_text(a),
        "props": props([
            prop("attempt", &a.n.to_string()),
            prop("fix-source", &a.source_label()),
            prop("fix-sha256", &sha256(&a.fix_script)),
            prop("verdict", verdict),
            prop("rule-result", a.rule_result.map_or("not-scanned", ScanResult::as_str)),
            prop("health-check", checks(a.health_ok, "healthy", "broken")),
            prop("access-check", checks(a.access_ok, "kept", "lost")),
            prop("regressions", &regressions(a).len().to_string()),
            prop("exit-code", &a.fix_exit_code.map_or("none".into(), |c| c.to_string())),
            prop("snapshot", a.snapshot.as_deref().unwrap_or("")),
        ]),
        "origins": p.origins(),
        "remarks": format!("The fix script:\n\n{}", code(&a.fix_script)),
    })
}

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
    let line = data.summary.as_ref().map_or("the run has not finished", |s| temper_core::journal::reboot_line(s.rebooted));
    let mut evidence: Vec<Value> = data.reboots.iter().filter_map(reboot_event).map(|d| json!({"description": text(&d)})).collect();
    if evidence.is_empty() {
        evidence.push(json!({"description": "No reboot is recorded for this run."}));
    }
    json!({
        "uuid": ids.of(Kind::Reboot, ""),
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
            format!("{}: checkpoint {} proven to boot, holding the fixes through attempt {}.", e.ts, b.snapshot, b.through)
        }
        EventData::RebootBlamed(b) => {
            format!("{}: attempt {}'s fix rolled back by the reboot proof: {} ({}); fix: {}.", e.ts, b.attempt, b.verdict, b.reason, b.fix)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_inert() {
        // Markdown shows `\\x1b` as `\x1b`: the escape made visible, then its backslash escaped.
        assert_eq!(text("a <b> & [x](javascript:y) \\ \u{1b}"), "a &lt;b&gt; &amp; \\[x\\](javascript:y) \\\\ \\\\x1b");
        assert!(code("```\n<script>").starts_with("````\n"));
    }

    #[test]
    fn props_are_one_line_and_never_empty() {
        assert_eq!(prop("x", " a\n\tb \u{1b} ").unwrap()["value"], "a b");
        assert!(prop("x", " \n").is_none());
    }

    #[test]
    fn tokens() {
        assert_eq!(token("sshd_disable_root_login"), "sshd_disable_root_login");
        assert_eq!(token("1 a<b>"), "_1_a_b_");
        assert_eq!(token("-x"), "_-x");
    }

    #[test]
    fn stamps() {
        assert_eq!(stamp("2026-01-01T01:00:00+01:00"), "2026-01-01T00:00:00.000Z");
    }
}
