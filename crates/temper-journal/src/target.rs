//! A target: one machine to harden. Its hypervisor and domain, the shell temper reaches it
//! by, the skill and profile it is hardened against, and its health check. A run stores its
//! target whole, so `temper resume` drives the machine the run started on.
//!
//! The defaults (the test VM that `vm/lib.sh` builds) are written here and nowhere else in
//! the Rust code; a test checks that `vm/lib.sh` agrees.
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::footprint::Footprint;

/// The name of the target the flat keys of temper.toml describe.
pub const DEFAULT_TARGET: &str = "default";

/// One machine to harden. Its fields are the flat target keys of temper.toml too (flattened
/// into `temper::config::Config`), so it ignores other keys; a `[[target]]` table with a key
/// of none of its fields is refused ([`Targets::from_tables`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    pub name: String,
    pub libvirt_uri: String,
    pub domain: String,
    /// The snapshot a new run starts from.
    pub baseline: String,
    pub ssh_host: String,
    pub ssh_port: u16,
    pub ssh_user: String,
    /// The private key's path (never its contents).
    pub ssh_key: PathBuf,
    /// The skill folder name under `skills_dir`.
    pub skill: String,
    /// Overrides the skill's profile.
    pub profile: Option<String>,
    pub health_command: String,
    /// What temper put on this machine to reach it (the test image's, unless enrollment or the
    /// operator says otherwise): `temper image export` takes it away.
    #[serde(default)]
    pub footprint: Footprint,
}

/// Where `vm/lib.sh` keeps the image, key and overlay, unless `TEMPER_VM_DIR` says otherwise.
pub const DEFAULT_VM_DIR: &str = "/var/cache/temper/vm";

/// `TEMPER_VM_DIR`, else [`DEFAULT_VM_DIR`].
pub fn vm_dir() -> PathBuf {
    std::env::var_os("TEMPER_VM_DIR").map(Into::into).unwrap_or_else(|| DEFAULT_VM_DIR.into())
}

impl Default for Target {
    /// The test VM: domain `temper-test` on `qemu:///system`, SSH as `temper` on 127.0.0.1:2222.
    fn default() -> Self {
        Self {
            name: DEFAULT_TARGET.into(),
            libvirt_uri: "qemu:///system".into(),
            domain: "temper-test".into(),
            baseline: "baseline".into(),
            ssh_host: "127.0.0.1".into(),
            ssh_port: 2222,
            ssh_user: "temper".into(),
            ssh_key: vm_dir().join("keys/id_ed25519"),
            skill: "debian12-anssi".into(),
            profile: None,
            health_command: "/usr/local/bin/mission-healthcheck".into(),
            footprint: Footprint::default(),
        }
    }
}

impl Target {
    /// For messages and reports: `qemu:///system#temper-test (temper@127.0.0.1:2222)`.
    pub fn label(&self) -> String {
        format!("{}#{} ({}@{}:{})", self.libvirt_uri, self.domain, self.ssh_user, self.ssh_host, self.ssh_port)
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TargetError {
    #[error("no target `{name}`; the targets are: {known}")]
    Unknown { name: String, known: String },
    #[error("{count} targets and none named `default`: pass --target NAME (one of {known})")]
    NoneChosen { count: usize, known: String },
    #[error("target `{0}` is defined twice")]
    Duplicate(String),
    #[error("target name `{0}`: use letters, digits, `-`, `_` or `.` (at most 64)")]
    BadName(String),
    #[error("[[target]] number {index}: {reason}")]
    Table { index: usize, reason: String },
}

/// The configured targets, in the order written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Targets(Vec<Target>);

impl Targets {
    /// `[[target]]` tables, each over `base` (the flat keys): a table sets what differs. No
    /// tables: `base` is the one target, named `default`.
    pub fn from_tables(base: &Target, tables: &[Map<String, Value>]) -> Result<Self, TargetError> {
        if tables.is_empty() {
            return Ok(Self(vec![Target { name: DEFAULT_TARGET.into(), ..base.clone() }]));
        }
        let Value::Object(base) = serde_json::to_value(base).map_err(|e| TargetError::Table { index: 0, reason: e.to_string() })? else {
            unreachable!("a struct serializes to an object")
        };
        let mut out: Vec<Target> = Vec::with_capacity(tables.len());
        for (i, table) in tables.iter().enumerate() {
            let bad = |reason: String| TargetError::Table { index: i + 1, reason };
            if !table.get("name").is_some_and(Value::is_string) {
                return Err(bad("every target needs a `name`".into()));
            }
            if let Some(key) = table.keys().find(|k| !base.contains_key(*k)) {
                let known = base.keys().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
                return Err(bad(format!("unknown field `{key}`, expected one of {known}")));
            }
            let mut merged = base.clone();
            merged.extend(table.clone());
            let t: Target = serde_json::from_value(Value::Object(merged)).map_err(|e| bad(e.to_string()))?;
            if !valid_name(&t.name) {
                return Err(TargetError::BadName(t.name));
            }
            if out.iter().any(|o| o.name == t.name) {
                return Err(TargetError::Duplicate(t.name));
            }
            out.push(t);
        }
        Ok(Self(out))
    }

    pub fn all(&self) -> &[Target] {
        &self.0
    }

    /// The target named `name`; without a name the only one, else the one named `default`.
    pub fn get(&self, name: Option<&str>) -> Result<&Target, TargetError> {
        let known = || self.0.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ");
        match name {
            Some(n) => self.0.iter().find(|t| t.name == n).ok_or_else(|| TargetError::Unknown { name: n.into(), known: known() }),
            None if self.0.len() == 1 => Ok(&self.0[0]),
            None => self
                .0
                .iter()
                .find(|t| t.name == DEFAULT_TARGET)
                .ok_or_else(|| TargetError::NoneChosen { count: self.0.len(), known: known() }),
        }
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tables(v: Value) -> Vec<Map<String, Value>> {
        v.as_array().unwrap().iter().map(|t| t.as_object().unwrap().clone()).collect()
    }

    #[test]
    fn flat_keys_alone_are_the_default_target() {
        let base = Target { domain: "mine".into(), name: "ignored".into(), ..Target::default() };
        let ts = Targets::from_tables(&base, &[]).unwrap();
        let t = ts.get(None).unwrap();
        assert_eq!((t.name.as_str(), t.domain.as_str()), ("default", "mine"));
        assert_eq!(ts.get(Some("default")).unwrap(), t);
    }

    #[test]
    fn a_table_sets_what_differs_from_the_flat_keys() {
        let base = Target { ssh_user: "admin".into(), ..Target::default() };
        let ts = Targets::from_tables(&base, &tables(json!([{"name": "a", "ssh_port": 2223, "domain": "a-dom"}, {"name": "b"}]))).unwrap();
        let a = ts.get(Some("a")).unwrap();
        assert_eq!((a.ssh_port, a.domain.as_str(), a.ssh_user.as_str()), (2223, "a-dom", "admin"));
        assert_eq!(ts.get(Some("b")).unwrap().ssh_port, 2222);
        assert!(matches!(ts.get(None), Err(TargetError::NoneChosen { count: 2, .. })), "two targets, none named default");
        assert!(matches!(ts.get(Some("c")), Err(TargetError::Unknown { .. })));
    }

    #[test]
    fn bad_tables_are_clear_errors() {
        let base = Target::default();
        let e = Targets::from_tables(&base, &tables(json!([{"name": "a", "sshport": 1}]))).unwrap_err();
        assert!(e.to_string().contains("sshport") && e.to_string().contains("number 1"), "{e}");
        let e = Targets::from_tables(&base, &tables(json!([{"name": "a"}, {"name": "a"}]))).unwrap_err();
        assert_eq!(e, TargetError::Duplicate("a".into()));
        let e = Targets::from_tables(&base, &tables(json!([{"domain": "x"}]))).unwrap_err();
        assert!(e.to_string().contains("needs a `name`"), "{e}");
        assert_eq!(Targets::from_tables(&base, &tables(json!([{"name": "a b"}]))).unwrap_err(), TargetError::BadName("a b".into()));
    }

    #[test]
    fn a_target_round_trips_as_json() {
        let t = Target { name: "b".into(), profile: Some("p".into()), ..Target::default() };
        assert_eq!(serde_json::from_str::<Target>(&serde_json::to_string(&t).unwrap()).unwrap(), t);
    }

    /// `vm/lib.sh` cannot read Rust: its defaults are checked against these.
    #[test]
    fn vm_lib_sh_has_the_same_defaults() {
        let lib = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vm/lib.sh")).unwrap();
        let vm = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vm/up.sh")).unwrap();
        assert!(vm.lines().any(|l| l.trim() == "KEY=$VM_DIR/keys/id_ed25519"), "vm/up.sh keeps the key where the default says");
        let t = Target::default();
        assert!(t.ssh_key.ends_with("keys/id_ed25519"));
        assert!(vm.contains(&format!("gssh {} ", t.health_command)), "vm/up.sh checks health as the default does");
        for line in [
            format!("DOM=${{TEMPER_DOMAIN:-{}}}", t.domain),
            format!("PORT=${{TEMPER_SSH_PORT:-{}}}", t.ssh_port),
            format!("LIBVIRT_URI=${{TEMPER_LIBVIRT_URI:-{}}}", t.libvirt_uri),
            format!("VM_DIR=${{TEMPER_VM_DIR:-{DEFAULT_VM_DIR}}}"),
        ] {
            assert!(lib.lines().any(|l| l.trim() == line), "vm/lib.sh lacks `{line}`");
        }
    }
}
