//! `temper.toml`, then `TEMPER_*` environment variables, then flags.
use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};
use temper_agents::LlmConfig;
use temper_core::ralph::Settings;
use temper_core::scan::{SCAN_LANES, SCAN_TIMEOUT};
use temper_journal::target::{Target, TargetError, Targets, vm_dir};

/// All settings. Keys are flat so that `TEMPER_SSH_PORT` maps to `ssh_port`. The flat target
/// keys (`libvirt_uri` … `health_command`, [`Target`]'s) are the target named `default`, or,
/// with `[[target]]` tables, what each table starts from. The defaults are the core's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Config {
    /// The flat target keys. A flat `name` is ignored: they are `default`, a table names its own.
    #[serde(flatten)]
    pub base: Target,
    pub skills_dir: PathBuf,
    /// An XCCDF 1.2 tailoring file (SCAP Workbench, autotailor) over the profile.
    pub tailoring_file: Option<PathBuf>,
    /// A waivers file (`[[waiver]]`: rule, reason, approved_by, expires) added to the skill's own.
    pub waivers_file: Option<PathBuf>,
    /// The keys a plan (`temper run --plan`) may be signed by, in the allowed-signers format.
    pub allowed_signers_file: Option<PathBuf>,
    /// The host's own plan key (`temper_core::plan::own_key`): it seals the plans temper hands
    /// itself (a job's last proven plan, `fleet run --plan-from`'s). Made at first use, 0600.
    pub plan_key_file: PathBuf,
    /// The guests' SSH host keys (OpenSSH's known_hosts format), the host's own: never in the
    /// store. Writable by its owner alone, or refused.
    pub known_hosts_file: PathBuf,
    /// SSG content on the host (for rules, titles and stock fixes).
    pub content_dir: PathBuf,
    /// The same content in the guest (for oscap).
    pub guest_content_dir: String,
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
    /// A fix, revert or replay still working this long is stopped (the hard cap).
    pub fix_timeout_secs: u64,
    /// A fix whose processes use no CPU and write nothing this long, or wait this long on a
    /// package manager's lock, is stopped as stalled.
    pub fix_stall_secs: u64,
    pub scan_timeout_secs: u64,
    /// OVAL engine: a large set of rules is shared out to this many `oscap oval eval`, side by
    /// side (the guest's vCPUs).
    pub scan_lanes: usize,
    /// OVAL engine: judge the tree-walking tests on the host over one walk of the guest's file
    /// system (docs/scan-engines.md, "One walk"), instead of oscap walking it for each rule.
    pub scan_walk: bool,
    /// Reboot the guest cold at the end of each run and prove the fixes survive it.
    pub reboot_proof: bool,
    /// At the end of each run, judge the final state's disk from outside the guest and hold the
    /// guest's final scan against it (docs/offline.md); a local hypervisor only.
    pub cross_examine: bool,
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
    /// The core's defaults: the default target (`temper_core::target`), the loop's settings,
    /// the reboot proof's and the scanner's, and the LLM client's.
    fn default() -> Self {
        let loop_ = Settings::default();
        let proof = loop_.reboot.unwrap_or_default();
        let llm = LlmConfig::default();
        Self {
            base: Target::default(),
            skills_dir: "skills".into(),
            tailoring_file: None,
            waivers_file: None,
            allowed_signers_file: None,
            plan_key_file: ".temper/plan_ed25519".into(),
            known_hosts_file: temper_target::DEFAULT_KNOWN_HOSTS.into(),
            content_dir: vm_dir().join("ssg/usr/share/xml/scap/ssg/content"),
            guest_content_dir: "/usr/share/xml/scap/ssg/content".into(),
            db: ".temper/temper.db".into(),
            runs_dir: None,
            llm_url: None,
            llm_model: None,
            llm_api_key: None,
            llm_timeout_secs: llm.timeout.as_secs(),
            llm_max_tokens: llm.max_tokens,
            llm_max_retries: llm.max_retries,
            llm_context_tokens: llm.context_tokens,
            llm_prefill_tool_call: llm.prefill_tool_call,
            rule_budget_secs: loop_.rule_budget.as_secs(),
            max_attempts: loop_.max_attempts,
            reengage_every: loop_.reengage_every,
            regression_every: loop_.regression_every,
            fix_timeout_secs: loop_.fix_watch.cap.as_secs(),
            fix_stall_secs: loop_.fix_watch.stall_after.as_secs(),
            scan_timeout_secs: SCAN_TIMEOUT.as_secs(),
            scan_lanes: SCAN_LANES,
            scan_walk: true,
            reboot_proof: loop_.reboot.is_some(),
            cross_examine: true,
            shutdown_grace_secs: proof.grace.as_secs(),
            boot_timeout_secs: proof.boot_timeout.as_secs(),
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
        let figment = Figment::from(Serialized::defaults(Config::default()))
            .merge(Toml::file(file))
            .merge(Env::prefixed("TEMPER_").ignore(&["vm_dir", "log", "target"]));
        let err = |e| ConfigError(Box::new(e));
        // The target keys on their own first: `flatten` loses the key of a bad value.
        figment.extract::<Target>().map_err(err)?;
        figment.extract().map_err(err)
    }

    pub fn skill_dir(&self, skill: &str) -> PathBuf {
        self.skills_dir.join(skill)
    }

    /// Every target: the `[[target]]` tables over the flat keys, or the flat keys alone.
    pub fn targets(&self) -> Result<Targets, TargetConfigError> {
        Ok(Targets::from_tables(&self.base, &self.targets)?)
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
    use serde_json::{Map, Value};

    use super::*;

    #[test]
    fn file_then_env_override_defaults() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("temper.toml", "ssh_port = 2300\nskill = \"stig-rhel9\"\nmax_attempts = 7\n")?;
            jail.set_env("TEMPER_SSH_PORT", "2400");
            let c = Config::load(Path::new("temper.toml")).unwrap();
            assert_eq!(c.base.ssh_port, 2400, "env beats file");
            assert_eq!(c.base.skill, "stig-rhel9");
            assert_eq!(c.max_attempts, 7);
            assert_eq!(c.base.domain, "temper-test", "default kept");
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

    /// The example sets the defaults only, and names every key (set, or commented out).
    #[test]
    fn the_example_states_the_defaults() {
        figment::Jail::expect_with(|jail| {
            jail.clear_env(); // `TEMPER_VM_DIR` would move the default paths
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../temper.toml.example");
            let stated: Map<String, Value> = Figment::from(Toml::file(path)).extract()?;
            let Value::Object(defaults) = serde_json::to_value(Config::default()).unwrap() else { unreachable!() };
            for (key, value) in &stated {
                assert_eq!(Some(value), defaults.get(key), "temper.toml.example sets `{key}` to other than its default");
            }
            let text = std::fs::read_to_string(path).unwrap();
            let named: Vec<&str> = text
                .lines()
                .filter_map(|l| l.trim_start_matches("# ").split_once(" = ").map(|(k, _)| k.trim()))
                .filter(|k| k.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
                .collect();
            for key in named.iter().filter(|k| **k != "llm_api_key") {
                assert!(defaults.contains_key(*key), "temper.toml.example names `{key}`, which is no key");
            }
            // `name` and `target` belong to the `[[target]]` tables, shown commented out.
            for key in defaults.keys().filter(|k| !["name", "target"].contains(&k.as_str())) {
                assert!(named.contains(&key.as_str()), "temper.toml.example lacks `{key}`");
            }
            Ok(())
        });
    }

    #[test]
    fn api_key_is_never_serialized() {
        let c = Config { llm_api_key: Some("sk-secret".into()), ..Config::default() };
        assert!(!serde_json::to_string(&c).unwrap().contains("sk-secret"));
    }
}

#[cfg(test)]
#[allow(clippy::result_large_err)]
mod probe {
    use super::*;
    #[test]
    fn probe_messages() {
        let cases: &[(&str, &[(&str, &str)])] = &[
            ("ssh_port = \"many\"\n", &[]),
            ("", &[("TEMPER_DOMAIN", "123")]),
            ("", &[("TEMPER_PROFILE", "5")]),
            ("", &[("TEMPER_SSH_KEY", "/x/y")]),
            ("domain = 5\n", &[]),
            ("max_attempts = \"x\"\n", &[]),
            ("name = \"x\"\nprofile = \"p\"\n", &[]),
            ("[[target]]\nname = \"a\"\nsshport = 1\n", &[]),
            ("ssh_port = 70000\n", &[]),
            ("", &[("TEMPER_SSH_PORT", "abc")]),
            ("", &[("TEMPER_REBOOT_PROOF", "false")]),
        ];
        for (file, env) in cases {
            figment::Jail::expect_with(|jail| {
                jail.clear_env();
                jail.create_file("temper.toml", file)?;
                for (k, v) in env.iter() {
                    jail.set_env(k, v);
                }
                let r = Config::load(Path::new("temper.toml"));
                let out = match r {
                    Ok(c) => format!("OK {:?} reboot={}", c.targets().map(|t| t.all().to_vec()).map_err(|e| e.to_string()), c.reboot_proof),
                    Err(e) => format!("ERR {e}"),
                };
                println!("CASE {file:?} {env:?} => {out}");
                Ok(())
            });
        }
    }
}
