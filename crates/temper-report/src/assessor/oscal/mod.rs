//! What the OSCAL assessment results and the POA&M share: stable UUIDs, the target as the
//! subject, temper as the tool, and one observation, finding and risk per rule.
//!
//! Every `title`, `description`, `statement` and `remarks` is OSCAL markup (Markdown): text from
//! the run goes through [`text`] (HTML-significant characters as entities, link brackets
//! escaped), scripts and evidence through [`code`] (a fenced block), so nothing in them renders
//! as markup. Property values are one line ([`prop`]), as OSCAL's `string` type requires.
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use temper_journal::controls::RunControls;
use temper_journal::waiver::{Waiver, WaiverState};
use temper_journal::{Rule, Run, ScanResult};
use temper_scap::Benchmark;
use uuid::Uuid;

use crate::run::RunData;
use crate::text::{md_code, xml_chars};

pub mod ar;
pub mod poam;
mod reboot;
mod rule;

pub use reboot::{reboot_observation, reboot_value};
pub use rule::{RuleDoc, finding, observation, risk, waiver_of};

/// The OSCAL version the documents follow.
pub const OSCAL_VERSION: &str = "1.1.2";
/// The namespace of temper's own properties: a name, not a location (`.invalid` is reserved).
pub const NS: &str = "https://temper.invalid/ns/oscal";

/// What a UUID names; with the run it gives the same UUID on every export.
#[derive(Debug, Clone, Copy)]
pub enum UuidKind {
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

impl UuidKind {
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
    pub fn of(&self, kind: UuidKind, key: &str) -> String {
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

pub(super) fn oscal_start(run: &Run) -> String {
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
        Self { target: ids.of(UuidKind::Target, ""), target_item: ids.of(UuidKind::TargetItem, ""), tool: ids.of(UuidKind::Tool, "") }
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
            "props": props([prop("asset-id", &super::ckl::host_name(&run.target))]),
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

/// What both documents start from: the run's UUIDs and parties, its controls, and its rules.
pub struct Doc<'a> {
    pub data: &'a RunData,
    pub ids: Ids,
    pub parties: Parties,
    controls: RunControls,
    pub rules: Vec<RuleDoc<'a>>,
}

impl<'a> Doc<'a> {
    pub fn new(data: &'a RunData, content: Option<&'a Benchmark>) -> Self {
        let ids = Ids::new(&data.run);
        let parties = Parties::new(&ids);
        let rules = data.rules.iter().map(|r| RuleDoc::new(data, content, r)).collect();
        Self { data, ids, parties, controls: RunControls::of(&data.run), rules }
    }

    /// The run's waivers, each with its state at the run's end.
    pub fn waivers(&self) -> Vec<(&Waiver, WaiverState)> {
        self.controls.waiver_states(&self.data.run)
    }
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
