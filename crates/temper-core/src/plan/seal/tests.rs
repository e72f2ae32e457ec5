//! The seal against the real `ssh-keygen`: each side verifies what the other signed, and every
//! change to a sealed plan is refused with its own error.
use std::path::Path;
use std::process::Command;

use super::*;

/// A plan-like folder, a key pair made by ssh-keygen, and an allowed-signers file naming it.
struct Fixture {
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

fn fixture() -> Fixture {
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
    let key = tmp.path().join("key");
    keygen(&key, "");
    let signers = allowed(tmp.path(), "ops@example.com", &key, "");
    Fixture { _tmp: tmp, dir, key, signers }
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
    let out = Command::new("ssh-keygen")
        .args(["-Y", "verify", "-n", NAMESPACE, "-I", "ops@example.com", "-f"])
        .arg(&f.signers)
        .arg("-s")
        .arg(f.dir.join(SIGNATURE))
        .stdin(std::fs::File::open(f.dir.join(MANIFEST)).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "ssh-keygen: {}", String::from_utf8_lossy(&out.stderr));
    // sha256sum reads the manifest as written.
    let sums = Command::new("sha256sum").args(["--check", "--strict", MANIFEST]).current_dir(&f.dir).output().unwrap();
    assert!(sums.status.success(), "{}", String::from_utf8_lossy(&sums.stdout));
    assert_eq!(verify(&f.dir, &f.signers).unwrap().principals, "ops@example.com");
}

#[test]
fn ssh_keygen_signs_and_temper_verifies() {
    let f = fixture();
    write_manifest(&f.dir).unwrap();
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-Y", "sign", "-n", NAMESPACE, "-f"])
        .arg(&f.key)
        .arg(f.dir.join(MANIFEST))
        .status()
        .unwrap();
    assert!(ok.success());
    let signer = verify(&f.dir, &f.signers).unwrap();
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
    assert_eq!(verify(&f.dir, &signers).unwrap().principals, "locked@x");
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
    write_manifest(&f.dir).unwrap();
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
    assert!(matches!(verify(&f.dir, &git_only), Err(SealError::Refused { why: Refusal::Namespace(_), line: 2, .. })));
    let expired = allowed(tmp, "old@x", &f.key, "valid-before=20200101Z ");
    assert!(matches!(verify(&f.dir, &expired), Err(SealError::Refused { why: Refusal::Expired(_), .. })));
}

#[test]
fn no_signature_is_refused() {
    let f = fixture();
    write_manifest(&f.dir).unwrap();
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
    assert!(matches!(verify(&f.dir, &f.signers), Err(SealError::NotAFile(n)) if n == "playbook.yml"));
}

#[test]
fn a_manifest_line_outside_the_folder_is_refused() {
    let f = fixture();
    let sums = format!("{}  ../../etc/passwd\n", "0".repeat(64));
    std::fs::write(f.dir.join(MANIFEST), &sums).unwrap();
    assert!(matches!(check_manifest(&f.dir, sums.as_bytes()), Err(SealError::ManifestLine { line: 1 })));
}
