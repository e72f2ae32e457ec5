//! The rule's evidence before a fix: with the OVAL engine, a one-rule rescan (about the cost of
//! the rescan after the fix) shows the Worker, the journal and the report what is wrong now,
//! after every fix kept since the first scan.
use temper_scap::oval::Evidence;

use super::Ralph;
use crate::scan::Engine;

impl Ralph<'_> {
    /// `None` with the xccdf engine, when the rule passes, or when the scan fails (the attempt
    /// goes on without it: evidence informs, the rescan after the fix judges).
    pub(super) async fn evidence_now(&self, rule: &str) -> Option<Evidence> {
        if self.scanner.engine() != Engine::Oval {
            return None;
        }
        match self.scanner.scan(self.guest, &[rule.to_string()]).await {
            Ok(scan) => scan.evidence_of(rule).cloned(),
            Err(e) => {
                tracing::warn!(rule, error = %e, "no evidence before the fix: the rescan failed");
                None
            }
        }
    }
}
