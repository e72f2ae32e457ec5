//! Role prompts, read from `<skill>/prompts/<role>.md` at run time (each turn re-reads its file,
//! so a prompt can be edited between turns without a rebuild).
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptFile {
    Architect,
    Worker,
    Reflector,
    Reengage,
}

impl PromptFile {
    pub const ALL: [Self; 4] = [Self::Architect, Self::Worker, Self::Reflector, Self::Reengage];

    pub fn file_name(self) -> &'static str {
        match self {
            Self::Architect => "architect.md",
            Self::Worker => "worker.md",
            Self::Reflector => "reflector.md",
            Self::Reengage => "reengage.md",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("cannot read prompt {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("prompt {path} is empty")]
    Empty { path: String },
}

#[derive(Debug, Clone)]
pub struct SkillPrompts {
    dir: PathBuf,
}

impl SkillPrompts {
    /// `skill_dir` is the skill's root (e.g. `skills/stig-rhel9`); all four prompt files must
    /// be readable and non-empty now, and are read again at each turn.
    pub fn new(skill_dir: impl AsRef<Path>) -> Result<Self, PromptError> {
        let me = Self { dir: skill_dir.as_ref().join("prompts") };
        for f in PromptFile::ALL {
            me.read(f)?;
        }
        Ok(me)
    }

    pub fn read(&self, file: PromptFile) -> Result<String, PromptError> {
        let path = self.dir.join(file.file_name());
        let text = std::fs::read_to_string(&path).map_err(|e| PromptError::Read { path: path.display().to_string(), source: e })?;
        if text.trim().is_empty() {
            return Err(PromptError::Empty { path: path.display().to_string() });
        }
        Ok(text.trim().to_owned())
    }
}
