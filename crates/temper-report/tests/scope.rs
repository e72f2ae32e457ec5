//! A `--rules` run in the reports: the failing rules outside its scope show as out of scope, in
//! no count of rules left failing, and the checklists keep the scan's status with a comment
//! saying the run did not work on them. The JSON report's reboot proof is a value.
mod common;

use common::*;
use temper_report::{Format, load, render};

/// An ANSSI run scoped to two rules: one fixed, one still failing; two failing rules outside it.
async fn scoped_run() -> (ReportFixture, Vec<String>) {
    let c = debian12_anssi();
    let ds = ssg("ssg-debian12-ds.xml").display().to_string();
    let f = ReportFixture::open(&new_run("debian12-anssi", ANSSI, &ds, Some(c.version.clone()), "t", "stock")).await;
    let (s, run) = (&f.store, f.run);
    let ids: Vec<String> = c.selected_rules.iter().filter(|r| r.stig_ids.is_empty()).take(4).map(|r| r.id.clone()).collect();
    let statuses = [RuleStatus::Pending, RuleStatus::Pending, RuleStatus::OutOfScope, RuleStatus::OutOfScope];
    for (id, status) in ids.iter().zip(statuses) {
        let reason = (status == RuleStatus::OutOfScope).then_some("outside this run's scope (--rules): not worked on");
        s.add_rule(run, &new_rule(id, "", "medium", ScanResult::Fail, status, reason)).await.unwrap();
    }
    s.set_rule_status(run, &ids[0], RuleStatus::Fixed, None).await.unwrap();
    s.set_rule_status(run, &ids[1], RuleStatus::StillFailing, Some("attempts ended without a fix")).await.unwrap();
    for (i, id) in ids.iter().enumerate() {
        s.set_final_result(run, id, if i == 0 { ScanResult::Pass } else { ScanResult::Fail }).await.unwrap();
    }
    let summary = RunSummary { run: Some(run), exit_code: 2, rebooted: Some(false), ..Default::default() };
    s.finish_run(run, &summary).await.unwrap();
    (f, ids)
}

#[tokio::test]
async fn rules_out_of_scope_are_shown_as_such_and_counted_apart() {
    let (f, ids) = scoped_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let c = debian12_anssi();

    let json: serde_json::Value = serde_json::from_str(&render(&data, Some(c), Format::Json).unwrap()).unwrap();
    assert_eq!(json["out_of_scope"], 2);
    let count = |name: &str| json["dispositions"].as_array().unwrap().iter().find(|d| d["name"] == name).cloned();
    let still = count("still_failing").unwrap();
    assert_eq!((still["before"].as_u64(), still["after"].as_u64()), (Some(2), Some(1)), "the scope's failing rules only: {still}");
    let out = count("out_of_scope").expect("out_of_scope among the dispositions");
    assert_eq!((out["before"].as_u64(), out["after"].as_u64()), (Some(2), Some(2)));
    let status_of = |id: &str| json["rules"].as_array().unwrap().iter().find(|r| r["rule_id"] == id).unwrap()["status"].clone();
    assert_eq!(status_of(&ids[2]), "out_of_scope");
    assert_eq!(json["reboot"]["proof"], "not_proven", "a value a program reads");
    assert!(json["reboot"]["reason"].as_str().unwrap().contains("NOT proven"), "{}", json["reboot"]);

    let md = render(&data, Some(c), Format::Md).unwrap();
    assert!(md.contains("Scope: 2 failing rules were outside this run's scope"), "{md}");
    assert!(md.lines().any(|l| l == "| out of scope | 2 | 2 |"), "{md}");
    let html = render(&data, Some(c), Format::Html).unwrap();
    assert!(html.contains("Scope: 2 failing rules were outside this run") && html.contains("data-status=\"out_of_scope\""));
    assert!(html.contains("reboot-not_proven"));

    let ckl = render(&data, Some(c), Format::Ckl).unwrap();
    let short = temper_scap::short_rule_id(&ids[2]);
    let vuln = ckl.split("<VULN>").find(|v| v.contains(&format!("<ATTRIBUTE_DATA>{short}</ATTRIBUTE_DATA>"))).expect("its VULN");
    assert!(vuln.contains("<STATUS>Open</STATUS>"), "the finding stands as scanned");
    assert!(vuln.contains("out of the scope of temper run"), "and says the run did not work on it");
    let cklb = render(&data, Some(c), Format::Cklb).unwrap();
    assert!(cklb.contains("out of the scope of temper run"));
}
