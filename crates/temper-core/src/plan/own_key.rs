//! The host's own plan key: an ed25519 key temper makes at first use, readable by its owner
//! alone (root, as temper runs), in a folder no one else can write. It seals the plans temper
//! hands itself: the last proven plan of a job, sealed at the end of the run that proved it and
//! applied by a later run by default, and `temper fleet run --plan-from`'s. Each is verified
//! against it as any plan is against its allowed signers, so that what a run applies never
//! comes unsigned from the store.
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use ssh_key::private::Ed25519Keypair;
use ssh_key::{HashAlg, LineEnding, PrivateKey};

use temper_journal::plan::NAMESPACE;

/// The principal of the key's allowed-signers line.
pub const PRINCIPAL: &str = "temper-host";

/// The key, and the allowed-signers file that names it alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnKey {
    /// The private key (mode 0600).
    pub key: PathBuf,
    /// `KEY.allowed`: one line, `temper-host namespaces="temper-plan" ssh-ed25519 …`, written
    /// anew from the private key each time it is opened.
    pub signers: PathBuf,
    pub fingerprint: String,
}

#[derive(Debug, thiserror::Error)]
pub enum OwnKeyError {
    #[error("the host's plan key {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "the host's plan key {} can be read or changed by others ({what}): it must be its owner's alone; nothing was sealed or trusted with it",
        path.display()
    )]
    Exposed { path: PathBuf, what: String },
    #[error("the host's plan key {}: {message}", path.display())]
    Key { path: PathBuf, message: String },
}

impl OwnKey {
    /// The allowed-signers file of the key at `key`.
    pub fn signers_of(key: &Path) -> PathBuf {
        PathBuf::from(format!("{}.allowed", key.display()))
    }

    /// The key at `path`, made there (with its folder, 0700) at first use.
    pub fn open(path: &Path) -> Result<OwnKey, OwnKeyError> {
        let io = |p: &Path| {
            let path = p.to_path_buf();
            move |source| OwnKeyError::Io { path, source }
        };
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !dir.exists() {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(io(dir))?;
        }
        guarded(dir, 0o022, path)?;
        if std::fs::symlink_metadata(path).is_err() {
            make(path)?;
        }
        guarded(path, 0o077, path)?;
        let bad = |message: String| OwnKeyError::Key { path: path.to_path_buf(), message };
        let private = PrivateKey::read_openssh_file(path).map_err(|e| bad(format!("not an OpenSSH private key ({e})")))?;
        let public = private.public_key().to_openssh().map_err(|e| bad(e.to_string()))?;
        let signers = Self::signers_of(path);
        let line = format!("{PRINCIPAL} namespaces=\"{NAMESPACE}\" {public}\n");
        let tmp = PathBuf::from(format!("{}.allowed.tmp", path.display()));
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
            .map_err(io(&tmp))?;
        std::io::Write::write_all(&mut f, line.as_bytes()).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &signers).map_err(io(&signers))?;
        Ok(OwnKey { key: path.to_path_buf(), signers, fingerprint: private.fingerprint(HashAlg::Sha256).to_string() })
    }
}

/// Makes a new ed25519 key at `path`, 0600, never over another file.
fn make(path: &Path) -> Result<(), OwnKeyError> {
    let io = |source| OwnKeyError::Io { path: path.to_path_buf(), source };
    let mut seed = [0u8; 32];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").map_err(io)?, &mut seed).map_err(io)?;
    let mut key = PrivateKey::from(Ed25519Keypair::from_seed(&seed));
    seed.fill(0);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    key.set_comment(format!("{PRINCIPAL}@{}", host.trim()));
    let pem = key.to_openssh(LineEnding::LF).map_err(|e| OwnKeyError::Key { path: path.to_path_buf(), message: e.to_string() })?;
    let f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(path);
    match f {
        Ok(mut f) => std::io::Write::write_all(&mut f, pem.as_bytes()).map_err(io),
        // Another temper made it first: that one is the key.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io(e)),
    }
}

/// Refuses `p` unless it is this user's, no link, and has none of `mode_bits` set.
fn guarded(p: &Path, mode_bits: u32, key: &Path) -> Result<(), OwnKeyError> {
    let meta = std::fs::symlink_metadata(p).map_err(|source| OwnKeyError::Io { path: p.to_path_buf(), source })?;
    let exposed = |what: String| Err(OwnKeyError::Exposed { path: key.to_path_buf(), what });
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.file_type().is_symlink() {
        return exposed(format!("{} is a link", p.display()));
    }
    if meta.uid() != me {
        return exposed(format!("{} is owned by uid {}, not {me}", p.display(), meta.uid()));
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & mode_bits != 0 {
        return exposed(format!("{} has mode {mode:04o}", p.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_at_first_use_for_its_owner_alone_and_the_same_after() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("state/plan_ed25519");
        let k = OwnKey::open(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
        let line = std::fs::read_to_string(&k.signers).unwrap();
        assert!(line.starts_with("temper-host namespaces=\"temper-plan\" ssh-ed25519 "), "{line}");
        assert_eq!(OwnKey::open(&path).unwrap(), k, "the same key the next time");

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let e = OwnKey::open(&path).unwrap_err();
        assert!(matches!(&e, OwnKeyError::Exposed { what, .. } if what.contains("mode 0640")), "{e}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(path.parent().unwrap(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(matches!(OwnKey::open(&path), Err(OwnKeyError::Exposed { .. })), "a folder others can write");
    }

    #[test]
    fn ssh_keygen_reads_it_and_verifies_its_signatures() {
        let tmp = tempfile::tempdir().unwrap();
        let k = OwnKey::open(&tmp.path().join("plan_ed25519")).unwrap();
        let out = std::process::Command::new("ssh-keygen").arg("-l").arg("-f").arg(&k.key).output().unwrap();
        assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains(&k.fingerprint), "{out:?}");
    }
}
