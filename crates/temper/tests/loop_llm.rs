//! The loop in-process with the LLM agents against the scripted OpenAI-compatible server:
//! plateau and pause. No VM: see `sim/`.
mod sim;

use std::time::Instant;

use serde_json::json;
use sim::*;
use temper_core::journal::{EventKind, RuleStatus, RunStatus};
use temper_core::ralph::LoopError;
use temper_core::verdict::Verdict;
use temper_mockllm::{MockLlm, Scripted};
use temper_scap::Outcome;

const SUID: &str = "sysctl_fs_suid_dumpable";

fn select(rule: &str) -> Scripted {
    Scripted::tool_call("select_rule", json!({"rule_id": full(rule), "plan": "persist the setting under /etc/sysctl.d"}))
}

/// An LLM-written fix; its `# sim` lines say what it does to the modelled guest.
fn fix(body: &str) -> Scripted {
    Scripted::tool_call("apply_fix", json!({"fix_script": body, "revert_script": "true\n", "description": "set fs.suid_dumpable"}))
}

fn reflect(lesson: &str) -> Scripted {
    Scripted::tool_call(
        "reflect",
        json!({"lesson": lesson, "banned": null, "preferred": "a sysctl.d drop-in", "distilled": lesson, "tips": []}),
    )
}

fn decide(decision: &str, why: &str) -> Scripted {
    Scripted::tool_call("decide", json!({"decision": decision, "plan_or_reason": why}))
}

/// Three failures that teach the same lesson are a plateau: the Architect is asked once more,
/// offers nothing new, and the rule is escalated with that said.
#[tokio::test]
async fn the_same_lesson_three_times_is_a_plateau_and_escalates() {
    let t = Instant::now();
    let mut sim = Sim::new("plateau").await;
    sim.settings.rules = vec![SUID.into()];
    let same = "the runtime value was set but the config file was not written";
    let llm = MockLlm::start(vec![
        select(SUID),
        fix("sysctl -w fs.suid_dumpable=0\n"),
        reflect(same),
        fix("sysctl -w fs.suid_dumpable=0 # again\n"),
        reflect(same),
        decide("CONTINUE", "try once more"),
        fix("sysctl -q -w fs.suid_dumpable=0\n"),
        reflect(same),
        decide("CONTINUE", "the same again"),
    ])
    .await
    .unwrap();
    let run = sim.new_run("llm").await;
    let summary = sim.llm(run, &llm.url()).await.unwrap();
    let rule = sim.rule(run, SUID).await;
    assert_eq!(rule.status, RuleStatus::Escalated, "{summary:?}");
    let reason = rule.reason.unwrap_or_default();
    assert!(reason.contains("plateau") && reason.contains("no new approach"), "{reason}");
    let attempts = sim.attempts(run, SUID).await;
    assert_eq!(attempts.len(), 3);
    assert!(attempts.iter().all(|a| a.verdict == Some(Verdict::StillFailing)));
    assert_eq!(llm.remaining(), 0, "every scripted reply was asked for");
    took("the_same_lesson_three_times_is_a_plateau_and_escalates", t);
}

/// The endpoint answers 503: the run pauses with the turn recorded, nothing half-done. Resumed
/// against a working endpoint, it picks up and fixes the rule.
#[tokio::test]
async fn an_unavailable_llm_pauses_the_run_and_resume_finishes_it() {
    let t = Instant::now();
    let mut sim = Sim::new("pause").await;
    sim.settings.rules = vec![SUID.into()];
    let down = MockLlm::start(vec![Scripted::Status { status: 503, retry_after: None, message: Some("overloaded".into()) }]).await.unwrap();
    let run = sim.new_run("llm").await;
    let e = sim.llm(run, &down.url()).await.unwrap_err();
    assert!(matches!(&e, LoopError::Paused { run: r, .. } if *r == run), "{e}");
    assert_eq!(sim.store.run(run).await.unwrap().status, RunStatus::Paused);
    assert!(sim.attempts(run, SUID).await.is_empty(), "no attempt was started");
    let turns = sim.store.turns(run).await.unwrap();
    assert_eq!(turns.len(), 1, "the failed call is recorded");

    let up = MockLlm::start(vec![
        select(SUID),
        fix(&format!("# sim pass {}\nprintf 'fs.suid_dumpable = 0\\n' > /etc/sysctl.d/60-suid.conf\n", full(SUID))),
    ])
    .await
    .unwrap();
    let summary = sim.llm(run, &up.url()).await.unwrap();
    assert_eq!(sim.rule(run, SUID).await.status, RuleStatus::Fixed, "{summary:?}");
    assert_eq!(sim.guest.result(SUID), Some(Outcome::Pass));
    assert_eq!(summary.segments, 2);
    let paused = sim.store.events(run, 0).await.unwrap().into_iter().filter(|e| e.kind == EventKind::Paused).count();
    assert_eq!(paused, 1);
    took("an_unavailable_llm_pauses_the_run_and_resume_finishes_it", t);
}
