//! What temper put on a target to reach it: the harness user, its key and sudo rule, the
//! packages and files it installed. Written where they are added (`vm/build-image.sh` for the
//! test image, `temper target enroll` for any other disk) into the target's `footprint`, stored
//! with each run, and taken away at the handover (`temper image export`). What runs leave behind
//! (the derived fixes' records, scan files) is temper's on every target: see
//! `temper_core::handover::RUN_TRACES`.
use serde::{Deserialize, Serialize};

/// What temper added to one target. The defaults are the test image's (`vm/guest/customize.sh`;
/// a test holds them equal).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Footprint {
    /// temper created the harness user (`ssh_user`): it goes with its home, group and mail.
    pub user: bool,
    /// temper put its public key in the harness user's `~/.ssh/authorized_keys`.
    pub key: bool,
    /// temper wrote `/etc/sudoers.d/<ssh_user>` (NOPASSWD).
    pub sudo_rule: bool,
    /// Packages temper installed; what they alone brought in goes with them.
    pub packages: Vec<String>,
    /// Files temper copied in (the datastream, at enroll).
    pub files: Vec<String>,
    /// Folders temper made for those files, removed once empty.
    pub dirs: Vec<String>,
}

impl Default for Footprint {
    /// The test image: `vm/build-image.sh` installs the scanner and SSG's Debian content, and
    /// makes the harness user with its key and NOPASSWD sudo rule.
    fn default() -> Self {
        Self {
            user: true,
            key: true,
            sudo_rule: true,
            packages: ["openscap-scanner", "ssg-base", "ssg-debian"].map(String::from).to_vec(),
            files: Vec::new(),
            dirs: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FootprintError {
    #[error("footprint: `{0}` is not a package name (lower case letters, digits, `+`, `-` and `.`)")]
    Package(String),
    #[error("footprint: `{0}` is not an absolute path temper may remove (no `..`, no `/` alone, printable)")]
    Path(String),
}

impl Footprint {
    /// Nothing: a target temper added nothing to.
    pub fn none() -> Self {
        Self { user: false, key: false, sudo_rule: false, packages: Vec::new(), files: Vec::new(), dirs: Vec::new() }
    }

    /// Every name is one the handover script can pass on as data: a package name as dpkg and
    /// rpm take it, an absolute path with no `..` that is not `/` itself.
    pub fn check(&self) -> Result<(), FootprintError> {
        if let Some(p) = self.packages.iter().find(|p| !package_name(p)) {
            return Err(FootprintError::Package(p.clone()));
        }
        if let Some(p) = self.files.iter().chain(&self.dirs).find(|p| !removable_path(p)) {
            return Err(FootprintError::Path(p.clone()));
        }
        Ok(())
    }
}

/// A user or group name temper passes to the guest: lower case letters, digits, `_` and `-`,
/// not starting with `-` or a digit, at most 32.
pub fn account_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 32
        && s.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// A Debian or RPM package name.
pub fn package_name(p: &str) -> bool {
    p.len() >= 2
        && p.len() <= 128
        && p.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c))
}

/// An absolute path below `/`, printable, with no `.` or `..` part.
pub fn removable_path(p: &str) -> bool {
    p.starts_with('/')
        && p.len() > 1
        && p.len() <= 4096
        && !p.chars().any(|c| c.is_control())
        && p.split('/').skip(1).all(|part| !part.is_empty() && part != "." && part != "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_reach_the_guest_are_checked() {
        assert!(Footprint::default().check().is_ok());
        let bad = Footprint { packages: vec!["openssh-server; rm -rf /".into()], ..Footprint::none() };
        assert!(matches!(bad.check(), Err(FootprintError::Package(_))));
        for p in ["/", "relative/x", "/a/../etc", "/a//b", "/a/./b", "/a\nb", "/a/"] {
            let f = Footprint { files: vec![p.into()], ..Footprint::none() };
            assert!(matches!(f.check(), Err(FootprintError::Path(_))), "{p:?}");
        }
        let ok = Footprint { files: vec!["/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml".into()], ..Footprint::none() };
        assert!(ok.check().is_ok());
        assert!(package_name("libstdc++6") && package_name("openscap-scanner") && !package_name("A") && !package_name("-x"));
    }

    #[test]
    fn a_table_sets_only_what_it_names() {
        let f: Footprint = toml::from_str("user = false\npackages = [\"openscap-scanner\"]\n").unwrap();
        assert_eq!(f, Footprint { user: false, packages: vec!["openscap-scanner".into()], ..Footprint::default() });
        assert!(toml::from_str::<Footprint>("users = true\n").is_err(), "an unknown key is refused");
    }

    /// The default is what `vm/build-image.sh` and `vm/guest/customize.sh` put in the test image.
    #[test]
    fn the_default_is_the_test_images_recipe() {
        let read = |p: &str| std::fs::read_to_string(format!("{}/../../vm/{p}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let (build, customize) = (read("build-image.sh"), read("guest/customize.sh"));
        let f = Footprint::default();
        let included = build.lines().find(|l| l.contains("--include=")).unwrap();
        assert!(included.contains("openscap-scanner,") && f.packages.contains(&"openscap-scanner".into()));
        for deb in ["ssg-debian", "ssg-base"] {
            assert!(customize.contains(&format!("\"$DEBS\"/{deb}_*.deb")) && f.packages.contains(&deb.into()), "{deb}");
        }
        assert!(f.user && customize.contains("chr useradd -m -s /bin/bash temper"));
        assert!(f.key && customize.contains("/home/temper/.ssh/authorized_keys"));
        assert!(f.sudo_rule && customize.contains("> \"$R/etc/sudoers.d/temper\""));
        assert!(f.files.is_empty() && f.dirs.is_empty(), "the datastream comes in ssg-debian");
    }
}
