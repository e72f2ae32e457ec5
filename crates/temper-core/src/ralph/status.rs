//! Live status for a progress line (where the run stands, as `temper status` and the web view
//! read it from the store), and the records of LLM calls.
use std::time::{Duration, Instant};

use super::{LoopError, LoopResult, Phase, Ralph};
use crate::agent::TurnRecord;
use crate::journal::{
    AttemptId, Eta, Event, EventData, NewTurn, Outlook, Overhead, Remembered, Rule, RunId, RunStatus, Standing, predict_end, standing,
};

#[derive(Debug, Clone)]
pub struct Status {
    pub run: RunId,
    /// Where the run stands: its phase and rule, the tries made and its rules in scope counted,
    /// the one value `temper status` and the web view show too.
    pub standing: Standing,
    /// The attempt under way on the rule, by its number (0 between attempts): the loop knows it
    /// before the journal records it.
    pub attempt: u32,
    pub elapsed: Duration,
    /// The time left, predicted from the run's events (`journal::predict_end`).
    pub eta: Option<Eta>,
}

pub trait Observer: Send + Sync {
    fn update(&self, status: &Status);
    /// Whether it shows the ETA: it is made from every event of the run, so only for one that does.
    fn shows_eta(&self) -> bool {
        true
    }
}

/// What [`Ralph::phase`] keeps for the ETA between phases: the run's events so far, read again
/// from the last one seen (not all of them at each phase), and what the skill remembers, read
/// once.
#[derive(Default)]
pub(super) struct EtaBooks {
    events: std::sync::Mutex<Vec<Event>>,
    memory: tokio::sync::OnceCell<Remembered>,
}

/// An observer that ignores updates.
pub struct Quiet;

impl Observer for Quiet {
    fn update(&self, _: &Status) {}
    fn shows_eta(&self) -> bool {
        false
    }
}

impl Ralph<'_> {
    /// Records the phase in the store (for `temper status`) and tells the observer. A lost lease
    /// stops the loop here: another process drives the run now. Its own time is the rest's
    /// bookkeeping (`spent.rs`), which it notes once a minute.
    pub(super) async fn phase(&self, phase: Phase, rule: Option<&str>, attempt: u32) -> LoopResult<()> {
        let started = Instant::now();
        self.spent.set_phase(phase);
        if self.lease.lost() {
            return Err(LoopError::LeaseLost(self.journal.id()));
        }
        self.journal.set_phase(phase, rule).await?;
        tracing::info!(run = %self.journal.id(), phase = phase.as_str(), rule = rule.map(temper_scap::short_rule_id), attempt, "phase");
        let rules = self.journal.rules().await?;
        let standing = Standing::of(phase, rule, &rules);
        let eta = match self.observer.shows_eta() {
            true => self.eta(&rules).await?,
            false => None,
        };
        self.observer.update(&Status { run: self.journal.id(), standing, attempt, elapsed: self.started.elapsed(), eta });
        self.note_spent(false).await?;
        self.spent.add(Overhead::Bookkeeping, started.elapsed());
        Ok(())
    }

    /// The time left (`journal::predict_end`), from the run's events so far and what its skill
    /// remembers.
    async fn eta(&self, rules: &[Rule]) -> LoopResult<Option<Eta>> {
        let books = &self.eta_books;
        let memory = books.memory.get_or_try_init(|| self.journal.remembered()).await?;
        let seen = books.events.lock().unwrap_or_else(|e| e.into_inner()).last().map_or(0, |e| e.id);
        let new = self.journal.events(seen).await?;
        let mut events = books.events.lock().unwrap_or_else(|e| e.into_inner());
        events.extend(new.into_iter().filter(|e| e.id > seen));
        let (open, not_applicable) = standing(rules);
        let outlook = Outlook::new(&events, &open).remembering(&not_applicable, memory);
        Ok(predict_end(&outlook, chrono::Utc::now().fixed_offset()))
    }

    /// Stores each LLM call as a turn.
    pub(super) async fn record_turns(&self, attempt: Option<AttemptId>, rule: Option<&str>, records: &[TurnRecord]) -> LoopResult<()> {
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
    pub(super) async fn paused(&self, rule: Option<&str>, reason: String, records: &[TurnRecord]) -> LoopError {
        if let Err(e) = self.record_turns(None, rule, records).await {
            return e;
        }
        if let Err(e) = self.journal.set_status(RunStatus::Paused, Some(&reason)).await {
            return e.into();
        }
        let _ = self.note(None, EventData::Paused { reason: reason.clone() }).await;
        LoopError::Paused { run: self.journal.id(), reason }
    }
}
