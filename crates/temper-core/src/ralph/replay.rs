//! Kept fixes run again, in order, on the guest as it is: after a restore to an older kept state
//! (`preflight/lost.rs`), and in the reboot proof's probes and rebuilds (`proof/`).
use std::time::Instant;

use crate::ralph::books::Books;
use crate::ralph::error::LoopResult;
use crate::ralph::machine::Machine;
use temper_journal::{Attempt, EventData, Overhead, ReplayWhy, Replayed};

/// Runs kept fixes again, in order, on the guest as it is (`onto` names the state it was
/// restored to). A fix that fails is noted and left to the checks that follow. Their time is the
/// rest's replays.
pub(super) async fn replay(books: &Books<'_>, machine: &Machine<'_>, fixes: &[&Attempt], onto: &str, why: ReplayWhy) -> LoopResult<()> {
    for a in fixes {
        let started = Instant::now();
        let code = match machine.run_script(&a.spec.fix_script).await {
            Ok(out) => out.exit_code,
            Err(e) => {
                tracing::warn!(rule = %a.spec.rule_id, error = %e, "replaying a kept fix failed");
                None
            }
        };
        books.spend(Overhead::Replays, started.elapsed());
        let data = Replayed::Onto { attempt: a.n, onto: onto.to_string(), exit_code: code, why };
        books.note(Some(&a.spec.rule_id), EventData::Replay(data)).await?;
    }
    Ok(())
}
