//! The `Host` check, against DNS rebinding: a page the operator visits on `evil.example`, whose
//! name is made to resolve to 127.0.0.1, reaches the view with `Host: evil.example` and gets
//! nothing. A request is answered only when its `Host` is an IP literal (the bound address is
//! one), `localhost`, or a name given with `--allow-host`.
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::HOST;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::WebError;

/// The names besides IP literals and `localhost` that a request may name, lower case.
#[derive(Debug, Clone, Default)]
pub struct Hosts(Arc<[String]>);

impl Hosts {
    pub fn new(names: &[String]) -> Self {
        Self(names.iter().map(|n| n.trim().to_ascii_lowercase()).filter(|n| !n.is_empty()).collect())
    }

    /// Whether `host` (a `Host` header: a name or an IP literal, with an optional port) is ours.
    pub fn allows(&self, host: &str) -> bool {
        let name = match host.strip_prefix('[') {
            Some(v6) => return v6.split_once(']').is_some_and(|(ip, port)| ip.parse::<Ipv6Addr>().is_ok() && is_port(port)),
            None => match host.rsplit_once(':') {
                Some((name, port)) if is_port(&format!(":{port}")) => name,
                Some(_) => return false,
                None => host,
            },
        };
        let name = name.to_ascii_lowercase();
        name.parse::<Ipv4Addr>().is_ok() || name == "localhost" || self.0.contains(&name)
    }
}

/// Empty, or `:` and a port number.
fn is_port(s: &str) -> bool {
    s.is_empty() || s.strip_prefix(':').is_some_and(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Answers 421 to a request whose `Host` is missing or not ours, before anything is read.
pub async fn check(State(hosts): State<Hosts>, request: Request, next: Next) -> Response {
    let host = request.headers().get(HOST).and_then(|v| v.to_str().ok()).or_else(|| request.uri().authority().map(|a| a.as_str()));
    match host {
        Some(h) if hosts.allows(h) => next.run(request).await,
        other => WebError::BadHost(other.unwrap_or("").chars().take(100).collect()).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_literals_localhost_and_given_names_only() {
        let h = Hosts::new(&["temper.corp.example".into()]);
        for ok in
            ["127.0.0.1:8080", "127.0.0.1", "[::1]:8080", "[::1]", "localhost:8080", "LOCALHOST", "10.0.0.5:80", "Temper.Corp.Example:8080"]
        {
            assert!(h.allows(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "127.0.0.1.nip.io",
            "[::1",
            "[evil]:80",
            "localhost:80x",
            "",
            "a:b:c",
        ] {
            assert!(!h.allows(bad), "{bad}");
        }
        assert!(!Hosts::default().allows("temper.corp.example"), "no name unless given");
    }
}
