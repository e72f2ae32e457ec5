//! Both backends for every store test: a SQLite file in a temp dir, and a fresh database on the
//! test PostgreSQL server (`TEMPER_TEST_PG`, else `tests/pg/start.sh`). No mock database.
#![allow(dead_code)]
// Not every test binary takes a lease.
#[allow(unused_imports)]
pub use temper_core::lease::{LEASE_FOR, Lease, LeaseError};
pub use temper_journal::Verdict;
pub use temper_journal::*;
pub use temper_store::Store;

/// One open store, and what keeps its files alive.
pub struct Backend {
    pub store: Store,
    pub name: &'static str,
    pub _dir: tempfile::TempDir,
    /// What `Store::open` was given (to reopen it).
    pub spec: String,
}

/// A SQLite store and a PostgreSQL store, each new and empty. Prints which ran.
pub async fn backends(test: &str) -> Vec<Backend> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db").to_str().unwrap().to_string();
    let sqlite = Backend { store: Store::open(&path).await.unwrap(), name: "sqlite", _dir: dir, spec: path };
    let url = temper_store::testing::scratch_database(&temper_store::testing::server_url(), "temper_store_test").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&url).await.unwrap().with_runs_dir(dir.path().join("runs"));
    let pg = Backend { store, name: "postgres", _dir: dir, spec: url };
    eprintln!("{test}: backends sqlite and postgres ({})", pg.store.describe());
    vec![sqlite, pg]
}

pub fn new_run() -> NewRun {
    NewRun {
        skill: "debian12-anssi".into(),
        profile: "p".into(),
        datastream: "ds.xml".into(),
        content_version: None,
        target: "qemu:///system#temper-test".into(),
        agent: "stock".into(),
        options_json: "{}".into(),
        baseline: "baseline".into(),
    }
}

pub fn rule(id: &str, status: RuleStatus) -> NewRule {
    NewRule {
        rule_id: id.into(),
        title: format!("Rule {id}"),
        severity: "medium".into(),
        initial_result: if status == RuleStatus::Passing { ScanResult::Pass } else { ScanResult::Fail },
        status,
        reason: None,
    }
}

pub fn attempt(rule: &str) -> AttemptSpec {
    AttemptSpec {
        rule_id: rule.into(),
        plan: "plan".into(),
        source: FixSource::Stock,
        replayed: false,
        fix_script: format!("fix {rule}"),
        revert_script: String::new(),
        description: "d".into(),
        checkpoint: "baseline".into(),
        evidence_before: None,
    }
}

pub fn fixed() -> Evaluation {
    let f = Findings { rule_result: Some(ScanResult::Pass), health_ok: Some(true), access_ok: Some(true), ..Findings::default() };
    Evaluation::new(Verdict::Fixed, "ok").found(f)
}

/// A first full scan's event, with nothing counted.
pub fn scan_event() -> EventData {
    EventData::Scan { kind: ScanKind::Full, counts: Default::default(), score: None, secs: 0.0, stalls: 0 }
}
