//! The store against a real SQLite file.
use temper_store::{AttemptOutcome, NewAttempt, NewRun, Store};

fn new_run() -> NewRun {
    NewRun {
        skill: "debian12-anssi".into(),
        profile: "standard".into(),
        datastream: "ssg-debian12-ds.xml".into(),
        content_version: Some("0.1.76".into()),
        target: "qemu:///system/temper-test".into(),
        agent: "stock".into(),
        options_json: "{}".into(),
    }
}

fn attempt(run: i64, rule: &str) -> NewAttempt {
    NewAttempt {
        run_id: run,
        rule_id: rule.into(),
        plan: "plan".into(),
        source: "stock".into(),
        fix_script: "echo fix".into(),
        revert_script: String::new(),
        description: "d".into(),
        checkpoint: "baseline".into(),
    }
}

#[tokio::test]
async fn opens_in_wal_mode_and_migrates_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let s = Store::open(&path).await.unwrap();
    let (mode,): (String,) = sqlx::query_as("PRAGMA journal_mode").fetch_one(s.pool()).await.unwrap();
    assert_eq!(mode, "wal");
    drop(s);
    // A second open must not re-apply migrations.
    let s = Store::open(&path).await.unwrap();
    assert_eq!(s.integrity_check().await.unwrap(), "ok");
}

#[tokio::test]
async fn attempts_are_numbered_per_rule_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path().join("t.db")).await.unwrap();
    let run = s.create_run(&new_run()).await.unwrap();
    s.add_rule(run, "r1", "Rule 1", "high", "fail", "pending", None).await.unwrap();
    s.add_rule(run, "r2", "Rule 2", "low", "fail", "pending", None).await.unwrap();
    // A second insert of the same rule keeps the first row (resume).
    s.add_rule(run, "r1", "other", "low", "pass", "passing", None).await.unwrap();
    let (_, n1) = s.start_attempt(&attempt(run, "r1")).await.unwrap();
    let (_, n2) = s.start_attempt(&attempt(run, "r1")).await.unwrap();
    let (_, m1) = s.start_attempt(&attempt(run, "r2")).await.unwrap();
    assert_eq!((n1, n2, m1), (1, 2, 1));
    let r1 = s.rule(run, "r1").await.unwrap().unwrap();
    assert_eq!(r1.attempts, 2);
    assert_eq!(r1.title, "Rule 1");
    assert_eq!(r1.initial_result, "fail");
}

#[tokio::test]
async fn interrupted_attempts_are_closed_not_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path().join("t.db")).await.unwrap();
    let run = s.create_run(&new_run()).await.unwrap();
    s.add_rule(run, "r1", "", "high", "fail", "pending", None).await.unwrap();
    let (done_id, _) = s.start_attempt(&attempt(run, "r1")).await.unwrap();
    s.finish_attempt(
        done_id,
        &AttemptOutcome { verdict: "still_failing".into(), revert_method: "snapshot".into(), ..Default::default() },
    )
    .await
    .unwrap();
    let (open_id, _) = s.start_attempt(&attempt(run, "r1")).await.unwrap();
    s.set_attempt_state(open_id, "applied").await.unwrap();
    let open = s.interrupt_open_attempts(run).await.unwrap();
    assert_eq!(open.iter().map(|a| a.id).collect::<Vec<_>>(), vec![open_id]);
    let all = s.attempts(run).await.unwrap();
    assert_eq!(all[0].verdict.as_deref(), Some("still_failing"));
    assert_eq!(all[1].state, "interrupted");
    assert_eq!(all[1].verdict.as_deref(), Some("interrupted"));
    // Nothing left open: a second call finds none.
    assert!(s.interrupt_open_attempts(run).await.unwrap().is_empty());
}

#[tokio::test]
async fn events_go_to_table_and_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path().join("t.db")).await.unwrap();
    let run = s.create_run(&new_run()).await.unwrap();
    s.event(run, "scan", None, serde_json::json!({"fail": 3})).await.unwrap();
    s.event(run, "verdict", Some("r1"), serde_json::json!({"verdict": "fixed"})).await.unwrap();
    let ev = s.events(run, 0).await.unwrap();
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[1].rule_id.as_deref(), Some("r1"));
    let text = std::fs::read_to_string(s.run_dir(run).join("events.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["data"]["verdict"], "fixed");
}

#[tokio::test]
async fn memory_persists_across_opens_and_can_be_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    {
        let s = Store::open(&path).await.unwrap();
        let run = s.create_run(&new_run()).await.unwrap();
        s.add_ban(run, "r1", r"systemctl\s+mask\s+ssh", "locks out").await.unwrap();
        s.add_lesson(run, "r1", "lesson", "preferred", "distilled").await.unwrap();
        s.add_tip(run, "r1", "tip", "config", "sshd_config.d drop-in").await.unwrap();
    }
    let s = Store::open(&path).await.unwrap();
    let bans = s.bans().await.unwrap();
    assert_eq!(bans.len(), 1);
    assert_eq!(s.lessons(Some("r1")).await.unwrap().len(), 1);
    assert!(s.lessons(Some("r2")).await.unwrap().is_empty());
    s.forget("bans", bans[0].id).await.unwrap();
    assert!(s.bans().await.unwrap().is_empty());
    assert!(s.forget("bans", bans[0].id).await.is_err(), "forgetting twice is an error");
    assert!(s.forget("users", 1).await.is_err(), "unknown table refused");
}

#[tokio::test]
async fn unwritable_path_is_a_clear_error() {
    let err = Store::open("/proc/temper/t.db").await.unwrap_err();
    assert!(err.to_string().contains("/proc/temper/t.db"), "{err}");
}
