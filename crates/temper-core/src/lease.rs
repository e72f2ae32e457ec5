//! One run, one driver: a process takes a run's lease before it drives it and renews it while
//! it does. A process that dies stops renewing; its lease runs out (or, on the same host, its
//! pid is gone) and another process may take the run. The renewals also keep the run's wall
//! and guest time, so a resumed run's times add up over every segment.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

use crate::ports::Clock;
use temper_journal::{EventData, Journal, JournalError, RunId, driver_id, driver_is_dead, now_ms};

/// How long a lease holds without renewal, and how often it is renewed.
pub const LEASE_FOR: Duration = Duration::from_secs(30);
const RENEW_EVERY: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error("run {run} is being driven by another process ({driver}, lease until {until}); wait for it, or for its lease to run out")]
    Held { run: RunId, driver: String, until: String },
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// A lease's term as its renewals leave it, shared with what must not outlive the lease (the
/// target's claim, `crate::claim`).
#[derive(Debug, Clone)]
pub struct Term {
    until_ms: Arc<AtomicI64>,
    lost: Arc<AtomicBool>,
}

impl Term {
    /// A term that ends at `until_ms` unless renewed.
    pub fn new(until_ms: i64) -> Self {
        Self { until_ms: Arc::new(AtomicI64::new(until_ms)), lost: Arc::new(AtomicBool::new(false)) }
    }
    /// When the lease runs out without another renewal (ms since the epoch).
    pub fn until_ms(&self) -> i64 {
        self.until_ms.load(Ordering::SeqCst)
    }
    /// True once the lease is lost for good.
    pub fn lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }
    fn renewed(&self, until_ms: i64) {
        self.until_ms.store(until_ms, Ordering::SeqCst);
    }
    fn lose(&self) {
        self.lost.store(true, Ordering::SeqCst);
    }
}

/// A held lease. Renewed in the background until [`Lease::release`].
pub struct Lease {
    pub run: RunId,
    pub driver: String,
    /// This segment's start, and the wall and guest time of the run's earlier segments.
    pub started: Instant,
    pub prior_wall: Duration,
    pub prior_guest: Duration,
    term: Term,
    journal: Arc<dyn Journal>,
    clock: Arc<Clock>,
    renewer: tokio::task::JoinHandle<()>,
}

impl Lease {
    /// Takes run `run` for this process, or says who holds it.
    pub async fn take(journal: Arc<dyn Journal>, run: RunId, clock: Arc<Clock>) -> Result<Lease, LeaseError> {
        let row = journal.run(run).await?;
        let driver = driver_id();
        let dead = row.driver.as_deref().filter(|d| driver_is_dead(d));
        let now = now_ms();
        let until = now + LEASE_FOR.as_millis() as i64;
        if !journal.claim_run(run, &driver, dead, now, until).await? {
            let row = journal.run(run).await?;
            let until = row.lease_until.and_then(chrono::DateTime::from_timestamp_millis).map_or("?".into(), |t| t.to_rfc3339());
            return Err(LeaseError::Held { run, driver: row.driver.unwrap_or_default(), until });
        }
        journal.event(run, None, &EventData::LeaseTaken { driver: driver.clone(), previous: row.driver.clone() }).await?;
        let term = Term::new(until);
        let (started, prior_wall, prior_guest) =
            (Instant::now(), Duration::from_millis(row.wall_ms as u64), Duration::from_millis(row.guest_ms as u64));
        let renewer = {
            let (journal, clock, term, driver) = (journal.clone(), clock.clone(), term.clone(), driver.clone());
            tokio::spawn(async move {
                let mut renewed = Instant::now();
                loop {
                    tokio::time::sleep(RENEW_EVERY).await;
                    let (wall, guest) = (prior_wall + started.elapsed(), prior_guest + clock.total());
                    let until = now_ms() + LEASE_FOR.as_millis() as i64;
                    let renew = journal.renew_lease(run, &driver, until, wall.as_millis() as i64, guest.as_millis() as i64);
                    // A store that does not answer is no better than one that refuses.
                    let renewal = tokio::time::timeout(RENEW_EVERY, renew)
                        .await
                        .unwrap_or_else(|_| Err(JournalError::Db(format!("no answer within {RENEW_EVERY:?}"))));
                    match renewal {
                        Ok(true) => {
                            renewed = Instant::now();
                            term.renewed(until);
                        }
                        Ok(false) => {
                            tracing::error!(%run, "the run's lease was taken by another process; stopping");
                            term.lose();
                            return;
                        }
                        // Cut off from the store: give the run up before the lease's term ends
                        // (the next try would come after it), since another process may take it
                        // then; this one must not touch the target again.
                        Err(e) if renewed.elapsed() + RENEW_EVERY >= LEASE_FOR => {
                            tracing::error!(%run, "the run's lease runs out unrenewed ({e}); another process may take the run: stopping");
                            term.lose();
                            return;
                        }
                        Err(e) => tracing::warn!(%run, "renewing the run's lease: {e}"),
                    }
                }
            })
        };
        Ok(Lease { run, driver, started, prior_wall, prior_guest, term, journal, clock, renewer })
    }

    /// The clock the guest and hypervisor time of this segment runs on.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// True once another process took the run (this one stalled past its lease), or this one
    /// could not renew it for its whole term (cut off from the store).
    pub fn lost(&self) -> bool {
        self.term.lost()
    }

    /// The lease's term, for what must end with it.
    pub fn term(&self) -> Term {
        self.term.clone()
    }

    /// The run's wall and guest time over every segment, this one included.
    pub fn totals(&self) -> (Duration, Duration) {
        (self.prior_wall + self.started.elapsed(), self.prior_guest + self.clock.total())
    }

    /// Stops renewing, records the times, and lets the run go.
    pub async fn release(self) -> Result<(), JournalError> {
        self.renewer.abort();
        if self.lost() {
            return Ok(());
        }
        let (wall, guest) = self.totals();
        self.journal.renew_lease(self.run, &self.driver, now_ms(), wall.as_millis() as i64, guest.as_millis() as i64).await?;
        self.journal.release_run(self.run, &self.driver).await
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.renewer.abort();
    }
}
