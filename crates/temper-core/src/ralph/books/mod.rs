//! The run's books: its journal and the events noted in it, the phase it is in (for `temper
//! status` and the observer), the LLM calls it made, the memory its skill shares, and where the
//! rest of its time went (`spent.rs`). Every step writes the run's record through them.
mod memory;
mod spent;
mod status;

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

pub(in crate::ralph) use spent::Spent;
pub use status::{Observer, Quiet, Status};

use crate::lease::Lease;
use crate::ralph::error::{LoopError, LoopResult};
use crate::scan::{Scan, Scanner};
use temper_journal::turn::TurnRecord;
use temper_journal::{AttemptId, AttemptNo, EventData, NewTurn, Overhead, Phase, Recall, RunId, RunJournal, RunStatus};

/// The run's record, written by every step.
pub(in crate::ralph) struct Books<'a> {
    journal: RunJournal<'a>,
    observer: &'a dyn Observer,
    /// Its loss stops the loop; it carries the earlier segments' times.
    lease: &'a Lease,
    started: Instant,
    /// What `enter` keeps for the ETA (`status.rs`).
    eta: status::EtaBooks,
    /// What the rest of the run's time went to since the last `spent` event.
    spent: Arc<Spent>,
    /// The scanner's notes (`walk_fallback`: objects the walk left to oscap), noted before each event.
    notes: Scanner,
    /// The skill whose memory the run shares.
    skill: String,
    /// The run's target (its label, as the run row keeps it): the memory that holds on it.
    target: OnceLock<String>,
}

/// What the books are opened with.
pub(in crate::ralph) struct Opening<'a> {
    pub journal: RunJournal<'a>,
    pub observer: &'a dyn Observer,
    pub lease: &'a Lease,
    pub spent: Arc<Spent>,
    pub notes: Scanner,
    pub skill: String,
}

impl<'a> Books<'a> {
    pub fn open(o: Opening<'a>) -> Self {
        let Opening { journal, observer, lease, spent, notes, skill } = o;
        Self { journal, observer, lease, started: Instant::now(), eta: Default::default(), spent, notes, skill, target: OnceLock::new() }
    }
}

impl<'a> Books<'a> {
    pub fn journal(&self) -> RunJournal<'a> {
        self.journal
    }
    /// The skill whose memory the run shares.
    pub fn skill(&self) -> &str {
        &self.skill
    }
    pub fn id(&self) -> RunId {
        self.journal.id()
    }
    /// Wall and guest time over every segment of the run (the lease carries the earlier ones).
    pub fn totals(&self) -> (Duration, Duration) {
        self.lease.totals()
    }

    /// Reads the run's target from its row, for [`Self::recall`].
    pub async fn load_target(&self) -> LoopResult<()> {
        let _ = self.target.set(self.journal.row().await?.target);
        Ok(())
    }

    /// The memory this run shares: its skill's, made by a run on its target or approved for the
    /// skill by a person (before the run's row is read: the approved alone).
    pub fn recall(&self) -> Recall<'_> {
        Recall::skill(&self.skill).on(self.target.get().map_or("", String::as_str))
    }

    /// Appends an event to the run's journal, after the notes the scanner made since the last.
    pub async fn note(&self, rule: Option<&str>, data: EventData) -> LoopResult<()> {
        for n in self.notes.take_notes() {
            self.journal.event(None, &n).await?;
        }
        Ok(self.journal.event(rule, &data).await?)
    }

    /// A full scan that dropped results for rules the content lacks says so, once per scan.
    pub async fn note_unknown(&self, scan: &Scan) -> LoopResult<()> {
        if scan.unknown.is_empty() {
            return Ok(());
        }
        self.note(None, EventData::RulesUnknown { ids: scan.unknown.clone() }).await
    }

    /// The loop enters `phase`: the lease held, the phase stored (for `temper status`), the
    /// observer told, and the rest's time noted once a minute. Its own time is the rest's
    /// bookkeeping.
    pub async fn enter(&self, phase: Phase, rule: Option<&str>, attempt: Option<AttemptNo>) -> LoopResult<()> {
        let started = Instant::now();
        self.spent.set_phase(phase);
        self.hold_lease()?;
        self.journal.set_phase(phase, rule).await?;
        tracing::info!(run = %self.id(), phase = phase.as_str(), rule = rule.map(temper_scap::short_rule_id), attempt = attempt.map_or(0, AttemptNo::get), "phase");
        self.tell_observer(phase, rule, attempt).await?;
        self.note_spent(false).await?;
        self.spent.add(Overhead::Bookkeeping, started.elapsed());
        Ok(())
    }

    /// Counts `took` to `part` of the rest of the run's time (not while reverting: the revert's).
    pub fn spend(&self, part: Overhead, took: std::time::Duration) {
        self.spent.outside_revert(part, took);
    }

    /// A lost lease stops the loop: another process drives the run now.
    fn hold_lease(&self) -> LoopResult<()> {
        if self.lease.lost() { Err(LoopError::LeaseLost(self.id())) } else { Ok(()) }
    }

    /// Notes what was measured of the rest as a `spent` event: once a minute has passed since
    /// the last, or at once when `now` (the end of the run).
    pub async fn note_spent(&self, now: bool) -> LoopResult<()> {
        match self.spent.take(now) {
            Some(spending) => self.note(None, EventData::Spent(spending)).await,
            None => Ok(()),
        }
    }

    /// Stores each LLM call as a turn.
    pub async fn record_turns(&self, attempt: Option<AttemptId>, rule: Option<&str>, records: &[TurnRecord]) -> LoopResult<()> {
        for record in records {
            self.journal.add_turn(&NewTurn { attempt_id: attempt, rule_id: rule, record }).await?;
            if !record.tool_calls_dropped.is_empty() {
                let dropped = EventData::ToolCallCapped { role: record.role, dropped: record.tool_calls_dropped.clone() };
                self.note(rule, dropped).await?;
            }
        }
        Ok(())
    }

    /// The LLM stayed unavailable: its calls are recorded and the run pauses (`temper resume`
    /// continues it). The one place every role's unavailability goes.
    pub async fn paused(&self, rule: Option<&str>, reason: String, records: &[TurnRecord]) -> LoopError {
        if let Err(e) = self.record_turns(None, rule, records).await {
            return e;
        }
        if let Err(e) = self.journal.set_status(RunStatus::Paused, Some(&reason)).await {
            return e.into();
        }
        let _ = self.note(None, EventData::Paused { reason: reason.clone() }).await;
        LoopError::Paused { run: self.id(), reason }
    }
}
