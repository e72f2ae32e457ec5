//! What every handler shares: the journal, the page templates, the content folder.
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use temper_journal::{JournalError, ReadJournal, Rule, Run};

use crate::WebError;
use crate::pages::Pages;
use crate::server::WebConfig;
use temper_journal::RunId;

#[derive(Clone)]
pub struct AppState {
    pub journal: Arc<dyn ReadJournal>,
    pub pages: Arc<Pages>,
    pub content_dir: Arc<Path>,
    pub poll: Duration,
}

impl AppState {
    pub fn new(journal: Arc<dyn ReadJournal>, config: &WebConfig) -> Result<Self, WebError> {
        Ok(Self { journal, pages: Arc::new(Pages::new()?), content_dir: config.content_dir.as_path().into(), poll: config.poll })
    }

    /// Run `id`; unknown is a 404.
    pub async fn run(&self, id: RunId) -> Result<Run, WebError> {
        match self.journal.run(id).await {
            Err(JournalError::NotFound(_)) => Err(WebError::NoRun(id)),
            r => Ok(r?),
        }
    }

    /// Rule `rule_id` of run `run`; unknown is a 404.
    pub async fn rule(&self, run: RunId, rule_id: &str) -> Result<Rule, WebError> {
        self.journal.rule(run, rule_id).await?.ok_or_else(|| WebError::NoRule { run, rule: rule_id.to_string() })
    }

    /// The run's datastream on this host (an absolute path in the run stays as it is).
    pub fn datastream(&self, run: &Run) -> PathBuf {
        self.content_dir.join(&run.datastream)
    }
}
