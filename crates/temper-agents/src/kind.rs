//! Which agent plays the three roles in a run.

/// The agent a run uses, recorded by name on the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum AgentKind {
    /// The datastream's own fixes, no LLM.
    Stock,
    /// The LLM for every rule.
    Llm,
    /// Stock first; the LLM where the stock fix fails, is missing or breaks something.
    Tiered,
}

impl AgentKind {
    pub const ALL: [AgentKind; 3] = [Self::Stock, Self::Llm, Self::Tiered];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stock => "stock",
            Self::Llm => "llm",
            Self::Tiered => "tiered",
        }
    }

    /// The kind a run recorded; `None` for a name this build does not know.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl std::fmt::Display for AgentKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in AgentKind::ALL {
            assert_eq!(AgentKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(AgentKind::parse("mock"), None);
    }
}
