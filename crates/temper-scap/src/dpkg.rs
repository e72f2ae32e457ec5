//! `dpkginfo` on the host: the installed packages read from a dpkg status file (a disk copy's,
//! or the one a live guest gives as data), and a `dpkginfo_test` judged over them as oscap
//! 1.3.7's probe does. oscap's own probe has no offline mode (`dpkginfo_init has failed`), and
//! in a live guest it costs about 2 s a run under TCG (it opens APT's cache), where reading the
//! status file costs 0.1 s.
//!
//! As oscap's probe (through APT's cache): the object's `name` is looked up as it is (one
//! package, of the native architecture or `all`); a package is installed unless dpkg says
//! `not-installed` or `config-files`; `epoch` is `0` when the version has none, `version` and
//! `release` split at the first `-`, `evr` is `epoch:version-release`.
use std::collections::HashMap;
use std::path::Path;

use crate::oval::{CollectedItem, DefinitionResult, Existence, ItemStatus, TestEvidence};

/// Largest status file read (a full desktop's is about 4 MB).
pub const MAX_STATUS: u64 = 64 << 20;

/// One installed package, as oscap's `dpkginfo_item`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    pub name: String,
    pub arch: String,
    pub epoch: String,
    pub version: String,
    pub release: String,
    pub evr: String,
}

impl Package {
    fn new(name: &str, arch: &str, full: &str) -> Self {
        let (epoch, start) = match full.find(':') {
            Some(i) => (full[..i].to_string(), i + 1),
            None => ("0".to_string(), 0),
        };
        // oscap splits at the first '-' of the whole string, as its helper does.
        let (version, release, evr) = match full.find('-') {
            Some(i) if i >= start => {
                let (v, r) = (&full[start..i], &full[i + 1..]);
                (v.to_string(), r.to_string(), format!("{epoch}:{v}-{r}"))
            }
            _ => {
                let v = &full[start..];
                (v.to_string(), String::new(), format!("{epoch}:{v}"))
            }
        };
        Package { name: name.into(), arch: arch.into(), epoch, version, release, evr }
    }

    /// The item as oscap's results would list it.
    pub fn item(&self) -> CollectedItem {
        let fields = [
            ("name", &self.name),
            ("arch", &self.arch),
            ("epoch", &self.epoch),
            ("release", &self.release),
            ("version", &self.version),
            ("evr", &self.evr),
        ];
        CollectedItem {
            id: String::new(),
            kind: "dpkginfo_item".into(),
            status: ItemStatus::Exists,
            result: None,
            fields: fields.into_iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        }
    }
}

/// The installed packages of a copy.
#[derive(Debug, Clone, Default)]
pub struct Dpkg {
    installed: HashMap<String, Package>,
    /// dpkg's own architecture, when its status names it.
    native: Option<String>,
}

impl Dpkg {
    /// Reads `root/var/lib/dpkg/status`; no file is no package.
    pub fn read(root: &Path) -> std::io::Result<Self> {
        let path = root.join("var/lib/dpkg/status");
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(e),
        };
        if !meta.is_file() || meta.len() > MAX_STATUS {
            return Err(std::io::Error::other(format!("{} is not a regular file under {MAX_STATUS} bytes", path.display())));
        }
        Ok(Self::parse(&String::from_utf8_lossy(&std::fs::read(&path)?)))
    }

    pub fn parse(status: &str) -> Self {
        let stanzas: Vec<HashMap<&str, &str>> = status.split("\n\n").map(fields).collect();
        // dpkg itself is of the native architecture.
        let native = stanzas.iter().find(|s| s.get("Package") == Some(&"dpkg")).and_then(|s| s.get("Architecture").copied());
        let mut installed = HashMap::new();
        for s in &stanzas {
            let (Some(name), Some(status), Some(version)) = (s.get("Package"), s.get("Status"), s.get("Version")) else { continue };
            let state = status.split_whitespace().nth(2).unwrap_or("");
            if matches!(state, "not-installed" | "config-files" | "") {
                continue;
            }
            let arch = s.get("Architecture").copied().unwrap_or("");
            if native.is_some_and(|n| arch != n && arch != "all") {
                continue;
            }
            installed.insert(name.to_string(), Package::new(name, arch, version));
        }
        Self { installed, native: native.map(str::to_string) }
    }

    /// The installed package `name`, or `name:arch` as APT finds it (`arch` the package's, or
    /// `native`, or the native one for an `all` package).
    pub fn get(&self, name: &str) -> Option<&Package> {
        if let Some(p) = self.installed.get(name) {
            return Some(p);
        }
        let (name, arch) = name.rsplit_once(':')?;
        let p = self.installed.get(name)?;
        let native = self.native.as_deref();
        let fits = p.arch == arch || arch == "native" || (p.arch == "all" && native == Some(arch));
        fits.then_some(p)
    }

    pub fn len(&self) -> usize {
        self.installed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.installed.is_empty()
    }

    /// A `dpkginfo_test` judged over the packages: its result and items, or why it cannot be.
    pub fn judge(&self, test: &TestEvidence) -> Result<(DefinitionResult, Vec<CollectedItem>), String> {
        if !test.states.is_empty() {
            return Err(format!("{} compares package states, which temper's dpkg probe does not", test.id));
        }
        let object = test.object.as_ref().ok_or_else(|| format!("{} has no object", test.id))?;
        let name = object.fields.iter().find(|f| f.name == "name").ok_or_else(|| format!("{} names no package", object.id))?;
        if name.var_ref.is_some() || name.operation.as_deref().is_some_and(|o| o != "equals") {
            return Err(format!("{} names its package through a variable or an operation", object.id));
        }
        Ok(self.judge_name(name.value.trim(), test.check_existence))
    }

    /// A `dpkginfo_test` with no state on the package `name`: its `check_existence` over the
    /// package's item, and the item.
    pub fn judge_name(&self, name: &str, check_existence: Existence) -> (DefinitionResult, Vec<CollectedItem>) {
        let items: Vec<CollectedItem> = self.get(name).map(Package::item).into_iter().collect();
        let result = if check_existence.holds(items.len()) { DefinitionResult::True } else { DefinitionResult::False };
        (result, items)
    }
}

/// A stanza's fields (continuation lines are left out: the ones read are one line).
fn fields(stanza: &str) -> HashMap<&str, &str> {
    stanza.lines().filter(|l| !l.starts_with([' ', '\t'])).filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim(), v.trim())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_split_as_oscaps_probe_splits_them() {
        let p = Package::new("login", "amd64", "1:4.13+dfsg1-1+b1");
        assert_eq!(
            (p.epoch.as_str(), p.version.as_str(), p.release.as_str(), p.evr.as_str()),
            ("1", "4.13+dfsg1", "1+b1", "1:4.13+dfsg1-1+b1")
        );
        let p = Package::new("base-files", "amd64", "12.4+deb12u5");
        assert_eq!((p.epoch.as_str(), p.version.as_str(), p.release.as_str(), p.evr.as_str()), ("0", "12.4+deb12u5", "", "0:12.4+deb12u5"));
        let p = Package::new("x", "all", "2.3-4-5");
        assert_eq!((p.version.as_str(), p.release.as_str()), ("2.3", "4-5"), "the first '-'");
    }

    #[test]
    fn only_installed_packages_of_the_native_architecture_count() {
        let status = "Package: dpkg\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.21.22\n\n\
                      Package: sudo\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.9.13p3-1+deb12u1\nDescription: x\n y\n\n\
                      Package: aide\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 0.18.3-1\n\n\
                      Package: libfoo\nStatus: install ok installed\nArchitecture: i386\nVersion: 1\n\n\
                      Package: tzdata\nStatus: install ok unpacked\nArchitecture: all\nVersion: 2024a-0+deb12u1\n";
        let d = Dpkg::parse(status);
        assert!(d.get("sudo").is_some() && d.get("tzdata").is_some() && d.get("dpkg").is_some());
        assert!(d.get("aide").is_none(), "config-files is not installed");
        assert!(d.get("libfoo").is_none(), "a foreign architecture is not the name's package");
        assert_eq!(d.len(), 3);
        assert!(d.get("sudo:amd64").is_some() && d.get("tzdata:amd64").is_some() && d.get("sudo:native").is_some());
        assert!(d.get("sudo:i386").is_none() && d.get("libfoo:i386").is_none());
    }

    #[test]
    fn existence_decides_a_test_without_states() {
        use DefinitionResult as R;
        let d = Dpkg::parse("Package: sudo\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.9\n\n");
        let result = |name: &str, e: Existence| d.judge_name(name, e).0;
        assert_eq!(result("sudo", Existence::AtLeastOneExists), R::True);
        assert_eq!(result("telnet", Existence::AtLeastOneExists), R::False);
        assert_eq!(result("telnet", Existence::NoneExist), R::True);
        assert_eq!(result("sudo", Existence::NoneExist), R::False);
        assert_eq!(d.judge_name("sudo", Existence::AnyExist).1.len(), 1, "the package's item");
    }
}
