//! JSON shapes for the CLI (`temper content rules|profiles --json`, `temper scan parse --json`).
use serde_json::{Value, json};

use crate::datastream::{ContentRule, ProfileInfo};
use crate::results::{Outcome, TestResult};

/// `{id, title, severity, stig_ids, sv_ids, v_ids, cci, has_fix, fix}`; `fix` is null or
/// `{script, reboot, disruption, complexity, strategy}` with the script resolved.
pub fn rule_json(r: &ContentRule) -> Value {
    json!({
        "id": r.id,
        "title": r.title,
        "severity": r.severity,
        "stig_ids": r.stig_ids,
        "sv_ids": r.sv_ids,
        "v_ids": r.v_ids,
        "cci": r.cci,
        "has_fix": r.has_fix(),
        "fix": r.fix.as_ref().map(|f| json!({
            "script": f.script,
            "reboot": f.reboot,
            "disruption": f.disruption,
            "complexity": f.complexity,
            "strategy": f.strategy,
        })),
    })
}

pub fn rules_json(rules: &[ContentRule]) -> Value {
    Value::Array(rules.iter().map(rule_json).collect())
}

/// `[{id, title, description}]`.
pub fn profiles_json(profiles: &[ProfileInfo]) -> Value {
    json!(profiles)
}

/// `{profile, target, start_time, end_time, score, counts, rules: [{id, result, severity}]}`.
/// Without `all`, `notselected` results are left out of both `counts` and `rules`.
pub fn results_json(t: &TestResult, all: bool) -> Value {
    let rules: Vec<Value> = t
        .rule_results
        .iter()
        .filter(|r| all || r.result != Outcome::NotSelected)
        .map(|r| json!({"id": r.idref, "result": r.result, "severity": r.severity}))
        .collect();
    json!({
        "profile": t.profile,
        "target": t.target,
        "start_time": t.start_time,
        "end_time": t.end_time,
        "score": t.score(),
        "counts": t.counts(all),
        "rules": rules,
    })
}
