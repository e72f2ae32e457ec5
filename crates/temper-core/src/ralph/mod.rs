//! The Ralph loop: one run, as a plain sequence of steps over the port traits. `Ralph` keeps the
//! loop's order, the ports and the run's journal; each step is a type of its own, made for one
//! call, with a small surface:
//!
//! 1. `Preflight` (`preflight.rs`): restore the checkpoint (rebuilt when it is gone: `lost.rs`),
//!    check access and health, scan the profile;
//! 2. `Picker` (`pick.rs`): the Architect picks one failing rule the harness offers;
//! 3. `Attempter` (`attempt.rs`): the Worker's single `apply_fix`, checked against the deny-list;
//! 4. evaluated: rescan, health, lockout guard, regression set;
//! 5. kept (checkpoint) or reverted (script, verified, else snapshot): `keep.rs`, `revert.rs`;
//!    every snapshot taken, restored or dropped: `snapshots.rs`;
//!    on a large profile kept fixes wait in a batch for one regression rescan: `Check`
//!    (`regress.rs`); a proven plan's steps are applied and checked in batches: `Batch`
//!    (`plan_batch.rs`), through the `Attempter`'s surface;
//! 6. `Reflection` (`reflect.rs`, `escalate.rs`): reflect on failure, escalate on budget, plateau
//!    or the Architect's word; then finish: the reboot proof (`Proof`, `boot/`), a final scan,
//!    the summary and the exit code.
mod ahead;
mod applicable;
mod attempt;
mod boot;
mod cross;
mod escalate;
mod evidence;
mod finish;
mod keep;
mod lost;
mod pick;
mod plan_batch;
mod planned;
mod preflight;
mod reflect;
mod regress;
mod rescan;
mod reuse;
mod revert;
mod second_pass;
mod settings;
mod snapshots;
mod spent;
mod state;
mod status;
mod steps;
mod trial;

use pick::Next;
use std::time::Instant;
use steps::{Attempter, Batch, Check, Picker, Preflight};

use temper_scap::Benchmark;

pub use crate::journal::Phase;
pub use ahead::Ahead;
pub use boot::RebootProof;
pub use preflight::checkpoint_prefix;
pub use settings::Settings;
pub use status::{Observer, Quiet, Status};

use crate::agent::{Architect, Reflector, Worker};
use crate::journal::{EventData, Journal, JournalError, Lease, Recall, RunId, RunJournal, RunSummary};
use crate::ports::{Guest, Hypervisor, OfflineJudge, PortError};
use crate::scan::{ScanError, Scanner};
use crate::skill::Skill;

#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    #[error("baseline snapshot `{0}` does not exist: run `bash vm/up.sh` (or create it) first")]
    NoBaseline(String),
    #[error("preflight: {0}")]
    Preflight(String),
    #[error("the LLM is unavailable; run {run} is paused, `temper resume` continues it: {reason}")]
    Paused { run: RunId, reason: String },
    #[error("scan: {0}")]
    Scan(#[from] ScanError),
    #[error("target: {0}")]
    Port(#[from] PortError),
    #[error("store: {0}")]
    Store(#[from] JournalError),
    #[error("another process took over run {0} (this one stalled past its lease); it stopped here")]
    LeaseLost(RunId),
    #[error("the guest could not be restored to checkpoint `{checkpoint}`: {reason}")]
    Restore { checkpoint: String, reason: String },
    #[error(
        "a batch's check failed, and fails at checkpoint `{checkpoint}` too, where it held before ({problem}): no fix of the \
         batch is to blame; the fixes stay pending, and `temper resume` checks again"
    )]
    CheckpointFails { checkpoint: String, problem: String },
}

pub type LoopResult<T> = Result<T, LoopError>;

/// The agents for the three roles.
pub struct Agents<'a> {
    pub architect: &'a dyn Architect,
    pub worker: &'a dyn Worker,
    pub reflector: &'a dyn Reflector,
}

/// What a run is driven with: the ports (the hardware sits behind their traits), the agents, the
/// skill and its content, and how the loop is tuned.
pub struct Parts<'a> {
    pub store: &'a dyn Journal,
    pub hv: &'a dyn Hypervisor,
    pub guest: &'a dyn Guest,
    pub agents: Agents<'a>,
    pub skill: &'a Skill,
    /// The profile's selected rules, for titles, rationale and stock fixes.
    pub content: &'a Benchmark,
    pub scanner: Scanner,
    pub settings: Settings,
    pub observer: &'a dyn Observer,
    /// Judges the final state's disk from outside the guest, to cross-examine its final scan
    /// (`cross.rs`); `None`: the guest's scan alone.
    pub offline: Option<&'a dyn OfflineJudge>,
}

/// One run's loop: its parts, and the lease under which this process drives it. The time spent in
/// the guest and hypervisor is summed on the lease's clock: wrap the ports in
/// [`crate::ports::Timed`] over it.
pub struct Ralph<'a> {
    /// The journal of the run this loop drives (the lease's run).
    journal: RunJournal<'a>,
    hv: &'a dyn Hypervisor,
    guest: &'a dyn Guest,
    agents: Agents<'a>,
    skill: &'a Skill,
    content: &'a Benchmark,
    scanner: Scanner,
    settings: Settings,
    observer: &'a dyn Observer,
    offline: Option<&'a dyn OfflineJudge>,
    started: Instant,
    /// Its loss stops the loop; it carries the earlier segments' times.
    lease: &'a Lease,
    /// What `phase` keeps for the ETA (`status.rs`).
    eta_books: status::EtaBooks,
    /// What the rest of the run's time went to since the last `spent` event (`spent.rs`).
    spent: spent::Spent,
    /// The run's target (its label, as the run row keeps it): the memory that holds on it.
    target: std::sync::OnceLock<String>,
}

impl<'a> Ralph<'a> {
    /// The loop for the run `lease` holds: the one constructor, for the CLI and the tests alike.
    pub fn new(parts: Parts<'a>, lease: &'a Lease) -> Self {
        let Parts { store, hv, guest, agents, skill, content, scanner, settings, observer, offline } = parts;
        let (journal, started) = (RunJournal::new(store, lease.run), Instant::now());
        // The guest writes the results: a rule id the content lacks is dropped at the scanner.
        let scanner = scanner.with_known_rules(content.selected_rules.iter().map(|r| r.id.clone()));
        Self {
            journal,
            hv,
            guest,
            agents,
            skill,
            content,
            scanner,
            settings,
            observer,
            offline,
            started,
            lease,
            eta_books: Default::default(),
            spent: Default::default(),
            target: std::sync::OnceLock::new(),
        }
    }
}

impl Ralph<'_> {
    /// The memory this run shares: its skill's, made by a run on its target or approved for the
    /// skill by a person (before the run's row is read: the approved alone).
    fn recall(&self) -> Recall<'_> {
        Recall::skill(self.skill.name()).on(self.target.get().map_or("", String::as_str))
    }

    /// Appends an event to the run's journal, after the notes the scanner made since the last
    /// (`walk_fallback`: objects the walk left to oscap).
    async fn note(&self, rule: Option<&str>, data: EventData) -> LoopResult<()> {
        for n in self.scanner.take_notes() {
            self.journal.event(None, &n).await?;
        }
        Ok(self.journal.event(rule, &data).await?)
    }

    /// Runs the run (a new one, or one being resumed) to its end.
    #[tracing::instrument(name = "run", skip_all, fields(run = %self.journal.id()))]
    pub async fn run(&self) -> LoopResult<RunSummary> {
        let _ = self.target.set(self.journal.row().await?.target);
        let mut state = Preflight::new(self).run().await?;
        let last = loop {
            if state.batch_due() {
                Check::new(self, &mut state).run().await?;
            }
            if Batch::new(self).run(&mut state).await? {
                continue;
            }
            match Picker::new(self, state.worked_mut()).run().await? {
                Next::Work(pick) => Attempter::new(self).work_on(&mut state, pick).await?,
                Next::Again => {}
                // The last batch; a regression reopens rules, so pick again after it.
                Next::Done if !state.pending().is_empty() => Check::new(self, &mut state).run().await?,
                Next::Done => {
                    if let End::Holds(scan) = self.final_scan(&mut state).await? {
                        break scan;
                    }
                }
            }
        };
        self.finish(&state, &last).await
    }
}

/// Where the end of a run stands after one of its final steps.
#[derive(Debug)]
pub(super) enum End<T = ()> {
    /// It holds: with the final scan, once that is taken.
    Holds(T),
    /// A fix was blamed or a rule reopened: the loop goes back to picking.
    Reopened,
}

pub use crate::journal::Booted;
pub use state::{Kept, RunState};
