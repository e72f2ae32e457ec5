//! Why no fix is derived: each reason names the test (or item) that stopped it.

/// A rule the derived tier will not fix, and why; shown in the escalation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("no OVAL evidence for the rule (the xccdf engine collects none)")]
    NoEvidence,
    #[error("no failing test in the evidence")]
    NothingFailing,
    #[error("test {test} is a {kind}: no derived fix for that kind of check")]
    UnknownFamily { test: String, kind: String },
    #[error("test {test} expects {field} to match the regex `{pattern}`: no value meets it exactly")]
    RegexState { test: String, field: String, pattern: String },
    #[error("test {test} expects {field} `{operation}` a value: a range, not one value to set")]
    RangeState { test: String, field: String, operation: String },
    #[error("test {test} found no items to fix")]
    NoItems { test: String },
    #[error("test {test} names {named} of its {total} items: a fix of some would be a guess")]
    Truncated { test: String, named: usize, total: usize },
    #[error("{path} is a protected path: a derived fix never touches it")]
    DeniedPath { path: String },
    #[error("{what} is protected: a derived fix never changes it")]
    Protected { what: String },
    #[error("test {test} is {result}, not false: nothing certain to fix")]
    Undecided { test: String, result: String },
    #[error("test {test} is negated: the fix would have to break what it checks")]
    Negated { test: String },
    #[error("variable {var} of test {test} has no value in the evidence")]
    Variable { test: String, var: String },
    #[error("variable {var} of test {test} has {n} values, any of which meets it: which one to set is a guess")]
    ManyValues { test: String, var: String, n: usize },
    #[error("test {test} is not in the evidence (cut at its cap)")]
    MissingTest { test: String },
    #[error("test {test}: {why}")]
    Unsupported { test: String, why: String },
    #[error("it would {what}, as an earlier fix did, which {ended}: the same try again")]
    Repeats { what: String, ended: String },
}
