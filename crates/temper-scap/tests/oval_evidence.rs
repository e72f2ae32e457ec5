//! Evidence read from real `oscap oval eval --results` output on this host, checked against
//! the host itself: the items the scanner reports must be what the files and the shadow
//! database say.
mod common;

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use common::ssg;
use temper_scap::Outcome;
use temper_scap::oval::{DefinitionResult, OvalContent, OvalEngine, OvalEval, OvalPlan, OvalReport, OvalResults};
use temper_scap::read_benchmark;

const PERMS: &str = "xccdf_org.ssgproject.content_rule_file_permission_user_init_files";
const ROOT_MAX: &str = "xccdf_org.ssgproject.content_rule_accounts_password_set_max_life_root";

/// Evaluates `rules` of ANSSI high on this host; returns the plan, the outcomes and the report.
fn evaluate(rules: &[&str]) -> (OvalPlan, Vec<temper_scap::oval::RuleOutcome>, OvalReport) {
    let ds = ssg("ssg-debian12-ds.xml");
    let content = OvalContent::read(&ds).unwrap();
    let bench = read_benchmark(&ds, Some("anssi_bp28_high")).unwrap();
    let rules: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
    let plan = OvalPlan::build(&content, &bench, &rules).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("doc.xml");
    std::fs::write(&doc, plan.document.as_ref().unwrap()).unwrap();
    let vars = plan.variables.as_ref().map(|v| {
        let p = dir.path().join("vars.xml");
        std::fs::write(&p, v).unwrap();
        p
    });
    let res = dir.path().join("results.xml");
    let eval = OvalEval {
        document: doc.to_str().unwrap(),
        variables: vars.as_ref().and_then(|p| p.to_str()),
        results: res.to_str().unwrap(),
        skip_valid: true,
    };
    let args = eval.args();
    let out = Command::new("oscap").args(&args).output().expect("run oscap");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = OvalReport::read(&res).unwrap();
    assert_eq!(report.results(), OvalResults::read(&res).unwrap(), "one parse serves the outcomes and the evidence");
    let outcomes = plan.outcomes(&report.results());
    (plan, outcomes, report)
}

/// On real oscap results, the host's definitions (the datastream's) give the evidence the
/// document's own definitions would, and refuse none of its items: every ANSSI high check that
/// does not walk the whole tree, evaluated on this host.
#[test]
fn the_hosts_definitions_read_real_results_as_their_own_and_refuse_no_real_item() {
    let ds = ssg("ssg-debian12-ds.xml");
    let bench = read_benchmark(&ds, Some("anssi_bp28_high")).unwrap();
    let engine = OvalEngine::new(OvalContent::read(&ds).unwrap());
    let all: Vec<String> = bench.selected_rules.iter().map(|r| r.id.clone()).collect();
    let walkers = engine.tree_walkers(&bench, &all);
    let rules: Vec<&str> = all.iter().filter(|r| !walkers.contains(r)).map(String::as_str).collect();
    let (plan, outcomes, report) = evaluate(&rules);
    let evidence = plan.evidence(&report, &outcomes);
    let items: usize = evidence.iter().flat_map(|e| &e.tests).map(|t| t.items.len()).sum();
    eprintln!("{} rules, {} with evidence, {items} items", rules.len(), evidence.len());
    assert!(evidence.len() >= 30 && items >= 30, "this host fails a few dozen of them: {} with evidence, {items} items", evidence.len());
    for e in &evidence {
        for t in &e.tests {
            assert!(t.refused.is_empty(), "{}: {} refused {:?}", e.rule, t.id, t.refused);
        }
        let own = report.evidence(&e.rule, e.outcome, &e.definition).expect("the document has the definition");
        let (a, b) = (serde_json::to_string(&as_written(own)).unwrap(), serde_json::to_string(&as_written(e.clone())).unwrap());
        let at = a.bytes().zip(b.bytes()).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
        let around = |s: &str| s.get(at.saturating_sub(300)..(at + 300).min(s.len())).unwrap_or_default().to_string();
        assert!(a == b, "{}: the document's own definitions read\n{}\nthe host's\n{}", e.rule, around(&a), around(&b));
    }
}

/// Evidence without the defaults either copy of the definitions may write or leave out (a
/// state's `operator="AND"`, an entity's `datatype="string"` and `operation="equals"`).
fn as_written(mut e: temper_scap::oval::Evidence) -> temper_scap::oval::Evidence {
    fn spec(s: &mut temper_scap::oval::Spec) {
        s.operator = s.operator.take().filter(|o| o != "AND");
        for f in &mut s.fields {
            f.datatype = f.datatype.take().filter(|d| d != "string");
            f.operation = f.operation.take().filter(|o| o != "equals");
        }
        s.members.iter_mut().for_each(spec);
    }
    for t in &mut e.tests {
        t.object.iter_mut().chain(&mut t.states).for_each(spec);
        t.filters.iter_mut().for_each(|f| spec(&mut f.state));
    }
    e
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> &'a str {
    fields.iter().find(|(k, _)| k == name).map_or_else(|| panic!("no `{name}` in {fields:?}"), |(_, v)| v.as_str())
}

#[test]
fn failing_rules_carry_what_the_host_has() {
    let (plan, outcomes, report) = evaluate(&[PERMS, ROOT_MAX]);
    let evidence = plan.evidence(&report, &outcomes);
    let failing: Vec<&str> = outcomes.iter().filter(|o| o.outcome == Outcome::Fail).map(|o| o.rule.as_str()).collect();
    assert_eq!(evidence.iter().map(|e| e.rule.as_str()).collect::<Vec<_>>(), failing, "one evidence per failing rule");
    assert!(!failing.is_empty(), "this host fails at least one of the two rules: {outcomes:?}");
    for e in &evidence {
        eprintln!("{}", e.to_text());
        assert_eq!(e.result, DefinitionResult::False);
        assert!(!e.tests.is_empty() && !e.title.is_empty(), "{e:?}");
        for t in &e.tests {
            assert!(t.object.is_some(), "{t:?}");
            assert!(t.items.len() <= t.items_total);
            for item in &t.items {
                match item.kind.as_str() {
                    "file_item" => check_file_item(&item.fields),
                    "shadow_item" => check_shadow_item(&item.fields),
                    other => panic!("unexpected item kind {other}"),
                }
            }
        }
    }
    // The report of a file permission failure names a file and what is wrong with it.
    if let Some(e) = evidence.iter().find(|e| e.rule == PERMS) {
        let t = &e.tests[0];
        assert_eq!(t.kind, "file_test");
        assert!(t.items.iter().any(|i| i.result == Some(DefinitionResult::False)), "a failing item is marked: {t:?}");
        assert!(!t.states.is_empty() && t.states[0].fields.iter().any(|f| f.name.ends_with("write")), "{:?}", t.states);
    }
}

/// A file item's permission bits are the file's.
fn check_file_item(fields: &[(String, String)]) {
    let path = field(fields, "filepath");
    let mode = std::fs::symlink_metadata(Path::new(path)).unwrap_or_else(|e| panic!("{path}: {e}")).mode();
    for (name, bit) in [("uread", 0o400), ("uwrite", 0o200), ("gwrite", 0o020), ("oread", 0o004), ("owrite", 0o002)] {
        assert_eq!(field(fields, name) == "true", mode & bit != 0, "{path}: {name} vs mode {mode:o}");
    }
}

/// A shadow item's maximum age is the one in /etc/shadow.
fn check_shadow_item(fields: &[(String, String)]) {
    let user = field(fields, "username");
    let shadow = std::fs::read_to_string("/etc/shadow").unwrap();
    let line = shadow.lines().find(|l| l.split(':').next() == Some(user)).unwrap();
    let max = line.split(':').nth(4).unwrap();
    assert_eq!(field(fields, "chg_req"), max, "{user}: maximum password age");
}

#[test]
fn report_rejects_other_documents() {
    let err = OvalReport::parse(b"<oval_definitions/>").unwrap_err();
    assert!(err.to_string().contains("not OVAL results"), "{err}");
    assert!(OvalResults::parse(b"<TestResult/>").is_err());
}

/// A definition result oscap never writes is an error for both readers, never `unknown`.
#[test]
fn a_bad_definition_result_is_an_error_for_both_readers() {
    let doc = br#"<oval_results><results><system><definitions>
        <definition definition_id="oval:x:def:1" result="maybe"/>
        </definitions></system></results></oval_results>"#;
    for err in [OvalReport::parse(doc).unwrap_err(), OvalResults::parse(doc).unwrap_err()] {
        assert!(err.to_string().contains("maybe") && err.to_string().contains("oval:x:def:1"), "{err}");
    }
    let good = br#"<oval_results><results><system><definitions>
        <definition definition_id="oval:x:def:1" result="not applicable"/><definition result="true"/>
        </definitions></system></results></oval_results>"#;
    assert_eq!(OvalReport::parse(good).unwrap().results(), OvalResults::parse(good).unwrap());
    assert_eq!(OvalReport::parse(good).unwrap().results().definitions.len(), 1, "a result with no id is skipped by both");
}

#[test]
fn a_set_object_shows_the_objects_it_combines() {
    let rule = "xccdf_org.ssgproject.content_rule_sshd_disable_root_login";
    let (_, _, report) = evaluate(&[rule]);
    let t = report.test("oval:ssg-test_PermitRootLogin_present_sshd_disable_root_login:tst:1").expect("the test is in the results");
    let o = t.object.expect("its object");
    let set = o.fields.iter().find(|f| f.name == "set").expect("a set object");
    assert!(set.value.starts_with("UNION of oval:"), "{set:?}");
    assert!(o.members.iter().any(|m| m.fields.iter().any(|f| f.value == "/etc/ssh/sshd_config")), "{:?}", o.members);
    for m in &o.members {
        assert!(set.value.contains(&m.id), "{} is named in {set:?}", m.id);
        assert!(m.kind.ends_with("_object") && !m.fields.is_empty(), "{m:?}");
    }
    let text = temper_scap::oval::Evidence {
        rule: rule.into(),
        outcome: Outcome::Fail,
        definition: String::new(),
        title: String::new(),
        result: DefinitionResult::False,
        tests: vec![report.test("oval:ssg-test_PermitRootLogin_present_sshd_disable_root_login:tst:1").unwrap()],
        criteria: None,
    }
    .to_text();
    assert!(text.contains("    member oval:"), "{text}");
}

/// A profile's `oscap xccdf eval --oval-results` writes one OVAL results document per component,
/// in its working folder: the evidence read from them is the OVAL engine's, rule for rule.
#[test]
fn a_profile_eval_with_oval_results_gives_the_engines_evidence() {
    let (plan, outcomes, report) = evaluate(&[PERMS, ROOT_MAX]);
    let engines = plan.evidence(&report, &outcomes);
    assert!(!engines.is_empty(), "this host fails at least one of the two rules: {outcomes:?}");
    let ds = ssg("ssg-debian12-ds.xml");
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("oscap")
        .current_dir(dir.path())
        .args(["xccdf", "eval", "--profile", "anssi_bp28_high", "--rule", PERMS, "--rule", ROOT_MAX, "--oval-results"])
        .args(["--results", "r.xml", ds.to_str().unwrap()])
        .output()
        .expect("run oscap");
    assert!(matches!(out.status.code(), Some(0 | 2)), "{}", String::from_utf8_lossy(&out.stderr));
    let mut reports = Vec::new();
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".result.xml") {
            reports.push((name.clone(), OvalReport::read(dir.path().join(&name)).unwrap()));
        }
    }
    let names: Vec<&str> = reports.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"ssg-debian12-oval.xml.result.xml"), "named after the checks' href: {names:?}");
    let engine = OvalEngine::new(OvalContent::read(&ds).unwrap());
    let bench = read_benchmark(&ds, Some("anssi_bp28_high")).unwrap();
    let failing: Vec<(String, Outcome)> = outcomes.iter().map(|o| (o.rule.clone(), o.outcome)).collect();
    let profiles = engine.profile_evidence(&bench, &reports, &failing);
    let key = |e: &temper_scap::oval::Evidence| (e.rule.clone(), e.definition.clone(), e.result, e.tests.len());
    assert_eq!(profiles.iter().map(key).collect::<Vec<_>>(), engines.iter().map(key).collect::<Vec<_>>());
    for (p, e) in profiles.iter().zip(&engines) {
        for (a, b) in p.tests.iter().zip(&e.tests) {
            assert_eq!((&a.id, &a.object, &a.states, a.items_total), (&b.id, &b.object, &b.states, b.items_total), "{}", p.rule);
        }
    }
    assert!(engine.profile_evidence(&bench, &[], &failing).is_empty(), "no documents, no evidence");
}
