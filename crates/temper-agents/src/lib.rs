//! temper-agents: the OpenAI-compatible client and the Architect, Worker and Reflector.
//!
//! - [`LlmAgent`]: the three roles over any `/v1/chat/completions` endpoint; prompts are read
//!   from `<skill>/prompts/*.md` at each turn.
//! - [`StockAgent`]: no LLM; the datastream's own fixes.
//! - [`TieredAgent`]: stock first, the LLM where the stock fix is missing or failed.
//! - [`derived`]: the tier between them both use: a fix derived from the rule's OVAL check.
//! - [`AgentKind`]: which of the three a run uses.
//! - [`probe`]: one Worker-shaped request, reported as [`ProbeReport`].
//!
//! Every turn is one fresh request with one tool; at most one call is executed (see [`turn`]).
pub mod client;
pub mod config;
pub mod derived;
mod kind;
pub mod llm;
pub mod probe;
pub mod prompt;
pub mod skill;
pub mod stock;
pub mod text;
pub mod tiered;
pub mod tool_call;
pub mod tools;
pub mod turn;
pub mod wire;

pub use client::{CallError, ClientError, LlmClient};
pub use config::{Budgets, LlmConfig};
pub use kind::AgentKind;
pub use llm::{LlmAgent, SetupError};
pub use probe::{ProbeReport, probe};
pub use skill::{PromptError, SkillPrompts};
pub use stock::StockAgent;
pub use tiered::TieredAgent;
