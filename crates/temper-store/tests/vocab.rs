//! Vocabularies as tables: each lookup table holds exactly the values of its Rust enum, each
//! column that takes one is a foreign key to it (so one INSERT there is all a new value needs),
//! and a database at the schema before the lookup tables keeps every row when migrated.
mod common;

use common::*;

fn all<T: std::fmt::Display>(v: &[T]) -> Vec<String> {
    v.iter().map(ToString::to_string).collect()
}

/// A lookup table, its enum's values, and the `(table, column)`s that reference it.
type Vocabulary = (&'static str, Vec<String>, Vec<(&'static str, &'static str)>);

fn vocabularies(backend: &str) -> Vec<Vocabulary> {
    let mut v = vec![
        ("run_statuses", all(RunStatus::ALL), vec![("runs", "status")]),
        ("phases", all(Phase::ALL), vec![("runs", "phase")]),
        ("rule_statuses", all(RuleStatus::ALL), vec![("rules", "status")]),
        ("scan_results", all(ScanResult::ALL), vec![("rules", "initial_result"), ("rules", "final_result"), ("attempts", "rule_result")]),
        ("attempt_states", all(AttemptState::ALL), vec![("attempts", "state")]),
        ("fix_sources", all(FixSource::ALL), vec![("attempts", "source")]),
        ("verdicts", all(Verdict::ALL), vec![("attempts", "verdict")]),
        ("revert_methods", all(RevertMethod::ALL), vec![("attempts", "revert_method")]),
        ("kept_states", all(KeptState::ALL), vec![("attempts", "kept")]),
        ("turn_roles", all(TurnRole::ALL), vec![("turns", "role")]),
        ("turn_modes", all(TurnMode::ALL), vec![("turns", "mode")]),
        ("event_kinds", all(EventKind::ALL), vec![("events", "kind")]),
        ("escalation_causes", all(EscalationCause::ALL), vec![("rules", "escalation_cause")]),
        ("tip_kinds", all(TipKind::ALL), vec![("tips", "kind")]),
    ];
    if backend == "postgres" {
        v.push(("queue_states", all(QueueState::ALL), vec![("queue", "state")]));
    }
    v
}

/// No more and no fewer rows than the enum has values; and a value added to the lookup table is
/// taken by each column that references it, with nothing else changed.
#[tokio::test]
async fn the_lookup_tables_hold_exactly_the_code_vocabulary() {
    for b in backends("the_lookup_tables_hold_exactly_the_code_vocabulary").await {
        let s = &b.store;
        let run = s.create_run(&new_run()).await.unwrap();
        s.add_rule(run, &rule("r", RuleStatus::Pending)).await.unwrap();
        let (attempt, _) = s.start_attempt(run, &attempt("r")).await.unwrap();
        let record = temper_journal::turn::TurnRecord::new(TurnRole::Worker, "m");
        s.add_turn(run, &NewTurn { attempt_id: Some(attempt), rule_id: None, record: &record }).await.unwrap();
        s.raw_rows(&format!("INSERT INTO events (run_id, ts, kind) VALUES ({run}, 't', 'scan')")).await.unwrap();
        s.raw_rows(&format!("INSERT INTO tips (run_id, text, kind, created_at) VALUES ({run}, 't', 'config', 't')")).await.unwrap();
        let queued = match b.name {
            "postgres" => s.enqueue("f", &temper_journal::target::Target::default(), &[]).await.unwrap(),
            _ => 0,
        };
        for (lookup, values, columns) in vocabularies(b.name) {
            let count = |sql: String| async move { s.raw_rows(&sql).await.unwrap() };
            let listed = values.iter().map(|v| format!("'{v}'")).collect::<Vec<_>>().join(", ");
            assert_eq!(count(format!("SELECT name FROM {lookup}")).await, values.len(), "{}: {lookup} has other values", b.name);
            let known = count(format!("SELECT name FROM {lookup} WHERE name IN ({listed})")).await;
            assert_eq!(known, values.len(), "{}: {lookup} lacks a value of the code", b.name);

            s.raw_rows(&format!("INSERT INTO {lookup} (name) VALUES ('new_value')")).await.unwrap();
            for (table, column) in columns {
                // One row in each table: the run's, or the queued item.
                let row = match table {
                    "runs" => format!("id = {run}"),
                    "queue" => format!("id = {queued}"),
                    _ => format!("run_id = {run}"),
                };
                let set = |v: &str| format!("UPDATE {table} SET {column} = '{v}' WHERE {row}");
                assert!(s.raw_rows(&set("new_value")).await.is_ok(), "{}: {table}.{column} does not reference {lookup}", b.name);
                s.raw_rows(&set(&values[0])).await.unwrap();
            }
            s.raw_rows(&format!("DELETE FROM {lookup} WHERE name = 'new_value'")).await.unwrap();
        }
    }
}

/// A database at the last schema with CHECK lists, a row in every table: the same rows after the
/// migration to lookup tables (compared whole, column by column), and the store works on them.
#[tokio::test]
async fn a_database_at_the_check_list_schema_keeps_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let old = |backend: &str, last: &str| migrations_up_to(dir.path(), backend, last);
    let mut tables = vec!["runs", "rules", "attempts", "turns", "events", "lessons", "bans", "tips", "remembered_fixes"];

    let path = dir.path().join("t.db");
    let opts = sqlx::sqlite::SqliteConnectOptions::new().filename(&path).create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(opts).await.unwrap();
    let migrator = sqlx::migrate::Migrator::new(old("sqlite", "0008_shared_bans.sql")).await.unwrap();
    assert_eq!(migrator.iter().count(), 8);
    migrator.run(&pool).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(old_rows(&tables))).execute(&pool).await.unwrap();
    pool.close().await;
    let sqlite = Store::open(path.to_str().unwrap()).await.unwrap();
    assert_rows_kept(&sqlite, &tables).await;
    assert_eq!(sqlite.raw_rows("PRAGMA foreign_key_check").await.unwrap(), 0);
    assert_eq!(sqlite.integrity_check().await.unwrap(), "ok");

    tables.push("queue");
    let url = temper_store::testing::scratch_database(&temper_store::testing::server_url(), "temper_vocab_upgrade").await.unwrap();
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let migrator = sqlx::migrate::Migrator::new(old("postgres", "0007_shared_bans.sql")).await.unwrap();
    assert_eq!(migrator.iter().count(), 7);
    migrator.run(&pool).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(old_rows(&tables))).execute(&pool).await.unwrap();
    pool.close().await;
    let pg = Store::open(&url).await.unwrap().with_runs_dir(dir.path().join("runs"));
    assert_rows_kept(&pg, &tables).await;
}

/// A tip's kind from before its lookup table (an LLM's word, in any case, or none) is kept as the
/// word it is, or read as `other`, the tip kept; from then on the database refuses a kind the
/// code does not know.
#[tokio::test]
async fn a_tips_kind_from_before_its_lookup_table_is_kept_or_read_as_other() {
    let dir = tempfile::tempdir().unwrap();
    let seed = r#"INSERT INTO runs (started_at, status, skill, profile, datastream, target, agent, phase)
            VALUES ('t0', 'finished', 'debian12-anssi', 'p', 'ds.xml', 'qemu', 'llm', 'done');
        INSERT INTO tips (run_id, text, kind, created_at) SELECT id, 'a', 'config', 't' FROM runs;
        INSERT INTO tips (run_id, text, kind, created_at) SELECT id, 'b', ' Kernel', 't' FROM runs;
        INSERT INTO tips (run_id, text, kind, created_at) SELECT id, 'c', '', 't' FROM runs;
        INSERT INTO tips (run_id, text, kind, created_at) SELECT id, 'd', 'network', 't' FROM runs;"#;
    let want = [("a", "config"), ("b", "kernel"), ("c", "other"), ("d", "other")];
    let check = |s: Store| async move {
        let name = s.backend();
        assert_eq!(s.raw_rows("SELECT * FROM tips").await.unwrap(), want.len(), "{name}: every tip kept");
        for (text, kind) in want {
            let n = s.raw_rows(&format!("SELECT * FROM tips WHERE text = '{text}' AND kind = '{kind}'")).await.unwrap();
            assert_eq!(n, 1, "{name}: tip {text} is not {kind}");
        }
        assert!(s.raw_rows("UPDATE tips SET kind = 'network'").await.is_err(), "{name}: the key is in force");
    };

    let path = dir.path().join("t.db");
    let opts = sqlx::sqlite::SqliteConnectOptions::new().filename(&path).create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(opts).await.unwrap();
    let to = migrations_up_to(dir.path(), "sqlite", "0025_walk_fallback.sql");
    sqlx::migrate::Migrator::new(to).await.unwrap().run(&pool).await.unwrap();
    sqlx::raw_sql(seed).execute(&pool).await.unwrap();
    pool.close().await;
    check(Store::open(path.to_str().unwrap()).await.unwrap()).await;

    let url = temper_store::testing::scratch_database(&temper_store::testing::server_url(), "temper_tip_kinds").await.unwrap();
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let to = migrations_up_to(dir.path(), "postgres", "0024_walk_fallback.sql");
    sqlx::migrate::Migrator::new(to).await.unwrap().run(&pool).await.unwrap();
    sqlx::raw_sql(seed).execute(&pool).await.unwrap();
    pool.close().await;
    check(Store::open(&url).await.unwrap().with_runs_dir(dir.path().join("runs"))).await;
}

/// A copy of `backend`'s migrations up to `last`, in a folder of its own under `dir`.
fn migrations_up_to(dir: &std::path::Path, backend: &str, last: &str) -> std::path::PathBuf {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let to = dir.join(format!("{backend}-{last}"));
    std::fs::create_dir_all(&to).unwrap();
    for f in std::fs::read_dir(root.join(backend)).unwrap().map(|e| e.unwrap().file_name()) {
        if f.to_str().unwrap() <= last {
            std::fs::copy(root.join(backend).join(&f), to.join(&f)).unwrap();
        }
    }
    to
}

/// One row in each table, every vocabulary column set, and a copy of each table (`old_<table>`)
/// taken before the migration. Valid on both backends.
fn old_rows(tables: &[&str]) -> String {
    let mut sql = String::from(
        r#"INSERT INTO runs (started_at, status, skill, profile, datastream, target, agent, phase, current_rule, score_before,
               exit_code, target_config)
             VALUES ('t0', 'paused', 'debian12-anssi', 'p', 'ds.xml', 'qemu', 'llm', 'regression', 'r', 61.5, 2, '$TARGET');
           INSERT INTO rules (run_id, rule_id, initial_result, final_result, status, reason, attempts)
             SELECT id, 'r', 'fail', 'notchecked', 'still_failing', 'why', 1 FROM runs;
           INSERT INTO attempts (run_id, rule_id, n, state, source, fix_script, checkpoint, started_at, rule_result, health_ok,
               verdict, revert_method, kept, replayed, evidence_before)
             SELECT id, 'r', 1, 'done', 'memory', 'F', 'baseline', 't1', 'error', TRUE, 'breaks_boot', 'script_then_snapshot',
               'rolled_back', TRUE, '{"rule": "r", "outcome": "fail", "definition": "d", "title": "t", "result": "false", "tests": []}'
             FROM runs;
           INSERT INTO turns (run_id, attempt_id, rule_id, role, mode, created_at)
             SELECT run_id, id, rule_id, 'reflector', 'text', 't2' FROM attempts;
           INSERT INTO events (run_id, ts, kind, rule_id, data) SELECT id, 't3', 'ban_shared', 'r', '{"ban": 1}' FROM runs;
           INSERT INTO lessons (run_id, rule_id, lesson, created_at) SELECT id, 'r', 'l', 't4' FROM runs;
           INSERT INTO bans (run_id, rule_id, pattern, created_at) SELECT id, 'r', 'rm -rf', 't5' FROM runs;
           INSERT INTO tips (run_id, rule_id, text, kind, created_at) SELECT id, 'r', 'tip', 'config', 't6' FROM runs;
           INSERT INTO remembered_fixes (skill, rule_id, fix_script, run_id, attempt_id, tried, kept, created_at)
             SELECT 'debian12-anssi', rule_id, fix_script, run_id, id, 2, 1, 't7' FROM attempts;"#,
    );
    if tables.contains(&"queue") {
        sql.push_str(
            r#"INSERT INTO queue (fleet, target, args, state, run_id, enqueued_at) SELECT 'night', '$TARGET', '["--agent"]', 'claimed', id, 't8' FROM runs;"#,
        );
    }
    for t in tables {
        sql.push_str(&format!("CREATE TABLE old_{t} AS SELECT * FROM {t};"));
    }
    sql.replace("$TARGET", &serde_json::to_string(&temper_journal::target::Target::default()).unwrap())
}

async fn assert_rows_kept(s: &Store, tables: &[&str]) {
    let name = s.backend();
    // Columns added since (0010/0009: a rule's escalation cause; 0013/0012: its final evidence; and below)
    // are NULL in the kept rows.
    s.raw_rows("ALTER TABLE old_rules ADD COLUMN escalation_cause TEXT").await.unwrap();
    let json = if name == "postgres" { "JSONB" } else { "TEXT" };
    s.raw_rows(&format!("ALTER TABLE old_rules ADD COLUMN final_evidence {json}")).await.unwrap();
    // 0024/0023: a rule's verdict from outside the guest; 0023/0022: who approved a memory entry.
    s.raw_rows(&format!("ALTER TABLE old_rules ADD COLUMN offline_verdict {json}")).await.unwrap();
    for t in ["lessons", "bans", "tips"] {
        s.raw_rows(&format!("ALTER TABLE old_{t} ADD COLUMN approved_at TEXT")).await.unwrap();
        s.raw_rows(&format!("ALTER TABLE old_{t} ADD COLUMN approved_by TEXT")).await.unwrap();
    }
    for t in tables {
        assert_eq!(s.raw_rows(&format!("SELECT * FROM {t}")).await.unwrap(), 1, "{name}: {t}");
        for (a, b) in [("old_", ""), ("", "old_")] {
            let differ = s.raw_rows(&format!("SELECT * FROM {a}{t} EXCEPT SELECT * FROM {b}{t}")).await.unwrap();
            assert_eq!(differ, 0, "{name}: a row of {t} changed");
        }
    }
    let run = s.latest_run().await.unwrap().unwrap().id;
    let a = &s.attempts(run).await.unwrap()[0];
    assert_eq!((a.spec.source, a.verdict, a.kept), (FixSource::Memory, Some(Verdict::BreaksBoot), Some(KeptState::RolledBack)), "{name}");
    assert_eq!(s.run(run).await.unwrap().status, RunStatus::Paused, "{name}");
    let (_, n) = s.start_attempt(run, &attempt("r")).await.unwrap();
    assert_eq!(n.get(), 2, "{name}: the store goes on writing");
    assert!(s.raw_rows("UPDATE events SET kind = 'no_such_value'").await.is_err(), "{name}: the new keys are in force");
}
