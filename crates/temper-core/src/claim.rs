//! One driver per target. The run's lease (journal::Lease) makes one process drive a run; this
//! makes one run drive a VM, whatever store it lives in: the run writes a claim where the VM
//! lives (the libvirt domain's metadata), renews it while it drives, and removes it at the end.
//! Another run that finds a live claim of someone else's is refused before it touches the VM.
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::lease::{LEASE_FOR, Term};
use crate::ports::{Hypervisor, PortError};
use temper_journal::{Journal, JournalError, RunId, driver_is_dead, now_ms};

const RENEW_EVERY: Duration = Duration::from_secs(10);

/// Who drives a target: the store and run, the process, and until when without renewal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    /// The store, as `Journal::describe` shows it (never a password), and its identity.
    pub store: String,
    pub store_id: String,
    pub run: RunId,
    /// The driving process, `host:pid:nonce` (journal::driver_id).
    pub driver: String,
    pub until_ms: i64,
}

impl Claim {
    /// Run `run` of `journal`, driven by `driver`, for one lease term from now.
    pub async fn new(journal: &dyn Journal, run: RunId, driver: String) -> Result<Self, JournalError> {
        let (store, store_id) = (journal.describe(), journal.identity().await?);
        Ok(Self { store, store_id, run, driver, until_ms: now_ms() + LEASE_FOR.as_millis() as i64 })
    }

    /// True when this claim keeps run `run` of the store `store_id` off the target (`None`: a
    /// run not started yet): it is another run's, its term has not run out, and its process is
    /// not known dead. The same run (a resume, a worker taking it over) is never kept off: the
    /// run's own lease decides between its drivers.
    pub fn keeps_off(&self, store_id: &str, run: Option<RunId>) -> bool {
        (self.store_id != store_id || Some(self.run) != run) && self.until_ms > now_ms() && !driver_is_dead(&self.driver)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    #[error(
        "the target is driven by run {} of store `{}` (process {}, claim until {}): wait for that run to end, or for its claim to run out",
        .0.run, .0.store, .0.driver, until(.0.until_ms)
    )]
    Held(Claim),
    #[error("the target's claim: {0}")]
    Port(#[from] PortError),
    #[error("the store's identity: {0}")]
    Journal(#[from] JournalError),
}

fn until(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms).map_or("?".into(), |t| t.to_rfc3339())
}

/// Refuses run `run` of the store `store_id` (`None`: one about to start) when another run's
/// live claim holds the target; touches nothing.
pub async fn check(hv: &dyn Hypervisor, store_id: &str, run: Option<RunId>) -> Result<(), ClaimError> {
    match hv.read_claim().await? {
        Some(held) if held.keeps_off(store_id, run) => Err(ClaimError::Held(held)),
        _ => Ok(()),
    }
}

/// A held claim on the target, renewed in the background until [`TargetClaim::release`], with
/// the run's lease: it lasts as long as the lease's term, and stops once the lease is lost. The
/// renewals also put it back after a snapshot revert, which restores the domain's metadata too.
pub struct TargetClaim {
    hv: Arc<dyn Hypervisor>,
    mine: Claim,
    renewer: tokio::task::JoinHandle<()>,
}

impl TargetClaim {
    /// Writes `mine` (until the end of `term`) unless another run's live claim holds the target,
    /// then reads it back: of two runs that write at once, the one whose claim is not there is
    /// refused.
    pub async fn take(hv: Arc<dyn Hypervisor>, mine: Claim, term: Term) -> Result<TargetClaim, ClaimError> {
        let mine = Claim { until_ms: term.until_ms(), ..mine };
        check(&*hv, &mine.store_id, Some(mine.run)).await?;
        hv.write_claim(Some(&mine)).await?;
        tokio::time::sleep(Duration::from_millis(200)).await;
        match hv.read_claim().await? {
            Some(held) if held.keeps_off(&mine.store_id, Some(mine.run)) => return Err(ClaimError::Held(held)),
            _ => {}
        }
        let renewer = {
            let (hv, mine) = (hv.clone(), mine.clone());
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(RENEW_EVERY).await;
                    if term.lost() {
                        tracing::warn!(run = %mine.run, "the run's lease is lost: its claim on the target runs out with it");
                        return;
                    }
                    match hv.read_claim().await {
                        Ok(Some(held)) if held.keeps_off(&mine.store_id, Some(mine.run)) => {
                            tracing::error!(run = %mine.run, "another run claimed the target: {}", ClaimError::Held(held));
                            return;
                        }
                        Err(e) => tracing::warn!(run = %mine.run, "reading the target's claim: {e}"),
                        Ok(_) => {
                            let renewed = Claim { until_ms: term.until_ms(), ..mine.clone() };
                            if let Err(e) = hv.write_claim(Some(&renewed)).await {
                                tracing::warn!(run = %mine.run, "renewing the target's claim: {e}");
                            }
                        }
                    }
                }
            })
        };
        Ok(TargetClaim { hv, mine, renewer })
    }

    /// Stops renewing and removes the claim, if it is still this run's.
    pub async fn release(self) -> Result<(), ClaimError> {
        self.renewer.abort();
        match self.hv.read_claim().await? {
            Some(held) if held.run == self.mine.run && held.store_id == self.mine.store_id => Ok(self.hv.write_claim(None).await?),
            _ => Ok(()),
        }
    }
}

impl Drop for TargetClaim {
    fn drop(&mut self) {
        self.renewer.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run 3 of store `a`, driven from another host (never judged dead from here).
    fn held(until_ms: i64) -> Claim {
        let run = RunId::new(3).unwrap();
        Claim { store: "sqlite a".into(), store_id: "a".into(), run, driver: "elsewhere:1:0".into(), until_ms }
    }

    #[test]
    fn a_live_claim_keeps_off_other_runs_and_one_about_to_start() {
        let live = held(now_ms() + 60_000);
        assert!(!live.keeps_off("a", RunId::new(3)), "the same run (a resume)");
        assert!(live.keeps_off("a", RunId::new(4)));
        assert!(live.keeps_off("b", RunId::new(3)), "the same number in another store");
        assert!(live.keeps_off("a", None), "a run not started yet, even in the same store");
        assert!(!held(now_ms() - 1).keeps_off("a", None), "a claim whose term ran out keeps none off");
    }
}
