//! The scripts run by the real bash. File fixes on real files (as root, under `/var/lib`, whose
//! folders are root's alone); sysctl, units and packages against stand-ins for `sysctl`,
//! `systemctl`, `dpkg-query` and `apt-get` that keep their state in files (the VM tests run the
//! real ones).
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;
use crate::action::Meta;

#[test]
fn quoting_keeps_every_character() {
    assert_eq!(q("plain"), "'plain'");
    assert_eq!(q("it's"), r"'it'\''s'");
    assert_eq!(q("$(rm -rf /) `x`"), "'$(rm -rf /) `x`'");
}

/// A folder under `/var/lib` (root's alone up to `/`), removed when dropped.
struct Root(PathBuf);

impl Root {
    fn new(name: &str) -> Self {
        let dir = PathBuf::from(format!("/var/lib/temper-derive-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(dir.join("bin"), std::fs::Permissions::from_mode(0o755)).unwrap();
        Self(dir)
    }

    /// A file of `mode` under `bin/`.
    fn file(&self, name: &str, mode: u32) -> String {
        let p = self.0.join("bin").join(name);
        std::fs::write(&p, "x").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p.to_str().unwrap().to_string()
    }

    /// Runs `script` with bash, its records kept under this folder, and `prelude` first (the
    /// stand-ins): exit code and stderr.
    fn run(&self, script: &str, prelude: &str) -> (i32, String) {
        let state = self.0.join("state");
        let script = script.replace(STATE_DIR, state.to_str().unwrap());
        let path = self.0.join("script.sh");
        std::fs::write(&path, format!("{prelude}\n{}", script.split_once('\n').unwrap().1)).unwrap();
        let out = Command::new("bash").arg(&path).current_dir(&self.0).output().unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout))
    }
}

impl Root {
    /// Where a fix of `rule` keeps its record `what` of the item `key`.
    fn record(&self, rule: &str, what: &str, key: &str) -> PathBuf {
        self.0.join("state").join(rule).join(record_file_name(what, &[key]))
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mode(p: &str) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

fn chmod(path: &str, was: u32, want: u32) -> Action {
    Action::File(FileFix {
        path: path.into(),
        was: Meta { uid: 0, gid: 0, mode: was },
        want: Meta { uid: 0, gid: 0, mode: want },
        chosen: None,
    })
}

/// Names a guest may hold: `$(…)`, backticks, spaces, a leading `-`. They stay names.
#[test]
fn a_file_fix_and_its_revert_on_real_files_with_hostile_names() {
    let root = Root::new("names");
    let names = ["$(touch owned)", "`touch owned`", "a b", "-rf", "it's"];
    let paths: Vec<String> = names.iter().map(|n| root.file(n, 0o4777)).collect();
    let actions: Vec<Action> = paths.iter().map(|p| chmod(p, 0o4777, 0o4755)).collect();
    let f = render("r", &actions);
    let (code, said) = root.run(&f.fix_script, "");
    assert_eq!(code, 0, "{said}\n{}", f.fix_script);
    assert!(paths.iter().all(|p| mode(p) == 0o4755), "every item fixed");
    let (code, said) = root.run(&f.revert_script, "");
    assert_eq!(code, 0, "{said}");
    assert!(paths.iter().all(|p| mode(p) == 0o4777), "every item back");
    assert!(!root.0.join("owned").exists() && !Path::new("owned").exists(), "no name ran as a command");
    assert!(paths.iter().all(|p| !root.record("r", "meta", p).exists()), "the records are gone with the revert");
}

/// The item swapped for a link to a file that must not change, after the scan: the fix stops
/// before it changes anything, the other items included.
#[test]
fn a_link_swapped_in_after_the_scan_is_refused_and_nothing_changes() {
    let root = Root::new("link");
    let first = root.file("first", 0o775);
    let shadow = root.file("shadow", 0o640);
    let item = root.0.join("bin/item");
    std::os::unix::fs::symlink(&shadow, &item).unwrap();
    let f = render("r", &[chmod(&first, 0o775, 0o755), chmod(item.to_str().unwrap(), 0o775, 0o755)]);
    let (code, said) = root.run(&f.fix_script, "");
    assert_eq!(code, 3, "{said}");
    assert!(said.contains("is a symbolic link: nothing was changed"), "{said}");
    assert_eq!((mode(&first), mode(&shadow)), (0o775, 0o640), "nothing changed");
    // A folder above the item swapped for a link: its resolved path is not its name.
    std::fs::remove_file(&item).unwrap();
    std::os::unix::fs::symlink(root.0.join("bin"), root.0.join("via")).unwrap();
    let f = render("r", &[chmod(root.0.join("via/shadow").to_str().unwrap(), 0o640, 0o600)]);
    let (code, said) = root.run(&f.fix_script, "");
    assert!(code == 3 && said.contains("resolves to"), "{said}");
    assert_eq!(mode(&shadow), 0o640);
}

/// A merged `/usr`: `/bin` is a link to `usr/bin`, and the scan names a command by both names.
/// The fix changes it once, by its own name, and leaves the other name to it; a name reached by
/// a linked folder that is not another item of the fix is still refused.
#[test]
fn an_item_named_again_by_a_linked_folder_is_changed_once_by_its_own_name() {
    let root = Root::new("alias");
    let tool = root.file("tool", 0o775);
    std::os::unix::fs::symlink("bin", root.0.join("sbin")).unwrap();
    let alias = root.0.join("sbin/tool").to_str().unwrap().to_string();
    let f = render("r", &[chmod(&alias, 0o775, 0o755), chmod(&tool, 0o775, 0o755)]);
    let (code, said) = root.run(&f.fix_script, "");
    assert_eq!(code, 0, "{said}\n{}", f.fix_script);
    assert_eq!(mode(&tool), 0o755, "changed by its own name");
    assert!(!root.record("r", "meta", &alias).exists() && root.record("r", "meta", &tool).exists(), "one record, for its own name");
    let (code, said) = root.run(&f.revert_script, "");
    assert_eq!(code, 0, "{said}");
    assert_eq!(mode(&tool), 0o775, "back");
    // The other name alone (no item of the fix by its own name): refused, as any linked folder.
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o775)).unwrap();
    let (code, said) = root.run(&render("r", &[chmod(&alias, 0o775, 0o755)]).fix_script, "");
    assert!(code == 3 && said.contains("resolves to"), "{said}");
    assert_eq!(mode(&tool), 0o775);
}

/// The other name is asked about once. Here `realpath` says, the first time only, that
/// `sbin/tool` is `bin/tool` (as a folder swapped back between the sections would): the check
/// leaves it to `bin/tool`, and the change does not ask again and chmod what it now is, a link to
/// a file that must not change.
#[test]
fn whether_a_name_is_another_items_is_decided_once_at_the_check() {
    let root = Root::new("alias-once");
    let tool = root.file("tool", 0o775);
    let shadow = root.file("shadow", 0o640);
    std::fs::create_dir(root.0.join("sbin")).unwrap();
    std::fs::set_permissions(root.0.join("sbin"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(&shadow, root.0.join("sbin/tool")).unwrap();
    let alias = root.0.join("sbin/tool").to_str().unwrap().to_string();
    let once = root.0.join("asked");
    let prelude = format!(
        "realpath() {{ if [ \"${{!#}}\" = {} ] && [ ! -e {} ]; then : > {}; echo {}; return 0; fi; command realpath \"$@\"; }}",
        q(&alias),
        q(once.to_str().unwrap()),
        q(once.to_str().unwrap()),
        q(&tool)
    );
    let f = render("r", &[chmod(&alias, 0o775, 0o755), chmod(&tool, 0o775, 0o755)]);
    let (code, said) = root.run(&f.fix_script, &prelude);
    assert_eq!(code, 0, "{said}\n{}", f.fix_script);
    assert!(once.exists(), "the check asked");
    assert_eq!((mode(&tool), mode(&shadow)), (0o755, 0o640), "the item by its own name; nothing through the link");
}

#[test]
fn a_folder_others_may_write_above_the_item_is_refused() {
    let root = Root::new("parent");
    let item = root.file("item", 0o775);
    std::fs::set_permissions(root.0.join("bin"), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let (code, said) = root.run(&render("r", &[chmod(&item, 0o775, 0o755)]).fix_script, "");
    assert!(code == 3 && said.contains("is not root's alone (owner 0, mode 1777)"), "{said}");
    assert_eq!(mode(&item), 0o775);
}

#[test]
fn a_protected_tree_is_refused_on_the_resolved_path() {
    // The derive refuses such a path from the evidence; the guest checks again, at fix time.
    let f = render("r", &[chmod("/proc/sys/kernel/hostname", 0o644, 0o600)]);
    let root = Root::new("protected");
    let (code, said) = root.run(&f.fix_script, "");
    assert!(code == 3 && said.contains("/proc/sys/kernel/hostname is in a protected tree"), "{said}");
}

/// Compare, then set: an item whose mode changed since the scan is left alone (and the fix
/// stops); one already as wanted is fine, and a fix run twice keeps its first record.
#[test]
fn an_item_changed_since_the_scan_stops_the_fix_and_one_already_fixed_does_not() {
    let root = Root::new("compare");
    let item = root.file("item", 0o700);
    let f = render("r", &[chmod(&item, 0o775, 0o755)]);
    let (code, said) = root.run(&f.fix_script, "");
    assert!(code == 3 && said.contains("is 0 0 700 now, not 0 0 775 as the scan found it"), "{said}");
    assert_eq!(mode(&item), 0o700);
    std::fs::set_permissions(&item, std::fs::Permissions::from_mode(0o775)).unwrap();
    assert_eq!(root.run(&f.fix_script, "").0, 0);
    assert_eq!(root.run(&f.fix_script, "").0, 0, "again, already fixed");
    assert_eq!(std::fs::read_to_string(root.record("r", "meta", &item)).unwrap(), "0 0 775\n", "the first record stays");
}

/// The plan's revert on a second machine: the fix was made where the item was 4777; here it
/// is 0755 already, so the fix changes nothing, and its revert restores this machine's 0755, not
/// the source's 4777. Where the fix stopped (mode 0700: neither), the revert has no record and
/// leaves the item as it is.
#[test]
fn a_revert_on_another_machine_restores_that_machines_own_state() {
    let root = Root::new("other");
    let here = root.file("su", 0o755);
    let other = root.file("other", 0o700);
    let f = render("r", &[chmod(&here, 0o4777, 0o755)]);
    assert_eq!(root.run(&f.fix_script, "").0, 0);
    let (code, said) = root.run(&f.revert_script, "");
    assert_eq!((code, mode(&here)), (0, 0o755), "{said}");
    let f = render("r2", &[chmod(&other, 0o4777, 0o755)]);
    assert_eq!(root.run(&f.fix_script, "").0, 3);
    let (code, said) = root.run(&f.revert_script, "");
    assert_eq!((code, mode(&other)), (0, 0o700), "{said}");
    assert!(said.contains(&format!("temper: no record of {other}'s owner, group and mode on this machine: left as it is")), "{said}");
}

fn owner(p: &str) -> (u32, u32) {
    let m = std::fs::symlink_metadata(p).unwrap();
    (m.uid(), m.gid())
}

/// A file of `mode` owned by an unprivileged user (uid and gid 1000), who may have written into it.
fn users_file(root: &Root, name: &str, mode: u32) -> String {
    let p = root.file(name, mode);
    std::os::unix::fs::chown(&p, Some(1000), Some(1000)).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    p
}

fn fix_meta(path: &str, was: (u32, u32, u32), want: (u32, u32, u32)) -> Action {
    Action::File(FileFix {
        path: path.into(),
        was: Meta { uid: was.0, gid: was.1, mode: was.2 },
        want: Meta { uid: want.0, gid: want.1, mode: want.2 },
        chosen: None,
    })
}

/// The attack on records kept by position: an earlier fix of the rule changed a setuid root
/// command (item 0) and was kept, so its record (`0 0 4755`) stays. A later fix of the same rule
/// finds a user's file (item 0 too) and tightens it. Its revert must give that file back its own
/// owner and mode, never the earlier item's: root and setuid on a file the user wrote.
#[test]
fn a_record_left_by_an_earlier_fix_on_another_item_is_never_restored_onto_this_one() {
    let root = Root::new("earlier");
    let su = root.file("su", 0o4755);
    let earlier = render("r", &[fix_meta(&su, (0, 0, 0o4755), (0, 0, 0o755))]);
    let (code, said) = root.run(&earlier.fix_script, "");
    assert_eq!((code, mode(&su)), (0, 0o755), "{said}");
    let tool = users_file(&root, "tool", 0o777);
    let later = render("r", &[fix_meta(&tool, (1000, 1000, 0o777), (1000, 1000, 0o755))]);
    let (code, said) = root.run(&later.fix_script, "");
    assert_eq!((code, mode(&tool)), (0, 0o755), "{said}");
    let (code, said) = root.run(&later.revert_script, "");
    assert_eq!(code, 0, "{said}");
    assert_eq!((owner(&tool), mode(&tool)), ((1000, 1000), 0o777), "the user's file back to its own state, not root's setuid: {said}");
    // The earlier fix's record is still there, and its revert still restores its own item.
    let (code, said) = root.run(&earlier.revert_script, "");
    assert_eq!((code, owner(&su), mode(&su)), (0, (0, 0), 0o4755), "{said}");
}

/// A record that names another item (here one left at this item's record, as a record kept by
/// position was): refused for this item, with the reason on stderr; the item and its record are
/// left as they are, the other items of the fix are restored, and the revert exits 3.
#[test]
fn a_stale_record_from_an_earlier_fix_restored_onto_another_item_is_refused() {
    let root = Root::new("stale");
    let su = root.file("su", 0o4755);
    let earlier = render("r", &[fix_meta(&su, (0, 0, 0o4755), (0, 0, 0o755))]);
    assert_eq!(root.run(&earlier.fix_script, "").0, 0);
    let tool = users_file(&root, "tool", 0o777);
    let other = root.file("other", 0o775);
    let later = render("r", &[fix_meta(&tool, (1000, 1000, 0o777), (1000, 1000, 0o755)), chmod(&other, 0o775, 0o755)]);
    assert_eq!(root.run(&later.fix_script, "").0, 0);
    // The earlier fix's record of `su`, where the later fix keeps the record of `tool`.
    let (from, to) = (root.record("r", "meta", &su), root.record("r", "meta", &tool));
    std::fs::copy(&from, &to).unwrap();
    std::fs::copy(from.with_extension("meta.item"), to.with_extension("meta.item")).unwrap();
    let (code, said) = root.run(&later.revert_script, "");
    assert_eq!(code, 3, "{said}");
    assert!(said.contains(&format!("is of {su}, not of {tool}: {tool} left as it is")), "{said}");
    assert_eq!((owner(&tool), mode(&tool)), ((1000, 1000), 0o755), "nothing restored onto the user's file");
    assert!(to.exists(), "the refused record is left for a person to look at");
    assert_eq!(mode(&other), 0o775, "the fix's other item is restored");
}

/// The record of a file that was replaced since the fix (another inode at the same path, here a
/// user's): refused, not restored onto the new file.
#[test]
fn a_record_of_a_file_replaced_since_is_refused() {
    let root = Root::new("replaced");
    let su = root.file("su", 0o4755);
    let f = render("r", &[fix_meta(&su, (0, 0, 0o4755), (0, 0, 0o755))]);
    assert_eq!(root.run(&f.fix_script, "").0, 0);
    std::fs::remove_file(&su).unwrap();
    // Made at once, the new file is given the inode just freed: its birth time tells it apart.
    let su = users_file(&root, "su", 0o755);
    let (code, said) = root.run(&f.revert_script, "");
    assert_eq!(code, 3, "{said}");
    assert!(said.contains(&format!("is of another file at {su} (device, inode and birth ")), "{said}");
    assert_eq!((owner(&su), mode(&su)), ((1000, 1000), 0o755), "the new file is left as it is");
}

/// A record with no `.item` (damaged, or from before records named their items) is refused too.
#[test]
fn a_record_that_names_no_item_is_refused() {
    let root = Root::new("noname");
    let item = root.file("item", 0o775);
    let f = render("r", &[chmod(&item, 0o775, 0o755)]);
    assert_eq!(root.run(&f.fix_script, "").0, 0);
    std::fs::remove_file(root.record("r", "meta", &item).with_extension("meta.item")).unwrap();
    let (code, said) = root.run(&f.revert_script, "");
    assert!(code == 3 && said.contains(&format!("names no item: {item} left as it is")), "{said}");
    assert_eq!(mode(&item), 0o755);
}

/// Stand-ins that keep a sysctl's value, a unit's state and a package's in files under the
/// current folder, and log every call.
const FAKES: &str = r#"
sysctl() { echo "sysctl $*" >> calls; if [ "$1" = -n ]; then cat "sysctl.$2"; else printf '%s' "${2#*=}" > "sysctl.${2%%=*}"; fi; }
systemctl() {
  echo "systemctl $*" >> calls
  case "$1" in
    is-enabled) cat unit.enabled; [ "$(cat unit.enabled)" = enabled ] ;;
    is-active) cat unit.active; [ "$(cat unit.active)" = active ] ;;
    enable) echo enabled > unit.enabled ;; disable) echo disabled > unit.enabled ;;
    start) echo active > unit.active ;; stop) echo inactive > unit.active ;;
    mask) echo masked > unit.enabled ;; unmask) echo disabled > unit.enabled ;;
  esac
}
dpkg-query() { echo "dpkg-query $*" >> calls; [ -e pkg ] && printf 'installed %s\n' "$(cat pkg)"; }
apt-get() { echo "apt-get $*" >> calls; case "$3" in install) echo "${4#*=}" > pkg ;; purge) rm -f pkg ;; esac; }
"#;

fn run_in(root: &Root, script: &str, files: &[(&str, &str)]) -> (i32, String, String) {
    for (name, text) in files {
        std::fs::write(root.0.join(name), text).unwrap();
    }
    let _ = std::fs::remove_file(root.0.join("calls"));
    let (code, said) = root.run(script, FAKES);
    (code, said, std::fs::read_to_string(root.0.join("calls")).unwrap_or_default())
}

#[test]
fn a_sysctl_revert_restores_this_machines_value_and_without_a_record_says_so() {
    let root = Root::new("sysctl");
    let f = render(
        "r",
        &[Action::Sysctl(SysctlFix { key: "kernel.x".into(), value: "1".into(), was: Some("0".into()), overrides: Vec::new() })],
    );
    // Here the value was 2 (the source's scan read 0).
    let fix = f.fix_script.replace("/etc/sysctl.d/", &format!("{}/", root.0.display()));
    let revert = f.revert_script.replace("/etc/sysctl.d/", &format!("{}/", root.0.display()));
    let (code, said, _) = run_in(&root, &fix, &[("sysctl.kernel.x", "2")]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(std::fs::read_to_string(root.0.join("sysctl.kernel.x")).unwrap(), "1");
    let (code, said, calls) = run_in(&root, &revert, &[]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(std::fs::read_to_string(root.0.join("sysctl.kernel.x")).unwrap(), "2", "{calls}");
    assert!(!root.0.join("99-temper-r.conf").exists(), "the drop-in is gone");
    let (code, said, calls) = run_in(&root, &revert, &[]);
    assert!(
        code == 0
            && said.contains("no record of kernel.x's runtime value on this machine (the scan of the machine the fix was made for read 0)"),
        "{said}"
    );
    assert!(!calls.contains("sysctl -w"), "{calls}");
}

#[test]
fn a_unit_revert_restores_this_machines_state() {
    let root = Root::new("unit");
    let u = UnitFix { unit: "cron.service".into(), enable: true, start: true, was_active: Some("inactive".into()), ..Default::default() };
    let f = render("r", &[Action::Unit(u)]);
    // Here cron was enabled and running already (the source's was not).
    let (code, said, _) = run_in(&root, &f.fix_script, &[("unit.enabled", "enabled\n"), ("unit.active", "active\n")]);
    assert_eq!(code, 0, "{said}");
    let (code, said, calls) = run_in(&root, &f.revert_script, &[]);
    assert_eq!(code, 0, "{said}");
    assert!(!calls.contains("disable") && !calls.contains("stop"), "left enabled and running: {calls}");
    // Where it was disabled and stopped: both undone.
    let (_, _, _) = run_in(&root, &f.fix_script, &[("unit.enabled", "disabled\n"), ("unit.active", "inactive\n")]);
    let (code, said, calls) = run_in(&root, &f.revert_script, &[]);
    assert_eq!(code, 0, "{said}");
    assert!(calls.contains("systemctl stop cron.service") && calls.contains("systemctl disable cron.service"), "{calls}");
}

#[test]
fn a_package_revert_restores_this_machines_version_or_absence() {
    let root = Root::new("package");
    let remove = render("r", &[Action::Package(PackageFix { name: "telnet".into(), install: false, was_version: Some("0.17".into()) })]);
    let (code, said, _) = run_in(&root, &remove.fix_script, &[("pkg", "0.18-here")]);
    assert_eq!(code, 0, "{said}");
    assert!(!root.0.join("pkg").exists());
    let (code, said, calls) = run_in(&root, &remove.revert_script, &[]);
    assert_eq!(code, 0, "{said}");
    assert!(calls.contains("install telnet=0.18-here"), "this machine's version, not the source's: {calls}");
    let install = render("r2", &[Action::Package(PackageFix { name: "aide".into(), install: true, was_version: None })]);
    let _ = std::fs::remove_file(root.0.join("pkg"));
    run_in(&root, &install.fix_script, &[]);
    let (code, said, calls) = run_in(&root, &install.revert_script, &[]);
    assert!(code == 0 && calls.contains("purge aide"), "absent here before: purged. {said} {calls}");
}

/// A key set otherwise in the configuration (Debian's `/etc/sysctl.conf`, and the link
/// `/etc/sysctl.d/99-sysctl.conf` to it): its line commented out there, the link left a link and
/// changed once, the drop-in written; the revert puts the file back byte for byte.
#[test]
fn a_sysctl_set_otherwise_in_another_file_is_commented_out_there_and_restored() {
    let root = Root::new("override");
    let etc = root.0.join("etc");
    std::fs::create_dir_all(etc.join("sysctl.d")).unwrap();
    let conf = etc.join("sysctl.conf");
    let original = "# local\nkernel.x = 0\nvm.y = 1\n";
    std::fs::write(&conf, original).unwrap();
    let link = etc.join("sysctl.d/99-sysctl.conf");
    std::os::unix::fs::symlink("../sysctl.conf", &link).unwrap();
    let overrides = vec![conf.to_str().unwrap().to_string(), link.to_str().unwrap().to_string()];
    let f = render("r", &[Action::Sysctl(SysctlFix { key: "kernel.x".into(), value: "1".into(), was: None, overrides })]);
    let here = |s: &str| s.replace("/etc/sysctl.d/99-temper", &format!("{}/99-temper", root.0.display()));
    let (code, said, _) = run_in(&root, &here(&f.fix_script), &[("sysctl.kernel.x", "0")]);
    assert_eq!(code, 0, "{said}\n{}", f.fix_script);
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), "# local\n# kernel.x = 0\nvm.y = 1\n");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is still a link");
    assert_eq!(std::fs::read_to_string(root.0.join("99-temper-r.conf")).unwrap(), "kernel.x = 1\n");
    let (code, said, _) = run_in(&root, &here(&f.revert_script), &[]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), original, "byte for byte");
    // A file there that is a link to something else is refused, before anything changes.
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink("/etc/shadow", &link).unwrap();
    let (code, said, _) = run_in(&root, &here(&f.fix_script), &[]);
    assert!(code == 3 && said.contains("is a symbolic link"), "{said}");
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), original);
}
