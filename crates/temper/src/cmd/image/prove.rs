//! The boot proof, for `temper image export` and `temper image prove`: the image boots in a
//! throwaway overlay as a transient domain, and its admin logs in with a one-time key and uses
//! sudo (temper-target's `prove`).
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use temper_target::{BootProof, DirectBoot, ProofJob};

/// What the proof needs to know of the image.
pub struct Subject<'a> {
    pub image: &'a Path,
    pub libvirt_uri: &'a str,
    pub direct_boot: Option<DirectBoot>,
    pub admin: String,
    /// The harness's user and private key, whose login must be refused.
    pub harness: Option<(String, PathBuf)>,
    /// A loopback port for its sshd; `None`: a free one.
    pub port: Option<u16>,
    /// How long the first boot may take to let the admin in: the run's boot timeout, and as long
    /// again for the host keys the first boot makes (RSA, under TCG: minutes on a loaded host).
    pub boot_within: Duration,
}

pub async fn prove(s: Subject<'_>) -> anyhow::Result<BootProof> {
    let port = match s.port {
        Some(p) => p,
        None => free_port()?,
    };
    let job = ProofJob {
        image: s.image.to_path_buf(),
        libvirt_uri: s.libvirt_uri.to_string(),
        name: format!("temper-proof-{}", std::process::id()),
        ssh_port: port,
        direct_boot: s.direct_boot,
        memory_mib: 1536,
        admin: s.admin,
        harness: s.harness,
        scratch: temper_journal::target::vm_dir().join("run"),
        boot_within: s.boot_within,
    };
    eprintln!("temper: boot proof: {} in a throwaway overlay, SSH on 127.0.0.1:{port}, as its admin `{}`", s.image.display(), job.admin);
    let proof = temper_target::prove(&job).await.context("the boot proof")?;
    eprintln!(
        "temper: boot proof: {} in {:.1} s to the admin's login; multi-user.target {}; system {}{}; admin sudo {}; harness login {}; sha256 unchanged",
        if proof.passed() { "passed" } else { "FAILED" },
        proof.boot_secs,
        if proof.multi_user { "active" } else { "NOT active" },
        proof.system_state,
        if proof.failed_units.is_empty() { String::new() } else { format!(" (failed: {})", proof.failed_units.join(", ")) },
        if proof.admin_sudo { "works" } else { "FAILS" },
        match proof.harness_refused {
            Some(true) => "refused",
            Some(false) => "ACCEPTED",
            None => "not tried",
        },
    );
    for (unit, said) in &proof.failed_said {
        let last = said.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("(nothing in its journal)");
        eprintln!("temper: boot proof: {unit} failed; its journal ends: {last}");
    }
    Ok(proof)
}

/// A loopback port nothing listens on now.
fn free_port() -> anyhow::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free loopback port")?;
    Ok(l.local_addr()?.port())
}
