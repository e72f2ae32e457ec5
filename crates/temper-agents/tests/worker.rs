//! The Worker over the scripted server: what is executed, dropped and recorded for each fault.
mod common;

use std::time::Instant;
use temper_journal::FixSource;
use temper_journal::turn::Fate;

use common::*;
use serde_json::json;
use temper_agents::LlmAgent;
use temper_core::agent::{AgentError, Worker};
use temper_mockllm::{MockLlm, Scripted, ScriptedCall};

#[tokio::test]
async fn one_native_call_is_executed_and_recorded() {
    let mock = MockLlm::start(vec![Scripted::tool_call("apply_fix", fix_args()).usage(321, 45)]).await.unwrap();
    let turn = agent(&mock.url()).propose(&fix_context()).await.unwrap();
    let (fix, source) = turn.value;
    assert_eq!(source, FixSource::Llm);
    assert_eq!(fix.revert_script, "rm -f /etc/ssh/sshd_config.d/01-root.conf");
    assert_eq!(fix.description, "disable root login over SSH");
    let r = &turn.records[0];
    assert_eq!((r.role.as_str(), r.model.as_str(), r.mode.as_str()), ("worker", "mock-model", "native"));
    assert_eq!((r.prompt_tokens, r.completion_tokens), (Some(321), Some(45)));
    assert_eq!((r.tool_calls_seen, r.retries), (1, 0));
    assert!(r.tool_calls_dropped.is_empty());
    assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
    assert!(r.error.is_none());
    assert!(r.prompt_chars > 0 && r.prompt_tokens_est > 0);
    assert!(r.sections.iter().any(|s| s.name == "system" && s.fate == Fate::Kept));
}

#[tokio::test]
async fn request_is_one_fresh_turn_offering_only_apply_fix() {
    let mock =
        MockLlm::start(vec![Scripted::tool_call("apply_fix", fix_args()), Scripted::tool_call("apply_fix", fix_args())]).await.unwrap();
    let a = agent(&mock.url());
    a.propose(&fix_context()).await.unwrap();
    a.propose(&fix_context()).await.unwrap();
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2);
    for req in &reqs {
        let roles: Vec<&str> = messages(req).iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["system", "user"], "no history, no tool results carried");
        let tools = req["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0]["function"]["name"], "apply_fix");
        assert_eq!(tools[0]["function"]["parameters"]["required"], json!(["fix_script", "revert_script", "description"]));
        assert_eq!(req["max_tokens"], 512);
        assert_eq!(req["parallel_tool_calls"], false);
        let user = messages(req)[1]["content"].as_str().unwrap();
        assert!(user.contains(ROOT_LOGIN) && !user.contains("Earlier attempts"));
        let system = messages(req)[0]["content"].as_str().unwrap();
        assert!(system.contains("RHEL 9") || system.contains("Red Hat Enterprise Linux 9"));
    }
    // The same but for each prompt's own fence around its data (lessons, bans).
    let fence = |r: &serde_json::Value| {
        let system = messages(r)[0]["content"].as_str().unwrap().to_string();
        let at = system.find("<data-").expect("a fence");
        system[at + 1..at + 1 + "data-".len() + 16].to_string()
    };
    let (f0, f1) = (fence(&reqs[0]), fence(&reqs[1]));
    assert_ne!(f0, f1, "each prompt draws its own fence");
    let same = |r: &serde_json::Value, f: &str| r.to_string().replace(f, "data-FENCE");
    assert_eq!(same(&reqs[0], &f0), same(&reqs[1], &f1), "the second turn carries nothing from the first");
}

#[tokio::test]
async fn two_calls_first_executed_second_capped() {
    let second = json!({"fix_script": "reboot", "revert_script": "true", "description": "second"});
    let mock = MockLlm::start(vec![Scripted::tool_calls(vec![
        ScriptedCall::new("apply_fix", fix_args()),
        ScriptedCall::new("apply_fix", second),
    ])])
    .await
    .unwrap();
    let turn = agent(&mock.url()).propose(&fix_context()).await.unwrap();
    assert_eq!(turn.value.0.description, "disable root login over SSH");
    let r = &turn.records[0];
    assert_eq!(r.tool_calls_seen, 2);
    assert_eq!(r.tool_calls_dropped, ["tool_call_capped:apply_fix"]);
    assert_eq!(mock.requests().len(), 1, "the tool result never goes back to the model");
}

#[tokio::test]
async fn invalid_first_call_is_skipped_for_the_first_valid_one() {
    let mock = MockLlm::start(vec![Scripted::tool_calls(vec![
        ScriptedCall::raw("apply_fix", "{broken"),
        ScriptedCall::new("apply_fix", fix_args()),
        ScriptedCall::new("select_rule", json!({})),
    ])])
    .await
    .unwrap();
    let turn = agent(&mock.url()).propose(&fix_context()).await.unwrap();
    let r = &turn.records[0];
    assert_eq!(r.tool_calls_dropped, ["invalid:apply_fix", "tool_call_capped:select_rule"]);
    assert!(r.error.as_deref().unwrap().contains("not valid JSON"));
}

#[tokio::test]
async fn no_tool_call_is_rejected() {
    let mock = MockLlm::start(vec![Scripted::text("I would edit sshd_config.")]).await.unwrap();
    let err = agent(&mock.url()).propose(&fix_context()).await.unwrap_err();
    let AgentError::Rejected { reason, records } = err else { panic!("expected Rejected, got {err:?}") };
    assert!(reason.contains("no apply_fix call"), "{reason}");
    assert_eq!((records[0].mode.as_str(), records[0].tool_calls_seen), ("none", 0));
    assert_eq!(records[0].error.as_deref(), Some(reason.as_str()));
}

#[tokio::test]
async fn invalid_json_arguments_are_rejected() {
    let mock =
        MockLlm::start(vec![Scripted::tool_calls(vec![ScriptedCall::raw("apply_fix", r#"{"fix_script": "echo hi", "revert_script": "#)])])
            .await
            .unwrap();
    let err = agent(&mock.url()).propose(&fix_context()).await.unwrap_err();
    let AgentError::Rejected { reason, records } = err else { panic!("{err:?}") };
    assert!(reason.contains("JSON"), "{reason}");
    assert_eq!(records[0].tool_calls_seen, 1);
    assert!(records[0].tool_calls_dropped.is_empty());
}

#[tokio::test]
async fn missing_field_is_rejected_naming_it() {
    let mock = MockLlm::start(vec![Scripted::tool_call("apply_fix", json!({"fix_script": "echo hi", "description": "d"}))]).await.unwrap();
    let err = agent(&mock.url()).propose(&fix_context()).await.unwrap_err();
    assert!(matches!(&err, AgentError::Rejected { reason, .. } if reason.contains("revert_script")), "{err:?}");
}

#[tokio::test]
async fn empty_scripts_are_rejected() {
    for (fix, revert, field) in [("  \n", "rm x", "fix_script"), ("touch x", "", "revert_script")] {
        let args = json!({"fix_script": fix, "revert_script": revert, "description": "d"});
        let mock = MockLlm::start(vec![Scripted::tool_call("apply_fix", args)]).await.unwrap();
        let err = agent(&mock.url()).propose(&fix_context()).await.unwrap_err();
        assert!(matches!(&err, AgentError::Rejected { reason, .. } if reason == &format!("{field} is empty")), "{err:?}");
    }
}

#[tokio::test]
async fn oversized_script_is_rejected() {
    let big = "echo x\n".repeat(10_000); // 70 000 bytes > 64 KiB
    let args = json!({"fix_script": big, "revert_script": "true", "description": "d"});
    let mock = MockLlm::start(vec![Scripted::tool_call("apply_fix", args)]).await.unwrap();
    let err = agent(&mock.url()).propose(&fix_context()).await.unwrap_err();
    assert!(matches!(&err, AgentError::Rejected { reason, .. } if reason.contains("70000 bytes, over the limit of 65536")), "{err:?}");
}

#[tokio::test]
async fn wrong_tool_name_is_rejected() {
    let mock = MockLlm::start(vec![Scripted::tool_call("run_shell", fix_args())]).await.unwrap();
    let err = agent(&mock.url()).propose(&fix_context()).await.unwrap_err();
    assert!(matches!(&err, AgentError::Rejected { reason, .. } if reason.contains("wrong tool name `run_shell`")), "{err:?}");
}

#[tokio::test]
async fn finish_reason_length_is_rejected_even_with_a_call() {
    let mock = MockLlm::start(vec![Scripted::tool_call("apply_fix", fix_args()).finish("length")]).await.unwrap();
    let err = agent(&mock.url()).propose(&fix_context()).await.unwrap_err();
    let AgentError::Rejected { reason, records } = err else { panic!("{err:?}") };
    assert!(reason.contains("finish_reason length"), "{reason}");
    assert_eq!(records[0].finish_reason.as_deref(), Some("length"));
    assert_eq!(records[0].tool_calls_seen, 1);
}

#[tokio::test]
async fn rate_limit_then_success_retries_once_honouring_retry_after() {
    let mock = MockLlm::start(vec![Scripted::rate_limited(1), Scripted::tool_call("apply_fix", fix_args())]).await.unwrap();
    let started = Instant::now();
    let turn = agent(&mock.url()).propose(&fix_context()).await.unwrap();
    assert!(started.elapsed().as_millis() >= 950, "Retry-After: 1 was not honoured");
    assert_eq!(turn.records[0].retries, 1);
    assert!(turn.records[0].latency_ms >= 950);
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn retry_after_is_bounded() {
    let mock = MockLlm::start(vec![Scripted::rate_limited(3600), Scripted::tool_call("apply_fix", fix_args())]).await.unwrap();
    let mut cfg = config(&mock.url());
    cfg.max_retry_after = std::time::Duration::from_millis(200);
    let a = LlmAgent::new(cfg, skill_dir()).unwrap();
    let started = Instant::now();
    a.propose(&fix_context()).await.unwrap();
    assert!(started.elapsed().as_secs() < 5);
}

#[tokio::test]
async fn server_errors_then_success() {
    let mock = MockLlm::start(vec![
        Scripted::status(500),
        Scripted::status(502),
        Scripted::status(503),
        Scripted::tool_call("apply_fix", fix_args()),
    ])
    .await
    .unwrap();
    let turn = agent(&mock.url()).propose(&fix_context()).await.unwrap();
    assert_eq!(turn.records[0].retries, 3);
}

#[tokio::test]
async fn server_errors_past_the_retries_make_it_unavailable() {
    let mock = MockLlm::start(vec![Scripted::status(529); 5]).await.unwrap();
    let err = agent(&mock.url()).propose(&fix_context()).await.unwrap_err();
    let AgentError::Unavailable { retries, reason, records } = err else { panic!("{err:?}") };
    assert_eq!(retries, 3);
    assert!(reason.contains("http 529"), "{reason}");
    assert_eq!(records[0].retries, 3);
    assert_eq!(mock.requests().len(), 4, "one try and three retries");
}

#[tokio::test]
async fn hang_past_timeout_is_retried() {
    let mock = MockLlm::start(vec![Scripted::hang(5.0, None), Scripted::tool_call("apply_fix", fix_args())]).await.unwrap();
    let turn = agent(&mock.url()).propose(&fix_context()).await.unwrap();
    assert_eq!(turn.records[0].retries, 1);
    assert!(turn.records[0].latency_ms >= 1500, "the first try waited for the 1.5 s timeout");
}

#[tokio::test]
async fn hang_every_time_is_unavailable() {
    let mock = MockLlm::start(vec![Scripted::hang(5.0, None); 4]).await.unwrap();
    let mut cfg = config(&mock.url());
    cfg.timeout = std::time::Duration::from_millis(300);
    cfg.max_retries = 2;
    let err = LlmAgent::new(cfg, skill_dir()).unwrap().propose(&fix_context()).await.unwrap_err();
    let AgentError::Unavailable { retries, reason, .. } = err else { panic!("{err:?}") };
    assert_eq!(retries, 2);
    assert!(reason.starts_with("timeout"), "{reason}");
}

#[tokio::test]
async fn connection_refused_is_unavailable() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut cfg = config(&format!("http://127.0.0.1:{port}"));
    cfg.max_retries = 2;
    let err = LlmAgent::new(cfg, skill_dir()).unwrap().propose(&fix_context()).await.unwrap_err();
    let AgentError::Unavailable { retries, reason, records } = err else { panic!("{err:?}") };
    assert_eq!(retries, 2);
    assert!(reason.starts_with("connect"), "{reason}");
    assert_eq!(records[0].role.as_str(), "worker");
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let mock = MockLlm::start(vec![Scripted::status(401), Scripted::tool_call("apply_fix", fix_args())]).await.unwrap();
    let err = agent(&mock.url()).propose(&fix_context()).await.unwrap_err();
    assert!(matches!(&err, AgentError::Unavailable { retries: 0, reason, .. } if reason.contains("http 401")), "{err:?}");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn llama_cpp_parse_failure_500_is_a_rejection_not_a_retry() {
    let mock = MockLlm::start(vec![
        Scripted::Status {
            status: 500,
            retry_after: None,
            message: Some("The model produced output that does not match the expected peg-native format".into()),
        },
        Scripted::tool_call("apply_fix", fix_args()),
    ])
    .await
    .unwrap();
    let err = agent(&mock.url()).propose(&fix_context()).await.unwrap_err();
    assert!(matches!(&err, AgentError::Rejected { reason, .. } if reason.contains("could not parse")), "{err:?}");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn tool_call_in_content_is_text_mode() {
    let body = format!("<tool_call>\n{}\n</tool_call>", json!({"name": "apply_fix", "arguments": fix_args()}));
    let mock = MockLlm::start(vec![Scripted::text(&body)]).await.unwrap();
    let turn = agent(&mock.url()).propose(&fix_context()).await.unwrap();
    assert_eq!(turn.value.1, FixSource::LlmText);
    assert_eq!(turn.records[0].mode.as_str(), "text");
    assert_eq!(turn.value.0.description, "disable root login over SSH");
}

#[tokio::test]
async fn fenced_json_in_content_is_text_mode_and_extra_blocks_are_capped() {
    let body = format!(
        "Here is the fix:\n```json\n{}\n```\nand another:\n```json\n{}\n```",
        json!({"name": "apply_fix", "arguments": fix_args()}),
        fix_args()
    );
    let mock = MockLlm::start(vec![Scripted::text(&body)]).await.unwrap();
    let turn = agent(&mock.url()).propose(&fix_context()).await.unwrap();
    assert_eq!(turn.value.1, FixSource::LlmText);
    assert_eq!(turn.records[0].tool_calls_dropped, ["tool_call_capped:apply_fix"]);
}

#[tokio::test]
async fn prefill_is_sent_and_its_continuation_parsed() {
    // llama.cpp continues the prefill; when it cannot parse, the content is the bare rest.
    let rest = r#"fix_script": "touch /etc/x", "revert_script": "rm -f /etc/x", "description": "d"}}
</tool_call>"#;
    let mock = MockLlm::start(vec![Scripted::text(rest)]).await.unwrap();
    let mut cfg = config(&mock.url());
    cfg.prefill_tool_call = true;
    let turn = LlmAgent::new(cfg, skill_dir()).unwrap().propose(&fix_context()).await.unwrap();
    assert_eq!(turn.value.0.fix_script, "touch /etc/x");
    assert_eq!(turn.value.1, FixSource::LlmText);
    let req = &mock.requests()[0];
    let last = messages(req).last().unwrap();
    assert_eq!(last["role"], "assistant");
    assert_eq!(last["content"], "<tool_call>\n{\"name\": \"apply_fix\", \"arguments\": {\"");
}

#[tokio::test]
async fn bare_prefill_option() {
    let mock = MockLlm::start(vec![Scripted::tool_call("apply_fix", fix_args())]).await.unwrap();
    let mut cfg = config(&mock.url());
    cfg.prefill_tool_call = true;
    cfg.prefill_names_tool = false;
    LlmAgent::new(cfg, skill_dir()).unwrap().propose(&fix_context()).await.unwrap();
    let req = &mock.requests()[0];
    assert_eq!(messages(req).last().unwrap()["content"], "<tool_call>\n");
}

#[tokio::test]
async fn api_key_is_sent_but_never_recorded() {
    let mock = MockLlm::start(vec![Scripted::tool_call("apply_fix", fix_args())]).await.unwrap();
    let mut cfg = config(&mock.url());
    cfg.api_key = Some("sk-very-secret-key".into());
    assert!(!format!("{cfg:?}").contains("sk-very-secret-key"));
    let turn = LlmAgent::new(cfg, skill_dir()).unwrap().propose(&fix_context()).await.unwrap();
    let stored = serde_json::to_string(&turn.records).unwrap();
    assert!(!stored.contains("sk-very-secret-key"));
    assert!(!mock.requests()[0].to_string().contains("sk-very-secret-key"), "key travels in a header only");
}

#[tokio::test]
async fn small_context_cuts_and_drops_sections_within_budget() {
    let mock = MockLlm::start(vec![Scripted::tool_call("apply_fix", fix_args())]).await.unwrap();
    let mut cfg = config(&mock.url());
    cfg.context_tokens = 1900;
    cfg.max_tokens = 256;
    let mut ctx = fix_context();
    ctx.episodes = (0..200).map(|i| format!("attempt {i}: tried sed on sshd_config; rule still fails")).collect();
    ctx.rationale = "long rationale ".repeat(300);
    let turn = LlmAgent::new(cfg, skill_dir()).unwrap().propose(&ctx).await.unwrap();
    let r = &turn.records[0];
    let fate = |n: &str| r.sections.iter().find(|s| s.name == n).map(|s| s.fate).unwrap();
    assert_eq!(fate("system"), Fate::Kept);
    assert_eq!(fate("task"), Fate::Kept);
    assert_eq!(fate("ask"), Fate::Kept);
    assert_eq!(fate("rationale"), Fate::Dropped);
    assert_eq!(fate("episodes"), Fate::Cut);
    assert!(r.prompt_tokens_est <= 1900 - 256, "estimate {} over the room", r.prompt_tokens_est);
    let user = messages(&mock.requests()[0])[1]["content"].as_str().unwrap().to_owned();
    assert!(user.contains("attempt 199"), "the newest episodes survive a tail cut");
    assert!(!user.contains("long rationale"));
}

#[tokio::test]
async fn context_too_small_for_the_system_prompt_is_unavailable_without_a_request() {
    let mock = MockLlm::start(vec![Scripted::tool_call("apply_fix", fix_args())]).await.unwrap();
    let mut cfg = config(&mock.url());
    cfg.context_tokens = 600;
    cfg.max_tokens = 256;
    let err = LlmAgent::new(cfg, skill_dir()).unwrap().propose(&fix_context()).await.unwrap_err();
    assert!(matches!(&err, AgentError::Unavailable { reason, .. } if reason.contains("required section `system`")), "{err:?}");
    assert!(mock.requests().is_empty());
}
