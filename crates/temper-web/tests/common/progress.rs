//! The events the run page's progress chart is drawn from, one of them on a hostile rule id.
use std::collections::BTreeMap;
use std::time::Duration;

use temper_journal::ScanKind;
use temper_journal::Verdict;

use super::*;

/// A rule id that is markup, quotes and control characters.
pub fn hostile_rule_id() -> String {
    format!("{PWN_SCRIPT}\u{1}\u{7} {PWN_IMG} 'sq' \"dq\"")
}

impl WebFixture {
    /// The first scan's score, the fixed rule's verdict, a hostile rule fixed then lost: a
    /// little apart, so the chart has a time axis.
    pub async fn with_progress(&self) {
        let scan = EventData::Scan { kind: ScanKind::Full, counts: BTreeMap::new(), score: Some(61.25), secs: 30.0, stalls: 0 };
        let verdict = |verdict| EventData::Verdict { attempt: Some(temper_journal::AttemptNo::FIRST), verdict, reason: hostile() };
        let evil = hostile_rule_id();
        let steps = [
            (None, scan),
            (Some(FIXED.to_string()), verdict(Verdict::Fixed)),
            (Some(evil.clone()), verdict(Verdict::Fixed)),
            (Some(evil), verdict(Verdict::Regression)),
        ];
        for (rule, data) in steps {
            self.store.event(self.run, rule.as_deref(), &data).await.unwrap();
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }
}
