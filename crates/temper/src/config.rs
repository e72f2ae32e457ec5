//! `temper.toml`, then `TEMPER_*` environment variables, then flags.
use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

/// All settings. Keys are flat so that `TEMPER_SSH_PORT` maps to `ssh_port`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Config {
    pub libvirt_uri: String,
    pub domain: String,
    pub baseline: String,
    pub ssh_host: String,
    pub ssh_port: u16,
    pub ssh_user: String,
    pub ssh_key: PathBuf,
    /// The skill folder name under `skills_dir`.
    pub skill: String,
    pub skills_dir: PathBuf,
    /// Overrides the skill's profile.
    pub profile: Option<String>,
    /// An XCCDF 1.2 tailoring file (SCAP Workbench, autotailor) over the profile.
    pub tailoring_file: Option<PathBuf>,
    /// A waivers file (`[[waiver]]`: rule, reason, approved_by, expires) added to the skill's own.
    pub waivers_file: Option<PathBuf>,
    /// SSG content on the host (for rules, titles and stock fixes).
    pub content_dir: PathBuf,
    /// The same content in the guest (for oscap).
    pub guest_content_dir: String,
    pub health_command: String,
    /// A file path or `sqlite://PATH` (SQLite), or `postgres://…` (PostgreSQL, shared).
    pub db: String,
    /// Where each run's `events.jsonl` is mirrored; unset: beside a SQLite file, else `.temper/runs`.
    pub runs_dir: Option<PathBuf>,
    pub llm_url: Option<String>,
    pub llm_model: Option<String>,
    /// Never logged.
    #[serde(skip_serializing)]
    pub llm_api_key: Option<String>,
    pub llm_timeout_secs: u64,
    pub llm_max_tokens: u32,
    pub llm_max_retries: u32,
    pub llm_context_tokens: u32,
    pub llm_prefill_tool_call: bool,
    pub rule_budget_secs: u64,
    pub max_attempts: u32,
    pub reengage_every: u32,
    /// Kept fixes per regression-set rescan; unset: measured per run.
    pub regression_every: Option<u32>,
    pub fix_timeout_secs: u64,
    pub scan_timeout_secs: u64,
    pub otlp_endpoint: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        let vm = std::env::var("TEMPER_VM_DIR").unwrap_or_else(|_| "/var/cache/temper/vm".into());
        Self {
            libvirt_uri: "qemu:///system".into(),
            domain: "temper-test".into(),
            baseline: "baseline".into(),
            ssh_host: "127.0.0.1".into(),
            ssh_port: 2222,
            ssh_user: "temper".into(),
            ssh_key: PathBuf::from(&vm).join("keys/id_ed25519"),
            skill: "debian12-anssi".into(),
            skills_dir: "skills".into(),
            profile: None,
            tailoring_file: None,
            waivers_file: None,
            content_dir: PathBuf::from(&vm).join("ssg/usr/share/xml/scap/ssg/content"),
            guest_content_dir: "/usr/share/xml/scap/ssg/content".into(),
            health_command: "/usr/local/bin/mission-healthcheck".into(),
            db: ".temper/temper.db".into(),
            runs_dir: None,
            llm_url: None,
            llm_model: None,
            llm_api_key: None,
            llm_timeout_secs: 180,
            llm_max_tokens: 1024,
            llm_max_retries: 4,
            llm_context_tokens: 8192,
            llm_prefill_tool_call: false,
            rule_budget_secs: 1800,
            max_attempts: 5,
            reengage_every: 2,
            regression_every: None,
            fix_timeout_secs: 600,
            scan_timeout_secs: 1800,
            otlp_endpoint: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct ConfigError(#[from] Box<figment::Error>);

impl Config {
    /// Defaults, then the file (if it exists), then `TEMPER_*`.
    pub fn load(file: &Path) -> Result<Self, ConfigError> {
        Figment::from(Serialized::defaults(Config::default()))
            .merge(Toml::file(file))
            .merge(Env::prefixed("TEMPER_").ignore(&["vm_dir", "log"]))
            .extract()
            .map_err(|e| ConfigError(Box::new(e)))
    }

    pub fn skill_dir(&self) -> PathBuf {
        self.skills_dir.join(&self.skill)
    }

    pub fn target(&self) -> String {
        format!("{}#{} ({}@{}:{})", self.libvirt_uri, self.domain, self.ssh_user, self.ssh_host, self.ssh_port)
    }
}

#[cfg(test)]
// figment's `Jail` closures return its own (large) error type.
#[allow(clippy::result_large_err)]
mod tests {
    use super::*;

    #[test]
    fn file_then_env_override_defaults() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("temper.toml", "ssh_port = 2300\nskill = \"stig-rhel9\"\nmax_attempts = 7\n")?;
            jail.set_env("TEMPER_SSH_PORT", "2400");
            let c = Config::load(Path::new("temper.toml")).unwrap();
            assert_eq!(c.ssh_port, 2400, "env beats file");
            assert_eq!(c.skill, "stig-rhel9");
            assert_eq!(c.max_attempts, 7);
            assert_eq!(c.domain, "temper-test", "default kept");
            Ok(())
        });
    }

    #[test]
    fn bad_value_is_a_clear_error() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("temper.toml", "ssh_port = \"many\"\n")?;
            let e = Config::load(Path::new("temper.toml")).unwrap_err().to_string();
            assert!(e.contains("ssh_port"), "{e}");
            Ok(())
        });
    }

    #[test]
    fn api_key_is_never_serialized() {
        let c = Config { llm_api_key: Some("sk-secret".into()), ..Config::default() };
        assert!(!serde_json::to_string(&c).unwrap().contains("sk-secret"));
    }
}
