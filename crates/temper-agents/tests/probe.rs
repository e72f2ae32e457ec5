//! `probe` over the scripted server: the report's fields and JSON keys.
mod common;

use common::*;
use serde_json::{Value, json};
use temper_agents::probe;
use temper_mockllm::{MockLlm, Scripted, ScriptedCall};

#[tokio::test]
async fn native_probe_reports_usage_and_serializes_exact_keys() {
    let mock = MockLlm::start(vec![
        Scripted::tool_calls(vec![ScriptedCall::new("apply_fix", fix_args()), ScriptedCall::new("apply_fix", fix_args())]).usage(200, 40),
    ])
    .await
    .unwrap();
    let r = probe(&config(&mock.url())).await;
    assert!(r.ok, "{r:?}");
    assert_eq!((r.mode.as_str(), r.dropped_calls, r.retries), ("native", 1, 0));
    assert_eq!((r.prompt_tokens, r.completion_tokens), (Some(200), Some(40)));
    assert_eq!(r.error, None);
    let v = serde_json::to_value(&r).unwrap();
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["completion_tokens", "dropped_calls", "error", "latency_ms", "mode", "ok", "prompt_tokens", "retries"]);
    assert_eq!(v["error"], Value::Null);
    let req = &mock.requests()[0];
    assert_eq!(req["tools"][0]["function"]["name"], "apply_fix");
}

#[tokio::test]
async fn text_probe_after_a_retry() {
    let body = format!("```json\n{}\n```", json!({"name": "apply_fix", "arguments": fix_args()}));
    let mock = MockLlm::start(vec![Scripted::status(503), Scripted::text(&body)]).await.unwrap();
    let r = probe(&config(&mock.url())).await;
    assert!(r.ok);
    assert_eq!((r.mode.as_str(), r.retries), ("text", 1));
}

#[tokio::test]
async fn failed_probe_carries_the_reason() {
    let mock = MockLlm::start(vec![Scripted::text("no idea")]).await.unwrap();
    let r = probe(&config(&mock.url())).await;
    assert!(!r.ok);
    assert_eq!(r.mode.as_str(), "none");
    assert!(r.error.unwrap().contains("no apply_fix call"));
    assert!(r.prompt_tokens.is_some());
}

#[tokio::test]
async fn unreachable_probe_is_not_ok() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut cfg = config(&format!("http://127.0.0.1:{port}/v1"));
    cfg.max_retries = 1;
    let r = probe(&cfg).await;
    assert!(!r.ok);
    assert_eq!(r.retries, 1);
    assert!(r.error.unwrap().contains("unavailable"));
}
