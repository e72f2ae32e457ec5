//! The guest cross-examined, in-process: the run's end judges the final state's disk from
//! outside the guest (a judgement the real judge made of the test VM's baseline image, replayed)
//! and holds the guest's final scan against it. The VM test (`e2e_lying_guest.rs`) proves the
//! real thing; these prove the loop's logic: the exit code, the journal, the reports.
mod sim;

use std::sync::Arc;

use sim::*;
use temper_core::ports::Hypervisor;
use temper_journal::offline::{CrossExam, JudgeFailure, LiveNeed, OfflineVerdict};
use temper_journal::{EventKind, ScanResult};

/// Rules the sim's stock fixes pass in the guest, which the baseline's disk fails.
const FIXED_IN_THE_GUEST: [&str; 2] = ["sshd_set_keepalive", "file_permissions_systemmap"];

#[tokio::test]
async fn a_rule_the_guest_passes_and_its_disk_fails_is_a_finding_and_the_run_exits_3() {
    let mut sim = Sim::new("cross-lies").await;
    let judge = Arc::new(RecordedJudge::baseline());
    sim.offline = Some(judge.clone());
    sim.settings.rules = FIXED_IN_THE_GUEST.map(String::from).to_vec();
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();

    // The guest's final scan passes both; the disk (the baseline's) fails both.
    for r in FIXED_IN_THE_GUEST {
        assert_eq!(sim.rule(run, r).await.final_result, Some(ScanResult::Pass), "{r}");
    }
    assert_eq!(summary.exit_code, 3, "the guest's scan disagrees with its disk: {summary:?}");
    let Some(CrossExam::Done(x)) = &summary.cross_examination else { panic!("{:?}", summary.cross_examination) };
    let mut lies: Vec<&str> = x.lies.iter().map(|d| temper_scap::short_rule_id(&d.rule)).collect();
    lies.sort();
    assert_eq!(lies, ["file_permissions_systemmap", "sshd_set_keepalive"]);
    assert!(x.lies.iter().all(|d| d.live == ScanResult::Pass && d.offline == ScanResult::Fail));
    assert!(x.lies.iter().all(|d| d.evidence.is_some()), "each finding carries what the disk shows");
    assert!(x.live_judged > 30 && x.both > 25, "{x:?}");

    // The judge read a snapshot of the flushed guest, the run's own, dropped after.
    let asked = judge.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].starts_with("temper-r") && asked[0].ends_with("disk"), "{asked:?}");
    let left = sim.hv.snapshot_list().await.unwrap();
    assert!(!left.contains(&asked[0]), "the snapshot judged is dropped: {left:?}");

    // The journal: the event, and each rule's verdict with its last live result.
    let events = sim.events(run, EventKind::CrossExamined).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["outcome"], "done");
    let sysctl = sim.rule(run, "sysctl_fs_protected_symlinks").await;
    assert_eq!(
        sysctl.offline_verdict,
        Some(OfflineVerdict::LiveOnly { needs: vec![LiveNeed::Sysctl], live: Some(ScanResult::Pass) }),
        "a rule only the running system decides keeps its last live result"
    );
    assert!(matches!(
        sim.rule(run, "sshd_set_keepalive").await.offline_verdict,
        Some(OfflineVerdict::Offline { result: ScanResult::Fail, .. })
    ));

    // The reports: the finding at the top.
    let md = sim.report(run).await;
    let finding = md.find("## FINDING: the guest's scan disagrees with its disk (2)").unwrap_or_else(|| panic!("{md}"));
    assert!(finding < md.find("## Summary").unwrap(), "the finding comes before the summary");
    assert!(md[finding..md.find("## Summary").unwrap()].contains("`sshd_set_keepalive`"));
    assert!(md.contains("### What the disk shows: "), "{md}");
    let data = temper_report::load(sim.store.as_ref(), run).await.unwrap();
    let html = temper_report::render(&data, None, temper_report::Format::Html).unwrap();
    let at = html.find("id=\"finding\"").expect("the HTML finding");
    assert!(at < html.find("id=\"summary\"").unwrap());
    assert_eq!(html.matches("<tr class=\"lie\">").count(), 2);
    let json: serde_json::Value = serde_json::from_str(&temper_report::render(&data, None, temper_report::Format::Json).unwrap()).unwrap();
    assert_eq!(json["cross_examination"]["lies"].as_array().unwrap().len(), 2);
    assert_eq!(json["cross_examination"]["outcome"], "done");
}

#[tokio::test]
async fn a_guest_whose_disk_agrees_ends_as_its_scan_says() {
    let mut sim = Sim::new("cross-agree").await;
    sim.offline = Some(Arc::new(RecordedJudge::baseline()));
    // No stock fix: escalated, failing in the guest and on the disk alike.
    sim.settings.rules = vec!["service_cron_enabled".into()];
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();
    assert_eq!(summary.exit_code, 2, "an escalated rule; no finding: {summary:?}");
    let Some(CrossExam::Done(x)) = &summary.cross_examination else { panic!("{:?}", summary.cross_examination) };
    assert!(x.lies.is_empty() && x.differ.is_empty(), "{x:?}");
    assert_eq!(x.agree, x.both);
    let md = sim.report(run).await;
    assert!(!md.contains("FINDING"), "{md}");
    assert!(md.contains("The guest's scan and its disk agree on every rule both judged."), "{md}");
}

#[tokio::test]
async fn a_disk_the_host_cannot_judge_leaves_the_verdict_to_the_guests_scan() {
    let mut sim = Sim::new("cross-broken").await;
    sim.offline = Some(Arc::new(RecordedJudge::failing(JudgeFailure::Host)));
    sim.settings.rules = FIXED_IN_THE_GUEST.map(String::from).to_vec();
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();
    assert_eq!(summary.exit_code, 0, "both fixed, as the guest's scan says: {summary:?}");
    assert!(matches!(
        &summary.cross_examination,
        Some(CrossExam::Failed { reason, cause: JudgeFailure::Host }) if reason.contains("qemu-img")
    ));
    assert!(sim.rules(run).await.iter().all(|r| r.offline_verdict.is_none()));
    let md = sim.report(run).await;
    assert!(md.contains("could not be judged from outside the guest"), "{md}");
    let left = sim.hv.snapshot_list().await.unwrap();
    assert!(!left.iter().any(|s| s.ends_with("disk")), "the snapshot is dropped on failure too: {left:?}");
}

#[tokio::test]
async fn a_disk_that_does_not_read_is_a_finding() {
    let mut sim = Sim::new("cross-spoiled").await;
    sim.offline = Some(Arc::new(RecordedJudge::failing(JudgeFailure::Disk)));
    sim.settings.rules = FIXED_IN_THE_GUEST.map(String::from).to_vec();
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();
    assert_eq!(summary.exit_code, 3, "a guest that spoils its disk does not escape the check: {summary:?}");
    assert!(matches!(&summary.cross_examination, Some(CrossExam::Failed { cause: JudgeFailure::Disk, .. })));
    let md = sim.report(run).await;
    let finding = md.find("## FINDING: the guest's disk does not read from outside").unwrap_or_else(|| panic!("{md}"));
    assert!(finding < md.find("## Summary").unwrap());
}
