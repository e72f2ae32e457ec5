//! The machine under hardening, as the loop uses it: the guest and its hypervisor, the scanner,
//! the guard (lockout, then health), scripts run as data, and the run's snapshots
//! (`snapshots.rs`). What the guest returns is evidence; the steps judge it.
mod snapshots;

use std::sync::Arc;
use std::time::Duration;
use temper_journal::Verdict;

use crate::checks::{self, GuardFailure};
use crate::ports::{ExecOutput, Guest, Hypervisor};
use crate::ralph::books::Spent;
use crate::ralph::error::LoopResult;
use crate::ralph::settings::Settings;
use crate::scan::{Scan, ScanError, Scanner};
use crate::script::{self, ScriptError, Watch};
use crate::verdict::Guard;
use temper_journal::RunId;

/// The most output a fix, revert or replayed script keeps.
pub(in crate::ralph) const OUTPUT_CAP: usize = 256 * 1024;

/// The guest, its hypervisor and its scanner, with what the loop checks them by.
pub(in crate::ralph) struct Machine<'a> {
    hv: &'a dyn Hypervisor,
    guest: &'a dyn Guest,
    scanner: Scanner,
    /// The run, named in its snapshots' descriptions.
    run: RunId,
    /// The snapshot the run started from, never deleted.
    baseline: String,
    ssh_ready: Duration,
    health_command: String,
    fix_watch: Watch,
    /// The snapshots' and restores' times go to the rest of the run's time.
    spent: Arc<Spent>,
}

/// What the machine is made of.
pub(in crate::ralph) struct MachineParts<'a> {
    pub hv: &'a dyn Hypervisor,
    pub guest: &'a dyn Guest,
    pub scanner: Scanner,
    pub run: RunId,
    pub spent: Arc<Spent>,
}

impl<'a> Machine<'a> {
    pub fn new(p: MachineParts<'a>, s: &Settings) -> Self {
        Self {
            hv: p.hv,
            guest: p.guest,
            scanner: p.scanner,
            run: p.run,
            baseline: s.baseline.clone(),
            ssh_ready: s.ssh_ready,
            health_command: s.health_command.clone(),
            fix_watch: s.fix_watch,
            spent: p.spent,
        }
    }

    pub fn hv(&self) -> &'a dyn Hypervisor {
        self.hv
    }
    pub fn guest(&self) -> &'a dyn Guest {
        self.guest
    }
    pub fn scanner(&self) -> &Scanner {
        &self.scanner
    }
}

impl Machine<'_> {
    /// A scan of `rules` (the whole profile when none) on the guest as it stands.
    pub async fn scan(&self, rules: &[String]) -> Result<Scan, ScanError> {
        self.scanner.scan(self.guest, rules).await
    }

    /// A scan of `rules`; none when they are none.
    pub async fn scan_some(&self, rules: &[String]) -> Result<Option<Scan>, ScanError> {
        if rules.is_empty() { Ok(None) } else { self.scan(rules).await.map(Some) }
    }

    /// The guard beside a scan of `rules` (none when they are none), on the guest as it stands.
    pub async fn check_now(&self, rules: &[String]) -> (Guard, Result<Option<Scan>, ScanError>) {
        let (guard, scan) = tokio::join!(self.guard(), self.scan_some(rules));
        (Guard::from(guard), scan)
    }

    /// The lockout guard, then the health check; cut short when the hypervisor says the guest
    /// stopped running (a crash is not a lockout, and no login will come).
    pub async fn guard(&self) -> Result<checks::Health, GuardFailure> {
        tokio::select! {
            g = checks::access_then_health(self.guest, self.ssh_ready, &self.health_command) => g,
            () = self.stopped() => Err(GuardFailure::GuestDown("the hypervisor says the guest is not running: it crashed or was powered off".into())),
        }
    }

    /// The guard's failure on the guest as it stands (the verdict it gives, and what it saw);
    /// `None` when it holds.
    pub async fn guard_fails_now(&self) -> Option<(Verdict, String)> {
        Guard::from(self.guard().await).failure()
    }

    /// Resolves once the hypervisor says the domain no longer runs; asked every 2 s.
    async fn stopped(&self) {
        while !matches!(self.hv.is_running().await, Ok(false)) {
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    }

    /// Runs a fix, revert or replayed script in the guest, on stdin, watched (`crate::script`).
    pub async fn run_script(&self, script: &str) -> Result<ExecOutput, ScriptError> {
        script::run(self.guest, script, OUTPUT_CAP, self.fix_watch).await
    }

    /// The units that failed on the guest now (`None`: the listing could not be read).
    pub async fn failed_units(&self) -> Option<std::collections::BTreeSet<String>> {
        crate::units::failed(self.guest).await
    }

    /// The guest's journal errors, for the Reflector.
    pub async fn journal_errors(&self) -> String {
        checks::journal_errors(self.guest).await
    }

    /// The rules of `rules` that do not read `pass` at a snapshot, in one scan.
    pub async fn not_passing_at(&self, snapshot: &str, rules: &[String]) -> LoopResult<Vec<String>> {
        if rules.is_empty() {
            return Ok(Vec::new());
        }
        self.restore(snapshot).await?;
        Ok(self.scan(rules).await?.not_passing(rules))
    }
}
