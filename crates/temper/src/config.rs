//! `temper.toml`, then `TEMPER_*` environment variables, then flags.
use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};
use temper_core::target::{Target, TargetError, Targets, vm_dir};

/// All settings. Keys are flat so that `TEMPER_SSH_PORT` maps to `ssh_port`. The flat target
/// keys (`libvirt_uri` … `health_command`) are the target named `default`, or, with
/// `[[target]]` tables, what each table starts from.
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
    /// OVAL engine: a large set of rules is shared out to this many `oscap oval eval`, side by
    /// side (the guest's vCPUs).
    pub scan_lanes: usize,
    /// Reboot the guest cold at the end of each run and prove the fixes survive it.
    pub reboot_proof: bool,
    /// How long a clean shutdown may take before the guest is powered off.
    pub shutdown_grace_secs: u64,
    /// A guest without SSH this long after its start does not boot.
    pub boot_timeout_secs: u64,
    pub otlp_endpoint: Option<String>,
    /// `[[target]]` tables: a `name` and the target keys that differ from the flat ones.
    #[serde(default, rename = "target")]
    pub targets: Vec<serde_json::Map<String, serde_json::Value>>,
}

impl Default for Config {
    /// The target keys are the default target's (`temper_core::target`).
    fn default() -> Self {
        let t = Target::default();
        Self {
            libvirt_uri: t.libvirt_uri,
            domain: t.domain,
            baseline: t.baseline,
            ssh_host: t.ssh_host,
            ssh_port: t.ssh_port,
            ssh_user: t.ssh_user,
            ssh_key: t.ssh_key,
            skill: t.skill,
            skills_dir: "skills".into(),
            profile: t.profile,
            tailoring_file: None,
            waivers_file: None,
            content_dir: vm_dir().join("ssg/usr/share/xml/scap/ssg/content"),
            guest_content_dir: "/usr/share/xml/scap/ssg/content".into(),
            health_command: t.health_command,
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
            scan_lanes: 2,
            reboot_proof: true,
            shutdown_grace_secs: 90,
            boot_timeout_secs: 300,
            otlp_endpoint: None,
            targets: Vec::new(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct ConfigError(#[from] Box<figment::Error>);

#[derive(Debug, thiserror::Error)]
#[error("temper.toml: {0}")]
pub struct TargetConfigError(#[from] TargetError);

impl Config {
    /// Defaults, then the file (if it exists), then `TEMPER_*`.
    pub fn load(file: &Path) -> Result<Self, ConfigError> {
        Figment::from(Serialized::defaults(Config::default()))
            .merge(Toml::file(file))
            .merge(Env::prefixed("TEMPER_").ignore(&["vm_dir", "log", "target"]))
            .extract()
            .map_err(|e| ConfigError(Box::new(e)))
    }

    pub fn skill_dir(&self, skill: &str) -> PathBuf {
        self.skills_dir.join(skill)
    }

    /// Every target: the `[[target]]` tables over the flat keys, or the flat keys alone.
    pub fn targets(&self) -> Result<Targets, TargetConfigError> {
        let base = Target {
            name: temper_core::target::DEFAULT_TARGET.into(),
            libvirt_uri: self.libvirt_uri.clone(),
            domain: self.domain.clone(),
            baseline: self.baseline.clone(),
            ssh_host: self.ssh_host.clone(),
            ssh_port: self.ssh_port,
            ssh_user: self.ssh_user.clone(),
            ssh_key: self.ssh_key.clone(),
            skill: self.skill.clone(),
            profile: self.profile.clone(),
            health_command: self.health_command.clone(),
        };
        Ok(Targets::from_tables(&base, &self.targets)?)
    }

    /// The target named `name` (`--target`); without one, the only one or `default`.
    pub fn target(&self, name: Option<&str>) -> Result<Target, TargetConfigError> {
        Ok(self.targets()?.get(name)?.clone())
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
    fn flat_keys_are_the_default_target_and_tables_start_from_them() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("temper.toml", "ssh_port = 2300\ndomain = \"flat\"\n")?;
            let c = Config::load(Path::new("temper.toml")).unwrap();
            let t = c.target(None).unwrap();
            assert_eq!((t.name.as_str(), t.domain.as_str(), t.ssh_port), ("default", "flat", 2300));

            jail.create_file(
                "temper.toml",
                "ssh_user = \"admin\"\n[[target]]\nname = \"a\"\ndomain = \"temper-a\"\n\n[[target]]\nname = \"b\"\ndomain = \"temper-b\"\nssh_port = 2223\nprofile = \"p\"\n",
            )?;
            jail.set_env("TEMPER_SSH_PORT", "2400");
            let c = Config::load(Path::new("temper.toml")).unwrap();
            let names: Vec<String> = c.targets().unwrap().all().iter().map(|t| t.name.clone()).collect();
            assert_eq!(names, ["a", "b"]);
            let (a, b) = (c.target(Some("a")).unwrap(), c.target(Some("b")).unwrap());
            assert_eq!((a.domain.as_str(), a.ssh_port, a.ssh_user.as_str()), ("temper-a", 2400, "admin"), "a flat key (env) fills in");
            assert_eq!((b.ssh_port, b.profile.as_deref()), (2223, Some("p")), "the table wins over the flat keys");
            let e = c.target(None).unwrap_err().to_string();
            assert!(e.contains("--target") && e.contains("a, b"), "{e}");
            Ok(())
        });
    }

    #[test]
    fn a_typo_in_a_target_table_is_named() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("temper.toml", "[[target]]\nname = \"a\"\nsshport = 1\n")?;
            let e = Config::load(Path::new("temper.toml")).unwrap().targets().unwrap_err().to_string();
            assert!(e.contains("sshport"), "{e}");
            Ok(())
        });
    }

    #[test]
    fn api_key_is_never_serialized() {
        let c = Config { llm_api_key: Some("sk-secret".into()), ..Config::default() };
        assert!(!serde_json::to_string(&c).unwrap().contains("sk-secret"));
    }
}
