//! What can go wrong, and the plain-text answer each gives.
use std::net::SocketAddr;

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use temper_journal::RunId;
use temper_journal::{JournalError, RuleStatus};
use temper_report::{Format, LoadError, ReportError};

#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error(
        "refusing to serve on {0} without a token: a non-loopback address needs --token-file FILE or TEMPER_WEB_TOKEN (or bind 127.0.0.1)"
    )]
    OpenWithoutToken(SocketAddr),
    #[error("the web token is empty")]
    EmptyToken,
    #[error("the web token must be printable ASCII without spaces")]
    BadToken,
    #[error("token file {path}: {reason}")]
    TokenFile { path: String, reason: String },
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    #[error("serving: {0}")]
    Serve(std::io::Error),
    #[error("missing or wrong bearer token")]
    Unauthorized,
    #[error("Host `{0}` is not this server: temper serve answers to IP literals and localhost, and to names given with --allow-host")]
    BadHost(String),
    #[error("no run {0}")]
    NoRun(RunId),
    #[error("run {run} has no rule {rule}")]
    NoRule { run: RunId, rule: String },
    #[error("no such page")]
    NotFound,
    #[error("`{0}` is not a rule status: use one of {names}", names = rule_statuses())]
    BadStatus(String),
    #[error("a {format} checklist needs the run's datastream ({path}: {reason}); the md, html and json reports work without it")]
    NoContent { format: Format, path: String, reason: String },
    #[error("store: {0}")]
    Store(#[from] JournalError),
    #[error("report: {0}")]
    Report(#[from] ReportError),
    #[error("report: {0}")]
    Load(#[from] LoadError),
    #[error("a task stopped: {0}")]
    Task(#[from] tokio::task::JoinError),
    #[error("page: {0}")]
    Template(#[from] minijinja::Error),
}

impl WebError {
    fn status(&self) -> StatusCode {
        match self {
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::BadHost(_) => StatusCode::MISDIRECTED_REQUEST,
            Self::BadStatus(_) => StatusCode::BAD_REQUEST,
            Self::NoRun(_) | Self::NoRule { .. } | Self::NotFound | Self::NoContent { .. } => StatusCode::NOT_FOUND,
            Self::Report(ReportError::NeedsContent(_) | ReportError::NoRules(_)) => StatusCode::NOT_FOUND,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// The statuses a filter takes, in review order.
fn rule_statuses() -> String {
    RuleStatus::REVIEW_ORDER.map(RuleStatus::as_str).join(", ")
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::error!(error = %self, "temper serve");
        }
        let mut response = (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], format!("{self}\n")).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
        }
        response
    }
}
