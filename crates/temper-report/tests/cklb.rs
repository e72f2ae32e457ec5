//! temper's CKLB held to DISA's CKLB schema (tests/data/cklb.schema.json, every object closed
//! with `additionalProperties: false`) and read back by STIG Manager's own CKLB parser
//! (`reviewsFromCklb` of @nuwcdivnpt/stig-manager-client-modules, via tests/report/cklb2reviews.js).
mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::*;
use jsonschema::Validator;
use serde_json::{Value, json};
use temper_report::{Format, load, render};

fn schema() -> Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cklb.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    jsonschema::options().should_validate_formats(true).build(&schema).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every schema error of `doc`, as `path: message`.
fn errors(schema: &Validator, doc: &Value) -> Vec<String> {
    schema.iter_errors(doc).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

async fn rhel9_cklb() -> Value {
    let f = ReportFixture::rhel9_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    serde_json::from_str(&render(&data, Some(rhel9()), Format::Cklb).unwrap()).unwrap()
}

#[tokio::test]
async fn cklb_keeps_to_disas_schema() {
    let schema = schema();
    let doc = rhel9_cklb().await;
    assert_eq!(errors(&schema, &doc), Vec::<String>::new(), "the RHEL 9 STIG run");
    let rules = doc["stigs"][0]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 18);
    // The schema's only homes for temper's evidence and its fixes.
    assert!(rules.iter().all(|r| r["finding_details"].as_str().unwrap().starts_with("temper run 1 on libvirt:temper-rhel9")));
    let owner = rules.iter().find(|r| r["rule_version"] == "RHEL-09-255110").unwrap();
    assert!(owner["comments"].as_str().unwrap().contains("chown 0 /etc/ssh/sshd_config"));
    assert_eq!(owner["stig_ref"], "DISA STIG for Red Hat Enterprise Linux 9 :: Version 2, Release: 3 (SSG content 0.1.76)");

    let f = ReportFixture::anssi_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let anssi: Value = serde_json::from_str(&render(&data, Some(debian12_anssi()), Format::Cklb).unwrap()).unwrap();
    assert_eq!(errors(&schema, &anssi), Vec::<String>::new(), "the Debian 12 ANSSI run (no DISA ids)");
}

/// Each change makes a valid CKLB invalid, and the error names the place.
#[tokio::test]
async fn a_field_of_our_own_or_a_wrong_value_fails_the_schema() {
    let schema = schema();
    let doc = rhel9_cklb().await;
    assert!(errors(&schema, &doc).is_empty());
    type Edit = fn(&mut Value);
    let cases: [(&str, Edit, &str); 8] = [
        ("a top-level field", |d| d["temper_run"] = json!(1), "temper_run"),
        ("a field in a rule", |d| d["stigs"][0]["rules"][3]["temper_verdict"] = json!("fixed"), "temper_verdict"),
        ("a field in target_data", |d| d["target_data"]["os"] = json!("RHEL 9"), "os"),
        ("stigs[].version, which the schema lacks", |d| d["stigs"][0]["version"] = json!("2"), "version"),
        ("a status outside the enum", |d| d["stigs"][0]["rules"][0]["status"] = json!("fixed"), "/stigs/0/rules/0/status"),
        ("a severity outside the enum", |d| d["stigs"][0]["rules"][1]["severity"] = json!("unknown"), "/stigs/0/rules/1/severity"),
        ("a required stig field missing", |d| _ = d["stigs"][0].as_object_mut().unwrap().remove("size"), "size"),
        ("a checklist id that is no UUID", |d| d["id"] = json!("run-1"), "/id"),
    ];
    for (what, edit, needle) in cases {
        let mut bad = doc.clone();
        edit(&mut bad);
        let errs = errors(&schema, &bad);
        assert!(!errs.is_empty(), "{what}: the schema accepted it");
        assert!(errs.iter().any(|e| e.contains(needle)), "{what}: {errs:?}");
    }
}

/// The result STIG Manager gives each CKLB status.
fn stig_manager_result(status: &str) -> &'static str {
    match status {
        "not_a_finding" => "pass",
        "open" => "fail",
        "not_applicable" => "notapplicable",
        "not_reviewed" => "notchecked",
        other => panic!("not a CKLB status: {other}"),
    }
}

#[tokio::test]
async fn stig_manager_reads_every_rule_and_status() {
    let doc = rhel9_cklb().await;
    let path = artifacts().join("rhel9-stig-manager.cklb");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let dir = node_dir();
    let out = run(Command::new("node").arg(dir.join("cklb2reviews.js")).arg(&path).current_dir(&dir));
    let parsed: Value = serde_json::from_str(&out).unwrap();

    assert_eq!(parsed["errors"], json!([]), "the parser reports no errors");
    assert_eq!(parsed["target"]["name"], "temper-rhel9");
    assert_eq!(parsed["target"]["noncomputing"], false);
    assert_eq!(parsed["target"]["metadata"]["cklTechArea"], "UNIX OS");
    let lists = parsed["checklists"].as_array().unwrap();
    assert_eq!(lists.len(), 1, "one STIG, one checklist");
    let list = &lists[0];
    assert_eq!(list["benchmarkId"], doc["stigs"][0]["stig_id"]);
    // The release comes from release_info; the version has no field in DISA's schema.
    assert_eq!(list["revisionStr"], "V0R3");

    let rules = doc["stigs"][0]["rules"].as_array().unwrap();
    let wrote: BTreeMap<&str, &str> =
        rules.iter().map(|r| (r["rule_id_src"].as_str().unwrap(), stig_manager_result(r["status"].as_str().unwrap()))).collect();
    assert_eq!(wrote.len(), rules.len(), "rule_id_src is unique");
    let reviews = list["reviews"].as_array().unwrap();
    assert_eq!(reviews.len(), rules.len(), "STIG Manager kept every rule");
    let read: BTreeMap<&str, &str> = reviews.iter().map(|r| (r["ruleId"].as_str().unwrap(), r["result"].as_str().unwrap())).collect();
    assert_eq!(read, wrote, "every rule with its own result");
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for result in wrote.values() {
        *counts.entry(result).or_default() += 1;
    }
    for (result, n) in &counts {
        assert_eq!(list["stats"][result], *n, "stats.{result}");
    }
    eprintln!("STIG Manager read {} reviews: {counts:?}", reviews.len());
    for r in reviews {
        let rule = rules.iter().find(|x| x["rule_id_src"] == r["ruleId"]).unwrap();
        assert_eq!(r["detail"], rule["finding_details"], "{}: the evidence as written", r["ruleId"]);
    }
}
