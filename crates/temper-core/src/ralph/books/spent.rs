//! Where "the rest" of a run's time goes (`journal::Overhead`): the parts no other record times
//! (the snapshots taken and dropped, the restores and replays of kept fixes outside a revert,
//! the loop's bookkeeping at each phase change), measured where they are spent and noted as a
//! `spent` event by the books, at a phase change once a minute has passed since the last, and
//! at the end. The time split (`journal::TimeSplit`) adds the events up.
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use temper_journal::{Overhead, Phase, Spend, Spending};

/// How often, at most, a `spent` event is noted.
const EVERY: Duration = Duration::from_secs(60);

/// What has been measured since the last `spent` event, and the phase the loop is in.
pub(in crate::ralph) struct Spent {
    state: std::sync::Mutex<State>,
}

struct State {
    parts: BTreeMap<Overhead, Spend>,
    noted: Instant,
    phase: Phase,
}

impl Default for Spent {
    fn default() -> Self {
        Self { state: std::sync::Mutex::new(State { parts: BTreeMap::new(), noted: Instant::now(), phase: Phase::Preflight }) }
    }
}

impl Spent {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts `took` to `part`.
    pub fn add(&self, part: Overhead, took: Duration) {
        let mut s = self.state();
        let e = s.parts.entry(part).or_default();
        (e.count, e.secs) = (e.count + 1, e.secs + took.as_secs_f64());
    }

    /// Counts `took` to `part` (a restore, a replay), unless the loop is reverting a fix: the
    /// revert's own time (`revert_ms`) holds it then.
    pub fn outside_revert(&self, part: Overhead, took: Duration) {
        if self.state().phase != Phase::Revert {
            self.add(part, took);
        }
    }

    /// Runs `f`, counting its time to `part`.
    pub async fn timed<T>(&self, part: Overhead, f: impl Future<Output = T>) -> T {
        let started = Instant::now();
        let out = f.await;
        self.add(part, started.elapsed());
        out
    }

    pub fn set_phase(&self, phase: Phase) {
        self.state().phase = phase;
    }

    /// What was measured since the last `spent` event, once `EVERY` has passed (or at once when
    /// `now`), and nothing was measured in between otherwise.
    pub(super) fn take(&self, now: bool) -> Option<Spending> {
        let mut s = self.state();
        if s.parts.is_empty() || !(now || s.noted.elapsed() >= EVERY) {
            return None;
        }
        s.noted = Instant::now();
        Some(Spending { parts: std::mem::take(&mut s.parts) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restore_or_replay_while_reverting_is_the_reverts_and_the_rest_is_taken_once() {
        let s = Spent::default();
        s.add(Overhead::SnapshotsTaken, Duration::from_millis(1500));
        s.add(Overhead::SnapshotsTaken, Duration::from_millis(500));
        s.set_phase(Phase::Revert);
        s.outside_revert(Overhead::Restores, Duration::from_secs(7));
        s.set_phase(Phase::Regression);
        s.outside_revert(Overhead::Restores, Duration::from_secs(5));
        s.set_phase(Phase::Revert);
        s.outside_revert(Overhead::Replays, Duration::from_secs(3));
        assert_eq!(s.take(false), None, "not a minute yet");
        let taken = s.take(true).expect("at the end, at once");
        assert_eq!(taken.parts[&Overhead::SnapshotsTaken], Spend { count: 2, secs: 2.0 });
        assert_eq!(taken.parts[&Overhead::Restores], Spend { count: 1, secs: 5.0 }, "the revert's restore is its own");
        assert!(!taken.parts.contains_key(&Overhead::Replays), "and so are its replays");
        assert_eq!(s.take(true), None, "nothing measured since");
    }
}
