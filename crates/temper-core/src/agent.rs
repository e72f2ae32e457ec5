//! The three roles as traits, and the typed values that cross them.
//! Every turn is one fresh request built from these contexts; nothing is carried between turns.
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use temper_journal::FixSource;
use temper_journal::turn::{ApplyFix, Decision, NewTip, TurnRecord};
use temper_scap::Severity;
use temper_scap::oval::Evidence;

/// A failing rule the Architect may pick (already filtered by the harness).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Candidate {
    pub rule_id: String,
    pub title: String,
    pub severity: Severity,
    pub stig_ids: Vec<String>,
    pub has_stock_fix: bool,
    /// Attempts made on this rule so far in this run.
    pub attempts: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PickContext {
    pub skill: String,
    pub profile: String,
    /// In the order the harness prefers (risk order, then severity).
    pub candidates: Vec<Candidate>,
    /// Lessons from semantic memory, most relevant first.
    pub lessons: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    pub rule_id: String,
    pub plan: String,
}

/// Everything the Worker sees for one attempt.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FixContext {
    pub rule_id: String,
    pub title: String,
    pub severity: Severity,
    pub description: String,
    pub rationale: String,
    pub plan: String,
    /// The datastream's own fix, resolved, when there is one.
    pub stock_fix: Option<String>,
    /// Distilled lines of earlier attempts on this rule (episodic memory).
    pub episodes: Vec<String>,
    /// Preferred approaches and lessons (semantic memory).
    pub lessons: Vec<String>,
    /// Regexes the harness will refuse; shown so the Worker can avoid them.
    pub bans: Vec<String>,
    pub attempt: temper_journal::AttemptNo,
    /// What the scanner found wrong with the rule just now: the OVAL objects, expected states
    /// and collected items (OVAL engine only).
    pub evidence: Option<Evidence>,
    /// This run's earlier tries on the rule, oldest first.
    #[serde(default)]
    pub tried: Vec<Tried>,
}

/// An earlier try on a rule: where its fix came from, how it ended, and its script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tried {
    pub source: FixSource,
    pub verdict: Option<temper_journal::Verdict>,
    pub reason: String,
    pub fix_script: String,
}

impl Tried {
    /// Whether a fix from `source` was tried.
    pub fn any(tried: &[Tried], source: FixSource) -> bool {
        tried.iter().any(|t| t.source == source)
    }

    /// Whether `script` was tried under any source: a plan step carries the stock or derived
    /// fix it was made from under the source `plan`, and failed it already.
    pub fn ran(tried: &[Tried], script: &str) -> bool {
        tried.iter().any(|t| t.fix_script == script)
    }
}

/// The derived tier as a function (`temper_agents::derived::again`): the first fix the rule's
/// check and `evidence` (this target's) call for that is not among `tried`, or why there is
/// none. A plan's derived step is derived again so on each target, never run as its source's.
pub type Derive = fn(evidence: Option<&Evidence>, tried: &[Tried]) -> Result<ApplyFix, String>;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReflectContext {
    pub rule_id: String,
    pub title: String,
    pub fix_script: String,
    pub verdict: String,
    /// Captured before the revert: fix output, rule result, health output, journal errors.
    pub diagnostics: String,
    pub episodes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reflection {
    pub lesson: String,
    /// A regex the harness will refuse from now on; validated by the agent layer.
    pub banned: Option<String>,
    pub preferred: String,
    /// At most 200 characters; kept in episodic memory.
    pub distilled: String,
    pub tips: Vec<NewTip>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReengageContext {
    pub rule_id: String,
    pub title: String,
    pub plan: String,
    pub episodes: Vec<String>,
    pub attempts: u32,
    pub plateau: bool,
    /// Where the fixes tried came from, oldest first.
    #[serde(default)]
    pub tried: Vec<FixSource>,
    /// The evidence before the last try (the guest is back in that state after its revert).
    #[serde(default)]
    pub evidence: Option<Evidence>,
    /// How the last try ended, and why ("the fix was stopped as stalled: …").
    #[serde(default)]
    pub last: Option<(temper_journal::Verdict, String)>,
}

/// A role's answer plus the record of the call(s) that produced it.
#[derive(Debug, Clone)]
pub struct Turn<T> {
    pub value: T,
    pub records: Vec<TurnRecord>,
}

impl<T> Turn<T> {
    pub fn bare(value: T) -> Self {
        Self { value, records: Vec::new() }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The endpoint kept failing after its retries: the run pauses, it does not fail.
    #[error("llm unavailable after {retries} retries: {reason}")]
    Unavailable { retries: u32, reason: String, records: Vec<TurnRecord> },
    /// The reply was unusable (no call, invalid JSON, length cut-off, empty script...).
    /// This counts as an attempt with its reason.
    #[error("rejected reply: {reason}")]
    Rejected { reason: String, records: Vec<TurnRecord> },
    /// This agent has nothing to offer for the rule (e.g. stock agent, no stock fix).
    #[error("no fix available: {0}")]
    NoFix(String),
}

impl AgentError {
    pub fn records(&self) -> &[TurnRecord] {
        match self {
            Self::Unavailable { records, .. } | Self::Rejected { records, .. } => records,
            Self::NoFix(_) => &[],
        }
    }
}

pub type AgentResult<T> = Result<Turn<T>, AgentError>;

#[async_trait]
pub trait Architect: Send + Sync {
    /// Picks one rule from `ctx.candidates`. An id outside that list is an error.
    async fn select(&self, ctx: &PickContext) -> AgentResult<Selection>;
    /// Re-engaged every few attempts or on a plateau.
    async fn reengage(&self, ctx: &ReengageContext) -> AgentResult<Decision>;
}

#[async_trait]
pub trait Worker: Send + Sync {
    /// Exactly one `apply_fix`.
    async fn propose(&self, ctx: &FixContext) -> AgentResult<(ApplyFix, FixSource)>;
}

#[async_trait]
pub trait Reflector: Send + Sync {
    async fn reflect(&self, ctx: &ReflectContext) -> AgentResult<Reflection>;
}
