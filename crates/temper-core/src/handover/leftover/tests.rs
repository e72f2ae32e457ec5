use std::collections::BTreeMap;

use super::*;

/// A disk as a map of paths to contents; a folder is a path ending in `/`.
#[derive(Default)]
struct FakeDisk(BTreeMap<String, Vec<u8>>);

impl FakeDisk {
    fn with(mut self, path: &str, text: &str) -> Self {
        self.0.insert(path.into(), text.as_bytes().to_vec());
        self
    }
}

impl ImageView for FakeDisk {
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        self.0.get(path).cloned()
    }
    fn list(&self, dir: &str) -> Option<Vec<String>> {
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        let names: Vec<String> = self
            .0
            .keys()
            .filter_map(|k| k.strip_prefix(&prefix))
            .filter_map(|rest| rest.split('/').next())
            .filter(|n| !n.is_empty())
            .map(String::from)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        (self.0.contains_key(&prefix) || !names.is_empty()).then_some(names)
    }
    fn exists(&self, path: &str) -> bool {
        self.0.contains_key(path) || self.list(path).is_some()
    }
}

const STATUS: &str = "Package: sudo\nStatus: install ok installed\n\nPackage: openscap-scanner\nStatus: deinstall ok config-files\n\n\
                      Package: ssg-base\nStatus: purge ok not-installed\n\nPackage: libopenscap25\nStatus: install ok installed\n";

fn clean() -> FakeDisk {
    FakeDisk::default()
        .with("/etc/passwd", "root:x:0:0::/root:/bin/bash\nadmin:x:1000:1000::/home/admin:/bin/bash\n")
        .with("/etc/group", "sudo:x:27:admin\nadmin:x:1000:\n")
        .with("/etc/sudoers", "root ALL=(ALL:ALL) ALL\n%sudo ALL=(ALL:ALL) ALL\nDefaults requiretty\n")
        .with("/etc/sudoers.d/README", "# temper ALL=(ALL) is only a comment here\n")
        .with("/home/admin/.ssh/authorized_keys", "ssh-ed25519 AAAAadmin admin\n")
        .with("/var/lib/dpkg/status", "Package: sudo\nStatus: install ok installed\n")
        .with("/var/tmp/", "")
}

fn expect(f: &Footprint) -> Expect<'_> {
    Expect { user: "temper", public_key: Some("ssh-ed25519 AAAAharness temper"), footprint: f, dependencies: &[] }
}

#[test]
fn a_clean_image_has_nothing_left() {
    let f = Footprint::default();
    assert_eq!(leftovers(&clean(), &expect(&f)), vec![]);
}

#[test]
fn each_kind_of_leftover_is_found_where_it_is() {
    let f = Footprint { files: vec!["/usr/share/x/ds.xml".into()], ..Footprint::default() };
    let deps = vec!["libopenscap25".to_string()];
    let disk = clean()
        .with("/etc/shadow-", "temper:!:19000::::::\n")
        .with("/etc/group", "sudo:x:27:admin,temper\n")
        .with("/home/temper/.bashrc", "")
        .with("/etc/sudoers.d/temper", "temper ALL=(ALL) NOPASSWD:ALL\n")
        .with("/etc/sudoers.d/90-cloud", "temper ALL=(ALL) ALL\n")
        .with("/root/.ssh/authorized_keys", "ssh-ed25519 AAAAharness temper\n")
        .with("/var/lib/dpkg/status", STATUS)
        .with("/usr/share/x/ds.xml", "<ds/>")
        .with("/var/lib/temper/derived/r/state", "")
        .with("/var/tmp/temper-ab-1.xml", "");
    let got = leftovers(&disk, &Expect { dependencies: &deps, ..expect(&f) });
    let seen: Vec<(Item, &str)> = got.iter().map(|l| (l.item, l.found_in.as_str())).collect();
    for want in [
        (Item::User, "/etc/shadow-"),
        (Item::User, "/etc/group"),
        (Item::Home, "/home/temper"),
        (Item::SudoRule, "/etc/sudoers.d/temper"),
        (Item::SudoRule, "/etc/sudoers.d/90-cloud"),
        (Item::Key, "/root/.ssh/authorized_keys"),
        (Item::Package, "/var/lib/dpkg/status"),
        (Item::Dependency, "/var/lib/dpkg/status"),
        (Item::File, "/usr/share/x/ds.xml"),
        (Item::Trace, "/var/lib/temper"),
        (Item::Trace, "/var/tmp/temper-ab-1.xml"),
    ] {
        assert!(seen.contains(&want), "{want:?} not in {seen:?}");
    }
    assert!(!seen.contains(&(Item::SudoRule, "/etc/sudoers.d/README")), "a comment is no rule");
    let pkgs: Vec<&str> = got.iter().filter(|l| l.item == Item::Package).map(|l| l.what.as_str()).collect();
    assert_eq!(pkgs, ["openscap-scanner"], "config-files is still there; purged is gone");
}

#[test]
fn what_temper_did_not_add_is_not_looked_for() {
    let disk = clean().with("/etc/sudoers.d/temper", "temper ALL=(ALL) NOPASSWD:ALL\n").with("/home/temper/x", "");
    let none = Footprint::none();
    assert_eq!(leftovers(&disk, &expect(&none)), vec![]);
}

#[test]
fn an_image_ready_to_clone_has_no_machine_id_host_key_history_or_journal() {
    let ready = clean().with("/etc/machine-id", "").with("/etc/ssh/sshd_config", "").with("/root/.bash_history", "");
    assert_eq!(not_clone_ready(&ready), Vec::<String>::new());
    let used = ready
        .with("/etc/machine-id", "0123456789abcdef0123456789abcdef\n")
        .with("/etc/ssh/ssh_host_ed25519_key", "k")
        .with("/home/admin/.bash_history", "sudo -i\n")
        .with("/var/log/journal/0123/system.journal", "");
    let said = not_clone_ready(&used).join("\n");
    for part in ["machine-id", "ssh_host_ed25519_key", "/home/admin/.bash_history", "journal"] {
        assert!(said.contains(part), "{part}: {said}");
    }
}
