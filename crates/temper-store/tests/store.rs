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

/// Kept fixes wait as `pending`, a clean batch confirms them and moves the checkpoint, a
/// regressed batch blames one fix and rolls back the later ones for replay.
#[tokio::test]
async fn a_batch_of_kept_fixes_is_confirmed_or_rolled_back() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path().join("t.db")).await.unwrap();
    let run = s.create_run(&new_run()).await.unwrap();
    for r in ["a", "b", "c"] {
        s.add_rule(run, r, r, "low", "fail", "pending", None).await.unwrap();
    }
    let fixed = AttemptOutcome { verdict: "fixed".into(), revert_method: "none".into(), ..Default::default() };
    let mut ids = Vec::new();
    for r in ["a", "b", "c"] {
        let (id, _) = s.start_attempt(&attempt(run, r)).await.unwrap();
        s.record_pending_fix(run, id, &fixed, r, &format!("snap-{r}")).await.unwrap();
        ids.push(id);
    }
    let pending = s.pending_fixes(run).await.unwrap();
    assert_eq!(pending.iter().map(|a| a.snapshot.as_deref().unwrap()).collect::<Vec<_>>(), ["snap-a", "snap-b", "snap-c"]);
    assert_eq!(s.run(run).await.unwrap().checkpoint, "baseline", "a pending fix does not move the checkpoint");
    assert_eq!(s.rule(run, "b").await.unwrap().unwrap().status, "fixed");

    // b broke a rule; c was kept on top of it.
    let culprit = temper_store::Culprit {
        id: ids[1],
        rule_id: "b".into(),
        reason: "rules that passed now fail: x".into(),
        regressions: vec!["x".into()],
        diagnostics: "bisected".into(),
    };
    s.roll_back_fixes(run, &culprit, &[ids[2]]).await.unwrap();
    let a = s.attempts(run).await.unwrap();
    assert_eq!(a[1].verdict.as_deref(), Some("regression"));
    assert_eq!(a[1].regressions.as_deref(), Some(r#"["x"]"#), "the same JSON list as any attempt's");
    assert_eq!(a[1].kept.as_deref(), Some("rolled_back"));
    assert_eq!(a[2].verdict.as_deref(), Some("fixed"), "the dropped fix keeps its verdict");
    assert!(a[2].verdict_reason.as_deref().unwrap().contains("rolled back"));
    assert_eq!(s.rule(run, "b").await.unwrap().unwrap().status, "pending");
    assert_eq!(s.rule(run, "c").await.unwrap().unwrap().status, "pending");
    // Only c is replayed: b's own fix is the culprit.
    let replay = s.fixes_to_replay(run).await.unwrap();
    assert_eq!(replay.iter().map(|a| a.rule_id.as_str()).collect::<Vec<_>>(), ["c"]);
    assert_eq!(s.pending_fixes(run).await.unwrap().len(), 1, "a stays pending");

    // The replay is kept; the batch is clean and confirmed.
    let (id, n) = s.start_attempt(&attempt(run, "c")).await.unwrap();
    assert_eq!(n, 2);
    s.record_pending_fix(run, id, &fixed, "c", "snap-c2").await.unwrap();
    assert!(s.fixes_to_replay(run).await.unwrap().is_empty(), "a replayed fix is not replayed again");
    s.confirm_fixes(run, "snap-c2").await.unwrap();
    assert!(s.pending_fixes(run).await.unwrap().is_empty());
    assert_eq!(s.run(run).await.unwrap().checkpoint, "snap-c2");
    let kept: Vec<_> = s.attempts(run).await.unwrap().into_iter().map(|a| a.kept.unwrap_or_default()).collect();
    assert_eq!(kept, ["confirmed", "rolled_back", "rolled_back", "confirmed"]);
    assert_eq!(s.integrity_check().await.unwrap(), "ok");
}
