//! The boot proof of a handed-over image, without the harness: the image boots as a transient
//! domain over a throwaway qcow2 overlay (the image itself is never written: its sha256 is the
//! same before and after), reaches multi-user.target, and an admin of the image logs in and runs
//! sudo with a password. The way in is a one-time key and password put into the overlay alone
//! (virt-customize on the overlay); the harness's own key is refused.
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;
use temper_core::ports::{Exec, Guest, PortError};
use virt::connect::Connect;

use crate::enroll::{EnrollError, run, tool};
use crate::image::DirectBoot;
use crate::{DomainSpec, HostKeyCheck, SshConfig, SshGuest, fingerprint, offered_host_key};

#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    #[error("`{0}` is not a user name the proof can log in as")]
    BadAdmin(String),
    #[error(transparent)]
    Guestfs(#[from] EnrollError),
    #[error("libvirt: {0}")]
    Libvirt(String),
    #[error("the image did not let its admin `{admin}` log in within {within:?} (console: {console}): {reason}")]
    NoLogin { admin: String, within: Duration, console: String, reason: String },
    #[error("the image was written during its proof: sha256 {before} before, {after} after")]
    Written { before: String, after: String },
}

/// One boot proof.
#[derive(Debug, Clone)]
pub struct ProofJob {
    pub image: PathBuf,
    pub libvirt_uri: String,
    /// The transient domain's name.
    pub name: String,
    /// Loopback port forwarded to the guest's sshd.
    pub ssh_port: u16,
    pub direct_boot: Option<DirectBoot>,
    pub memory_mib: u32,
    /// The image's admin to log in as (a member of the skill's admin group).
    pub admin: String,
    /// The harness's user and private key: its login must be refused.
    pub harness: Option<(String, PathBuf)>,
    /// Holds the overlay, the one-time key and the console log while the proof runs.
    pub scratch: PathBuf,
    pub boot_within: Duration,
}

/// What the proof saw.
#[derive(Debug, Clone, Serialize)]
pub struct BootProof {
    pub sha256_before: String,
    pub sha256_after: String,
    /// From the domain's start to the admin's first login.
    pub boot_secs: f64,
    /// `systemctl is-active multi-user.target` said `active`.
    pub multi_user: bool,
    /// `systemctl is-system-running --wait`: running, or degraded with failed units.
    pub system_state: String,
    pub failed_units: Vec<String>,
    /// Each failed unit's last journal lines at this boot (read with the admin's sudo): why it
    /// failed, for the reviewer.
    pub failed_said: std::collections::BTreeMap<String, String>,
    pub admin: String,
    /// The admin's `sudo id -u`, with its password on a terminal, printed 0.
    pub admin_sudo: bool,
    /// What that sudo printed (its prompt and the password's echo left out).
    pub sudo_said: String,
    /// The harness's key was refused (None: no harness given).
    pub harness_refused: Option<bool>,
    /// The SSH host keys the first boot made.
    pub host_keys: Vec<String>,
    /// The booted machine has a machine id (the image's was empty).
    pub machine_id: bool,
    /// The image no longer knows the harness user (`id USER` fails in it).
    pub harness_user_gone: Option<bool>,
}

impl BootProof {
    /// Every check passed.
    pub fn passed(&self) -> bool {
        self.sha256_before == self.sha256_after
            && self.multi_user
            && self.admin_sudo
            && self.harness_refused != Some(false)
            && self.harness_user_gone != Some(false)
            && self.machine_id
            && !self.host_keys.is_empty()
    }
}

const PROMPT: &str = "temper-proof-password:";

/// Runs the proof; the transient domain, the overlay and the one-time key are gone afterwards.
pub async fn prove(job: &ProofJob) -> Result<BootProof, ProofError> {
    if !temper_journal::footprint::account_name(&job.admin) {
        return Err(ProofError::BadAdmin(job.admin.clone()));
    }
    let sha256_before = sha256(&job.image)?;
    std::fs::create_dir_all(&job.scratch).map_err(io("the proof's scratch folder"))?;
    let overlay = job.scratch.join(format!("{}-overlay.qcow2", job.name));
    let key = job.scratch.join(format!("{}-key", job.name));
    let secret = job.scratch.join(format!("{}-password", job.name));
    let console = job.scratch.join(format!("{}-console.log", job.name));
    let result = boot_and_check(job, &overlay, &key, &secret, &console).await;
    destroy(&job.libvirt_uri, &job.name).await;
    for f in [&overlay, &key, &key.with_extension("pub"), &secret] {
        let _ = std::fs::remove_file(f);
    }
    let mut proof = result?;
    let _ = std::fs::remove_file(&console);
    proof.sha256_before = sha256_before;
    proof.sha256_after = sha256(&job.image)?;
    if proof.sha256_before != proof.sha256_after {
        return Err(ProofError::Written { before: proof.sha256_before, after: proof.sha256_after });
    }
    Ok(proof)
}

async fn boot_and_check(job: &ProofJob, overlay: &Path, key: &Path, secret: &Path, console: &Path) -> Result<BootProof, ProofError> {
    let image = std::fs::canonicalize(&job.image).map_err(io("the image"))?;
    let out = std::process::Command::new("qemu-img")
        .args(["create", "-q", "-f", "qcow2", "-F", "qcow2", "-b"])
        .arg(&image)
        .arg(overlay)
        .output()
        .map_err(io("qemu-img create"))?;
    if !out.status.success() {
        return Err(ProofError::Io {
            what: "qemu-img create".into(),
            source: std::io::Error::other(String::from_utf8_lossy(&out.stderr).into_owned()),
        });
    }
    // One-time key and password, for the overlay alone.
    let _ = std::fs::remove_file(key);
    let made = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "boot-proof", "-f"])
        .arg(key)
        .output()
        .map_err(io("ssh-keygen"))?;
    if !made.status.success() {
        return Err(ProofError::Io {
            what: "ssh-keygen".into(),
            source: std::io::Error::other(String::from_utf8_lossy(&made.stderr).into_owned()),
        });
    }
    let password = one_time_password()?;
    write_private(secret, &password)?;
    let mut cmd = tool("virt-customize");
    cmd.args(["--format", "qcow2"]).arg("-a").arg(overlay).arg("--no-logfile");
    cmd.arg("--ssh-inject").arg(format!("{}:file:{}", job.admin, key.with_extension("pub").display()));
    cmd.arg("--password").arg(format!("{}:file:{}", job.admin, secret.display()));
    // As a clone boots: the machine id made by systemd at this boot, not by virt-customize.
    cmd.args(crate::sysprep::NO_MACHINE_ID);
    run("virt-customize", cmd, overlay, "").await?;
    let _ = std::fs::remove_file(secret);

    let spec = DomainSpec {
        name: job.name.clone(),
        disk: overlay.to_path_buf(),
        memory_mib: job.memory_mib,
        ssh_port: job.ssh_port,
        direct_boot: job.direct_boot.clone(),
        console: Some(console.to_path_buf()),
    };
    let xml = spec.xml();
    let started = Instant::now();
    create(&job.libvirt_uri, xml).await?;
    // The overlay makes its host keys at this first boot: the key it offers at the first
    // contact with the domain just made, on loopback, is pinned for the proof's connections.
    let pinned = first_contact(job, started).await.map_err(|e| no_login(job, console, e))?;
    let admin = SshGuest::new(SshConfig {
        host: "127.0.0.1".into(),
        port: job.ssh_port,
        user: job.admin.clone(),
        key_path: key.to_path_buf(),
        sync_clock: false,
        host_key: pinned.clone(),
        ..SshConfig::default()
    })
    .map_err(|e| no_login(job, console, e))?;
    admin.reconnect(job.boot_within).await.map_err(|e| no_login(job, console, e))?;
    let boot_secs = started.elapsed().as_secs_f64();
    let say = |argv: &[&str]| Exec::new(argv.iter().copied()).as_user().timeout(Duration::from_secs(180));
    let out = |o: Result<temper_core::ports::ExecOutput, PortError>| o.map(|o| o.stdout_str().trim().to_string()).unwrap_or_default();
    let system_state = out(admin.exec(say(&["timeout", "150", "systemctl", "is-system-running", "--wait"])).await);
    let multi_user = out(admin.exec(say(&["systemctl", "is-active", "multi-user.target"])).await) == "active";
    let failed_units: Vec<String> = temper_core::units::failed(&admin).await.unwrap_or_default().into_iter().collect();
    let machine_id = out(admin.exec(say(&["cat", "/etc/machine-id"])).await).len() == 32;
    let host_keys = out(admin.exec(say(&["sh", "-c", "ls /etc/ssh/ssh_host_*_key.pub"])).await).lines().map(String::from).collect();
    let harness_user_gone = match &job.harness {
        Some((user, _)) => Some(!admin.exec(say(&["id", user.as_str()])).await.is_ok_and(|o| o.success())),
        None => None,
    };
    let (code, said) = admin
        .exec_tty(&format!("sudo -k -p '{PROMPT}' id -u"), PROMPT, &password, Duration::from_secs(120))
        .await
        .unwrap_or((None, String::new()));
    // What a sudo on the terminal printed, without its prompt and the password's echo.
    let scrub = |said: &str| said.replace(&password, "").replace(PROMPT, "").trim().to_string();
    let sudo_said = scrub(&said);
    let admin_sudo = code == Some(0) && sudo_said.lines().any(|l| l.trim() == "0");
    let mut failed_said = std::collections::BTreeMap::new();
    for unit in failed_units.iter().filter(|u| unit_name(u)).take(5) {
        let command = format!("sudo -k -p '{PROMPT}' env SYSTEMD_COLORS=0 journalctl -b -u {unit} -n 25 --no-pager -o cat");
        if let Ok((_, said)) = admin.exec_tty(&command, PROMPT, &password, Duration::from_secs(60)).await {
            failed_said.insert(unit.clone(), scrub(&said));
        }
    }
    let harness_refused = match &job.harness {
        Some((user, harness_key)) => {
            let cfg = SshConfig {
                host: "127.0.0.1".into(),
                port: job.ssh_port,
                user: user.clone(),
                key_path: harness_key.clone(),
                sync_clock: false,
                connect_timeout: Duration::from_secs(30),
                host_key: pinned.clone(),
                ..SshConfig::default()
            };
            match SshGuest::connect(cfg).await {
                Ok(_) => Some(false),
                Err(PortError::Connect { reason, .. }) => Some(reason.contains("rejected") || reason.contains("auth")),
                Err(_) => None,
            }
        }
        None => None,
    };
    Ok(BootProof {
        sha256_before: String::new(),
        sha256_after: String::new(),
        boot_secs,
        multi_user,
        system_state,
        failed_units,
        failed_said,
        admin: job.admin.clone(),
        admin_sudo,
        sudo_said,
        harness_refused,
        host_keys,
        machine_id,
        harness_user_gone,
    })
}

/// A unit name as `systemctl --failed` prints it, safe as one shell word (an escaped one, with a
/// backslash, is not read).
fn unit_name(u: &str) -> bool {
    !u.is_empty() && !u.starts_with('-') && u.chars().all(|c| c.is_ascii_alphanumeric() || "@._:-".contains(c))
}

/// The host key the domain just made offers at its first contact, once its sshd answers within
/// `job.boot_within` of `started`: pinned by fingerprint.
async fn first_contact(job: &ProofJob, started: Instant) -> Result<HostKeyCheck, PortError> {
    let look = SshConfig { host: "127.0.0.1".into(), port: job.ssh_port, connect_timeout: Duration::from_secs(10), ..SshConfig::default() };
    loop {
        match offered_host_key(&look).await {
            Ok(key) => return Ok(HostKeyCheck::Fingerprint(fingerprint(&key))),
            Err(e) if started.elapsed() >= job.boot_within => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_secs(2)).await,
        }
    }
}

fn no_login(job: &ProofJob, console: &Path, e: PortError) -> ProofError {
    ProofError::NoLogin { admin: job.admin.clone(), within: job.boot_within, console: console.display().to_string(), reason: e.to_string() }
}

/// Starts a transient domain (it vanishes when it stops).
async fn create(uri: &str, xml: String) -> Result<(), ProofError> {
    let uri = uri.to_string();
    tokio::task::spawn_blocking(move || {
        let conn = Connect::open(Some(&uri)).map_err(|e| ProofError::Libvirt(format!("connect to {uri}: {}", e.message())))?;
        conn.create_domain_xml(&xml, 0).map(|_| ()).map_err(|e| ProofError::Libvirt(format!("start the proof's domain: {}", e.message())))
    })
    .await
    .map_err(|e| ProofError::Libvirt(e.to_string()))?
}

/// Powers the transient domain off, if it runs.
async fn destroy(uri: &str, name: &str) {
    let (uri, name) = (uri.to_string(), name.to_string());
    let _ = tokio::task::spawn_blocking(move || {
        if let Ok(conn) = Connect::open(Some(&uri))
            && let Ok(dom) = conn.lookup_domain_by_name(&name)
        {
            let _ = dom.destroy();
        }
    })
    .await;
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> ProofError + '_ {
    move |source| ProofError::Io { what: what.into(), source }
}

/// 24 letters and digits from the kernel's random source.
fn one_time_password() -> Result<String, ProofError> {
    use std::io::Read;
    let mut bytes = [0u8; 64];
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).map_err(io("/dev/urandom"))?;
    const ALPHABET: &[u8] = b"abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    Ok(bytes
        .iter()
        .filter(|b| (**b as usize) < 256 / ALPHABET.len() * ALPHABET.len())
        .take(24)
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect())
}

fn write_private(path: &Path, text: &str) -> Result<(), ProofError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    let mut f =
        std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).map_err(io("the one-time password file"))?;
    f.write_all(text.as_bytes()).map_err(io("the one-time password file"))
}

/// The sha256 of a file, in hex.
pub fn sha256(path: &Path) -> Result<String, ProofError> {
    temper_journal::plan::sha256_file(path).map_err(|source| ProofError::Io { what: format!("sha256 of {}", path.display()), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_time_passwords_are_long_plain_and_new_each_time() {
        let (a, b) = (one_time_password().unwrap(), one_time_password().unwrap());
        assert_eq!(a.len(), 24);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(a, b);
    }

    #[test]
    fn only_plain_unit_names_go_into_the_journal_command() {
        assert!(unit_name("aidecheck.service"));
        assert!(unit_name("getty@tty1.service"));
        for bad in ["", "-x.service", "a;b.service", "a b", "dev-disk-by\\x2duuid.device", "$(id).service"] {
            assert!(!unit_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_proof_passes_only_when_every_check_does() {
        let ok = BootProof {
            sha256_before: "a".into(),
            sha256_after: "a".into(),
            boot_secs: 40.0,
            multi_user: true,
            system_state: "running".into(),
            failed_units: vec![],
            failed_said: Default::default(),
            admin: "admin".into(),
            admin_sudo: true,
            sudo_said: "0".into(),
            harness_refused: Some(true),
            host_keys: vec!["/etc/ssh/ssh_host_ed25519_key.pub".into()],
            machine_id: true,
            harness_user_gone: Some(true),
        };
        assert!(ok.passed());
        for broken in [
            BootProof { sha256_after: "b".into(), ..ok.clone() },
            BootProof { multi_user: false, ..ok.clone() },
            BootProof { admin_sudo: false, ..ok.clone() },
            BootProof { harness_refused: Some(false), ..ok.clone() },
            BootProof { host_keys: vec![], ..ok.clone() },
            BootProof { machine_id: false, ..ok.clone() },
            BootProof { harness_user_gone: Some(false), ..ok.clone() },
        ] {
            assert!(!broken.passed(), "{broken:?}");
        }
        assert!(BootProof { harness_refused: None, harness_user_gone: None, ..ok }.passed(), "no harness named: not asked");
    }
}
