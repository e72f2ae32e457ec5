//! The datastream reader on real SSG 0.1.76 content, with real oscap as the oracle.
mod common;

use std::collections::BTreeSet;

use common::{oscap_fixes, shared_results, ssg};
use temper_scap::{Outcome, Severity, list_profiles, parse_results, read_benchmark, rule_json};

const STIG: &str = "xccdf_org.ssgproject.content_profile_stig";

#[test]
fn rhel9_stig_figures() {
    let b = read_benchmark(ssg("ssg-rhel9-ds.xml"), Some("stig")).unwrap();
    assert_eq!(b.id, "xccdf_org.ssgproject.content_benchmark_RHEL-9");
    assert_eq!(b.version, "0.1.76");
    assert_eq!(b.profile.as_ref().unwrap().id, STIG);
    assert_eq!(b.profile.as_ref().unwrap().title, "DISA STIG for Red Hat Enterprise Linux 9");
    let n = b.selected_rules.len();
    assert!((450..=530).contains(&n), "{n} selected rules");
    assert!(b.rule_count > n, "{} rules in all", b.rule_count);
    let with_stig = b.selected_rules.iter().filter(|r| r.stig_ids.iter().any(|s| s.starts_with("RHEL-09-"))).count();
    assert!(with_stig * 100 >= n * 95, "{with_stig}/{n} with a RHEL-09 id");
    let with_fix = b.selected_rules.iter().filter(|r| r.has_fix()).count();
    assert!(with_fix * 100 >= n * 70, "{with_fix}/{n} with a fix");
    // Every SV id gives its V id.
    for r in &b.selected_rules {
        assert_eq!(r.sv_ids.len(), r.v_ids.len(), "{}", r.id);
        for (sv, v) in r.sv_ids.iter().zip(&r.v_ids) {
            assert!(sv.starts_with(&format!("SV-{}r", &v[2..])), "{sv} vs {v}");
        }
        assert!(!r.title.is_empty() && !r.description.is_empty(), "{}", r.id);
        assert!(!r.title.contains('<') && !r.description.contains("<html"), "{}", r.id);
    }
}

#[test]
fn rhel9_stig_known_rules() {
    let b = read_benchmark(ssg("ssg-rhel9-ds.xml"), Some(STIG)).unwrap();
    let r = b.rule("sshd_disable_root_login").expect("sshd_disable_root_login selected");
    assert_eq!(r.id, "xccdf_org.ssgproject.content_rule_sshd_disable_root_login");
    assert_eq!(r.title, "Disable SSH Root Login");
    assert_eq!(r.severity, Severity::Medium);
    assert_eq!(r.stig_ids, ["RHEL-09-255045"]);
    assert_eq!(r.sv_ids, ["SV-257985r1045028_rule"]);
    assert_eq!(r.v_ids, ["V-257985"]);
    assert_eq!(r.cci, ["CCI-000366", "CCI-004045"]);
    assert_eq!(r.cce, ["CCE-90800-4"]);
    assert!(r.srg_ids.contains(&"SRG-OS-000109-GPOS-00056".to_string()));
    assert!(r.description.starts_with("The root user should never be allowed to login to a system directly over a network."));
    assert!(r.description.ends_with("PermitRootLogin no"), "{}", r.description);
    assert!(r.rationale.starts_with("Even though the communications channel may be encrypted"));
    let oval = r.oval.as_ref().unwrap();
    assert_eq!(oval.name, "oval:ssg-sshd_disable_root_login:def:1");
    assert_eq!(oval.href, "ssg-rhel9-oval.xml");
    let f = r.fix.as_ref().unwrap();
    assert!(!f.reboot);
    assert_eq!((f.disruption.as_str(), f.complexity.as_str(), f.strategy.as_str()), ("low", "low", "restrict"));
    assert!(f.script.contains(r#"printf '%s\n' "PermitRootLogin no" > "/etc/ssh/sshd_config.d/00-complianceascode-hardening.conf""#));
    assert!(f.script.contains(">&2 echo 'Remediation is not applicable, nothing was done'"));

    // The stig profile refines the umask Value to selector 077 (the Value's default is 027).
    let v = &b.values["xccdf_org.ssgproject.content_value_var_accounts_user_umask"];
    assert_eq!(v.default, "027");
    assert_eq!(v.options["077"], "077");
    assert_eq!(b.resolved_values["xccdf_org.ssgproject.content_value_var_accounts_user_umask"], "077");
    let umask = b.rule("accounts_umask_etc_bashrc").unwrap();
    assert!(umask.fix.as_ref().unwrap().script.contains("var_accounts_user_umask='077'"));
    assert!(umask.description.contains("umask 077"), "{}", umask.description);

    // refine-rule in the stig profile lowers this rule's severity.
    assert_eq!(b.rule("sysctl_user_max_user_namespaces").unwrap().severity, Severity::Info);

    // A rule the stig profile leaves out.
    assert!(b.rule("sshd_disable_root_password_login").is_none());
}

#[test]
fn default_profile_uses_defaults() {
    let b = read_benchmark(ssg("ssg-rhel9-ds.xml"), None).unwrap();
    assert!(b.profile.is_none());
    // SSG rules are all selected="false" by default.
    assert_eq!(b.selected_rules.len(), 0);
    assert_eq!(b.resolved_values["xccdf_org.ssgproject.content_value_var_accounts_user_umask"], "027");
}

/// Selection, order, fix presence and every resolved script match what oscap generates.
fn same_as_oscap(ds: &str, profile: &str) -> usize {
    let path = ssg(ds);
    let b = read_benchmark(&path, Some(profile)).unwrap();
    let expected = oscap_fixes(path.to_str().unwrap(), profile);
    let ours: Vec<&str> = b.selected_rules.iter().map(|r| r.id.as_str()).collect();
    let theirs: Vec<&str> = expected.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ours, theirs, "selected rules differ from oscap's for {profile}");
    for (r, (_, script)) in b.selected_rules.iter().zip(&expected) {
        match (&r.fix, script) {
            (None, None) => {}
            (Some(f), Some(s)) => {
                assert!(f.unresolved.is_empty(), "{}: unresolved {:?}", r.id, f.unresolved);
                assert_eq!(f.script.trim_end(), s.trim_end(), "script of {} differs from oscap's", r.id);
            }
            (ours, theirs) => panic!("{}: fix {} here, {} in oscap", r.id, ours.is_some(), theirs.is_some()),
        }
    }
    b.selected_rules.len()
}

#[test]
fn rhel9_stig_matches_oscap() {
    let n = same_as_oscap("ssg-rhel9-ds.xml", STIG);
    assert!(n > 400);
}

#[test]
fn debian12_anssi_high_matches_oscap() {
    let n = same_as_oscap("ssg-debian12-ds.xml", "xccdf_org.ssgproject.content_profile_anssi_bp28_high");
    assert!(n > 300);
}

#[test]
fn debian12_standard_matches_the_real_scan() {
    let b = read_benchmark(ssg("ssg-debian12-ds.xml"), Some("standard")).unwrap();
    let t = parse_results(shared_results()).unwrap();
    let evaluated: BTreeSet<&str> = t.rule_results.iter().filter(|r| r.result != Outcome::NotSelected).map(|r| r.idref.as_str()).collect();
    let ours: BTreeSet<&str> = b.selected_rules.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ours, evaluated);
    assert_eq!(ours.len(), 44);
    assert_eq!(b.rule_count, t.rule_results.len());
    same_as_oscap("ssg-debian12-ds.xml", "xccdf_org.ssgproject.content_profile_standard");
}

#[test]
fn profiles_are_listed() {
    let path = ssg("ssg-rhel9-ds.xml");
    let profiles = list_profiles(&path).unwrap();
    let raw = std::fs::read_to_string(&path).unwrap();
    assert_eq!(profiles.len(), raw.matches("<xccdf-1.2:Profile ").count());
    let stig = profiles.iter().find(|p| p.id == STIG).unwrap();
    assert_eq!(stig.title, "DISA STIG for Red Hat Enterprise Linux 9");
    assert!(stig.description.contains("DISA STIG for Red Hat Enterprise Linux 9 V2R3"));
    let deb = list_profiles(ssg("ssg-debian12-ds.xml")).unwrap();
    assert!(deb.iter().any(|p| p.id == "xccdf_org.ssgproject.content_profile_standard"));
    assert!(deb.iter().any(|p| p.id == "xccdf_org.ssgproject.content_profile_anssi_bp28_high"));
}

#[test]
fn plain_xccdf_reads_like_the_datastream() {
    let ds = read_benchmark(ssg("ssg-debian12-ds.xml"), Some("anssi_bp28_high")).unwrap();
    let x = read_benchmark(ssg("ssg-debian12-xccdf.xml"), Some("anssi_bp28_high")).unwrap();
    assert_eq!(ds.selected_rules.len(), x.selected_rules.len());
    for (a, b) in ds.selected_rules.iter().zip(&x.selected_rules) {
        // Prose is left out: the split file is pretty-printed, which changes <pre> content.
        assert_eq!(
            (&a.id, &a.title, &a.severity, &a.stig_ids, &a.cci, &a.srg_ids),
            (&b.id, &b.title, &b.severity, &b.stig_ids, &b.cci, &b.srg_ids)
        );
        assert_eq!((&a.oval, &a.fix), (&b.oval, &b.fix), "{}", a.id);
    }
    assert_eq!(ds.resolved_values, x.resolved_values);
}

#[test]
fn unknown_profile() {
    let err = read_benchmark(ssg("ssg-debian12-ds.xml"), Some("nope")).unwrap_err();
    assert!(matches!(err, temper_scap::ScapError::ProfileNotFound(ref p) if p == "nope"), "{err}");
}

#[test]
fn rule_json_shape() {
    let b = read_benchmark(ssg("ssg-rhel9-ds.xml"), Some("stig")).unwrap();
    let v = rule_json(b.rule("sshd_disable_root_login").unwrap());
    let keys: BTreeSet<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, BTreeSet::from(["id", "title", "severity", "stig_ids", "sv_ids", "v_ids", "cci", "has_fix", "fix"]));
    assert_eq!(v["stig_ids"][0], "RHEL-09-255045");
    assert_eq!(v["has_fix"], true);
    let fix_keys: BTreeSet<&str> = v["fix"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(fix_keys, BTreeSet::from(["script", "reboot", "disruption", "complexity", "strategy"]));
    let nofix = b.selected_rules.iter().find(|r| !r.has_fix()).unwrap();
    let v = rule_json(nofix);
    assert_eq!(v["has_fix"], false);
    assert!(v["fix"].is_null());
}

#[test]
fn the_default_score_is_oscaps() {
    // The real scan's own score (12.5), from its rule results over the Benchmark's tree.
    let b = read_benchmark(ssg("ssg-debian12-ds.xml"), Some("standard")).unwrap();
    let mut t = parse_results(shared_results()).unwrap();
    let oscap = t.score().unwrap().value;
    let ours = b.score_tree.default_score(&t).unwrap();
    assert!((ours - oscap).abs() < 1e-4, "ours {ours}, oscap {oscap}");
    // Turn one failing rule to pass: the score moves as oscap's model says (its group's mean).
    let failing = t.rule_results.iter_mut().find(|r| r.result == Outcome::Fail).unwrap();
    failing.result = Outcome::Pass;
    assert!(b.score_tree.default_score(&t).unwrap() > ours);
}
