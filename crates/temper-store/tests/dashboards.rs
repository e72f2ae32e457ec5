//! Every SQL query in the Grafana dashboards runs against a real, migrated database with data.
use temper_store::{AttemptOutcome, NewAttempt, NewRun, Store};

#[tokio::test]
async fn every_dashboard_query_runs_on_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path().join("t.db")).await.unwrap();
    let run = s
        .create_run(&NewRun {
            skill: "s".into(),
            profile: "p".into(),
            datastream: "d".into(),
            content_version: None,
            target: "t".into(),
            agent: "stock".into(),
            options_json: "{}".into(),
        })
        .await
        .unwrap();
    s.add_rule(run, "r", "t", "high", "fail", "escalated", Some("budget")).await.unwrap();
    let (id, _) = s
        .start_attempt(&NewAttempt {
            run_id: run,
            rule_id: "r".into(),
            plan: String::new(),
            source: "stock".into(),
            fix_script: "true".into(),
            revert_script: String::new(),
            description: String::new(),
            checkpoint: "baseline".into(),
        })
        .await
        .unwrap();
    s.finish_attempt(id, &AttemptOutcome { verdict: "still_failing".into(), revert_method: "snapshot".into(), ..Default::default() })
        .await
        .unwrap();
    s.event(run, "scan", None, serde_json::json!({})).await.unwrap();
    s.add_ban(run, "r", "x", "y").await.unwrap();

    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dashboards");
    let mut queries = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let d: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for p in d["panels"].as_array().unwrap() {
            for t in p["targets"].as_array().unwrap() {
                let sql = t["rawQueryText"].as_str().unwrap();
                let rows = sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).fetch_all(s.pool()).await;
                assert!(rows.is_ok(), "{} panel `{}`: {:?}", path.display(), p["title"], rows.err());
                queries += 1;
            }
        }
    }
    assert!(queries >= 10, "found {queries} queries");
}
