//! One XCCDF Rule: prose, DISA references, idents, the OVAL check and the shell fix.
use std::sync::LazyLock;

use quick_xml::events::BytesStart;
use regex::Regex;
use serde::Serialize;

use crate::Severity;
use crate::error::{ScapError, ScapResult};
use crate::text::{Template, TextBuilder};
use crate::xml::{Xml, local, parse_bool};

use super::{MAX_PROSE, MAX_SCRIPT, MAX_TITLE};

/// The `system` of the fixes we keep: plain shell.
pub const FIX_SH: &str = "urn:xccdf:fix:script:sh";
const OVAL: &str = "http://oval.mitre.org/XMLSchema/oval-definitions-5";

/// A DISA STIG id such as `RHEL-09-255045` or `UBTU-22-255010`.
static STIG_ID: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[A-Z][A-Z0-9]*-\d{2}-\d{6}$").unwrap());
/// A STIG rule version id: `SV-257985r1045028_rule`; group 1 is the V number.
static SV_ID: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^SV-(\d+)r\d+_rule$").unwrap());
static CCI: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^CCI-\d+$").unwrap());

/// The datastream's own shell fix, with `<sub>` resolved for the chosen profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fix {
    pub script: String,
    pub reboot: bool,
    /// XCCDF `disruption`; `unknown` when absent.
    pub disruption: String,
    pub complexity: String,
    pub strategy: String,
    /// `<sub idref>` that named no Value (replaced by nothing); empty for SSG content.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unresolved: Vec<String>,
}

/// The OVAL definition a rule is checked by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OvalRef {
    /// e.g. `oval:ssg-sshd_disable_root_login:def:1`.
    pub name: String,
    /// e.g. `ssg-rhel9-oval.xml`.
    pub href: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContentRule {
    pub id: String,
    pub title: String,
    /// Profile's `refine-rule` severity if any, else the Rule's (`unknown` when absent).
    pub severity: Severity,
    pub description: String,
    pub rationale: String,
    /// DISA STIG ids (`RHEL-09-255045`).
    pub stig_ids: Vec<String>,
    /// STIG rule version ids (`SV-257985r1045028_rule`).
    pub sv_ids: Vec<String>,
    /// Vulnerability ids derived from `sv_ids` (`V-257985`).
    pub v_ids: Vec<String>,
    pub srg_ids: Vec<String>,
    pub cci: Vec<String>,
    pub cce: Vec<String>,
    pub oval: Option<OvalRef>,
    pub fix: Option<Fix>,
}

impl ContentRule {
    pub fn has_fix(&self) -> bool {
        self.fix.is_some()
    }

    /// The id without the `xccdf_org.ssgproject.content_rule_` prefix.
    pub fn short_id(&self) -> &str {
        short_rule_id(&self.id)
    }
}

/// `xccdf_org.ssgproject.content_rule_foo` -> `foo`; other ids unchanged.
pub fn short_rule_id(id: &str) -> &str {
    id.find("_rule_").map_or(id, |i| &id[i + 6..])
}

pub(crate) struct RawFix {
    pub script: Template,
    pub reboot: bool,
    pub disruption: String,
    pub complexity: String,
    pub strategy: String,
}

/// A rule as read, before values are known.
pub(crate) struct RawRule {
    pub id: String,
    pub severity: Severity,
    pub title: Template,
    pub description: Template,
    pub rationale: Template,
    pub stig_ids: Vec<String>,
    pub sv_ids: Vec<String>,
    pub v_ids: Vec<String>,
    pub srg_ids: Vec<String>,
    pub cci: Vec<String>,
    pub cce: Vec<String>,
    pub oval: Option<OvalRef>,
    pub fix: Option<RawFix>,
}

fn push_unique(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

impl RawRule {
    fn new(id: String, severity: Severity) -> Self {
        Self {
            id,
            severity,
            title: Template::default(),
            description: Template::default(),
            rationale: Template::default(),
            stig_ids: Vec::new(),
            sv_ids: Vec::new(),
            v_ids: Vec::new(),
            srg_ids: Vec::new(),
            cci: Vec::new(),
            cce: Vec::new(),
            oval: None,
            fix: None,
        }
    }

    fn reference(&mut self, text: String) {
        if let Some(m) = SV_ID.captures(&text) {
            push_unique(&mut self.v_ids, format!("V-{}", &m[1]));
            push_unique(&mut self.sv_ids, text);
        } else if STIG_ID.is_match(&text) {
            push_unique(&mut self.stig_ids, text);
        } else if CCI.is_match(&text) {
            push_unique(&mut self.cci, text);
        } else if text.starts_with("SRG-") {
            push_unique(&mut self.srg_ids, text);
        }
    }
}

/// Reads a Rule whose start tag (with `id` and `severity`) was just read.
pub(crate) fn parse_rule(x: &mut Xml<'_>, id: String, severity: Severity, empty: bool) -> ScapResult<RawRule> {
    let mut r = RawRule::new(id, severity);
    if empty {
        return Ok(r);
    }
    loop {
        let Some((c, c_empty)) = x.child("Rule")? else {
            return Ok(r);
        };
        if c_empty {
            continue;
        }
        match local(&c) {
            "title" => r.title = prose(x, "title", MAX_TITLE)?,
            "description" => r.description = prose(x, "description", MAX_PROSE)?,
            "rationale" => r.rationale = prose(x, "rationale", MAX_PROSE)?,
            "reference" => {
                let text = x.plain("reference", MAX_TITLE)?;
                r.reference(text);
            }
            "ident" => {
                let system = x.attr(&c, "system")?.unwrap_or_default();
                let text = x.plain("ident", MAX_TITLE)?;
                if system.contains("cce") && !text.is_empty() {
                    push_unique(&mut r.cce, text);
                }
            }
            "fix" => {
                let fix = fix(x, &c, r.fix.is_none())?;
                if fix.is_some() {
                    r.fix = fix;
                }
            }
            "check" => {
                let system = x.attr(&c, "system")?;
                if r.oval.is_none() && system.as_deref() == Some(OVAL) {
                    r.oval = check_ref(x)?;
                } else {
                    x.skip(&c)?;
                }
            }
            _ => x.skip(&c)?,
        }
    }
}

fn prose(x: &mut Xml<'_>, name: &str, cap: usize) -> ScapResult<Template> {
    let mut b = TextBuilder::prose(cap);
    x.content(name, &mut b)?;
    Ok(b.finish())
}

/// A `<fix>`: kept when it is the first shell fix of the rule, else skipped.
fn fix(x: &mut Xml<'_>, c: &BytesStart<'_>, wanted: bool) -> ScapResult<Option<RawFix>> {
    let offset = x.pos();
    let [system, reboot, disruption, complexity, strategy] = x.attrs(c, ["system", "reboot", "disruption", "complexity", "strategy"])?;
    if !wanted || system.as_deref() != Some(FIX_SH) {
        x.skip(c)?;
        return Ok(None);
    }
    let mut b = TextBuilder::raw(MAX_SCRIPT);
    x.content("fix", &mut b)?;
    if b.truncated() {
        return Err(ScapError::TooLarge { what: "fix script".into(), limit: MAX_SCRIPT as u64, offset });
    }
    let script = b.finish();
    if script.plain().trim().is_empty() && !script.has_subs() {
        return Ok(None);
    }
    let reboot = match reboot {
        Some(v) => parse_bool(&v, "fix@reboot", offset)?,
        None => false,
    };
    let unknown = || "unknown".to_string();
    Ok(Some(RawFix {
        script,
        reboot,
        disruption: disruption.unwrap_or_else(unknown),
        complexity: complexity.unwrap_or_else(unknown),
        strategy: strategy.unwrap_or_else(unknown),
    }))
}

/// The first `check-content-ref` of an OVAL `<check>`.
fn check_ref(x: &mut Xml<'_>) -> ScapResult<Option<OvalRef>> {
    let mut out = None;
    loop {
        let Some((c, c_empty)) = x.child("check")? else {
            return Ok(out);
        };
        if local(&c) == "check-content-ref" && out.is_none() {
            let [name, href] = x.attrs(&c, ["name", "href"])?;
            if let Some(name) = name {
                out = Some(OvalRef { name, href: href.unwrap_or_default() });
            }
        }
        if !c_empty {
            x.skip(&c)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_references() {
        let mut r = RawRule::new("x".into(), Severity::Medium);
        for t in [
            "RHEL-09-255045",
            "SV-257985r1045028_rule",
            "CCI-000366",
            "SRG-OS-000109-GPOS-00056",
            "5.1.20",
            "CIP-003-8 R5.1.1",
            "RHEL-09-255045",
        ] {
            r.reference(t.to_string());
        }
        assert_eq!(r.stig_ids, ["RHEL-09-255045"]);
        assert_eq!(r.sv_ids, ["SV-257985r1045028_rule"]);
        assert_eq!(r.v_ids, ["V-257985"]);
        assert_eq!(r.cci, ["CCI-000366"]);
        assert_eq!(r.srg_ids, ["SRG-OS-000109-GPOS-00056"]);
    }

    #[test]
    fn short_ids() {
        assert_eq!(short_rule_id("xccdf_org.ssgproject.content_rule_sshd_disable_root_login"), "sshd_disable_root_login");
        assert_eq!(short_rule_id("plain"), "plain");
    }
}
