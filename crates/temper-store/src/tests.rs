//! The typed ids on SQLite (the tests under `tests/` run each case on PostgreSQL too, and need
//! its server).
use temper_journal::prelude::*;
use temper_journal::{EventData, EventId, JournalError, NewRun, RunId, ScanKind};

use crate::Store;

async fn store_with_run(dir: &tempfile::TempDir) -> (Store, RunId) {
    let s = Store::open(dir.path().join("t.db").to_str().unwrap()).await.unwrap().with_runs_dir(dir.path().join("runs"));
    let new = NewRun {
        skill: "s".into(),
        profile: "p".into(),
        datastream: "ds.xml".into(),
        content_version: None,
        target: "t".into(),
        agent: "stock".into(),
        options_json: "{}".into(),
        baseline: "baseline".into(),
    };
    let run = s.create_run(&new).await.unwrap();
    (s, run)
}

#[tokio::test]
async fn events_are_read_after_an_id() {
    let dir = tempfile::tempdir().unwrap();
    let (s, run) = store_with_run(&dir).await;
    let scan = EventData::Scan { kind: ScanKind::Full, counts: Default::default(), score: None, secs: 1.0, stalls: 0 };
    for _ in 0..3 {
        s.event(run, None, &scan).await.unwrap();
    }
    let all = s.events(run, None).await.unwrap();
    assert_eq!(all.len(), 3);
    let after: Vec<EventId> = s.events(run, Some(all[0].id)).await.unwrap().iter().map(|e| e.id).collect();
    assert_eq!(after, [all[1].id, all[2].id]);
    assert!(s.events(run, Some(all[2].id)).await.unwrap().is_empty());
}

/// A row numbered 0 (or below) is no id: reading it fails rather than making one.
#[tokio::test]
async fn a_row_numbered_0_reads_as_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (s, run) = store_with_run(&dir).await;
    let id = s.add_lesson(run, "r", "a lesson", "", "distilled").await.unwrap();
    assert_eq!(s.lessons(Recall::all()).await.unwrap()[0].id, id);
    s.raw_rows(&format!("UPDATE lessons SET id = 0 WHERE id = {id}")).await.unwrap();
    assert!(matches!(s.lessons(Recall::all()).await, Err(JournalError::Db(_))));
}
