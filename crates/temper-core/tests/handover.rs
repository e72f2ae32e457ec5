//! The handover's held rules, from the real skills and SSG's Debian 12 datastream: which rules
//! the harness held back, what the handover does with each, and the script that does it.
use chrono::NaiveDate;
use temper_core::handover::{Handover, Settle, held_rules, last_rules, render};
use temper_core::skill::{HeldApply, Skill};
use temper_journal::footprint::Footprint;
use temper_journal::waiver::Waiver;
use temper_journal::{Rule, RuleStatus, RunId, ScanResult};
use temper_scap::{Benchmark, read_benchmark};

const RULE: &str = "xccdf_org.ssgproject.content_rule_";
const HIGH: &str = "xccdf_org.ssgproject.content_profile_anssi_bp28_high";

fn skill(name: &str) -> Skill {
    Skill::load(concat!(env!("CARGO_MANIFEST_DIR"), "/../../skills/").to_string() + name).unwrap()
}

fn rule(short: &str, status: RuleStatus, result: ScanResult) -> Rule {
    Rule {
        id: 0,
        run_id: RunId::new(1).unwrap(),
        rule_id: format!("{RULE}{short}"),
        title: String::new(),
        severity: Default::default(),
        initial_result: ScanResult::Fail,
        final_result: Some(result),
        status,
        reason: None,
        escalation_cause: None,
        attempts: 0,
        elapsed_ms: 0,
        final_evidence: None,
        offline_verdict: None,
    }
}

fn day() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 12, 5).unwrap()
}

/// The run's end as the README's ANSSI high run leaves it: three rules waived for the harness,
/// three escalated for their shape or for want of a fix, the rest as they came.
fn anssi_end() -> Vec<Rule> {
    use RuleStatus::{Escalated, Fixed, Waived};
    use ScanResult::{Fail, Pass};
    vec![
        rule("sudo_add_requiretty", Waived, Fail),
        rule("sudo_add_noexec", Waived, Fail),
        rule("file_permissions_sudo", Waived, Fail),
        rule("sudo_dedicated_group", Escalated, Fail),
        rule("sudoers_no_root_target", Escalated, Fail),
        rule("sudoers_explicit_command_args", Escalated, Fail),
        rule("sudo_add_umask", Fixed, Pass),
        rule("sysctl_kernel_kptr_restrict", Escalated, Fail),
    ]
}

/// The host's copy of SSG's Debian 12 datastream, as `vm/fetch-ssg.sh` unpacks it.
fn datastream() -> String {
    let ds = temper_journal::target::vm_dir().join("ssg/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml");
    assert!(ds.exists(), "{} is missing: run `bash vm/fetch-ssg.sh` (tests/run.sh does)", ds.display());
    ds.to_str().unwrap().to_string()
}

fn content() -> Benchmark {
    read_benchmark(datastream(), Some(HIGH)).unwrap()
}

#[test]
fn the_anssi_high_runs_held_rules_are_settled_and_their_harness_waivers_end() {
    let s = skill("debian12-anssi");
    let waivers = s.waivers().to_vec();
    assert!(waivers.iter().all(|w| w.harness), "the skill's own waivers are all held for the harness");
    let c = content();
    let (held, steps) = held_rules(&s, &anssi_end(), &waivers, day(), Some(&c), false);
    let settled: Vec<(&str, &Settle, bool, Option<usize>)> =
        held.iter().map(|h| (h.rule_id.trim_start_matches(RULE), &h.settle, h.harness_waiver_ended, h.step)).collect();
    let stock = Settle::Apply { apply: HeldApply::Stock };
    let script = Settle::Apply { apply: HeldApply::Script };
    assert_eq!(
        settled,
        [
            ("sudo_add_requiretty", &stock, true, Some(1)),
            ("sudo_add_noexec", &stock, true, Some(2)),
            ("file_permissions_sudo", &script, true, Some(3)),
            ("sudo_dedicated_group", &script, false, Some(3)),
            ("sudoers_no_root_target", &Settle::Removal, false, None),
            ("sudoers_explicit_command_args", &Settle::Removal, false, None),
        ],
        "a rule the skill does not hold (sysctl, the fixed umask) is not the handover's"
    );
    assert_eq!(steps.len(), 3, "one script for both of its entry's rules");
    assert!(steps[0].script.contains("Defaults requiretty") && steps[1].script.contains("Defaults noexec"));
    assert!(steps[2].script.starts_with("var_sudo_dedicated_group='sudogrp'\n"), "the profile's value first: {}", steps[2].script);
    assert_eq!(steps[2].rules.len(), 2);
    let f = Footprint::default();
    let text = render(&Handover { user: "temper", public_key: None, footprint: &f, admin_group: "sudo", steps: &steps }).unwrap();
    assert!(text.contains("chmod 4110 /usr/bin/sudo") && text.contains("held 3 \"$work/held-3.sh\""));
}

#[test]
fn a_site_waiver_stays_a_passing_rule_needs_nothing_and_keeping_the_harness_holds_them_all() {
    let s = skill("debian12-anssi");
    let site = Waiver {
        rule: "sudo_add_noexec".into(),
        reason: "our admins run package managers through sudo".into(),
        approved_by: "ISSO".into(),
        expires: NaiveDate::from_ymd_opt(2030, 1, 1).unwrap(),
        source: "site.toml".into(),
        harness: false,
    };
    let waivers = [vec![site], s.waivers().to_vec()].concat();
    let mut rules = anssi_end();
    rules[0] = rule("sudo_add_requiretty", RuleStatus::Fixed, ScanResult::Pass);
    let c = content();
    let (held, steps) = held_rules(&s, &rules, &waivers, day(), Some(&c), false);
    assert_eq!(held[0].settle, Settle::Passes);
    assert!(matches!(&held[1].settle, Settle::StaysWaived { reason } if reason.contains("package managers")), "{:?}", held[1]);
    assert!(!held[1].harness_waiver_ended);
    assert_eq!(steps.len(), 1, "the sudo group's script alone");
    let (kept, none) = held_rules(&s, &anssi_end(), s.waivers(), day(), Some(&c), true);
    assert!(kept.iter().all(|h| h.settle == Settle::Kept && !h.harness_waiver_ended), "{kept:?}");
    assert!(none.is_empty());
    let (no_content, steps) = held_rules(&s, &anssi_end(), s.waivers(), day(), None, false);
    assert_eq!(no_content[0].settle, Settle::NoFix, "no content on the host: no stock fix to apply");
    assert!(steps.iter().all(|s| s.apply == HeldApply::Script));
}

#[test]
fn the_rhel_skill_holds_its_nopasswd_rules_for_its_wheel_admins() {
    let s = skill("stig-rhel9");
    assert_eq!(s.manifest.admin_group, "wheel");
    for r in ["sudo_remove_nopasswd", "sudo_require_authentication", "sudo_add_requiretty"] {
        assert_eq!(s.held(r).map(|(_, h)| h.apply), Some(HeldApply::Stock), "{r}");
    }
    assert!(s.waivers().iter().all(|w| w.harness));
}

/// The AIDE database is built last, on the image as it leaves, by the content's own fix (it also
/// names the database in aide.conf, as the rule's check reads it); with the harness kept nothing
/// runs; a rule the run did not judge gets nothing; without the content there is no fix.
#[test]
fn the_aide_database_is_built_last_unless_the_harness_stays() {
    let s = skill("debian12-anssi");
    let mut rules = anssi_end();
    rules.push(rule("aide_build_database", RuleStatus::Deferred, ScanResult::Fail));
    rules.push(rule("aide_periodic_cron_checking", RuleStatus::Deferred, ScanResult::Pass));
    let c = content();
    let (last, steps) = last_rules(&s, &rules, Some(&c), false);
    let ids: Vec<(&str, &Settle, Option<usize>)> = last.iter().map(|l| (l.rule_id.trim_start_matches(RULE), &l.settle, l.step)).collect();
    assert_eq!(ids, [("aide_build_database", &Settle::Last, Some(1))]);
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].rules, [format!("{RULE}aide_build_database")]);
    assert!(steps[0].script.starts_with("#!/bin/sh\nset -eu\n"), "{}", steps[0].script);
    for line in ["/usr/sbin/aideinit -y -f", "echo \"database=file:${DEFAULT_DB_PATH}\" >> ${AIDE_CONFIG}"] {
        assert!(steps[0].script.contains(line), "{}", steps[0].script);
    }

    let (kept, none) = last_rules(&s, &rules, Some(&c), true);
    assert_eq!(kept.iter().map(|l| &l.settle).collect::<Vec<_>>(), [&Settle::Kept]);
    assert!(none.is_empty());

    let (no_fix, none) = last_rules(&s, &rules, None, false);
    assert_eq!(no_fix.iter().map(|l| &l.settle).collect::<Vec<_>>(), [&Settle::NoFix]);
    assert!(none.is_empty());

    rules.last_mut().unwrap().status = RuleStatus::Fixed;
    rules.iter_mut().find(|r| r.rule_id.ends_with("aide_build_database")).unwrap().status = RuleStatus::NotSelected;
    assert_eq!(last_rules(&s, &rules, Some(&c), false), (Vec::new(), Vec::new()));
}
