//! Every SQL query in the Grafana dashboards runs against a real, migrated database with data:
//! the SQLite dashboard (`rawQueryText`) on SQLite, its PostgreSQL twin (`rawSql`) on PostgreSQL.
mod common;

use common::*;

#[tokio::test]
async fn every_dashboard_query_runs_on_its_backend() {
    for b in backends("every_dashboard_query_runs_on_its_backend").await {
        let s = &b.store;
        let run = s.create_run(&new_run()).await.unwrap();
        s.add_rule(run, &NewRule { reason: Some("budget".into()), ..rule("r", RuleStatus::Escalated) }).await.unwrap();
        let (id, _) = s.start_attempt(run, &attempt("r")).await.unwrap();
        let e = Evaluation { revert_method: RevertMethod::Snapshot, ..Evaluation::new(Verdict::StillFailing, "x") };
        s.finish_attempt(id, &e).await.unwrap();
        let record = temper_journal::turn::TurnRecord::new(TurnRole::Worker, "m");
        s.add_turn(run, &NewTurn { attempt_id: Some(id), rule_id: Some("r"), record: &record }).await.unwrap();
        s.event(run, None, &scan_event()).await.unwrap();
        s.add_ban(run, "r", "x", "y").await.unwrap();

        let key = if b.name == "postgres" { "rawSql" } else { "rawQueryText" };
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dashboards");
        let mut queries = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let d: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for p in d["panels"].as_array().unwrap() {
                for t in p["targets"].as_array().into_iter().flatten() {
                    let Some(sql) = t[key].as_str() else { continue };
                    let rows = s.raw_rows(sql).await;
                    assert!(rows.is_ok(), "{} {} panel `{}`: {:?}", b.name, path.display(), p["title"], rows.err());
                    queries += 1;
                }
            }
        }
        assert!(queries >= 10, "{}: found {queries} queries", b.name);
    }
}
