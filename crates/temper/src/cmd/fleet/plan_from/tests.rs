//! `decide` on a real SQLite store: a proven first run's plan, sealed at its end, is verified,
//! exported for the fleet's runs and sealed with the host's own key, and handed on with that
//! key to check it by (never unsigned); an unproven, unfinished, missing or unsealed one is not,
//! and says why.
use temper_journal::NewRun;
use temper_journal::plan::{Folder, Plan};

use super::*;
use temper_journal::RunId;

struct PlanFromWorld {
    _dir: tempfile::TempDir,
    config: Config,
    store: temper_store::Store,
    first: Target,
}

async fn world() -> PlanFromWorld {
    let dir = tempfile::tempdir().unwrap();
    let store = temper_store::Store::open(dir.path().join("temper.db").to_str().unwrap()).await.unwrap();
    let config =
        Config { content_dir: dir.path().join("no-content"), plan_key_file: dir.path().join("state/plan_ed25519"), ..Config::default() };
    let first = Target { name: "a".into(), ..Target::default() };
    PlanFromWorld { _dir: dir, config, store, first }
}

/// A run of fleet `night` on `a` that kept one fix; finished with `rebooted` unless `None`.
async fn first_run(w: &PlanFromWorld, finished: Option<Option<bool>>) -> RunId {
    let profile = "xccdf_org.ssgproject.content_profile_standard";
    let options =
        serde_json::json!({"fleet": "night", "skill": "debian12-anssi", "profile": profile, "content_sha256": "a".repeat(64)}).to_string();
    let new = NewRun {
        skill: "debian12-anssi".into(),
        profile: profile.into(),
        datastream: "ssg-debian12-ds.xml".into(),
        content_version: Some("0.1.76".into()),
        target: w.first.label(),
        agent: "stock".into(),
        options_json: options,
        baseline: "baseline".into(),
    };
    let run = crate::cmd::recorded::run(&w.store, &w.first, &new, true, finished).await;
    // As `temper run` does at the end of a run that passed its proof.
    if finished == Some(Some(true)) {
        super::super::super::last_plan::seal_at_end(&w.config, &w.store, run).await.unwrap();
    }
    run
}

fn args() -> RunArgs {
    crate::cli::parse_run_args(&["--agent".to_string(), "stock".to_string()]).unwrap()
}

#[tokio::test]
async fn a_proven_plan_is_sealed_for_the_fleet_and_handed_on_with_the_hosts_key() {
    let w = world().await;
    let run = first_run(&w, Some(Some(true))).await;
    let d = decide(&w.config, &w.store, "night", &w.first, 0).await;
    let dir = w.store.fleet_dir("night").join(format!("plan-from-run{run}"));
    assert_eq!(d, PlanFrom::Applied { target: "a".into(), run, dir: dir.display().to_string(), steps: 1 });
    let plan = Plan::load(&dir).unwrap();
    assert_eq!((plan.header.source.run, plan.header.reboot_proven, plan.steps.len()), (run, true, 1));
    let args = follow(&w.config, &d, args());
    assert_eq!(args.plan, Some(dir.clone()), "the others get --plan DIR");
    assert!(!args.unsigned, "never handed on unsigned");
    let signers = args.allowed_signers.expect("checked with the host's own key");
    assert_eq!(signers, OwnKey::signers_of(&w.config.plan_key_file));
    // Sealed for the fleet's runs alone.
    let folder = Folder::read(&dir).unwrap();
    let trust = Trust::Signers(signers);
    let at = |fleet| Applying { now: chrono::Utc::now(), target: Some("b"), fleet };
    assert!(seal::check(&folder, &trust, &at(Some("night"))).is_ok());
    let e = seal::check(&folder, &trust, &at(None)).unwrap_err();
    assert!(e.to_string().contains("the plan is for the runs of fleet `night`"), "{e}");
    assert!(d.says().contains("passed its reboot proof: the other targets apply its plan (1 steps"), "{}", d.says());
}

#[tokio::test]
async fn a_first_run_whose_store_changed_or_that_left_no_seal_hands_nothing_on() {
    let w = world().await;
    let run = first_run(&w, Some(Some(true))).await;
    let url = format!("sqlite://{}", w._dir.path().join("temper.db").display());
    let db = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::query("UPDATE attempts SET fix_script = 'touch /tmp/owned' WHERE run_id = ?").bind(run.get()).execute(&db).await.unwrap();
    let d = decide(&w.config, &w.store, "night", &w.first, 0).await;
    let PlanFrom::Withheld { why: Withheld::Refused { error }, .. } = &d else { panic!("{d:?}") };
    assert!(error.contains("not those sealed at its end") && error.contains("nothing was run"), "{error}");
    assert_eq!(follow(&w.config, &d, args()).plan, None);
    std::fs::remove_dir_all(w.store.run_dir(run).join("plan")).unwrap();
    let d = decide(&w.config, &w.store, "night", &w.first, 0).await;
    assert!(matches!(&d, PlanFrom::Withheld { why: Withheld::Refused { error }, .. } if error.contains("holds no sealed plan")), "{d:?}");
}

#[tokio::test]
async fn an_unproven_or_unfinished_run_hands_nothing_on_and_says_why() {
    let w = world().await;
    let d = decide(&w.config, &w.store, "night", &w.first, 1).await;
    assert_eq!(d, PlanFrom::Withheld { target: "a".into(), run: None, why: Withheld::NoRun { exit_code: 1 } });

    let run = first_run(&w, None).await;
    let d = decide(&w.config, &w.store, "night", &w.first, 75).await;
    let why = Withheld::Unfinished { status: temper_journal::RunStatus::Running, exit_code: 75 };
    assert_eq!(d, PlanFrom::Withheld { target: "a".into(), run: Some(run), why });

    for (rebooted, proof) in [(Some(false), RebootOutcome::NotProven), (None, RebootOutcome::NotRun)] {
        let run = first_run(&w, Some(rebooted)).await;
        let d = decide(&w.config, &w.store, "night", &w.first, 0).await;
        assert_eq!(d, PlanFrom::Withheld { target: "a".into(), run: Some(run), why: Withheld::NotProven { proof } });
        assert_eq!(follow(&w.config, &d, args()).plan, None, "no unproven plan is handed on");
        assert!(d.says().contains("its plan is not handed on, its reboot proof did not pass"), "{}", d.says());
        assert!(!w.store.fleet_dir("night").join(format!("plan-from-run{run}")).exists(), "nothing exported");
    }
    // Stored with the other runs' options as a tagged value.
    let d = PlanFrom::Withheld {
        target: "a".into(),
        run: Some(RunId::new(3).unwrap()),
        why: Withheld::NotProven { proof: RebootOutcome::NotRun },
    };
    let v = serde_json::to_value(&d).unwrap();
    assert_eq!(v, serde_json::json!({"kind": "withheld", "target": "a", "run": 3, "why": {"kind": "not_proven", "proof": "not_run"}}));
    assert_eq!(serde_json::from_value::<PlanFrom>(v).unwrap(), d);
}
