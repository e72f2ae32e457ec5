//! The Ralph loop: one run, as a plain sequence of steps over the port traits. `Ralph` keeps the
//! loop's order and nothing else. What the steps share is four rooms below them:
//! - `books/`: the run's record (journal, events, phase, LLM turns, memory, the rest's time);
//! - `machine/`: the guest, its hypervisor and scanner, the guard, scripts, snapshots;
//! - `offer/`: the rules the harness offers now, and the proven plan's due steps;
//! - `ledger.rs`: a rule's moves (passes, applies, unstable); `state/`: what the loop carries.
//!
//! Each step has a folder, with its type, its `new` and its methods together; it holds only the
//! rooms and knobs it uses, taken from the run's `Crew` when it is made, and nothing reaches its
//! fields from outside:
//! 1. `preflight/`: restore the checkpoint (rebuilt when it is gone: `lost.rs`), check access and
//!    health, scan the profile;
//! 2. `pick/`: the Architect picks one failing rule the harness offers (or the harness picks a
//!    replay, a plan step, a remembered fix, a second pass);
//! 3. `attempt/`: the Worker's single `apply_fix`, checked against the deny-list, run, evaluated
//!    (rescan, health, lockout guard), then kept (checkpoint) or reverted (script, verified, else
//!    snapshot);
//! 4. `check/`: on a large profile kept fixes wait in a batch for one regression check, bisected
//!    when it finds one; `batch/`: a proven plan's steps applied and checked in batches;
//! 5. `reflect/`, `escalate/`: the lesson of a failure; escalation on budget, plateau or the
//!    Architect's word;
//! 6. `proof/`: the reboot proof; `finish/`: the final scan, the guest cross-examined, the summary
//!    and the exit code.
mod attempt;
mod batch;
mod books;
mod check;
mod crew;
mod error;
mod escalate;
mod finish;
mod ledger;
mod machine;
mod offer;
mod pick;
mod preflight;
mod proof;
mod reflect;
mod replay;
mod retire;
mod settings;
mod state;
mod trial;

use attempt::Attempter;
use batch::PlanBatch;
use check::RegressionCheck;
use crew::Crew;
use finish::Finisher;
use pick::{Next, Picker};
use preflight::Preflight;

pub use books::{Observer, Quiet, Status};
pub use crew::{Agents, Parts};
pub use error::{LoopError, LoopResult};
pub use finish::{EXIT_DONE, EXIT_GUEST_DISAGREES, EXIT_REMAINING};
pub use preflight::checkpoint_prefix;
pub use settings::{PlanBatches, RebootProof, Settings};
pub use state::{Ahead, Kept, RunState};

use crate::lease::Lease;
use error::End;
use temper_journal::RunSummary;

/// One run's loop: the crew its steps are made from, under the lease this process holds. The
/// time spent in the guest and hypervisor is summed on the lease's clock: wrap the ports in
/// [`crate::ports::Timed`] over it.
pub struct Ralph<'a> {
    crew: Crew<'a>,
}

impl<'a> Ralph<'a> {
    /// The loop for the run `lease` holds: the one constructor, for the CLI and the tests alike.
    pub fn new(parts: Parts<'a>, lease: &'a Lease) -> Self {
        Self { crew: Crew::new(parts, lease) }
    }

    /// Runs the run (a new one, or one being resumed) to its end.
    #[tracing::instrument(name = "run", skip_all, fields(run = %self.crew.books.id()))]
    pub async fn run(&self) -> LoopResult<RunSummary> {
        let c = &self.crew;
        c.books.load_target().await?;
        let (check, batch, attempter, finisher) = (RegressionCheck::new(c), PlanBatch::new(c), Attempter::new(c), Finisher::new(c));
        let mut state = Preflight::new(c).run().await?;
        let last = loop {
            if state.batch_due() {
                check.run(&mut state).await?;
            }
            if batch.run(&mut state).await? {
                continue;
            }
            match Picker::new(c).run(&mut state).await? {
                Next::Work(pick) => attempter.work_on(&mut state, pick).await?,
                Next::Again => {}
                // The last batch; a regression reopens rules, so pick again after it.
                Next::Done if !state.pending().is_empty() => check.run(&mut state).await?,
                Next::Done => {
                    if let End::Holds(scan) = finisher.final_scan(&mut state).await? {
                        break scan;
                    }
                }
            }
        };
        finisher.finish(&state, &last).await
    }
}
