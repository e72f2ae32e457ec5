//! Reading a plan back from its folder (read once: [`Folder`]), and the checks that refuse it
//! before anything runs.
use std::path::{Path, PathBuf};

use super::{FILE, Folder, FolderError, Plan, STEPS_DIR, Script, VERSION, sha256_hex};

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Folder(#[from] FolderError),
    #[error("{} has no {file}: it is not a temper plan, or it lost a file", dir.display())]
    Missing { dir: PathBuf, file: String },
    #[error("{} is not a temper plan: {source}", path.display())]
    Json { path: PathBuf, source: serde_json::Error },
    #[error("{} is plan version {found}; this temper reads version {supported}", path.display(), supported = VERSION)]
    Version { path: PathBuf, found: u32 },
    #[error("step {step} ({rule}): `{file}` is not a file under {STEPS_DIR}/ of the plan")]
    BadPath { step: usize, rule: String, file: String },
    #[error(
        "step {step} ({rule}): {file} does not match its sha256 in plan.json (expected {expected}, found {found}): the plan was changed after it was exported; nothing was run"
    )]
    Tampered { step: usize, rule: String, file: String, expected: String, found: String },
    #[error("step {step} is numbered {found}: a plan's steps are numbered 1, 2, 3... in order")]
    Order { step: usize, found: usize },
    #[error("the plan was made for the content `{plan}`, and this run uses `{here}`: nothing was run")]
    Content { plan: String, here: String },
    #[error("the plan was made for the profile `{plan}`, and this run uses `{here}`: nothing was run")]
    Profile { plan: String, here: String },
    #[error("the plan was made with the tailoring `{plan}`, and this run uses `{here}`: nothing was run")]
    Tailoring { plan: String, here: String },
    #[error("the plan was made with the tailoring {path} (sha256 {sha256}), and this run has none: nothing was run")]
    TailoringMissing { path: String, sha256: String },
    #[error("the plan was made without a tailoring file, and this run has one ({path}): nothing was run")]
    TailoringExtra { path: String },
}

/// What the target's run uses, for [`Plan::check`].
#[derive(Debug, Clone)]
pub struct RunInputs<'a> {
    pub profile: &'a str,
    /// The sha256 of the datastream file the run reads.
    pub content_sha256: &'a str,
    /// The run's tailoring file: its path and sha256.
    pub tailoring: Option<(&'a str, &'a str)>,
}

impl Plan {
    /// Reads `dir` once and the plan from it ([`Plan::from_folder`]).
    pub fn load(dir: &Path) -> Result<Plan, PlanError> {
        Plan::from_folder(&Folder::read(dir)?)
    }

    /// The plan in `folder`'s bytes: `plan.json` and every step's scripts, each checked
    /// against its sha256. Nothing is read from the disk.
    pub fn from_folder(folder: &Folder) -> Result<Plan, PlanError> {
        let path = folder.root().join(FILE);
        let missing = |file: &str| PlanError::Missing { dir: folder.root().to_path_buf(), file: file.to_string() };
        let text = folder.file(FILE).ok_or_else(|| missing(FILE))?;
        #[derive(serde::Deserialize)]
        struct Versioned {
            version: u32,
        }
        let v: Versioned = serde_json::from_slice(text).map_err(|source| PlanError::Json { path: path.clone(), source })?;
        if v.version != VERSION {
            return Err(PlanError::Version { path, found: v.version });
        }
        let mut plan: Plan = serde_json::from_slice(text).map_err(|source| PlanError::Json { path: path.clone(), source })?;
        for (i, step) in plan.steps.iter_mut().enumerate() {
            if step.n != i + 1 {
                return Err(PlanError::Order { step: i + 1, found: step.n });
            }
            for script in [&mut step.fix, &mut step.revert] {
                read_script(folder, step.n, &step.rule, script)?;
            }
        }
        Ok(plan)
    }

    /// Refuses a plan made for other content, another profile or another tailoring.
    pub fn check(&self, here: &RunInputs<'_>) -> Result<(), PlanError> {
        let h = &self.header;
        if h.content.sha256 != here.content_sha256 {
            let plan = format!("{} {} (sha256 {})", h.content.datastream, h.content.version, h.content.sha256);
            return Err(PlanError::Content { plan, here: format!("sha256 {}", here.content_sha256) });
        }
        if h.profile != here.profile {
            return Err(PlanError::Profile { plan: h.profile.clone(), here: here.profile.to_string() });
        }
        match (&h.tailoring, here.tailoring) {
            (None, None) => Ok(()),
            (Some(t), None) => Err(PlanError::TailoringMissing { path: t.path.clone(), sha256: t.sha256.clone() }),
            (None, Some((path, _))) => Err(PlanError::TailoringExtra { path: path.to_string() }),
            (Some(t), Some((path, sha))) if t.sha256 != sha => {
                Err(PlanError::Tailoring { plan: format!("{} (sha256 {})", t.path, t.sha256), here: format!("{path} (sha256 {sha})") })
            }
            _ => Ok(()),
        }
    }
}

/// Reads one script of step `n`, refusing a path outside `steps/` and a text that does not match.
fn read_script(folder: &Folder, n: usize, rule: &str, script: &mut Script) -> Result<(), PlanError> {
    let name = script.file.strip_prefix(&format!("{STEPS_DIR}/")).filter(|f| !f.is_empty() && !f.contains(['/', '\\']) && *f != "..");
    if name.is_none() {
        return Err(PlanError::BadPath { step: n, rule: rule.to_string(), file: script.file.clone() });
    }
    let bytes =
        folder.file(&script.file).ok_or_else(|| PlanError::Missing { dir: folder.root().to_path_buf(), file: script.file.clone() })?;
    let found = sha256_hex(bytes);
    if found != script.sha256 {
        let (file, expected) = (script.file.clone(), script.sha256.clone());
        return Err(PlanError::Tampered { step: n, rule: rule.to_string(), file, expected, found });
    }
    // The sha256 matched: the bytes are the ones exported, which were UTF-8.
    script.text = String::from_utf8_lossy(bytes).into_owned();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{ContentRef, Header, PlanStep, ScriptKind, SourceRun, TailoringRef};
    use crate::{FixSource, RunId};

    const SHA: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    fn plan(tailoring: Option<TailoringRef>) -> Plan {
        let rule = "xccdf_org.ssgproject.content_rule_sshd_disable_root_login";
        let step = PlanStep {
            n: 1,
            rule: rule.into(),
            title: "t".into(),
            source: FixSource::Stock,
            attempt: crate::AttemptNo::FIRST,
            description: "d".into(),
            fix: Script::new(1, rule, ScriptKind::Fix, "echo fix\n"),
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
            tailoring,
            content: ContentRef { datastream: "ds.xml".into(), version: "0.1.76".into(), sha256: SHA.into() },
            source: SourceRun {
                target: "t".into(),
                run: RunId::new(1).unwrap(),
                started_at: "x".into(),
                ended_at: None,
                regression_every: None,
            },
            temper_version: "0.1.0".into(),
            reboot_proven: true,
            exported_at: "x".into(),
        };
        Plan { version: VERSION, header, steps: vec![step] }
    }

    fn expect<'a>(profile: &'a str, sha: &'a str, tailoring: Option<(&'a str, &'a str)>) -> RunInputs<'a> {
        RunInputs { profile, content_sha256: sha, tailoring }
    }

    /// The skill's own parsing and whole-id matching: `temper_core::skill`'s tests.
    /// A derived step is marked so in `plan.json`, and is derived again on each target: so is a
    /// step a plan exported before the mark calls `derived`; a plan without the field reads as
    /// having no derived step.
    #[test]
    fn a_derived_step_is_marked_and_derived_again_on_each_target() {
        let mut p = plan(None);
        assert!(!p.fixes()[0].derived, "a stock step runs as it is");
        p.steps[0].source = FixSource::Derived;
        assert!(p.fixes()[0].derived && p.steps[0].derived_note().is_some());
        p.steps[0].source = FixSource::Plan;
        p.steps[0].derived = true;
        assert!(p.fixes()[0].derived, "a derived step of a plan run, exported again");
        let mut json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["steps"][0]["derived"], true);
        json["steps"][0].as_object_mut().unwrap().remove("derived");
        let old: Plan = serde_json::from_value(json).unwrap();
        assert!(!old.steps[0].derived);
    }

    #[test]
    fn mark_one_way_takes_the_reason_given_and_survives_the_json() {
        let mut p = plan(None);
        let re = crate::waiver::full_match("sshd_disable_.*").unwrap();
        p.mark_one_way(|id| re.is_match(id).then_some("held until the next boot"));
        assert_eq!(p.steps[0].one_way.as_deref(), Some("held until the next boot"));
        let back: Plan = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back.steps[0].one_way, p.steps[0].one_way);
        let re = crate::waiver::full_match("sshd_disable").unwrap();
        p.mark_one_way(|id| re.is_match(id).then_some("held until the next boot"));
        assert_eq!(p.steps[0].one_way, None, "a pattern matches the whole short id");
    }

    #[test]
    fn check_refuses_other_content_profile_and_tailoring() {
        let p = plan(None);
        assert!(p.check(&expect("p", SHA, None)).is_ok());
        let e = p.check(&expect("p", &SHA.replace('a', "b"), None)).unwrap_err();
        assert!(matches!(e, PlanError::Content { .. }) && e.to_string().contains("ds.xml 0.1.76"), "{e}");
        let e = p.check(&expect("q", SHA, None)).unwrap_err();
        assert_eq!(e.to_string(), "the plan was made for the profile `p`, and this run uses `q`: nothing was run");
        assert!(matches!(p.check(&expect("p", SHA, Some(("t.xml", SHA)))), Err(PlanError::TailoringExtra { .. })));
        let t = plan(Some(TailoringRef { path: "t.xml".into(), sha256: SHA.into() }));
        assert!(t.check(&expect("p", SHA, Some(("other.xml", SHA)))).is_ok(), "the same tailoring under another name");
        assert!(matches!(t.check(&expect("p", SHA, None)), Err(PlanError::TailoringMissing { .. })));
        let e = t.check(&expect("p", SHA, Some(("t.xml", "cc")))).unwrap_err();
        assert!(matches!(e, PlanError::Tailoring { .. }), "{e}");
    }

    /// Writes `p` as an export does: plan.json and the scripts.
    fn write(dir: &Path, p: &Plan) {
        std::fs::create_dir_all(dir.join(STEPS_DIR)).unwrap();
        for s in &p.steps {
            std::fs::write(dir.join(&s.fix.file), &s.fix.text).unwrap();
            std::fs::write(dir.join(&s.revert.file), &s.revert.text).unwrap();
        }
        std::fs::write(dir.join(FILE), serde_json::to_string(p).unwrap()).unwrap();
    }

    #[test]
    fn load_reads_back_and_refuses_changed_scripts_paths_and_versions() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan(None);
        write(dir.path(), &p);
        assert_eq!(Plan::load(dir.path()).unwrap(), p);
        std::fs::write(dir.path().join(&p.steps[0].revert.file), "rm -rf /tmp/x\n").unwrap();
        let e = Plan::load(dir.path()).unwrap_err();
        assert!(matches!(&e, PlanError::Tampered { step: 1, file, .. } if file.ends_with(".revert.sh")), "{e}");

        let mut q = p.clone();
        q.steps[0].fix.file = "steps/../../etc/passwd".into();
        write(dir.path(), &p);
        std::fs::write(dir.path().join(FILE), serde_json::to_string(&q).unwrap()).unwrap();
        assert!(matches!(Plan::load(dir.path()), Err(PlanError::BadPath { step: 1, .. })));
        q = p.clone();
        q.version = 2;
        std::fs::write(dir.path().join(FILE), serde_json::to_string(&q).unwrap()).unwrap();
        assert!(matches!(Plan::load(dir.path()), Err(PlanError::Version { found: 2, .. })));
        q = p.clone();
        q.steps[0].n = 3;
        std::fs::write(dir.path().join(FILE), serde_json::to_string(&q).unwrap()).unwrap();
        assert!(matches!(Plan::load(dir.path()), Err(PlanError::Order { step: 1, found: 3 })));
    }
}
