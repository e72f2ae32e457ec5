//! Shared fixtures for the tests over the scripted server.
#![allow(dead_code)]
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use temper_agents::{LlmAgent, LlmConfig};
use temper_core::agent::{Candidate, FixContext, PickContext, ReengageContext, ReflectContext};

pub fn skill_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../skills/stig-rhel9")
}

/// Fast back-off and short timeouts so fault tests run in about a second.
pub fn config(url: &str) -> LlmConfig {
    LlmConfig {
        timeout: Duration::from_millis(1500),
        connect_timeout: Duration::from_millis(500),
        max_retries: 3,
        min_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
        max_retry_after: Duration::from_secs(5),
        max_tokens: 512,
        ..LlmConfig::new(url, "mock-model")
    }
}

pub fn agent(url: &str) -> LlmAgent {
    LlmAgent::new(config(url), skill_dir()).expect("agent")
}

pub fn fix_args() -> Value {
    json!({
        "fix_script": "set -euo pipefail\nprintf 'PermitRootLogin no\\n' > /etc/ssh/sshd_config.d/01-root.conf",
        "revert_script": "rm -f /etc/ssh/sshd_config.d/01-root.conf",
        "description": "disable root login over SSH"
    })
}

pub fn fix_context() -> FixContext {
    FixContext {
        rule_id: "xccdf_org.ssgproject.content_rule_sshd_disable_root_login".into(),
        title: "Disable SSH Root Login".into(),
        severity: "medium".into(),
        description: "The root user should never be allowed to login to a system directly over a network.".into(),
        rationale: "Even though the communications channel may be encrypted, an additional layer of security is gained.".into(),
        plan: "Add a drop-in under /etc/ssh/sshd_config.d setting PermitRootLogin no.".into(),
        stock_fix: Some("sed -i 's/^PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config".into()),
        episodes: Vec::new(),
        lessons: vec!["sshd drop-ins must sort before 50-redhat.conf".into()],
        bans: vec![r"systemctl\s+stop\s+sshd".into()],
        attempt: temper_journal::AttemptNo::new(2).unwrap(),
        evidence: None,
        tried: Vec::new(),
    }
}

pub fn candidate(id: &str, stock: bool, attempts: u32) -> Candidate {
    Candidate {
        rule_id: id.into(),
        title: format!("title of {id}"),
        severity: "medium".into(),
        stig_ids: vec!["RHEL-09-255045".into()],
        has_stock_fix: stock,
        attempts,
    }
}

pub const ROOT_LOGIN: &str = "xccdf_org.ssgproject.content_rule_sshd_disable_root_login";
pub const TMOUT: &str = "xccdf_org.ssgproject.content_rule_accounts_tmout";

pub fn pick_context() -> PickContext {
    PickContext {
        skill: "stig-rhel9".into(),
        profile: "xccdf_org.ssgproject.content_profile_stig".into(),
        candidates: vec![candidate(ROOT_LOGIN, true, 0), candidate(TMOUT, false, 1)],
        lessons: Vec::new(),
    }
}

pub fn reengage_context() -> ReengageContext {
    ReengageContext {
        rule_id: ROOT_LOGIN.into(),
        title: "Disable SSH Root Login".into(),
        plan: "old plan".into(),
        episodes: vec!["attempt 1: sed on sshd_config, rule still fails".into()],
        attempts: 3,
        plateau: true,
        tried: Vec::new(),
        evidence: None,
        last: None,
    }
}

pub fn reflect_context() -> ReflectContext {
    ReflectContext {
        rule_id: ROOT_LOGIN.into(),
        title: "Disable SSH Root Login".into(),
        fix_script: "sed -i 's/^PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config".into(),
        verdict: "still_failing".into(),
        diagnostics: "rule result: fail\n/etc/ssh/sshd_config.d/50-redhat.conf sets PermitRootLogin yes first".into(),
        episodes: Vec::new(),
    }
}

/// The messages of a recorded request.
pub fn messages(req: &Value) -> &Vec<Value> {
    req["messages"].as_array().expect("messages array")
}
