//! The scanner's evidence where a reviewer reads it: each attempt in the Markdown and HTML
//! reports, the fixed rules' section, and the checklist's FINDING_DETAILS. The evidence is real:
//! `oscap oval eval` on this host through the OVAL engine, plus one collected value a hostile
//! guest could plant (a file name with markup), which the HTML must escape.
mod common;

use std::process::Command;

use common::*;
use temper_report::{Format, load, render};
use temper_scap::oval::{Check, Evidence, Existence, Flag, ItemStatus, OvalContent, OvalEval, OvalPlan, OvalReport, OvalResults};

const RULES: [&str; 2] = ["accounts_password_set_max_life_root", "file_permission_user_init_files"];
const HOSTILE: &str = "/home/x/<script>alert(1)</script>";

/// The evidence of the first of [`RULES`] this host fails.
fn real_evidence() -> Evidence {
    let (ds, c) = (ssg("ssg-debian12-ds.xml"), debian12_anssi());
    let content = OvalContent::read(&ds).unwrap();
    let rules: Vec<String> = RULES.iter().map(|r| full(c, r)).collect();
    let plan = OvalPlan::build(&content, c, &rules).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (doc, vars, res) = (dir.path().join("doc.xml"), dir.path().join("vars.xml"), dir.path().join("res.xml"));
    std::fs::write(&doc, plan.document.as_ref().unwrap()).unwrap();
    if let Some(v) = &plan.variables {
        std::fs::write(&vars, v).unwrap();
    }
    let eval = OvalEval {
        document: doc.to_str().unwrap(),
        variables: plan.variables.as_ref().map(|_| vars.to_str().unwrap()),
        results: res.to_str().unwrap(),
        skip_valid: true,
    };
    run(Command::new("oscap").args(eval.args()));
    let outcomes = plan.outcomes(&OvalResults::read(&res).unwrap());
    let evidence = plan.evidence(&OvalReport::read(&res).unwrap(), &outcomes);
    evidence.into_iter().next().unwrap_or_else(|| panic!("this host fails one of {RULES:?}: {outcomes:?}"))
}

#[tokio::test]
async fn evidence_is_in_the_reports_and_the_checklist() {
    let before = real_evidence();
    let mut after = before.clone();
    let test = after.tests.iter_mut().find(|t| !t.items.is_empty()).expect("a test with collected items");
    test.items[0].fields.push(("filepath".into(), HOSTILE.into()));
    let shown = before.tests.iter().flat_map(|t| &t.items).flat_map(|i| &i.fields).next().expect("a collected value").1.clone();

    let c = debian12_anssi();
    let ds = ssg("ssg-debian12-ds.xml").display().to_string();
    let f = ReportFixture::open(&new_run("debian12-anssi", ANSSI, &ds, Some(c.version.clone()), "t", "stock")).await;
    let (s, run) = (&f.store, f.run);
    let rule = &before.rule;
    s.add_rule(run, &new_rule(rule, "", "medium", ScanResult::Fail, RuleStatus::Pending, None)).await.unwrap();
    let attempt = AttemptSpec {
        rule_id: rule.clone(),
        plan: String::new(),
        source: FixSource::Stock,
        replayed: false,
        fix_script: "true\n".into(),
        revert_script: String::new(),
        description: "the stock fix".into(),
        checkpoint: "baseline".into(),
        evidence_before: Some(before.clone()),
    };
    let (id, _) = s.start_attempt(run, &attempt).await.unwrap();
    let still = Evaluation::new(Verdict::StillFailing, "the rule's result after the fix is fail").found(Findings {
        rule_result: Some(ScanResult::Fail),
        evidence_after: Some(after.clone()),
        ..Findings::default()
    });
    s.finish_attempt(id, &still).await.unwrap();
    s.set_rule_status(run, rule, RuleStatus::Escalated, Some("the stock fix left it failing")).await.unwrap();
    s.set_final_result(run, rule, ScanResult::Fail).await.unwrap();
    s.finish_run(run, &RunSummary { run: Some(run), exit_code: 2, ..Default::default() }).await.unwrap();

    let data = load(s, run).await.unwrap();
    let stored = &data.attempts[0];
    assert_eq!(
        (stored.spec.evidence_before.as_ref(), stored.findings.evidence_after.as_ref()),
        (Some(&before), Some(&after)),
        "stored whole"
    );

    let md = render(&data, Some(c), Format::Md).unwrap();
    for want in ["What the scanner found before the fix", "What the scanner found after the fix", &before.definition, &shown, HOSTILE] {
        assert!(md.contains(want), "markdown shows {want:?}");
    }
    let html = render(&data, Some(c), Format::Html).unwrap();
    assert!(html.contains("What the scanner found after the fix") && html.contains(&before.definition));
    assert!(!html.contains("<script>alert(1)"), "a collected value is escaped");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;"), "and still shown");
    let ckl = render(&data, Some(c), Format::Ckl).unwrap();
    let details = ckl.split("<FINDING_DETAILS>").nth(1).and_then(|d| d.split("</FINDING_DETAILS>").next()).unwrap();
    assert!(details.contains("What the scanner found after attempt #1"), "{details}");
    assert!(details.contains(&before.definition) && details.contains("&lt;script&gt;"), "{details}");
}

/// Text a guest could plant in what the scanner collects: markup, quotes, a CDATA end and
/// control characters.
const PLANTED: &str = "CONFIG_X=n </pre><script>alert(\"x\")</script> ]]> 'q' \u{1b}[31m\u{7}";

/// Evidence as the OVAL engine gives it for a line of the kernel's configuration: the line found
/// (with `found` in it) against the one expected.
fn kernel_config(rule: &str, found: &str) -> Evidence {
    use temper_scap::oval::{CollectedItem, DefinitionResult, Field, Spec, TestEvidence};
    let field = |name: &str, value: &str| Field { name: name.into(), value: value.into(), ..Field::default() };
    let test = TestEvidence {
        id: "oval:ssg-test_kernel_config_x:tst:1".into(),
        kind: "textfilecontent54_test".into(),
        comment: "CONFIG_X is set to y".into(),
        result: DefinitionResult::False,
        check: Check::All,
        check_existence: Existence::AllExist,
        object: Some(Spec {
            id: "oval:o:1".into(),
            kind: "textfilecontent54_object".into(),
            comment: String::new(),
            fields: vec![field("filepath", "/boot/config-6.1.0-28-amd64"), field("pattern", "^CONFIG_X=(.*)$")],
            members: vec![],
            operator: None,
        }),
        flag: Some(Flag::Complete),
        states: vec![Spec {
            id: "oval:s:1".into(),
            kind: "textfilecontent54_state".into(),
            comment: String::new(),
            fields: vec![field("subexpression", "y")],
            members: vec![],
            operator: None,
        }],
        variables: vec![],
        items: vec![CollectedItem {
            id: "1".into(),
            kind: "textfilecontent_item".into(),
            status: ItemStatus::Exists,
            result: Some(DefinitionResult::False),
            fields: vec![("filepath".into(), "/boot/config-6.1.0-28-amd64".into()), ("text".into(), found.into())],
        }],
        items_total: 1,
        filters: vec![],
        refused: vec![],
    };
    Evidence {
        rule: rule.into(),
        outcome: temper_scap::Outcome::Fail,
        definition: "oval:ssg-kernel_config_x:def:1".into(),
        title: "CONFIG_X".into(),
        result: DefinitionResult::False,
        tests: vec![test],
        criteria: None,
    }
}

/// Two rules never attempted fail the final scan: one escalated (no fix), one out of scope. Both
/// carry what the final scan found into every format, and the escalated one's next step names the
/// line found and the value expected. Planted text stays inert.
#[tokio::test]
async fn rules_never_attempted_carry_the_final_scans_evidence_into_every_format() {
    let c = debian12_anssi();
    let ds = ssg("ssg-debian12-ds.xml").display().to_string();
    let f = ReportFixture::open(&new_run("debian12-anssi", ANSSI, &ds, Some(c.version.clone()), "t", "stock")).await;
    let (s, run) = (&f.store, f.run);
    let ids: Vec<String> = c.selected_rules.iter().filter(|r| r.stig_ids.is_empty()).take(2).map(|r| r.id.clone()).collect();
    let (esc, out) = (&ids[0], &ids[1]);
    s.add_rule(run, &new_rule(esc, "", "medium", ScanResult::Fail, RuleStatus::Pending, None)).await.unwrap();
    s.add_rule(run, &new_rule(out, "", "medium", ScanResult::Fail, RuleStatus::OutOfScope, Some("outside this run's scope (--rules)")))
        .await
        .unwrap();
    s.escalate_rule(run, esc, &Escalation::new(EscalationCause::NoFix, "no stock fix in the content, and the agent offers no other"))
        .await
        .unwrap();
    for (id, found) in [(esc, "CONFIG_X=n"), (out, PLANTED)] {
        s.set_final_result(run, id, ScanResult::Fail).await.unwrap();
        s.set_final_evidence(run, id, &kernel_config(id, found)).await.unwrap();
    }
    s.finish_run(run, &RunSummary { run: Some(run), exit_code: 2, ..Default::default() }).await.unwrap();
    let data = load(s, run).await.unwrap();
    assert_eq!(data.rules[1].final_evidence.as_ref(), Some(&kernel_config(out, PLANTED)), "stored whole");

    let json: serde_json::Value = serde_json::from_str(&render(&data, Some(c), Format::Json).unwrap()).expect("the JSON stays well formed");
    let step = &json["escalated"][0]["next_steps"][0];
    assert_eq!(step["cause"], "found by the scanner", "{step}");
    let check = step["check"].as_str().unwrap();
    for want in ["/boot/config-6.1.0-28-amd64", "text=\"CONFIG_X=n\"", "subexpression = \"y\""] {
        assert!(check.contains(want), "the next step names what was found and what was expected ({want}): {check}");
    }
    assert!(json["escalated"][0]["next_steps"][1]["try_"].as_str().unwrap().contains("from what the scanner found"));
    assert_eq!(json["left_failing"][0]["status"], "out_of_scope");

    let md = render(&data, Some(c), Format::Md).unwrap();
    assert!(md.contains("**What the final scan found.**") && md.contains("## Other rules left failing (1)"), "{md}");
    assert!(md.contains("CONFIG\\_X=n") || md.contains("CONFIG_X=n"), "{md}");
    let finding = md.lines().find(|l| l.starts_with("- CONFIG\\_X is set to y") && l.contains("script")).expect("the planted finding");
    assert!(finding.contains("&lt;script&gt;") && !finding.contains("<script>"), "markup in Markdown prose is escaped: {finding}");

    let html = render(&data, Some(c), Format::Html).unwrap();
    assert!(html.contains("What the final scan found") && html.contains("subexpression = &quot;y&quot;"));
    assert!(!html.contains("<script>alert") && !html.contains("</pre><script>"), "planted markup is escaped");
    assert!(html.contains("&lt;script&gt;alert("), "and still shown");

    let ckl = render(&data, Some(c), Format::Ckl).unwrap();
    let mut reader = quick_xml::Reader::from_str(&ckl);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("the checklist is not well formed at {}: {e}", reader.buffer_position()),
        }
    }
    assert!(!ckl.contains('\u{1b}') && !ckl.contains('\u{7}'), "no control character XML 1.0 cannot carry");
    let details: Vec<&str> = ckl.split("<FINDING_DETAILS>").skip(1).filter_map(|d| d.split("</FINDING_DETAILS>").next()).collect();
    assert!(details.iter().all(|d| d.contains("What the scanner found at the final scan")), "{details:?}");
    assert!(details.iter().any(|d| d.contains("&lt;script&gt;")), "{details:?}");
    let cklb: serde_json::Value = serde_json::from_str(&render(&data, Some(c), Format::Cklb).unwrap()).expect("the CKLB stays well formed");
    assert!(cklb.to_string().contains("What the scanner found at the final scan"));
}
