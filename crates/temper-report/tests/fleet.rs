//! The fleet report, on a real SQLite store holding two fleets: each target's row, the
//! escalations grouped by rule across targets, every value escaped, and the HTML page as
//! headless Chromium renders it.
mod common;

use std::process::Command;

use common::*;
use temper_journal::RunId;
use temper_journal::target::Target;
use temper_journal::{NewRule, RuleStatus, RunSummary, ScanResult};
use temper_report::{Format, LoadError, ReportError, load_fleet, render_fleet};

const SHARED: &str = "xccdf_org.ssgproject.content_rule_sshd_set_keepalive";
const ONLY_B: &str = "xccdf_org.ssgproject.content_rule_package_audit_installed";
const FIXED: &str = "xccdf_org.ssgproject.content_rule_sysctl_fs_suid_dumpable";

/// A finished run of `fleet` on target `name`: one rule fixed, `escalated` escalated.
async fn target_run(store: &temper_store::Store, fleet: &str, name: &str, escalated: &[&str], healthy: bool) -> RunId {
    target_run_with(store, serde_json::json!({"fleet": fleet}), name, escalated, healthy).await
}

/// The same, with these stored options.
async fn target_run_with(store: &temper_store::Store, options: serde_json::Value, name: &str, escalated: &[&str], healthy: bool) -> RunId {
    let run = NewRun { options_json: options.to_string(), ..new_run("debian12-anssi", ANSSI, "ssg-debian12-ds.xml", None, name, "stock") };
    let target = Target { name: name.into(), ..Target::default() };
    let id = store.create_run_on(&run, &target).await.unwrap();
    let rule = |rule_id: &str, status, reason: Option<&str>| NewRule {
        reason: reason.map(Into::into),
        ..new_rule(rule_id, "a title", "medium", ScanResult::Fail, status, None)
    };
    store.add_rule(id, &rule(FIXED, RuleStatus::Fixed, None)).await.unwrap();
    for r in escalated {
        store.add_rule(id, &rule(r, RuleStatus::Escalated, Some("attempt budget spent: 3 of 3 attempts failed"))).await.unwrap();
    }
    store.set_scores(id, Some(40.0), Some(55.5)).await.unwrap();
    let summary = RunSummary { run: Some(id), exit_code: 2, wall_secs: 754.0, healthy: Some(healthy), ..Default::default() };
    store.finish_run(id, &summary).await.unwrap();
    id
}

#[tokio::test]
async fn a_fleet_report_has_each_target_and_the_escalations_that_recur_across_them() {
    let (_dir, store) = empty_store().await;
    let nasty = format!("lab-b {NASTY}");
    let a = target_run(&store, "night", "lab-a", &[SHARED], true).await;
    target_run(&store, "other", "elsewhere", &[ONLY_B], true).await;
    let b = target_run(&store, "night", &nasty, &[SHARED, ONLY_B], false).await;

    let r = load_fleet(&store, Some("night")).await.unwrap();
    assert_eq!(r.targets.iter().map(|t| t.run).collect::<Vec<_>>(), [a, b], "the fleet's runs only, oldest first");
    assert_eq!((r.fixed, r.escalated), (2, 3));
    assert_eq!(r.targets[0].target, "lab-a");
    assert_eq!((r.targets[0].healthy, r.targets[1].healthy), (Some(true), Some(false)));
    assert_eq!(r.targets[0].wall, "12 min 34 s");
    let shared = &r.escalations[0];
    assert_eq!((shared.rule_id.as_str(), shared.recurs, shared.targets.len()), (SHARED, true, 2), "on most targets first");
    assert!(!shared.next_step.check.is_empty(), "one next step");
    assert_eq!((r.escalations[1].rule_id.as_str(), r.escalations[1].recurs), (ONLY_B, false));
    assert_eq!(load_fleet(&store, None).await.unwrap().fleet, "night", "the newest fleet by default");
    assert!(matches!(load_fleet(&store, Some("nosuch")).await, Err(LoadError::NoFleet(Some(_)))));
    assert!(matches!(render_fleet(&r, Format::Ckl), Err(ReportError::FleetChecklist(Format::Ckl))));

    let md = render_fleet(&r, Format::Md).unwrap();
    assert!(md.contains("| lab-a |") && md.contains("40.00 → 55.50") && md.contains("NOT healthy"), "{md}");
    assert!(md.contains("### sshd\\_set\\_keepalive (recurs)") && md.contains("on 2 target(s)"), "{md}");
    assert!(md.contains(&format!("`temper report {a} --format ckl -o lab-a.ckl`")), "each target's checklist");
    assert!(
        md.contains(&format!("`temper report {b} --format ckl -o lab-b_a___b____c___d__dq___sq____pre__script_alert_1___script_")),
        "{md}"
    );
    assert!(!md.contains("<script>"), "escaped in Markdown too");
    let json: serde_json::Value = serde_json::from_str(&render_fleet(&r, Format::Json).unwrap()).unwrap();
    assert_eq!(json["escalations"][0]["targets"][1], nasty.as_str());

    let html = render_fleet(&r, Format::Html).unwrap();
    assert!(!html.contains("<script>alert(1)"), "a target's name is escaped");
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("fleet.html");
    std::fs::write(&page, &html).unwrap();
    std::fs::write(artifacts().join("fleet.html"), &html).unwrap();
    let dom = run(Command::new(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--dump-dom"])
        .arg(format!("--user-data-dir={}", dir.path().join("profile").display()))
        .arg(format!("file://{}", page.display())));
    assert_eq!(dom.matches("<tr class=\"target\"").count(), 2, "one row per target");
    assert!(dom.contains("Escalations across targets") && dom.contains("on 2 targets"));
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && !dom.contains("<script>alert(1)"), "rendered as text");
    assert!(dom.contains("NOT healthy"));
}

/// `temper fleet run --plan-from gold`: gold's row says its plan was handed on, the target that
/// applied it says how its steps ended, and one started when the plan was withheld says why.
#[tokio::test]
async fn a_plan_from_fleet_says_which_target_gave_the_plan_and_what_became_of_it() {
    let (_dir, store) = empty_store().await;
    let gold = target_run(&store, "golden", "gold", &[], true).await;
    let fixes = serde_json::json!([{"n": 1, "rule": FIXED, "fix": {"fix_script": "true", "revert_script": "", "description": ""}}]);
    let applied = serde_json::json!({"kind": "applied", "target": "gold", "run": gold, "dir": "/srv/fleets/golden/plan", "steps": 1});
    let options = serde_json::json!({"fleet": "golden", "plan_from": applied, "plan": {"dir": "/srv/fleets/golden/plan", "from_run": gold, "fixes": fixes}});
    let web = target_run_with(&store, options, "web", &[], true).await;
    let r = load_fleet(&store, Some("golden")).await.unwrap();
    let plans: Vec<Option<&str>> = r.targets.iter().map(|t| t.plan.as_deref()).collect();
    // web's one step: its rule is fixed, by no attempt of the fixture's: not needed.
    assert_eq!(
        plans,
        [
            Some("the plan's source: its proven plan (1 steps) was handed on"),
            Some(&*format!("applied gold's plan (run {gold}): 0 kept, 0 redone, 0 not fixed, 1 not applied"))
        ]
    );
    assert_eq!(r.targets[1].run, web);
    let json: serde_json::Value = serde_json::from_str(&render_fleet(&r, Format::Json).unwrap()).unwrap();
    assert_eq!(json["targets"][1]["plan_from"], applied);
    assert_eq!(json["targets"][1]["plan_counts"]["steps"], 1);
    assert!(render_fleet(&r, Format::Md).unwrap().contains("| the plan's source: its proven plan (1 steps) was handed on |"));
    assert!(render_fleet(&r, Format::Html).unwrap().contains("<td class=\"plan\">the plan&#x27;s source"));

    let withheld = serde_json::json!({"kind": "withheld", "target": "gold2", "run": null, "why": {"kind": "no_run", "exit_code": 1}});
    target_run_with(&store, serde_json::json!({"fleet": "lost", "plan_from": withheld}), "db", &[], true).await;
    let r = load_fleet(&store, Some("lost")).await.unwrap();
    assert_eq!(r.targets[0].plan.as_deref(), Some("full loop: gold2's plan was not handed on, its run was never recorded (exit code 1)"));
}
