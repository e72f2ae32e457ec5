//! What the loop carries between steps. Its fields are private: a step moves it on only through
//! the transitions below, each named for what happened (a fix kept, a batch promoted or blamed, a
//! rule that fails now). All of it can be rebuilt from the store.
use std::time::Duration;

mod ahead;
mod kept;
mod stones;

pub use ahead::{Ahead, Seen};
pub use kept::{Kept, KeptWay};
pub use stones::{Stone, Stones};
use temper_journal::{AttemptId, Booted, MemoryId};

#[derive(Debug, Clone)]
pub struct RunState {
    /// Rules that pass now (at the baseline, or fixed since): any of them failing is a regression.
    regression_set: Vec<String>,
    /// Rules that pass (at the baseline, or fixed since) and whose checks walk a directory tree
    /// (minutes each under TCG): checked by the final scan only, where one that fails is bisected.
    final_set: Vec<String>,
    /// The last checkpoint: the regression set passed there.
    checkpoint: String,
    /// Fixes kept since the checkpoint, oldest first; they await the batch's regression check.
    pending: Vec<Kept>,
    /// Fixes per regression check; 1: the regression set rides in every rule rescan.
    regression_every: u32,
    /// The one-rule rescan preflight measured, when it measured the cadence: each check then
    /// re-derives the cadence from its own time (`regress::batch_size`).
    one_rule: Option<Duration>,
    /// Rules worked on in this process (for `--max-rules`).
    worked: usize,
    /// The start of this run's snapshot names (`preflight::checkpoint_prefix`).
    prefix: String,
    /// The last checkpoint proven to boot (the baseline at first): the reboot proof starts there.
    booted: Booted,
    /// Bans made by other runs of the skill that this run has recorded as in force (`ban_shared`).
    shared_bans: Vec<MemoryId>,
    /// Evidence looked ahead to by the last rescan (`attempt/evidence.rs`).
    ahead: Option<Ahead>,
    /// Checkpoints moved past since the booted one, for the reboot proof's replays.
    stones: Stones,
}

impl RunState {
    /// A run at `checkpoint`, proven to boot at `booted`, naming its snapshots from `prefix`;
    /// nothing watched, kept or counted yet, and the regression set in every rescan.
    pub fn at(checkpoint: String, booted: Booted, prefix: String) -> Self {
        Self {
            regression_set: Vec::new(),
            final_set: Vec::new(),
            checkpoint,
            pending: Vec::new(),
            regression_every: 1,
            one_rule: None,
            worked: 0,
            prefix,
            booted,
            shared_bans: Vec::new(),
            ahead: None,
            stones: Stones::default(),
        }
    }
    /// The same, watching `regression_set` at every check and `final_set` at the final scan.
    pub fn watching(self, regression_set: Vec<String>, final_set: Vec<String>) -> Self {
        Self { regression_set, final_set, ..self }
    }
    /// The same, with fixes kept since the checkpoint that await their check.
    pub fn with_pending(self, pending: Vec<Kept>) -> Self {
        Self { pending, ..self }
    }
    /// The same, checking every `every` fixes; `one_rule`: measured, so each check retimes it.
    pub fn with_cadence(self, every: u32, one_rule: Option<Duration>) -> Self {
        Self { regression_every: every, one_rule, ..self }
    }
    /// The same, with `worked` rules worked on and the shared bans already recorded.
    pub fn with_history(self, worked: usize, shared_bans: Vec<MemoryId>) -> Self {
        Self { worked, shared_bans, ..self }
    }

    pub fn regression_set(&self) -> &[String] {
        &self.regression_set
    }
    pub fn final_set(&self) -> &[String] {
        &self.final_set
    }
    pub fn checkpoint(&self) -> &str {
        &self.checkpoint
    }
    pub fn pending(&self) -> &[Kept] {
        &self.pending
    }
    pub fn regression_every(&self) -> u32 {
        self.regression_every
    }
    pub fn worked(&self) -> usize {
        self.worked
    }
    pub fn prefix(&self) -> &str {
        &self.prefix
    }
    pub fn booted(&self) -> &Booted {
        &self.booted
    }

    /// The newest stepping stone that holds exactly the first of `fixes`.
    pub fn stone_for(&self, fixes: &[AttemptId]) -> Option<&Stone> {
        self.stones.for_fixes(fixes)
    }

    /// True when `name` must stay: the baseline, or the checkpoint proven to boot.
    pub fn pinned(&self, name: &str) -> bool {
        name == self.booted.snapshot
    }
    /// The newest kept state's name: the last pending fix's snapshot (taken or not), else the
    /// checkpoint.
    pub fn head(&self) -> &str {
        self.pending.last().map_or(&self.checkpoint, |k| &k.snapshot)
    }
    /// How to stand the guest at pending state `i` (0: the checkpoint; `pending().len()`: the
    /// head): the newest snapshot taken at or before it, and the fixes to replay onto it.
    pub fn way_to(&self, i: usize) -> KeptWay<'_> {
        KeptWay::to(&self.checkpoint, &self.pending, i)
    }
    /// The way to the head.
    pub fn way_to_head(&self) -> KeptWay<'_> {
        self.way_to(self.pending.len())
    }
    /// Whether a fix kept pending, its script having taken `script`, needs a snapshot of its own:
    /// replaying the fixes since the newest one would take longer than `budget` (`kept.rs`).
    pub fn snapshot_due(&self, script: std::time::Duration, budget: std::time::Duration) -> bool {
        kept::snapshot_due(&self.pending, script, budget)
    }
    /// The regression set waits for a batch of kept fixes, instead of riding in each rescan.
    pub fn batched(&self) -> bool {
        self.regression_every > 1
    }
    pub fn batch_due(&self) -> bool {
        self.batched() && self.pending.len() >= self.regression_every as usize
    }

    /// `rule` passes now: it is watched from here on, at every check, or at the final scan when
    /// its check `walks` a directory tree.
    pub fn passes(&mut self, rule: String, walks: bool) {
        if walks { self.final_set.push(rule) } else { self.regression_set.push(rule) }
    }
    /// `rule` no longer passes (reopened, blamed, unstable): it is watched no more.
    pub fn unwatch(&mut self, rule: &str) {
        self.regression_set.retain(|r| r != rule);
        self.final_set.retain(|r| r != rule);
    }

    /// A fix kept with its snapshot, to await the batch's check.
    pub fn keep(&mut self, kept: Kept) {
        self.pending.push(kept);
    }
    /// `name` is the checkpoint now; returns the one it replaced.
    pub fn set_checkpoint(&mut self, name: String) -> String {
        std::mem::replace(&mut self.checkpoint, name)
    }
    /// A checkpoint moved past becomes a stepping stone; returns the stones thinned out.
    pub fn add_stone(&mut self, stone: Stone) -> Vec<Stone> {
        self.stones.add(stone)
    }
    /// Takes the stones that hold any of `ids`, or all of them (a new booted checkpoint, the end).
    pub fn take_stones(&mut self, ids: Option<&[AttemptId]>) -> Vec<Stone> {
        self.stones.take_holding(ids)
    }
    /// The batch passed its check: its head is the checkpoint. Returns the old checkpoint and the
    /// fixes that were pending.
    pub fn promote(&mut self) -> (String, Vec<Kept>) {
        let head = self.head().to_string();
        (self.set_checkpoint(head), std::mem::take(&mut self.pending))
    }
    /// The bisection blamed pending fix `n` (from 1): it and the fixes after it leave the batch.
    /// Returns the culprit and those after it.
    pub fn blame(&mut self, n: usize) -> (Kept, Vec<Kept>) {
        let dropped = self.pending.split_off(n);
        let culprit = self.pending.pop().expect("the blamed fix is pending");
        (culprit, dropped)
    }
    /// The fixes pending leave the batch for a bisection over every fix kept since the booted
    /// checkpoint (the journal still holds them in force); returns them.
    pub fn fold_pending(&mut self) -> Vec<Kept> {
        std::mem::take(&mut self.pending)
    }
    /// `booted` is the checkpoint proven to boot now; returns the one it replaced.
    pub fn set_booted(&mut self, booted: Booted) -> Booted {
        std::mem::replace(&mut self.booted, booted)
    }

    /// The one-rule rescan preflight measured, when it measured the cadence.
    pub fn one_rule(&self) -> Option<Duration> {
        self.one_rule
    }
    pub fn set_regression_every(&mut self, every: u32) {
        self.regression_every = every;
    }

    /// The count of rules worked on, for the pick to move on.
    pub fn worked_mut(&mut self) -> &mut usize {
        &mut self.worked
    }
    /// Records that shared ban `id` is in force here; false when it was already.
    pub fn note_shared_ban(&mut self, id: MemoryId) -> bool {
        let new = !self.shared_bans.contains(&id);
        if new {
            self.shared_bans.push(id);
        }
        new
    }

    /// Evidence looked ahead to, for the next attempts (`None`: nothing).
    pub fn look_ahead(&mut self, ahead: Option<Ahead>) {
        self.ahead = ahead;
    }
    /// The evidence looked ahead to, once: the guest moves on after this.
    pub fn take_ahead(&mut self) -> Option<Ahead> {
        self.ahead.take()
    }
}
