//! Builds the ports, agents, skill and content from the config.
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use temper_agents::{AgentKind, LlmAgent, LlmConfig, StockAgent, TieredAgent};
use temper_core::agent::{Architect, Reflector, Worker};
use temper_core::ports::{Hypervisor, PortError};
use temper_core::scan::{OvalSide, Scanner};
use temper_core::skill::Skill;
use temper_journal::target::Target;
use temper_scap::Benchmark;
use temper_scap::oval::{OvalContent, OvalEngine};
use temper_target::{KnownHosts, LibvirtConfig, LibvirtHypervisor, SshConfig, SshGuest};

use crate::config::Config;

/// The journal named by `db`, its events mirrored under `runs_dir` when one is set.
pub async fn store(config: &Config) -> anyhow::Result<temper_store::Store> {
    let store = temper_store::Store::open(&config.db).await?;
    Ok(match &config.runs_dir {
        Some(dir) => store.with_runs_dir(dir),
        None => store,
    })
}

/// The skill folder `name` under `skills_dir`.
pub fn skill(config: &Config, name: &str) -> anyhow::Result<Skill> {
    let dir = config.skill_dir(name);
    Skill::load(&dir).with_context(|| format!("loading skill {name} (skills_dir = {})", config.skills_dir.display()))
}

pub fn host_datastream(config: &Config, skill: &Skill) -> PathBuf {
    config.content_dir.join(&skill.manifest.datastream)
}

pub fn guest_datastream(config: &Config, skill: &Skill) -> String {
    format!("{}/{}", config.guest_content_dir.trim_end_matches('/'), skill.manifest.datastream)
}

/// A scanner of `profile` in the guest, with the configured timeout, lanes and walk.
pub fn scanner(config: &Config, skill: &Skill, profile: &str) -> Scanner {
    let mut scanner = Scanner::new(guest_datastream(config, skill), profile);
    scanner.timeout = Duration::from_secs(config.scan_timeout_secs);
    scanner.lanes = config.scan_lanes;
    scanner.walk = config.scan_walk;
    scanner
}

/// The OVAL engine's host side for `benchmark` (the run's content): the host's datastream,
/// indexed. The scanner checks that the guest has the same one.
pub fn oval(config: &Config, skill: &Skill, benchmark: Benchmark) -> anyhow::Result<OvalSide> {
    let ds = host_datastream(config, skill);
    let content = OvalContent::read(&ds).with_context(|| format!("indexing {} for the OVAL engine", ds.display()))?;
    Ok(OvalSide { engine: Arc::new(OvalEngine::new(content)), benchmark: Arc::new(benchmark) })
}

/// The judge of the target's disk from outside the guest, over the host's content (`side`'s);
/// `None` when `cross_examine` is off.
pub fn offline_judge(config: &Config, target: &Target, side: &OvalSide) -> Option<temper_target::DiskJudge> {
    config.cross_examine.then(|| temper_target::DiskJudge {
        hv: hypervisor(target),
        engine: side.engine.clone(),
        benchmark: side.benchmark.clone(),
        scratch: None,
    })
}

/// The target's shell (the key is loaded now; it connects on first use), its host key checked
/// against the host's known-hosts file at every connection.
pub fn guest(config: &Config, target: &Target) -> anyhow::Result<SshGuest> {
    Ok(SshGuest::new(ssh_config(config, target))?)
}

/// How to reach `target`, its host key pinned in `known_hosts_file`.
pub fn ssh_config(config: &Config, target: &Target) -> SshConfig {
    SshConfig::for_target(target).pinned_in(KnownHosts::new(&config.known_hosts_file))
}

/// Before a run starts on `target` (or goes on): when the domain runs, the guest must offer the
/// host key recorded for it, or nothing is recorded and nothing runs. A guest that does not
/// answer is checked at the loop's first connection, as every connection is.
pub async fn check_host_key(config: &Config, target: &Target) -> anyhow::Result<()> {
    if let Some(note) = hypervisor_trust(target) {
        tracing::warn!(target = %target.name, "{note}");
    }
    if !matches!(hypervisor(target).is_running().await, Ok(true)) {
        return Ok(());
    }
    match guest(config, target)?.check_host_key().await {
        Err(PortError::HostKey(why)) => anyhow::bail!("target {}: {why}", target.name),
        Ok(_) | Err(_) => Ok(()),
    }
}

pub fn hypervisor(target: &Target) -> LibvirtHypervisor {
    LibvirtHypervisor::new(LibvirtConfig::for_target(target))
}

/// A remote hypervisor (`qemu+ssh://`) is reached through the system's ssh, whose own
/// known_hosts pins that host (root's `~/.ssh/known_hosts`, `/etc/ssh/ssh_known_hosts`), not
/// temper's. `no_verify=1` in the URI takes a new host's key on first use: said here.
pub fn hypervisor_trust(target: &Target) -> Option<String> {
    let uri = &target.libvirt_uri;
    (uri.contains("+ssh://") && uri.contains("no_verify=1")).then(|| {
        format!(
            "the hypervisor {uri} is reached through ssh with no_verify=1: a host key never seen is taken on first use; record it in root's known_hosts and drop no_verify"
        )
    })
}

/// The LLM settings, when an endpoint is configured or given.
pub fn llm_config(config: &Config, url: Option<String>, model: Option<String>) -> Option<LlmConfig> {
    let url = url.or_else(|| config.llm_url.clone())?;
    let model = model.or_else(|| config.llm_model.clone()).unwrap_or_else(|| LlmConfig::default().model);
    let mut c = LlmConfig::new(url, model);
    c.api_key = config.llm_api_key.clone();
    c.timeout = Duration::from_secs(config.llm_timeout_secs);
    c.max_tokens = config.llm_max_tokens;
    c.max_retries = config.llm_max_retries;
    c.context_tokens = config.llm_context_tokens;
    c.prefill_tool_call = config.llm_prefill_tool_call;
    Some(c)
}

/// One value that plays the three roles.
pub trait Roles: Architect + Worker + Reflector {}
impl<T: Architect + Worker + Reflector> Roles for T {}

pub fn agents(kind: AgentKind, llm: Option<LlmConfig>, skill: &Skill) -> anyhow::Result<Box<dyn Roles>> {
    let llm_agent = |llm: Option<LlmConfig>| -> anyhow::Result<LlmAgent> {
        let llm = llm.context("this agent needs an LLM: pass --llm URL or set llm_url")?;
        Ok(LlmAgent::new(llm, &skill.dir)?)
    };
    Ok(match kind {
        AgentKind::Stock => Box::new(StockAgent),
        AgentKind::Llm => Box::new(llm_agent(llm)?),
        AgentKind::Tiered => Box::new(TieredAgent::new(llm_agent(llm)?)),
    })
}
