//! Evidence taken ahead: what a rescan found for rules other than its own, kept for their
//! attempts while the guest stays where the rescan saw it (`evidence.rs` serves it).
use std::collections::BTreeMap;

use temper_scap::oval::Evidence;

use crate::scan::Scan;

/// Rules' evidence, taken by a rescan that looked ahead, valid while the guest is at `head` and
/// nothing has run on it since.
#[derive(Debug, Clone)]
pub struct Ahead {
    pub head: String,
    pub evidence: BTreeMap<String, Option<Evidence>>,
}

impl Ahead {
    /// What `scan` found for each of `rules`, with the guest at `head`.
    pub fn of(head: &str, scan: &Scan, rules: &[String]) -> Self {
        let evidence = rules.iter().map(|r| (r.clone(), scan.evidence_of(r).cloned())).collect();
        Ahead { head: head.to_string(), evidence }
    }

    /// Still valid when the guest is at `head`, where the rescan saw it.
    pub fn at(self, head: &str) -> Option<Self> {
        (self.head == head).then_some(self)
    }

    /// Moved past a deferred stock fix, kept pending at `head` with no rescan of its own: the
    /// evidence of the rules `keep` names stays, taken before that fix ran (as a plan batch's
    /// evidence is taken before its steps run).
    pub fn carried(mut self, head: &str, keep: impl Fn(&str) -> bool) -> Self {
        self.evidence.retain(|r, _| keep(r));
        self.head = head.to_string();
        self
    }

    /// The rule's evidence, when the rescan took it; the rest stays.
    pub fn take(&mut self, rule: &str) -> Option<Option<Evidence>> {
        self.evidence.remove(rule)
    }
}

#[cfg(test)]
mod tests {
    use super::Ahead;

    #[test]
    fn looked_ahead_evidence_serves_only_its_rules_at_that_head() {
        let ahead = || Ahead { head: "s-a".into(), evidence: [("b".to_string(), None), ("d".to_string(), None)].into() };
        let mut a = ahead().at("s-a").expect("valid where the rescan saw the guest");
        assert_eq!(a.take("b"), Some(None), "a rule looked ahead to");
        assert_eq!(a.take("b"), None, "taken once");
        assert_eq!(a.take("d"), Some(None), "the other rule stays for its own attempt");
        assert_eq!(ahead().take("c"), None, "another rule was picked: it gets a rescan");
        assert!(ahead().at("s-z").is_none(), "the guest moved (a bisection restored another snapshot)");
        let mut moved = ahead().carried("s-b", |r| r == "d").at("s-b").expect("served at the pending fix's snapshot");
        assert_eq!((moved.take("b"), moved.take("d")), (None, Some(None)), "only the rules it keeps");
    }
}
