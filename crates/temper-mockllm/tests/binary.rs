//! The `temper-mockllm` binary as a process, the way end-to-end CLI tests use it.
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[tokio::test]
async fn binary_serves_a_script_file_and_logs_requests() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    let log = dir.path().join("requests.jsonl");
    std::fs::write(
        &script,
        json!([{"kind": "reply", "tool_calls": [{"name": "apply_fix", "arguments": {"fix_script": "a", "revert_script": "b", "description": "c"}}]}]).to_string(),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_temper-mockllm"))
        .args(["--script", script.to_str().unwrap(), "--port", "0", "--log", log.to_str().unwrap()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("listening on ").expect("ready line").to_owned();
    let resp: Value = reqwest::Client::new()
        .post(format!("{url}/v1/chat/completions"))
        .json(&json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(resp["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "apply_fix");
    let logged: Value = serde_json::from_str(std::fs::read_to_string(&log).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(logged["messages"][0]["content"], "hi");
}

#[test]
fn binary_refuses_a_bad_script_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.json");
    std::fs::write(&script, "[{\"kind\": \"nope\"}]").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_temper-mockllm")).args(["--script", script.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("invalid script") && err.contains("nope"), "{err}");
}
