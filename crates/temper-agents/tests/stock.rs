//! The stock agent (no LLM) and the tiered agent (stock first, LLM after).
mod common;

use common::*;
use serde_json::json;
use temper_agents::derived::DERIVED_PLAN;
use temper_agents::{StockAgent, TieredAgent};
use temper_core::agent::{AgentError, Architect, Reflector, Worker};
use temper_journal::AttemptNo;
use temper_journal::FixSource;
use temper_journal::turn::Decision;
use temper_mockllm::{MockLlm, Scripted};

#[tokio::test]
async fn stock_architect_picks_the_first_untried_stock_candidate() {
    let mut ctx = pick_context();
    ctx.candidates =
        vec![candidate("a_no_stock", false, 0), candidate("b_tried", true, 1), candidate("c", true, 0), candidate("d", true, 0)];
    let turn = StockAgent.select(&ctx).await.unwrap();
    assert_eq!(turn.value.rule_id, "c");
    assert!(turn.records.is_empty());
    ctx.candidates.retain(|c| c.rule_id != "c" && c.rule_id != "d");
    let turn = StockAgent.select(&ctx).await.unwrap();
    assert_eq!((turn.value.rule_id.as_str(), turn.value.plan.as_str()), ("a_no_stock", DERIVED_PLAN), "then one to derive a fix for");
    ctx.candidates.retain(|c| c.rule_id != "a_no_stock");
    // A rule back among the candidates after its fix was rolled back (the reboot proof, a
    // batch's regression): the Worker derives a fix for it, or says why not.
    let turn = StockAgent.select(&ctx).await.unwrap();
    assert_eq!((turn.value.rule_id.as_str(), turn.value.plan.as_str()), ("b_tried", DERIVED_PLAN));
    ctx.candidates.clear();
    assert!(matches!(StockAgent.select(&ctx).await, Err(AgentError::NoFix(_))));
}

#[tokio::test]
async fn stock_reengage_escalates_after_one_attempt() {
    let mut ctx = reengage_context();
    ctx.attempts = 1;
    let d = StockAgent.reengage(&ctx).await.unwrap().value;
    let reason = "stock fix failed; no LLM configured; no derived fix (no evidence to derive from): no OVAL evidence for the rule (the xccdf engine collects none)";
    assert_eq!(d, Decision::Escalate { reason: reason.into() });
    ctx.attempts = 0;
    assert_eq!(StockAgent.reengage(&ctx).await.unwrap().value, Decision::Continue { plan: "old plan".into() });
}

#[tokio::test]
async fn stock_worker_submits_the_datastream_fix() {
    let ctx = fix_context();
    let (fix, source) = StockAgent.propose(&ctx).await.unwrap().value;
    assert_eq!(source, FixSource::Stock);
    assert_eq!(Some(fix.fix_script), ctx.stock_fix);
    assert_eq!(fix.revert_script, "", "the checkpoint snapshot is the stock fix's revert");
    assert_eq!(fix.description, format!("stock fix for {ROOT_LOGIN}"));
    let mut none = fix_context();
    none.stock_fix = Some("  ".into());
    assert!(matches!(StockAgent.propose(&none).await, Err(AgentError::NoFix(m)) if m.contains(ROOT_LOGIN)));
}

#[tokio::test]
async fn stock_reflector_is_deterministic() {
    let ctx = reflect_context();
    let a = StockAgent.reflect(&ctx).await.unwrap().value;
    let b = StockAgent.reflect(&ctx).await.unwrap().value;
    assert_eq!(a, b);
    assert_eq!(a.lesson, format!("stock fix did not fix {ROOT_LOGIN}: still_failing"));
    assert_eq!(a.banned, None);
    assert_eq!(a.distilled, "stock fix: still_failing: rule result: fail");
    let mut long = ctx.clone();
    long.diagnostics = "x".repeat(500);
    assert_eq!(StockAgent.reflect(&long).await.unwrap().value.distilled.chars().count(), 200);
}

#[tokio::test]
async fn tiered_uses_stock_on_the_first_attempt_without_calling_the_llm() {
    let mock = MockLlm::start(vec![]).await.unwrap();
    let tiered = TieredAgent::new(agent(&mock.url()));
    let mut ctx = fix_context();
    ctx.attempt = AttemptNo::FIRST;
    let (fix, source) = tiered.propose(&ctx).await.unwrap().value;
    assert_eq!(source, FixSource::Stock);
    assert_eq!(Some(fix.fix_script), ctx.stock_fix);
    assert!(mock.requests().is_empty());
}

#[tokio::test]
async fn tiered_uses_the_llm_after_the_stock_fix_or_without_one() {
    let call = || Scripted::tool_call("apply_fix", fix_args());
    let mock = MockLlm::start(vec![call(), call(), call()]).await.unwrap();
    let tiered = TieredAgent::new(agent(&mock.url()));

    let mut second = fix_context();
    second.attempt = AttemptNo::new(2).unwrap();
    let mut no_stock = fix_context();
    no_stock.attempt = AttemptNo::FIRST;
    no_stock.stock_fix = None;
    let mut remembered = fix_context();
    remembered.attempt = AttemptNo::FIRST;
    remembered.episodes = vec!["stock fix broke sshd".into()];
    for ctx in [second, no_stock, remembered] {
        let turn = tiered.propose(&ctx).await.unwrap();
        assert_eq!(turn.value.1, FixSource::Llm);
        assert_eq!(turn.records.len(), 1);
    }
    assert_eq!(mock.requests().len(), 3);
}

#[tokio::test]
async fn tiered_architect_and_reflector_are_the_llm() {
    let mock = MockLlm::start(vec![
        Scripted::tool_call("select_rule", json!({"rule_id": TMOUT, "plan": "p"})),
        Scripted::tool_call("reflect", json!({"lesson": "l", "banned": null, "preferred": "p", "distilled": "d", "tips": []})),
    ])
    .await
    .unwrap();
    let tiered = TieredAgent::new(agent(&mock.url()));
    assert_eq!(tiered.select(&pick_context()).await.unwrap().value.rule_id, TMOUT);
    assert_eq!(tiered.reflect(&reflect_context()).await.unwrap().value.lesson, "l");
    assert_eq!(mock.requests().len(), 2);
}
