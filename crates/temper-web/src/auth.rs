//! The bearer token: read once, compared in constant time, never printed.
use std::path::Path;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::WebError;

/// The secret every request must carry as `Authorization: Bearer <token>`. Its `Debug` hides it.
#[derive(Clone)]
pub struct Token(Arc<str>);

impl Token {
    /// Surrounding whitespace (a file's trailing newline) is dropped.
    pub fn new(secret: &str) -> Result<Self, WebError> {
        let secret = secret.trim();
        if secret.is_empty() {
            return Err(WebError::EmptyToken);
        }
        if !secret.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(WebError::BadToken);
        }
        Ok(Self(secret.into()))
    }

    pub fn from_file(path: &Path) -> Result<Self, WebError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| WebError::TokenFile { path: path.display().to_string(), reason: e.to_string() })?;
        Self::new(&text)
    }

    /// Constant time in the token's content (its length is not a secret).
    fn matches(&self, given: &str) -> bool {
        bool::from(self.0.as_bytes().ct_eq(given.as_bytes()))
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<hidden>)")
    }
}

/// Lets a request through when no token is set, or when it carries the token; else 401.
pub async fn require(State(token): State<Option<Token>>, request: Request, next: Next) -> Response {
    let Some(token) = token else { return next.run(request).await };
    let given = request.headers().get(AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    if given.is_some_and(|g| token.matches(g.trim())) { next.run(request).await } else { WebError::Unauthorized.into_response() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_checked_and_hidden() {
        let t = Token::new("s3cret-XYZ\n").unwrap();
        assert!(t.matches("s3cret-XYZ"));
        assert!(!t.matches("s3cret-XY"));
        assert!(!t.matches("s3cret-XYz"));
        assert!(!format!("{t:?}").contains("s3cret"));
        assert!(matches!(Token::new(" \n"), Err(WebError::EmptyToken)));
        assert!(matches!(Token::new("a b"), Err(WebError::BadToken)));
    }
}
