//! The order a reviewer reads a run's rules in: what needs a human first, then what is still
//! failing, then what the run fixed, then the rest. The web view and every report use it.
use crate::RuleStatus;

impl RuleStatus {
    /// Every status, in review order. Within a status, rules keep their content order.
    pub const REVIEW_ORDER: [RuleStatus; 16] = [
        Self::Escalated,
        Self::StillFailing,
        Self::Fixed,
        // The rest: open or unsettled first, then set aside, then as scanned.
        Self::Pending,
        Self::Unstable,
        Self::Error,
        Self::Unknown,
        Self::Skipped,
        Self::Waived,
        Self::Deferred,
        Self::OutOfScope,
        Self::Passing,
        Self::NotApplicable,
        Self::NotChecked,
        Self::NotSelected,
        Self::Informational,
    ];

    /// This status's place in [`Self::REVIEW_ORDER`]: 0 (escalated) first.
    pub fn review_rank(self) -> usize {
        Self::REVIEW_ORDER.iter().position(|s| *s == self).unwrap_or(Self::REVIEW_ORDER.len())
    }

    /// Sorts `items` into review order by their status; a stable sort, so each status keeps
    /// the order the items came in.
    pub fn sort_for_review<T>(items: &mut [T], status: impl Fn(&T) -> RuleStatus) {
        items.sort_by_key(|item| status(item).review_rank());
    }
}

#[cfg(test)]
mod tests {
    use crate::*;

    #[test]
    fn review_order_holds_every_status_once() {
        assert_eq!(RuleStatus::REVIEW_ORDER.len(), RuleStatus::ALL.len());
        for s in RuleStatus::ALL {
            assert_eq!(RuleStatus::REVIEW_ORDER.iter().filter(|x| *x == s).count(), 1, "{s}");
        }
    }

    #[test]
    fn escalated_then_still_failing_then_fixed_then_the_rest() {
        use RuleStatus as S;
        assert_eq!(S::REVIEW_ORDER[..3], [S::Escalated, S::StillFailing, S::Fixed]);
        assert!(S::Fixed.review_rank() < S::Pending.review_rank());
        assert!(S::Fixed.review_rank() < S::Passing.review_rank());
        let mut rules = vec![("a", S::Passing), ("b", S::Fixed), ("c", S::Escalated), ("d", S::Fixed), ("e", S::StillFailing)];
        S::sort_for_review(&mut rules, |r| r.1);
        let ids: Vec<&str> = rules.iter().map(|r| r.0).collect();
        assert_eq!(ids, ["c", "e", "b", "d", "a"], "stable within a status");
    }
}
