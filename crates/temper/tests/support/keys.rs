//! A plan's signing key: an ed25519 pair made by the real `ssh-keygen`, and an allowed-signers
//! file naming it. Shared by the e2e tests (`support`) and `loop_plan` (`#[path]`).
use std::path::{Path, PathBuf};
use std::process::Command;

/// A key pair for `principal` under `dir`, and an allowed-signers file naming it: their paths.
pub fn signing_key(dir: &Path, principal: &str) -> (PathBuf, PathBuf) {
    let key = dir.join(format!("key-{principal}"));
    let made = Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-C", principal, "-f"]).arg(&key).status();
    assert!(made.unwrap().success(), "ssh-keygen");
    let public = std::fs::read_to_string(format!("{}.pub", key.display())).unwrap();
    let signers = dir.join(format!("allowed-{principal}"));
    std::fs::write(&signers, format!("{principal} {public}")).unwrap();
    (key, signers)
}
