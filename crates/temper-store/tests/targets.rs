//! A run keeps its target whole (JSON in SQLite, JSONB in PostgreSQL), so `temper resume`
//! drives the machine the run started on.
mod common;

use common::*;
use temper_journal::target::Target;

#[tokio::test]
async fn a_run_keeps_its_target_whole_and_nothing_else_is_accepted() {
    for b in backends("a_run_keeps_its_target_whole_and_nothing_else_is_accepted").await {
        let s = &b.store;
        let target = Target {
            name: "lane-b".into(),
            libvirt_uri: "qemu+ssh://root@127.0.0.1/system?no_verify=1".into(),
            domain: "temper-b".into(),
            baseline: "baseline-b".into(),
            ssh_port: 2223,
            profile: Some("xccdf_org.ssgproject.content_profile_standard".into()),
            ..Target::default()
        };
        let run =
            s.create_run_on(&NewRun { target: target.label(), baseline: target.baseline.clone(), ..new_run() }, &target).await.unwrap();
        let row = s.run(run).await.unwrap();
        assert_eq!(row.target_config.as_ref(), Some(&target), "{}", b.name);
        assert_eq!(row.target, target.label());
        let old = s.create_run(&new_run()).await.unwrap();
        assert_eq!(s.run(old).await.unwrap().target_config, None, "{}: a run without a stored target", b.name);
        let listed = s.list_runs(10).await.unwrap();
        assert_eq!(listed.iter().find(|r| r.id == run).and_then(|r| r.target_config.as_ref()), Some(&target));

        let insert = |v: &str| {
            format!(
                "INSERT INTO runs (started_at, status, skill, profile, datastream, target, agent, target_config)
                 VALUES ('t', 'running', 's', 'p', 'd', 't', 'stock', '{v}')"
            )
        };
        assert!(s.raw_rows(&insert("not json")).await.is_err(), "{}: the column holds JSON only", b.name);
        assert!(s.raw_rows(&insert(r#"{"name": "x"}"#)).await.is_ok(), "{}: an object is accepted", b.name);
    }
}
