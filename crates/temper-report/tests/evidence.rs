//! The scanner's evidence where a reviewer reads it: each attempt in the Markdown and HTML
//! reports, the fixed rules' section, and the checklist's FINDING_DETAILS. The evidence is real:
//! `oscap oval eval` on this host through the OVAL engine, plus one collected value a hostile
//! guest could plant (a file name with markup), which the HTML must escape.
mod common;

use std::process::Command;

use common::*;
use temper_report::{Format, load, render};
use temper_scap::oval::{Evidence, OvalContent, OvalEval, OvalReport, OvalResults, Plan};

const RULES: [&str; 2] = ["accounts_password_set_max_life_root", "file_permission_user_init_files"];
const HOSTILE: &str = "/home/x/<script>alert(1)</script>";

/// The evidence of the first of [`RULES`] this host fails.
fn real_evidence() -> Evidence {
    let (ds, c) = (ssg("ssg-debian12-ds.xml"), debian12_anssi());
    let content = OvalContent::read(&ds).unwrap();
    let rules: Vec<String> = RULES.iter().map(|r| full(c, r)).collect();
    let plan = Plan::build(&content, c, &rules).unwrap();
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
    let mut f = Fixture::open().await;
    let ds = ssg("ssg-debian12-ds.xml").display().to_string();
    f.run = f.store.create_run(&new_run("debian12-anssi", ANSSI, &ds, Some(c.version.clone()), "t", "stock")).await.unwrap();
    let (s, run) = (&f.store, f.run);
    let rule = &before.rule;
    s.add_rule(&new_rule(run, rule, "", "medium", ScanResult::Fail, RuleStatus::Pending, None)).await.unwrap();
    let attempt = NewAttempt {
        run_id: run,
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
    let (id, _) = s.start_attempt(&attempt).await.unwrap();
    let still = Evaluation {
        rule_result: Some(ScanResult::Fail),
        evidence_after: Some(after.clone()),
        ..Evaluation::new(Verdict::StillFailing, "the rule's result after the fix is fail")
    };
    s.finish_attempt(id, &still).await.unwrap();
    s.set_rule_status(run, rule, RuleStatus::Escalated, Some("the stock fix left it failing")).await.unwrap();
    s.set_final_result(run, rule, ScanResult::Fail).await.unwrap();
    s.finish_run(run, &RunSummary { run, exit_code: 2, ..Default::default() }).await.unwrap();

    let data = load(s, run).await.unwrap();
    let stored = &data.attempts[0];
    assert_eq!((stored.evidence_before.as_ref(), stored.evidence_after.as_ref()), (Some(&before), Some(&after)), "stored whole");

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
