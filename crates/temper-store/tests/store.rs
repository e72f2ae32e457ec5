//! The journal on both backends: the same calls, the same answers.
mod common;

use common::*;

#[tokio::test]
async fn attempts_are_numbered_per_rule_and_counted() {
    for b in backends("attempts_are_numbered_per_rule_and_counted").await {
        let s = &b.store;
        let run = s.create_run(&new_run()).await.unwrap();
        s.add_rule(run, &rule("r1", RuleStatus::Pending)).await.unwrap();
        s.add_rule(run, &rule("r2", RuleStatus::Pending)).await.unwrap();
        s.add_rule(run, &rule("r1", RuleStatus::Passing)).await.unwrap(); // a resume re-adds: kept as it was
        let (_, n1) = s.start_attempt(run, &attempt("r1")).await.unwrap();
        let (_, n2) = s.start_attempt(run, &attempt("r1")).await.unwrap();
        let (_, m1) = s.start_attempt(run, &attempt("r2")).await.unwrap();
        assert_eq!((n1.get(), n2.get(), m1.get()), (1, 2, 1), "{}", b.name);
        let r1 = s.rule(run, "r1").await.unwrap().unwrap();
        assert_eq!((r1.attempts, r1.status, r1.initial_result), (2, RuleStatus::Pending, ScanResult::Fail), "{}", b.name);
        assert_eq!(r1.title, "Rule r1");
        let row = s.run(run).await.unwrap();
        assert_eq!(
            (row.status, row.phase, row.checkpoint.as_str(), row.baseline.as_str()),
            (RunStatus::Running, Phase::Preflight, "baseline", "baseline")
        );
        assert_eq!(s.integrity_check().await.unwrap(), "ok");
    }
}

#[tokio::test]
async fn a_new_run_starts_from_its_own_baseline() {
    for b in backends("a_new_run_starts_from_its_own_baseline").await {
        let run = b.store.create_run(&NewRun { baseline: "other".into(), ..new_run() }).await.unwrap();
        let row = b.store.run(run).await.unwrap();
        assert_eq!((row.baseline.as_str(), row.checkpoint.as_str()), ("other", "other"), "{}", b.name);
    }
}

#[tokio::test]
async fn interrupted_attempts_are_closed_not_rerun_and_not_counted() {
    for b in backends("interrupted_attempts_are_closed_not_rerun_and_not_counted").await {
        let s = &b.store;
        let run = s.create_run(&new_run()).await.unwrap();
        s.add_rule(run, &rule("r1", RuleStatus::Pending)).await.unwrap();
        let (done, _) = s.start_attempt(run, &attempt("r1")).await.unwrap();
        s.finish_attempt(done, &Evaluation::new(Verdict::StillFailing, "x")).await.unwrap();
        let (open, _) = s.start_attempt(run, &attempt("r1")).await.unwrap();
        s.set_attempt_state(open, AttemptState::Applied).await.unwrap();
        assert_eq!(s.rule(run, "r1").await.unwrap().unwrap().attempts, 2);
        let closed = s.interrupt_open_attempts(run).await.unwrap();
        assert_eq!(closed.iter().map(|a| a.id).collect::<Vec<_>>(), [open], "{}", b.name);
        let all = s.attempts(run).await.unwrap();
        assert_eq!(all[0].verdict, Some(Verdict::StillFailing));
        assert_eq!((all[1].state, all[1].verdict), (AttemptState::Interrupted, Some(Verdict::Interrupted)));
        assert_eq!(s.rule(run, "r1").await.unwrap().unwrap().attempts, 1, "an interrupted attempt is not a try");
        assert!(s.interrupt_open_attempts(run).await.unwrap().is_empty());
        let (_, n) = s.start_attempt(run, &attempt("r1")).await.unwrap();
        assert_eq!(n.get(), 3, "attempt numbers are never reused");
    }
}

#[tokio::test]
async fn events_go_to_the_table_and_the_jsonl_mirror() {
    for b in backends("events_go_to_the_table_and_the_jsonl_mirror").await {
        let s = &b.store;
        let run = s.create_run(&new_run()).await.unwrap();
        s.event(run, None, &scan_event()).await.unwrap();
        let verdict = EventData::Verdict { attempt: None, verdict: Verdict::Fixed, reason: "x".into() };
        s.event(run, Some("r1"), &verdict).await.unwrap();
        let ev = s.events(run, None).await.unwrap();
        assert_eq!(ev.iter().map(|e| e.kind).collect::<Vec<_>>(), [EventKind::Scan, EventKind::Verdict], "{}", b.name);
        assert_eq!(ev[1].rule_id.as_deref(), Some("r1"));
        assert_eq!(s.events(run, Some(ev[0].id)).await.unwrap().len(), 1);
        let text = std::fs::read_to_string(s.run_dir(run).join("events.jsonl")).unwrap();
        let lines: Vec<serde_json::Value> = text.lines().rev().take(2).map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines[0]["data"]["verdict"], "fixed");
        assert_eq!(lines[0]["id"], ev[1].id.get());
    }
}

async fn distilled(s: &Store, r: Recall<'_>) -> Vec<String> {
    s.lessons(r).await.unwrap().into_iter().map(|l| l.distilled).collect()
}

/// Lessons, bans and tips are shared by every run of a skill and only by those; what was made
/// outside a run (no run id) belongs to every skill.
#[tokio::test]
async fn memory_is_recalled_per_skill() {
    for b in backends("memory_is_recalled_per_skill").await {
        let deb = b.store.create_run(&new_run()).await.unwrap();
        let deb2 = b.store.create_run(&new_run()).await.unwrap();
        let rhel = b.store.create_run(&NewRun { skill: "stig-rhel9".into(), ..new_run() }).await.unwrap();
        b.store.add_ban(deb, "r1", "sysctl -w", "runtime only").await.unwrap();
        b.store.add_ban(rhel, "r1", "authselect", "locks out").await.unwrap();
        b.store.add_lesson(deb2, "r1", "l", "p", "deb lesson").await.unwrap();
        b.store.add_lesson(rhel, "r2", "l", "p", "rhel lesson").await.unwrap();
        let tip = temper_journal::turn::NewTip { text: "t".into(), kind: temper_journal::TipKind::Config, mechanism: "m".into() };
        b.store.add_tip(rhel, "r1", &tip).await.unwrap();
        let pats = |v: Vec<Ban>| v.into_iter().map(|x| x.pattern).collect::<Vec<_>>();
        assert_eq!(pats(b.store.bans(Recall::skill("debian12-anssi")).await.unwrap()), ["sysctl -w"], "{}", b.name);
        assert_eq!(pats(b.store.bans(Recall::skill("stig-rhel9")).await.unwrap()), ["authselect"], "{}", b.name);
        assert_eq!(pats(b.store.bans(Recall::all()).await.unwrap()), ["sysctl -w", "authselect"], "{}", b.name);
        let deb_lessons = distilled(&b.store, Recall::skill("debian12-anssi")).await;
        assert_eq!(deb_lessons, ["deb lesson"], "another run of the skill made it: {}", b.name);
        assert!(distilled(&b.store, Recall::skill("debian12-anssi").rule("r2")).await.is_empty(), "{}", b.name);
        assert_eq!(distilled(&b.store, Recall::all().rule("r2")).await, ["rhel lesson"], "{}", b.name);
        assert!(b.store.tips(Recall::skill("debian12-anssi")).await.unwrap().is_empty(), "{}", b.name);
        assert_eq!(b.store.tips(Recall::skill("stig-rhel9")).await.unwrap().len(), 1, "{}", b.name);
    }
}

/// What a run learns holds on its run's target (its label) until a person approves it for the
/// skill: then on every target of the skill. A remembered fix needs no approval (each target
/// verifies it again); approving twice, or what is not there, is an error.
#[tokio::test]
async fn memory_holds_on_its_target_until_approved_for_the_skill() {
    for b in backends("memory_holds_on_its_target_until_approved_for_the_skill").await {
        let s = &b.store;
        let a = s.create_run(&NewRun { target: "qemu:///system#a (temper@h:22)".into(), ..new_run() }).await.unwrap();
        let other = "qemu:///system#b (temper@h:22)";
        s.add_ban(a, "r1", "sysctl -w", "runtime only").await.unwrap();
        let lesson = s.add_lesson(a, "r1", "l", "p", "a lesson").await.unwrap();
        let tip = temper_journal::turn::NewTip { text: "t".into(), kind: temper_journal::TipKind::Config, mechanism: "m".into() };
        let tip = s.add_tip(a, "r1", &tip).await.unwrap();
        let on = |t: &'static str| Recall::skill("debian12-anssi").on(t);
        assert_eq!(s.bans(on("qemu:///system#a (temper@h:22)")).await.unwrap().len(), 1, "on its own target: {}", b.name);
        assert!(s.bans(on(other)).await.unwrap().is_empty(), "not on another: {}", b.name);
        assert!(distilled(s, on(other)).await.is_empty(), "{}", b.name);
        assert!(s.tips(on(other)).await.unwrap().is_empty(), "{}", b.name);
        let ban = s.bans(Recall::all()).await.unwrap()[0].id;
        s.approve(MemoryKind::Bans, ban, "alice").await.unwrap();
        s.approve(MemoryKind::Lessons, lesson, "alice").await.unwrap();
        let approved = s.bans(on(other)).await.unwrap();
        assert_eq!(approved.len(), 1, "approved: on every target: {}", b.name);
        assert_eq!(approved[0].approved_by.as_deref(), Some("alice"));
        assert!(approved[0].approved_at.is_some());
        assert_eq!(distilled(s, on(other)).await, ["a lesson"], "{}", b.name);
        assert!(s.tips(on(other)).await.unwrap().is_empty(), "the tip was not approved: {}", b.name);
        assert!(s.bans(Recall::skill("stig-rhel9").on(other)).await.unwrap().is_empty(), "another skill's: {}", b.name);
        assert!(matches!(s.approve(MemoryKind::Bans, ban, "bob").await, Err(JournalError::NotFound(_))), "{}", b.name);
        assert!(
            matches!(s.approve(MemoryKind::Tips, MemoryId::new(tip.get() + 1000).unwrap(), "bob").await, Err(JournalError::NotFound(_))),
            "{}",
            b.name
        );
        assert!(
            matches!(s.approve(MemoryKind::Fixes, MemoryId::new(1).unwrap(), "bob").await, Err(JournalError::Unsupported(_))),
            "{}",
            b.name
        );
    }
}

#[tokio::test]
async fn memory_persists_across_opens_and_can_be_forgotten() {
    for b in backends("memory_persists_across_opens_and_can_be_forgotten").await {
        let run = b.store.create_run(&new_run()).await.unwrap();
        b.store.add_lesson(run, "r1", "lesson", "prefer", "distilled").await.unwrap();
        b.store.add_ban(run, "r1", "rm -rf", "no").await.unwrap();
        let tip = temper_journal::turn::NewTip { text: "t".into(), kind: temper_journal::TipKind::Config, mechanism: "m".into() };
        b.store.add_tip(run, "r1", &tip).await.unwrap();
        let s = Store::open(&b.spec).await.unwrap();
        let bans = s.bans(Recall::all()).await.unwrap();
        assert_eq!(bans.len(), 1, "{}", b.name);
        assert_eq!(s.lessons(Recall::all().rule("r1")).await.unwrap().len(), 1);
        assert_eq!(s.lessons(Recall::all()).await.unwrap().len(), 1);
        assert!(s.lessons(Recall::all().rule("r2")).await.unwrap().is_empty());
        assert_eq!(s.tips(Recall::all()).await.unwrap()[0].kind, TipKind::Config);
        s.forget(MemoryKind::Bans, bans[0].id).await.unwrap();
        assert!(s.bans(Recall::all()).await.unwrap().is_empty());
        assert!(s.forget(MemoryKind::Bans, bans[0].id).await.is_err(), "forgetting twice is an error");
    }
}

#[tokio::test]
async fn a_batch_of_kept_fixes_is_confirmed_or_rolled_back() {
    for b in backends("a_batch_of_kept_fixes_is_confirmed_or_rolled_back").await {
        let s = &b.store;
        let run = s.create_run(&new_run()).await.unwrap();
        let mut ids = Vec::new();
        for r in ["a", "b", "c"] {
            s.add_rule(run, &rule(r, RuleStatus::Pending)).await.unwrap();
            let (id, _) = s.start_attempt(run, &attempt(r)).await.unwrap();
            s.record_pending_fix(run, id, &fixed(), r, Some(&format!("snap-{r}"))).await.unwrap();
            ids.push(id);
        }
        let pending = s.pending_fixes(run).await.unwrap();
        assert_eq!(pending.iter().map(|a| a.snapshot.as_deref().unwrap()).collect::<Vec<_>>(), ["snap-a", "snap-b", "snap-c"]);
        assert_eq!(s.run(run).await.unwrap().checkpoint, "baseline", "a pending fix does not move the checkpoint");
        assert_eq!(s.rule(run, "b").await.unwrap().unwrap().status, RuleStatus::Fixed);
        let culprit = Culprit {
            id: ids[1],
            verdict: Verdict::Regression,
            rule_id: "b".into(),
            reason: "broke x".into(),
            regressions: vec!["x".into()],
            diagnostics: "d".into(),
            rule_result: Some(ScanResult::Fail),
        };
        s.roll_back_fixes(run, &culprit, &[ids[2]]).await.unwrap();
        let a = s.attempts(run).await.unwrap();
        assert_eq!(a[1].verdict, Some(Verdict::Regression), "{}", b.name);
        assert_eq!(a[1].findings.regressions, ["x"], "the same JSON list as any attempt's");
        assert_eq!(a[1].findings.rule_result, Some(ScanResult::Fail), "the check's reading of its rule");
        assert_eq!(a[1].kept, Some(KeptState::RolledBack));
        assert_eq!(a[2].verdict, Some(Verdict::Fixed), "the dropped fix keeps its verdict");
        assert!(a[2].verdict_reason.as_deref().unwrap().contains("rolled back"));
        assert_eq!(s.rule(run, "c").await.unwrap().unwrap().status, RuleStatus::Pending);
        let replay = s.fixes_to_replay(run).await.unwrap();
        assert_eq!(replay.iter().map(|a| (a.spec.rule_id.as_str(), a.spec.source)).collect::<Vec<_>>(), [("c", FixSource::Stock)]);
        let (id, n) = s.start_attempt(run, &AttemptSpec { replayed: true, ..attempt("c") }).await.unwrap();
        assert_eq!(n.get(), 2);
        assert!(s.fixes_to_replay(run).await.unwrap().is_empty(), "a replayed fix is not replayed again");
        // A fix with no rule result of its own: the batch's check confirms the batch broke
        // nothing, never that this rule passes, so it makes up no result for it.
        let mut unread = fixed();
        unread.findings.rule_result = None;
        s.record_pending_fix(run, id, &unread, "c", Some("snap-c2")).await.unwrap();
        s.confirm_fixes(run, "snap-c2").await.unwrap();
        assert!(s.pending_fixes(run).await.unwrap().is_empty());
        assert_eq!(s.run(run).await.unwrap().checkpoint, "snap-c2");
        let a = s.attempts(run).await.unwrap();
        let kept: Vec<_> = a.iter().map(|a| a.kept.unwrap()).collect();
        assert_eq!(kept, [KeptState::Confirmed, KeptState::RolledBack, KeptState::RolledBack, KeptState::Confirmed]);
        assert_eq!((a[3].spec.source, a[3].spec.replayed), (FixSource::Stock, true), "a replay keeps its source");
        assert_eq!(a[3].findings.rule_result, None, "{}: no pass made up for a rule no check read", b.name);
        assert_eq!(a[0].findings.rule_result, Some(ScanResult::Pass), "its own rescan's");
    }
}

/// The reboot proof's bookkeeping: a fix kept until the reboot becomes `fixed` once proven; a fix
/// it blames keeps its own verdict, is rolled back, and its rule reopens.
#[tokio::test]
async fn the_reboot_proof_proves_or_blames_kept_fixes() {
    for b in backends("the_reboot_proof_proves_or_blames_kept_fixes").await {
        let s = &b.store;
        let run = s.create_run(&new_run()).await.unwrap();
        let mut ids = Vec::new();
        for r in ["a", "b"] {
            s.add_rule(run, &rule(r, RuleStatus::Pending)).await.unwrap();
            let (id, _) = s.start_attempt(run, &attempt(r)).await.unwrap();
            ids.push(id);
        }
        // A stock fix that takes effect after a reboot, its rule read failing right after it.
        let mut awaiting = fixed();
        (awaiting.verdict, awaiting.verdict_reason) = (Verdict::NeedsReboot, "kept for the proof".into());
        awaiting.findings.rule_result = Some(ScanResult::Fail);
        s.record_fix(run, ids[0], &awaiting, "a", "snap-a").await.unwrap();
        let a = s.attempts(run).await.unwrap();
        assert_eq!((a[0].verdict, a[0].findings.rule_result), (Some(Verdict::NeedsReboot), Some(ScanResult::Fail)), "{}", b.name);
        assert!(a[0].in_force(), "kept for the proof");
        s.record_fix(run, ids[1], &fixed(), "b", "snap-b").await.unwrap();
        s.prove_fix(ids[0], "; passes after the reboot").await.unwrap();
        let blame = Culprit {
            id: ids[1],
            verdict: Verdict::BreaksBoot,
            rule_id: "b".into(),
            reason: "no SSH".into(),
            regressions: vec![],
            diagnostics: "d".into(),
            rule_result: None,
        };
        s.roll_back_fixes(run, &blame, &[]).await.unwrap();
        let a = s.attempts(run).await.unwrap();
        assert_eq!(a[0].verdict, Some(Verdict::Fixed), "{}", b.name);
        assert_eq!(a[0].verdict_reason.as_deref(), Some("kept for the proof; passes after the reboot"));
        assert_eq!((a[1].verdict, a[1].kept), (Some(Verdict::BreaksBoot), Some(KeptState::RolledBack)), "{}", b.name);
        assert_eq!(s.rule(run, "b").await.unwrap().unwrap().status, RuleStatus::Pending);
        assert_eq!(s.rule(run, "a").await.unwrap().unwrap().status, RuleStatus::Fixed);
    }
}

#[tokio::test]
async fn one_driver_at_a_time() {
    for b in backends("one_driver_at_a_time").await {
        let s = &b.store;
        let run = s.create_run(&new_run()).await.unwrap();
        let now = 1_000_000;
        assert!(s.claim_run(run, "h:1:a", None, now, now + 30_000).await.unwrap(), "{}", b.name);
        assert!(!s.claim_run(run, "h:2:b", None, now + 1000, now + 31_000).await.unwrap(), "held: refused");
        assert!(s.claim_run(run, "h:2:b", Some("h:1:a"), now + 1000, now + 31_000).await.unwrap(), "a dead driver's run is taken");
        assert!(!s.renew_lease(run, "h:1:a", now + 60_000, 5, 1).await.unwrap(), "the old driver lost it");
        assert!(s.renew_lease(run, "h:2:b", now + 60_000, 5000, 1000).await.unwrap());
        assert!(!s.claim_run(run, "h:3:c", None, now + 59_000, now + 90_000).await.unwrap());
        assert!(s.claim_run(run, "h:3:c", None, now + 61_000, now + 90_000).await.unwrap(), "an expired lease is taken");
        s.release_run(run, "h:3:c").await.unwrap();
        let row = s.run(run).await.unwrap();
        assert_eq!((row.driver, row.wall_ms, row.guest_ms), (None, 5000, 1000));
    }
}

#[tokio::test]
async fn a_bad_database_setting_is_a_clear_error() {
    let e = Store::open("/proc/temper/t.db").await.err().unwrap().to_string();
    assert!(e.contains("/proc/temper/t.db"), "{e}");
    let e = Store::open("mysql://x/y").await.err().unwrap().to_string();
    assert!(e.contains("mysql://") && e.contains("postgres://"), "an unknown scheme is refused, not taken for a path: {e}");
    assert!(!std::path::Path::new("mysql:").exists());
    assert_eq!(temper_store::Location::parse("postgres://u@h/d").unwrap(), temper_store::Location::Postgres("postgres://u@h/d".into()));
    assert_eq!(temper_store::Location::parse("sqlite://a/b.db").unwrap(), temper_store::Location::Sqlite("a/b.db".into()));
    assert_eq!(temper_store::Location::parse("a/b.db").unwrap(), temper_store::Location::Sqlite("a/b.db".into()));
}

#[tokio::test]
async fn sqlite_opens_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let s = Store::open(path.to_str().unwrap()).await.unwrap();
    s.create_run(&new_run()).await.unwrap();
    assert!(dir.path().join("t.db-wal").exists(), "WAL journal in use");
    assert_eq!(s.integrity_check().await.unwrap(), "ok");
}

/// Every value of every enum is accepted by both schemas, and a value the code does not know is
/// refused by the database itself.
#[tokio::test]
async fn the_schemas_check_exactly_the_code_vocabulary() {
    fn all<T: std::fmt::Display>(v: &[T]) -> Vec<String> {
        v.iter().map(ToString::to_string).collect()
    }
    let columns: Vec<(&str, &str, Vec<String>)> = vec![
        ("runs", "status", all(RunStatus::ALL)),
        ("runs", "phase", all(Phase::ALL)),
        ("rules", "status", all(RuleStatus::ALL)),
        ("rules", "initial_result", all(ScanResult::ALL)),
        ("rules", "final_result", all(ScanResult::ALL)),
        ("rules", "escalation_cause", all(EscalationCause::ALL)),
        ("attempts", "state", all(AttemptState::ALL)),
        ("attempts", "source", all(FixSource::ALL)),
        ("attempts", "verdict", all(Verdict::ALL)),
        ("attempts", "revert_method", all(RevertMethod::ALL)),
        ("attempts", "kept", all(KeptState::ALL)),
        ("attempts", "rule_result", all(ScanResult::ALL)),
        ("turns", "role", all(TurnRole::ALL)),
        ("turns", "mode", all(TurnMode::ALL)),
        ("events", "kind", all(EventKind::ALL)),
    ];
    for b in backends("the_schemas_check_exactly_the_code_vocabulary").await {
        let s = &b.store;
        let run = s.create_run(&new_run()).await.unwrap();
        s.add_rule(run, &rule("r", RuleStatus::Pending)).await.unwrap();
        let (attempt, _) = s.start_attempt(run, &attempt("r")).await.unwrap();
        let record = temper_journal::turn::TurnRecord::new(TurnRole::Worker, "m");
        let turn = s.add_turn(run, &NewTurn { attempt_id: Some(attempt), rule_id: None, record: &record }).await.unwrap();
        s.event(run, None, &scan_event()).await.unwrap();
        let event = s.events(run, None).await.unwrap()[0].id.get();
        for (table, column, values) in &columns {
            let id = match *table {
                "runs" => run.get(),
                "rules" => s.rule(run, "r").await.unwrap().unwrap().id,
                "attempts" => attempt.get(),
                "turns" => turn.get(),
                _ => event,
            };
            for v in values {
                let sql = format!("UPDATE {table} SET {column} = '{v}' WHERE id = {id}");
                assert!(s.raw_rows(&sql).await.is_ok(), "{}: {table}.{column} refuses `{v}`", b.name);
            }
            let bad = format!("UPDATE {table} SET {column} = 'no_such_value' WHERE id = {id}");
            assert!(s.raw_rows(&bad).await.is_err(), "{}: {table}.{column} takes a value the code does not know", b.name);
        }
    }
}

/// A database written before the typed states (the 0001 and 0002 migrations, with their
/// strings) is migrated: a replay gets its original source, `script+snapshot` its new name,
/// and an interrupted attempt stops counting as a try.
#[tokio::test]
async fn an_older_sqlite_database_is_migrated_to_the_typed_states() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old");
    std::fs::create_dir_all(&old).unwrap();
    let migrations = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations/sqlite");
    for f in ["0001_init.sql", "0002_regression_batches.sql"] {
        std::fs::copy(migrations.join(f), old.join(f)).unwrap();
    }
    let path = dir.path().join("t.db");
    let opts = sqlx::sqlite::SqliteConnectOptions::new().filename(&path).create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(opts).await.unwrap();
    sqlx::migrate::Migrator::new(old.as_path()).await.unwrap().run(&pool).await.unwrap();
    sqlx::raw_sql(
        "INSERT INTO runs (id, started_at, status, skill, profile, datastream, target, agent) VALUES (1, 't', 'finished', 's', 'p', 'd', 't', 'stock');
         INSERT INTO rules (run_id, rule_id, initial_result, status, attempts) VALUES (1, 'r', 'fail', 'fixed', 3);
         INSERT INTO attempts (run_id, rule_id, n, state, source, fix_script, checkpoint, started_at, verdict, revert_method)
           VALUES (1, 'r', 1, 'done', 'stock', 'F', 'b', 't', 'fixed', 'script+snapshot'),
                  (1, 'r', 2, 'interrupted', 'stock', 'G', 'b', 't', 'interrupted', 'snapshot'),
                  (1, 'r', 3, 'done', 'replay', 'F', 'b', 't', 'fixed', 'none');",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let s = Store::open(path.to_str().unwrap()).await.unwrap();
    let a = s.attempts(RunId::new(1).unwrap()).await.unwrap();
    assert_eq!(a[0].revert_method, Some(RevertMethod::ScriptThenSnapshot));
    assert_eq!((a[2].spec.source, a[2].spec.replayed), (FixSource::Stock, true), "the replay keeps the stock fix's source");
    assert_eq!(s.rule(RunId::new(1).unwrap(), "r").await.unwrap().unwrap().attempts, 2, "the interrupted attempt no longer counts");
    let run = s.run(RunId::new(1).unwrap()).await.unwrap();
    assert_eq!((run.status, run.baseline.as_str()), (RunStatus::Finished, "baseline"));
    assert_eq!(s.integrity_check().await.unwrap(), "ok");
}

/// A verified fix is remembered once per skill, rule and script; each try is counted, a keep
/// clears the failures, two failures in a row retire it, and a retired fix is offered no more.
#[tokio::test]
async fn remembered_fixes_count_their_tries_and_retire_after_two_failures_in_a_row() {
    for b in backends("remembered_fixes_count_their_tries_and_retire_after_two_failures_in_a_row").await {
        let s = &b.store;
        let run = s.create_run(&new_run()).await.unwrap();
        s.add_rule(run, &rule("r", RuleStatus::Pending)).await.unwrap();
        let (attempt, _) = s.start_attempt(run, &AttemptSpec { source: FixSource::Memory, ..attempt("r") }).await.unwrap();
        let new = |script: &str| NewRememberedFix {
            run_id: run,
            skill: "debian12-anssi".into(),
            rule_id: "r".into(),
            fix_script: script.into(),
            revert_script: "undo".into(),
            description: "d".into(),
            attempt_id: attempt,
        };
        s.remember_fix(&new("fix A")).await.unwrap();
        s.remember_fix(&new("fix A")).await.unwrap();
        assert_eq!(s.remembered_fixes().await.unwrap().len(), 1, "{}: remembered once", b.name);
        assert!(s.remembered_fix("another-skill", "r").await.unwrap().is_none(), "per skill");
        assert_eq!(s.remembered_rules("debian12-anssi").await.unwrap(), ["r"], "{}", b.name);
        assert!(s.remembered_rules("another-skill").await.unwrap().is_empty(), "per skill");
        let a = s.remembered_fix("debian12-anssi", "r").await.unwrap().expect("offered");
        assert_eq!((a.fix_script.as_str(), a.tried, a.kept), ("fix A", 0, 0));

        let a1 = s.count_remembered(a.id, false).await.unwrap();
        assert_eq!((a1.tried, a1.kept, a1.failed_in_row, a1.retired_at.is_some()), (1, 0, 1, false));
        let a2 = s.count_remembered(a.id, true).await.unwrap();
        assert_eq!((a2.tried, a2.kept, a2.failed_in_row), (2, 1, 0), "a keep clears the failures");
        s.count_remembered(a.id, false).await.unwrap();
        let retired = s.count_remembered(a.id, false).await.unwrap();
        assert_eq!((retired.tried, retired.kept, retired.failed_in_row), (4, 1, 2));
        assert!(retired.retired_at.is_some(), "{}: two failures in a row retire it", b.name);
        assert!(s.remembered_fix("debian12-anssi", "r").await.unwrap().is_none(), "a retired fix is not offered");

        s.remember_fix(&new("fix B")).await.unwrap();
        let fb = s.remembered_fix("debian12-anssi", "r").await.unwrap().expect("the other fix");
        assert_eq!(fb.fix_script, "fix B");
        s.forget(MemoryKind::Fixes, fb.id).await.unwrap();
        assert!(s.remembered_fix("debian12-anssi", "r").await.unwrap().is_none(), "forgetting retires it");
        assert!(s.forget(MemoryKind::Fixes, fb.id).await.is_err(), "retiring twice is an error");
        assert_eq!(s.remembered_fixes().await.unwrap().len(), 2, "retired fixes stay listed");
        assert!(s.remembered_rules("debian12-anssi").await.unwrap().is_empty(), "{}: both retired, none in force", b.name);
    }
}

/// The ETA's memory: a finished run leaves each settled rule's time for its skill
/// (`RunJournal::finish`); the skill's newest five runs are recalled, another skill's never; a
/// run remembered again has its times replaced.
#[tokio::test]
async fn a_finished_run_leaves_its_rule_times_for_its_skill() {
    for b in backends("a_finished_run_leaves_its_rule_times_for_its_skill").await {
        let s = &b.store;
        let times = |run: RunId, secs: f64| vec![RuleTime { run_id: run, rule_id: "r".into(), secs }];
        let mut runs = Vec::new();
        for i in 0..7 {
            let run = s.create_run(&new_run()).await.unwrap();
            s.remember_times(run, &times(run, f64::from(i))).await.unwrap();
            runs.push(run);
        }
        let other = s.create_run(&NewRun { skill: "another".into(), ..new_run() }).await.unwrap();
        s.remember_times(other, &times(other, 99.0)).await.unwrap();
        let recalled = s.recalled_times("debian12-anssi").await.unwrap();
        let got: Vec<(RunId, f64)> = recalled.iter().map(|t| (t.run_id, t.secs)).collect();
        assert_eq!(got, runs[2..].iter().zip(2..).map(|(r, i)| (*r, f64::from(i))).collect::<Vec<_>>(), "{}: the newest five", b.name);
        s.remember_times(runs[6], &[]).await.unwrap();
        let again: Vec<RunId> = s.recalled_times("debian12-anssi").await.unwrap().iter().map(|t| t.run_id).collect();
        assert_eq!(again, runs[1..6], "{}: the last remembered again with nothing, the five before it", b.name);
        assert_eq!(s.recalled_times("another").await.unwrap().len(), 1);

        // A run finished through its journal remembers its settled rules' times.
        let run = s.create_run(&new_run()).await.unwrap();
        let journal = RunJournal::new(s, run);
        journal.event(None, &scan_event()).await.unwrap();
        journal.event(Some("r2"), &EventData::Escalate { reason: "x".into(), cause: None }).await.unwrap();
        assert!(!journal.remembered().await.unwrap().is_empty(), "the runs before it");
        journal.finish(&RunSummary { run: Some(run), ..RunSummary::default() }).await.unwrap();
        let mine: Vec<String> =
            s.recalled_times("debian12-anssi").await.unwrap().into_iter().filter(|t| t.run_id == run).map(|t| t.rule_id).collect();
        assert_eq!(mine, ["r2"], "{}", b.name);
        assert_eq!(s.run(run).await.unwrap().status, RunStatus::Finished);
    }
}
