//! A plan as every way temper applies it reads it: its folder read once ([`Folder`]), its seal
//! and terms checked on those bytes ([`seal::check`]), and the plan taken from the same bytes.
//! Nothing is read from the disk between the check and the plan.
use super::seal::{self, SealError, Sealed, Trust};
use temper_journal::plan::{Applying, Folder, Plan, PlanError};

/// A plan that passed its checks, and what its seal showed.
#[derive(Debug, Clone)]
pub struct Opened {
    pub plan: Plan,
    pub sealed: Sealed,
}

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Seal(#[from] SealError),
    #[error(transparent)]
    Plan(#[from] PlanError),
}

/// The plan in `folder`, once its seal holds as `trust` asks and its terms allow it `at`.
pub fn open(folder: &Folder, trust: &Trust, at: &Applying<'_>) -> Result<Opened, OpenError> {
    let sealed = seal::check(folder, trust, at)?;
    let plan = Plan::from_folder(folder)?;
    Ok(Opened { plan, sealed })
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::process::Command;

    use super::*;
    use temper_journal::plan::{
        ContentRef, FILE, Header, PLAYBOOK, PlanStep, README, REPLAY, Script, ScriptKind, SourceRun, Terms, VERSION,
    };
    use temper_journal::plan::{sha256_hex, terms::Applying as At};

    /// A signed plan of one step in `dir`, and the allowed-signers file for its key.
    fn signed(dir: &Path, fix: &str) -> std::path::PathBuf {
        let rule = "xccdf_org.ssgproject.content_rule_r";
        let step = PlanStep {
            n: 1,
            rule: rule.into(),
            title: "t".into(),
            source: temper_journal::FixSource::Stock,
            attempt: temper_journal::AttemptNo::FIRST,
            description: "d".into(),
            fix: Script::new(1, rule, ScriptKind::Fix, fix),
            revert: Script::new(1, rule, ScriptKind::Revert, ""),
            exit_code: Some(0),
            accepted_nonzero_exit: false,
            needs_reboot: false,
            one_way: None,
            derived: false,
            evidence_before: None,
            evidence_after: None,
        };
        let header = Header {
            skill: "s".into(),
            profile: "p".into(),
            tailoring: None,
            content: ContentRef { datastream: "ds.xml".into(), version: "1".into(), sha256: "a".repeat(64) },
            source: SourceRun {
                target: "t".into(),
                run: temper_journal::RunId::new(1).unwrap(),
                started_at: "x".into(),
                ended_at: None,
                regression_every: None,
            },
            temper_version: "0".into(),
            reboot_proven: true,
            exported_at: "x".into(),
        };
        let plan = Plan { version: VERSION, header, steps: vec![step.clone()] };
        std::fs::create_dir_all(dir.join("steps")).unwrap();
        std::fs::write(dir.join(&step.fix.file), fix).unwrap();
        std::fs::write(dir.join(&step.revert.file), "").unwrap();
        std::fs::write(dir.join(FILE), serde_json::to_string(&plan).unwrap()).unwrap();
        for f in [REPLAY, PLAYBOOK, README] {
            std::fs::write(dir.join(f), "").unwrap();
        }
        let key = dir.parent().unwrap().join("key");
        let made = Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-C", "ops@x", "-f"]).arg(&key).status();
        assert!(made.unwrap().success());
        let signers = dir.parent().unwrap().join("allowed");
        std::fs::write(&signers, format!("ops@x {}", std::fs::read_to_string(key.with_extension("pub")).unwrap())).unwrap();
        seal::write_manifest(dir, &Terms::default()).unwrap();
        seal::sign(dir, &key, None).unwrap();
        signers
    }

    /// Issue 76, item 2: the folder is read once; a swap after that read (a script, its sha256
    /// in plan.json and the manifest all changed) is never what the plan holds.
    #[test]
    fn the_plan_is_the_bytes_that_were_checked_whatever_the_disk_says_after() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("plan");
        let signers = signed(&dir, "echo signed\n");
        let folder = Folder::read(&dir).unwrap();
        let file = dir.join("steps/001-r.fix.sh");
        let swapped = "echo swapped\n";
        std::fs::write(&file, swapped).unwrap();
        let json = std::fs::read_to_string(dir.join(FILE)).unwrap().replace(&sha256_hex(b"echo signed\n"), &sha256_hex(swapped.as_bytes()));
        std::fs::write(dir.join(FILE), json).unwrap();
        seal::write_manifest(&dir, &Terms::default()).unwrap();
        let (trust, at) = (Trust::Signers(signers), At { now: chrono::Utc::now(), target: None, fleet: None });
        assert!(open(&Folder::read(&dir).unwrap(), &trust, &at).is_err(), "the swapped folder itself does not hold");
        let opened = open(&folder, &trust, &at).unwrap();
        assert_eq!(opened.plan.steps[0].fix.text, "echo signed\n");
        assert_eq!(opened.plan.fixes()[0].fix.fix_script, "echo signed\n");
    }
}
