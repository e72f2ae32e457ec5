//! The events a run's progress chart is drawn from: the first scan's score, the three kept
//! fixes, a hostile rule id fixed then lost, and the final scan's score.
use std::collections::BTreeMap;
use std::time::Duration;

use temper_journal::{AttemptNo, EventData, ScanKind};

use super::*;

/// A rule id that is markup, quotes and control characters.
pub fn hostile_rule_id() -> String {
    format!("xccdf_org.ssgproject.content_rule_{NASTY}\u{1}\u{7}")
}

impl ReportFixture {
    /// The RHEL 9 run with one rule still failing and the chart's events.
    pub async fn rhel9_review() -> Self {
        let f = Self::rhel9_run().await;
        let idle = full(rhel9(), "sshd_set_idle_timeout");
        f.store.set_rule_status(f.run, &idle, RuleStatus::StillFailing, Some("the final scan still fails it")).await.unwrap();
        f.progress_events().await;
        f
    }

    /// Writes the events, a little apart so the chart has a time axis.
    pub async fn progress_events(&self) {
        let c = rhel9();
        let scan = |kind, score| EventData::Scan { kind, counts: BTreeMap::new(), score: Some(score), secs: 30.0, stalls: 0 };
        let verdict = |verdict, reason: &str| EventData::Verdict { attempt: Some(AttemptNo::FIRST), verdict, reason: reason.into() };
        let evil = hostile_rule_id();
        let steps: Vec<(Option<String>, EventData)> = vec![
            (None, scan(ScanKind::Full, 61.25)),
            (Some(full(c, FIXED_ROOT)), verdict(Verdict::Fixed, "the rule passes")),
            (Some(evil.clone()), verdict(Verdict::Fixed, NASTY)),
            (Some(evil), verdict(Verdict::Regression, NASTY)),
            (Some(full(c, FIXED_OWNER)), verdict(Verdict::Fixed, "the rule passes")),
            (Some(full(c, FIXED_EMPTY)), verdict(Verdict::Fixed, "the rule passes")),
            (None, scan(ScanKind::Final, 68.5)),
        ];
        for (rule, data) in steps {
            self.store.event(self.run, rule.as_deref(), &data).await.unwrap();
            tokio::time::sleep(Duration::from_millis(120)).await;
        }
    }
}
