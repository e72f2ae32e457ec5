//! temper-web: `temper serve`, a live, read-only web view over the journal.
//!
//! - `/` the runs, newest first; `/runs/{id}` one run, its rules and its events, kept live by
//!   server-sent events (`/runs/{id}/events`); `/runs/{id}/rules/{rule_id}` one rule and its
//!   attempts; `/runs/{id}/report.{md,html,json,ckl,cklb}` downloads rendered by temper-report.
//! - It reads the store through the `temper_journal` traits only, and writes nothing.
//! - Every page is rendered by minijinja with HTML auto-escaping, and carries a
//!   `Content-Security-Policy: default-src 'self'`: the page's script is a static file.
//! - It listens on loopback unless told otherwise; any other address needs a bearer token.
//! - It answers only requests whose `Host` is an IP literal, `localhost` or a name given with
//!   `--allow-host` (against DNS rebinding: `host.rs`).
//!
//! ```no_run
//! # async fn f(journal: std::sync::Arc<dyn temper_journal::ReadJournal>) -> Result<(), temper_web::WebError> {
//! let config = temper_web::WebConfig::new("127.0.0.1:8080".parse().unwrap(), None, "/srv/ssg".into());
//! temper_web::Server::bind(journal, config).await?.run().await
//! # }
//! ```
mod auth;
mod error;
mod host;
mod pages;
mod progress;
mod routes;
mod server;
mod sse;
mod state;

pub use auth::Token;
pub use error::WebError;
pub use host::Hosts;
pub use server::{Server, WebConfig, check_bind};
