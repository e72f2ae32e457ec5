//! The reboot proof in-process: a fix undone at boot (`not_persistent`), one that stops the
//! guest booting (`breaks_boot`, found by bisection), one that leaves it unhealthy after a
//! reboot, and one that breaks a passing rule at boot. No VM: see `sim/`; the guest models
//! what runs at boot.
mod sim;

use std::time::Instant;

use serde_json::json;
use sim::*;
use temper_journal::Verdict;
use temper_journal::{EventKind, Recall, RuleStatus};
use temper_mockllm::{MockLlm, Scripted};
use temper_scap::Outcome;

const SYSMAP: &str = "file_permissions_systemmap";
/// Three rules the stock agent fixes; the scenarios make one of them misbehave at boot.
const THREE: [&str; 3] = ["sshd_set_keepalive", "package_cron_installed", "sysctl_kernel_randomize_va_space"];
/// A rule that passes at the baseline.
const PASSING: &str = "file_permissions_etc_shadow";

fn fix(body: &str) -> Scripted {
    Scripted::tool_call("apply_fix", json!({"fix_script": body, "revert_script": "true\n", "description": "System.map mode 0600"}))
}

/// The Architect picks `r` and the Worker's `first` fix is kept, then blamed; the Reflector
/// learns `lesson`; the second pick's fix (chmod alone) is kept.
fn blamed_then_kept(r: &str, (plan, first): (&str, &str), lesson: &str, second_plan: &str) -> Vec<Scripted> {
    vec![
        Scripted::tool_call("select_rule", json!({"rule_id": r, "plan": plan})),
        fix(first),
        Scripted::tool_call(
            "reflect",
            json!({"lesson": lesson, "banned": null, "preferred": "chmod only", "distilled": lesson, "tips": []}),
        ),
        Scripted::tool_call("select_rule", json!({"rule_id": r, "plan": second_plan})),
        fix(&format!("# sim pass {r}\nchmod 0600 /boot/System.map-*\n")),
    ]
}

/// A fix passes its live rescan, but a unit puts the old mode back at boot. The reboot proof
/// finds the rule failing, blames the fix (`not_persistent`), the Reflector hears why, and the
/// next attempt, without the unit, is kept and survives the next reboot.
#[tokio::test]
async fn a_fix_undone_at_boot_is_not_persistent_and_the_next_one_is_kept() {
    let t = Instant::now();
    let mut sim = Sim::new("not-persistent").await;
    sim.settings.rules = vec![SYSMAP.into()];
    let r = full(SYSMAP);
    let lesson = "a oneshot unit restored the old mode at boot";
    let first = format!("# sim pass {r}\n# sim at-boot fail {r}\nchmod 0600 /boot/System.map-*\n");
    let llm = MockLlm::start(blamed_then_kept(&r, ("chmod 0600", &first), lesson, "chmod 0600, nothing at boot")).await.unwrap();
    let run = sim.new_run("llm").await;
    let summary = sim.llm(run, &llm.url()).await.unwrap();

    let attempts = sim.attempts(run, SYSMAP).await;
    let verdicts: Vec<_> = attempts.iter().map(|a| a.verdict).collect();
    assert_eq!(verdicts, [Some(Verdict::NotPersistent), Some(Verdict::Fixed)], "{summary:?}");
    assert!(attempts[0].verdict_reason.as_deref().unwrap().contains("after a cold reboot"), "{:?}", attempts[0].verdict_reason);
    assert_eq!(sim.rule(run, SYSMAP).await.status, RuleStatus::Fixed);
    assert_eq!(summary.rebooted, Some(true), "the final scan was taken after a reboot");
    assert_eq!(sim.guest.result(SYSMAP), Some(Outcome::Pass));
    assert!(sim.guest.boots_healthy());
    assert_eq!(sim.guest.reboots(), 2, "one proof per end of the loop; nothing to replay after the blame");
    let blamed = sim.events(run, EventKind::RebootBlamed).await;
    assert_eq!(blamed.len(), 1);
    assert_eq!(blamed[0]["verdict"], "not_persistent");
    let booted = sim.events(run, EventKind::Booted).await;
    assert_eq!(booted.len(), 1, "only the state with the second fix was proven");
    assert_eq!(booted[0]["through"], attempts[1].id.get());
    assert_eq!(sim.store.run(run).await.unwrap().checkpoint, booted[0]["snapshot"].as_str().unwrap());
    let lessons = sim.store.lessons(Recall::all().rule(&r)).await.unwrap();
    assert!(lessons.iter().any(|l| l.distilled == lesson), "the Reflector was asked about the blamed fix");
    assert_eq!(llm.remaining(), 0, "every scripted reply was asked for");
    took("a_fix_undone_at_boot_is_not_persistent_and_the_next_one_is_kept", t);
}

/// Three stock fixes pass every live check; one of them stops the guest booting. The proof's
/// reboot does not come up; bisection over replays from the baseline blames that fix, and the
/// other two, replayed and rebooted, are the booted checkpoint the run ends on.
#[tokio::test]
async fn a_fix_that_breaks_boot_is_found_by_bisection_and_the_rest_are_kept() {
    let mut replayed = 0;
    for bad in THREE {
        let t = Instant::now();
        let mut sim = Sim::new(&format!("breaks-boot-{bad}")).await;
        sim.settings.rules = THREE.map(String::from).to_vec();
        sim.guest.stock_fix(&stock_fix(bad), vec![Effect::Pass(full(bad)), Effect::NoBoot]);
        let run = sim.new_run("stock").await;
        let summary = sim.stock(run).await.unwrap();

        let attempts = sim.attempts(run, bad).await;
        assert!(!attempts.is_empty() && attempts.iter().all(|a| a.verdict == Some(Verdict::BreaksBoot)), "{bad}: {attempts:?}");
        assert_ne!(sim.rule(run, bad).await.status, RuleStatus::Fixed, "{bad}");
        assert_eq!(sim.guest.result(bad), Some(Outcome::Fail), "{bad}: its fix is not in the final state");
        for good in THREE.iter().filter(|r| **r != bad) {
            assert_eq!(sim.rule(run, good).await.status, RuleStatus::Fixed, "{good} (bad: {bad})");
            assert_eq!(sim.guest.result(good), Some(Outcome::Pass), "{good} (bad: {bad})");
        }
        assert!(sim.guest.boots_healthy(), "{bad}: the final state boots");
        assert_eq!(summary.rebooted, Some(true), "{bad}");
        let reboots = sim.events(run, EventKind::Reboot).await;
        assert!(reboots.iter().any(|r| r["up"] == false), "{bad}: a reboot that did not come up is recorded");
        assert_eq!(reboots.last().unwrap()["up"], true, "{bad}");
        // The report says what rolled the fix back: the reboot proof, not a regression check.
        let data = temper_report::load(sim.store.as_ref(), run).await.unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&temper_report::render(&data, Some(content()), temper_report::Format::Json).unwrap()).unwrap();
        let section = json["escalated"].as_array().unwrap().iter().find(|e| e["info"]["rule_id"] == full(bad)).expect("escalated");
        let reverted = section["attempts"][0]["reverted"].as_str().unwrap();
        assert!(reverted.contains("rolled back by the reboot proof") && !reverted.contains("regression check"), "{bad}: {reverted}");
        // The probes' and the rebuild's replays are a named part of the rest of the run's time.
        let replays = sim.events(run, EventKind::Replay).await.len();
        let split = data.split.as_ref().expect("the run ended: its time split");
        let named = split.rest.iter().find(|s| s.part == temper_journal::Overhead::Replays).unwrap();
        assert_eq!(named.count, replays, "{bad}: {replays} replay events, the split counts {named:?}");
        replayed += replays;
        took(&format!("a_fix_that_breaks_boot_is_found_by_bisection_and_the_rest_are_kept ({bad})"), t);
    }
    assert!(replayed > 0, "a probe or the rebuild replayed some fix in one case at least");
}

/// A fix leaves the mission service up but not enabled: healthy live, unhealthy after a reboot.
/// That fix is blamed (`health_broken`), and the run ends healthy.
#[tokio::test]
async fn a_fix_that_leaves_the_guest_unhealthy_after_a_reboot_is_blamed() {
    let t = Instant::now();
    let bad = THREE[1];
    let mut sim = Sim::new("health-after-reboot").await;
    sim.settings.rules = THREE.map(String::from).to_vec();
    sim.guest.stock_fix(&stock_fix(bad), vec![Effect::Pass(full(bad)), Effect::AtBoot(Box::new(Effect::Unhealthy))]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();
    let attempts = sim.attempts(run, bad).await;
    assert_eq!(attempts[0].verdict, Some(Verdict::HealthBroken), "{attempts:?}");
    assert!(attempts[0].verdict_reason.as_deref().unwrap().contains("after the reboot"));
    assert_eq!(summary.healthy, Some(true));
    assert!(sim.guest.boots_healthy());
    assert_eq!(sim.with_status(run, RuleStatus::Fixed).await.len(), 2);
    took("a_fix_that_leaves_the_guest_unhealthy_after_a_reboot_is_blamed", t);
}

/// A fix writes and enables a unit that fails at boot (SSG's `aidecheck.service` on Debian calls
/// `/usr/sbin/aide`, which is not there): healthy live and after the reboot, its rule passing,
/// but the unit is failed after the cold reboot and was not before it. The fix that names the
/// unit is blamed (`health_broken`), and the next one, without the unit, is kept.
#[tokio::test]
async fn a_fix_whose_unit_fails_after_the_reboot_is_blamed_and_the_next_one_is_kept() {
    let t = Instant::now();
    let mut sim = Sim::new("unit-fails-at-boot").await;
    sim.settings.rules = vec![SYSMAP.into()];
    let r = full(SYSMAP);
    let lesson = "the unit the fix enabled fails at every boot";
    let unit_fix = format!("# sim pass {r}\n# sim unit-fails-at-boot aidecheck.service\nsystemctl enable aidecheck.service\n");
    let llm = MockLlm::start(blamed_then_kept(&r, ("chmod, and a check unit", &unit_fix), lesson, "chmod only")).await.unwrap();
    let run = sim.new_run("llm").await;
    let summary = sim.llm(run, &llm.url()).await.unwrap();

    let attempts = sim.attempts(run, SYSMAP).await;
    let verdicts: Vec<_> = attempts.iter().map(|a| a.verdict).collect();
    assert_eq!(verdicts, [Some(Verdict::HealthBroken), Some(Verdict::Fixed)], "{summary:?}");
    let why = attempts[0].verdict_reason.as_deref().unwrap();
    assert!(why.contains("aidecheck.service failed after the cold reboot, and had not before it"), "{why}");
    assert_eq!(sim.rule(run, SYSMAP).await.status, RuleStatus::Fixed);
    assert_eq!(summary.rebooted, Some(true));
    assert!(sim.guest.units_failing_at_boot().is_empty(), "the blamed fix was rolled back with its unit");
    took("a_fix_whose_unit_fails_after_the_reboot_is_blamed_and_the_next_one_is_kept", t);
}

/// Three stock fixes, each kept as a checkpoint; one of them enables a unit that fails at boot.
/// The rebuild without it restores the checkpoint the run moved past just before it (a stepping
/// stone) and replays only the fixes kept after it, not every fix from the baseline; at the end
/// no stone is left among the snapshots.
#[tokio::test]
async fn a_rebuild_starts_from_the_last_checkpoint_before_the_blamed_fix() {
    let mut from_a_stone = 0;
    for bad in [THREE[1], THREE[0]] {
        let t = Instant::now();
        let unit = "cron";
        let mut sim = Sim::new(&format!("stones-{bad}")).await;
        sim.settings.rules = THREE.map(String::from).to_vec();
        // The unit is named by the stock fix of `bad` (cron's `apt-get install -y "cron"`);
        // sshd's fix does not name it, so for that one the sim says it with its own unit.
        let named = if bad == THREE[1] { unit.to_string() } else { "sshd_config".to_string() };
        assert!(temper_core::units::named_in(&stock_fix(bad), &named), "{bad}'s stock fix names {named}");
        sim.guest.stock_fix(&stock_fix(bad), vec![Effect::Pass(full(bad)), Effect::UnitFailsAtBoot(named.clone())]);
        let run = sim.new_run("stock").await;
        let summary = sim.stock(run).await.unwrap();

        let kept: Vec<_> = sim.store.attempts(run).await.unwrap().into_iter().filter(|a| a.snapshot.is_some()).collect();
        let at = kept.iter().position(|a| a.spec.rule_id == full(bad)).expect("the blamed fix was kept first");
        assert_eq!(kept[at].verdict, Some(Verdict::HealthBroken), "{bad}: {:?}", kept[at]);
        let after = kept[at + 1..].iter().filter(|a| a.in_force()).count();
        let replays = sim.events(run, EventKind::Replay).await;
        assert_eq!(replays.len(), after, "{bad}: only the {after} fix(es) kept after the blamed one are replayed: {replays:?}");
        if at > 0 {
            from_a_stone += 1;
            let onto: Vec<&str> = replays.iter().filter_map(|r| r["onto"].as_str()).collect();
            assert!(onto.iter().all(|o| *o != "baseline"), "{bad}: replayed onto a stone, not the baseline: {onto:?}");
        }
        assert!(sim.guest.units_failing_at_boot().is_empty(), "{bad}: the blamed fix is not in the rebuilt state");
        for good in sim.settings.rules.iter().filter(|r| **r != bad) {
            assert_eq!(sim.guest.result(good), Some(Outcome::Pass), "{good} (bad: {bad})");
        }
        assert_eq!(summary.rebooted, Some(true), "{bad}");
        let left = sim.snapshots_left(run).await;
        assert!(left.is_empty(), "{bad}: no stone is left: {left:?}");
        took(&format!("a_rebuild_starts_from_the_last_checkpoint_before_the_blamed_fix ({bad})"), t);
    }
    assert!(from_a_stone > 0, "in one case at least, the blamed fix was not the first kept");
}

/// A fix breaks a rule that passed at the baseline, but only at boot: no fix of that rule's own
/// is to blame, so the fixes are bisected with that rule rescanned after each probe's reboot.
#[tokio::test]
async fn a_passing_rule_broken_at_boot_is_bisected_to_the_fix_that_breaks_it() {
    let t = Instant::now();
    let bad = THREE[2];
    let mut sim = Sim::new("regression-at-boot").await;
    sim.settings.rules = THREE.map(String::from).to_vec();
    sim.guest.stock_fix(&stock_fix(bad), vec![Effect::Pass(full(bad)), Effect::AtBoot(Box::new(Effect::Fail(full(PASSING))))]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();
    let attempts = sim.attempts(run, bad).await;
    assert_eq!(attempts[0].verdict, Some(Verdict::Regression), "{attempts:?}");
    assert!(attempts[0].verdict_reason.as_deref().unwrap().contains(PASSING));
    assert_eq!(sim.guest.result(PASSING), Some(Outcome::Pass), "the passing rule passes at the end");
    assert!(summary.failing_after.iter().all(|r| !r.contains(PASSING)), "{summary:?}");
    took("a_passing_rule_broken_at_boot_is_bisected_to_the_fix_that_breaks_it", t);
}

/// A stock fix the content marks `reboot` leaves its rule failing live: kept for the proof, not
/// reverted, and with the other kept fixes proven by one reboot, after which its rule passes.
#[tokio::test]
async fn a_fix_that_needs_a_reboot_is_kept_and_proven_by_the_runs_one_reboot() {
    let x = THREE[2];
    assert!(content().rule(&full(x)).and_then(|r| r.fix.as_ref()).is_some_and(|f| f.reboot), "the content marks {x}'s fix reboot");
    let mut sim = Sim::new("needs-reboot").await;
    sim.settings.rules = THREE.map(String::from).to_vec();
    sim.guest.stock_fix(&stock_fix(x), vec![Effect::AtBoot(Box::new(Effect::Pass(full(x))))]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();
    let a = sim.attempts(run, x).await;
    assert_eq!(a.len(), 1, "kept at once, never reverted: {a:?}");
    assert_eq!(a[0].verdict, Some(Verdict::Fixed), "{a:?}");
    let reason = a[0].verdict_reason.as_deref().unwrap();
    assert!(reason.contains("kept for the run's reboot proof") && reason.contains("passes after the reboot proof"), "{reason}");
    assert!(a[0].revert_method.is_none_or(|m| m.as_str() == "none"), "never reverted: {:?}", a[0].revert_method);
    assert_eq!(sim.with_status(run, RuleStatus::Fixed).await.len(), 3, "{summary:?}");
    assert_eq!(sim.guest.reboots(), 1, "one reboot proves the batch");
    assert_eq!(sim.guest.result(x), Some(Outcome::Pass));
    assert_eq!(summary.rebooted, Some(true));
}

/// The same fix, when even the reboot leaves its rule failing: blamed (`still_failing`), rolled
/// back, and the run ends on the other two fixes, rebooted.
#[tokio::test]
async fn a_fix_that_needs_a_reboot_and_still_fails_after_it_is_rolled_back() {
    let x = THREE[2];
    let mut sim = Sim::new("needs-reboot-fails").await;
    sim.settings.rules = THREE.map(String::from).to_vec();
    sim.guest.stock_fix(&stock_fix(x), vec![]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();
    let a = sim.attempts(run, x).await;
    assert_eq!(a[0].verdict, Some(Verdict::StillFailing), "{a:?}");
    assert!(a[0].verdict_reason.as_deref().unwrap().contains("still fails after the reboot proof"), "{a:?}");
    assert_ne!(sim.rule(run, x).await.status, RuleStatus::Fixed);
    assert_eq!(sim.with_status(run, RuleStatus::Fixed).await.len(), 2, "{summary:?}");
    assert_eq!(sim.guest.result(x), Some(Outcome::Fail));
    assert!(sim.guest.boots_healthy());
    assert_eq!(summary.rebooted, Some(true));
}

/// Killed while the proof replays a fix (a bisection probe), then resumed: the run ends on the
/// good fixes, rebooted, with the one that breaks boot blamed once, nothing lost or doubled.
#[tokio::test]
async fn a_run_killed_during_the_proof_resumes_and_ends_the_same() {
    let (good, bad) = (THREE[0], THREE[1]);
    let mut sim = Sim::new("proof-killed").await;
    sim.settings.rules = vec![good.into(), bad.into()];
    sim.guest.stock_fix(&stock_fix(bad), vec![Effect::Pass(full(bad)), Effect::NoBoot]);
    let run = sim.new_run("stock").await;
    // The good fix's first run is its attempt; the second, a replay in the proof.
    sim.kill_during_nth(run, &stock_fix(good), 2).await;
    assert!(sim.events(run, EventKind::Reboot).await.iter().any(|r| r["up"] == false), "killed inside the proof");
    let summary = sim.stock(run).await.unwrap();
    assert_eq!(sim.rule(run, good).await.status, RuleStatus::Fixed, "{summary:?}");
    assert_eq!(sim.guest.result(good), Some(Outcome::Pass));
    assert_eq!(sim.guest.result(bad), Some(Outcome::Fail));
    assert!(sim.guest.boots_healthy());
    assert_eq!(summary.rebooted, Some(true));
    let blamed = sim.events(run, EventKind::RebootBlamed).await;
    assert!(!blamed.is_empty() && blamed.iter().all(|b| b["verdict"] == "breaks_boot"), "{blamed:?}");
}

/// Without the proof nothing reboots, and the summary says the final state is not proven.
#[tokio::test]
async fn without_the_proof_nothing_reboots_and_the_summary_says_so() {
    let mut sim = Sim::new("no-proof").await;
    sim.settings.rules = THREE.map(String::from).to_vec();
    sim.settings.reboot = None;
    sim.guest.stock_fix(&stock_fix(THREE[0]), vec![Effect::Pass(full(THREE[0])), Effect::NoBoot]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();
    assert_eq!(summary.rebooted, None);
    assert_eq!(sim.guest.reboots(), 0);
    assert_eq!(sim.with_status(run, RuleStatus::Fixed).await.len(), 3, "a fix that breaks boot goes unseen");
    assert!(sim.report(run).await.contains("not proven: the run skipped the reboot proof"));
}

/// A passing rule whose check walks a directory tree is left out of every rescan and checked by
/// the final scan. A fix that breaks it passes its own checks, is found there by bisection and
/// rolled back, and the other fixes stay. With the proof on the probes reboot; off, they replay.
#[tokio::test]
async fn a_tree_walking_rule_is_checked_at_the_final_scan_and_its_breaker_blamed() {
    for proof in [true, false] {
        let t = Instant::now();
        let bad = THREE[1];
        let mut sim = Sim::new(&format!("walker-{proof}")).await;
        sim.settings.rules = THREE.map(String::from).to_vec();
        sim.walkers = vec![full(PASSING)];
        if !proof {
            sim.settings.reboot = None;
        }
        sim.guest.stock_fix(&stock_fix(bad), vec![Effect::Pass(full(bad)), Effect::Fail(full(PASSING))]);
        let run = sim.new_run("stock").await;
        let summary = sim.stock(run).await.unwrap();

        let attempts = sim.attempts(run, bad).await;
        assert_eq!(attempts[0].verdict, Some(Verdict::Regression), "proof {proof}: {attempts:?}");
        let reason = attempts[0].verdict_reason.as_deref().unwrap();
        assert!(reason.contains("fail at the final scan") && reason.contains(PASSING), "{reason}");
        assert_eq!(sim.guest.result(PASSING), Some(Outcome::Pass), "proof {proof}: the walker passes at the end");
        for good in THREE.iter().filter(|r| **r != bad) {
            assert_eq!(sim.rule(run, good).await.status, RuleStatus::Fixed, "proof {proof}: {good}");
            assert_eq!(sim.guest.result(good), Some(Outcome::Pass), "proof {proof}: {good}");
        }
        assert!(summary.failing_after.iter().all(|r| !r.contains(PASSING)), "{summary:?}");
        // No rescan named the walker before the final scan: only the bisection's probes did.
        let scans = sim.guest.scanned();
        let fulls: Vec<usize> = scans.iter().enumerate().filter(|(_, s)| s.is_empty()).map(|(i, _)| i).collect();
        let named: Vec<usize> = scans.iter().enumerate().filter(|(_, s)| s.contains(&full(PASSING))).map(|(i, _)| i).collect();
        assert!(!named.is_empty() && named.iter().all(|&i| i > fulls[1]), "proof {proof}: {scans:?}");
        let kind = if proof { EventKind::RebootBlamed } else { EventKind::RegressionFound };
        assert_eq!(sim.events(run, kind).await.len(), 1, "proof {proof}");
        assert_eq!(sim.guest.reboots() > 0, proof, "proof {proof}: reboots only with the proof");
        assert_eq!(sim.events(run, EventKind::Booted).await.is_empty(), !proof, "proof {proof}");
        took("a_tree_walking_rule_is_checked_at_the_final_scan_and_its_breaker_blamed", t);
    }
}

/// A walker made to pass mid-run (its fix kept) leaves the regression checks for the final scan
/// too. A later fix that breaks it is found there by bisection from the walker's own fix, which
/// stays: not `not_persistent`, and not a fix from before it.
#[tokio::test]
async fn a_walker_fixed_mid_run_is_checked_at_the_final_scan_and_its_breaker_blamed() {
    // In the harness's order: two fixes, the walker's, then the breaker's.
    let (earlier, walker, bad) =
        (["package_cron_installed", "sysctl_fs_suid_dumpable"], "sysctl_kernel_randomize_va_space", "sshd_set_keepalive");
    for proof in [true, false] {
        let t = Instant::now();
        let mut sim = Sim::new(&format!("fixed-walker-{proof}")).await;
        sim.settings.rules = [earlier[0], earlier[1], walker, bad].map(String::from).to_vec();
        sim.walkers = vec![full(walker)];
        if !proof {
            sim.settings.reboot = None;
        }
        sim.guest.stock_fix(&stock_fix(bad), vec![Effect::Pass(full(bad)), Effect::Fail(full(walker))]);
        let run = sim.new_run("stock").await;
        let summary = sim.stock(run).await.unwrap();

        let first = |a: Vec<temper_journal::Attempt>| a[0].clone();
        let (w, b) = (first(sim.attempts(run, walker).await), first(sim.attempts(run, bad).await));
        let before = sim.attempts(run, earlier[0]).await[0].id.max(sim.attempts(run, earlier[1]).await[0].id);
        let order = sim.store.attempts(run).await.unwrap().into_iter().map(|a| a.spec.rule_id).collect::<Vec<_>>();
        assert!(before < w.id && w.id < b.id, "proof {proof}: the walker's fix comes after two others and before the breaker: {order:?}");
        assert_eq!(w.verdict, Some(Verdict::Fixed), "proof {proof}: {w:?}");
        assert_eq!(b.verdict, Some(Verdict::Regression), "proof {proof}: {b:?}");
        assert!(b.verdict_reason.as_deref().unwrap().contains(walker), "{:?}", b.verdict_reason);
        assert_eq!(sim.rule(run, walker).await.status, RuleStatus::Fixed, "proof {proof}");
        assert_eq!(sim.guest.result(walker), Some(Outcome::Pass), "proof {proof}: the walker passes at the end");
        assert!(summary.failing_after.iter().all(|r| !r.contains(walker)), "{summary:?}");
        // Between its own rescan and the final scan no check named the walker.
        let scans = sim.guest.scanned();
        let last_full = scans.iter().enumerate().filter(|(_, s)| s.is_empty()).map(|(i, _)| i).nth(1).unwrap();
        let named = scans[..last_full].iter().filter(|s| s.contains(&full(walker))).count();
        assert_eq!(named, 1, "proof {proof}: {scans:?}");
        took("a_walker_fixed_mid_run_is_checked_at_the_final_scan_and_its_breaker_blamed", t);
    }
}
