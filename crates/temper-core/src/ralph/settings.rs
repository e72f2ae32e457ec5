use std::time::Duration;

// The loop's fixed limits: a regression batch's and a plan batch's most fixes.
/// The most fixes a batch holds: the most work one regression can send back to replay. 32 was
/// tried in two README runs (2026-12-06): 6 checks, 181 s and 194 s, against 9 checks, 314 s,
/// at 16, and coarser stones (79 s of replays against 41 s): about 70 s less in all. Its cost
/// then, up to 32 pending snapshots on disk, went with [`REPLAY_BUDGET`].
pub const MAX_BATCH: u32 = 32;
/// The most fix-script time a pending state is rebuilt with instead of a snapshot of its own
/// (`state/kept.rs`). In the twelfth README run 101 of 140 kept fixes ran under 3 s (median
/// 1.4 s) and each snapshot cost 1.73 s, while a pending state was stood at again 3 times (3
/// reverts that fell back to it, no bisection): 20 s of replays at those rare times, against a
/// snapshot after every cheap fix.
pub const REPLAY_BUDGET: Duration = Duration::from_secs(20);
/// The most steps a run's first plan batch applies: each step was proven on the plan's source
/// target and a batch fails rarely (none in the ANSSI plan's 146 steps, in any recorded run);
/// one that fails costs about log2(32) = 5 checks, with its prefixes applied again.
pub const PLAN_BATCH: usize = 32;
/// The most steps any plan batch applies, reached by doubling after each clean batch
/// ([`PlanBatches`]). Each check costs about one full scan (50 to 90 s on ANSSI high under TCG):
/// the ANSSI plan's 146 steps take 3 checks instead of 5.
pub const PLAN_BATCH_MOST: usize = 64;
/// The most fix-script time a plan batch applies past its checkpoint or its last stepping stone
/// before it takes another (`batch/check.rs`), so that a larger batch costs the reboot proof's
/// rebuild no more replays: in the ANSSI plan of 2026-11-29, step 131 (the aide timer, blamed at
/// every reboot) sits 35 steps into its batch of 64, 16 of them `audit_rules_*` fixes of up to
/// 55 s each. At about 1 s a snapshot, 120 s keeps a plan's stones to a handful.
pub const PLAN_STONE_AFTER: Duration = Duration::from_secs(120);

/// How a proven plan is batched: `first` steps in a run's first batch and in the first after a
/// batch that failed its check, doubled by each batch checked clean since, up to `most`; within
/// a batch, a stepping stone once `stone_after` of fix-script time ran since the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanBatches {
    pub first: usize,
    pub most: usize,
    pub stone_after: Duration,
}

impl PlanBatches {
    /// The room after `clean` batches in a row were checked clean.
    pub fn room(self, clean: usize) -> usize {
        let grown = self.first.saturating_mul(1usize << clean.min(usize::BITS as usize - 1));
        grown.clamp(self.first.min(self.most), self.most)
    }
}

impl Default for PlanBatches {
    fn default() -> Self {
        Self { first: PLAN_BATCH, most: PLAN_BATCH_MOST, stone_after: PLAN_STONE_AFTER }
    }
}

/// The run's knobs, from temper.toml, env and flags.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The harness's SSH user: the deny-list protects its sudo and keys.
    pub user: String,
    pub health_command: String,
    pub baseline: String,
    /// Restrict the run to these rules (short or full ids); empty means all.
    pub rules: Vec<String>,
    pub max_rules: Option<usize>,
    pub rule_budget: Duration,
    pub max_attempts: u32,
    /// Re-engage the Architect after this many failed attempts on a rule.
    pub reengage_every: u32,
    /// This many failed attempts with the same lesson is a plateau.
    pub plateau_window: usize,
    /// How a fix, revert or replayed script is watched: stopped for stalling, or at its cap.
    pub fix_watch: crate::script::Watch,
    /// How long to wait for SSH after a revert.
    pub ssh_ready: Duration,
    /// Fixes per regression check; `None` measures it in preflight (see `check::batch_size`).
    pub regression_every: Option<u32>,
    /// The reboot proof at the end of the run; `None` skips it (the summary then says so).
    pub reboot: Option<RebootProof>,
    /// A proven plan's steps (`temper run --plan`), tried in order before the Architect is asked.
    pub plan: Vec<temper_journal::plan::PlannedFix>,
    /// The plan's cadence (its source run's), taken instead of measuring one when
    /// `regression_every` is not set.
    pub plan_cadence: Option<u32>,
    /// How a plan's derived step is derived again from this target's evidence; `None`: such a
    /// step is refused (nothing run) and its rule goes to the normal loop.
    pub derive: Option<crate::agent::Derive>,
    /// The most fix-script time a pending fix's state is rebuilt with by replays instead of a
    /// snapshot of its own ([`REPLAY_BUDGET`]; zero: a snapshot after every kept fix).
    pub replay_budget: Duration,
    /// How a proven plan is batched ([`PlanBatches`]).
    pub plan_batches: PlanBatches,
}

impl Default for Settings {
    /// The default target's user, health check and baseline (`crate::target`). temper.toml's
    /// defaults are these (`temper::config`).
    fn default() -> Self {
        let target = temper_journal::target::Target::default();
        Self {
            user: target.ssh_user,
            health_command: target.health_command,
            baseline: target.baseline,
            rules: Vec::new(),
            max_rules: None,
            rule_budget: Duration::from_secs(1800),
            max_attempts: 5,
            reengage_every: 2,
            plateau_window: 3,
            fix_watch: crate::script::Watch::default(),
            ssh_ready: crate::ports::SSH_READY,
            regression_every: None,
            reboot: Some(RebootProof::default()),
            plan: Vec::new(),
            plan_cadence: None,
            derive: None,
            replay_budget: REPLAY_BUDGET,
            plan_batches: PlanBatches::default(),
        }
    }
}

/// How long a rule may be worked on, and when the Architect is asked again.
#[derive(Debug, Clone, Copy)]
pub(super) struct Budget {
    pub max_attempts: u32,
    pub rule_budget: Duration,
    pub reengage_every: u32,
    pub plateau_window: usize,
}

impl Budget {
    pub fn of(s: &Settings) -> Self {
        Self {
            max_attempts: s.max_attempts,
            rule_budget: s.rule_budget,
            reengage_every: s.reengage_every,
            plateau_window: s.plateau_window,
        }
    }
}

/// How long a cold reboot may take: the clean shutdown, then the boot up to SSH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RebootProof {
    /// After this the guest is powered off.
    pub grace: Duration,
    /// A guest not reachable over SSH this long after its start does not boot.
    pub boot_timeout: Duration,
}

impl Default for RebootProof {
    fn default() -> Self {
        Self { grace: Duration::from_secs(90), boot_timeout: Duration::from_secs(300) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_batchs_room_doubles_with_each_clean_batch_up_to_its_most() {
        let b = PlanBatches::default();
        let rooms: Vec<usize> = (0..4).map(|clean| b.room(clean)).collect();
        assert_eq!(rooms, [32, 64, 64, 64]);
        assert_eq!(b.room(usize::MAX), PLAN_BATCH_MOST, "no overflow");
        let small = PlanBatches { first: 2, most: 5, ..b };
        assert_eq!((0..4).map(|c| small.room(c)).collect::<Vec<_>>(), [2, 4, 5, 5]);
        assert_eq!(PlanBatches { first: 8, most: 4, ..b }.room(0), 4, "most bounds the first too");
    }
}
