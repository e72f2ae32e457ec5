//! kill -9 at every step of a run, in-process (the fault matrix's first row, docs/reliability.md):
//! the loop is dropped where the guest hangs (in preflight's scan, a fix, each rescan, the batch
//! check, the reboot proof, the final scan), as a killed process stops, and a new loop resumes
//! from the store. Each resumed run ends as the uninterrupted one does: the same rules fixed by the
//! same number of kept attempts, none lost or doubled, the store consistent, the guest booting
//! healthy. No VM: see `sim/`; the VM rows are in `faults.rs`, `e2e_resume.rs` and `e2e_batch.rs`.
mod sim;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use sim::*;
use temper_core::ports::Hypervisor;
use temper_journal::RunId;
use temper_journal::Verdict;
use temper_journal::{AttemptState, EventData, Phase, ReplayWhy, Replayed, RuleStatus, RunStatus};

const THREE: [&str; 3] = ["sshd_set_keepalive", "package_cron_installed", "sysctl_kernel_randomize_va_space"];

/// Where the guest hangs.
#[derive(Debug, Clone, Copy)]
enum At {
    Scan(u32),
    Fix,
    Boot,
}

/// How a run ended: its fixed rules, and per rule its kept attempts and its finished ones.
#[derive(Debug, PartialEq, Eq)]
struct FaultEnd {
    fixed: Vec<String>,
    kept: BTreeMap<String, usize>,
}

async fn sim(name: &str) -> Sim {
    let mut sim = Sim::new(name).await;
    sim.settings.rules = THREE.map(String::from).to_vec();
    sim.settings.regression_every = Some(2);
    // It exits 1 and passes: rescanned at once (kept with a warning), where the other two stock
    // fixes' rescans wait for the batch's check; so a kill hits a fix's own rescan too.
    sim.guest.stock_fix(&stock_fix(THREE[0]), vec![Effect::Pass(full(THREE[0])), Effect::Exit(1)]);
    sim
}

async fn end(sim: &Sim, run: RunId) -> FaultEnd {
    let mut kept = BTreeMap::new();
    for r in THREE {
        let a = sim.attempts(run, r).await;
        kept.insert(r.to_string(), a.iter().filter(|a| a.verdict == Some(Verdict::Fixed)).count());
    }
    FaultEnd { fixed: sim.with_status(run, RuleStatus::Fixed).await, kept }
}

/// Kills a run at `at`, resumes it, checks it ends as `want`; the phase the kill hit.
async fn kill_and_resume(at: At, want: &FaultEnd) -> Phase {
    let sim = sim(&format!("{at:?}").to_lowercase().replace(['(', ')'], "")).await;
    let run = sim.new_run("stock").await;
    match at {
        At::Scan(n) => sim.guest.hang_on_scan(n),
        At::Fix => sim.guest.hang_on_nth(&stock_fix(THREE[1]), 1),
        At::Boot => sim.guest.hang_on_boot(),
    }
    sim.kill_when_hung(run, &format!("{at:?}")).await;
    let hit = sim.store.run(run).await.unwrap().phase;
    resumed_whole(&sim, run, want, &format!("killed at {at:?} ({hit})")).await;
    hit
}

/// Resumes a killed run and checks it ends as `want`: finished, every attempt closed once with a
/// verdict (at most one interrupted), the store sound, the guest booting healthy, its end proven
/// by a reboot.
async fn resumed_whole(sim: &Sim, run: RunId, want: &FaultEnd, what: &str) {
    let summary = sim.stock(run).await.unwrap_or_else(|e| panic!("{what}: the resume failed: {e}"));
    assert_eq!(&end(sim, run).await, want, "{what}: {summary:?}");
    assert_eq!(sim.store.run(run).await.unwrap().status, RunStatus::Finished, "{what}");
    assert_eq!(sim.store.integrity_check().await.unwrap(), "ok", "{what}");
    let attempts = sim.store.attempts(run).await.unwrap();
    assert!(attempts.iter().all(|a| a.verdict.is_some() && matches!(a.state, AttemptState::Done | AttemptState::Interrupted)));
    assert!(attempts.iter().filter(|a| a.state == AttemptState::Interrupted).count() <= 1, "{what}: {attempts:?}");
    assert!(sim.guest.boots_healthy(), "{what}: the guest boots healthy");
    assert_eq!(summary.rebooted, Some(true), "{what}: the resumed run proved its end by a reboot");
}

/// The uninterrupted run: its sim, run and end (the three rules fixed).
async fn reference(name: &str) -> (Sim, RunId, FaultEnd) {
    let sim = sim(name).await;
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();
    let want = end(&sim, run).await;
    assert_eq!(want.fixed.len(), 3, "{want:?}");
    (sim, run, want)
}

#[tokio::test]
async fn a_run_killed_at_any_step_resumes_and_ends_as_an_uninterrupted_one() {
    let t = Instant::now();
    let (reference, _, want) = reference("reference").await;
    let scans = reference.guest.scans();

    let mut hit = BTreeSet::new();
    for n in 1..=scans {
        hit.insert(kill_and_resume(At::Scan(n), &want).await);
    }
    hit.insert(kill_and_resume(At::Fix, &want).await);
    hit.insert(kill_and_resume(At::Boot, &want).await);
    let every = [Phase::Preflight, Phase::Fix, Phase::Evaluate, Phase::Regression, Phase::Finish];
    assert!(every.iter().all(|p| hit.contains(p)), "each step was hit: {hit:?} of {scans} scans");
    println!("killed at each of {scans} scans, a fix and a boot: phases hit {hit:?}");
    took("a_run_killed_at_any_step_resumes_and_ends_as_an_uninterrupted_one", t);
}

/// Deletes every snapshot but the baseline, as defining the domain again does; their names.
async fn lose_snapshots(sim: &Sim) -> Vec<String> {
    let mut lost = Vec::new();
    for name in sim.hv.snapshot_list().await.unwrap() {
        if name != "baseline" {
            sim.hv.snapshot_delete(&name).await.unwrap();
            lost.push(name);
        }
    }
    lost
}

/// A run killed, then its snapshots lost but the baseline: the resume rebuilds the kept state
/// by replaying the kept fixes (`ralph/lost.rs`) and ends as the uninterrupted run does. Killed
/// at the second fix (a pending fix's snapshot lost), at the third (the checkpoint after the
/// batch check lost) and in the reboot proof (every fix's).
#[tokio::test]
async fn a_resume_whose_snapshots_are_gone_rebuilds_them_and_ends_as_an_uninterrupted_run() {
    let t = Instant::now();
    let (reference, run, want) = reference("lost-reference").await;
    let order: Vec<String> = reference.store.attempts(run).await.unwrap().into_iter().map(|a| a.spec.rule_id).collect();
    assert_eq!(order.len(), 3, "one kept attempt per rule: {order:?}");

    for (case, at) in [("second-fix", Some(&order[1])), ("third-fix", Some(&order[2])), ("boot", None)] {
        let mut sim = sim(&format!("lost-{case}")).await;
        // Each kept fix with a snapshot of its own, to lose (cheap ones go without by default).
        sim.settings.replay_budget = Duration::ZERO;
        let run = sim.new_run("stock").await;
        match at {
            Some(rule) => sim.guest.hang_on_nth(&stock_fix(rule), 1),
            None => sim.guest.hang_on_boot(),
        }
        sim.kill_when_hung(run, case).await;
        let kept_before = sim.store.attempts(run).await.unwrap().iter().filter(|a| a.in_force()).count();
        let lost = lose_snapshots(&sim).await;
        assert!(!lost.is_empty(), "{case}: the run had snapshots to lose");
        resumed_whole(&sim, run, &want, &format!("{case}, its snapshots gone")).await;
        let events = sim.store.events(run, None).await.unwrap();
        let (missing, from, replayed) = events
            .iter()
            .find_map(|e| match &e.data {
                EventData::CheckpointLost { missing, from, replayed } => Some((missing.clone(), from.clone(), *replayed)),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{case}: no checkpoint_lost event"));
        println!("{case}: lost {missing:?}, rebuilt from {from} with {replayed} fixes replayed");
        assert!(!missing.is_empty() && missing.iter().all(|m| lost.contains(m)), "{case}: {missing:?} of {lost:?}");
        assert_eq!(replayed, kept_before, "{case}: each fix in force at the kill replayed once");
        let replays = events.iter().filter(|e| matches!(e.data, EventData::Replay(_))).count();
        assert_eq!(replays, kept_before, "{case}: no fix replayed twice");
    }
    took("a_resume_whose_snapshots_are_gone_rebuilds_them_and_ends_as_an_uninterrupted_run", t);
}

/// Killed at the second fix, the first pending with no snapshot of its own (its script cheap to
/// run again: `state/kept.rs`). Nothing is lost: the resume restores the checkpoint and replays
/// that fix once onto it, guarded, and ends as the uninterrupted run does.
#[tokio::test]
async fn a_resume_replays_the_pending_fixes_that_have_no_snapshot_and_ends_as_an_uninterrupted_run() {
    let t = Instant::now();
    let (reference, run, want) = reference("nosnap-reference").await;
    let order: Vec<String> = reference.store.attempts(run).await.unwrap().into_iter().map(|a| a.spec.rule_id).collect();
    let sim = sim("nosnap").await;
    let run = sim.new_run("stock").await;
    sim.guest.hang_on_nth(&stock_fix(&order[1]), 1);
    sim.kill_when_hung(run, "second fix").await;
    let pending = sim.store.pending_fixes(run).await.unwrap();
    assert_eq!(pending.len(), 1, "the first fix awaits its check: {pending:?}");
    assert_eq!(pending[0].snapshot, None, "it went without a snapshot: {pending:?}");
    let have = sim.hv.snapshot_list().await.unwrap();
    assert!(have.iter().all(|n| !n.ends_with(&format!("a{}", pending[0].id))), "{have:?}");

    resumed_whole(&sim, run, &want, "killed at the second fix, the first with no snapshot").await;
    let events = sim.store.events(run, None).await.unwrap();
    assert!(!events.iter().any(|e| matches!(e.data, EventData::CheckpointLost { .. })), "nothing was lost");
    let replays: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::Replay(Replayed::Onto { attempt, why, .. }) => Some((*attempt, *why, e.rule_id.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(replays.len(), 1, "the pending fix replayed once: {replays:?}");
    assert_eq!(replays[0].1, ReplayWhy::NoSnapshot, "{replays:?}");
    assert_eq!(replays[0].2.as_deref(), Some(pending[0].spec.rule_id.as_str()), "{replays:?}");
    took("a_resume_replays_the_pending_fixes_that_have_no_snapshot_and_ends_as_an_uninterrupted_run", t);
}
