//! Each family on the real OVAL of SSG 0.1.76's Debian 12 datastream. The fixtures under
//! `tests/data` are `oscap oval eval --results` documents of one definition each, cut to its
//! definitions, tests, objects, states and variables as the datastream has them; their results
//! and items are those of a guest broken as ComplianceAsCode's test scenarios break the rule
//! (written for this test: the host that ran oscap is not such a guest).
use std::path::Path;
use std::process::{Command, Stdio};

use temper_core::policy::DenyList;
use temper_derive::{DerivedFix, Family, Refusal, derive, record_file_name};
use temper_scap::Outcome;
use temper_scap::oval::{Evidence, OvalReport};

fn evidence(rule: &str) -> Evidence {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(format!("{rule}.xml"));
    let report = OvalReport::read(&path).unwrap();
    let id = format!("oval:ssg-{rule}:def:1");
    let (result, title, tests) = report.definition(&id).unwrap();
    Evidence {
        rule: format!("xccdf_org.ssgproject.content_rule_{rule}"),
        outcome: Outcome::Fail,
        definition: id.clone(),
        title,
        result,
        tests,
        criteria: report.criteria(&id),
    }
}

/// The fix for `rule`, after the checks every derived script must pass: the deny-list, and bash's
/// own parser.
fn fix(rule: &str) -> DerivedFix {
    let f = derive(&evidence(rule)).unwrap_or_else(|r| panic!("{rule}: {r}"));
    for script in [&f.fix_script, &f.revert_script] {
        DenyList::builtin("temper").check(script).unwrap_or_else(|r| panic!("{rule}: {r}\n{script}"));
        let mut bash = Command::new("bash").arg("-n").stdin(Stdio::piped()).spawn().unwrap();
        std::io::Write::write_all(bash.stdin.as_mut().unwrap(), script.as_bytes()).unwrap();
        assert!(bash.wait().unwrap().success(), "{rule}: bash -n fails:\n{script}");
        assert!(script.starts_with("#!/bin/bash\n") && script.contains("set -euo pipefail\n"), "{script}");
    }
    println!("{rule}: {}\n--- fix\n{}--- revert\n{}", f.description, f.fix_script, f.revert_script);
    f
}

/// The fix's change section: its lines after `# 3. change.`.
fn body(script: &str) -> Vec<&str> {
    script.lines().skip_while(|l| *l != "# 3. change.").skip(1).collect()
}

/// The revert's lines after the functions and the state folder's check.
fn restores(script: &str) -> Vec<&str> {
    script.lines().skip_while(|l| !l.starts_with("if [ -e \"$state\" ]")).skip(1).collect()
}

/// No value the source's scan saw is restored by a revert: it restores the target's own record.
fn restores_records_only(f: &DerivedFix, source_values: &[&str]) {
    for v in source_values {
        assert!(!restores(&f.revert_script).join("\n").contains(&format!("{v} ")), "{v} in\n{}", f.revert_script);
    }
}

#[test]
fn file_modes_are_fixed_item_by_item_keeping_other_bits() {
    let f = fix("file_permissions_binary_dirs");
    assert_eq!(f.families, [Family::FileMetadata]);
    // g+w on ls (0775) and on setuid su (4777): the state to avoid is gwrite OR owrite.
    assert_eq!(body(&f.fix_script), ["chmod 0755 -- '/usr/bin/ls'", "chmod 4755 -- '/usr/bin/su'"]);
    // Each item is checked first: still as the scan found it (or already fixed).
    assert!(f.fix_script.contains("temper_meta '/usr/bin/ls' '0 0 775' '0 0 755'\ntemper_path '/usr/bin/su'"), "{}", f.fix_script);
    assert!(f.fix_script.contains("temper_path '/usr/bin/su'\ntemper_meta '/usr/bin/su' '0 0 4777' '0 0 4755'\n"));
    // The revert restores the records made on the target, su first: never the source's 4777.
    let back = restores(&f.revert_script).join("\n");
    assert!(back.find("'/usr/bin/su'").unwrap() < back.find("'/usr/bin/ls'").unwrap(), "{back}");
    assert!(back.contains("chmod \"$m\" -- '/usr/bin/su'") && !back.contains("4777"), "{back}");
    assert_eq!(f.touched, ["/usr/bin/ls", "/usr/bin/su"]);
}

#[test]
fn an_owner_is_fixed_from_the_state_to_avoid_and_restored_from_the_targets_record() {
    let f = fix("dir_system_commands_root_owned");
    assert_eq!(body(&f.fix_script), ["chown -h 0:0 -- '/usr/local/bin/tools'", "chmod 0755 -- '/usr/local/bin/tools'"]);
    assert!(restores(&f.revert_script).contains(&"    chown -h \"$u:$g\" -- '/usr/local/bin/tools'"), "{}", f.revert_script);
    restores_records_only(&f, &["65534:0", "chown -h 65534"]);
}

#[test]
fn a_sysctl_is_set_at_runtime_and_in_a_drop_in() {
    let f = fix("sysctl_kernel_modules_disabled");
    assert_eq!(f.families, [Family::Sysctl]);
    let dropin = "'/etc/sysctl.d/99-temper-sysctl_kernel_modules_disabled.conf'";
    assert_eq!(
        body(&f.fix_script),
        [format!("printf '%s\\n' 'kernel.modules_disabled = 1' > {dropin}").as_str(), "sysctl -w 'kernel.modules_disabled=1'"]
    );
    let back = restores(&f.revert_script);
    assert_eq!(back[0], format!("rm -f -- {dropin}"));
    let rec = record_file_name("sysctl", &["kernel.modules_disabled"]);
    assert!(back.contains(&format!("    sysctl -w 'kernel.modules_disabled'\"=$(cat \"$state/{rec}\")\"").as_str()), "{back:?}");
    restores_records_only(&f, &["'kernel.modules_disabled=0'"]);
}

#[test]
fn a_service_is_enabled_and_started_and_its_revert_restores_it() {
    let f = fix("service_auditd_enabled");
    assert_eq!(f.families, [Family::Unit]);
    // multi-user.target wants auditd.service or auditd.socket: the service, the first.
    assert_eq!(body(&f.fix_script), ["systemctl enable 'auditd.service'", "systemctl start 'auditd.service'"]);
    assert_eq!(
        restores(&f.revert_script)[3..5],
        [
            "    if [ \"$active\" != active ]; then systemctl stop 'auditd.service'; fi",
            "    case \"$enabled\" in enabled|enabled-runtime|static|alias|indirect|generated) ;; *) systemctl disable 'auditd.service' ;; esac"
        ]
    );
}

/// rsyslog not installed (the test VM's baseline, oscap 1.3.7's own results there): a unit that
/// is not loaded has no `ActiveState` item, so the check's unit pattern names it; the package
/// comes first, and its revert last.
#[test]
fn a_service_not_installed_is_installed_enabled_and_started() {
    let f = fix("service_rsyslog_enabled");
    assert_eq!(f.families, [Family::Package, Family::Unit]);
    assert_eq!(
        body(&f.fix_script),
        [
            "DEBIAN_FRONTEND=noninteractive apt-get -y -q install 'rsyslog'",
            "systemctl enable 'rsyslog.service'",
            "systemctl start 'rsyslog.service'"
        ]
    );
    let back = restores(&f.revert_script).join("\n");
    let (stop, purge) = (back.find("systemctl stop 'rsyslog.service'").unwrap(), back.find("apt-get -y -q purge 'rsyslog'").unwrap());
    assert!(stop < purge, "the unit first, the package last:\n{back}");
}

/// A unit pattern that names more than one service is no name to start.
#[test]
fn a_unit_pattern_that_names_several_services_is_refused() {
    let mut e = evidence("service_rsyslog_enabled");
    let running = e.tests.iter_mut().find(|t| t.kind == "systemdunitproperty_test").unwrap();
    let unit = running.object.as_mut().unwrap().fields.iter_mut().find(|f| f.name == "unit").unwrap();
    unit.value = r"^(rsyslog|syslog-ng)\.service$".into();
    assert!(matches!(derive(&e).unwrap_err(), Refusal::NoItems { .. }));
}

/// postfix installed with `inet_interfaces = all` (oscap 1.3.7's results in the VM, with the
/// profile's `loopback-only`): the check reads the value as `(.*)`, any text, so the line is set.
#[test]
fn a_setting_read_as_any_text_is_set() {
    let f = fix("postfix_network_listening_disabled");
    assert_eq!(f.families, [Family::KeyValue]);
    assert!(
        f.fix_script.contains(
            "sed -i -E 's#^[[:space:]]*inet_interfaces([[:space:]]|=|$).*#inet_interfaces = loopback-only#' '/etc/postfix/main.cf'"
        ),
        "{}",
        f.fix_script
    );
}

#[test]
fn a_setting_is_set_in_its_file_never_by_removing_sshd() {
    let f = fix("sshd_disable_root_login");
    // The check's OR: "openssh-server removed" or "configured"; removing it is never chosen.
    assert_eq!(f.families, [Family::KeyValue]);
    assert!(!f.fix_script.contains("purge"), "{}", f.fix_script);
    assert!(
        f.fix_script.contains("sed -i -E 's#^[[:space:]]*PermitRootLogin([[:space:]]|=|$).*#PermitRootLogin no#I' '/etc/ssh/sshd_config'")
    );
    // The copy is kept by its file, and names it.
    let rec = format!("\"$state/{}\"", record_file_name("orig", &["/etc/ssh/sshd_config"]));
    let item = format!("\"$state/{}.item\"", record_file_name("orig", &["/etc/ssh/sshd_config"]));
    let keep = format!("[ -e {rec} ] || {{ temper_note {rec} copy '/etc/ssh/sshd_config'; cp -p -- '/etc/ssh/sshd_config' {rec}; }}");
    assert!(f.fix_script.contains(&keep), "{}", f.fix_script);
    assert_eq!(
        restores(&f.revert_script)[..6],
        [
            format!("if [ -f {rec} ]; then"),
            "  temper_path '/etc/ssh/sshd_config'".into(),
            format!("  if temper_names {rec} copy '/etc/ssh/sshd_config'; then"),
            format!("    cp -p -- {rec} '/etc/ssh/sshd_config'"),
            format!("    rm -f -- {rec} {item}"),
            "  fi".into(),
        ]
    );
}

#[test]
fn a_package_is_purged_and_its_revert_reinstalls_the_version_recorded_on_the_target() {
    let f = fix("package_telnet_removed");
    assert_eq!(f.families, [Family::Package]);
    assert_eq!(body(&f.fix_script), ["DEBIAN_FRONTEND=noninteractive apt-get -y -q purge 'telnet'"]);
    // The version recorded on the target comes back; the source's is named only where none was.
    let back = restores(&f.revert_script).join("\n");
    assert!(back.contains("then DEBIAN_FRONTEND=noninteractive apt-get -y -q install 'telnet'\"=$version\"; fi"), "{back}");
    assert!(
        back.contains(
            "no record of package telnet on this machine (the scan of the machine the fix was made for found version 0.17+2.4-3)"
        )
    );
    restores_records_only(&f, &["'telnet=0.17+2.4-3'"]);
}

#[test]
fn a_regex_state_is_refused() {
    let r = derive(&evidence("auditd_overflow_action")).unwrap_err();
    assert!(matches!(&r, Refusal::RegexState { pattern, .. } if pattern == "^(?i)(syslog|single|halt)(?-i)$"), "{r:?}");
    println!("{r}");
}

#[test]
fn an_unknown_test_kind_is_refused() {
    let r = derive(&evidence("partition_for_tmp")).unwrap_err();
    assert_eq!(r, Refusal::UnknownFamily { test: "oval:ssg-testtmp_partition:tst:1".into(), kind: "partition_test".into() });
    println!("{r}");
}

/// `no_files_unowned_by_user` on the VM (`e2e_evidence`): a file whose uid no account has. Its
/// filter state accepts every account's uid (a variable of 22 values), so chowning the file to
/// any one of them would be a guess (the first, root, was once taken): refused. The evidence is
/// the one recorded by that run (`tests/data/evidence`).
#[test]
fn a_state_any_of_many_values_meets_is_refused() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/evidence/no_files_unowned_by_user.json");
    let e: Evidence = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let r = derive(&e).unwrap_err();
    let var = "oval:ssg-var_no_files_unowned_by_user_uids_list:var:1".to_string();
    assert_eq!(r, Refusal::ManyValues { test: "oval:ssg-test_no_files_unowned_by_user:tst:1".into(), var, n: 22 });
    println!("{r}");
}

#[test]
fn an_item_in_a_protected_path_is_refused() {
    let mut e = evidence("file_permissions_binary_dirs");
    // The same check, had it found the harness's SSH keys writable.
    let item = &mut e.tests[0].items[0];
    for (k, v) in item.fields.iter_mut() {
        match k.as_str() {
            "filepath" => *v = "/home/temper/.ssh/authorized_keys".into(),
            "path" => *v = "/home/temper/.ssh".into(),
            "filename" => *v = "authorized_keys".into(),
            _ => {}
        }
    }
    assert_eq!(derive(&e).unwrap_err(), Refusal::DeniedPath { path: "/home/temper/.ssh/authorized_keys".into() });
}

#[test]
fn a_fix_of_some_of_the_items_is_refused() {
    let mut e = evidence("file_permissions_binary_dirs");
    e.tests[0].items_total = 25;
    assert!(matches!(derive(&e).unwrap_err(), Refusal::Truncated { named: 2, total: 25, .. }));
}

#[test]
fn without_the_criteria_tree_every_failing_test_is_fixed() {
    let mut e = evidence("service_auditd_enabled");
    e.criteria = None;
    let f = derive(&e).unwrap();
    assert_eq!(
        body(&f.fix_script),
        ["systemctl enable 'auditd.service'", "systemctl start 'auditd.service'", "systemctl enable 'auditd.socket'"]
    );
}

/// The key/value fix and its revert, run by bash on a copy of an sshd_config: the setting is
/// replaced where it is (every occurrence, any case), the rest untouched, and the revert restores
/// the file byte for byte.
#[test]
fn the_key_value_scripts_do_what_they_say_on_a_real_file() {
    let f = fix("sshd_disable_root_login");
    // Under /var/lib: the fix refuses a file in a folder others may write (such as /tmp).
    let dir = Path::new("/var/lib").join(format!("temper-derived-kv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("sshd_config");
    let original = "Include /etc/ssh/sshd_config.d/*.conf\n#PermitRootLogin prohibit-password\npermitrootlogin yes\nUsePAM yes\nMatch User backup\n  X11Forwarding no\n";
    std::fs::write(&conf, original).unwrap();
    let here = |s: &str| {
        s.replace("/etc/ssh/sshd_config", conf.to_str().unwrap()).replace("/var/lib/temper/derived", dir.join("state").to_str().unwrap())
    };
    let run = |script: &str| {
        let mut bash = Command::new("bash").stdin(Stdio::piped()).spawn().unwrap();
        std::io::Write::write_all(bash.stdin.as_mut().unwrap(), script.as_bytes()).unwrap();
        drop(bash.stdin.take());
        assert!(bash.wait().unwrap().success(), "{script}");
    };
    run(&here(&f.fix_script));
    let fixed = std::fs::read_to_string(&conf).unwrap();
    assert_eq!(fixed, original.replace("permitrootlogin yes", "PermitRootLogin no"), "only the setting's line changed");
    run(&here(&f.revert_script));
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), original, "the revert restores the file");
    // Absent, the setting goes first (before any Match block).
    std::fs::write(&conf, "UsePAM yes\nMatch User backup\n  X11Forwarding no\n").unwrap();
    run(&here(&f.fix_script));
    assert!(std::fs::read_to_string(&conf).unwrap().starts_with("PermitRootLogin no\nUsePAM yes\n"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A group asked for below a bound (any system group): 0, the id the content's own fixes set,
/// which meets it; the description says so.
#[test]
fn a_range_on_an_id_is_met_by_zero_and_the_fix_says_why() {
    let f = fix("file_groupownership_system_commands_dirs");
    assert_eq!(body(&f.fix_script), ["chown -h 0:0 -- '/usr/bin/tool'", "chmod 0755 -- '/usr/bin/tool'"]);
    assert!(f.description.contains("group 0, the id the content's own fixes set: it meets `less than 1000`"), "{}", f.description);
}

/// A state to avoid with fields ANDed (world-writable and no sticky bit): either change makes
/// the item escape it. Both are derived, least disruptive first: the sticky bit added, then the
/// world's write removed. `derive` is the first.
#[test]
fn a_state_to_avoid_with_fields_anded_gives_each_exact_fix_in_order() {
    let e = evidence("dir_perms_world_writable_sticky_bits");
    let all = temper_derive::candidates(&e).unwrap();
    let changes: Vec<Vec<&str>> = all.iter().map(|f| body(&f.fix_script)).collect();
    assert_eq!(changes, [vec!["chmod 1777 -- '/srv/share'"], vec!["chmod 0775 -- '/srv/share'"]]);
    assert_eq!(derive(&e).unwrap(), all[0]);
    for f in &all {
        DenyList::builtin("temper").check(&f.fix_script).unwrap();
    }
}

/// The refusals that remain name their class: a kernel's build configuration needs another kernel.
#[test]
fn a_refusal_names_its_class() {
    let r = derive(&evidence("kernel_config_acpi_custom_method")).unwrap_err();
    assert_eq!(r.class(), temper_derive::Class::NeedsAnotherKernel, "{r}");
    assert_eq!(derive(&evidence("auditd_overflow_action")).unwrap_err().class(), temper_derive::Class::NotExact);
    assert_eq!(derive(&evidence("partition_for_tmp")).unwrap_err().class(), temper_derive::Class::Kind);
}

/// A state to avoid written as a negated criteria (ComplianceAsCode's
/// `dir_perms_world_writable_root_owned`: no world-writable directory owned by a user): the check
/// finds the item and the definition negates that, so no value makes the test pass; the tier still
/// refuses it, and names the class.
#[test]
fn a_negated_criteria_state_to_avoid_is_still_refused() {
    let e = evidence("dir_perms_world_writable_root_owned");
    assert!(e.tests.iter().any(|t| t.items.iter().any(|i| i.fields.iter().any(|(_, v)| v == "/srv/drop"))), "the scenario's item");
    let r = derive(&e).unwrap_err();
    assert_eq!(r.class(), temper_derive::Class::Shape, "{r}");
    assert!(r.to_string().contains("negated"), "{r}");
    assert!(temper_derive::candidates(&e).is_err(), "no candidate either");
}

/// Set right in one file and otherwise in `/etc/sysctl.conf` (and Debian's link to it): the fix
/// comments the other value out there, as the content's own fixes do, and writes its drop-in; a
/// file outside the configuration directories is refused, with the reason.
#[test]
fn a_sysctl_set_otherwise_in_another_file_is_overridden_there() {
    let f = fix("sysctl_kernel_kptr_restrict");
    let change = body(&f.fix_script);
    let both = "'/etc/sysctl.conf' '/etc/sysctl.d/99-sysctl.conf'";
    assert!(change.contains(&format!("temper_link_to '/etc/sysctl.conf' {both} || sed -i -E 's/^[[:space:]]*kernel\\.kptr_restrict[[:space:]]*=/# &/' '/etc/sysctl.conf'").as_str()), "{change:#?}");
    assert!(
        change.contains(&"printf '%s\\n' 'kernel.kptr_restrict = 1' > '/etc/sysctl.d/99-temper-sysctl_kernel_kptr_restrict.conf'"),
        "{change:#?}"
    );
    assert!(f.description.contains("its other value commented out in /etc/sysctl.conf, /etc/sysctl.d/99-sysctl.conf"), "{}", f.description);
    let mut e = evidence("sysctl_kernel_kptr_restrict");
    for t in &mut e.tests {
        for i in &mut t.items {
            for (k, v) in &mut i.fields {
                if k == "filepath" && v == "/etc/sysctl.conf" {
                    *v = "/usr/lib/sysctl.d/50-pid-max.conf".into();
                }
            }
        }
    }
    let r = derive(&e).unwrap_err();
    assert!(r.to_string().contains("/usr/lib/sysctl.d/50-pid-max.conf sets kernel.kptr_restrict to another value, and it lies outside the configuration directories"), "{r}");
}
