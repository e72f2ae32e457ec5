//! STIG Viewer 3 checklist (CKLB, JSON, `cklb_version` 1.0), with the fields STIG Viewer 3
//! writes for each rule (uuids, `*_src` ids, `group_tree`, `overrides`...). DISA's schema sets
//! `additionalProperties: false`, so every object holds only the schema's fields: no
//! `stigs[].version` (the version goes in each rule's `stig_ref`), and temper's own information
//! only inside `finding_details` and `comments`.
use serde_json::{Value, json};

use super::checklist::{Checklist, Vuln};
use super::ckl::{MARKING, host_name, stig_ref, stig_uuid, version_release};
use crate::error::ReportError;

pub fn render(list: &Checklist) -> Result<String, ReportError> {
    let stig_uuid = stig_uuid(list);
    let (_, release) = version_release(list);
    let stig = Stig { uuid: stig_uuid, stig_ref: stig_ref(list), created: list.created.clone() };
    let rules: Vec<Value> = list.vulns.iter().map(|v| rule(v, &stig)).collect();
    let doc = json!({
        "title": format!("temper run {}: {}", list.run_id, list.profile_title),
        "id": uuid::Uuid::new_v5(&stig_uuid, format!("run:{}", list.run_id).as_bytes()).to_string(),
        "active": false,
        "mode": 2,
        "has_path": true,
        "target_data": {
            "target_type": "Computing",
            "host_name": host_name(&list.target),
            "ip_address": "",
            "mac_address": "",
            "fqdn": "",
            "comments": list.target_comment,
            "role": "None",
            "is_web_database": false,
            "technology_area": "UNIX OS",
            "web_db_site": "",
            "web_db_instance": "",
            "classification": MARKING,
        },
        "stigs": [{
            "stig_name": list.profile_title,
            "display_name": list.profile_title,
            "stig_id": list.benchmark_id,
            "release_info": release,
            "uuid": stig_uuid.to_string(),
            "reference_identifier": Value::Null,
            "size": rules.len(),
            "rules": rules,
        }],
        "cklb_version": "1.0",
    });
    Ok(serde_json::to_string_pretty(&doc)?)
}

/// What every rule repeats about its STIG.
struct Stig {
    uuid: uuid::Uuid,
    stig_ref: String,
    created: String,
}

fn rule(v: &Vuln, stig: &Stig) -> Value {
    let uuid = uuid::Uuid::new_v5(&stig.uuid, v.rule_ver.as_bytes());
    let (stig_uuid, created) = (stig.uuid.to_string(), &stig.created);
    // STIG Viewer 3 keeps `SV-257985r1045028` in rule_id and the full id in rule_id_src.
    let rule_id = v.rule_id.strip_suffix("_rule").unwrap_or(&v.rule_id);
    json!({
        "uuid": uuid.to_string(),
        "stig_uuid": stig_uuid,
        "target_key": Value::Null,
        "stig_ref": stig.stig_ref,
        "group_id": v.group_id,
        "group_id_src": v.group_id,
        "rule_id": rule_id,
        "rule_id_src": v.rule_id,
        "weight": "10.0",
        "classification": "Unclassified",
        "severity": v.severity,
        "rule_version": v.rule_ver,
        "rule_title": v.title,
        "fix_text": v.fix_text,
        "reference_identifier": Value::Null,
        "group_title": v.group_title,
        "false_positives": "",
        "false_negatives": "",
        "discussion": v.discussion,
        "check_content": v.check_content,
        "documentable": "false",
        "mitigations": "",
        "potential_impacts": "",
        "third_party_tools": "",
        "mitigation_control": "",
        "responsibility": "",
        "security_override_guidance": "",
        "ia_controls": "",
        "check_content_ref": {"href": "", "name": "M"},
        "legacy_ids": [],
        "ccis": v.ccis,
        "group_tree": [{"id": v.group_id, "title": v.group_title, "description": "<GroupDescription></GroupDescription>"}],
        "createdAt": created,
        "updatedAt": created,
        "STIGUuid": stig_uuid,
        "status": v.status.cklb(),
        "overrides": {},
        "comments": v.comments,
        "finding_details": v.finding_details,
    })
}
