//! The LLM-backed roles: one struct, `LlmAgent`, implementing Architect, Worker and Reflector.
use std::path::Path;
use std::sync::Arc;
use temper_journal::TurnRole;
use temper_journal::turn::TurnRecord;

use temper_core::agent::AgentError;

use crate::client::{ClientError, LlmClient};
use crate::config::LlmConfig;
use crate::skill::{PromptError, PromptFile, SkillPrompts};

mod architect;
mod reflector;
mod worker;

pub use reflector::{MAX_DISTILLED_CHARS, validate_reflection};
pub use worker::{propose_with, validate_fix};

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Prompts(#[from] PromptError),
}

#[derive(Clone)]
pub struct LlmAgent {
    client: Arc<LlmClient>,
    prompts: SkillPrompts,
}

impl LlmAgent {
    /// `skill_dir` holds `prompts/{architect,worker,reflector,reengage}.md`.
    pub fn new(config: LlmConfig, skill_dir: impl AsRef<Path>) -> Result<Self, SetupError> {
        Ok(Self { client: Arc::new(LlmClient::new(config)?), prompts: SkillPrompts::new(skill_dir)? })
    }

    /// Shares one client between agents.
    pub fn with_client(client: Arc<LlmClient>, skill_dir: impl AsRef<Path>) -> Result<Self, SetupError> {
        Ok(Self { client, prompts: SkillPrompts::new(skill_dir)? })
    }

    pub fn client(&self) -> &LlmClient {
        &self.client
    }

    /// The prompt file's text, or `Unavailable` (a missing prompt pauses the run).
    fn system(&self, file: PromptFile, role: TurnRole) -> Result<String, AgentError> {
        self.prompts.read(file).map_err(|e| AgentError::Unavailable {
            retries: 0,
            reason: e.to_string(),
            records: vec![TurnRecord { error: Some(e.to_string()), ..TurnRecord::new(role, self.client.config().model.clone()) }],
        })
    }
}
