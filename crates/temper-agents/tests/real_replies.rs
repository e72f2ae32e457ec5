//! Replies captured from a real llama.cpp server (Qwen2.5-Coder-0.5B) read by the client's types.
use temper_agents::llm::validate_fix;
use temper_agents::tool_call::extract;
use temper_agents::tools::apply_fix;
use temper_agents::wire::ChatResponse;
use temper_journal::TurnMode;

fn fixture(name: &str) -> ChatResponse {
    let path = format!("{}/../temper-mockllm/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn native_tool_call_from_llama_cpp() {
    let r = fixture("llamacpp-tool-calls.json");
    let usage = r.usage.unwrap();
    assert_eq!((usage.prompt_tokens, usage.completion_tokens), (Some(252), Some(50)));
    let choice = &r.choices[0];
    assert_eq!(choice.finish_reason.as_deref(), Some("tool_calls"));
    let found = extract(&choice.message, &apply_fix(), None);
    assert_eq!((found.mode, found.calls.len()), (TurnMode::Native, 1));
    let fix = validate_fix(64 * 1024)(&found.calls[0].arguments).unwrap();
    assert_eq!(fix.revert_script, "sed -i 's/^##//g' /etc/issue");
}

#[test]
fn fenced_reply_from_llama_cpp_names_the_rule_not_the_tool() {
    // Without the prefill the 0.5B model answers in content, naming the call after the rule and
    // leaving out `description`: seen as one text call, then refused by name.
    let r = fixture("llamacpp-text.json");
    let found = extract(&r.choices[0].message, &apply_fix(), None);
    assert_eq!((found.mode, found.calls.len()), (TurnMode::Text, 1));
    assert_eq!(found.calls[0].name, "ensure /etc/issue exists");
    let e = validate_fix(64 * 1024)(&found.calls[0].arguments).unwrap_err();
    assert!(e.contains("missing field `description`"), "{e}");
}
