//! A rule's ids and prose: from the content when it has the rule, else from the store.
use serde::Serialize;
use temper_journal as journal;
use temper_scap::{ContentRule, Severity};

use crate::text::short;

/// DISA and SSG ids and prose for one rule, from the content when it has the rule.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RuleInfo {
    pub rule_id: String,
    pub short_id: String,
    pub anchor: String,
    pub title: String,
    pub severity: Severity,
    pub stig_ids: Vec<String>,
    pub sv_ids: Vec<String>,
    pub v_ids: Vec<String>,
    pub srg_ids: Vec<String>,
    pub cci: Vec<String>,
    pub description: String,
    pub rationale: String,
    pub oval: Option<String>,
    pub stock_fix: Option<String>,
}

pub fn rule_info(r: &journal::Rule, c: Option<&ContentRule>) -> RuleInfo {
    let short_id = short(&r.rule_id).to_string();
    RuleInfo {
        rule_id: r.rule_id.clone(),
        anchor: format!("rule-{}", short_id.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "-")),
        short_id,
        title: journal::plan::title(r, c),
        severity: c.map_or(r.severity, |c| c.severity),
        stig_ids: c.map(|c| c.stig_ids.clone()).unwrap_or_default(),
        sv_ids: c.map(|c| c.sv_ids.clone()).unwrap_or_default(),
        v_ids: c.map(|c| c.v_ids.clone()).unwrap_or_default(),
        srg_ids: c.map(|c| c.srg_ids.clone()).unwrap_or_default(),
        cci: c.map(|c| c.cci.clone()).unwrap_or_default(),
        description: c.map(|c| c.description.clone()).unwrap_or_default(),
        rationale: c.map(|c| c.rationale.clone()).unwrap_or_default(),
        oval: c.and_then(|c| c.oval.as_ref()).map(|o| format!("{} in {}", o.name, o.href)),
        stock_fix: c.and_then(|c| c.fix.as_ref()).map(|f| f.script.clone()),
    }
}
