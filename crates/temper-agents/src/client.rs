//! The HTTP client: one chat-completions request, retried on transient faults.
//!
//! Transient (retried with exponential back-off and jitter, `Retry-After` honoured up to
//! `max_retry_after`): connection refused/reset, timeouts, 429, 500, 502, 503, 504, 529.
//! A 500 whose message says the server could not parse the model's output (llama.cpp's
//! "does not match the expected ... format") is the model's fault, not the server's: it is not
//! retried and comes back as [`CallError::BadReply`]. Other statuses (400, 401, 404...) are not
//! retried and come back as [`CallError::Unavailable`]: the run pauses on a misconfigured endpoint.
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use backon::{ExponentialBuilder, Retryable};
use reqwest::StatusCode;

use crate::config::LlmConfig;
use crate::wire::{ChatRequest, ChatResponse, Usage};

pub struct LlmClient {
    http: reqwest::Client,
    cfg: LlmConfig,
}

/// A successful exchange.
#[derive(Debug)]
pub struct Exchange {
    pub response: ChatResponse,
    pub retries: u32,
    /// Wall time of the whole call, retries and back-off included.
    pub latency: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// Transient faults outlasted the retries, or the endpoint refuses the request outright.
    #[error("{reason}")]
    Unavailable { retries: u32, reason: String, latency: Duration },
    /// The server answered, but not with a usable completion.
    #[error("{reason}")]
    BadReply { retries: u32, reason: String, latency: Duration },
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot build the HTTP client: {0}")]
    Build(#[from] reqwest::Error),
}

#[derive(Debug)]
enum Fault {
    Transient { reason: String, retry_after: Option<Duration> },
    Fatal(String),
    BadReply(String),
}

impl LlmClient {
    pub fn new(cfg: LlmConfig) -> Result<Self, ClientError> {
        let http = reqwest::Client::builder().timeout(cfg.timeout).connect_timeout(cfg.connect_timeout).build()?;
        Ok(Self { http, cfg })
    }

    pub fn config(&self) -> &LlmConfig {
        &self.cfg
    }

    /// One call, as one span named and attributed per the OpenTelemetry GenAI conventions
    /// (`chat {model}`); the token counts are recorded when the server reports them.
    #[tracing::instrument(name = "chat", skip_all, fields(
        otel.name = %format_args!("chat {}", req.model),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = "openai",
        gen_ai.request.model = %req.model,
        gen_ai.request.max_tokens = i64::from(req.max_tokens),
        gen_ai.usage.input_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
    ))]
    pub async fn chat(&self, req: &ChatRequest) -> Result<Exchange, CallError> {
        let started = Instant::now();
        let retries = AtomicU32::new(0);
        let backoff = ExponentialBuilder::default()
            .with_min_delay(self.cfg.min_backoff)
            .with_max_delay(self.cfg.max_backoff)
            .with_max_times(self.cfg.max_retries as usize)
            .with_jitter();
        let cap = self.cfg.max_retry_after;
        let result = (|| self.once(req))
            .retry(backoff)
            .when(|f| matches!(f, Fault::Transient { .. }))
            .adjust(|f, next| match (f, next) {
                (Fault::Transient { retry_after: Some(after), .. }, Some(_)) => Some((*after).min(cap)),
                (_, next) => next,
            })
            .notify(|f, wait| {
                retries.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(fault = ?f, wait_ms = wait.as_millis() as u64, "llm call failed; retrying");
            })
            .await;
        let retries = retries.load(Ordering::Relaxed);
        let latency = started.elapsed();
        match result {
            Ok(response) => {
                record_usage(response.usage.unwrap_or_default());
                Ok(Exchange { response, retries, latency })
            }
            Err(Fault::Transient { reason, .. }) | Err(Fault::Fatal(reason)) => Err(CallError::Unavailable { retries, reason, latency }),
            Err(Fault::BadReply(reason)) => Err(CallError::BadReply { retries, reason, latency }),
        }
    }

    async fn once(&self, req: &ChatRequest) -> Result<ChatResponse, Fault> {
        let mut builder = self.http.post(self.cfg.chat_url()).json(req);
        if let Some(key) = &self.cfg.api_key {
            builder = builder.bearer_auth(key);
        }
        let resp = builder.send().await.map_err(transport)?;
        let status = resp.status();
        let retry_after = retry_after(resp.headers());
        let body = resp.text().await.map_err(transport)?;
        if !status.is_success() {
            return Err(classify(status, retry_after, &body));
        }
        serde_json::from_str::<ChatResponse>(&body).map_err(|e| Fault::BadReply(format!("response is not a chat completion: {e}")))
    }
}

/// Token counts as integer attributes (tracing-opentelemetry exports a `u64` as text).
fn record_usage(usage: Usage) {
    let span = tracing::Span::current();
    if let Some(n) = usage.prompt_tokens {
        span.record("gen_ai.usage.input_tokens", i64::from(n));
    }
    if let Some(n) = usage.completion_tokens {
        span.record("gen_ai.usage.output_tokens", i64::from(n));
    }
}

fn transport(e: reqwest::Error) -> Fault {
    // reqwest errors are all network-level here (send or body read): connection refused or
    // reset, timeouts, truncated bodies. Build errors cannot happen for a fixed valid URL.
    let kind = if e.is_timeout() {
        "timeout"
    } else if e.is_connect() {
        "connect"
    } else {
        "transport"
    };
    Fault::Transient { reason: format!("{kind}: {}", chain(&e)), retry_after: None }
}

fn classify(status: StatusCode, retry_after: Option<Duration>, body: &str) -> Fault {
    let message = error_message(body);
    let reason = format!("http {}: {message}", status.as_u16());
    match status.as_u16() {
        500 if is_model_parse_failure(&message) => {
            Fault::BadReply(format!("server could not parse the model's output as a tool call ({reason})"))
        }
        429 | 500 | 502 | 503 | 504 | 529 => Fault::Transient { reason, retry_after },
        _ => Fault::Fatal(reason),
    }
}

fn is_model_parse_failure(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("model produced output") || m.contains("does not match the expected") || m.contains("failed to parse")
}

/// The `error.message` of an OpenAI-style error body, else the body's start.
fn error_message(body: &str) -> String {
    let parsed: Option<String> = serde_json::from_str::<serde_json::Value>(body).ok().and_then(|v| {
        let e = v.get("error")?;
        e.get("message").and_then(|m| m.as_str()).or(e.as_str()).map(str::to_owned)
    });
    let text = parsed.unwrap_or_else(|| body.trim().to_owned());
    crate::text::clip(&text, 300)
}

/// `Retry-After` in seconds (HTTP-date forms are ignored and the back-off applies).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let v = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    v.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0).map(Duration::from_secs_f64)
}

fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        let t = inner.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = inner.source();
    }
    s
}
