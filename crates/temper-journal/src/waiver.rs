//! Waivers: accepted risks with an owner and an expiry, read from TOML (`[[waiver]]`). A skill
//! carries its own in `skills/<name>/waivers.toml`; a site adds more with `--waivers FILE`.
//! While a waiver is active its rule is not worked on; once expired it no longer applies and
//! the report flags it.
use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

/// `p` as a pattern that must match a whole rule id (skills and waivers match so).
pub fn full_match(p: &str) -> Result<regex::Regex, regex::Error> {
    regex::Regex::new(&format!("^(?:{p})$"))
}

#[derive(Debug, thiserror::Error)]
pub enum WaiverError {
    #[error("waivers {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("waivers {path}: {source}")]
    Parse { path: PathBuf, source: toml::de::Error },
    #[error("waivers {path}: waiver for `{rule}`: {problem}")]
    Invalid { path: PathBuf, rule: String, problem: String },
}

/// One waiver, as written and as stored with the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiver {
    /// Regex, full match against the short rule id (`sudo_remove_nopasswd`).
    pub rule: String,
    pub reason: String,
    pub approved_by: String,
    /// The last day it applies.
    #[serde(deserialize_with = "date")]
    pub expires: NaiveDate,
    /// The file it came from.
    #[serde(default)]
    pub source: String,
    /// Held for the harness account only: it ends at the handover (`temper image export`),
    /// where the rule's fix is applied as the skill's `[[held]]` entry says and the harness
    /// removes itself.
    #[serde(default)]
    pub harness: bool,
}

/// A waiver on a given day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaiverState {
    Active,
    Expired,
}

impl WaiverState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Expired => "expired",
        }
    }
}

impl Waiver {
    pub fn state(&self, today: NaiveDate) -> WaiverState {
        if today <= self.expires { WaiverState::Active } else { WaiverState::Expired }
    }

    /// The justification, as the rule's reason and the checklist's COMMENTS carry it.
    pub fn justification(&self) -> String {
        format!("waiver approved by {}, expires {}: {}", self.approved_by, self.expires, self.reason)
    }

    pub fn matches(&self, short_id: &str) -> bool {
        full_match(&self.rule).is_ok_and(|re| re.is_match(short_id))
    }
}

#[derive(Deserialize)]
struct WaiversFile {
    #[serde(default)]
    waiver: Vec<Waiver>,
}

/// Reads a waivers file; every waiver needs a pattern that compiles, a reason and an approver.
pub fn load(path: &Path) -> Result<Vec<Waiver>, WaiverError> {
    let text = std::fs::read_to_string(path).map_err(|source| WaiverError::Read { path: path.to_path_buf(), source })?;
    let file: WaiversFile = toml::from_str(&text).map_err(|source| WaiverError::Parse { path: path.to_path_buf(), source })?;
    let invalid = |w: &Waiver, problem: String| WaiverError::Invalid { path: path.to_path_buf(), rule: w.rule.clone(), problem };
    let mut out = Vec::with_capacity(file.waiver.len());
    for mut w in file.waiver {
        full_match(&w.rule).map_err(|e| invalid(&w, format!("pattern does not compile: {e}")))?;
        if w.reason.trim().is_empty() || w.approved_by.trim().is_empty() {
            return Err(invalid(&w, "`reason` and `approved_by` must not be empty".into()));
        }
        w.source = path.display().to_string();
        out.push(w);
    }
    Ok(out)
}

/// The active waiver for a rule, the first that matches.
pub fn active<'a>(waivers: &'a [Waiver], short_id: &str, today: NaiveDate) -> Option<&'a Waiver> {
    waivers.iter().find(|w| w.state(today) == WaiverState::Active && w.matches(short_id))
}

/// A TOML date (`expires = 2027-03-31`) or the same as a string.
fn date<'de, D: serde::Deserializer<'de>>(d: D) -> Result<NaiveDate, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Toml(toml::value::Datetime),
        Text(String),
    }
    let text = match Raw::deserialize(d)? {
        Raw::Toml(t) => t.to_string(),
        Raw::Text(s) => s,
    };
    NaiveDate::parse_from_str(&text, "%Y-%m-%d").map_err(|e| serde::de::Error::custom(format!("`{text}` is not a date (YYYY-MM-DD): {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("waivers.toml");
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    const TWO: &str = r#"
[[waiver]]
rule = "sudo_remove_nopasswd|sudo_require_authentication"
reason = "the harness needs NOPASSWD"
approved_by = "ISSO J. Doe"
expires = 2030-06-30

[[waiver]]
rule = "sshd_set_idle_timeout"
reason = "kiosk sessions"
approved_by = "CISO"
expires = "2020-01-31"
"#;

    #[test]
    fn active_until_the_last_day_then_expired() {
        let (_d, p) = file(TWO);
        let w = load(&p).unwrap();
        let day = |s| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        assert_eq!(w[0].state(day("2030-06-30")), WaiverState::Active);
        assert_eq!(w[0].state(day("2030-07-01")), WaiverState::Expired);
        assert!(active(&w, "sudo_require_authentication", day("2026-11-23")).is_some());
        assert!(active(&w, "sshd_set_idle_timeout", day("2026-11-23")).is_none(), "expired");
        assert!(active(&w, "sudo_remove_nopasswd_x", day("2026-11-23")).is_none(), "whole ids only");
        assert!(w[0].justification().contains("ISSO J. Doe") && w[0].source.ends_with("waivers.toml"));
    }

    #[test]
    fn a_waiver_without_approver_or_with_a_bad_date_is_refused() {
        let (_d, p) = file("[[waiver]]\nrule = \"x\"\nreason = \"r\"\napproved_by = \" \"\nexpires = 2030-01-01\n");
        assert!(load(&p).unwrap_err().to_string().contains("approved_by"));
        let (_d, p) = file("[[waiver]]\nrule = \"x\"\nreason = \"r\"\napproved_by = \"a\"\nexpires = \"next year\"\n");
        assert!(load(&p).unwrap_err().to_string().contains("next year"));
        let (_d, p) = file("[[waiver]]\nrule = \"x(\"\nreason = \"r\"\napproved_by = \"a\"\nexpires = 2030-01-01\n");
        assert!(load(&p).unwrap_err().to_string().contains("does not compile"));
    }
}
