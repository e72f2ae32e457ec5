//! temper's CKL against STIG Viewer 2's checklist schema (DISA's Checklist schema 2.5, restated
//! in tests/data/checklist-schema-2.5.xsd) with `xmllint --schema`, plus what the schema leaves
//! to STIG Viewer: a non-empty Rule_ID, Vuln_Num and Rule_Ver in every VULN, and the STIG_INFO
//! fields STIG Viewer shows (version, releaseinfo, title, stigid).
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use quick_xml::Reader;
use quick_xml::events::Event;
use temper_report::{Format, load, render};

fn xsd() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/checklist-schema-2.5.xsd")
}

/// `xmllint --schema`'s verdict on `ckl`: Ok, or its complaints.
fn xmllint(ckl: &str, name: &str) -> Result<(), String> {
    let path = artifacts().join(name);
    std::fs::write(&path, ckl).unwrap();
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(xsd())
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run xmllint ({e}): run bash tests/report/setup.sh (Debian's libxml2-utils)"));
    if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

/// One `SID_NAME -> SID_DATA` map for STIG_INFO, and one `VULN_ATTRIBUTE -> [ATTRIBUTE_DATA]` per VULN.
type ParsedCkl = (BTreeMap<String, String>, Vec<BTreeMap<String, Vec<String>>>);

fn parse(xml: &str) -> ParsedCkl {
    let mut r = Reader::from_str(xml);
    let (mut info, mut vulns) = (BTreeMap::new(), Vec::<BTreeMap<String, Vec<String>>>::new());
    let (mut name, mut text) = (String::new(), String::new());
    loop {
        let tag = match r.read_event().unwrap() {
            Event::Start(e) => {
                if e.name().as_ref() == "VULN" {
                    vulns.push(BTreeMap::new());
                }
                text.clear();
                continue;
            }
            Event::Text(t) => {
                text.push_str(&t.xml10_content());
                continue;
            }
            // `&apos;` and the like arrive apart from the text around them.
            Event::GeneralRef(g) => {
                match g.resolve_char_ref().unwrap() {
                    Some(c) => text.push(c),
                    None => text.push_str(quick_xml::escape::resolve_predefined_entity(&g.xml10_content()).unwrap()),
                }
                continue;
            }
            Event::End(e) => e.name().as_ref().to_string(),
            Event::Empty(e) => {
                text.clear();
                e.name().as_ref().to_string()
            }
            Event::Eof => break,
            _ => continue,
        };
        match tag.as_str() {
            "SID_NAME" | "VULN_ATTRIBUTE" => name = std::mem::take(&mut text),
            "SID_DATA" => _ = info.insert(name.clone(), std::mem::take(&mut text)),
            "ATTRIBUTE_DATA" => vulns.last_mut().unwrap().entry(name.clone()).or_default().push(std::mem::take(&mut text)),
            _ => {}
        }
    }
    (info, vulns)
}

/// What STIG Viewer needs beyond the schema, as a list of problems (empty when none).
fn beyond_schema(xml: &str) -> Vec<String> {
    let (info, vulns) = parse(xml);
    let mut problems = Vec::new();
    for key in ["version", "releaseinfo", "title", "stigid", "uuid"] {
        if info.get(key).is_none_or(|v| v.trim().is_empty()) {
            problems.push(format!("STIG_INFO {key} is empty"));
        }
    }
    if vulns.is_empty() {
        problems.push("no VULN".into());
    }
    for (i, v) in vulns.iter().enumerate() {
        for key in ["Vuln_Num", "Rule_ID", "Rule_Ver", "Severity", "Rule_Title"] {
            match v.get(key).map(Vec::as_slice) {
                Some([one]) if !one.trim().is_empty() => {}
                other => problems.push(format!("VULN {i}: {key} is {other:?}, not one non-empty value")),
            }
        }
    }
    problems
}

#[tokio::test]
async fn ckl_keeps_to_the_checklist_schema() {
    let f = ReportFixture::rhel9_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let ckl = render(&data, Some(rhel9()), Format::Ckl).unwrap();
    xmllint(&ckl, "rhel9-schema.ckl").unwrap_or_else(|e| panic!("the RHEL 9 STIG run: {e}"));
    assert_eq!(beyond_schema(&ckl), Vec::<String>::new());
    let (info, vulns) = parse(&ckl);
    assert_eq!(info["version"], "2");
    assert_eq!(info["releaseinfo"], "Release: 3 (SSG content 0.1.76)", "STIG Manager reads `Release: N ` as the release");
    assert_eq!(vulns.len(), 18);
    for v in &vulns {
        assert_eq!(v["STIGRef"], ["DISA STIG for Red Hat Enterprise Linux 9 :: Version 2, Release: 3 (SSG content 0.1.76)"]);
        assert_eq!(v["STIG_UUID"], [info["uuid"].clone()]);
    }

    let f = ReportFixture::anssi_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let ckl = render(&data, Some(debian12_anssi()), Format::Ckl).unwrap();
    xmllint(&ckl, "debian12-anssi-schema.ckl").unwrap_or_else(|e| panic!("the Debian 12 ANSSI run: {e}"));
    assert_eq!(beyond_schema(&ckl), Vec::<String>::new());
}

/// Each change to a valid CKL is one STIG Viewer 2 refuses, and the check names it.
#[tokio::test]
async fn the_checks_reject_what_stig_viewer_would() {
    let f = ReportFixture::rhel9_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let ckl = render(&data, Some(rhel9()), Format::Ckl).unwrap();
    xmllint(&ckl, "mutant-base.ckl").unwrap();
    let once = |from: &str, to: &str| {
        assert!(ckl.contains(from), "{from}");
        ckl.replacen(from, to, 1)
    };
    let schema_cases = [
        ("a status outside the four", once("<STATUS>Open</STATUS>", "<STATUS>Fixed</STATUS>"), "STATUS"),
        ("a role outside the four", once("<ROLE>None</ROLE>", "<ROLE>Server</ROLE>"), "ROLE"),
        ("an unknown SI_DATA name", once("<SID_NAME>notice</SID_NAME>", "<SID_NAME>planguage</SID_NAME>"), "SID_NAME"),
        (
            "an unknown STIG_DATA name",
            once("<VULN_ATTRIBUTE>Weight</VULN_ATTRIBUTE>", "<VULN_ATTRIBUTE>temper</VULN_ATTRIBUTE>"),
            "VULN_ATTRIBUTE",
        ),
        ("a missing TARGET_KEY", once("\t\t<TARGET_KEY></TARGET_KEY>\n", ""), "WEB_OR_DATABASE"),
        (
            "WEB_OR_DATABASE not a boolean",
            once("<WEB_OR_DATABASE>false</WEB_OR_DATABASE>", "<WEB_OR_DATABASE>no</WEB_OR_DATABASE>"),
            "WEB_OR_DATABASE",
        ),
        ("an ASSET_TYPE outside the two", once("<ASSET_TYPE>Computing</ASSET_TYPE>", "<ASSET_TYPE>VM</ASSET_TYPE>"), "ASSET_TYPE"),
        ("an element of our own", once("<COMMENTS>", "<TEMPER>x</TEMPER><COMMENTS>"), "TEMPER"),
    ];
    for (i, (what, bad, needle)) in schema_cases.iter().enumerate() {
        let err = xmllint(bad, &format!("mutant-{i}.ckl")).err().unwrap_or_else(|| panic!("{what}: xmllint accepted it"));
        assert!(err.contains(needle), "{what}: {err}");
    }
    let rule_id = parse(&ckl).1[0]["Rule_ID"][0].clone();
    let empty_rule_id = once(&format!("<ATTRIBUTE_DATA>{rule_id}</ATTRIBUTE_DATA>"), "<ATTRIBUTE_DATA></ATTRIBUTE_DATA>");
    let no_version = once("<SID_DATA>2</SID_DATA>", "");
    for (what, bad, needle) in [("an empty Rule_ID", empty_rule_id, "Rule_ID"), ("no STIG version", no_version, "version")] {
        assert!(xmllint(&bad, "mutant-beyond.ckl").is_ok(), "{what}: the schema itself allows it");
        let problems = beyond_schema(&bad);
        assert!(problems.iter().any(|p| p.contains(needle)), "{what}: {problems:?}");
    }
}
