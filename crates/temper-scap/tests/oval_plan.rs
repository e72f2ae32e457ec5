//! Plans without evaluating anything: routes, the documents (closed, no id twice, valid for
//! oscap's schemas), the exported values, and the plan cache.
mod common;

use std::collections::{BTreeMap, HashSet};
use std::process::Command;
use std::sync::Arc;

use common::{autotailor, ssg};
use regex::Regex;
use temper_scap::oval::{OvalContent, OvalEngine, OvalError, OvalPlan, PlanKey, Route, XccdfReason};
use temper_scap::{Benchmark, Tailoring, read_benchmark, read_benchmark_tailored};

const RULE: &str = "xccdf_org.ssgproject.content_rule_";

fn all_rules(b: &Benchmark) -> Vec<String> {
    b.selected_rules.iter().map(|r| r.id.clone()).collect()
}

fn route<'p>(plan: &'p OvalPlan, short: &str) -> &'p Route {
    &plan.rules.iter().find(|r| r.id == format!("{RULE}{short}")).unwrap_or_else(|| panic!("{short} planned")).route
}

#[test]
fn routes_follow_the_checks() {
    let ds = ssg("ssg-debian12-ds.xml");
    let content = OvalContent::read(&ds).unwrap();
    let bench = read_benchmark(&ds, Some("anssi_bp28_high")).unwrap();
    let plan = OvalPlan::build(&content, &bench, &all_rules(&bench)).unwrap();
    let xccdf: BTreeMap<&str, XccdfReason> = plan.xccdf_rules().into_iter().collect();
    assert_eq!(xccdf.get(&*format!("{RULE}security_patches_up_to_date")), Some(&XccdfReason::MultiCheck));
    assert_eq!(xccdf.get(&*format!("{RULE}all_apparmor_profiles_enforced")), Some(&XccdfReason::NoCheck));

    let Route::Oval(root) = route(&plan, "sshd_disable_root_login") else { panic!("sshd_disable_root_login takes the OVAL path") };
    assert_eq!(root.definition, "oval:ssg-sshd_disable_root_login:def:1");
    assert!(!root.negate);
    assert_eq!(root.platforms.first(), Some(&vec!["cpe:/o:debian:debian_linux:12".to_string()]), "the Benchmark's platform first");

    // A check-export carries the profile's value to the OVAL variable it names.
    let Route::Oval(umask) = route(&plan, "sudo_add_umask") else { panic!("sudo_add_umask takes the OVAL path") };
    let value = &bench.resolved_values["xccdf_org.ssgproject.content_value_var_sudo_umask"];
    assert_eq!(umask.exports, vec![("oval:ssg-var_sudo_umask:var:1".to_string(), value.clone())]);
    let vars = String::from_utf8(plan.variables.clone().unwrap()).unwrap();
    assert!(vars.contains(&format!(
        "<variable id=\"oval:ssg-var_sudo_umask:var:1\" datatype=\"string\" comment=\"Unknown\">\n      <value>{value}</value>"
    )));

    let err = OvalPlan::build(&content, &bench, &[format!("{RULE}no_such_rule")]).unwrap_err();
    assert!(matches!(err, OvalError::UnknownRule(_)), "{err}");
    // One rule: a small document, with the CPE definitions its platforms need.
    let one = OvalPlan::build(&content, &bench, &[format!("{RULE}sshd_disable_root_login")]).unwrap();
    let doc = String::from_utf8(one.document.clone().unwrap()).unwrap();
    assert!(
        doc.contains("id=\"oval:ssg-sshd_disable_root_login:def:1\"") && doc.contains("id=\"oval:ssg-installed_OS_is_debian12:def:1\"")
    );
    assert!(one.stats.document_bytes < 64 * 1024, "{:?}", one.stats);
}

/// Every id the document references is defined in it, and none twice.
fn assert_closed(label: &str, doc: &str) {
    let defined: Vec<&str> = Regex::new(r#"\sid="(oval:[^"]+)""#).unwrap().captures_iter(doc).map(|c| c.get(1).unwrap().as_str()).collect();
    let unique: HashSet<&str> = defined.iter().copied().collect();
    assert_eq!(unique.len(), defined.len(), "[{label}] an id is defined twice");
    let attr = Regex::new(r#"(?:test|object|state|var|definition)_ref="([^"]+)""#).unwrap();
    let text = Regex::new(r"<[\w-]+:(?:filter|object_reference|var_ref)(?:\s[^>]*)?>([^<]+)<").unwrap();
    let refs: HashSet<&str> = attr.captures_iter(doc).chain(text.captures_iter(doc)).map(|c| c.get(1).unwrap().as_str().trim()).collect();
    let missing: Vec<&&str> = refs.iter().filter(|r| !unique.contains(**r)).collect();
    assert!(missing.is_empty(), "[{label}] referenced but not defined: {missing:?}");
    assert!(refs.len() > 10, "[{label}] the check itself finds references");
}

/// oscap's own schema check of a document (and of its variables).
fn assert_valid(label: &str, plan: &OvalPlan, schematron: bool) {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("doc.xml");
    std::fs::write(&doc, plan.document.as_ref().unwrap()).unwrap();
    let mut files = vec![(doc, "--definitions")];
    if let Some(v) = &plan.variables {
        let p = dir.path().join("vars.xml");
        std::fs::write(&p, v).unwrap();
        files.push((p, "--variables"));
    }
    for (f, kind) in files {
        let mut cmd = Command::new("oscap");
        cmd.args(["oval", "validate", kind]);
        if !schematron {
            cmd.arg("--skip-schematron");
        }
        let out = cmd.arg(&f).output().expect("run oscap");
        assert!(
            out.status.success(),
            "[{label}] {kind} invalid: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn documents_are_closed_and_valid() {
    for (ds, profile, schematron) in
        [("ssg-debian12-ds.xml", "standard", true), ("ssg-debian12-ds.xml", "anssi_bp28_high", false), ("ssg-rhel9-ds.xml", "ospp", false)]
    {
        let path = ssg(ds);
        let content = OvalContent::read(&path).unwrap();
        let bench = read_benchmark(&path, Some(profile)).unwrap();
        let plan = OvalPlan::build(&content, &bench, &all_rules(&bench)).unwrap();
        let label = format!("{ds} {profile}");
        assert_closed(&label, std::str::from_utf8(plan.document.as_ref().unwrap()).unwrap());
        assert_valid(&label, &plan, schematron);
    }
}

#[test]
fn plans_are_cached_per_rule_set_and_values() {
    let ds = ssg("ssg-debian12-ds.xml");
    let engine = OvalEngine::new(OvalContent::read(&ds).unwrap());
    let bench = read_benchmark(&ds, Some("standard")).unwrap();
    let rules = all_rules(&bench);
    let a = engine.plan(&bench, &rules).unwrap();
    let b = engine.plan(&bench, &rules).unwrap();
    assert!(Arc::ptr_eq(&a, &b), "the second ask is a cache hit");
    assert_eq!(engine.cached(), 1);
    engine.plan(&bench, &rules[..3]).unwrap();
    assert_eq!(engine.cached(), 2, "another rule set is another plan");

    let dir = tempfile::tempdir().unwrap();
    let t = autotailor(dir.path(), &ds, "xccdf_org.ssgproject.content_profile_standard", &["-v", "sshd_idle_timeout_value=900"]);
    let tailored = read_benchmark_tailored(&ds, &Tailoring::read(&t).unwrap(), Some("standard")).unwrap();
    assert_ne!(PlanKey::new(engine.content(), &tailored, &rules), PlanKey::new(engine.content(), &bench, &rules));
    let c = engine.plan(&tailored, &rules).unwrap();
    assert_eq!(engine.cached(), 3, "other values, another plan");
    assert_ne!(c.variables, a.variables);
    assert_eq!(c.document, a.document, "the document itself does not depend on the values");
    assert_eq!(engine.content().sha256_hex().len(), 64);
}

/// Bad input is an error, never a panic: not a datastream, no Benchmark, a cut file, a
/// reference to an id the component does not define, deep nesting.
#[test]
fn bad_input_is_an_error() {
    let not_ds = OvalContent::from_bytes(b"<Benchmark id='b'/>".to_vec()).unwrap_err();
    assert!(matches!(not_ds, OvalError::NotADatastream(_)), "{not_ds}");
    let empty = OvalContent::from_bytes(b"<ds:data-stream-collection xmlns:ds='x'/>".to_vec()).unwrap_err();
    assert!(matches!(empty, OvalError::NotADatastream(_) | OvalError::NoBenchmark), "{empty}");
    let ds = std::fs::read(ssg("ssg-debian12-ds.xml")).unwrap();
    let cut = OvalContent::from_bytes(ds[..ds.len() / 2].to_vec()).unwrap_err();
    assert!(cut.to_string().contains("truncated"), "{cut}");

    // A definition whose test is missing: building a plan for its rule names the id.
    let doc = String::from_utf8(ds).unwrap();
    let broken = doc.replacen(r#"id="oval:ssg-test_sshd_disable_root_login:tst:1""#, r#"id="oval:ssg-renamed:tst:1""#, 1);
    assert_ne!(broken, doc, "the test id is in the datastream");
    let content = OvalContent::from_bytes(broken.into_bytes()).unwrap();
    let bench = read_benchmark(ssg("ssg-debian12-ds.xml"), Some("anssi_bp28_high")).unwrap();
    let err = OvalPlan::build(&content, &bench, &[format!("{RULE}sshd_disable_root_login")]).unwrap_err();
    assert!(matches!(&err, OvalError::UnknownId { id, .. } if id == "oval:ssg-test_sshd_disable_root_login:tst:1"), "{err}");
}

/// The checks that walk a directory tree with no depth limit, and only those, are found: the
/// ones that take minutes under TCG among ANSSI's, not a fixed-path or globbed check.
#[test]
fn tree_walkers_are_the_checks_that_recurse_without_a_limit() {
    let ds = ssg("ssg-debian12-ds.xml");
    let engine = OvalEngine::new(OvalContent::read(&ds).unwrap());
    let bench = read_benchmark(&ds, Some("anssi_bp28_high")).unwrap();
    let ids = |short: &[&str]| short.iter().map(|s| format!("{RULE}{s}")).collect::<Vec<_>>();
    let walkers = ["file_permissions_ungroupowned", "no_files_unowned_by_user", "file_permissions_unauthorized_world_writable"];
    // Globs (/boot/config-*, /etc/sudoers.d/*), depth-1 home scans and single files do not walk.
    let others = ["kernel_config_bug", "sudo_add_use_pty", "no_netrc_files", "sshd_disable_root_login", "security_patches_up_to_date"];
    let asked = ids(&[&others[..2], &walkers[..], &others[2..]].concat());
    assert_eq!(engine.tree_walkers(&bench, &asked), ids(&walkers));
    let all = engine.tree_walkers(&bench, &all_rules(&bench));
    assert!((5..60).contains(&all.len()), "a few dozen of ANSSI's {} rules walk: {all:?}", bench.selected_rules.len());
}
