//! The fixes a batch keeps pending, and which of them get a snapshot of their own. A snapshot
//! with memory costs 0.8 to 2.9 s (the host writes the guest's used memory); a pending state is
//! stood at again only when a revert falls back to it or a bisection probes it. So a fix whose
//! script is cheap to run again goes without: its state is the newest snapshot before it with
//! the fixes since replayed, at most the replay budget of their scripts' time
//! ([`REPLAY_BUDGET`] unless the settings say otherwise; zero: a snapshot for every fix).
use std::time::Duration;

use temper_journal::{AttemptId, Findings};

#[cfg(doc)]
use crate::ralph::settings::REPLAY_BUDGET;

/// A fix verified on its own (rule, health, access) and kept, pending its batch's check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    pub attempt: AttemptId,
    pub rule: String,
    /// The name of its state: its snapshot's, when `taken`.
    pub snapshot: String,
    /// Its snapshot was taken; else its state is rebuilt by replaying it (`KeptWay`).
    pub taken: bool,
    /// How long its script ran: what replaying it costs.
    pub script: Duration,
}

impl Kept {
    /// The name of pending fix `attempt`'s state in the run whose snapshots start with `prefix`.
    pub fn name(prefix: &str, attempt: AttemptId) -> String {
        format!("{prefix}a{attempt}")
    }
    /// What replaying a fix costs: how long its script ran (`findings.apply_ms`).
    pub fn script_time(findings: &Findings) -> Duration {
        Duration::from_millis(findings.apply_ms.unwrap_or(0).max(0) as u64)
    }
    /// Its snapshot, when one was taken.
    pub fn taken_snapshot(&self) -> Option<&str> {
        self.taken.then_some(self.snapshot.as_str())
    }
}

/// How to stand the guest at a kept state: restore `from` (a snapshot taken), then run
/// `replay` (pending fixes with no snapshot of their own) again, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeptWay<'s> {
    pub from: &'s str,
    pub replay: &'s [Kept],
}

impl<'s> KeptWay<'s> {
    /// The way to pending state `i` (0: `checkpoint`) of `pending`.
    pub fn to(checkpoint: &'s str, pending: &'s [Kept], i: usize) -> Self {
        let upto = &pending[..i.min(pending.len())];
        match upto.iter().rposition(|k| k.taken) {
            Some(p) => Self { from: &upto[p].snapshot, replay: &upto[p + 1..] },
            None => Self { from: checkpoint, replay: upto },
        }
    }
}

/// A fix kept after `pending`, its script having taken `script`, gets a snapshot when replaying
/// it with the fixes since the newest snapshot would take longer than `budget` (always, with
/// none).
pub(super) fn snapshot_due(pending: &[Kept], script: Duration, budget: Duration) -> bool {
    let since: Duration = pending.iter().rev().take_while(|k| !k.taken).map(|k| k.script).sum();
    budget.is_zero() || since + script > budget
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ralph::settings::REPLAY_BUDGET;

    fn kept(n: i64, taken: bool, secs: u64) -> Kept {
        let attempt = AttemptId::new(n).unwrap();
        Kept { attempt, rule: format!("r{n}"), snapshot: format!("s{n}"), taken, script: Duration::from_secs(secs) }
    }

    #[test]
    fn a_state_is_its_newest_snapshot_before_it_and_the_fixes_since() {
        let pending = [kept(1, false, 1), kept(2, true, 30), kept(3, false, 2), kept(4, false, 3)];
        let way = |i| KeptWay::to("cp", &pending, i);
        assert_eq!(way(0), KeptWay { from: "cp", replay: &[] });
        assert_eq!(way(1), KeptWay { from: "cp", replay: &pending[..1] });
        assert_eq!(way(2), KeptWay { from: "s2", replay: &[] });
        assert_eq!(way(4), KeptWay { from: "s2", replay: &pending[2..] });
        assert_eq!(way(9), way(4), "past the head is the head");
    }

    #[test]
    fn a_snapshot_is_due_once_the_replays_since_the_last_would_pass_the_budget() {
        let (due, b) = (|p: &[Kept], s| snapshot_due(p, Duration::from_secs(s), REPLAY_BUDGET), REPLAY_BUDGET.as_secs());
        assert!(!due(&[], 1), "a cheap fix goes without");
        assert!(due(&[], b + 1), "a costly one gets its own");
        let cheap = [kept(1, true, 40), kept(2, false, b - 2)];
        assert!(!due(&cheap, 2), "at the budget, not past it");
        assert!(due(&cheap, 3));
        let after_taken = [kept(1, false, b), kept(2, true, 1)];
        assert!(!due(&after_taken, 2), "counted from the newest snapshot");
        assert!(snapshot_due(&[], Duration::ZERO, Duration::ZERO), "a budget of zero: every fix, however quick");
    }
}
