use temper_core::handover::{HeldFor, HeldRule, Settle};
use temper_core::skill::HeldApply;
use temper_journal::offline::{DiskJudgement, LiveNeed, NotJudged, OfflineBasis, OfflineVerdict, RuleVerdict};
use temper_journal::{Rule, RuleStatus, RunId, ScanResult};

use super::image_rules;

fn rule(id: &str, status: RuleStatus, result: ScanResult, reason: Option<&str>) -> Rule {
    Rule {
        id: 0,
        run_id: RunId::new(1).unwrap(),
        rule_id: id.into(),
        title: String::new(),
        severity: Default::default(),
        initial_result: ScanResult::Fail,
        final_result: Some(result),
        status,
        reason: reason.map(String::from),
        escalation_cause: None,
        attempts: 0,
        elapsed_ms: 0,
        final_evidence: None,
        offline_verdict: None,
    }
}

fn held(id: &str, status: RuleStatus, settle: Settle, ended: bool) -> HeldRule {
    HeldRule {
        rule_id: id.into(),
        held_for: HeldFor::Harness,
        status,
        final_result: Some(ScanResult::Fail),
        reason: "the harness needs it".into(),
        settle,
        harness_waiver_ended: ended,
        step: None,
    }
}

fn offline(result: ScanResult) -> OfflineVerdict {
    OfflineVerdict::Offline { result, basis: OfflineBasis::Disk }
}

#[test]
fn the_images_evidence_is_its_disks_verdict_and_says_how_each_rule_was_judged() {
    use RuleStatus::{Escalated, Fixed, Passing, StillFailing, Waived};
    use ScanResult::{Fail, Pass};
    let mut rules = vec![
        rule("requiretty", Waived, Fail, Some("waiver approved by temper maintainers")),
        rule("explicit_args", Escalated, Fail, Some("no fix to try")),
        rule("site_waived", Waived, Fail, None),
        rule("sysctl", Fixed, Pass, None),
        rule("lied", Passing, Pass, None),
        rule("unjudged", Escalated, Fail, None),
        rule("not_in_judgement", Passing, Pass, None),
    ];
    let held = [
        held("requiretty", Waived, Settle::Apply { apply: HeldApply::Stock }, true),
        held("explicit_args", Escalated, Settle::Removal, false),
        held("site_waived", Waived, Settle::StaysWaived { reason: "our admins".into() }, false),
    ];
    let v = |rule: &str, verdict| RuleVerdict { rule: rule.into(), verdict };
    let judged = DiskJudgement {
        verdicts: vec![
            v("requiretty", offline(Pass)),
            v("explicit_args", offline(Fail)),
            v("site_waived", offline(Fail)),
            v("sysctl", OfflineVerdict::LiveOnly { needs: vec![LiveNeed::Sysctl], live: Some(Pass) }),
            v("lied", offline(Fail)),
            v("unjudged", OfflineVerdict::NotJudged { why: NotJudged::Unsupported, live: None }),
        ],
        ..DiskJudgement::default()
    };
    image_rules(&mut rules, &judged, &held);
    let got: Vec<(&str, RuleStatus, Option<ScanResult>)> = rules.iter().map(|r| (r.rule_id.as_str(), r.status, r.final_result)).collect();
    assert_eq!(
        got,
        [
            ("requiretty", Fixed, Some(Pass)),
            ("explicit_args", StillFailing, Some(Fail)),
            ("site_waived", Waived, Some(Fail)),
            ("sysctl", Fixed, Some(Pass)),
            ("lied", StillFailing, Some(Fail)),
            ("unjudged", Escalated, Some(Fail)),
            ("not_in_judgement", Passing, Some(Pass)),
        ]
    );
    let reason = |i: usize| rules[i].reason.clone().unwrap_or_default();
    assert!(
        reason(0)
            .starts_with("held for the harness: its stock fix applied at the handover; its waiver, held for the harness, ended with it"),
        "{}",
        reason(0)
    );
    assert!(
        reason(0).contains("judged offline from its disk (disk): pass") && reason(0).ends_with("waiver approved by temper maintainers")
    );
    assert!(reason(1).contains("the harness's own sudo rule removed") && !reason(1).contains("ended"), "{}", reason(1));
    assert!(reason(2).contains("stays waived"));
    assert!(reason(3).starts_with("judged live only (sysctl): its last live result, before the handover, pass"), "{}", reason(3));
    assert!(reason(5).contains("not judged offline (unsupported): its last live result, before the handover, fail"), "{}", reason(5));
    assert_eq!(rules[6].reason, None, "a rule the judgement does not name is as the run left it");
    assert!(rules[..6].iter().all(|r| r.offline_verdict.is_some()));
}

/// A `[[last]]` rule says why it goes last, whatever the handover did with it; it is never
/// called held for the harness.
#[test]
fn a_last_rule_is_never_called_held_for_the_harness() {
    let last = |settle| HeldRule {
        held_for: HeldFor::Last,
        reason: "it records the image".into(),
        ..held("aide", RuleStatus::Deferred, settle, false)
    };
    for (settle, result, status) in [
        (Settle::Last, ScanResult::Pass, RuleStatus::Fixed),
        (Settle::Kept, ScanResult::Fail, RuleStatus::Deferred),
        (Settle::NoFix, ScanResult::Fail, RuleStatus::StillFailing),
    ] {
        let label = settle.label();
        let mut rules = vec![rule("aide", RuleStatus::Deferred, ScanResult::Fail, None)];
        let judged =
            DiskJudgement { verdicts: vec![RuleVerdict { rule: "aide".into(), verdict: offline(result) }], ..DiskJudgement::default() };
        image_rules(&mut rules, &judged, &[last(settle)]);
        let reason = rules[0].reason.clone().unwrap_or_default();
        assert!(reason.starts_with(&format!("{label}: it records the image")), "{reason}");
        assert!(!reason.contains("held for the harness"), "{reason}");
        assert_eq!(rules[0].status, status, "{reason}");
    }
}
