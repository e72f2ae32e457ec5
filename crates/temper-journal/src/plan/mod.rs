//! The proven plan: a run's kept fixes in the order it kept them, with what the run saw of each
//! and where it came from. `temper plan export` writes one as a folder (`plan.json`, the steps'
//! scripts under `steps/`, `replay.sh`, `playbook.yml`, `README.md`); `temper run --plan` reads
//! its folder once ([`Folder`]) and the plan from those bytes ([`Plan::from_folder`]), refuses it when it does not fit the target ([`Plan::check`]), and
//! applies its steps as any fix is applied: checked, and kept or reverted.
mod build;
mod folder;
mod load;
pub mod terms;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use temper_scap::oval::Evidence;

use crate::turn::ApplyFix;
use crate::{FixSource, RunId};

pub use build::{BuildError, Records, build, kept, recorded_content_sha256, steps, title};
pub use folder::{Folder, FolderError};
pub use load::{PlanError, RunInputs};
pub use terms::{Applying, Terms, TermsError};

/// The version of `plan.json` this temper writes and reads (`schemas/plan.schema.json`).
pub const VERSION: u32 = 1;
/// The plan's own file in its folder.
pub const FILE: &str = "plan.json";
/// The folder, beside `plan.json`, that holds the steps' scripts.
pub const STEPS_DIR: &str = "steps";
/// The manifest's file in the plan's folder.
pub const MANIFEST: &str = "SHA256SUMS";
/// The signature over the manifest.
pub const SIGNATURE: &str = "SHA256SUMS.sig";
/// The SSHSIG namespace a plan is signed in (`ssh-keygen -Y sign -n`).
pub const NAMESPACE: &str = "temper-plan";
/// The other files `temper plan export` writes.
pub const REPLAY: &str = "replay.sh";
pub const PLAYBOOK: &str = "playbook.yml";
pub const README: &str = "README.md";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub version: u32,
    pub header: Header,
    /// In the order the run kept them.
    pub steps: Vec<PlanStep>,
}

/// Where the plan came from, and what it fits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub skill: String,
    /// The profile the run scanned (the tailored one, with a tailoring).
    pub profile: String,
    pub tailoring: Option<TailoringRef>,
    pub content: ContentRef,
    pub source: SourceRun,
    pub temper_version: String,
    /// The run's final state survived a cold reboot, and its final scan was taken after it.
    pub reboot_proven: bool,
    /// When the plan was exported (RFC 3339).
    pub exported_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TailoringRef {
    /// The path the run was given it as.
    pub path: String,
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContentRef {
    /// The datastream's file name.
    pub datastream: String,
    pub version: String,
    /// Of the datastream file.
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRun {
    /// The target's label (`domain@uri`).
    pub target: String,
    pub run: RunId,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// Fixes per regression check the run ended with: a run applying the plan takes it rather
    /// than measuring its own (a plan exported before temper recorded it has none).
    #[serde(default)]
    pub regression_every: Option<u32>,
}

/// How a run came to apply a plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanOrigin {
    /// `temper run --plan DIR` (and `temper fleet run --plan-from`).
    #[default]
    Given,
    /// By default: the plan of the target's last finished run of the same job, which passed its
    /// reboot proof (`--no-plan` turns this off).
    LastProven,
}

/// One kept fix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanStep {
    /// 1-based, in the order the run kept the fixes.
    pub n: usize,
    /// The full XCCDF rule id.
    pub rule: String,
    pub title: String,
    pub source: FixSource,
    /// The attempt's number on its rule in the source run.
    pub attempt: crate::AttemptNo,
    pub description: String,
    pub fix: Script,
    pub revert: Script,
    /// What the fix script exited with in the run (`None`: not recorded).
    pub exit_code: Option<i64>,
    /// The fix exited non-zero and the checks (rule, health, access, regression set) kept it
    /// anyway: a replay accepts that exit code.
    pub accepted_nonzero_exit: bool,
    /// The content marks the fix `reboot="true"`, or the run kept it for its reboot proof.
    pub needs_reboot: bool,
    /// Why its revert cannot undo it on a running system, where the skill says so: undoing it
    /// takes the revert and a reboot. `None` in plans exported before temper wrote it.
    #[serde(default)]
    pub one_way: Option<String>,
    /// Derived from the rule's check and the items the scanner found on the source target
    /// (`temper-derive`): `temper run --plan` derives it again on each target, from that
    /// target's own evidence, and never runs these scripts; `replay.sh` and the playbook run
    /// them as they are (a file step stops where a file is not as the source's scan found it).
    #[serde(default)]
    pub derived: bool,
    /// What the scanner found wrong with the rule before the fix, and after it (OVAL engine).
    pub evidence_before: Option<Evidence>,
    pub evidence_after: Option<Evidence>,
}

impl PlanStep {
    /// The exit codes a replay accepts: 0, and the one the run kept the fix with.
    pub fn accepted_exit_codes(&self) -> Vec<i64> {
        let mut codes = vec![0];
        if let Some(c) = self.exit_code.filter(|c| self.accepted_nonzero_exit && *c != 0) {
            codes.push(c);
        }
        codes
    }

    /// What the exports say of a one-way step: why no revert undoes it live, and what it takes.
    pub fn one_way_note(&self) -> Option<String> {
        self.one_way.as_ref().map(|why| format!("no revert undoes it on a running system ({why}); undoing it takes a reboot"))
    }

    /// The short rule id (`sshd_disable_root_login`).
    pub fn short_rule(&self) -> &str {
        temper_scap::short_rule_id(&self.rule)
    }

    /// Whether a target derives the step again: marked so, or a derived fix by its source (a
    /// plan exported before temper marked them).
    pub fn derives_again(&self) -> bool {
        self.derived || self.source == FixSource::Derived
    }

    /// What the exports say of a derived step.
    pub fn derived_note(&self) -> Option<&'static str> {
        self.derives_again().then_some(
            "derived from the rule's check and the items found on the source target: temper derives it again on each target \
             from that target's own evidence; run as it is, a file step stops with nothing changed where a file's owner, \
             group or mode is not as the source's scan found it",
        )
    }
}

/// The steps that take effect at boot, in order: the exports reboot, or say to, after them.
pub fn at_boot(steps: &[PlanStep]) -> impl Iterator<Item = &PlanStep> {
    steps.iter().filter(|s| s.needs_reboot)
}

/// A plan step as a run applies it (`temper run --plan`): offered before the Architect is asked,
/// in the plan's order, once per rule; a failing one leaves its rule to the normal loop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedFix {
    pub n: usize,
    pub rule: String,
    pub fix: ApplyFix,
    /// The exit codes the step is kept with (`PlanStep::accepted_exit_codes`); empty reads as 0 only.
    #[serde(default)]
    pub accepted_exits: Vec<i64>,
    /// It takes effect after a reboot: when its rule still fails live, it is kept for the run's
    /// reboot proof, as any such fix is.
    #[serde(default)]
    pub needs_reboot: bool,
    /// Derived on the source target (`PlanStep::derived`): the run derives its fix again from this
    /// target's own evidence, and `fix` (the source's) never runs.
    #[serde(default)]
    pub derived: bool,
}

impl PlannedFix {
    /// Whether the run kept this step with exit code `code`.
    pub fn accepts(&self, code: i64) -> bool {
        code == 0 || self.accepted_exits.contains(&code)
    }
}

impl Plan {
    /// Marks the steps whose fix no revert undoes on a running system: `one_way` gives the
    /// reason for a short rule id, as a skill's `one_way` says it (`Skill::one_way`).
    pub fn mark_one_way<'a>(&mut self, one_way: impl Fn(&str) -> Option<&'a str>) {
        for s in &mut self.steps {
            s.one_way = one_way(temper_scap::short_rule_id(&s.rule)).map(String::from);
        }
    }

    /// What `temper plan export` writes, as `find . -mindepth 1 -printf '%y %P\n'` lists it in
    /// the plan's folder (`d steps`, `f plan.json`, …), in byte order: the seal's two files
    /// (the signature where the plan is signed) and the plan's own. `replay.sh` and the playbook
    /// refuse a folder that holds anything else.
    pub fn listing(&self) -> Vec<String> {
        let mut l: Vec<String> = [FILE, REPLAY, PLAYBOOK, README, MANIFEST, SIGNATURE].iter().map(|f| format!("f {f}")).collect();
        l.push(format!("d {STEPS_DIR}"));
        for s in &self.steps {
            l.extend([&s.fix.file, &s.revert.file].map(|f| format!("f {f}")));
        }
        l.sort();
        l.dedup();
        l
    }

    /// The steps as the loop applies them.
    pub fn fixes(&self) -> Vec<PlannedFix> {
        self.steps
            .iter()
            .map(|s| PlannedFix {
                n: s.n,
                rule: s.rule.clone(),
                fix: ApplyFix { fix_script: s.fix.text.clone(), revert_script: s.revert.text.clone(), description: s.description.clone() },
                accepted_exits: s.accepted_exit_codes(),
                needs_reboot: s.needs_reboot,
                derived: s.derives_again(),
            })
            .collect()
    }
}

/// A step's script: its file under `steps/` and its sha256. The text is read from the file (and
/// checked against the sha256) when a plan is loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Script {
    /// Relative to the plan's folder: `steps/001-sshd_disable_root_login.fix.sh`.
    pub file: String,
    pub sha256: String,
    #[serde(skip)]
    pub text: String,
}

impl Script {
    /// `text` as the `kind` script of step `n` on `rule`.
    pub fn new(n: usize, rule: &str, kind: ScriptKind, text: &str) -> Self {
        let name: String = temper_scap::short_rule_id(rule)
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
            .collect();
        Self {
            file: format!("{STEPS_DIR}/{n:03}-{name}.{}.sh", kind.as_str()),
            sha256: sha256_hex(text.as_bytes()),
            text: text.to_string(),
        }
    }

    /// The file name without its folder.
    pub fn name(&self) -> &str {
        self.file.rsplit('/').next().unwrap_or(&self.file)
    }
}

/// A step's two scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptKind {
    Fix,
    Revert,
}

impl ScriptKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fix => "fix",
            Self::Revert => "revert",
        }
    }
}

/// The sha256 of `bytes`, in lower-case hex, as `sha256sum` prints it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The sha256 of a file, read in chunks (a datastream, an image).
pub fn sha256_file(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let (mut hash, mut buf) = (Sha256::new(), vec![0u8; 1 << 20]);
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
    }
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_names_and_sums() {
        let s = Script::new(7, "xccdf_org.ssgproject.content_rule_sshd_disable_root_login", ScriptKind::Fix, "echo hi\n");
        assert_eq!(s.file, "steps/007-sshd_disable_root_login.fix.sh");
        assert_eq!(s.name(), "007-sshd_disable_root_login.fix.sh");
        // `printf 'echo hi\n' | sha256sum`
        assert_eq!(s.sha256, "ab08508fdf5ca4da5c4995987bc41c56c048aaa5eeb046417ae4049b7d40286e");
        assert_eq!(Script::new(12, "a/../b c", ScriptKind::Revert, "").file, "steps/012-a____b_c.revert.sh");
    }
}
