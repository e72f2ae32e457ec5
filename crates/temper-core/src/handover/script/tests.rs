use super::*;
use crate::skill::HeldApply;

fn step(rules: &[&str], script: &str) -> HeldStep {
    HeldStep { rules: rules.iter().map(|r| r.to_string()).collect(), apply: HeldApply::Stock, script: script.into() }
}

fn render_with(f: &Footprint, steps: &[HeldStep], key: Option<&str>) -> String {
    render(&Handover { user: "temper", public_key: key, footprint: f, admin_group: "sudo", steps }).unwrap()
}

/// `bash -n`: the script parses.
fn parses(script: &str) {
    let mut child = std::process::Command::new("bash")
        .arg("-n")
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "bash -n: {}\n{script}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn held_fixes_first_the_harness_last_then_done_and_a_power_off() {
    let steps =
        [step(&["sudo_add_requiretty"], "echo 'Defaults requiretty' >> /etc/sudoers"), step(&["a", "b"], "chmod 4110 /usr/bin/sudo")];
    let s = render_with(&Footprint::default(), &steps, Some("ssh-ed25519 AAAAC3Nza temper"));
    parses(&s);
    let at = |needle: &str| s.find(needle).unwrap_or_else(|| panic!("no `{needle}` in\n{s}"));
    assert!(at("held 1 \"$work/held-1.sh\"") < at("held 2 \"$work/held-2.sh\""));
    assert!(at("held 2 \"$work/held-2.sh\"") < at("for p in /var/lib/temper /var/tmp/temper-*"));
    assert!(at("packages 'openscap-scanner' 'ssg-base' 'ssg-debian'") < at("gone sudo_rule"));
    assert!(at("gone sudo_rule") < at("\ndrop_user\n") && at("\ndrop_user\n") < at("say done"));
    assert!(at("say done") < at("systemctl poweroff"));
    assert!(!s.contains("\ndrop_key "), "the user goes whole: no key to take out of it");
    assert!(s.trim_end().ends_with("handover </dev/null"), "read whole before it runs, stdin closed");
}

#[test]
fn a_user_temper_did_not_create_loses_only_the_key_and_nothing_else_is_asked_for() {
    let f = Footprint { user: false, sudo_rule: false, packages: vec![], ..Footprint::default() };
    let s = render_with(&f, &[], Some("ssh-ed25519 AAAAC3Nza the comment"));
    parses(&s);
    assert!(s.contains("\ndrop_key 'ssh-ed25519 AAAAC3Nza'\n"), "{s}");
    assert!(!s.contains("\ndrop_user\n") && !s.contains("gone sudo_rule") && !s.contains("\npackages "));
}

#[test]
fn a_fix_holding_the_delimiter_gets_another_and_names_are_quoted() {
    let tricky = "cat <<'TEMPER_HELD_FIX_0'\nx\nTEMPER_HELD_FIX_0\necho done";
    let f = Footprint { files: vec!["/usr/share/it's.xml".into()], dirs: vec!["/usr/share/d d".into()], ..Footprint::default() };
    let s = render_with(&f, &[step(&["r"], tricky)], None);
    parses(&s);
    assert!(s.contains("<<'TEMPER_HELD_FIX_1'\n"), "{s}");
    assert!(s.contains("gone file '/usr/share/it'\\''s.xml'"), "{s}");
}

#[test]
fn what_cannot_be_passed_on_as_data_is_refused() {
    let f = Footprint::default();
    for (user, group) in [("temper;id", "sudo"), ("temper", "$(id)")] {
        let h = Handover { user, public_key: None, footprint: &f, admin_group: group, steps: &[] };
        assert!(matches!(render(&h), Err(HandoverScriptError::Name(_))));
    }
    let h = Handover { user: "temper", public_key: Some("ssh-ed25519 AAA'$(id)"), footprint: &f, admin_group: "sudo", steps: &[] };
    assert_eq!(render(&h), Err(HandoverScriptError::Key));
    let bad = Footprint { packages: vec!["x y".into()], ..Footprint::default() };
    let h = Handover { user: "temper", public_key: None, footprint: &bad, admin_group: "sudo", steps: &[] };
    assert!(matches!(render(&h), Err(HandoverScriptError::Footprint(_))));
}

#[test]
fn an_export_that_keeps_the_harness_removes_nothing_and_powers_off_clean() {
    let s = render_kept("sudo").unwrap();
    parses(&s);
    // The removals' calls, each at a line's start (HEAD only defines them).
    for call in ["drop_user", "drop_key ", "gone ", "packages ", "held ", "for p in "] {
        assert!(!s.lines().any(|l| l.starts_with(call) && !l.contains("() {")), "keeps everything: {call:?} in\n{s}");
    }
    let (admins, end) = (s.find("say \"admins").unwrap(), s.find("systemctl poweroff").unwrap());
    assert!(admins < end && s.trim_end().ends_with("handover </dev/null"), "{s}");
    assert_eq!(render_kept("su do; reboot"), Err(HandoverScriptError::Name("su do; reboot".into())));
}
