//! Stepping stones: checkpoints the run moved past since the booted one, kept (at most
//! [`MAX_STONES`]) so that the reboot proof's probes and rebuilds restore the newest state that
//! already holds a prefix of their fixes, and replay only the fixes after it.
use temper_journal::AttemptId;

/// The most stones kept at once; past it, the one whose loss widens a gap least goes.
pub const MAX_STONES: usize = 8;

/// A checkpoint the run moved past, and the fixes kept since the booted checkpoint that it holds
/// (oldest first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stone {
    pub snapshot: String,
    pub holds: Vec<AttemptId>,
}

/// A run's stones, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Stones(Vec<Stone>);

impl Stones {
    /// Adds `stone` (the newest); returns those thinned out to stay within [`MAX_STONES`]: each
    /// time the older one of the closest pair (in fixes held), never the newest.
    pub fn add(&mut self, stone: Stone) -> Vec<Stone> {
        self.0.push(stone);
        let mut out = Vec::new();
        while self.0.len() > MAX_STONES {
            let held = |i: usize| self.0[i].holds.len();
            let i = (0..self.0.len() - 1).min_by_key(|&i| held(i + 1) - if i == 0 { 0 } else { held(i - 1) }).unwrap_or(0);
            out.push(self.0.remove(i));
        }
        out
    }

    /// The newest stone that holds exactly the first fixes of `fixes`, and nothing else.
    pub fn for_fixes(&self, fixes: &[AttemptId]) -> Option<&Stone> {
        self.0.iter().rev().find(|s| !s.holds.is_empty() && fixes.starts_with(&s.holds))
    }

    /// Takes the stones that hold any of `ids` (they can serve no replay without them), or all.
    pub fn take_holding(&mut self, ids: Option<&[AttemptId]>) -> Vec<Stone> {
        let (gone, kept) =
            std::mem::take(&mut self.0).into_iter().partition(|s| ids.is_none_or(|ids| s.holds.iter().any(|h| ids.contains(h))));
        self.0 = kept;
        gone
    }

    /// The stones, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Stone> {
        self.0.iter()
    }

    #[cfg(test)]
    fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|s| s.snapshot.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(r: std::ops::RangeInclusive<i64>) -> Vec<AttemptId> {
        r.map(|i| AttemptId::new(i).unwrap()).collect()
    }
    fn stone(n: i64) -> Stone {
        Stone { snapshot: format!("s{n}"), holds: ids(1..=n) }
    }

    #[test]
    fn the_newest_stone_with_a_prefix_serves_and_one_holding_a_blamed_fix_never_does() {
        let mut s = Stones::default();
        for n in [3, 6, 9] {
            assert!(s.add(stone(n)).is_empty());
        }
        let all = ids(1..=12);
        assert_eq!(s.for_fixes(&all).unwrap().snapshot, "s9");
        // Fix 8 blamed: the rest skips it, so only a stone from before it holds a prefix.
        let rest: Vec<AttemptId> = all.iter().copied().filter(|i| i.get() != 8).collect();
        assert_eq!(s.for_fixes(&rest).unwrap().snapshot, "s6");
        assert_eq!(s.for_fixes(&ids(1..=2)), None, "no stone holds only fixes 1 and 2");
        let gone = s.take_holding(Some(&ids(8..=8)));
        assert_eq!(gone, [stone(9)]);
        assert_eq!(s.names().collect::<Vec<_>>(), ["s3", "s6"]);
        assert_eq!(s.take_holding(None).len(), 2);
        assert_eq!(s.names().count(), 0);
    }

    #[test]
    fn past_the_most_the_closest_pair_loses_its_older_one_and_the_newest_stays() {
        let mut s = Stones::default();
        let mut thinned = Vec::new();
        for n in [2, 4, 5, 8, 10, 12, 14, 16, 18, 19] {
            thinned.extend(s.add(stone(n)));
        }
        assert_eq!(s.names().count(), MAX_STONES);
        assert_eq!(thinned, [stone(4), stone(18)], "s4 (2 to 5 without it), then s18 (16 to 19)");
        assert_eq!(s.names().last(), Some("s19"), "the newest is never thinned");
    }
}
