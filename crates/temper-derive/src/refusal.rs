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
    #[error("{path} may not be the file's own name (a byte that is not UTF-8 is written as another character): a fix would be a guess")]
    UnsureName { path: String },
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
    #[error("test {test}: the guest gave an item its object could not have collected, {item:?} ({why}): the host refuses its evidence")]
    ForeignItem { test: String, item: String, why: String },
    #[error("test {test} is not in the evidence (cut at its cap)")]
    MissingTest { test: String },
    #[error("test {test}: {why}")]
    Unsupported { test: String, why: String },
    #[error("it would {what}, as an earlier fix did, which {ended}: the same try again")]
    Repeats { what: String, ended: String },
}

/// What kind of refusal it is, for a reviewer who reads which rules the tier will never fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// The rule's kernel configuration (`/boot/config-*`): only another kernel meets it.
    NeedsAnotherKernel,
    /// No evidence, or evidence cut at its cap: a rescan with the OVAL engine may give it.
    Evidence,
    /// A kind of check the tier has no family for.
    Kind,
    /// A regex, a range 0 does not meet, or many values: no one value to set.
    NotExact,
    /// A protected path or thing.
    Protected,
    /// The check's shape: negated, undecided, or a state the family cannot meet.
    Shape,
    /// Nothing found failing.
    Nothing,
    /// The same change as a try that failed.
    Repeat,
    /// Evidence the host's definitions refuse: an item its object could not have collected.
    Refused,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NeedsAnotherKernel => "needs another kernel",
            Self::Evidence => "no evidence to derive from",
            Self::Kind => "a kind of check the tier does not fix",
            Self::NotExact => "no exact value",
            Self::Protected => "protected",
            Self::Shape => "the check's shape",
            Self::Nothing => "nothing failing",
            Self::Repeat => "a failed try again",
            Self::Refused => "evidence the host refuses",
        }
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Refusal {
    pub fn class(&self) -> Class {
        let on_kernel_config = |test: &str| test.contains("kernel_config_");
        match self {
            Self::DeniedPath { path } if path.starts_with("/boot/config-") => Class::NeedsAnotherKernel,
            Self::UnknownFamily { test, .. }
            | Self::RegexState { test, .. }
            | Self::Unsupported { test, .. }
            | Self::Undecided { test, .. }
                if on_kernel_config(test) =>
            {
                Class::NeedsAnotherKernel
            }
            Self::NoEvidence | Self::MissingTest { .. } | Self::Truncated { .. } | Self::UnsureName { .. } => Class::Evidence,
            Self::UnknownFamily { .. } => Class::Kind,
            Self::RegexState { .. } | Self::RangeState { .. } | Self::ManyValues { .. } | Self::Variable { .. } => Class::NotExact,
            Self::DeniedPath { .. } | Self::Protected { .. } => Class::Protected,
            Self::Undecided { .. } | Self::Negated { .. } | Self::Unsupported { .. } => Class::Shape,
            Self::NothingFailing | Self::NoItems { .. } => Class::Nothing,
            Self::Repeats { .. } => Class::Repeat,
            Self::ForeignItem { .. } => Class::Refused,
        }
    }
}
