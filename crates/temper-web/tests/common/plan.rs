//! A finished run that applied a proven plan: step 1 kept, step 2's fix failed (a hostile
//! reason) and the stock fix redid it, step 3's rule passed already. The plan's folder, as the
//! run was given it, is hostile too.
use temper_journal::Verdict;

use super::*;

impl WebFixture {
    pub async fn planned() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("temper.db").to_str().unwrap()).await.unwrap();
        let fixes: Vec<serde_json::Value> = [FIXED, HOSTILE, OPEN]
            .iter()
            .enumerate()
            .map(|(i, r)| serde_json::json!({"n": i + 1, "rule": r, "fix": {"fix_script": "true", "revert_script": "", "description": ""}}))
            .collect();
        let options = serde_json::json!({"plan": {"dir": hostile(), "from_run": 7, "fixes": fixes}});
        let run = store
            .create_run(&NewRun {
                skill: "debian12-anssi".into(),
                profile: "xccdf_org.ssgproject.content_profile_standard".into(),
                datastream: DATASTREAM.into(),
                content_version: Some("0.1.76".into()),
                target: "libvirt:temper-second".into(),
                agent: "stock".into(),
                options_json: options.to_string(),
                baseline: "baseline".into(),
            })
            .await
            .unwrap();
        for (id, initial) in [(FIXED, ScanResult::Fail), (HOSTILE, ScanResult::Fail), (OPEN, ScanResult::Pass)] {
            let status = RuleStatus::of_outcome(initial);
            let rule =
                NewRule { rule_id: id.into(), title: id.into(), severity: "medium".into(), initial_result: initial, status, reason: None };
            store.add_rule(run, &rule).await.unwrap();
        }
        let f = Self { _dir: dir, store, run };
        let kept = Evaluation::new(Verdict::Fixed, "the rule passes")
            .found(Findings { rule_result: Some(ScanResult::Pass), ..Findings::default() });
        let a = f.attempt_from(FIXED, FixSource::Plan).await;
        f.store.record_fix(run, a, &kept, FIXED, "temper-a1").await.unwrap();
        let a = f.attempt_from(HOSTILE, FixSource::Plan).await;
        f.store.finish_attempt(a, &Evaluation::new(Verdict::ApplyFailed, hostile())).await.unwrap();
        let a = f.attempt_from(HOSTILE, FixSource::Stock).await;
        f.store.record_fix(run, a, &kept, HOSTILE, "temper-a2").await.unwrap();
        f.store.finish_run(run, &RunSummary { rebooted: Some(true), ..RunSummary::default() }).await.unwrap();
        f
    }
}
