//! What a rescan saw of rules other than its own, kept for their attempts while the guest stays
//! where the rescan saw it (`attempt/evidence.rs` serves it): each rule's result, so an attempt knows its
//! rule still fails right before its fix runs, and the scanner's evidence of what is wrong.
use std::collections::BTreeMap;

use temper_scap::Outcome;
use temper_scap::oval::Evidence;

use crate::scan::Scan;

/// One rule as a scan saw it: its result (none when the scan gave none) and, when it fails,
/// what the scanner found wrong (OVAL engine).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Seen {
    pub outcome: Option<Outcome>,
    pub evidence: Option<Evidence>,
}

impl Seen {
    /// What `scan` saw of `rule`.
    pub fn of(scan: &Scan, rule: &str) -> Self {
        Self { outcome: scan.outcome(rule), evidence: scan.evidence_of(rule).cloned() }
    }
    /// The rule reads exactly `pass`: there is nothing for a fix of its own to do.
    pub fn passes(&self) -> bool {
        self.outcome == Some(Outcome::Pass)
    }
}

/// Rules as a rescan that looked ahead saw them, valid while the guest is at `head` and nothing
/// has run on it since.
#[derive(Debug, Clone)]
pub struct Ahead {
    pub head: String,
    pub seen: BTreeMap<String, Seen>,
}

impl Ahead {
    /// What `scan` saw of each of `rules`, with the guest at `head`.
    pub fn of(head: &str, scan: &Scan, rules: &[String]) -> Self {
        let seen = rules.iter().map(|r| (r.clone(), Seen::of(scan, r))).collect();
        Ahead { head: head.to_string(), seen }
    }

    /// Still valid when the guest is at `head`, where the rescan saw it.
    pub fn at(self, head: &str) -> Option<Self> {
        (self.head == head).then_some(self)
    }

    /// The rule as the rescan saw it, when it took it; the rest stays.
    pub fn take(&mut self, rule: &str) -> Option<Seen> {
        self.seen.remove(rule)
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::{Ahead, Seen};
    use temper_scap::Outcome;

    #[test]
    fn looked_ahead_rules_serve_only_their_attempts_at_that_head() {
        let fail = Seen { outcome: Some(Outcome::Fail), evidence: None };
        let ahead = || Ahead { head: "s-a".into(), seen: [("b".to_string(), fail.clone()), ("d".to_string(), Seen::default())].into() };
        let mut a = ahead().at("s-a").expect("valid where the rescan saw the guest");
        assert_eq!(a.take("b"), Some(fail.clone()), "a rule looked ahead to");
        assert_eq!(a.take("b"), None, "taken once");
        assert_eq!(a.take("d"), Some(Seen::default()), "the other rule stays for its own attempt");
        assert_eq!(ahead().take("c"), None, "another rule was picked: it gets a rescan");
        assert!(ahead().at("s-z").is_none(), "the guest moved (a bisection restored another snapshot)");
        assert!(!fail.passes() && !Seen::default().passes(), "only a read pass passes");
        assert!(Seen { outcome: Some(Outcome::Pass), evidence: None }.passes());
        for o in [Outcome::NotApplicable, Outcome::Unknown, Outcome::Error, Outcome::NotChecked] {
            assert!(!Seen { outcome: Some(o), evidence: None }.passes(), "{o:?} is not a pass");
        }
    }
}
