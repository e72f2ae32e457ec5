//! The shipped skills load, and their rules name rules that exist in the real content.
use temper_core::skill::Skill;

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn shipped_skills_load_and_enforce_their_constraints() {
    let rhel = Skill::load(root().join("skills/stig-rhel9")).unwrap();
    assert_eq!(rhel.manifest.datastream, "ssg-rhel9-ds.xml");
    assert!(rhel.disposition("partition_for_var_log_audit").is_some());
    assert!(rhel.disposition("enable_fips_mode").is_some());
    assert!(rhel.disposition("grub2_password").is_some());
    assert!(rhel.disposition("sshd_disable_root_login").is_none());
    assert!(rhel.held_back("audit_rules_immutable", &["audit_rules_immutable", "sshd_set_idle_timeout"]).is_some());
    let deb = Skill::load(root().join("skills/debian12-anssi")).unwrap();
    // The harness's own sudo rules are waived by the skill's waivers.toml, with an owner and an expiry.
    for s in [&rhel, &deb] {
        let w = s.disposition("sudo_remove_nopasswd").expect("sudo_remove_nopasswd is waived");
        assert_eq!(w.disposition, temper_core::skill::Disposition::Waived);
        assert!(w.reason.contains("approved by") && w.reason.contains("expires"), "{}", w.reason);
    }
    assert!(deb.disposition("sudo_add_noexec").is_some() && deb.waivers().len() == 4);
    assert!(deb.manifest.profiles.iter().any(|p| p.ends_with("_standard")));
    for s in [&rhel, &deb] {
        for p in ["architect.md", "worker.md", "reflector.md", "reengage.md"] {
            assert!(s.prompts_dir().join(p).is_file(), "{} lacks prompts/{p}", s.name());
        }
    }
}
