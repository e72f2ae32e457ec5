//! `take` on a real SQLite store: the last finished run of the same job on the same target gives
//! its plan when it passed its reboot proof; another job's, another target's, an unproven or an
//! empty one gives none, and says why.
use temper_core::journal::NewRun;

use super::*;
use crate::cmd::recorded::RULE;

const STANDARD: &str = "xccdf_org.ssgproject.content_profile_standard";

struct World {
    _dir: tempfile::TempDir,
    config: Config,
    store: temper_store::Store,
    target: Target,
}

async fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let store = temper_store::Store::open(dir.path().join("temper.db").to_str().unwrap()).await.unwrap();
    let config = Config { content_dir: dir.path().join("no-content"), ..Config::default() };
    let target = Target { name: "web1".into(), ..Target::default() };
    World { _dir: dir, config, store, target }
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
enum End {
    /// Still running.
    Running,
    /// Finished, `rebooted` as its summary says.
    Finished(Option<bool>),
}

/// A run of `job` on `target` that kept its one fix (or none), ended as `end`.
async fn run_of(w: &World, target: &Target, job: &Job, kept: bool, end: End) -> RunId {
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
        End::Running => None,
        End::Finished(rebooted) => Some(rebooted),
    };
    crate::cmd::recorded::run(&w.store, target, &new, kept, finished).await
}

async fn take_for(w: &World, job: &Job) -> Result<Applied, NoPlan> {
    take(&w.config, &w.store, &w.target, job).await.unwrap()
}

#[tokio::test]
async fn the_last_proven_run_of_the_job_gives_its_plan_written_in_its_folder() {
    let w = world().await;
    let old = run_of(&w, &w.target, &job(), true, End::Finished(Some(true))).await;
    let last = run_of(&w, &w.target, &job(), true, End::Finished(Some(true))).await;
    // A run still going (or cut off) is not a finished run of the job: it does not decide.
    run_of(&w, &w.target, &job(), false, End::Running).await;
    let a = take_for(&w, &job()).await.expect("a plan");
    assert_eq!((a.from_run, a.origin, a.fixes.len()), (last, PlanOrigin::LastProven, 1), "the newest, not run {old}");
    assert_eq!(a.fixes[0].rule, RULE);
    assert_eq!(a.signed_by, None, "written by this process from its store: not signed");
    let dir = w.store.run_dir(last).join("plan");
    assert_eq!(a.dir, dir.display().to_string());
    assert!(dir.join("plan.json").is_file() && dir.join("replay.sh").is_file());
    // The next night takes it again: the folder is written anew, not refused as not empty.
    std::fs::write(dir.join("stale"), "x").unwrap();
    let again = take_for(&w, &job()).await.expect("a plan again");
    assert_eq!(again.from_run, last);
    assert!(!dir.join("stale").exists(), "written anew");
}

#[tokio::test]
async fn another_job_or_target_gives_none() {
    let w = world().await;
    assert_eq!(take_for(&w, &job()).await.unwrap_err(), NoPlan::NoEarlierRun);
    let other_target = Target { name: "web2".into(), ..Target::default() };
    let other_snapshot = Target { baseline: "golden".into(), ..w.target.clone() };
    run_of(&w, &other_target, &job(), true, End::Finished(Some(true))).await;
    run_of(&w, &other_snapshot, &job(), true, End::Finished(Some(true))).await;
    let others = [
        Job { profile: "xccdf_org.ssgproject.content_profile_anssi_bp28_high".into(), ..job() },
        Job { skill: "rhel9-stig".into(), ..job() },
        Job { rules: vec!["sshd_set_keepalive".into()], ..job() },
        Job { max_rules: Some(3), ..job() },
        Job { content_sha256: Some("b".repeat(64)), ..job() },
    ];
    for other in &others {
        run_of(&w, &w.target, other, true, End::Finished(Some(true))).await;
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
    run_of(&w, &w.target, &job(), true, End::Finished(Some(true))).await;
    let skipped = run_of(&w, &w.target, &job(), true, End::Finished(None)).await;
    let why = take_for(&w, &job()).await.unwrap_err();
    assert_eq!(why, NoPlan::NotProven { run: skipped, proof: RebootProof::NotRun });
    assert!(why.says().contains(&format!("run {skipped}, skipped the reboot proof")), "{}", why.says());
    let failed = run_of(&w, &w.target, &job(), true, End::Finished(Some(false))).await;
    let why = take_for(&w, &job()).await.unwrap_err();
    assert_eq!(why, NoPlan::NotProven { run: failed, proof: RebootProof::NotProven });
    assert!(why.says().contains("did not pass its reboot proof"), "{}", why.says());
    assert!(!w.store.run_dir(failed).join("plan").exists(), "nothing exported");
    let empty = run_of(&w, &w.target, &job(), false, End::Finished(Some(true))).await;
    assert_eq!(take_for(&w, &job()).await.unwrap_err(), NoPlan::NothingKept { run: empty });
}

#[test]
fn no_plan_and_plan_are_refused_together() {
    let args = |a: &[&str]| crate::cli::parse_run_args(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert!(args(&["--no-plan"]).unwrap().no_plan);
    assert!(args(&["--plan", "dir", "--unsigned", "--no-plan"]).is_err());
}
