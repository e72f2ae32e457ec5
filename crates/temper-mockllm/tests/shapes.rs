//! The mock's replies against replies captured from a real llama.cpp server (xllamacpp
//! 2026.10, Qwen2.5-Coder-0.5B), over real HTTP.
use serde_json::{Value, json};
use temper_mockllm::{MockLlm, Scripted, ScriptedCall};

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

async fn post(url: &str, body: Value) -> (u16, Option<String>, Value) {
    let resp = reqwest::Client::new().post(format!("{url}/v1/chat/completions")).json(&body).send().await.unwrap();
    let status = resp.status().as_u16();
    let retry_after = resp.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
    (status, retry_after, resp.json().await.unwrap())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every key the mock sends exists in the real reply with the same JSON type. llama.cpp sends
/// `content: ""` beside tool calls where vLLM (and the mock) send `null`: both are allowed there.
fn assert_subset(mock: &Value, real: &Value, path: &str) {
    match (mock, real) {
        (Value::Object(m), Value::Object(r)) => {
            for (k, mv) in m {
                let rv = r.get(k).unwrap_or_else(|| panic!("{path}.{k}: sent by the mock, absent from llama.cpp"));
                assert_subset(mv, rv, &format!("{path}.{k}"));
            }
        }
        (Value::Array(m), Value::Array(r)) => {
            for mv in m {
                assert_subset(mv, &r[0], &format!("{path}[]"));
            }
        }
        (Value::Null, Value::String(_)) if path.ends_with("message.content") => {}
        _ => assert_eq!(kind(mock), kind(real), "{path}: type differs"),
    }
}

/// The keys a client reads are all in both replies.
fn assert_read_keys(v: &Value) {
    let c = &v["choices"][0];
    assert!(c["message"].get("content").is_some());
    assert!(c["finish_reason"].is_string());
    assert_eq!(c["message"]["role"], "assistant");
    assert!(v["usage"]["prompt_tokens"].is_u64() && v["usage"]["completion_tokens"].is_u64() && v["usage"]["total_tokens"].is_u64());
    assert_eq!(v["object"], "chat.completion");
    assert!(v["id"].is_string() && v["created"].is_u64() && v["model"].is_string());
}

#[tokio::test]
async fn tool_call_reply_matches_llama_cpp() {
    let real = fixture("llamacpp-tool-calls.json");
    let mock = MockLlm::start(vec![Scripted::tool_call("apply_fix", json!({"fix_script": "a", "revert_script": "b", "description": "c"}))])
        .await
        .unwrap();
    let (status, _, got) = post(&mock.url(), json!({"model": "qwen", "messages": []})).await;
    assert_eq!(status, 200);
    assert_subset(&got, &real, "");
    assert_read_keys(&got);
    assert_read_keys(&real);
    let call = &got["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["type"], "function");
    let args: Value = serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args["revert_script"], "b", "arguments travel as a JSON string");
    assert_eq!(got["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(got["model"], "qwen", "the requested model is echoed");
}

#[tokio::test]
async fn text_reply_matches_llama_cpp() {
    let real = fixture("llamacpp-text.json");
    let mock = MockLlm::start(vec![Scripted::text("hello")]).await.unwrap();
    let (_, _, got) = post(&mock.url(), json!({"messages": []})).await;
    assert_subset(&got, &real, "");
    assert!(got["choices"][0]["message"].get("tool_calls").is_none(), "llama.cpp omits tool_calls when there are none");
    assert_eq!(got["choices"][0]["finish_reason"], "stop");
}

#[tokio::test]
async fn error_body_matches_llama_cpp() {
    let real = fixture("llamacpp-error-500.json");
    let mock = MockLlm::start(vec![Scripted::status(500), Scripted::rate_limited(7)]).await.unwrap();
    let (status, _, got) = post(&mock.url(), json!({})).await;
    assert_eq!(status, 500);
    assert_subset(&got, &real, "");
    let (status, retry_after, got) = post(&mock.url(), json!({})).await;
    assert_eq!((status, retry_after.as_deref()), (429, Some("7")));
    assert_eq!(got["error"]["code"], 429);
}

#[tokio::test]
async fn faults_in_order_and_requests_recorded() {
    let mock = MockLlm::start(vec![
        Scripted::tool_calls(vec![ScriptedCall::raw("apply_fix", "{bad"), ScriptedCall::new("x", json!({}))]),
        Scripted::text("cut").finish("length"),
        Scripted::hang(0.2, Some(Scripted::text("late"))),
    ])
    .await
    .unwrap();
    let (_, _, a) = post(&mock.url(), json!({"n": 1})).await;
    let calls = a["choices"][0]["message"]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["function"]["arguments"], "{bad");
    assert_ne!(calls[0]["id"], calls[1]["id"]);
    let (_, _, b) = post(&mock.url(), json!({"n": 2})).await;
    assert_eq!(b["choices"][0]["finish_reason"], "length");
    let started = std::time::Instant::now();
    let (_, _, c) = post(&mock.url(), json!({"n": 3})).await;
    assert!(started.elapsed().as_millis() >= 200);
    assert_eq!(c["choices"][0]["message"]["content"], "late");
    let (status, _, _) = post(&mock.url(), json!({"n": 4})).await;
    assert_eq!(status, 410, "an exhausted script answers 410");
    let ns: Vec<i64> = mock.requests().iter().map(|r| r["n"].as_i64().unwrap()).collect();
    assert_eq!(ns, [1, 2, 3, 4]);
    assert_eq!(mock.remaining(), 0);
    mock.shutdown().await;
}

/// A request offering `tools` (OpenAI's function-tool shape).
fn offering(tools: &[&str]) -> Value {
    let tools: Vec<Value> = tools.iter().map(|t| json!({"type": "function", "function": {"name": t, "parameters": {}}})).collect();
    json!({"messages": [], "tools": tools})
}

fn called(reply: &Value) -> String {
    let call = &reply["choices"][0]["message"]["tool_calls"][0]["function"];
    format!("{}:{}", call["name"].as_str().unwrap(), call["arguments"].as_str().unwrap())
}

#[tokio::test]
async fn by_tool_each_role_takes_its_own_replies_in_order() {
    let fix = |n: u32| Scripted::tool_call("apply_fix", json!({ "n": n }));
    let script = vec![
        Scripted::tool_call("select_rule", json!({"n": 1})),
        fix(1),
        fix(2),
        Scripted::tool_call("reflect", json!({"n": 1})),
        Scripted::tool_call("select_rule", json!({"n": 2})),
    ];
    let mock = MockLlm::start_by_tool(script.clone()).await.unwrap();
    let url = mock.url();
    // The run's path: pick, fix, then (the fix failed) reflect, pick again, fix again.
    let mut got = Vec::new();
    for tools in [&["select_rule"][..], &["apply_fix"], &["reflect"], &["select_rule", "decide"], &["apply_fix"]] {
        got.push(called(&post(&url, offering(tools)).await.2));
    }
    let want = ["select_rule:{\"n\":1}", "apply_fix:{\"n\":1}", "reflect:{\"n\":1}", "select_rule:{\"n\":2}", "apply_fix:{\"n\":2}"];
    assert_eq!(got, want);
    assert_eq!(mock.remaining(), 0);
    let (status, _, _) = post(&url, offering(&["apply_fix"])).await;
    assert_eq!(status, 410, "no reply left for the tool");
    mock.shutdown().await;
    // In the script's order, the same requests get the script's order.
    let seq = MockLlm::start(script).await.unwrap();
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(called(&post(&seq.url(), offering(&["reflect"])).await.2));
    }
    assert_eq!(got, ["select_rule:{\"n\":1}", "apply_fix:{\"n\":1}", "apply_fix:{\"n\":2}"]);
    seq.shutdown().await;
}

#[test]
fn script_file_format_parses_and_rejects_typos() {
    let text = r#"[
      {"kind": "reply", "tool_calls": [{"name": "apply_fix", "arguments": {"fix_script": "a", "revert_script": "b", "description": "c"}}]},
      {"kind": "reply", "content": "no tool here", "finish_reason": "stop"},
      {"kind": "reply", "tool_calls": [{"name": "apply_fix", "arguments": "{not json"}]},
      {"kind": "status", "status": 429, "retry_after": "1"},
      {"kind": "hang", "secs": 30, "then": {"kind": "reply", "content": "late"}}
    ]"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    std::fs::write(&path, text).unwrap();
    let s = temper_mockllm::load(&path).unwrap();
    assert_eq!(s.len(), 5);
    assert_eq!(s[3], Scripted::rate_limited(1));
    std::fs::write(&path, r#"[{"kind": "reply", "contnet": "typo"}]"#).unwrap();
    let e = temper_mockllm::load(&path).unwrap_err().to_string();
    assert!(e.contains("contnet"), "{e}");
}
