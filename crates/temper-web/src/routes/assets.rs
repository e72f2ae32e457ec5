//! The page's script and style, built into the binary.
use axum::extract::Path;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};

use crate::WebError;

const FILES: [(&str, &str, &str); 2] = [
    ("live.js", "text/javascript; charset=utf-8", include_str!("../../static/live.js")),
    ("web.css", "text/css; charset=utf-8", include_str!("../../static/web.css")),
];

pub async fn file(Path(name): Path<String>) -> Result<Response, WebError> {
    let (_, kind, body) = FILES.iter().find(|f| f.0 == name).ok_or(WebError::NotFound)?;
    Ok(([(CONTENT_TYPE, *kind), (CACHE_CONTROL, "no-cache")], *body).into_response())
}
