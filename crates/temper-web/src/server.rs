//! Where and how the view is served: the bind policy, the listener, the server.
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use temper_journal::ReadJournal;
use tokio::net::TcpListener;

use crate::state::AppState;
use crate::{Hosts, Token, WebError};

/// How often the live view reads the journal by default.
const POLL: Duration = Duration::from_millis(1000);

#[derive(Debug, Clone)]
pub struct WebConfig {
    pub bind: SocketAddr,
    /// Required on every request when set; required to bind anything but loopback.
    pub token: Option<Token>,
    /// SSG content on the host: a run's datastream is read from here, as `temper report` does.
    pub content_dir: PathBuf,
    /// How often a live page's event stream reads the journal.
    pub poll: Duration,
    /// Names a request's `Host` may carry besides IP literals and `localhost`.
    pub hosts: Hosts,
}

impl WebConfig {
    pub fn new(bind: SocketAddr, token: Option<Token>, content_dir: PathBuf) -> Self {
        Self { bind, token, content_dir, poll: POLL, hosts: Hosts::default() }
    }
}

/// Loopback needs nothing; any other address needs a token.
pub fn check_bind(bind: SocketAddr, token: Option<&Token>) -> Result<(), WebError> {
    if bind.ip().is_loopback() || token.is_some() { Ok(()) } else { Err(WebError::OpenWithoutToken(bind)) }
}

/// A bound listener with its routes, ready to run.
pub struct Server {
    listener: TcpListener,
    app: axum::Router,
}

impl Server {
    /// Checks the bind policy, then listens.
    pub async fn bind(journal: Arc<dyn ReadJournal>, config: WebConfig) -> Result<Self, WebError> {
        check_bind(config.bind, config.token.as_ref())?;
        let listener = TcpListener::bind(config.bind).await.map_err(|source| WebError::Bind { addr: config.bind, source })?;
        let token = config.token.clone();
        let app = crate::routes::router(AppState::new(journal, &config)?, token, config.hosts.clone());
        Ok(Self { listener, app })
    }

    /// The address it listens on (the port, when bound to port 0).
    pub fn local_addr(&self) -> Result<SocketAddr, WebError> {
        self.listener.local_addr().map_err(WebError::Serve)
    }

    /// Serves until the process ends.
    pub async fn run(self) -> Result<(), WebError> {
        axum::serve(self.listener, self.app).await.map_err(WebError::Serve)
    }
}
