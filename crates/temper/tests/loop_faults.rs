//! kill -9 at every step of a run, in-process (the fault matrix's first row, docs/reliability.md):
//! the loop is dropped where the guest hangs (in preflight's scan, a fix, each rescan, the batch
//! check, the reboot proof, the final scan), as a killed process stops, and a new loop resumes
//! from the store. Each resumed run ends as the uninterrupted one does: the same rules fixed by the
//! same number of kept attempts, none lost or doubled, the store consistent, the guest booting
//! healthy. No VM: see `sim/`; the VM rows are in `faults.rs`, `e2e_resume.rs` and `e2e_batch.rs`.
mod sim;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use sim::*;
use temper_core::journal::{AttemptState, Phase, RuleStatus, RunStatus};
use temper_core::verdict::Verdict;

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
struct End {
    fixed: Vec<String>,
    kept: BTreeMap<String, usize>,
}

async fn sim(name: &str) -> Sim {
    let mut sim = Sim::new(name).await;
    sim.settings.rules = THREE.map(String::from).to_vec();
    sim.settings.regression_every = Some(2);
    sim
}

async fn end(sim: &Sim, run: i64) -> End {
    let mut kept = BTreeMap::new();
    for r in THREE {
        let a = sim.attempts(run, r).await;
        kept.insert(r.to_string(), a.iter().filter(|a| a.verdict == Some(Verdict::Fixed)).count());
    }
    End { fixed: sim.with_status(run, RuleStatus::Fixed).await, kept }
}

/// Kills a run at `at`, resumes it, checks it ends as `want`; the phase the kill hit.
async fn kill_and_resume(at: At, want: &End) -> Phase {
    let sim = sim(&format!("{at:?}").to_lowercase().replace(['(', ')'], "")).await;
    let run = sim.new_run("stock").await;
    match at {
        At::Scan(n) => sim.guest.hang_on_scan(n),
        At::Fix => sim.guest.hang_on_nth(&stock_fix(THREE[1]), 1),
        At::Boot => sim.guest.hang_on_boot(),
    }
    sim.kill_when_hung(run, &format!("{at:?}")).await;
    let hit = sim.store.run(run).await.unwrap().phase;
    let summary = sim.stock(run).await.unwrap_or_else(|e| panic!("resume after a kill at {at:?} ({hit}): {e}"));

    assert_eq!(&end(&sim, run).await, want, "killed at {at:?} ({hit}): {summary:?}");
    assert_eq!(sim.store.run(run).await.unwrap().status, RunStatus::Finished);
    assert_eq!(sim.store.integrity_check().await.unwrap(), "ok");
    let attempts = sim.store.attempts(run).await.unwrap();
    assert!(attempts.iter().all(|a| a.verdict.is_some() && matches!(a.state, AttemptState::Done | AttemptState::Interrupted)));
    assert!(attempts.iter().filter(|a| a.state == AttemptState::Interrupted).count() <= 1, "{attempts:?}");
    assert!(sim.guest.boots_healthy(), "killed at {at:?}: the guest boots healthy");
    assert_eq!(summary.rebooted, Some(true), "the resumed run proved its end by a reboot");
    hit
}

#[tokio::test]
async fn a_run_killed_at_any_step_resumes_and_ends_as_an_uninterrupted_one() {
    let t = Instant::now();
    let reference = sim("reference").await;
    let run = reference.new_run("stock").await;
    reference.stock(run).await.unwrap();
    let want = end(&reference, run).await;
    assert_eq!(want.fixed.len(), 3, "{want:?}");
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
