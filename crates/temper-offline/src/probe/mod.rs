//! What each test of the document can be judged from: the disk through the host's `oscap`, the
//! disk through temper's own probe where oscap has no offline one, or only the running system.
//! A test takes the worst of its object, its states and every variable they take values from:
//! a file test whose path comes from the mount table is as live as the mount table.

use std::collections::{BTreeSet, HashMap};

use temper_journal::offline::LiveNeed;
use temper_scap::oval::{DocElement, Section};

/// How a test can be judged from a disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// The host's oscap reads it from the copy as the guest's would from its disk.
    Disk,
    /// temper's own probe answers it from the copy.
    Host(HostProbe),
    /// The disk cannot answer it: what it needs of the running system.
    Live(BTreeSet<LiveNeed>),
    /// A probe with no offline mode, or a construct temper's probes do not implement.
    Unsupported(String),
}

/// temper's own probes, run on the host over the copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostProbe {
    /// `dpkginfo`: installed packages, from dpkg's status file.
    Dpkg,
}

/// Object kinds whose probe reads files through oscap's offline mode (`OSCAP_PROBE_ROOT`), as
/// measured with oscap 1.3.7 (`tests/offline.rs`).
const DISK: &[&str] = &[
    "family_object",
    "file_object",
    "filehash58_object",
    "filehash_object",
    "password_object",
    "rpminfo_object",
    "symlink_object",
    "textfilecontent54_object",
    "textfilecontent_object",
    "variable_object",
    "xmlfilecontent_object",
    "yamlfilecontent_object",
];

/// Directories the running kernel fills: on a disk they are empty mount points.
const KERNEL_DIRS: &[&str] = &["proc", "sys", "dev"];

fn own(e: &DocElement) -> Reach {
    let live = |n: LiveNeed| Reach::Live(BTreeSet::from([n]));
    match e.kind.as_str() {
        "dpkginfo_object" => Reach::Host(HostProbe::Dpkg),
        "sysctl_object" => live(LiveNeed::Sysctl),
        "partition_object" => live(LiveNeed::Mounts),
        "systemdunitproperty_object" | "systemdunitdependency_object" | "runlevel_object" => live(LiveNeed::Unit),
        "process_object" | "process58_object" | "environmentvariable_object" | "environmentvariable58_object" => live(LiveNeed::Process),
        "uname_object" => live(LiveNeed::Kernel),
        "selinuxboolean_object" | "selinuxsecuritycontext_object" => live(LiveNeed::Selinux),
        "interface_object" | "inetlisteningservers_object" | "iflisteners_object" | "routingtable_object" => live(LiveNeed::Network),
        "shadow_object" => Reach::Unsupported("oscap's shadow probe has no offline mode".into()),
        k if DISK.contains(&k) => {
            if e.paths.iter().any(|p| under_kernel_dir(&p.value)) {
                live(LiveNeed::Kernel)
            } else {
                Reach::Disk
            }
        }
        k if k.ends_with("_object") => live(LiveNeed::Probe),
        _ => Reach::Disk,
    }
}

/// `/proc/...`, `^/sys/...`, `^\/dev`: a path (or a pattern's anchored start) in a directory the
/// kernel fills.
fn under_kernel_dir(value: &str) -> bool {
    let v = value.trim_start_matches('^').replace("\\/", "/");
    let first = v.trim_start_matches('/').split(['/', '(', '[', '.', '$']).next().unwrap_or("");
    v.starts_with('/') && KERNEL_DIRS.contains(&first)
}

impl Reach {
    /// The worse of two: live over unsupported over host over disk; live needs add up.
    fn worst(self, other: Reach) -> Reach {
        use Reach::*;
        match (self, other) {
            (Live(mut a), Live(b)) => {
                a.extend(b);
                Live(a)
            }
            (Live(a), _) | (_, Live(a)) => Live(a),
            (Unsupported(a), _) | (_, Unsupported(a)) => Unsupported(a),
            (Host(h), _) | (_, Host(h)) => Host(h),
            (Disk, Disk) => Disk,
        }
    }
}

/// Every test's reach in a document.
pub fn classify(elements: &[DocElement]) -> HashMap<String, Reach> {
    let by_id: HashMap<&str, &DocElement> = elements.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut memo: HashMap<String, Reach> = HashMap::new();
    elements.iter().filter(|e| e.section == Section::Tests).map(|t| (t.id.clone(), reach(t, &by_id, &mut memo, 0))).collect()
}

/// Deepest chain of references followed (variables of variables); beyond it, not trusted.
const MAX_DEPTH: usize = 64;

fn reach(e: &DocElement, by_id: &HashMap<&str, &DocElement>, memo: &mut HashMap<String, Reach>, depth: usize) -> Reach {
    if let Some(r) = memo.get(&e.id) {
        return r.clone();
    }
    if depth > MAX_DEPTH {
        return Reach::Unsupported(format!("references nested deeper than {MAX_DEPTH}"));
    }
    // A cycle reads as disk until it closes; a document with one does not validate anyway.
    memo.insert(e.id.clone(), Reach::Disk);
    let mut r = match e.section {
        Section::Objects => own(e),
        _ => Reach::Disk,
    };
    for id in &e.refs {
        let Some(child) = by_id.get(id.as_str()) else {
            r = r.worst(Reach::Unsupported(format!("{id} is not in the document")));
            continue;
        };
        let c = reach(child, by_id, memo, depth + 1);
        // A host probe answers its own object only; what its states or variables need of the
        // disk through oscap does not change that.
        r = match (&r, &c) {
            (Reach::Host(_), Reach::Disk) => r,
            (Reach::Disk, Reach::Host(_)) if e.section == Section::Tests => c,
            (_, Reach::Host(_)) => r.worst(Reach::Unsupported(format!("{} takes values from {id}, a host probe's", e.id))),
            _ => r.worst(c),
        };
    }
    memo.insert(e.id.clone(), r.clone());
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use temper_scap::oval::PathEntity;

    fn el(id: &str, section: Section, kind: &str, refs: &[&str], paths: &[&str]) -> DocElement {
        DocElement {
            id: id.into(),
            section,
            kind: kind.into(),
            refs: refs.iter().map(|s| s.to_string()).collect(),
            paths: paths.iter().map(|p| PathEntity { value: p.to_string(), operation: "equals".into() }).collect(),
            walks: false,
        }
    }

    #[test]
    fn a_test_is_as_live_as_anything_it_takes_values_from() {
        use Section::*;
        let doc = vec![
            el("t_file", Tests, "textfilecontent54_test", &["o_file"], &[]),
            el("o_file", Objects, "textfilecontent54_object", &[], &["/etc/ssh/sshd_config"]),
            el("t_proc", Tests, "textfilecontent54_test", &["o_proc"], &[]),
            el("o_proc", Objects, "textfilecontent54_object", &[], &["^/proc/sys/kernel/(osrelease|arch)$"]),
            el("t_sysctl", Tests, "sysctl_test", &["o_sysctl", "s_sysctl"], &[]),
            el("o_sysctl", Objects, "sysctl_object", &[], &[]),
            el("s_sysctl", States, "sysctl_state", &[], &[]),
            el("t_mnt", Tests, "file_test", &["o_mnt"], &[]),
            el("o_mnt", Objects, "file_object", &["v_mnt"], &[]),
            el("v_mnt", Variables, "local_variable", &["o_part"], &[]),
            el("o_part", Objects, "partition_object", &[], &[]),
            el("t_pkg", Tests, "dpkginfo_test", &["o_pkg"], &[]),
            el("o_pkg", Objects, "dpkginfo_object", &[], &[]),
            el("t_shadow", Tests, "shadow_test", &["o_shadow"], &[]),
            el("o_shadow", Objects, "shadow_object", &[], &[]),
            el("t_odd", Tests, "wmi_test", &["o_odd"], &[]),
            el("o_odd", Objects, "wmi_object", &[], &[]),
        ];
        let r = classify(&doc);
        assert_eq!(r["t_file"], Reach::Disk);
        assert_eq!(r["t_proc"], Reach::Live(BTreeSet::from([LiveNeed::Kernel])));
        assert_eq!(r["t_sysctl"], Reach::Live(BTreeSet::from([LiveNeed::Sysctl])));
        assert_eq!(r["t_mnt"], Reach::Live(BTreeSet::from([LiveNeed::Mounts])), "its path comes from the mount table");
        assert_eq!(r["t_pkg"], Reach::Host(HostProbe::Dpkg));
        assert!(matches!(r["t_shadow"], Reach::Unsupported(_)));
        assert_eq!(r["t_odd"], Reach::Live(BTreeSet::from([LiveNeed::Probe])), "an unknown probe is never trusted offline");
    }

    #[test]
    fn kernel_directories_are_seen_through_patterns() {
        for p in ["/proc/cpuinfo", "^/proc/sys/kernel/(osrelease|arch)$", "^\\/sys\\/firmware", "/dev/shm", "/sys"] {
            assert!(under_kernel_dir(p), "{p}");
        }
        for p in ["/etc/sysctl.d", "^/etc/.*$", "/run/sysctl.d", "/process", "/usr/lib/sysctl.d", "proc"] {
            assert!(!under_kernel_dir(p), "{p}");
        }
    }
}
