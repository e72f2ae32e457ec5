//! Tests' recorded runs: a finished (or unfinished) run of the keepalive rule on a real store,
//! with its fix kept or not, as `temper plan export` and the plan choices read them.
use temper_journal::Verdict;
use temper_journal::prelude::*;
use temper_journal::target::Target;
use temper_journal::{
    AttemptSpec, AttemptState, Evaluation, Findings, FixSource, NewRule, NewRun, RuleStatus, RunId, RunSummary, ScanResult,
};

pub const RULE: &str = "xccdf_org.ssgproject.content_rule_sshd_set_keepalive";

/// `new` recorded on `target` with the keepalive rule failing; its fix kept when `kept`; then
/// finished with `rebooted` as its summary's, unless `finished` is `None` (still running).
pub async fn run(store: &temper_store::Store, target: &Target, new: &NewRun, kept: bool, finished: Option<Option<bool>>) -> RunId {
    let run = store.create_run_on(new, target).await.unwrap();
    let rule = NewRule {
        rule_id: RULE.into(),
        title: "keepalive".into(),
        severity: "medium".into(),
        initial_result: ScanResult::Fail,
        status: RuleStatus::Pending,
        reason: None,
    };
    store.add_rule(run, &rule).await.unwrap();
    if kept {
        let a = AttemptSpec {
            rule_id: RULE.into(),
            plan: "p".into(),
            source: FixSource::Stock,
            replayed: false,
            fix_script: "echo ClientAliveInterval 300\n".into(),
            revert_script: String::new(),
            description: "keepalive".into(),
            checkpoint: "baseline".into(),
            evidence_before: None,
        };
        let (id, _) = store.start_attempt(run, &a).await.unwrap();
        store.set_attempt_state(id, AttemptState::Applied).await.unwrap();
        let e = Evaluation::new(Verdict::Fixed, "passes").found(Findings {
            fix_exit_code: Some(0),
            rule_result: Some(ScanResult::Pass),
            ..Findings::default()
        });
        store.record_fix(run, id, &e, RULE, "temper-kept").await.unwrap();
    }
    if let Some(rebooted) = finished {
        store.finish_run(run, &RunSummary { rebooted, ..RunSummary::default() }).await.unwrap();
    }
    run
}
