//! The assessors' formats read by their real consumers: the OSCAL assessment results and
//! POA&M by compliance-trestle's own OSCAL 1.1 models (tests/report/oscal_read.py in
//! tests/report/.venv), the HDF by inspecjs's parser generated from HDF's schema
//! (tests/report/hdf_read.js) and by MITRE's `saf summary`, whose counts must be temper's.
mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use temper_journal::AttemptId;
use temper_journal::PowerOff;
use temper_journal::{Booted, EventData};
use temper_report::{Format, RunData, load, render};
use temper_scap::Outcome;
use temper_scap::oval::{Check, CollectedItem, DefinitionResult, Evidence, Existence, Field, Flag, ItemStatus, Spec, TestEvidence};

/// A rule the content does not know, with a hostile title.
const HOSTILE_RULE: &str = "xccdf_org.ssgproject.content_rule_temper_hostile_title";
/// Markup, quotes, a CDATA end, template braces, an ANSI escape, NUL, BEL, CR and a newline.
fn hostile() -> String {
    format!("{NASTY} \u{0}\u{7}\r\n[link](javascript:alert(2)) <img src=x onerror=alert(3)>")
}
const WAIVED: &str = "configure_crypto_policy";
const WAIVER_BY: &str = "J. Doe <isso@example.org>";
const WAIVER_EXPIRES: &str = "2099-06-30";
/// A rule outside the run's scope (`--rules`), failing at both scans.
const OUT_OF_SCOPE: &str = "service_auditd_enabled";

fn venv_python() -> PathBuf {
    let py = repo_root().join("tests/report/.venv/bin/python");
    assert!(py.is_file(), "{} is missing: run bash tests/report/setup.sh", py.display());
    py
}

/// trestle's reading of an OSCAL file (`ar` or `poam`), as tests/report/oscal_read.py prints it.
fn trestle(kind: &str, file: &Path) -> Value {
    let dir = repo_root().join("tests/report");
    serde_json::from_str(&run(Command::new(venv_python()).arg(dir.join("oscal_read.py")).arg(kind).arg(file))).unwrap()
}

/// inspecjs's reading of an HDF file.
fn inspecjs(file: &Path) -> Value {
    let dir = node_dir();
    serde_json::from_str(&run(Command::new("node").arg(dir.join("hdf_read.js")).arg(file).current_dir(&dir))).unwrap()
}

/// `saf summary`'s totals of an HDF file: passed, failed, skipped, error, no_impact.
fn saf_summary(file: &Path) -> BTreeMap<String, u64> {
    let dir = node_dir();
    let out = run(Command::new(dir.join("node_modules/.bin/saf"))
        .args(["summary", "--format", "json", "--stdout", "--logLevel", "error", "-i"])
        .arg(file)
        // saf writes saf-cli.log where it runs.
        .current_dir(artifacts()));
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("saf summary printed no JSON ({e}):\n{out}"));
    let profile = &v[0];
    ["passed", "failed", "skipped", "error", "no_impact"]
        .into_iter()
        .map(|k| (k.to_string(), profile[k]["total"].as_u64().unwrap_or_else(|| panic!("saf summary has no {k}.total: {v}"))))
        .collect()
}

fn write(name: &str, text: &str) -> PathBuf {
    let path = artifacts().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn sha256(s: &str) -> String {
    Sha256::digest(s.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// What the scanner found: a file with the wrong owner, the hostile text among its values.
fn evidence(rule: &str) -> Evidence {
    let field = |name: &str, value: &str| Field { name: name.into(), value: value.into(), ..Field::default() };
    Evidence {
        rule: rule.into(),
        outcome: Outcome::Fail,
        definition: "oval:ssg-temper_hostile:def:1".into(),
        title: format!("owner of the files {NASTY}"),
        result: DefinitionResult::False,
        tests: vec![TestEvidence {
            id: "oval:ssg-test_owner:tst:1".into(),
            kind: "file_test".into(),
            comment: "files are owned by root".into(),
            result: DefinitionResult::False,
            check: Check::All,
            check_existence: Existence::AnyExist,
            object: Some(Spec {
                id: "oval:obj:1".into(),
                kind: "file_object".into(),
                comment: String::new(),
                fields: vec![field("path", "/usr/bin")],
                members: vec![],
                operator: None,
            }),
            flag: Some(Flag::Complete),
            states: vec![Spec {
                id: "oval:ste:1".into(),
                kind: "file_state".into(),
                comment: String::new(),
                fields: vec![field("user_id", "0")],
                members: vec![],
                operator: None,
            }],
            variables: vec![],
            items: vec![CollectedItem {
                id: "1".into(),
                kind: "file_item".into(),
                status: ItemStatus::Exists,
                result: Some(DefinitionResult::False),
                fields: vec![("filepath".into(), format!("/usr/bin/{}", hostile())), ("user_id".into(), "1000".into())],
            }],
            items_total: 1,
            filters: vec![],
            refused: vec![],
        }],
        criteria: None,
    }
}

/// A finished STIG run with a fix kept and proven by a reboot, an escalation with evidence, a
/// rule never attempted, a waiver in force, passes, an error, a rule not applicable, and a rule
/// whose title and evidence are hostile.
async fn assessed_run() -> (ReportFixture, RunData) {
    let c = rhel9();
    let options = json!({"controls": {"waivers": [{
        "rule": WAIVED, "reason": "FIPS crypto policy <after the HSM> & the rest", "approved_by": WAIVER_BY,
        "expires": WAIVER_EXPIRES, "source": "site-waivers.toml",
    }]}});
    let ds = ssg("ssg-rhel9-ds.xml").display().to_string();
    let new = NewRun {
        options_json: options.to_string(),
        ..new_run("rhel9-stig", STIG, &ds, Some(c.version.clone()), "libvirt:temper-rhel9", "stock")
    };
    let f = ReportFixture::open(&new).await;
    let (s, run) = (&f.store, f.run);
    s.set_scores(run, Some(40.0), None).await.unwrap();
    use RuleStatus as S;
    use ScanResult as R;
    let rules: [(&str, R, R, S); 9] = [
        (FIXED_ROOT, R::Fail, R::Pass, S::Pending),
        (ESC_NOFIX, R::Fail, R::Fail, S::Pending),
        (ESC_KEEPALIVE, R::Fail, R::Fail, S::Pending),
        (WAIVED, R::Fail, R::Fail, S::Waived),
        ("package_usbguard_installed", R::Fail, R::Fail, S::Pending),
        ("aide_build_database", R::Pass, R::Pass, S::Passing),
        ("dconf_gnome_banner_enabled", R::NotApplicable, R::NotApplicable, S::NotApplicable),
        ("audit_rules_dac_modification_fchmod", R::Error, R::Error, S::Error),
        (OUT_OF_SCOPE, R::Fail, R::Fail, S::OutOfScope),
    ];
    for (short, initial, _, status) in rules {
        let r = c.rule(short).unwrap();
        let reason = (status == S::Waived).then_some("waived by site-waivers.toml");
        s.add_rule(run, &new_rule(&r.id, &r.title, r.severity.as_str(), initial, status, reason)).await.unwrap();
    }
    s.add_rule(run, &new_rule(HOSTILE_RULE, &hostile(), "high", R::Fail, S::Pending, None)).await.unwrap();

    let attempt = |rule: &str, fix: &str, evidence_before: Option<Evidence>| AttemptSpec {
        rule_id: rule.into(),
        plan: "apply the stock fix".into(),
        source: FixSource::Stock,
        replayed: false,
        fix_script: fix.into(),
        revert_script: String::new(),
        description: format!("fix {rule}"),
        checkpoint: "baseline".into(),
        evidence_before,
    };
    // Kept, then proven by the reboot.
    let root = full(c, FIXED_ROOT);
    let fix = format!("# {NASTY}\nprintf 'PermitRootLogin no\\n' > /etc/ssh/sshd_config.d/01-root.conf\n");
    let (id, _) = s.start_attempt(run, &attempt(&root, &fix, Some(evidence(&root)))).await.unwrap();
    let fixed = Evaluation {
        revert_method: RevertMethod::None,
        findings: Findings {
            fix_exit_code: Some(0),
            rule_result: Some(R::Pass),
            health_ok: Some(true),
            access_ok: Some(true),
            ..Findings::default()
        },
        ..Evaluation::new(Verdict::Fixed, "the rule passes, the health check is HEALTHY, access works, no regression")
    };
    s.record_fix(run, id, &fixed, &root, "temper-r1-a1").await.unwrap();
    // Tried, still failing, escalated: evidence before and after.
    let keep = full(c, ESC_KEEPALIVE);
    let (id, _) = s
        .start_attempt(run, &attempt(&keep, "echo 'ClientAliveCountMax 0' >> /etc/ssh/sshd_config\n", Some(evidence(&keep))))
        .await
        .unwrap();
    let still = Evaluation {
        revert_method: RevertMethod::Script,
        findings: Findings { rule_result: Some(R::Fail), evidence_after: Some(evidence(&keep)), ..Findings::default() },
        ..Evaluation::new(Verdict::StillFailing, "the rule's result after the fix is fail")
    };
    s.finish_attempt(id, &still).await.unwrap();
    s.escalate_rule(run, &keep, &Escalation::new(EscalationCause::AttemptBudget, "attempt budget spent: 1 of 1 attempts failed"))
        .await
        .unwrap();
    s.escalate_rule(run, &full(c, ESC_NOFIX), &Escalation::new(EscalationCause::NoFix, "no fix to try")).await.unwrap();
    // The hostile rule: its evidence on an attempt that never passed.
    let (id, _) = s.start_attempt(run, &attempt(HOSTILE_RULE, "true\n", Some(evidence(HOSTILE_RULE)))).await.unwrap();
    let failed =
        Evaluation::new(Verdict::StillFailing, "still fails").found(Findings { rule_result: Some(R::Fail), ..Findings::default() });
    s.finish_attempt(id, &failed).await.unwrap();

    // The reboot proof.
    let reboot = EventData::Reboot {
        why: "reboot proof".into(),
        fixes: 1,
        power_off: PowerOff::Clean,
        down_secs: 3.5,
        secs: 41.0,
        up: true,
        problem: None,
    };
    s.event(run, None, &reboot).await.unwrap();
    s.event(run, None, &EventData::Booted(Booted { snapshot: "temper-r1-a1".into(), through: AttemptId::new(1) })).await.unwrap();

    for (short, _, after, status) in rules {
        let id = full(c, short);
        s.set_final_result(run, &id, after).await.unwrap();
        if status == S::Pending && short != FIXED_ROOT && short != ESC_NOFIX && short != ESC_KEEPALIVE {
            s.set_rule_status(run, &id, S::StillFailing, Some("not attempted in this run")).await.unwrap();
        }
    }
    s.set_final_result(run, HOSTILE_RULE, R::Fail).await.unwrap();
    s.set_rule_status(run, HOSTILE_RULE, S::StillFailing, Some(&hostile())).await.unwrap();
    s.set_scores(run, None, Some(55.5)).await.unwrap();
    s.finish_run(run, &RunSummary { run: Some(run), exit_code: 2, rebooted: Some(true), wall_secs: 321.0, ..Default::default() })
        .await
        .unwrap();
    let data = load(s, run).await.unwrap();
    (f, data)
}

fn short(id: &str) -> &str {
    temper_scap::short_rule_id(id)
}

/// The rules in the run's scope by the last scan's result: (failing at the end, passing at the
/// end, failing at the first scan).
fn by_result(data: &RunData) -> (BTreeSet<String>, BTreeSet<String>, BTreeSet<String>) {
    let bad = |r: ScanResult| matches!(r, ScanResult::Fail | ScanResult::Error);
    let last = |r: &temper_journal::Rule| r.final_result.unwrap_or(r.initial_result);
    let in_scope = data.rules.iter().filter(|r| r.status != RuleStatus::OutOfScope);
    let ids = |f: &dyn Fn(&temper_journal::Rule) -> bool| in_scope.clone().filter(|r| f(r)).map(|r| r.rule_id.clone()).collect();
    (ids(&|r| bad(last(r))), ids(&|r| last(r) == ScanResult::Pass), ids(&|r| bad(r.initial_result)))
}

#[tokio::test]
async fn trestle_reads_the_assessment_results_with_every_rule_fix_and_the_reboot_proof() {
    let (_f, data) = assessed_run().await;
    let c = rhel9();
    let text = render(&data, Some(c), Format::OscalAr).unwrap();
    assert_eq!(text, render(&data, Some(c), Format::OscalAr).unwrap(), "the same run exports the same file");
    let path = write("assessed.oscal-ar.json", &text);
    let ar = trestle("ar", &path);
    eprintln!(
        "trestle read {}: {} observations, {} findings, {} risks, OSCAL {}",
        path.display(),
        ar["observations"].as_array().unwrap().len(),
        ar["findings"].as_array().unwrap().len(),
        ar["risks"].as_array().unwrap().len(),
        ar["oscal_version"]
    );
    assert_eq!(ar["oscal_version"], "1.1.2");
    assert!(ar["import_ap"].as_str().unwrap().starts_with('#'));

    // One observation per rule, and the reboot proof.
    let obs = ar["observations"].as_array().unwrap();
    assert_eq!(obs.len(), data.rules.len() + 1);
    let observed: BTreeSet<&str> = obs.iter().filter_map(|o| o["props"]["rule-id"].as_str()).collect();
    assert_eq!(observed, data.rules.iter().map(|r| r.rule_id.as_str()).collect());
    let reboot = obs.iter().find(|o| o["title"] == "Reboot proof").expect("the reboot proof");
    assert_eq!(reboot["props"]["reboot-proof"], "proven");
    let said = reboot["evidence"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect::<Vec<_>>().join("\n");
    assert!(said.contains("cold reboot (reboot proof) with 1 fix(es) kept; power-off clean") && said.contains("came back"), "{said}");
    assert!(said.contains("checkpoint temper-r1-a1 proven to boot"), "{said}");
    // The evidence: the items found against the state expected.
    let keep = obs.iter().find(|o| o["props"]["rule-id"] == full(c, ESC_KEEPALIVE)).unwrap();
    let ev = keep["evidence"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect::<Vec<_>>().join("\n");
    assert!(ev.contains("What the scanner found after attempt #1") && ev.contains("expected (any_exist all): user_id = \"0\""), "{ev}");
    assert!(ev.contains("found file_item [false]") && ev.contains("user_id=\"1000\""), "{ev}");

    // A finding per rule that failed a scan: not satisfied exactly for those failing at the end.
    let (failing, _, failed_once) = by_result(&data);
    let findings = ar["findings"].as_array().unwrap();
    assert_eq!(findings.len(), failed_once.len());
    let state = |s: &str| -> BTreeSet<String> {
        findings.iter().filter(|f| f["state"] == s).map(|f| f["target"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(state("not-satisfied"), failing.iter().map(|r| short(r).to_string()).collect());
    assert_eq!(state("satisfied"), BTreeSet::from([FIXED_ROOT.to_string()]));
    // A rule outside the run's scope: observed as scanned, with no finding and no risk.
    let outside = full(c, OUT_OF_SCOPE);
    assert!(observed.contains(outside.as_str()), "observed");
    assert!(findings.iter().all(|f| f["target"] != OUT_OF_SCOPE), "no finding for {OUT_OF_SCOPE}");
    assert!(ar["risks"].as_array().unwrap().iter().all(|r| r["props"]["rule-id"] != outside), "no risk for {OUT_OF_SCOPE}");

    // The kept fix: a closed risk whose completed remediation names the script's sha256, verdict and checks.
    let risks = ar["risks"].as_array().unwrap();
    let root = risks.iter().find(|r| r["props"]["rule-id"] == full(c, FIXED_ROOT)).unwrap();
    assert_eq!(root["status"], "closed");
    let m = &root["remediations"][0];
    assert_eq!(m["lifecycle"], "completed");
    let fix = &data.attempts.iter().find(|a| a.spec.rule_id == full(c, FIXED_ROOT)).unwrap().spec.fix_script;
    assert_eq!(m["props"]["fix-sha256"], sha256(fix));
    for (k, v) in
        [("verdict", "fixed"), ("rule-result", "pass"), ("health-check", "healthy"), ("access-check", "kept"), ("regressions", "0")]
    {
        assert_eq!(m["props"][k], v, "{k}");
    }
    assert!(m["remarks"].as_str().unwrap().contains("PermitRootLogin no"), "the script itself");
    // The waiver, as an accepted risk.
    let waived = risks.iter().find(|r| r["props"]["rule-id"] == full(c, WAIVED)).unwrap();
    assert_eq!(waived["status"], "deviation-approved");
    assert_eq!(waived["props"]["waiver-approved-by"], WAIVER_BY);
    // The others are open, each with its next step.
    let nofix = risks.iter().find(|r| r["props"]["rule-id"] == full(c, ESC_NOFIX)).unwrap();
    assert_eq!(nofix["status"], "open");
    assert_eq!(nofix["remediations"][0]["lifecycle"], "recommendation");
    assert!(nofix["remediations"][0]["description"].as_str().unwrap().contains("No automatic fix was tried"));
}

#[tokio::test]
async fn the_poam_lists_exactly_the_rules_left_failing_with_next_steps_and_waivers() {
    let (_f, data) = assessed_run().await;
    let c = rhel9();
    let path = write("assessed.oscal-poam.json", &render(&data, Some(c), Format::OscalPoam).unwrap());
    let poam = trestle("poam", &path);
    let items = poam["items"].as_array().unwrap();
    eprintln!("trestle read {}: {} POA&M items, {} risks", path.display(), items.len(), poam["risks"].as_array().unwrap().len());
    let listed: BTreeSet<String> = items.iter().map(|i| i["props"]["rule-id"].as_str().unwrap().to_string()).collect();
    let (failing, _, _) = by_result(&data);
    assert_eq!(listed, failing, "the POA&M lists exactly the rules left failing");
    assert_eq!(listed.len(), 6, "escalated twice, waived, not attempted, error, hostile");

    let risks = poam["risks"].as_array().unwrap();
    let risk = |short_id: &str| risks.iter().find(|r| r["props"]["rule-id"] == full(c, short_id)).unwrap_or_else(|| panic!("{short_id}"));
    let waived = risk(WAIVED);
    assert_eq!(waived["status"], "deviation-approved");
    assert_eq!(waived["props"]["waiver-approved-by"], WAIVER_BY);
    assert_eq!(waived["props"]["waiver-expires"], WAIVER_EXPIRES);
    assert!(waived["deadline"].as_str().unwrap().starts_with(WAIVER_EXPIRES), "the expiry is the deadline");
    let keep = risk(ESC_KEEPALIVE);
    assert_eq!(keep["status"], "open");
    let steps: Vec<&str> = keep["remediations"].as_array().unwrap().iter().map(|r| r["description"].as_str().unwrap()).collect();
    assert!(steps[0].starts_with("What the scanner found"), "the evidence first: {steps:?}");
    let still = steps.iter().any(|s| s.contains("The fix ran but the rule still reads `fail`"));
    assert!(still, "the next step of a still_failing attempt: {steps:?}");
    // The POA&M and the assessment results of the same run name each rule with the same UUIDs.
    let ar = trestle("ar", &write("assessed-2.oscal-ar.json", &render(&data, Some(c), Format::OscalAr).unwrap()));
    let uuids = |doc: &Value, key: &str| -> BTreeSet<String> {
        doc[key].as_array().unwrap().iter().map(|x| x["uuid"].as_str().unwrap().into()).collect()
    };
    assert!(uuids(&poam, "risks").is_subset(&uuids(&ar, "risks")));
    assert!(uuids(&poam, "findings").is_subset(&uuids(&ar, "findings")));
}

#[tokio::test]
async fn saf_reads_the_hdf_with_temper_s_counts() {
    for (name, f) in [("assessed", assessed_run().await.0), ("rhel9", ReportFixture::rhel9_run().await)] {
        let data = load(&f.store, f.run).await.unwrap();
        let path = write(&format!("{name}.hdf.json"), &render(&data, Some(rhel9()), Format::Hdf).unwrap());
        // Counted by the last scan's result, within the run's scope; the rest are skipped.
        let in_scope = || data.rules.iter().filter(|x| x.status != RuleStatus::OutOfScope);
        let count = |r: ScanResult| in_scope().filter(|x| x.final_result == Some(r)).count() as u64;
        let outside = data.rules.len() as u64 - in_scope().count() as u64;
        let saf = saf_summary(&path);
        eprintln!("saf summary -i {}: {saf:?}", path.display());
        assert_eq!(saf["passed"], count(ScanResult::Pass), "{name}: passed");
        assert_eq!(saf["failed"], count(ScanResult::Fail), "{name}: failed");
        assert_eq!(saf["error"], count(ScanResult::Error), "{name}: error");
        assert_eq!(saf["no_impact"], count(ScanResult::NotApplicable), "{name}: not applicable");
        assert_eq!(saf["skipped"], outside, "{name}: out of scope");

        // inspecjs: the schema's parser accepts it; each control's status as Heimdall shows it.
        let h = inspecjs(&path);
        assert_eq!(h["platform"]["target_id"], data.run.target);
        let controls = h["controls"].as_array().unwrap();
        assert_eq!(controls.len(), data.rules.len());
        for r in &data.rules {
            let ctl = controls.iter().find(|c| c["id"] == short(&r.rule_id)).unwrap_or_else(|| panic!("{} lost", r.rule_id));
            let want = match r.final_result.unwrap() {
                _ if r.status == RuleStatus::OutOfScope => "Not Reviewed",
                ScanResult::Pass => "Passed",
                ScanResult::Fail => "Failed",
                ScanResult::Error => "Profile Error",
                ScanResult::NotApplicable => "Not Applicable",
                other => panic!("the fixtures have no {other}"),
            };
            assert_eq!(ctl["status"], want, "{}", r.rule_id);
        }
    }
    // The evidence and the next step are in the failed control's message.
    let (_f, data) = assessed_run().await;
    let h = inspecjs(&write("assessed-2.hdf.json", &render(&data, Some(rhel9()), Format::Hdf).unwrap()));
    let keep = h["controls"].as_array().unwrap().iter().find(|c| c["id"] == ESC_KEEPALIVE).unwrap();
    let msg = keep["message"].as_str().unwrap();
    assert!(msg.contains("What the scanner found after attempt #1") && msg.contains("expected (any_exist all): user_id = \"0\""), "{msg}");
    assert!(msg.contains("Next step (still_failing)"), "{msg}");
    let waived = h["controls"].as_array().unwrap().iter().find(|c| c["id"] == WAIVED).unwrap();
    assert_eq!(
        (waived["status"].as_str(), waived["waived"].as_bool()),
        (Some("Failed"), Some(false)),
        "scanned and failing, with its waiver"
    );
    let root = h["controls"].as_array().unwrap().iter().find(|c| c["id"] == FIXED_ROOT).unwrap();
    assert!(root["code_desc"].as_str().unwrap().contains("Fixed by attempt 1 (stock fix, sha256 "), "{root}");
}

/// Hostile text (markup, quotes, control characters) in a rule's title, reason and evidence:
/// every file stays well-formed JSON its reader accepts; OSCAL's markup fields carry it
/// escaped (no tag, link or image can form); HDF, which is not markup, carries it as it is.
#[tokio::test]
async fn hostile_text_stays_inert_in_every_assessors_format() {
    let (_f, data) = assessed_run().await;
    let c = rhel9();
    for format in [Format::OscalAr, Format::OscalPoam, Format::Hdf] {
        let text = render(&data, Some(c), format).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{format}: not JSON: {e}"));
        assert!(!text.contains('\u{0}') && !text.contains('\u{1b}'), "{format}: raw control characters");
        let mut strings = Vec::new();
        collect_strings(&v, &mut strings);
        if format == Format::Hdf {
            assert!(strings.iter().any(|s| s.contains(&hostile())), "HDF keeps the title as it is (a JSON string)");
            continue;
        }
        for s in strings.iter().map(|s| prose_only(s)) {
            for bad in ["<script", "<img", "\u{0}", "\u{7}"] {
                assert!(!s.contains(bad), "{format}: {bad:?} unescaped in {s:?}");
            }
            assert!(!s.replace("\\]", "").contains("](javascript:"), "{format}: a link forms in {s:?}");
        }
        assert!(strings.iter().any(|s| s.contains("&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;")), "{format}: the title, escaped");
        assert!(strings.iter().any(|s| s.contains("\\[link\\](javascript:alert(2))")), "{format}: no link forms");
    }
    // trestle accepts the props (one line each) and the titles.
    let ar = trestle("ar", &write("hostile.oscal-ar.json", &render(&data, Some(c), Format::OscalAr).unwrap()));
    let obs = ar["observations"].as_array().unwrap().iter().find(|o| o["props"]["rule-id"] == HOSTILE_RULE).unwrap();
    assert!(obs["title"].as_str().unwrap().starts_with("a &lt; b &amp;&amp; c &gt; d \"dq\" 'sq'"), "{obs}");
    let poam = trestle("poam", &write("hostile.oscal-poam.json", &render(&data, Some(c), Format::OscalPoam).unwrap()));
    assert!(poam["items"].as_array().unwrap().iter().any(|i| i["props"]["rule-id"] == HOSTILE_RULE));
    let h = inspecjs(&write("hostile.hdf.json", &render(&data, Some(c), Format::Hdf).unwrap()));
    assert!(h["controls"].as_array().unwrap().iter().any(|c| c["id"] == "temper_hostile_title"));
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}

/// The readers are real: each refuses a file with a required part taken out or a wrong type.
#[tokio::test]
async fn the_readers_refuse_a_broken_file() {
    let (_f, data) = assessed_run().await;
    let c = rhel9();
    let refuses = |cmd: &mut Command| {
        let out = cmd.output().unwrap();
        assert!(!out.status.success(), "{cmd:?} accepted a broken file");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let dir = repo_root().join("tests/report");
    let mut ar: Value = serde_json::from_str(&render(&data, Some(c), Format::OscalAr).unwrap()).unwrap();
    ar["assessment-results"].as_object_mut().unwrap().remove("import-ap");
    let path = write("broken.oscal-ar.json", &ar.to_string());
    let err = refuses(Command::new(venv_python()).arg(dir.join("oscal_read.py")).arg("ar").arg(&path));
    assert!(err.contains("import-ap") || err.contains("import_ap"), "{err}");

    let mut poam: Value = serde_json::from_str(&render(&data, Some(c), Format::OscalPoam).unwrap()).unwrap();
    poam["plan-of-action-and-milestones"]["risks"][0]["status"] = json!("not a status");
    let path = write("broken.oscal-poam.json", &poam.to_string());
    refuses(Command::new(venv_python()).arg(dir.join("oscal_read.py")).arg("poam").arg(&path));

    let mut hdf: Value = serde_json::from_str(&render(&data, Some(c), Format::Hdf).unwrap()).unwrap();
    hdf["profiles"][0]["controls"][0]["impact"] = json!("high");
    let path = write("broken.hdf.json", &hdf.to_string());
    let err = refuses(Command::new("node").arg(node_dir().join("hdf_read.js")).arg(&path));
    assert!(err.contains("Invalid value"), "{err}");
}
