//! The proven plan. Its model (`Plan`, its steps, loading and checking a folder) is
//! `temper_journal::plan`, which the reports read too; here is what only the loop and the CLI
//! do with it: sign it and check its signature (`seal`, `signers`).
pub mod seal;
pub mod signers;

pub use temper_journal::plan::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::Skill;
    use temper_journal::FixSource;

    fn plan() -> Plan {
        let rule = "xccdf_org.ssgproject.content_rule_sshd_disable_root_login";
        let step = Step {
            n: 1,
            rule: rule.into(),
            title: "t".into(),
            source: FixSource::Stock,
            attempt: 1,
            description: "d".into(),
            fix: Script::new(1, rule, ScriptKind::Fix, "echo fix\n"),
            revert: Script::new(1, rule, ScriptKind::Revert, ""),
            exit_code: Some(0),
            accepted_nonzero_exit: false,
            needs_reboot: false,
            one_way: None,
            evidence_before: None,
            evidence_after: None,
        };
        let header = Header {
            skill: "s".into(),
            profile: "p".into(),
            tailoring: None,
            content: ContentRef { datastream: "ds.xml".into(), version: "0.1.76".into(), sha256: "a".repeat(64) },
            source: SourceRun { target: "t".into(), run: 1, started_at: "x".into(), ended_at: None, regression_every: None },
            temper_version: "0.1.0".into(),
            reboot_proven: true,
            exported_at: "x".into(),
        };
        Plan { version: VERSION, header, steps: vec![step] }
    }

    #[test]
    fn mark_one_way_takes_the_skills_reason_and_survives_the_json() {
        let dir = tempfile::tempdir().unwrap();
        let toml = "name = \"s\"\ndescription = \"d\"\ndatastream = \"ds.xml\"\nprofile = \"p\"\n\
                    [[one_way]]\nrule = \"sshd_disable_.*\"\nreason = \"held until the next boot\"\n";
        std::fs::write(dir.path().join("skill.toml"), toml).unwrap();
        let mut p = plan();
        let skill = Skill::load(dir.path()).unwrap();
        p.mark_one_way(|id| skill.one_way(id));
        assert_eq!(p.steps[0].one_way.as_deref(), Some("held until the next boot"));
        let back: Plan = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back.steps[0].one_way, p.steps[0].one_way);
        std::fs::write(dir.path().join("skill.toml"), toml.replace("sshd_disable_.*", "sshd_disable")).unwrap();
        let skill = Skill::load(dir.path()).unwrap();
        p.mark_one_way(|id| skill.one_way(id));
        assert_eq!(p.steps[0].one_way, None, "a pattern matches the whole short id");
    }
}
