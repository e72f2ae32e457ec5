//! What the final scan found wrong with each rule left failing, kept with the rule for the
//! reports.
use temper_journal::Engine;
use temper_scap::Outcome;

use super::Finisher;
use crate::ralph::error::LoopResult;
use crate::scan::Scan;

impl Finisher<'_> {
    /// What the final scan found wrong with each rule still failing, attempted or not, kept
    /// with the rule for the reports: from the scan (its OVAL results, and the tree walkers it
    /// split off), else from one rescan through the OVAL engine of those it can give evidence
    /// for. None with the xccdf engine; a rescan that fails leaves them without (evidence
    /// informs, it judges nothing).
    pub(super) async fn final_evidence(&self, scan: &Scan) -> LoopResult<()> {
        if self.machine.scanner().engine() != Engine::Oval {
            return Ok(());
        }
        let known: Vec<String> = self.books.journal().rules().await?.into_iter().map(|r| r.rule_id).collect();
        let failing: Vec<String> = scan.with(Outcome::Fail).into_iter().filter(|r| known.contains(r)).collect();
        let without: Vec<String> = failing.iter().filter(|r| scan.evidence_of(r).is_none()).cloned().collect();
        let rest = self.machine.scanner().without_own_xccdf(&without);
        let rescan = if rest.is_empty() {
            None
        } else {
            let scan = self.machine.scan(&rest).await;
            scan.inspect_err(
                |e| tracing::warn!(rules = rest.len(), error = %e, "no evidence for the rules left failing: the rescan failed"),
            )
            .ok()
        };
        for rule in &failing {
            if let Some(e) = scan.evidence_of(rule).or_else(|| rescan.as_ref()?.evidence_of(rule)) {
                self.books.journal().set_final_evidence(rule, e).await?;
            }
        }
        Ok(())
    }
}
