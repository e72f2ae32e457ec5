//! A minimal OTLP/HTTP receiver: keeps what is POSTed to `/v1/traces` and decodes it with the
//! OpenTelemetry protobuf types.
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use prost::Message;

/// One exported span: its name and attributes.
#[derive(Debug, Clone)]
pub struct OtlpSpan {
    pub name: String,
    pub attributes: BTreeMap<String, Attr>,
}

/// An attribute's value; anything but a string or an integer is kept as its debug text.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    Str(String),
    Int(i64),
    Other(String),
}

impl OtlpSpan {
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.attributes.get(key) {
            Some(Attr::Str(s)) => Some(s),
            _ => None,
        }
    }

    pub fn int(&self, key: &str) -> Option<i64> {
        match self.attributes.get(key) {
            Some(Attr::Int(n)) => Some(*n),
            _ => None,
        }
    }
}

pub struct OtlpSink {
    pub url: String,
    bodies: Arc<Mutex<Vec<Vec<u8>>>>,
}

pub async fn otlp_sink() -> OtlpSink {
    let bodies: Arc<Mutex<Vec<Vec<u8>>>> = Default::default();
    let keep = bodies.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let keep = keep.clone();
            async move {
                keep.lock().unwrap().push(body.to_vec());
                axum::http::StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    OtlpSink { url, bodies }
}

impl OtlpSink {
    /// Every span received so far; panics on a body that is not an `ExportTraceServiceRequest`.
    pub fn all(&self) -> Vec<OtlpSpan> {
        let bodies = self.bodies.lock().unwrap();
        let requests = bodies.iter().map(|b| ExportTraceServiceRequest::decode(b.as_slice()).expect("an OTLP trace export"));
        let spans = requests.flat_map(|r| r.resource_spans).flat_map(|r| r.scope_spans).flat_map(|s| s.spans);
        spans
            .map(|s| OtlpSpan {
                name: s.name,
                attributes: s.attributes.into_iter().map(|kv| (kv.key, attr(kv.value.and_then(|v| v.value)))).collect(),
            })
            .collect()
    }

    /// The spans named `name`.
    pub fn spans(&self, name: &str) -> Vec<OtlpSpan> {
        self.all().into_iter().filter(|s| s.name == name).collect()
    }

    /// The names of every span received, for failure messages.
    pub fn names(&self) -> Vec<String> {
        self.all().into_iter().map(|s| s.name).collect()
    }
}

fn attr(value: Option<Value>) -> Attr {
    match value {
        Some(Value::StringValue(s)) => Attr::Str(s),
        Some(Value::IntValue(n)) => Attr::Int(n),
        other => Attr::Other(format!("{other:?}")),
    }
}
