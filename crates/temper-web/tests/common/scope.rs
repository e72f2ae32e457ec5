//! Rules that other fixes made applicable mid-run, and an attempt that does not count as a try.
use super::*;

/// Not applicable at the first scan; fails since another fix made it applicable: open.
pub const APPLIES: &str = "xccdf_org.ssgproject.content_rule_ensure_logrotate_activated";
/// Not applicable at the first scan; passes since it became applicable: never failed.
pub const APPLIES_PASSING: &str = "xccdf_org.ssgproject.content_rule_rsyslog_files_permissions";
/// Still not applicable.
pub const NOT_APPLICABLE: &str = "xccdf_org.ssgproject.content_rule_rsyslog_files_ownership";

impl WebFixture {
    /// The running run, later: three rules not applicable at the first scan, of which one fails
    /// since (open) and one passes since; an attempt on the open rule undone with its batch (no
    /// try); the loop working on the rule that became applicable.
    pub async fn with_rules_made_applicable(&self) {
        for id in [APPLIES, APPLIES_PASSING, NOT_APPLICABLE] {
            let rule = NewRule {
                rule_id: id.into(),
                title: id.into(),
                severity: "medium".into(),
                initial_result: ScanResult::NotApplicable,
                status: RuleStatus::NotApplicable,
                reason: None,
            };
            self.store.add_rule(self.run, &rule).await.unwrap();
        }
        let why = "not applicable at the first scan; fails since other rules' fixes made it applicable";
        self.store.set_rule_status(self.run, APPLIES, RuleStatus::Pending, Some(why)).await.unwrap();
        self.store.set_rule_status(self.run, APPLIES_PASSING, RuleStatus::Passing, Some("passes since")).await.unwrap();
        let undone = self.attempt(OPEN, "undone with its batch", "true\n").await;
        self.store.set_aside_attempts(self.run, &[undone], "undone with its batch").await.unwrap();
        self.store.set_phase(self.run, Phase::Fix, Some(APPLIES)).await.unwrap();
    }
}
