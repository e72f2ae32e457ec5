//! Endpoint and budget settings for the LLM roles.
use std::time::Duration;

/// One OpenAI-compatible `/v1/chat/completions` endpoint (vLLM, Ollama, llama.cpp...).
#[derive(Clone)]
pub struct LlmConfig {
    /// Base URL, with or without a trailing `/v1` (e.g. `http://127.0.0.1:8089`).
    pub base_url: String,
    pub model: String,
    /// Sent as `Authorization: Bearer ...` when set; never logged or recorded.
    pub api_key: Option<String>,
    /// Whole-request timeout; a timeout is a transient fault and is retried.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// `max_tokens` of every request.
    pub max_tokens: u32,
    pub temperature: f32,
    /// Retries after the first try for transient faults; then `AgentError::Unavailable`.
    pub max_retries: u32,
    /// First back-off delay; doubles each retry, with jitter, up to `max_backoff`.
    pub min_backoff: Duration,
    pub max_backoff: Duration,
    /// Upper bound on an honoured `Retry-After`.
    pub max_retry_after: Duration,
    /// Ends the request with an assistant message opening a `<tool_call>`, so llama.cpp's
    /// chat templates (Qwen, Hermes) return real `tool_calls`.
    pub prefill_tool_call: bool,
    /// With `prefill_tool_call`: the prefill also names the tool
    /// (`<tool_call>\n{"name": "apply_fix", "arguments": {"`). Small models otherwise name the
    /// call after the rule and llama.cpp answers 500.
    pub prefill_names_tool: bool,
    /// `tool_choice` sent with the tools: "auto" (default) or "required".
    pub tool_choice: String,
    /// The model's context window in tokens.
    pub context_tokens: u32,
    /// Prompt budgets per role, in estimated tokens.
    pub budgets: Budgets,
    /// Largest accepted `fix_script` / `revert_script`, in bytes.
    pub max_script_bytes: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budgets {
    pub architect: u32,
    pub worker: u32,
    pub reflector: u32,
    pub reengage: u32,
}

impl Default for Budgets {
    fn default() -> Self {
        Self { architect: 6000, worker: 6000, reflector: 4000, reengage: 3000 }
    }
}

impl LlmConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self { base_url: base_url.into(), model: model.into(), ..Self::default() }
    }

    /// `base_url` + `/v1/chat/completions`, tolerating a trailing `/` or `/v1`.
    pub fn chat_url(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        format!("{base}/v1/chat/completions")
    }
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:8000".into(),
            model: "default".into(),
            api_key: None,
            timeout: Duration::from_secs(180),
            connect_timeout: Duration::from_secs(10),
            max_tokens: 1024,
            temperature: 0.2,
            max_retries: 4,
            min_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
            prefill_tool_call: false,
            prefill_names_tool: true,
            tool_choice: "auto".into(),
            context_tokens: 8192,
            budgets: Budgets::default(),
            max_script_bytes: 64 * 1024,
        }
    }
}

impl std::fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("max_retries", &self.max_retries)
            .field("prefill_tool_call", &self.prefill_tool_call)
            .field("context_tokens", &self.context_tokens)
            .finish_non_exhaustive()
    }
}
