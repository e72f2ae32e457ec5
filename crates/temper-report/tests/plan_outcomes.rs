//! A plan run's outcomes, one step for each: kept, kept after an interrupted batch, redone by the
//! loop, rolled back then redone, escalated, and never applied (passed already, not applicable,
//! waived, not in the scan). The JSON report keeps to `schemas/report.schema.json`, whose enums
//! are temper's own.
mod common;

use std::path::Path;

use common::*;
use serde_json::{Value, json};
use temper_journal::AttemptId;
use temper_journal::{Culprit, EventData, Phase, Picked, PickedBy, RunStatus};
use temper_report::{Format, load, render};
use temper_report::{NotApplied, StepOutcome};

/// The plan's folder as the run was given it: markup that must stay text.
const HOSTILE_DIR: &str = "/srv/plan/<script>alert(1)</script><img src=x onerror=alert(2)>";
const RULE: &str = "xccdf_org.ssgproject.content_rule_";

fn rule(short: &str) -> String {
    format!("{RULE}{short}")
}

/// The steps: (short id, the rule's first scan and status in the run; `None`, not scanned).
const STEPS: [(&str, Option<(ScanResult, RuleStatus)>); 9] = [
    ("kept", Some((ScanResult::Fail, RuleStatus::Fixed))),
    ("kept_again", Some((ScanResult::Fail, RuleStatus::Fixed))),
    ("redone", Some((ScanResult::Fail, RuleStatus::Fixed))),
    ("rolled_back", Some((ScanResult::Fail, RuleStatus::Fixed))),
    ("escalated", Some((ScanResult::Fail, RuleStatus::Escalated))),
    ("passes", Some((ScanResult::Pass, RuleStatus::Passing))),
    ("na", Some((ScanResult::NotApplicable, RuleStatus::NotApplicable))),
    ("waived", Some((ScanResult::Fail, RuleStatus::Waived))),
    ("fixed_otherwise", Some((ScanResult::Fail, RuleStatus::Fixed))),
];

async fn attempt(f: &ReportFixture, short: &str, source: FixSource) -> AttemptId {
    let a = AttemptSpec {
        rule_id: rule(short),
        plan: "step of the proven plan".into(),
        source,
        replayed: false,
        fix_script: format!("echo {short}\n"),
        revert_script: String::new(),
        description: short.into(),
        checkpoint: "baseline".into(),
        evidence_before: None,
    };
    let (id, _) = f.store.start_attempt(f.run, &a).await.unwrap();
    f.store.set_attempt_state(id, AttemptState::Applied).await.unwrap();
    id
}

async fn kept(f: &ReportFixture, short: &str, source: FixSource) -> AttemptId {
    let id = attempt(f, short, source).await;
    let e =
        Evaluation::new(Verdict::Fixed, "the rule passes").found(Findings { rule_result: Some(ScanResult::Pass), ..Findings::default() });
    f.store.record_fix(f.run, id, &e, &rule(short), &format!("temper-a{id}")).await.unwrap();
    id
}

async fn pending(f: &ReportFixture, short: &str) -> AttemptId {
    let id = attempt(f, short, FixSource::Plan).await;
    let e =
        Evaluation::new(Verdict::Fixed, "the rule passes").found(Findings { rule_result: Some(ScanResult::Pass), ..Findings::default() });
    f.store.record_pending_fix(f.run, id, &e, &rule(short), Some(&format!("temper-a{id}"))).await.unwrap();
    id
}

async fn failed(f: &ReportFixture, short: &str, verdict: Verdict, reason: &str) {
    let id = attempt(f, short, FixSource::Plan).await;
    f.store.finish_attempt(id, &Evaluation::new(verdict, reason)).await.unwrap();
}

/// A finished plan run with every outcome; the plan has a tenth step on a rule not scanned.
async fn plan_run() -> ReportFixture {
    plan_run_with(json!({})).await
}

/// `plan_run`, with `more` added to the stored plan (`{"origin": "last_proven"}`).
async fn plan_run_with(more: Value) -> ReportFixture {
    let mut run = new_run("debian12-anssi", ANSSI, "ssg-debian12-ds.xml", Some("0.1.76".into()), "libvirt:b", "stock");
    let mut steps: Vec<String> = STEPS.iter().map(|(s, _)| rule(s)).collect();
    steps.push(rule("not_scanned"));
    let fixes: Vec<Value> = steps
        .iter()
        .enumerate()
        .map(|(i, r)| json!({"n": i + 1, "rule": r, "fix": {"fix_script": "true", "revert_script": "", "description": ""}}))
        .collect();
    let mut plan = json!({"dir": HOSTILE_DIR, "from_run": 7, "fixes": fixes});
    plan.as_object_mut().unwrap().extend(more.as_object().unwrap().clone());
    run.options_json = json!({ "plan": plan }).to_string();
    let f = ReportFixture::open(&run).await;
    for (short, scanned) in STEPS {
        let (initial, status) = scanned.unwrap();
        let pending = if initial == ScanResult::Fail { RuleStatus::Pending } else { status };
        f.store.add_rule(f.run, &new_rule(&rule(short), short, "medium", initial, pending, None)).await.unwrap();
    }
    kept(&f, "kept", FixSource::Plan).await;
    // Its batch stopped by another step: closed as interrupted, then applied again and kept.
    attempt(&f, "kept_again", FixSource::Plan).await;
    f.store.interrupt_open_attempts(f.run).await.unwrap();
    kept(&f, "kept_again", FixSource::Plan).await;
    failed(&f, "redone", Verdict::ApplyFailed, "the fix exited 3").await;
    kept(&f, "redone", FixSource::Stock).await;
    // Two plan fixes kept in one batch whose regression check blames one: the other is rolled
    // back with it, and the loop fixes its rule again.
    let culprit = pending(&f, "escalated").await;
    let dropped = pending(&f, "rolled_back").await;
    let c = Culprit {
        id: culprit,
        verdict: Verdict::Regression,
        rule_id: rule("escalated"),
        reason: "sshd_x now fails".into(),
        regressions: vec![rule("sshd_x")],
        diagnostics: String::new(),
        rule_result: None,
    };
    f.store.roll_back_fixes(f.run, &c, &[dropped]).await.unwrap();
    kept(&f, "rolled_back", FixSource::Llm).await;
    f.store.set_rule_status(f.run, &rule("escalated"), RuleStatus::Escalated, Some("attempt budget spent")).await.unwrap();
    f.store.set_rule_status(f.run, &rule("waived"), RuleStatus::Waived, Some("waived until 2027")).await.unwrap();
    for short in ["kept", "kept_again", "redone", "rolled_back", "fixed_otherwise"] {
        f.store.set_rule_status(f.run, &rule(short), RuleStatus::Fixed, None).await.unwrap();
    }
    let pick = EventData::Pick(Picked { plan: "step 1".into(), by: PickedBy::Plan { plan_step: 1 } });
    f.store.event(f.run, Some(&rule("kept")), &pick).await.unwrap();
    f.store.finish_run(f.run, &RunSummary::default()).await.unwrap();
    f
}

#[tokio::test]
async fn each_step_has_its_outcome_and_the_json_keeps_to_its_schema() {
    let f = plan_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let plan = data.plan.as_ref().unwrap();
    let got: Vec<(usize, &str, &str, usize)> =
        plan.steps.iter().map(|s| (s.n, s.short_id.as_str(), s.outcome.kind(), s.interrupted)).collect();
    assert_eq!(
        got,
        [
            (1, "kept", "kept", 0),
            (2, "kept_again", "kept", 1),
            (3, "redone", "redone", 0),
            (4, "rolled_back", "redone", 0),
            (5, "escalated", "escalated", 0),
            (6, "passes", "not_applied", 0),
            (7, "na", "not_applied", 0),
            (8, "waived", "not_applied", 0),
            (9, "fixed_otherwise", "not_applied", 0),
            (10, "not_scanned", "not_applied", 0),
        ]
    );
    let why: Vec<Option<NotApplied>> =
        plan.steps.iter().map(|s| if let StepOutcome::NotApplied { why } = s.outcome { Some(why) } else { None }).collect();
    assert_eq!(
        why[5..],
        [
            Some(NotApplied::PassedAlready),
            Some(NotApplied::NotApplicable),
            Some(NotApplied::SetAside { status: RuleStatus::Waived }),
            Some(NotApplied::FixedOtherwise),
            Some(NotApplied::NotScanned)
        ]
    );
    let says: Vec<&str> = plan.steps.iter().map(|s| s.says.as_str()).collect();
    assert_eq!(
        says[2],
        "redone by the loop: the plan's fix (attempt 1) was apply_failed (the fix exited 3); fixed by the stock fix (attempt 2)"
    );
    assert_eq!(
        says[3],
        "redone by the loop: the plan's fix (attempt 1) was kept, then rolled back (the rule passes [rolled back: kept after the fix \
         for xccdf_org.ssgproject.content_rule_escalated (regression); replayed]); fixed by the llm fix (attempt 2)"
    );
    assert_eq!(
        says[4],
        "escalated: the plan's fix (attempt 1) was regression (sshd_x now fails); the loop found no fix that holds either: attempt budget spent"
    );
    assert_eq!(says[5], "not needed: the rule passed already on this target");

    let doc: Value = serde_json::from_str(&render(&data, None, Format::Json).unwrap()).unwrap();
    assert_eq!(schema_errors(&doc), Vec::<String>::new());
    assert_eq!(doc["plan"]["counts"], json!({"steps": 10, "kept": 2, "redone": 2, "escalated": 1, "open": 0, "not_applied": 5}));
    assert_eq!(doc["plan"]["steps"][7]["outcome"], json!({"kind": "not_applied", "why": {"kind": "set_aside", "status": "waived"}}));

    assert_eq!(doc["plan"]["origin"], "given", "a plan stored before origins were: given with --plan");

    let md = render(&data, None, Format::Md).unwrap();
    assert!(md.contains("## Plan (10 steps, exported from run 7)"), "{md}");
    assert!(md.contains("(`temper run --plan`) before the normal loop"), "{md}");
    assert!(md.contains("2 applied from the plan and kept, 2 redone by the loop, 1 escalated, 0 not fixed, 5 not applied."), "{md}");
    assert!(
        md.contains(
            "| 2 | kept\\_again | kept | applied from the plan and kept (attempt 2) (applied again after 1 interrupted batch(es)) |"
        ),
        "{md}"
    );
    let html = render(&data, None, Format::Html).unwrap();
    assert_eq!(html.matches("<tr class=\"plan-step\"").count(), 10);
}

/// The report's Plan section in Chromium: every row, in the plan's order, the folder as text
/// (screenshot report-plan.png).
#[tokio::test]
async fn the_plan_section_in_chromium() {
    let f = plan_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, render(&data, None, Format::Html).unwrap()).unwrap();
    let url = format!("file://{}", page.display());
    let dom = run(browser(&dir.path().join("p1")).args(["--dump-dom", "--virtual-time-budget=3000"]).arg(&url));
    let section = &dom[dom.find("<section id=\"plan\">").expect("the Plan section")..];
    let section = &section[..section.find("</section>").unwrap()];
    let rows: Vec<&str> = section.split("data-outcome=\"").skip(1).map(|r| &r[..r.find('"').unwrap()]).collect();
    assert_eq!(
        rows,
        ["kept", "kept", "redone", "redone", "escalated", "not_applied", "not_applied", "not_applied", "not_applied", "not_applied"]
    );
    assert!(section.contains("2 applied from the plan and kept, 2 redone by the loop, 1 escalated"), "{section}");
    assert!(section.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;"), "the folder as text: {section}");
    assert!(!dom.contains("<script>alert(1)") && !dom.contains("<img src=\"x\""), "no markup from the data");
    let png = artifacts().join("report-plan.png");
    let _ = std::fs::remove_file(&png);
    run(browser(&dir.path().join("p2"))
        .arg(format!("--screenshot={}", png.display()))
        .args(["--window-size=1280,2000", "--virtual-time-budget=3000"])
        .arg(&url));
    assert!(std::fs::read(&png).expect("chromium wrote the screenshot").starts_with(b"\x89PNG\r\n\x1a\n"));
}

/// A plan applied by default (the job's last proven one): each report says so, and how to turn
/// it off, rather than naming a folder nobody gave.
#[tokio::test]
async fn a_plan_applied_by_default_says_so() {
    let f = plan_run_with(json!({"origin": "last_proven"})).await;
    let data = load(&f.store, f.run).await.unwrap();
    let doc: Value = serde_json::from_str(&render(&data, None, Format::Json).unwrap()).unwrap();
    assert_eq!(schema_errors(&doc), Vec::<String>::new());
    assert_eq!(doc["plan"]["origin"], "last_proven");
    let md = render(&data, None, Format::Md).unwrap();
    assert!(md.contains("The proven plan of the last run of this job on this target, applied by default"), "{md}");
    assert!(md.contains("`--no-plan` runs the full loop") && !md.contains("temper run --plan`)"), "{md}");
    let html = render(&data, None, Format::Html).unwrap();
    assert!(html.contains("the last proven plan of this job on this target, applied by default"), "{html}");
    assert!(!html.contains("applied from <code>"), "{html}");
}

/// A run without a plan: `plan` is null, and no Plan section.
#[tokio::test]
async fn a_run_without_a_plan_has_none() {
    let f = ReportFixture::anssi_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let doc: Value = serde_json::from_str(&render(&data, None, Format::Json).unwrap()).unwrap();
    assert_eq!(schema_errors(&doc), Vec::<String>::new());
    assert_eq!(doc["plan"], Value::Null);
    assert!(!render(&data, None, Format::Md).unwrap().contains("## Plan"));
    assert!(!render(&data, None, Format::Html).unwrap().contains("id=\"plan\""));
}

fn schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/report.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn schema_errors(doc: &Value) -> Vec<String> {
    let v = jsonschema::options().build(&schema()).unwrap();
    v.iter_errors(doc).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

/// The schema's version is the one the report writes, and its enums are temper's, no more.
#[test]
fn the_schema_names_the_report_version_and_temper_enums() {
    let s = schema();
    assert_eq!(s["properties"]["schema"]["const"], temper_report::SCHEMA);
    let names = |all: Vec<&str>| json!(all);
    assert_eq!(s["$defs"]["verdict"]["enum"], names(Verdict::ALL.iter().map(|v| v.as_str()).collect()));
    assert_eq!(s["$defs"]["source"]["enum"], names(FixSource::ALL.iter().map(|v| v.as_str()).collect()));
    assert_eq!(s["$defs"]["status"]["enum"], names(RuleStatus::ALL.iter().map(|v| v.as_str()).collect()));
    assert_eq!(s["$defs"]["run_status"]["enum"], names(RunStatus::ALL.iter().map(|v| v.as_str()).collect()));
    assert_eq!(s["$defs"]["phase"]["enum"], names(Phase::ALL.iter().map(|v| v.as_str()).collect()));
    assert_eq!(s["$defs"]["attempt_state"]["enum"], names(AttemptState::ALL.iter().map(|v| v.as_str()).collect()));
    let rest = &s["properties"]["time_split"]["properties"]["rest"]["items"]["properties"]["part"]["enum"];
    assert_eq!(*rest, json!(temper_journal::Overhead::ALL), "the rest's parts");
    let parts = &s["properties"]["time_split"]["properties"]["parts"]["items"]["properties"]["part"]["enum"];
    assert_eq!(*parts, json!(temper_journal::Part::ALL), "the parts");
}
