//! The seal against the real `ssh-keygen`: each side verifies what the other signed, the terms
//! included, and every change to a sealed plan is refused with its own error.
use std::path::Path;
use std::process::Command;

use chrono::{Duration, Utc};

use super::*;

/// `dir` read once and checked against `signers`, now, for no target in particular.
fn verify(dir: &Path, signers: &Path) -> Result<Sealed, SealError> {
    check_at(dir, signers, Applying { now: Utc::now(), target: None, fleet: None })
}

fn check_at(dir: &Path, signers: &Path, at: Applying<'_>) -> Result<Sealed, SealError> {
    check(&Folder::read(dir)?, &Trust::Signers(signers.to_path_buf()), &at)
}

/// What ssh-keygen says of `dir`'s signature with `signers`: ok, and its words.
fn keygen_verifies(dir: &Path, signers: &Path) -> (bool, String) {
    let out = Command::new("ssh-keygen")
        .args(["-Y", "verify", "-n", NAMESPACE, "-I", "ops@example.com", "-f"])
        .arg(signers)
        .arg("-s")
        .arg(dir.join(SIGNATURE))
        .stdin(std::fs::File::open(dir.join(MANIFEST)).unwrap())
        .output()
        .unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// A plan-like folder, a key pair made by ssh-keygen, and an allowed-signers file naming it.
struct SealFixture {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    key: PathBuf,
    signers: PathBuf,
}

fn keygen(path: &Path, passphrase: &str) {
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-C", "ops@example.com", "-N", passphrase, "-f"])
        .arg(path)
        .status()
        .unwrap();
    assert!(ok.success());
}

fn fixture() -> SealFixture {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("plan");
    std::fs::create_dir_all(dir.join("steps")).unwrap();
    let fix = "chmod 0600 /etc/ssh/sshd_config\n";
    std::fs::write(dir.join("steps/001-r.fix.sh"), fix).unwrap();
    std::fs::write(dir.join("steps/001-r.revert.sh"), "").unwrap();
    let plan = format!("{{\"header\":{{\"profile\":\"p\"}},\"fix\":\"{}\"}}\n", sha256_hex(fix.as_bytes()));
    std::fs::write(dir.join("plan.json"), plan).unwrap();
    std::fs::write(dir.join("replay.sh"), "#!/usr/bin/env bash\n").unwrap();
    std::fs::write(dir.join("playbook.yml"), "---\n").unwrap();
    write_manifest(&dir, &Terms::default()).unwrap();
    let key = tmp.path().join("key");
    keygen(&key, "");
    let signers = allowed(tmp.path(), "ops@example.com", &key, "");
    SealFixture { _tmp: tmp, dir, key, signers }
}

/// An allowed-signers file with one line for `key`'s public half.
fn allowed(dir: &Path, principal: &str, key: &Path, options: &str) -> PathBuf {
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let path = dir.join(format!("allowed-{principal}"));
    std::fs::write(&path, format!("# the team\n{principal} {options}{public}")).unwrap();
    path
}

#[test]
fn temper_signs_and_ssh_keygen_verifies() {
    let f = fixture();
    let signer = sign(&f.dir, &f.key, None).unwrap();
    assert!(signer.fingerprint.starts_with("SHA256:"), "{signer:?}");
    let (ok, said) = keygen_verifies(&f.dir, &f.signers);
    assert!(ok, "ssh-keygen: {said}");
    // sha256sum reads the manifest as written.
    let sums = Command::new("sha256sum").args(["--check", "--strict", MANIFEST]).current_dir(&f.dir).output().unwrap();
    assert!(sums.status.success(), "{}", String::from_utf8_lossy(&sums.stdout));
    assert_eq!(verify(&f.dir, &f.signers).unwrap().signer.unwrap().principals, "ops@example.com");
}

#[test]
fn ssh_keygen_signs_and_temper_verifies() {
    let f = fixture();
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-Y", "sign", "-n", NAMESPACE, "-f"])
        .arg(&f.key)
        .arg(f.dir.join(MANIFEST))
        .status()
        .unwrap();
    assert!(ok.success());
    let signer = verify(&f.dir, &f.signers).unwrap().signer.unwrap();
    assert_eq!(signer.principals, "ops@example.com");
}

#[test]
fn an_encrypted_key_needs_its_passphrase() {
    let f = fixture();
    let key = f.dir.parent().unwrap().join("locked");
    keygen(&key, "correct horse");
    assert!(matches!(sign(&f.dir, &key, None), Err(SealError::Key { .. })));
    assert!(matches!(sign(&f.dir, &key, Some("wrong")), Err(SealError::Key { .. })));
    sign(&f.dir, &key, Some("correct horse")).unwrap();
    let signers = allowed(f.dir.parent().unwrap(), "locked@x", &key, "");
    assert_eq!(verify(&f.dir, &signers).unwrap().signer.unwrap().principals, "locked@x");
}

#[test]
fn a_changed_script_with_its_hash_updated_is_refused() {
    let f = fixture();
    sign(&f.dir, &f.key, None).unwrap();
    let evil = "chmod 0777 /etc/shadow\n";
    std::fs::write(f.dir.join("steps/001-r.fix.sh"), evil).unwrap();
    let plan = std::fs::read_to_string(f.dir.join("plan.json")).unwrap();
    let plan = plan.replace(&sha256_hex(b"chmod 0600 /etc/ssh/sshd_config\n"), &sha256_hex(evil.as_bytes()));
    std::fs::write(f.dir.join("plan.json"), plan).unwrap();
    let e = verify(&f.dir, &f.signers).unwrap_err();
    assert!(matches!(&e, SealError::Changed { file } if file == "plan.json"), "{e}");
    // And with the manifest rewritten to match: the signature no longer does.
    write_manifest(&f.dir, &Terms::default()).unwrap();
    assert!(matches!(verify(&f.dir, &f.signers), Err(SealError::BadSignature)));
}

#[test]
fn a_changed_header_is_refused() {
    let f = fixture();
    sign(&f.dir, &f.key, None).unwrap();
    let plan = std::fs::read_to_string(f.dir.join("plan.json")).unwrap().replace("\"p\"", "\"q\"");
    std::fs::write(f.dir.join("plan.json"), plan).unwrap();
    let e = verify(&f.dir, &f.signers).unwrap_err();
    assert_eq!(
        e.to_string(),
        "plan.json does not match its sha256 in SHA256SUMS: the plan was changed after it was signed; nothing was run"
    );
}

#[test]
fn an_unknown_key_is_refused() {
    let f = fixture();
    let other = f.dir.parent().unwrap().join("other");
    keygen(&other, "");
    sign(&f.dir, &other, None).unwrap();
    let e = verify(&f.dir, &f.signers).unwrap_err();
    assert!(matches!(&e, SealError::UnknownKey(fp) if fp.starts_with("SHA256:")), "{e}");
}

#[test]
fn a_key_not_allowed_for_plans_or_expired_is_refused() {
    let f = fixture();
    sign(&f.dir, &f.key, None).unwrap();
    let tmp = f.dir.parent().unwrap();
    let git_only = allowed(tmp, "git@x", &f.key, "namespaces=\"git\" ");
    assert!(matches!(verify(&f.dir, &git_only), Err(SealError::Refused { why: SignerRefusal::Namespace(_), line: 2, .. })));
    let expired = allowed(tmp, "old@x", &f.key, "valid-before=20200101Z ");
    assert!(matches!(verify(&f.dir, &expired), Err(SealError::Refused { why: SignerRefusal::Expired(_), .. })));
}

#[test]
fn no_signature_is_refused() {
    let f = fixture();
    assert!(matches!(verify(&f.dir, &f.signers), Err(SealError::NotSigned)));
}

#[test]
fn an_added_a_removed_or_a_linked_file_is_refused() {
    let f = fixture();
    sign(&f.dir, &f.key, None).unwrap();
    std::fs::write(f.dir.join("steps/002-x.fix.sh"), "rm -rf /\n").unwrap();
    assert!(matches!(verify(&f.dir, &f.signers), Err(SealError::Unlisted { file }) if file == "steps/002-x.fix.sh"));
    std::fs::remove_file(f.dir.join("steps/002-x.fix.sh")).unwrap();
    std::fs::remove_file(f.dir.join("playbook.yml")).unwrap();
    assert!(matches!(verify(&f.dir, &f.signers), Err(SealError::Missing { file }) if file == "playbook.yml"));
    std::os::unix::fs::symlink("/etc/shadow", f.dir.join("playbook.yml")).unwrap();
    let e = verify(&f.dir, &f.signers).unwrap_err();
    assert!(matches!(&e, SealError::Folder(FolderError::NotAFile(n)) if n == "playbook.yml"), "{e}");
    std::fs::remove_file(f.dir.join("playbook.yml")).unwrap();
    std::fs::write(f.dir.join("playbook.yml"), "---\n").unwrap();
    assert!(verify(&f.dir, &f.signers).is_ok());
    // What Ansible reads beside a playbook, or a verify.sh of someone else's: each a file the
    // manifest does not list. A folder with nothing in it is one too.
    for extra in ["group_vars/all.yml", "ansible.cfg", "verify.sh", "filter_plugins/x.py"] {
        let p = f.dir.join(extra);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "temper_unsigned: true\n").unwrap();
        let e = verify(&f.dir, &f.signers).unwrap_err();
        assert!(matches!(&e, SealError::Unlisted { file } if file == extra), "{extra}: {e}");
        std::fs::remove_file(&p).unwrap();
    }
    let e = verify(&f.dir, &f.signers).unwrap_err();
    assert_eq!(
        e.to_string(),
        "filter_plugins/ is in the plan and not in SHA256SUMS: a file was added after it was signed; nothing was run"
    );
}

#[test]
fn unsigned_still_refuses_what_the_manifest_does_not_list() {
    let f = fixture();
    let unsigned = |dir: &Path| check(&Folder::read(dir)?, &Trust::Unsigned, &Applying { now: Utc::now(), target: None, fleet: None });
    assert_eq!(unsigned(&f.dir).unwrap().signer, None);
    // A script changed with its hash in plan.json (`--unsigned` checks that one, as the plan is read).
    std::fs::write(f.dir.join("steps/001-r.fix.sh"), "echo other\n").unwrap();
    assert!(unsigned(&f.dir).is_ok());
    std::fs::create_dir_all(f.dir.join("group_vars")).unwrap();
    std::fs::write(f.dir.join("group_vars/all.yml"), "temper_unsigned: true\n").unwrap();
    assert!(matches!(unsigned(&f.dir), Err(SealError::Unlisted { file }) if file == "group_vars/all.yml"));
}

#[test]
fn a_manifest_line_outside_the_folder_is_refused() {
    let f = fixture();
    let sums = format!("{}  ../../etc/passwd\n", "0".repeat(64));
    std::fs::write(f.dir.join(MANIFEST), &sums).unwrap();
    let folder = Folder::read(&f.dir).unwrap();
    assert!(matches!(check_manifest(&folder, sums.as_bytes(), Hashes::Checked), Err(SealError::ManifestLine { line: 1 })));
    let sums = "# a comment of someone else's\n";
    assert!(matches!(check_manifest(&folder, sums.as_bytes(), Hashes::Checked), Err(SealError::ManifestLine { line: 1 })));
}

/// The expiry and the targets are lines of the manifest: ssh-keygen signs and verifies them
/// with the rest, temper verifies ssh-keygen's signature and honours them, and a changed term
/// breaks the signature.
#[test]
fn terms_are_signed_with_the_manifest_both_ways() {
    let f = fixture();
    let expires = Utc::now() + Duration::days(30);
    let terms = Terms { expires: Some(expires), targets: vec!["web1".into(), "web2".into()], fleet: None };
    let sums = write_manifest(&f.dir, &terms).unwrap();
    assert!(String::from_utf8_lossy(&sums).starts_with("# temper-plan expires "), "the terms open the manifest");
    let at = |now, target| Applying { now, target: Some(target), fleet: None };
    for signer in ["temper", "ssh-keygen"] {
        let _ = std::fs::remove_file(f.dir.join(SIGNATURE));
        if signer == "temper" {
            sign(&f.dir, &f.key, None).unwrap();
        } else {
            let ok =
                Command::new("ssh-keygen").args(["-q", "-Y", "sign", "-n", NAMESPACE, "-f"]).arg(&f.key).arg(f.dir.join(MANIFEST)).status();
            assert!(ok.unwrap().success());
        }
        let (ok, said) = keygen_verifies(&f.dir, &f.signers);
        assert!(ok, "{signer}'s signature, ssh-keygen: {said}");
        let sums = Command::new("sha256sum").args(["--check", "--strict", MANIFEST]).current_dir(&f.dir).output().unwrap();
        assert!(sums.status.success(), "sha256sum skips the terms: {sums:?}");
        let sealed = check_at(&f.dir, &f.signers, at(Utc::now(), "web2")).unwrap();
        assert_eq!(sealed.terms.targets, ["web1", "web2"], "{signer}");
        let e = check_at(&f.dir, &f.signers, at(Utc::now(), "db1")).unwrap_err();
        assert_eq!(e.to_string(), "the plan is for the targets web1, web2, not `db1`: nothing was run", "{signer}");
        let e = check_at(&f.dir, &f.signers, at(expires + Duration::seconds(1), "web1")).unwrap_err();
        assert!(matches!(e, SealError::Terms(TermsError::Expired(_))), "{signer}: {e}");
    }
    // A term changed after the signature: the signature no longer holds.
    let text = std::fs::read_to_string(f.dir.join(MANIFEST)).unwrap();
    std::fs::write(f.dir.join(MANIFEST), text.replace("for web1,web2", "for web1,web2,db1")).unwrap();
    assert!(matches!(verify(&f.dir, &f.signers), Err(SealError::BadSignature)));
    assert!(!keygen_verifies(&f.dir, &f.signers).0, "ssh-keygen agrees");
}

/// A signer revokes a plan by its manifest's sha256, in a list that the allowed signers name.
#[test]
fn a_revoked_plan_is_refused() {
    let f = fixture();
    sign(&f.dir, &f.key, None).unwrap();
    let sha = verify(&f.dir, &f.signers).unwrap().manifest_sha256.unwrap();
    let out = Command::new("sha256sum").arg(f.dir.join(MANIFEST)).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(&sha), "the sha256 sha256sum prints");
    let tmp = f.dir.parent().unwrap();
    let signers = std::fs::read_to_string(&f.signers).unwrap();
    std::fs::write(&f.signers, format!("# temper-revoked-plans revoked.txt\n{signers}")).unwrap();
    std::fs::write(tmp.join("revoked.txt"), "# plans withdrawn\n").unwrap();
    assert!(verify(&f.dir, &f.signers).is_ok(), "a list that does not name it");
    assert!(keygen_verifies(&f.dir, &f.signers).0, "ssh-keygen reads the pointer as a comment");
    std::fs::write(tmp.join("revoked.txt"), format!("# plans withdrawn\n{sha}  run 12's, leaked\n")).unwrap();
    let e = verify(&f.dir, &f.signers).unwrap_err();
    assert!(matches!(&e, SealError::Revoked { line: 2, .. }), "{e}");
    assert!(e.to_string().contains(&format!("(its SHA256SUMS has sha256 {sha}) is revoked")), "{e}");
    std::fs::write(tmp.join("revoked.txt"), "not a sha\n").unwrap();
    assert!(matches!(verify(&f.dir, &f.signers), Err(SealError::RevocationList { .. })), "an unreadable list refuses");
    std::fs::remove_file(tmp.join("revoked.txt")).unwrap();
    assert!(matches!(verify(&f.dir, &f.signers), Err(SealError::RevocationList { .. })), "a missing list refuses");
}
