//! The results reader on the real scan, on an ARF made by real oscap, and on small inputs.
mod common;

use std::collections::BTreeSet;

use common::{oscap, shared_results, ssg};
use temper_scap::{Outcome, ScapError, Severity, parse_results, parse_results_bytes, results_json};

#[test]
fn real_scan_counts() {
    let path = shared_results();
    let t = parse_results(&path).unwrap();
    let all = t.counts(true);
    assert_eq!(all.get("fail"), Some(&19));
    assert_eq!(all.get("pass"), Some(&19));
    assert_eq!(all.get("notapplicable"), Some(&6));
    assert_eq!(all.get("notselected"), Some(&547));
    assert_eq!(all.len(), 4, "{all:?}");
    // Cross-check each count against the raw text.
    let raw = std::fs::read_to_string(&path).unwrap();
    for (k, n) in &all {
        assert_eq!(raw.matches(&format!("<result>{k}</result>")).count(), *n, "{k}");
    }
    let shown = t.counts(false);
    assert!(!shown.contains_key("notselected"));
    assert_eq!(shown.values().sum::<usize>(), 44);

    assert_eq!(t.id, "xccdf_org.open-scap_testresult_xccdf_org.ssgproject.content_profile_standard");
    assert_eq!(t.profile.as_deref(), Some("xccdf_org.ssgproject.content_profile_standard"));
    assert_eq!(t.benchmark_id.as_deref(), Some("xccdf_org.ssgproject.content_benchmark_DEBIAN-12"));
    assert_eq!(t.start_time.as_deref(), Some("2026-11-21T23:01:23+00:00"));
    assert_eq!(t.end_time.as_deref(), Some("2026-11-21T23:01:34+00:00"));
    assert_eq!(t.test_system.as_deref(), Some("cpe:/a:redhat:openscap:1.3.7"));
    assert_eq!(t.target.as_deref(), Some("scapguest"));
    assert!(t.target_addresses.contains(&"10.0.2.15".to_string()));
    let s = t.score().unwrap();
    assert_eq!(s.system, "urn:xccdf:scoring:default");
    assert_eq!(s.maximum, Some(100.0));
    assert_eq!(s.value, 12.5);

    assert_eq!(t.result_of("partition_for_home"), Some(Outcome::Fail));
    assert_eq!(t.result_of("xccdf_org.ssgproject.content_rule_partition_for_home"), Some(Outcome::Fail));
    assert_eq!(t.result_of("auditd_freq"), Some(Outcome::NotSelected));
    assert_eq!(t.result_of("no_such_rule"), None);
    let home = t.rule_results.iter().find(|r| r.idref.ends_with("_rule_partition_for_home")).unwrap();
    assert_eq!(home.severity, Severity::Low);
    assert_eq!(home.time.as_deref(), Some("2026-11-21T23:01:25+00:00"));
}

#[test]
fn results_json_shape() {
    let t = parse_results(shared_results()).unwrap();
    let v = results_json(&t, false);
    assert_eq!(v["counts"]["fail"], 19);
    assert!(v["counts"].get("notselected").is_none());
    let rules = v["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 44);
    let keys: BTreeSet<&str> = rules[0].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, BTreeSet::from(["id", "result", "severity"]));
    assert_eq!(rules[0]["id"], "xccdf_org.ssgproject.content_rule_partition_for_home");
    assert_eq!(rules[0]["result"], "fail");
    let all = results_json(&t, true);
    assert_eq!(all["counts"]["notselected"], 547);
    assert_eq!(all["rules"].as_array().unwrap().len(), 591);
}

/// oscap writes both a results file and an ARF from one evaluation (on this host; the
/// outcomes mean nothing here, the structure is real). Both must read the same.
#[test]
fn arf_from_real_oscap() {
    let dir = tempfile::tempdir().unwrap();
    let arf = dir.path().join("arf.xml");
    let plain = dir.path().join("results.xml");
    let ds = ssg("ssg-debian12-ds.xml");
    oscap(&[
        "xccdf",
        "eval",
        "--profile",
        "xccdf_org.ssgproject.content_profile_standard",
        "--results-arf",
        arf.to_str().unwrap(),
        "--results",
        plain.to_str().unwrap(),
        ds.to_str().unwrap(),
    ]);
    let raw = std::fs::read_to_string(&arf).unwrap();
    assert!(raw.contains("<arf:asset-report-collection"), "not an ARF");
    let a = parse_results(&arf).unwrap();
    let p = parse_results(&plain).unwrap();
    assert_eq!(a, p);
    assert_eq!(a.profile.as_deref(), Some("xccdf_org.ssgproject.content_profile_standard"));
    assert_eq!(a.rule_results.len(), 591);
    assert_eq!(a.counts(true).get("notselected"), Some(&547));
    assert_eq!(a.counts(false).values().sum::<usize>(), 44);
}

const TR: &str = r#"<TestResult id="t{N}" start-time="s{N}" end-time="e{N}">
  <profile idref="p{N}"/>
  <rule-result idref="r1" severity="high"><result>{R}</result></rule-result>
  <score system="urn:xccdf:scoring:flat" maximum="1">{N}</score>
</TestResult>"#;

fn tr(n: &str, r: &str) -> String {
    TR.replace("{N}", n).replace("{R}", r)
}

#[test]
fn last_test_result_wins() {
    let doc = format!(
        r#"<?xml version="1.0"?><Benchmark xmlns="http://checklists.nist.gov/xccdf/1.2" id="b"><Rule id="r1"/>{}{}</Benchmark>"#,
        tr("1", "pass"),
        tr("2", "fixed")
    );
    let t = parse_results_bytes(doc.as_bytes()).unwrap();
    assert_eq!(t.id, "t2");
    assert_eq!(t.profile.as_deref(), Some("p2"));
    assert_eq!(t.result_of("r1"), Some(Outcome::Fixed));
    assert_eq!(t.score().unwrap().system, "urn:xccdf:scoring:flat");
}

#[test]
fn every_outcome_is_kept_apart() {
    for o in Outcome::ALL {
        let t = parse_results_bytes(tr("1", o.as_str()).as_bytes()).unwrap();
        assert_eq!(t.result_of("r1"), Some(o));
        assert_eq!(t.counts(true).get(o.as_str()), Some(&1));
    }
}

#[test]
fn bad_results() {
    let e = parse_results_bytes(tr("1", "passed").as_bytes()).unwrap_err();
    assert!(matches!(e, ScapError::Invalid { what: "rule result", .. }), "{e}");
    let e = parse_results_bytes(br#"<Benchmark id="b"><Rule id="r"/></Benchmark>"#).unwrap_err();
    assert!(matches!(e, ScapError::NoTestResult), "{e}");
    let e = parse_results_bytes(tr("x", "pass").replace(">x<", ">lots<").as_bytes()).unwrap_err();
    assert!(matches!(e, ScapError::Invalid { what: "score", .. }), "{e}");
    let e = parse_results_bytes(br#"<TestResult id="t"><rule-result idref="r"/></TestResult>"#).unwrap_err();
    assert!(matches!(e, ScapError::Invalid { .. }), "{e}");
}
