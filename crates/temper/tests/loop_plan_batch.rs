//! A proven plan applied in batches, in-process (no VM: see `sim/`). A clean batch is checked by
//! one rescan and kept with one snapshot. A batch with a failing step (its own rule, a regression,
//! the health check) is bisected to that step, whose rule goes to the normal loop, while the other
//! steps are applied again in the next batch. kill -9 in the middle of a batch or of its
//! bisection, then resume: nothing lost, nothing kept twice, the same end.
mod sim;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use serde_json::json;
use sim::*;
use temper_core::ralph::PlanBatches;
use temper_journal::RunId;
use temper_journal::Verdict;
use temper_journal::plan::PlannedFix;
use temper_journal::turn::ApplyFix;
use temper_journal::{AttemptState, EventKind, FixSource, RuleStatus, RunStatus};

/// Four rules that fail at the baseline, each with a stock fix in the content.
const RULES: [&str; 4] =
    ["sysctl_fs_suid_dumpable", "sshd_set_keepalive", "file_permissions_systemmap", "sysctl_kernel_randomize_va_space"];
/// A rule that passes at the baseline: in the regression set.
const PASSING: &str = "sysctl_fs_protected_hardlinks";

/// Plan step `n` (1-based) fixes `RULES[n - 1]`; `more` adds `# sim` effects on this guest.
fn step(n: usize, more: &str) -> PlannedFix {
    let rule = RULES[n - 1];
    let fix_script = format!("echo plan step {n}\n# sim pass {rule}\n{more}");
    let fix = ApplyFix { fix_script, revert_script: "true\n".into(), description: format!("step {n}") };
    PlannedFix { n, rule: full(rule), fix, accepted_exits: vec![0], needs_reboot: false, derived: false }
}

/// The four steps, with `more[i]` added to step i + 1.
fn steps(more: [&str; 4]) -> Vec<PlannedFix> {
    (1..=4).map(|n| step(n, more[n - 1])).collect()
}

async fn planned(name: &str, plan: Vec<PlannedFix>) -> Sim {
    let mut sim = Sim::new(name).await;
    sim.settings.rules = RULES.map(String::from).to_vec();
    sim.settings.plan = plan;
    sim
}

type SeenSteps = Vec<(String, FixSource, Verdict)>;

/// Each attempt in order: its rule (short), source and verdict.
async fn seen(sim: &Sim, run: RunId) -> SeenSteps {
    let attempts = sim.store.attempts(run).await.unwrap();
    attempts.into_iter().map(|a| (temper_scap::short_rule_id(&a.spec.rule_id).to_string(), a.spec.source, a.verdict.unwrap())).collect()
}

fn want(rows: &[(usize, FixSource, Verdict)]) -> SeenSteps {
    rows.iter().map(|(i, s, v)| (RULES[*i].to_string(), *s, *v)).collect()
}

/// Checks what every finished plan run must show: every rule fixed by exactly one kept attempt,
/// every attempt closed, none counted twice, the store consistent, the guest booting healthy.
async fn ends_well(sim: &Sim, run: RunId) {
    assert_eq!(sim.store.run(run).await.unwrap().status, RunStatus::Finished);
    assert_eq!(sim.store.integrity_check().await.unwrap(), "ok");
    let attempts = sim.store.attempts(run).await.unwrap();
    for r in RULES {
        assert_eq!(sim.rule(run, r).await.status, RuleStatus::Fixed, "{r}");
        let mine: Vec<_> = attempts.iter().filter(|a| a.spec.rule_id == full(r)).collect();
        assert_eq!(mine.iter().filter(|a| a.verdict == Some(Verdict::Fixed)).count(), 1, "{r}: one kept fix: {mine:?}");
        let counted = mine.iter().filter(|a| a.state != AttemptState::Interrupted).count() as i64;
        assert_eq!(sim.rule(run, r).await.attempts, counted, "{r}: set-aside attempts are not tries");
        assert_eq!(sim.guest.result(r), Some(temper_scap::Outcome::Pass), "{r}");
    }
    assert!(attempts.iter().all(|a| matches!(a.state, AttemptState::Done | AttemptState::Interrupted)), "{attempts:?}");
    assert_eq!(sim.guest.result(PASSING), Some(temper_scap::Outcome::Pass), "the regression set still passes");
    assert!(sim.guest.boots_healthy());
}

/// Steps 2 and 4 take effect at boot (SSG marks its sysctl fixes `reboot="true"`): step 2's rule
/// passes live all the same, step 4's only after a reboot. Both ride in the batch; step 4 is kept
/// for the reboot proof, which then finds its rule passing.
#[tokio::test]
async fn a_clean_plan_batch_is_checked_by_one_rescan_and_kept_with_one_snapshot() {
    let t = Instant::now();
    let mut plan = steps(["", "", "", ""]);
    plan[1].needs_reboot = true;
    plan[3].needs_reboot = true;
    plan[3].fix.fix_script = format!("echo plan step 4\n# sim at-boot pass {}\n", RULES[3]);
    let sim = planned("batch-clean", plan).await;
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();
    assert_eq!(summary.rebooted, Some(true), "{summary:?}");
    let plan = FixSource::Plan;
    assert_eq!(
        seen(&sim, run).await,
        want(&[(0, plan, Verdict::Fixed), (1, plan, Verdict::Fixed), (2, plan, Verdict::Fixed), (3, plan, Verdict::Fixed)])
    );
    ends_well(&sim, run).await;

    let batches = sim.events(run, EventKind::PlanBatch).await;
    assert_eq!(batches.len(), 1, "{batches:?}");
    assert_eq!((&batches[0]["steps"], &batches[0]["failed"]), (&json!([1, 2, 3, 4]), &json!([])));
    // One rescan named the steps' rules, with the regression set: the batch's check.
    let checks: Vec<Vec<String>> = sim.guest.scanned().into_iter().filter(|s| s.contains(&full(RULES[0]))).collect();
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert!(RULES.iter().all(|r| checks[0].contains(&full(r))) && checks[0].contains(&full(PASSING)), "{checks:?}");
    // One snapshot holds the four fixes, and it became the checkpoint.
    let snapshots: BTreeSet<Option<String>> = sim.store.attempts(run).await.unwrap().into_iter().map(|a| a.snapshot).collect();
    assert_eq!(snapshots.len(), 1, "{snapshots:?}");
    let made = sim.events(run, EventKind::Checkpoint).await.into_iter().filter(|c| c["fixes"] == json!(4)).count();
    assert_eq!(made, 1);
    let verdicts: Vec<_> = sim.events(run, EventKind::Verdict).await.into_iter().map(|v| v["verdict"].clone()).collect();
    assert_eq!(verdicts, [json!("fixed"), json!("fixed"), json!("fixed"), json!("needs_reboot")], "step 4 awaited the proof");
    took("a_clean_plan_batch_is_checked_by_one_rescan_and_kept_with_one_snapshot", t);
}

/// Step 2 fails on this guest (its fix changes nothing and exits 3): bisection finds it in two
/// probes; its rule goes to the stock fix; steps 1, 3 and 4 are set aside, then kept together.
#[tokio::test]
async fn a_failing_step_is_bisected_to_and_its_rule_goes_to_the_loop() {
    let t = Instant::now();
    let mut plan = steps(["", "", "", ""]);
    plan[1].fix.fix_script = "echo plan step 2\nexit 3\n# sim exit 3\n".into();
    let sim = planned("batch-bisect", plan).await;
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();
    let (p, s) = (FixSource::Plan, FixSource::Stock);
    let (fixed, aside) = (Verdict::Fixed, Verdict::Interrupted);
    let rows = [
        (0, p, aside),
        (1, p, Verdict::ApplyFailed),
        (2, p, aside),
        (3, p, aside),
        (1, s, fixed),
        (0, p, fixed),
        (2, p, fixed),
        (3, p, fixed),
    ];
    assert_eq!(seen(&sim, run).await, want(&rows));
    ends_well(&sim, run).await;

    let found = sim.events(run, EventKind::PlanBisected).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((&found[0]["step"], &found[0]["probes"], &found[0]["again"]), (&json!(2), &json!(2), &json!([1, 3, 4])));
    assert_eq!(found[0]["verdict"], json!("apply_failed"));
    let batches = sim.events(run, EventKind::PlanBatch).await;
    let failed: Vec<_> = batches.iter().map(|b| b["failed"].clone()).collect();
    assert_eq!(failed, [json!([full(RULES[1])]), json!([])], "{batches:?}");
    let aside = sim.store.attempts(run).await.unwrap().into_iter().find(|a| a.verdict == Some(Verdict::Interrupted)).unwrap();
    assert!(aside.verdict_reason.unwrap().contains("bisection found step 2"), "the reason names the step");
    took("a_failing_step_is_bisected_to_and_its_rule_goes_to_the_loop", t);
}

/// Step 3 breaks a rule of the regression set, and step 4 the health check. Each is found by its
/// batch's bisection with its own verdict, reverted with the checkpoint, and its rule fixed by the
/// stock fix; the others are kept.
#[tokio::test]
async fn a_regression_and_a_broken_health_check_are_each_blamed_on_their_step() {
    let t = Instant::now();
    let sim = planned("batch-blame", steps(["", "", &format!("# sim fail {PASSING}\n"), "# sim unhealthy\n"])).await;
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();
    ends_well(&sim, run).await;
    let found = sim.events(run, EventKind::PlanBisected).await;
    let blamed: Vec<_> = found.iter().map(|f| (f["step"].clone(), f["verdict"].clone())).collect();
    assert_eq!(blamed, [(json!(3), json!("regression")), (json!(4), json!("health_broken"))], "{found:?}");
    assert!(found[0]["reason"].as_str().unwrap().contains(PASSING), "{found:?}");
    let fixed_by: BTreeMap<String, FixSource> = sim
        .store
        .attempts(run)
        .await
        .unwrap()
        .into_iter()
        .filter(|a| a.verdict == Some(Verdict::Fixed))
        .map(|a| (temper_scap::short_rule_id(&a.spec.rule_id).to_string(), a.spec.source))
        .collect();
    let want: BTreeMap<String, FixSource> =
        RULES.iter().enumerate().map(|(i, r)| (r.to_string(), if i >= 2 { FixSource::Stock } else { FixSource::Plan })).collect();
    assert_eq!(fixed_by, want);
    took("a_regression_and_a_broken_health_check_are_each_blamed_on_their_step", t);
}

/// kill -9 while a batch applies its third step, and again while a bisection probe applies the
/// failing step: each resumed run ends as the uninterrupted one does.
#[tokio::test]
async fn a_run_killed_mid_batch_or_mid_bisection_resumes_and_ends_the_same() {
    let t = Instant::now();
    // Mid batch: every step was started; none is kept; the resumed run applies the batch again.
    let plan = steps(["", "", "", ""]);
    let third = plan[2].fix.fix_script.clone();
    let sim = planned("batch-kill", plan).await;
    let run = sim.new_run("stock").await;
    sim.kill_during(run, &third).await;
    assert_eq!(sim.store.run(run).await.unwrap().phase.to_string(), "plan_batch");
    sim.stock(run).await.unwrap();
    ends_well(&sim, run).await;
    let interrupted = sim.store.attempts(run).await.unwrap().into_iter().filter(|a| a.state == AttemptState::Interrupted).count();
    assert_eq!(interrupted, 4, "the killed batch's four attempts, closed on resume");

    // Mid batch with a stone after every step: the resumed run drops the two the kill left.
    let plan = steps(["", "", "", ""]);
    let third = plan[2].fix.fix_script.clone();
    let mut sim = planned("batch-kill-stones", plan).await;
    sim.settings.plan_batches.stone_after = std::time::Duration::ZERO;
    let run = sim.new_run("stock").await;
    sim.kill_during(run, &third).await;
    let left = sim.snapshots_left(run).await;
    let stones: Vec<&String> = left.iter().filter(|s| s.ends_with("-s1") || s.ends_with("-s2")).collect();
    assert_eq!(stones.len(), 2, "the stones after steps 1 and 2, left by the kill: {left:?}");
    sim.stock(run).await.unwrap();
    ends_well(&sim, run).await;
    let left = sim.snapshots_left(run).await;
    assert!(left.is_empty(), "no stone is left: {left:?}");

    // Mid bisection (step 2's second run is the first probe's): the same end as without the kill.
    let mut plan = steps(["", "", "", ""]);
    plan[1].fix.fix_script = "echo plan step 2\nexit 3\n# sim exit 3\n".into();
    let second = plan[1].fix.fix_script.clone();
    let killed = planned("batch-kill-bisect", plan.clone()).await;
    let run = killed.new_run("stock").await;
    killed.kill_during_nth(run, &second, 2).await;
    killed.stock(run).await.unwrap();
    ends_well(&killed, run).await;
    let reference = planned("batch-kill-reference", plan).await;
    let reference_run = reference.new_run("stock").await;
    reference.stock(reference_run).await.unwrap();
    let kept = |rows: SeenSteps| rows.into_iter().filter(|r| r.2 == Verdict::Fixed).collect::<BTreeSet<_>>();
    assert_eq!(kept(seen(&killed, run).await), kept(seen(&reference, reference_run).await));
    took("a_run_killed_mid_batch_or_mid_bisection_resumes_and_ends_the_same", t);
}

/// A plan run takes the cadence its plan's source run ended with instead of measuring one: the
/// preflight's two timed rescans are not made, and the event says where the cadence came from.
#[tokio::test]
async fn a_plan_run_takes_its_source_runs_cadence_instead_of_measuring_one() {
    let t = Instant::now();
    let mut scans = Vec::new();
    for cadence in [None, Some(3)] {
        let mut sim = planned(&format!("batch-cadence-{}", cadence.is_some()), steps(["", "", "", ""])).await;
        sim.settings.plan_cadence = cadence;
        let run = sim.new_run("stock").await;
        sim.stock(run).await.unwrap();
        ends_well(&sim, run).await;
        let every = sim.events(run, EventKind::RegressionEvery).await;
        assert_eq!(every.len(), 1, "{every:?}");
        let how = if cadence.is_some() { "plan" } else { "measured" };
        assert_eq!(every[0]["how"], how, "{every:?}");
        if let Some(n) = cadence {
            assert_eq!((&every[0]["every"], &every[0]["secs"]), (&json!(n), &serde_json::Value::Null), "{every:?}");
            assert_eq!(sim.store.run(run).await.unwrap().regression_every, Some(i64::from(n)));
        }
        scans.push(sim.guest.scans());
    }
    assert_eq!(scans[0], scans[1] + 2, "the measurement's two rescans, and only those, are left out: {scans:?}");
    took("a_plan_run_takes_its_source_runs_cadence_instead_of_measuring_one", t);
}

/// With the OVAL engine a batch's evidence comes from one rescan before its steps run. A tree
/// walker is left out of it (minutes each under TCG, and the batch's check walks it anyway): its
/// step takes the evidence the first full scan took when it walked it in a lane of its own, and
/// the batch is checked and kept as any other.
#[tokio::test]
async fn a_batch_takes_its_evidence_in_one_rescan_that_leaves_its_tree_walkers_out() {
    let t = Instant::now();
    let mut sim = planned("batch-evidence", steps(["", "", "", ""])).await;
    sim.with_oval();
    sim.walkers = vec![full(RULES[2])];
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();
    ends_well(&sim, run).await;
    // Each scan's definitions include their platforms' and extended ones: the steps' rules named.
    let scans = sim.guest.scanned();
    let named = |s: &Vec<String>| RULES.into_iter().filter(|r| s.contains(&full(r))).collect::<Vec<_>>();
    let check = scans.iter().position(|s| named(s).len() == 4 && s.contains(&full(PASSING))).expect("the batch's check");
    let before: Vec<Vec<&str>> = scans[..check].iter().map(named).filter(|n| n.contains(&RULES[0])).collect();
    assert_eq!(before, [[RULES[0], RULES[1], RULES[3]]], "one rescan for the evidence, the walker left out: {scans:?}");
    let walker = sim.attempts(run, RULES[2]).await;
    assert!(walker.len() == 1 && walker[0].spec.evidence_before.as_ref().is_some_and(|e| e.rule == full(RULES[2])), "{walker:?}");
    let walk = scans.iter().position(|s| named(s) == [RULES[2]]);
    assert!(walk.is_some_and(|w| w < check), "walked on its own beside the first full scan, before the check: {scans:?}");
    took("a_batch_takes_its_evidence_in_one_rescan_that_leaves_its_tree_walkers_out", t);
}

/// Two rules not applicable at the baseline, which step 1 of [`six_steps`] makes applicable.
const LATER: [&str; 2] = ["service_ntp_enabled", "service_auditd_enabled"];

/// The four steps (`more` as for [`steps`]), step 1 making [`LATER`]'s rules applicable and
/// failing, and steps 5 and 6 fixing them.
fn six_steps(more: [&str; 4]) -> Vec<PlannedFix> {
    let first = format!("# sim fail {}\n# sim fail {}\n{}", LATER[0], LATER[1], more[0]);
    let mut plan = steps([&first, more[1], more[2], more[3]]);
    for (i, rule) in LATER.into_iter().enumerate() {
        let n = 5 + i;
        let fix_script = format!("echo plan step {n}\n# sim pass {rule}\n");
        let fix = ApplyFix { fix_script, revert_script: "true\n".into(), description: format!("step {n}") };
        plan.push(PlannedFix { n, rule: full(rule), fix, accepted_exits: vec![0], needs_reboot: false, derived: false });
    }
    plan
}

/// A clean batch's check also takes the evidence of the rules the next batch takes: here two rules
/// not applicable at the baseline that step 1 makes applicable (and failing). Their steps go in a
/// second batch, with the evidence the first batch's check took and no rescan of their own.
#[tokio::test]
async fn the_next_batch_takes_its_evidence_from_the_last_batchs_check() {
    let t = Instant::now();
    let mut sim = planned("batch-ahead", six_steps(["", "", "", ""])).await;
    sim.settings.rules.extend(LATER.map(String::from));
    sim.with_oval();
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();
    ends_well(&sim, run).await;
    let batches: Vec<_> = sim.events(run, EventKind::PlanBatch).await.into_iter().map(|b| b["steps"].clone()).collect();
    assert_eq!(batches, [json!([1, 2, 3, 4]), json!([5, 6])]);
    for rule in LATER {
        assert_eq!(sim.rule(run, rule).await.status, RuleStatus::Fixed, "{rule}");
        let mine = sim.attempts(run, rule).await;
        assert!(mine.len() == 1 && mine[0].spec.evidence_before.is_some(), "{rule}: one attempt, with evidence: {mine:?}");
    }
    let looked: Vec<_> = sim.events(run, EventKind::Attempt).await.into_iter().map(|a| a["evidence_looked_ahead"].clone()).collect();
    assert_eq!(looked, [false, false, false, false, true, true].map(|b| json!(b)), "steps 5 and 6 took the check's evidence");
    // Between the two checks no rescan named the later rules: the second batch took no evidence.
    let scans = sim.guest.scanned();
    let check = |from: usize, rule: &str| {
        from + scans[from..].iter().position(|s| s.contains(&full(rule)) && s.contains(&full(PASSING))).expect("a batch's check")
    };
    let first = check(0, RULES[0]);
    let second = check(first + 1, LATER[0]);
    let between: Vec<_> = scans[first + 1..second].iter().filter(|s| LATER.iter().any(|r| s.contains(&full(r)))).collect();
    assert!(between.is_empty(), "no evidence rescan before the second batch: {between:?}");
    took("the_next_batch_takes_its_evidence_from_the_last_batchs_check", t);
}

/// With one scan lane (one oscap at a time) the first and the final full scans are each one whole
/// `oscap xccdf eval`, the tree walkers in it; with two, the walkers run on their own beside it.
#[tokio::test]
async fn with_one_scan_lane_a_full_scan_keeps_its_tree_walkers_in_one_eval() {
    let t = Instant::now();
    for (lanes, split) in [(1, false), (2, true)] {
        let mut sim = planned(&format!("lanes-{lanes}"), steps(["", "", "", ""])).await;
        sim.with_oval();
        sim.walkers = vec![full(PASSING)];
        sim.lanes = lanes;
        let run = sim.new_run("stock").await;
        sim.stock(run).await.unwrap();
        ends_well(&sim, run).await;
        let whole = sim.guest.scanned().iter().filter(|s| s.is_empty()).count();
        let walked = sim.guest.scanned().iter().filter(|s| s.contains(&full(PASSING))).count();
        assert_eq!((whole, walked > 0), (2, split), "{lanes} lane(s): {:?}", sim.guest.scanned());
    }
    took("with_one_scan_lane_a_full_scan_keeps_its_tree_walkers_in_one_eval", t);
}

/// With the one walk on (`scan_walk`), a tree walker that passes at the baseline joins the batch
/// checks: a step that breaks it (here step 2 makes a file world-writable) is blamed at its own
/// batch's check, and its rule goes to the loop. With the walk off the walker is checked at the
/// final scan only, and the same step is found there. The OVAL engine resolves the rules as ANSSI
/// high selects them (`standard` has no walker; sshd_set_keepalive is not in ANSSI high). The
/// walker's result is the modelled machine's: what this shows is the loop's choice of checks (the
/// walk's agreement with oscap is `temper-core`'s `scan_engines` test).
#[tokio::test]
async fn with_the_one_walk_a_step_that_breaks_a_walker_is_blamed_at_its_batch_check() {
    let t = Instant::now();
    for walk in [true, false] {
        walker_breaks(walk, None).await;
    }
    took("with_the_one_walk_a_step_that_breaks_a_walker_is_blamed_at_its_batch_check", t);
}

/// The same where every walk finds a directory it cannot read (a user's FUSE mount, which root
/// may not look at) and `find` exits 1: the walker's object goes to oscap at each check, the
/// run goes on, and the step is still blamed at its own batch's check.
#[tokio::test]
async fn a_walk_that_cannot_read_a_directory_leaves_its_objects_to_oscap_and_the_run_goes_on() {
    let t = Instant::now();
    walker_breaks(true, Some(b"find: '/home/user/fuse': Permission denied\n")).await;
    took("a_walk_that_cannot_read_a_directory_leaves_its_objects_to_oscap_and_the_run_goes_on", t);
}

/// A plan of three steps, the second of which breaks a walker that passes at the baseline, with
/// the walk on or off; `errors`: what `find` says in each walk (exit 1).
async fn walker_breaks(walk: bool, errors: Option<&[u8]>) {
    const WALKER: &str = "file_permissions_unauthorized_world_writable";
    let three = [RULES[0], RULES[2], RULES[3]];
    let plan: Vec<PlannedFix> = three
        .iter()
        .enumerate()
        .map(|(i, rule)| {
            let more = if i == 1 { format!("# sim fail {WALKER}\n") } else { String::new() };
            let fix_script = format!("echo plan step {}\n# sim pass {rule}\n{more}", i + 1);
            let fix = ApplyFix { fix_script, revert_script: "true\n".into(), description: format!("step {}", i + 1) };
            PlannedFix { n: i + 1, rule: full(rule), fix, accepted_exits: vec![0], needs_reboot: false, derived: false }
        })
        .collect();
    let mut sim = Sim::new(&format!("batch-walk-{walk}-{}", errors.is_some())).await;
    sim.settings.rules = three.map(String::from).to_vec();
    sim.settings.plan = plan;
    sim.with_profile(anssi());
    sim.with_oval();
    sim.walk = walk;
    sim.guest.passes(WALKER);
    if let Some(e) = errors {
        sim.guest.walk_errors(e);
    }
    let side = sim.oval.clone().unwrap();
    let scanner = temper_core::scan::Scanner::new("ds", "profile").with_oval(side);
    let mut walked = scanner.clone();
    walked.walk = true;
    let walker = [full(WALKER)];
    assert_eq!((scanner.costly_walkers(&walker).len(), walked.costly_walkers(&walker).len()), (1, 0), "a walker the walk judges");
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();

    let bisected = sim.events(run, EventKind::PlanBisected).await;
    let at_check: Vec<_> = bisected.iter().map(|f| (f["step"].clone(), f["verdict"].clone())).collect();
    let breaker = sim.attempts(run, three[1]).await;
    let planned = breaker.iter().find(|a| a.spec.source == FixSource::Plan && a.verdict == Some(Verdict::Regression));
    let reason = planned.and_then(|a| a.verdict_reason.clone()).unwrap_or_default();
    if walk {
        assert_eq!(at_check, [(json!(2), json!("regression"))], "walk on: {bisected:?}");
        assert!(bisected[0]["reason"].as_str().unwrap().contains(WALKER), "{bisected:?}");
        assert!(!reason.contains("final scan"), "{reason}");
        assert!(sim.events(run, EventKind::RebootBlamed).await.is_empty() && sim.events(run, EventKind::RegressionFound).await.is_empty());
        assert!(sim.guest.walks() > 0, "the checks walked the file system");
        for r in three {
            assert_eq!(sim.rule(run, r).await.status, RuleStatus::Fixed, "{r}");
        }
    } else {
        assert!(at_check.is_empty(), "walk off: no batch check names the walker: {bisected:?}");
        assert!(reason.contains("final scan") && reason.contains(WALKER), "walk off: found at the final scan: {breaker:?}");
        assert_eq!(sim.guest.walks(), 0);
    }
    assert_eq!(sim.guest.result(WALKER), Some(temper_scap::Outcome::Pass), "walk {walk}: the walker passes at the end");
    let fallbacks = sim.events(run, EventKind::WalkFallback).await;
    match errors {
        // Every walk fell short at `/` (the sim's listing), so each check's walker went to oscap.
        Some(_) => {
            assert!(!fallbacks.is_empty(), "the scans named the objects left to oscap");
            for f in &fallbacks {
                let objects = f["objects"].as_array().expect("objects");
                assert!(!objects.is_empty() && objects.iter().all(|o| o["gap"] == "unreadable" && o["at"] == "/home/user/fuse"), "{f}");
            }
            // No walk at all: each object stays in the document oscap evaluates (it walks for
            // them in the same evaluation), so no rule is scanned a second time.
            assert!(fallbacks.iter().all(|f| f["rules"].as_array().is_some_and(|r| r.is_empty())), "{fallbacks:?}");
            let named = |o: &str| {
                fallbacks.iter().all(|f| f["objects"].as_array().unwrap().iter().any(|x| x["object"].as_str().unwrap().contains(o)))
            };
            assert!(named("file_permissions_unauthorized_world_write"), "the walker's object is named in each: {fallbacks:?}");
        }
        None => assert!(fallbacks.is_empty(), "{fallbacks:?}"),
    }
}

/// In two lanes, a lane whose plan feeds a variable from the walk (`audit_rules_privileged_commands`'
/// setuid files) waits for the walk; the other lane's `oscap oval eval` starts beside it, not after.
#[tokio::test]
async fn in_two_lanes_only_the_lane_that_feeds_waits_for_the_walk() {
    const FEEDS: &str = "audit_rules_privileged_commands";
    let t = Instant::now();
    let mut sim = Sim::new("lanes-feed").await;
    sim.with_profile(anssi());
    sim.with_oval();
    sim.guest.walk_takes(std::time::Duration::from_millis(400));
    let mut scanner = temper_core::scan::Scanner::new("ds", "profile").with_oval(sim.oval.clone().unwrap()).with_lanes(2);
    scanner.walk = true;
    let feeds = full(FEEDS);
    let mut rules: Vec<String> = anssi().selected_rules.iter().map(|r| r.id.clone()).filter(|r| *r != feeds).take(60).collect();
    rules.push(feeds.clone());
    let scan = scanner.scan(&sim.guest, &rules).await.unwrap();
    assert!(scan.outcome(&feeds).is_some() && scan.walk.is_some(), "{FEEDS} scanned, and the walk taken: {:?}", scan.walk);
    let lanes: Vec<(Vec<String>, u32)> =
        sim.guest.scanned_after_walks().into_iter().filter(|(s, _)| s.iter().filter(|r| rules.contains(r)).count() >= 10).collect();
    let after = |fed: bool| lanes.iter().filter(|(s, _)| s.contains(&feeds) == fed).map(|(_, w)| *w).collect::<Vec<_>>();
    assert_eq!(after(true), [1], "the lane that feeds started once the walk was done: {lanes:?}");
    assert_eq!(after(false), [0], "the other lane started before the walk was done: {lanes:?}");
    took("in_two_lanes_only_the_lane_that_feeds_waits_for_the_walk", t);
}

/// The skill holds step 4's rule back until every other rule is done (`last`). Two rules outside
/// the plan are open as well: one whose stock fix `kept` or not, one with no fix at all. The
/// plan's last batch waits for the loop to settle those, then takes step 4 with the others: one
/// batch, after the other rules' attempts, and no check of step 4's own.
async fn last_step_joins_the_last_batch(kept: bool) {
    let t = Instant::now();
    let (stock, nofix, last) = ("package_cron_installed", "service_cron_enabled", RULES[3]);
    let mut sim = planned(&format!("batch-last-{kept}"), steps(["", "", "", ""])).await;
    sim.edit_skill(|toml| toml + &format!("\n[[order]]\nrule = \"{last}\"\nlast = true\nreason = \"after everything else\"\n"));
    sim.settings.rules.extend([stock.to_string(), nofix.to_string()]);
    let effects = if kept { vec![Effect::Pass(full(stock))] } else { Vec::new() };
    sim.guest.stock_fix(&stock_fix(stock), effects);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();
    ends_well(&sim, run).await;
    assert_eq!(sim.rule(run, nofix).await.status, RuleStatus::Escalated, "{summary:?}");
    let want = if kept { RuleStatus::Fixed } else { RuleStatus::Escalated };
    assert_eq!(sim.rule(run, stock).await.status, want, "{summary:?}");

    let batches = sim.events(run, EventKind::PlanBatch).await;
    assert_eq!(batches.len(), 1, "{batches:?}");
    assert_eq!((&batches[0]["steps"], &batches[0]["failed"]), (&json!([1, 2, 3, 4]), &json!([])));
    // The order holds: every other rule was settled before step 4 ran.
    let events = sim.store.events(run, None).await.unwrap();
    let at = |kind: EventKind, rule: &str| events.iter().position(|e| e.kind == kind && e.rule_id.as_deref() == Some(&full(rule)));
    let step4 = at(EventKind::Attempt, last).expect("step 4 was attempted");
    assert!(at(EventKind::Escalate, nofix).is_some_and(|i| i < step4), "{events:?}");
    assert!(at(EventKind::Verdict, stock).is_some_and(|i| i < step4), "{events:?}");
    // Nothing is checked after the batch: step 4 has no check of its own.
    let batch = events.iter().position(|e| e.kind == EventKind::PlanBatch).unwrap();
    assert!(!events[batch..].iter().any(|e| e.kind == EventKind::RegressionCheck), "{events:?}");
    took(&format!("last_step_joins_the_last_batch({kept})"), t);
}

#[tokio::test]
async fn a_last_step_joins_the_last_batch_after_the_loop_settles_the_other_rules() {
    last_step_joins_the_last_batch(false).await;
}

#[tokio::test]
async fn a_last_step_joins_the_last_batch_after_a_fix_the_loop_kept_is_checked() {
    last_step_joins_the_last_batch(true).await;
}

/// A batch's room doubles after each clean batch, up to its most, and starts again after one that
/// fails its check. With room for 2 steps at first and 4 at most: six clean steps go in two
/// batches (2, then 4), not three. When step 3 fails, its batch of 4 is bisected from its own
/// stones (no step run again), which are then dropped, and the next batch takes 2 again.
#[tokio::test]
async fn a_batchs_room_doubles_after_a_clean_batch_and_starts_again_after_one_that_fails() {
    let t = Instant::now();
    for failing in [false, true] {
        let mut plan = six_steps(["", "", "", ""]);
        if failing {
            plan[2].fix.fix_script = "echo plan step 3\nexit 3\n# sim exit 3\n".into();
        }
        let mut sim = planned(&format!("batch-room-{failing}"), plan).await;
        sim.settings.rules.extend(LATER.map(String::from));
        // A stone after every step: the failing batch's are dropped with it.
        sim.settings.plan_batches = PlanBatches { first: 2, most: 4, stone_after: std::time::Duration::ZERO };
        let run = sim.new_run("stock").await;
        sim.stock(run).await.unwrap();
        ends_well(&sim, run).await;
        let left = sim.snapshots_left(run).await;
        assert!(left.is_empty(), "no stone is left: {left:?}");
        for rule in LATER {
            assert_eq!(sim.rule(run, rule).await.status, RuleStatus::Fixed, "{rule}");
        }
        let batches: Vec<_> = sim.events(run, EventKind::PlanBatch).await.into_iter().map(|b| b["steps"].clone()).collect();
        if failing {
            assert_eq!(batches, [json!([1, 2]), json!([3, 4, 5, 6]), json!([4, 5])], "failing: room 2 again after the bisection");
            let found = sim.events(run, EventKind::PlanBisected).await;
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!((&found[0]["step"], &found[0]["probes"]), (&json!(3), &json!(2)));
            // Each probe restored the batch's stone that holds its whole prefix: nothing ran again.
            let ran = |n: usize| sim.guest.scripts().iter().filter(|s| s.contains(&format!("echo plan step {n}\n"))).count();
            assert_eq!((ran(3), ran(4), ran(6)), (1, 2, 2), "step 3 once; 4 and 6 again only in their later batch and pick");
        } else {
            assert_eq!(batches, [json!([1, 2]), json!([3, 4, 5, 6])], "clean: 2, then 4");
        }
    }
    took("a_batchs_room_doubles_after_a_clean_batch_and_starts_again_after_one_that_fails", t);
}

/// A batch takes a stepping stone after each step once its scripts ran `stone_after` (here:
/// zero, so after every step but its last). Step 5 enables a unit that fails at boot: the reboot
/// proof blames it, and the rebuild restores the second batch's stone after step 4 and replays
/// only step 6, not steps 3, 4 and 6 onto the first batch's checkpoint. No stone is left.
#[tokio::test]
async fn a_rebuild_after_a_blamed_plan_step_starts_from_the_stone_its_batch_took_before_it() {
    let t = Instant::now();
    for stone_after in [std::time::Duration::ZERO, std::time::Duration::from_secs(3600)] {
        let mut plan = six_steps(["", "", "", ""]);
        plan[4].fix.fix_script.push_str("# sim unit-fails-at-boot aidecheck.service\nsystemctl enable aidecheck.service\n");
        let mut sim = planned(&format!("batch-stones-{}", stone_after.as_secs()), plan).await;
        sim.settings.rules.extend(LATER.map(String::from));
        sim.settings.plan_batches = PlanBatches { first: 2, most: 4, stone_after };
        let run = sim.new_run("stock").await;
        let summary = sim.stock(run).await.unwrap();
        assert_eq!(summary.rebooted, Some(true), "{summary:?}");
        ends_well(&sim, run).await;
        let batches: Vec<_> = sim.events(run, EventKind::PlanBatch).await.into_iter().map(|b| b["steps"].clone()).collect();
        assert_eq!(batches, [json!([1, 2]), json!([3, 4, 5, 6])]);
        let blamed = sim.attempts(run, LATER[0]).await;
        assert_eq!(blamed[0].verdict, Some(Verdict::HealthBroken), "step 5 blamed: {blamed:?}");
        let replays = sim.events(run, EventKind::Replay).await;
        let want = if stone_after.is_zero() { 1 } else { 3 };
        assert_eq!(replays.len(), want, "stone_after {stone_after:?}: {replays:?}");
        assert!(sim.guest.units_failing_at_boot().is_empty(), "the blamed step is not in the rebuilt state");
        let left = sim.snapshots_left(run).await;
        assert!(left.is_empty(), "no stone is left: {left:?}");
    }
    took("a_rebuild_after_a_blamed_plan_step_starts_from_the_stone_its_batch_took_before_it", t);
}
