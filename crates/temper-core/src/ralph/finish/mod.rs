//! The end of a run: a final full scan, the summary and the exit code.
mod cross;
mod evidence;

use crate::ports::OfflineJudge;
use crate::ralph::books::Books;
use crate::ralph::crew::Crew;
use crate::ralph::error::{End, LoopResult};
use crate::ralph::ledger::Ledger;
use crate::ralph::machine::Machine;
use crate::ralph::offer::{OUT_OF_SCOPE, Offer};
use crate::ralph::proof::RebootProver;
use crate::ralph::retire::drop_stones;
use crate::ralph::state::RunState;
use crate::scan::Scan;
use temper_journal::{self as journal, EventData, EventKind, Phase, RuleStatus, RunSummary, ScanKind, ScanResult, Tally, count_by};

/// Exit codes: every failing rule in scope fixed or dispositioned; some remain.
pub const EXIT_DONE: i64 = 0;
pub const EXIT_REMAINING: i64 = 2;
/// The guest's final scan passes a rule its disk, judged from outside, fails, or its disk does
/// not read (`cross.rs`).
pub const EXIT_GUEST_DISAGREES: i64 = 3;

/// The end of a run: the reboot proof, the final scan, the guest cross-examined, the summary.
#[derive(Clone, Copy)]
pub(super) struct Finisher<'r> {
    books: &'r Books<'r>,
    machine: &'r Machine<'r>,
    offer: &'r Offer<'r>,
    ledger: Ledger<'r>,
    proof: RebootProver<'r>,
    /// Judges the final state's disk from outside the guest (`cross.rs`); `None`: the guest's
    /// scan alone.
    offline: Option<&'r dyn OfflineJudge>,
    /// The run ends with a reboot proof.
    with_proof: bool,
}

impl<'r> Finisher<'r> {
    pub(in crate::ralph) fn new(c: &'r Crew<'r>) -> Self {
        Self {
            books: &c.books,
            machine: &c.machine,
            offer: &c.offer,
            ledger: Ledger::new(c),
            proof: RebootProver::new(c),
            offline: c.offline,
            with_proof: c.settings.reboot.is_some(),
        }
    }
}

impl Finisher<'_> {
    /// The reboot proof, then the final full scan, which holds unless the loop must go on. A fix the
    /// proof blames reopens its rule. A rule not applicable so far that fails now (another fix
    /// made it applicable) reopens (`ledger.rs`). A rule reopens for applicability once at
    /// most, and each blame rolls back a fix, so it ends.
    #[tracing::instrument(name = "final_scan", skip_all)]
    pub(in crate::ralph) async fn final_scan(&self, state: &mut RunState) -> LoopResult<End<Scan>> {
        self.books.enter(Phase::Finish, None, None).await?;
        state.take_ahead();
        if let End::Reopened = self.proof.prove_boot(state).await? {
            return Ok(End::Reopened);
        }
        let scan = self.machine.scan(&[]).await?;
        self.books.note_unknown(&scan).await?;
        let secs = scan.took.as_secs_f64();
        let data = EventData::Scan { kind: ScanKind::Final, counts: scan.results.counts(false), score: None, secs, stalls: scan.stalls };
        self.books.note(None, data).await?;
        if let End::Reopened = self.proof.persisted(state, &scan).await? {
            return Ok(End::Reopened);
        }
        let watched = self.offer.not_applicable().await?;
        let reopened = self.ledger.now_applicable(state, &scan, &watched).await?;
        if reopened > 0 {
            return Ok(End::Reopened);
        }
        // The run ends here: no replay will need a stepping stone.
        drop_stones(self.machine, state, None).await?;
        Ok(End::Holds(scan))
    }

    #[tracing::instrument(name = "finish", skip_all)]
    pub(in crate::ralph) async fn finish(&self, state: &RunState, scan: &Scan) -> LoopResult<RunSummary> {
        for r in self.books.journal().rules().await? {
            let after = ScanResult::from(scan.outcome(&r.rule_id));
            self.books.journal().set_final_result(&r.rule_id, after).await?;
            let open = matches!(r.status, RuleStatus::Pending | RuleStatus::Escalated);
            if open && after == ScanResult::Pass {
                // Another rule's fix fixed it (installing a package enables its service), or
                // one made it applicable and another then made it pass.
                let first = match r.initial_result {
                    ScanResult::Fail => String::new(),
                    other => format!(" (it read {other} at the first scan)"),
                };
                let was = r.reason.as_deref().map(|x| format!("; it had been {}: {x}", r.status)).unwrap_or_default();
                let why = format!("passes at the final scan, after other rules' fixes{first}{was}");
                self.books.journal().set_rule_status(&r.rule_id, RuleStatus::Fixed, Some(&why)).await?;
            } else if r.status == RuleStatus::Pending && !self.offer.in_scope(&r.rule_id) {
                // A run stored before scopes had their own status.
                self.books.journal().set_rule_status(&r.rule_id, RuleStatus::OutOfScope, Some(OUT_OF_SCOPE)).await?;
            } else if r.status == RuleStatus::Pending {
                let why = if r.attempts == 0 { "not attempted in this run" } else { "attempts ended without a fix" };
                self.books.journal().set_rule_status(&r.rule_id, RuleStatus::StillFailing, Some(why)).await?;
            }
        }
        self.final_evidence(scan).await?;
        let cross = self.cross_examine(state, scan).await?;
        let rules = self.books.journal().rules().await?;
        let statuses = count_by(&rules, |r| Some(r.status));
        let before = count_by(&rules, |r| Some(r.initial_result));
        let failing_after: Vec<String> =
            rules.iter().filter(|r| r.final_result == Some(ScanResult::Fail) && !r.status.set_aside()).map(|r| r.rule_id.clone()).collect();
        let remaining = Tally::of(&rules).remaining() > 0;
        let exit_code = match &cross {
            Some(x) if x.is_finding() => EXIT_GUEST_DISAGREES,
            _ if remaining || !failing_after.is_empty() => EXIT_REMAINING,
            _ => EXIT_DONE,
        };

        let attempts = self.books.journal().attempts().await?;
        let reverts = journal::reverts(&attempts);
        let turns = self.books.journal().turns().await?;
        let prompt_tokens = turns.iter().map(|t| t.prompt_tokens.unwrap_or(t.prompt_tokens_est)).sum();
        let completion_tokens = turns.iter().filter_map(|t| t.completion_tokens).sum();
        let llm_secs = turns.iter().map(|t| t.latency_ms).sum::<i64>() as f64 / 1000.0;
        // Every segment of a resumed run counts: the lease carries the earlier ones.
        let (wall, guest) = self.books.totals();
        let (wall_secs, guest_secs) = (wall.as_secs_f64(), guest.as_secs_f64());
        let segments = self.books.journal().events(None).await?.iter().filter(|e| e.kind == EventKind::LeaseTaken).count().max(1);
        let harness_secs = (wall_secs - guest_secs - llm_secs).max(0.0);
        let score_after = scan.results.score().map(|s| s.value);
        // The target as the run leaves it: reachable with sudo, and healthy.
        let healthy = Some(self.machine.guard().await.is_ok_and(|h| h.ok));
        self.books.journal().set_scores(None, score_after).await?;
        let summary = RunSummary {
            run: Some(self.books.id()),
            exit_code,
            statuses,
            before,
            after: scan.results.counts(false).into_iter().collect(),
            score_before: self.books.journal().row().await?.score_before,
            score_after,
            attempts: attempts.len(),
            reverts,
            prompt_tokens,
            completion_tokens,
            wall_secs,
            guest_secs,
            llm_secs,
            harness_secs,
            harness_pct: if wall_secs > 0.0 { 100.0 * harness_secs / wall_secs } else { 0.0 },
            segments,
            failing_after,
            healthy,
            rebooted: self.with_proof.then(|| state.checkpoint() == state.booted().snapshot),
            cross_examination: cross,
        };
        self.books.note_spent(true).await?;
        self.books.note(None, EventData::Finish(Box::new(summary.clone()))).await?;
        self.books.journal().finish(&summary).await?;
        Ok(summary)
    }
}
