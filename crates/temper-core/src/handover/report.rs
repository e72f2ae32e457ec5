//! What the handover script said, line by line (`temper-handover KIND ...`). The guest's word:
//! the host checks the image afterwards ([`super::Leftover`]) before the manifest calls
//! anything removed.
use serde::Serialize;

use super::script::MARK;

/// A kind of thing temper put on the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Item {
    /// What runs left: the derived fixes' records, scan files.
    Trace,
    File,
    Dir,
    Package,
    /// A package that only temper's packages needed.
    Dependency,
    SudoRule,
    Key,
    User,
    Home,
}

impl Item {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Trace => "trace",
            Self::File => "file",
            Self::Dir => "dir",
            Self::Package => "package",
            Self::Dependency => "dependency",
            Self::SudoRule => "sudo_rule",
            Self::Key => "key",
            Self::User => "user",
            Self::Home => "home",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        [Self::Trace, Self::File, Self::Dir, Self::Package, Self::Dependency, Self::SudoRule, Self::Key, Self::User, Self::Home]
            .into_iter()
            .find(|i| i.as_str() == s)
    }
}

/// One thing of temper's and what the handover did with it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Removal {
    pub item: Item,
    /// Its name or path.
    pub what: String,
    /// Removed now; false: it was not there (or, for a folder, not empty).
    pub removed: bool,
}

/// The handover script's account of itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GuestReport {
    /// The held steps that ran to exit 0, by number.
    pub applied: Vec<usize>,
    /// The admins' group's members when the held fixes were done.
    pub admins: Vec<String>,
    pub removals: Vec<Removal>,
    /// Files the harness's uid still owned at the end.
    pub left: Vec<String>,
    /// The step it stopped at, when it stopped.
    pub failed: Option<String>,
    /// It reached its end.
    pub done: bool,
}

/// Reads the script's lines from its stdout; other lines are ignored.
pub fn parse(stdout: &str) -> GuestReport {
    let mut r = GuestReport::default();
    for line in stdout.lines().filter_map(|l| l.strip_prefix(MARK)) {
        let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
        match kind {
            "held" => {
                if let Some(n) = rest.strip_suffix(" applied").and_then(|n| n.parse().ok()) {
                    r.applied.push(n);
                }
            }
            "admins" => r.admins = rest.split(',').map(str::trim).filter(|a| !a.is_empty()).map(String::from).collect(),
            "removed" | "absent" | "kept" => {
                let (item, what) = rest.split_once(' ').unwrap_or((rest, ""));
                if let Some(item) = Item::parse(item) {
                    r.removals.push(Removal { item, what: what.to_string(), removed: kind == "removed" });
                }
            }
            "left" => r.left.push(rest.to_string()),
            "failed" => r.failed = Some(rest.to_string()),
            "done" => r.done = true,
            _ => {}
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_lines_are_read_and_others_ignored() {
        let out = "Reading package lists...\ntemper-handover held 1 applied\ntemper-handover held 2 applied\n\
                   temper-handover admins admin,ops\ntemper-handover removed trace /var/lib/temper\n\
                   temper-handover absent file /usr/share/x.xml\ntemper-handover kept dir /usr/share/y\n\
                   temper-handover removed package openscap-scanner\ntemper-handover removed dependency libopenscap25\n\
                   temper-handover removed sudo_rule /etc/sudoers.d/temper\ntemper-handover removed user temper\n\
                   temper-handover removed home /home/temper\ntemper-handover left /var/mail/x\ntemper-handover bogus x\n\
                   temper-handover removed nothing-known x\ntemper-handover done\n";
        let r = parse(out);
        assert_eq!(r.applied, [1, 2]);
        assert_eq!(r.admins, ["admin", "ops"]);
        assert!(r.done && r.failed.is_none());
        assert_eq!(r.left, ["/var/mail/x"]);
        let removed: Vec<_> = r.removals.iter().filter(|x| x.removed).map(|x| (x.item, x.what.as_str())).collect();
        assert_eq!(
            removed,
            [
                (Item::Trace, "/var/lib/temper"),
                (Item::Package, "openscap-scanner"),
                (Item::Dependency, "libopenscap25"),
                (Item::SudoRule, "/etc/sudoers.d/temper"),
                (Item::User, "temper"),
                (Item::Home, "/home/temper")
            ]
        );
        assert_eq!(r.removals.iter().filter(|x| !x.removed).count(), 2, "absent and kept: not removed");
        let stopped = parse("temper-handover held 1 applied\ntemper-handover failed held 2 exit 1\n");
        assert_eq!((stopped.applied.as_slice(), stopped.failed.as_deref(), stopped.done), (&[1][..], Some("held 2 exit 1"), false));
        assert_eq!(parse("temper-handover admins \n").admins, Vec::<String>::new(), "no admins");
    }
}
