//! Live status for a progress line (where the run stands, as `temper status` and the web view
//! read it from the store).
use std::time::Duration;

use super::Books;
use crate::ralph::error::LoopResult;
use temper_journal::{AttemptNo, Eta, Event, Outlook, Phase, Remembered, Rule, RunId, Standing, open_and_not_applicable, predict_end};

#[derive(Debug, Clone)]
pub struct Status {
    pub run: RunId,
    /// Where the run stands: its phase and rule, the tries made and its rules in scope counted,
    /// the one value `temper status` and the web view show too.
    pub standing: Standing,
    /// The attempt under way on the rule, by its number (`None` between attempts): the loop
    /// knows it before the journal records it.
    pub attempt: Option<AttemptNo>,
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

/// What [`Books::enter`] keeps for the ETA between phases: the run's events so far, read again
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

impl Books<'_> {
    /// Tells the observer where the run stands, with the time left when it shows it.
    pub(super) async fn tell_observer(&self, phase: Phase, rule: Option<&str>, attempt: Option<AttemptNo>) -> LoopResult<()> {
        let rules = self.journal.rules().await?;
        let standing = Standing::of(phase, rule, &rules);
        let eta = match self.observer.shows_eta() {
            true => self.eta(&rules).await?,
            false => None,
        };
        self.observer.update(&Status { run: self.journal.id(), standing, attempt, elapsed: self.started.elapsed(), eta });
        Ok(())
    }

    /// The time left (`journal::predict_end`), from the run's events so far and what its skill
    /// remembers.
    async fn eta(&self, rules: &[Rule]) -> LoopResult<Option<Eta>> {
        let books = &self.eta;
        let memory = books.memory.get_or_try_init(|| self.journal.remembered()).await?;
        let seen = books.events.lock().unwrap_or_else(|e| e.into_inner()).last().map(|e| e.id);
        let new = self.journal.events(seen).await?;
        let mut events = books.events.lock().unwrap_or_else(|e| e.into_inner());
        events.extend(new.into_iter().filter(|e| Some(e.id) > seen));
        let (open, not_applicable) = open_and_not_applicable(rules);
        let outlook = Outlook::new(&events, &open).remembering(&not_applicable, memory);
        Ok(predict_end(&outlook, chrono::Utc::now().fixed_offset()))
    }
}
