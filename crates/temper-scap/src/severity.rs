//! XCCDF rule severity, and the one order in which rules are ranked by it.
use std::fmt;

use serde::{Deserialize, Serialize};

/// An XCCDF `severity`, least severe first (so `max` is the worst). Text outside the XCCDF
/// values reads as `Unknown`, never as an error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", from = "String")]
pub enum Severity {
    #[default]
    Unknown,
    Info,
    Low,
    Medium,
    High,
}

impl Severity {
    pub const ALL: [Severity; 5] = [Self::Unknown, Self::Info, Self::Low, Self::Medium, Self::High];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::Info => "info",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

impl From<&str> for Severity {
    fn from(s: &str) -> Self {
        Self::ALL.into_iter().find(|v| v.as_str() == s).unwrap_or_default()
    }
}

impl From<String> for Severity {
    fn from(s: String) -> Self {
        Self::from(s.as_str())
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_the_xccdf_values() {
        for s in Severity::ALL {
            assert_eq!(Severity::from(s.as_str()), s);
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<Severity>(&format!("\"{s}\"")).unwrap(), s);
        }
        for odd in ["", "critical", "High", "cat1"] {
            assert_eq!(Severity::from(odd), Severity::Unknown, "{odd}");
            assert_eq!(serde_json::from_value::<Severity>(serde_json::json!(odd)).unwrap(), Severity::Unknown);
        }
    }

    #[test]
    fn high_is_the_worst() {
        use Severity::*;
        assert!(Unknown < Info && Info < Low && Low < Medium && Medium < High);
        assert_eq!([Low, High, Medium].into_iter().max(), Some(High));
    }
}
