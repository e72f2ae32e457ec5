//! The axum server that plays a script.
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::reply::{ReplyParts, completion, error, estimate_tokens};
use crate::script::Scripted;

/// Which entry of the script a request gets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Order {
    /// The next one, in the script's order.
    #[default]
    Sequential,
    /// The first one not yet played that answers with a tool the request offers (or with no
    /// tool): each role (Architect, Worker, Reflector) takes its own replies in order, whichever
    /// path the run takes between them.
    ByTool,
}

#[derive(Default)]
struct Inner {
    script: Vec<Scripted>,
    played: Vec<bool>,
    order: Order,
    requests: Vec<Value>,
    /// Appends each request body as one JSON line when set.
    log: Option<std::path::PathBuf>,
}

type Shared = Arc<Mutex<Inner>>;

/// A running mock; dropping it stops the server.
pub struct MockLlm {
    addr: SocketAddr,
    inner: Shared,
    task: JoinHandle<()>,
}

impl MockLlm {
    /// Starts on 127.0.0.1 with an ephemeral port.
    pub async fn start(script: Vec<Scripted>) -> std::io::Result<Self> {
        Self::bind("127.0.0.1:0".parse().expect("literal address"), script, None).await
    }

    /// Starts on 127.0.0.1 with an ephemeral port, answering in [`Order::ByTool`].
    pub async fn start_by_tool(script: Vec<Scripted>) -> std::io::Result<Self> {
        let mock = Self::start(script).await?;
        mock.lock().order = Order::ByTool;
        Ok(mock)
    }

    /// Starts on `addr`; with `log`, every request body is appended there as a JSON line.
    pub async fn bind(addr: SocketAddr, script: Vec<Scripted>, log: Option<std::path::PathBuf>) -> std::io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let played = vec![false; script.len()];
        let inner = Arc::new(Mutex::new(Inner { script, played, log, ..Inner::default() }));
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/v1/models", get(models))
            .route("/health", get(|| async { Json(json!({ "status": "ok" })) }))
            .with_state(inner.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, inner, task })
    }

    /// Base URL without `/v1`, e.g. `http://127.0.0.1:39123`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Request bodies received so far (JSON; a non-JSON body is kept as a string).
    pub fn requests(&self) -> Vec<Value> {
        self.lock().requests.clone()
    }

    /// How many script entries are left unplayed.
    pub fn remaining(&self) -> usize {
        self.lock().played.iter().filter(|p| !**p).count()
    }

    /// Stops the server and waits for it to end.
    pub async fn shutdown(self) {
        self.task.abort();
        let _ = (&mut { self }.task).await;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        self.task.abort();
    }
}

use axum::Json;

async fn models() -> Json<Value> {
    Json(json!({ "object": "list", "data": [{ "id": "mock", "object": "model", "owned_by": "temper-mockllm" }] }))
}

async fn chat(State(inner): State<Shared>, body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    let (entry, seq) = {
        let mut g = inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(path) = &g.log {
            append_line(path, &request);
        }
        g.requests.push(request.clone());
        let seq = (g.requests.len() - 1) as u64;
        let next = match g.order {
            Order::Sequential => g.played.iter().position(|p| !p),
            Order::ByTool => {
                let offered = offered_tools(&request);
                (0..g.script.len()).find(|&i| !g.played[i] && g.script[i].fits(&offered))
            }
        };
        let entry = next.map(|i| {
            g.played[i] = true;
            g.script[i].clone()
        });
        (entry, seq)
    };
    let Some(mut entry) = entry else {
        return status_reply(410, None, "temper-mockllm: script exhausted");
    };
    loop {
        match entry {
            Scripted::Hang { secs, then } => {
                tokio::time::sleep(Duration::from_secs_f64(secs.max(0.0))).await;
                match then {
                    Some(next) => entry = *next,
                    None => return status_reply(504, None, "temper-mockllm: hang ended"),
                }
            }
            Scripted::Status { status, retry_after, message } => {
                let msg = message.unwrap_or_else(|| format!("temper-mockllm: scripted {status}"));
                return status_reply(status, retry_after.as_deref(), &msg);
            }
            Scripted::Reply { content, tool_calls, finish_reason, prompt_tokens, completion_tokens } => {
                let model = request.get("model").and_then(Value::as_str).unwrap_or("mock");
                let reply_chars = content.as_deref().map_or(0, str::len)
                    + tool_calls.iter().map(|c| c.name.len() + c.arguments.to_wire().len()).sum::<usize>();
                let parts = ReplyParts {
                    seq,
                    model,
                    content: content.as_deref(),
                    tool_calls: &tool_calls,
                    finish_reason: finish_reason.as_deref(),
                    prompt_tokens: prompt_tokens.unwrap_or_else(|| estimate_tokens(body.len())),
                    completion_tokens: completion_tokens.unwrap_or_else(|| estimate_tokens(reply_chars)),
                };
                return Json(completion(&parts)).into_response();
            }
        }
    }
}

/// The names of the tools a request offers (none in text mode).
fn offered_tools(request: &Value) -> Vec<String> {
    let tools = request.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    tools.iter().filter_map(|t| t.pointer("/function/name").and_then(Value::as_str)).map(str::to_string).collect()
}

fn status_reply(status: u16, retry_after: Option<&str>, message: &str) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = (code, Json(error(status, message))).into_response();
    if let Some(v) = retry_after.and_then(|v| HeaderValue::from_str(v).ok()) {
        resp.headers_mut().insert(header::RETRY_AFTER, v);
    }
    resp
}

fn append_line(path: &std::path::Path, value: &Value) {
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = writeln!(f, "{value}");
    }
}
