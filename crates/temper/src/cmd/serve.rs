//! `temper serve`: the live, read-only web view (temper-web) over the configured store.
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use temper_journal::ReadJournal;
use temper_web::{Hosts, Server, Token, WebConfig};

use crate::config::Config;

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:\n  temper serve\n  TEMPER_WEB_TOKEN=$(cat token) temper serve --bind 0.0.0.0:8080")]
pub struct ServeArgs {
    /// Where to listen; an address other than loopback needs a token.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,
    /// A file holding the bearer token every request must carry (else `TEMPER_WEB_TOKEN`).
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// A name a request's `Host` may carry besides IP literals and `localhost` (repeatable);
    /// any other is refused, against DNS rebinding.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_host: Vec<String>,
}

/// The token: `--token-file`, else `TEMPER_WEB_TOKEN`, else none.
fn token(token_file: Option<PathBuf>) -> anyhow::Result<Option<Token>> {
    Ok(match token_file {
        Some(path) => Some(Token::from_file(&path)?),
        None => std::env::var("TEMPER_WEB_TOKEN").ok().map(|t| Token::new(&t)).transpose()?,
    })
}

pub async fn run(config: &Config, args: ServeArgs) -> anyhow::Result<u8> {
    let ServeArgs { bind, token_file, allow_host } = args;
    let token = token(token_file)?;
    // Refused before anything opens: a non-loopback address without a token.
    temper_web::check_bind(bind, token.as_ref())?;
    let store = crate::wiring::store(config).await?;
    let describe = store.describe();
    let guarded = if token.is_some() { " (bearer token required)" } else { "" };
    let web = WebConfig { hosts: Hosts::new(&allow_host), ..WebConfig::new(bind, token, config.content_dir.clone()) };
    let server = Server::bind(Arc::new(store), web).await?;
    eprintln!("temper: serving {describe}, read-only, on http://{}{guarded}", server.local_addr()?);
    server.run().await?;
    Ok(0)
}
