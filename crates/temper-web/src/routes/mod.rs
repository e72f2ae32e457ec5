//! The routes, the token check and the headers every answer carries.
mod assets;
mod report;
mod rule;
mod runs;

use axum::Router;
use axum::extract::Request;
use axum::http::HeaderValue;
use axum::http::header::{CONTENT_SECURITY_POLICY, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;

use crate::state::AppState;
use crate::{Hosts, Token, WebError, auth, host, sse};

/// Scripts, styles, images and connections from this server only: no inline script runs.
const CSP: &str = "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub fn router(state: AppState, token: Option<Token>, hosts: Hosts) -> Router {
    Router::new()
        .route("/", get(runs::index))
        // Fleets, once they exist, get their pages beside the runs: `/fleets`, `/fleets/{id}`.
        .route("/runs/{id}", get(runs::show))
        .route("/runs/{id}/events", get(sse::events))
        .route("/runs/{id}/chart", get(runs::chart))
        .route("/runs/{id}/rules/{rule_id}", get(rule::show))
        .route("/runs/{id}/report.{ext}", get(report::download))
        .route("/static/{file}", get(assets::file))
        .fallback(|| async { WebError::NotFound })
        .with_state(state)
        .layer(middleware::from_fn_with_state(token, auth::require))
        .layer(middleware::from_fn_with_state(hosts, host::check))
        .layer(middleware::from_fn(headers))
}

async fn headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let h = response.headers_mut();
    h.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}
