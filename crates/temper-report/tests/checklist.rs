//! STIG Viewer checklists of a real run, read back by a real consumer: MITRE's hdf-converters
//! (what `saf convert ckl2hdf` and Heimdall use) for CKL; CKLB checked field by field
//! against the CKL, since hdf-converters has no CKLB reader.
mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use common::*;
use quick_xml::Reader;
use quick_xml::events::Event;
use serde_json::Value;
use temper_report::{Format, load, render};

/// (Vuln_Num, Rule_Ver, STATUS) of each VULN, read with quick-xml's reader.
fn ckl_vulns(xml: &str) -> Vec<(String, String, String)> {
    let mut r = Reader::from_str(xml);
    let mut out = Vec::new();
    let (mut attr, mut path, mut cur) = (String::new(), Vec::<String>::new(), (String::new(), String::new(), String::new()));
    loop {
        match r.read_event().unwrap() {
            Event::Start(e) => path.push(e.name().as_ref().to_string()),
            Event::End(e) => {
                if e.name().as_ref() == "VULN" {
                    out.push(std::mem::take(&mut cur));
                }
                path.pop();
            }
            Event::Text(t) => {
                let t = t.xml10_content().into_owned();
                match path.last().map(String::as_str) {
                    Some("VULN_ATTRIBUTE") => attr = t,
                    Some("ATTRIBUTE_DATA") if attr == "Vuln_Num" => cur.0 = t,
                    Some("ATTRIBUTE_DATA") if attr == "Rule_Ver" => cur.1 = t,
                    Some("STATUS") => cur.2 = t,
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

/// hdf-converters' reading of `ckl` (a file), as printed by tests/report/ckl2hdf.js.
fn hdf(ckl: &Path, name: &str) -> Value {
    let dir = node_dir();
    let out_json = artifacts().join(format!("{name}.hdf.json"));
    let text = run(Command::new("node").arg(dir.join("ckl2hdf.js")).arg(ckl).arg(&out_json).current_dir(&dir));
    serde_json::from_str(&text).unwrap()
}

fn hdf_status(ckl: &str) -> (&'static str, &'static str) {
    match ckl {
        "NotAFinding" => ("passed", "Passed"),
        "Open" => ("failed", "Failed"),
        "Not_Applicable" => ("skipped", "Not Applicable"),
        "Not_Reviewed" => ("skipped", "Not Reviewed"),
        other => panic!("not a CKL status: {other}"),
    }
}

#[tokio::test]
async fn ckl_survives_hdf_converters_with_every_rule_and_status() {
    let f = ReportFixture::rhel9_run().await;
    let c = rhel9();
    let data = load(&f.store, f.run).await.unwrap();
    let ckl = render(&data, Some(c), Format::Ckl).unwrap();
    let path = artifacts().join("rhel9.ckl");
    std::fs::write(&path, &ckl).unwrap();

    // One VULN per DISA id of the run's rules, straight from the content.
    let expected: BTreeSet<String> = data.rules.iter().flat_map(|r| c.rule(&r.rule_id).unwrap().stig_ids.clone()).collect();
    let vulns = ckl_vulns(&ckl);
    assert_eq!(vulns.iter().map(|v| v.1.clone()).collect::<BTreeSet<_>>(), expected);
    assert_eq!(vulns.len(), expected.len(), "one VULN per STIG id");

    let h = hdf(&path, "rhel9");
    assert_eq!(h["profile"]["title"], "DISA STIG for Red Hat Enterprise Linux 9");
    assert_eq!(h["profile"]["version"], "2", "V2R3 from the profile");
    let controls = h["controls"].as_array().unwrap();
    assert_eq!(controls.len(), vulns.len(), "hdf-converters kept every VULN");
    for (vnum, ver, status) in &vulns {
        let ctl = controls.iter().find(|x| x["id"] == vnum.as_str()).unwrap_or_else(|| panic!("{vnum} lost"));
        assert_eq!(ctl["stig_id"], ver.as_str());
        let (hdf_st, list_st) = hdf_status(status);
        assert_eq!(ctl["status"], serde_json::json!([hdf_st]), "{vnum} {ver}");
        assert_eq!(h["checklist_status"][vnum], list_st, "{vnum}");
        assert!(ctl["finding_details"].as_str().unwrap().contains("temper run 1"), "{vnum}: evidence");
        if status == "Not_Applicable" {
            assert_eq!(ctl["impact"], 0.0);
        }
    }

    // The merges, on the content's real shared ids.
    let by_ver = |id: &str| controls.iter().find(|x| x["stig_id"] == id).unwrap_or_else(|| panic!("{id}"));
    let owner = by_ver("RHEL-09-255110");
    assert_eq!(owner["status"][0], "failed", "a pass (and a fix) never hides the drop-in's failure");
    assert_eq!(owner["id"], "V-257998");
    assert_eq!(owner["rid"], "SV-257998r1045059_rule");
    assert!(owner["title"].as_str().unwrap().contains("and 2 more SSG rules"));
    assert!(owner["comments"].as_str().unwrap().contains("chown 0 /etc/ssh/sshd_config"), "the fix applied");
    assert!(owner["comments"].as_str().unwrap().contains("escalated to a human"), "the escalation");
    assert!(owner["finding_details"].as_str().unwrap().contains("3 SSG rules check this item"));
    assert_eq!(by_ver("RHEL-09-651010")["status"][0], "passed", "two passes merge to a pass");
    assert_eq!(by_ver("RHEL-09-654015")["status"][0], "failed", "error over pass: open");
    assert_eq!(h["checklist_status"][by_ver("RHEL-09-271010")["id"].as_str().unwrap()], "Not Applicable");
    let root = by_ver(&c.rule(FIXED_ROOT).unwrap().stig_ids[0]);
    assert_eq!(root["status"][0], "passed");
    let comments = root["comments"].as_str().unwrap();
    assert!(
        comments.contains("a < b && c > d \"dq\" 'sq' </pre><script>alert(1)</script> ]]> {{ x }} ```"),
        "the script survives XML escaping: {comments}"
    );
    assert!(comments.contains("\\x1b[31mred"), "the ESC XML cannot carry is written as \\x1b");
    assert_eq!(by_ver(&c.rule("sshd_set_idle_timeout").unwrap().stig_ids[0])["status"][0], "failed");
    let fips = by_ver(&c.rule("enable_fips_mode").unwrap().stig_ids[0]);
    assert!(fips["comments"].as_str().unwrap().contains("skipped by temper"));
    let mut ccis: Vec<String> = Vec::new();
    for short in ["enable_fips_mode", "configure_crypto_policy"] {
        for cci in &c.rule(short).unwrap().cci {
            if !ccis.contains(cci) {
                ccis.push(cci.clone());
            }
        }
    }
    assert_eq!(fips["stig_id"], "RHEL-09-671010");
    assert_eq!(fips["cci"], serde_json::json!(ccis), "one CCI_REF per CCI, both rules'");
    assert_eq!(fips["status"][0], "failed", "skipped and waived rules still fail the scan");
    assert_eq!(h["asset"]["hostname"], "temper-rhel9");
}

#[tokio::test]
async fn cklb_carries_the_same_rules_and_statuses_with_the_fields_stig_viewer_3_writes() {
    let f = ReportFixture::rhel9_run().await;
    let c = rhel9();
    let data = load(&f.store, f.run).await.unwrap();
    let ckl = render(&data, Some(c), Format::Ckl).unwrap();
    let cklb = render(&data, Some(c), Format::Cklb).unwrap();
    std::fs::write(artifacts().join("rhel9.cklb"), &cklb).unwrap();
    let v: Value = serde_json::from_str(&cklb).unwrap();
    assert_eq!(v["cklb_version"], "1.0");
    for k in ["title", "id", "active", "mode", "has_path", "target_data", "stigs"] {
        assert!(v.get(k).is_some(), "top-level {k}");
    }
    for k in [
        "target_type",
        "host_name",
        "ip_address",
        "mac_address",
        "fqdn",
        "comments",
        "role",
        "is_web_database",
        "technology_area",
        "web_db_site",
        "web_db_instance",
    ] {
        assert!(v["target_data"].get(k).is_some(), "target_data.{k}");
    }
    let stig = &v["stigs"][0];
    for k in ["stig_name", "display_name", "stig_id", "release_info", "uuid", "reference_identifier", "size", "rules"] {
        assert!(stig.get(k).is_some(), "stig.{k}");
    }
    let rules = stig["rules"].as_array().unwrap();
    assert_eq!(stig["size"], rules.len());
    // Every field of heimdall2's CKLB stig_rule type.
    let fields = [
        "uuid",
        "stig_uuid",
        "group_id",
        "group_id_src",
        "rule_id",
        "rule_id_src",
        "target_key",
        "stig_ref",
        "weight",
        "classification",
        "severity",
        "rule_version",
        "rule_title",
        "fix_text",
        "reference_identifier",
        "group_title",
        "false_positives",
        "false_negatives",
        "discussion",
        "check_content",
        "documentable",
        "mitigations",
        "potential_impacts",
        "third_party_tools",
        "mitigation_control",
        "responsibility",
        "security_override_guidance",
        "ia_controls",
        "check_content_ref",
        "legacy_ids",
        "ccis",
        "group_tree",
        "createdAt",
        "updatedAt",
        "status",
        "overrides",
        "comments",
        "finding_details",
        "STIGUuid",
    ];
    let mut uuids = BTreeSet::new();
    for r in rules {
        for k in fields {
            assert!(r.get(k).is_some(), "rule {} lacks {k}", r["rule_version"]);
        }
        assert!(uuids.insert(r["uuid"].as_str().unwrap().to_string()), "uuid unique");
        assert!(["high", "medium", "low"].contains(&r["severity"].as_str().unwrap()));
    }
    let ckl_status: BTreeMap<String, String> = ckl_vulns(&ckl).into_iter().map(|(v, _, s)| (v, s)).collect();
    let cklb_status: BTreeMap<String, String> = rules
        .iter()
        .map(|r| {
            let s = match r["status"].as_str().unwrap() {
                "not_a_finding" => "NotAFinding",
                "open" => "Open",
                "not_applicable" => "Not_Applicable",
                "not_reviewed" => "Not_Reviewed",
                other => panic!("not a CKLB status: {other}"),
            };
            (r["group_id"].as_str().unwrap().to_string(), s.to_string())
        })
        .collect();
    assert_eq!(ckl_status, cklb_status);
    let owner = rules.iter().find(|r| r["rule_version"] == "RHEL-09-255110").unwrap();
    assert_eq!(owner["rule_id"], "SV-257998r1045059");
    assert_eq!(owner["rule_id_src"], "SV-257998r1045059_rule");
    let root = rules.iter().find(|r| r["rule_version"] == c.rule(FIXED_ROOT).unwrap().stig_ids[0].as_str()).unwrap();
    assert!(root["comments"].as_str().unwrap().contains("</pre><script>alert(1)</script> ]]> {{ x }}"), "JSON keeps the script as is");
    assert_eq!(root["status"], "not_a_finding");
}

/// Every rule of the profile: one VULN per STIG id, V ids one-to-one with STIG ids (the
/// content lists a rule's SV ids apart from its STIG ids), all read back by hdf-converters.
#[tokio::test]
async fn a_whole_profile_checklist_has_one_entry_per_stig_id() {
    let c = rhel9();
    let f = ReportFixture::open(&new_run("s", STIG, "ds.xml", None, "libvirt:all", "a")).await;
    for r in &c.selected_rules {
        f.store
            .add_rule(f.run, &new_rule(&r.id, &r.title, r.severity.as_str(), ScanResult::Pass, RuleStatus::Passing, None))
            .await
            .unwrap();
    }
    let data = load(&f.store, f.run).await.unwrap();
    let ckl = render(&data, Some(c), Format::Ckl).unwrap();
    let path = artifacts().join("rhel9-all.ckl");
    std::fs::write(&path, &ckl).unwrap();
    let stig_ids: BTreeSet<&str> = c.selected_rules.iter().flat_map(|r| r.stig_ids.iter().map(String::as_str)).collect();
    let vulns = ckl_vulns(&ckl);
    assert_eq!(vulns.len(), stig_ids.len());
    let vnums: BTreeSet<&str> = vulns.iter().map(|v| v.0.as_str()).collect();
    assert_eq!(vnums.len(), vulns.len(), "Vuln_Num is unique");
    let with_v = vulns.iter().filter(|v| v.0.starts_with("V-")).count();
    eprintln!(
        "{} STIG ids, {} with a V id, {} without (the content pairs them ambiguously or not at all)",
        vulns.len(),
        with_v,
        vulns.len() - with_v
    );
    assert!(with_v * 100 >= vulns.len() * 99, "nearly every STIG id gets its V id: {with_v} of {}", vulns.len());
    for (vnum, _, status) in &vulns {
        assert_eq!(status, "NotAFinding", "{vnum}: every rule passed (first scan, no final scan)");
    }
    let h = hdf(&path, "rhel9-all");
    assert_eq!(h["controls"].as_array().unwrap().len(), vulns.len());
}

#[tokio::test]
async fn a_profile_without_disa_ids_uses_ssg_ids_and_stays_readable() {
    let f = ReportFixture::anssi_run().await;
    let c = debian12_anssi();
    assert!(c.selected_rules.iter().all(|r| r.stig_ids.is_empty()), "the ANSSI profile has no DISA ids");
    let data = load(&f.store, f.run).await.unwrap();
    let ckl = render(&data, Some(c), Format::Ckl).unwrap();
    let path = artifacts().join("debian12-anssi.ckl");
    std::fs::write(&path, &ckl).unwrap();
    let vulns = ckl_vulns(&ckl);
    assert_eq!(vulns.len(), 6);
    for (r, v) in data.rules.iter().zip(&vulns) {
        let short = temper_scap::short_rule_id(&r.rule_id);
        assert!(vulns.iter().any(|v| v.1 == short && v.0 == short), "{short} is its own entry");
        let _ = v;
    }
    let h = hdf(&path, "debian12-anssi");
    let controls = h["controls"].as_array().unwrap();
    assert_eq!(controls.len(), 6);
    let statuses: BTreeMap<String, String> =
        controls.iter().map(|x| (x["id"].as_str().unwrap().into(), x["status"][0].as_str().unwrap().into())).collect();
    let expect = |i: usize| statuses[temper_scap::short_rule_id(&data.rules[i].rule_id)].clone();
    assert_eq!(expect(0), "passed", "fixed");
    assert_eq!(expect(1), "failed", "escalated");
    assert_eq!(expect(2), "passed");
    assert_eq!(expect(4), "skipped", "notapplicable");
    assert_eq!(expect(5), "failed");
    assert!(ckl.contains("no DISA STIG ids"), "the checklist says so");
}
