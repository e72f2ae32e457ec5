//! The OTLP export end to end, no VM: `temper llm probe` against the scripted server, its spans
//! sent to an in-process OTLP/HTTP receiver and decoded with the OpenTelemetry protobuf types.
mod support;

use serde_json::json;
use support::*;
use temper_mockllm::Scripted;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_llm_call_is_one_span_with_the_genai_attributes() {
    let mut w = World::new();
    let fix = json!({"fix_script": "true", "revert_script": "true", "description": "probe"});
    // A 429 first: the retry stays inside the one call's span.
    let llm = mock(vec![Scripted::rate_limited(0), Scripted::tool_call("apply_fix", fix).usage(1234, 56)]).await;
    let otlp = otlp_sink().await;
    w.env.push(("TEMPER_OTLP_ENDPOINT".into(), otlp.url.clone()));
    let out = w.run(&["llm", "probe", "--llm", &llm.url(), "--model", "probe-model", "--json"]).await;
    assert!(out.status.success(), "probe failed");
    // Spans are flushed when temper exits.
    let chats = otlp.spans("chat probe-model");
    assert_eq!(chats.len(), 1, "one span for the call, retry included: {:?}", otlp.names());
    let c = &chats[0];
    assert_eq!(c.str("gen_ai.operation.name"), Some("chat"), "{c:?}");
    assert_eq!(c.str("gen_ai.provider.name"), Some("openai"), "{c:?}");
    assert_eq!(c.str("gen_ai.request.model"), Some("probe-model"), "{c:?}");
    assert_eq!(c.int("gen_ai.usage.input_tokens"), Some(1234), "{c:?}");
    assert_eq!(c.int("gen_ai.usage.output_tokens"), Some(56), "{c:?}");
    assert_eq!(llm.remaining(), 0);
}
