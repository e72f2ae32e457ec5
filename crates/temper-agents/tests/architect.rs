//! The Architect over the scripted server: selection by exact id, re-engagement decisions.
mod common;

use common::*;
use serde_json::json;
use temper_core::agent::{AgentError, Architect};
use temper_journal::turn::Decision;
use temper_mockllm::{MockLlm, Scripted, ScriptedCall};

#[tokio::test]
async fn selects_an_offered_rule() {
    let mock = MockLlm::start(vec![Scripted::tool_call("select_rule", json!({"rule_id": TMOUT, "plan": "set TMOUT in /etc/profile.d"}))])
        .await
        .unwrap();
    let turn = agent(&mock.url()).select(&pick_context()).await.unwrap();
    assert_eq!(turn.value.rule_id, TMOUT);
    assert_eq!(turn.value.plan, "set TMOUT in /etc/profile.d");
    assert_eq!(turn.records[0].role.as_str(), "architect");
    let req = &mock.requests()[0];
    assert_eq!(req["tools"].as_array().unwrap().len(), 1);
    assert_eq!(req["tools"][0]["function"]["name"], "select_rule");
    let user = messages(req)[1]["content"].as_str().unwrap();
    assert!(user.contains(ROOT_LOGIN) && user.contains(TMOUT), "every candidate is offered");
}

#[tokio::test]
async fn unknown_rule_id_is_rejected() {
    let mock = MockLlm::start(vec![Scripted::tool_call(
        "select_rule",
        json!({"rule_id": "xccdf_org.ssgproject.content_rule_made_up", "plan": "p"}),
    )])
    .await
    .unwrap();
    let err = agent(&mock.url()).select(&pick_context()).await.unwrap_err();
    let AgentError::Rejected { reason, records } = err else { panic!("{err:?}") };
    assert!(reason.contains("not one of the 2 offered candidates"), "{reason}");
    assert_eq!(records[0].role.as_str(), "architect");
}

#[tokio::test]
async fn substring_of_a_candidate_id_does_not_match() {
    for id in [
        "sshd_disable_root",
        "sshd_disable_root_login",
        "content_rule_sshd_disable_root_login",
        "XCCDF_ORG.SSGPROJECT.CONTENT_RULE_SSHD_DISABLE_ROOT_LOGIN",
    ] {
        let mock = MockLlm::start(vec![Scripted::tool_call("select_rule", json!({"rule_id": id, "plan": "p"}))]).await.unwrap();
        let err = agent(&mock.url()).select(&pick_context()).await.unwrap_err();
        assert!(matches!(err, AgentError::Rejected { .. }), "{id} must not match: {err:?}");
    }
}

#[tokio::test]
async fn first_valid_selection_wins_and_the_rest_are_capped() {
    let mock = MockLlm::start(vec![Scripted::tool_calls(vec![
        ScriptedCall::new("select_rule", json!({"rule_id": "sshd_disable_root", "plan": "p"})),
        ScriptedCall::new("select_rule", json!({"rule_id": ROOT_LOGIN, "plan": "drop-in"})),
        ScriptedCall::new("select_rule", json!({"rule_id": TMOUT, "plan": "p"})),
    ])])
    .await
    .unwrap();
    let turn = agent(&mock.url()).select(&pick_context()).await.unwrap();
    assert_eq!(turn.value.rule_id, ROOT_LOGIN);
    assert_eq!(turn.records[0].tool_calls_dropped, ["invalid:select_rule", "tool_call_capped:select_rule"]);
}

async fn decide_with(reply: Scripted) -> (Decision, temper_journal::turn::TurnRecord) {
    let mock = MockLlm::start(vec![reply]).await.unwrap();
    let turn = agent(&mock.url()).reengage(&reengage_context()).await.unwrap();
    let req = &mock.requests()[0];
    assert_eq!(req["tools"][0]["function"]["name"], "decide");
    assert_eq!(req["tools"][0]["function"]["parameters"]["properties"]["decision"]["enum"], json!(["CONTINUE", "PIVOT", "ESCALATE"]));
    (turn.value, turn.records.into_iter().next().unwrap())
}

#[tokio::test]
async fn reengage_decisions_by_tool_call() {
    let (d, r) = decide_with(Scripted::tool_call("decide", json!({"decision": "PIVOT", "plan_or_reason": "use a drop-in"}))).await;
    assert_eq!(d, Decision::Pivot { plan: "use a drop-in".into() });
    assert!(r.error.is_none());
    let (d, _) = decide_with(Scripted::tool_call("decide", json!({"decision": "ESCALATE", "plan_or_reason": "needs reboot"}))).await;
    assert_eq!(d, Decision::Escalate { reason: "needs reboot".into() });
    let (d, _) = decide_with(Scripted::tool_call("decide", json!({"decision": "continue", "plan_or_reason": ""}))).await;
    assert_eq!(d, Decision::Continue { plan: "old plan".into() });
}

#[tokio::test]
async fn reengage_strict_text_form() {
    let (d, r) = decide_with(Scripted::text("ESCALATE: the rule needs a reboot")).await;
    assert_eq!(d, Decision::Escalate { reason: "the rule needs a reboot".into() });
    assert_eq!(r.mode.as_str(), "text");
    assert!(r.error.is_none());
}

#[tokio::test]
async fn unusable_decisions_default_to_continue_and_say_so() {
    for reply in [
        Scripted::text("I think we should maybe PIVOT: or not"),
        Scripted::tool_call("decide", json!({"decision": "RETRY", "plan_or_reason": "x"})),
        Scripted::tool_call("decide", json!({"decision": "PIVOT", "plan_or_reason": ""})),
        Scripted::tool_calls(vec![ScriptedCall::raw("decide", "{oops")]),
        Scripted::tool_call("decide", json!({"decision": "ESCALATE", "plan_or_reason": "x"})).finish("length"),
    ] {
        let (d, r) = decide_with(reply.clone()).await;
        assert_eq!(d, Decision::Continue { plan: "old plan".into() }, "{reply:?}");
        let e = r.error.unwrap_or_default();
        assert!(e.contains("defaulted to CONTINUE"), "{reply:?}: {e}");
    }
}

#[tokio::test]
async fn reengage_unavailable_is_an_error_not_a_default() {
    let mock = MockLlm::start(vec![Scripted::status(503); 4]).await.unwrap();
    let err = agent(&mock.url()).reengage(&reengage_context()).await.unwrap_err();
    assert!(matches!(err, AgentError::Unavailable { retries: 3, .. }), "{err:?}");
}
