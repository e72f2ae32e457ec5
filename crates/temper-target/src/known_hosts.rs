//! The guests' SSH host keys, pinned in a file of the host's own (OpenSSH's `known_hosts`
//! format, one line per key: `[host]:port type base64 comment`), never in the store: whoever
//! can write a shared store must not be able to swap a guest's key. The file and its folder must
//! be writable by their owner alone (root, or the user temper runs as); temper refuses any other.
//!
//! A key is recorded at enrollment (read from the disk, `temper target enroll`), at the first
//! contact with a test VM just built (`vm/up.sh`), or after a person looked at it (`temper
//! target trust`). Every connection then checks the guest's key against it, before
//! authenticating: a key not recorded, or another one, stops there.
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use russh::keys::{HashAlg, PublicKey};

/// Where the keys are kept unless `known_hosts_file` (`TEMPER_KNOWN_HOSTS_FILE`) says otherwise.
pub const DEFAULT_KNOWN_HOSTS: &str = "/etc/temper/known_hosts";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostKeyError {
    #[error(
        "no SSH host key is recorded for {host} in {file}: record it at enrollment (`temper target enroll`), with `bash vm/up.sh` for a test VM, or after a look with `temper target trust NAME`"
    )]
    Unknown { host: String, file: PathBuf },
    #[error(
        "the SSH host key of {host} is not the one recorded in {file}: it offered {offered}, and {recorded} is recorded. Someone may be posing as the guest, or it was rebuilt; nothing was run on it. Check the guest's key (on its console: ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub), then `temper target trust NAME`"
    )]
    Changed { host: String, file: PathBuf, offered: String, recorded: String },
    #[error("{file}: {reason}; only its owner may write it and the folder it is in (`chmod 600`, `chmod 700` on the folder)")]
    Unsafe { file: PathBuf, reason: String },
    #[error("{file}: {reason}")]
    Io { file: PathBuf, reason: String },
    #[error("{0} is not a host key (`type base64`, as in /etc/ssh/ssh_host_ed25519_key.pub)")]
    BadKey(String),
}

/// `SHA256:...`, as `ssh-keygen -lf` prints it.
pub fn fingerprint(key: &PublicKey) -> String {
    key.fingerprint(HashAlg::Sha256).to_string()
}

/// A key from `type base64 [comment]`.
pub fn parse_key(line: &str) -> Result<PublicKey, HostKeyError> {
    let two: Vec<&str> = line.split_whitespace().take(2).collect();
    PublicKey::from_openssh(&two.join(" ")).map_err(|_| HostKeyError::BadKey(line.chars().take(80).collect()))
}

/// How OpenSSH names `host` on `port` in `known_hosts`: `host` on 22, else `[host]:port`.
pub fn host_pattern(host: &str, port: u16) -> String {
    if port == 22 { host.to_string() } else { format!("[{host}]:{port}") }
}

/// The known-hosts file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownHosts {
    path: PathBuf,
}

impl KnownHosts {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// `TEMPER_KNOWN_HOSTS_FILE`, else [`DEFAULT_KNOWN_HOSTS`].
    pub fn from_env() -> Self {
        Self::new(std::env::var_os("TEMPER_KNOWN_HOSTS_FILE").filter(|v| !v.is_empty()).unwrap_or_else(|| DEFAULT_KNOWN_HOSTS.into()))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The keys recorded for `host` on `port` (none: an empty list; no file: none either).
    pub fn keys(&self, host: &str, port: u16) -> Result<Vec<PublicKey>, HostKeyError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.io(e)),
        };
        self.check_owner()?;
        let want = host_pattern(host, port);
        Ok(text
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let hosts = f.next().filter(|h| !h.starts_with('#') && !h.starts_with('@'))?;
                hosts.split(',').any(|h| h == want).then(|| PublicKey::from_openssh(&format!("{} {}", f.next()?, f.next()?)).ok())?
            })
            .collect())
    }

    /// Whether `offered` is a key recorded for `host` on `port`: `Unknown` when none is, `Changed`
    /// when others are.
    pub fn check(&self, host: &str, port: u16, offered: &PublicKey) -> Result<(), HostKeyError> {
        let keys = self.keys(host, port)?;
        let host = host_pattern(host, port);
        if keys.is_empty() {
            return Err(HostKeyError::Unknown { host, file: self.path.clone() });
        }
        if keys.iter().any(|k| k.key_data() == offered.key_data()) {
            return Ok(());
        }
        let recorded = keys.iter().map(fingerprint).collect::<Vec<_>>().join(", ");
        Err(HostKeyError::Changed { host, file: self.path.clone(), offered: fingerprint(offered), recorded })
    }

    /// Records `keys` as the keys of `host` on `port`, in place of those recorded before (which
    /// it returns). The file (0600) and its folder (0700) are made when missing; the change is
    /// written whole to a new file and renamed over the old one, under a lock (`FILE.lock`, the
    /// one `vm/up.sh` takes with flock).
    pub fn record(&self, host: &str, port: u16, keys: &[PublicKey], comment: &str) -> Result<Vec<PublicKey>, HostKeyError> {
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !dir.exists() {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|e| self.io(e))?;
        }
        let lock = OpenOptions::new().create(true).append(true).mode(0o600).open(self.lock_path()).map_err(|e| self.io(e))?;
        lock.lock().map_err(|e| self.io(e))?;
        let was = self.keys(host, port)?;
        let want = host_pattern(host, port);
        let old = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(self.io(e)),
        };
        let mut text: String = old
            .lines()
            .filter(|l| !l.split_whitespace().next().is_some_and(|h| h.split(',').any(|h| h == want)))
            .map(|l| format!("{l}\n"))
            .collect();
        let comment: String = comment.chars().filter(|c| c.is_ascii_graphic()).collect();
        for k in keys {
            let line = k.to_openssh().map_err(|e| self.io(std::io::Error::other(e.to_string())))?;
            let mut f = line.split_whitespace();
            text += &format!("{want} {} {} {comment}\n", f.next().unwrap_or_default(), f.next().unwrap_or_default());
        }
        let tmp = self.path.with_extension("new");
        let mut f = OpenOptions::new().create(true).write(true).truncate(true).mode(0o600).open(&tmp).map_err(|e| self.io(e))?;
        f.set_permissions(std::fs::Permissions::from_mode(0o600)).map_err(|e| self.io(e))?;
        f.write_all(text.as_bytes()).and_then(|()| f.sync_all()).map_err(|e| self.io(e))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| self.io(e))?;
        self.check_owner()?;
        drop(lock);
        Ok(was)
    }

    fn lock_path(&self) -> PathBuf {
        let mut p = self.path.clone().into_os_string();
        p.push(".lock");
        p.into()
    }

    /// The file and its folder are the owner's alone to write (root's, or this user's): a key
    /// anyone else could write is no pin.
    fn check_owner(&self) -> Result<(), HostKeyError> {
        let me = effective_uid();
        let unsafe_ = |reason: String| HostKeyError::Unsafe { file: self.path.clone(), reason };
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        for (what, p) in [("it", self.path.as_path()), ("its folder", dir)] {
            let m = std::fs::metadata(p).map_err(|e| self.io(e))?;
            if m.uid() != 0 && m.uid() != me {
                return Err(unsafe_(format!(
                    "{what} ({}) is owned by uid {}, neither root nor this user (uid {me})",
                    p.display(),
                    m.uid()
                )));
            }
            let mode = m.mode() & 0o7777;
            // A sticky folder others may write (as /tmp) still lets them swap a file of their own in.
            if mode & 0o022 != 0 {
                return Err(unsafe_(format!("{what} ({}) is writable by group or others (mode {mode:04o})", p.display())));
            }
        }
        Ok(())
    }

    fn io(&self, e: std::io::Error) -> HostKeyError {
        HostKeyError::Io { file: self.path.clone(), reason: e.to_string() }
    }
}

/// This process's effective uid (from /proc: no libc call).
fn effective_uid() -> u32 {
    std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    const A: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEWV/IrltMVIV4fSbe2KfL3/iov7DCUs5ea5FJ42+4O9 a";
    const B: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJv46ZhVQW205MOZks/v2T+6AgnpQNw9ThoZbXcNuFcD b";

    fn dir() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        d
    }

    #[test]
    fn a_recorded_key_passes_another_is_refused_and_none_is_unknown() {
        let d = dir();
        let kh = KnownHosts::new(d.path().join("etc/known_hosts"));
        let (a, b) = (parse_key(A).unwrap(), parse_key(B).unwrap());
        assert!(matches!(kh.check("127.0.0.1", 2222, &a), Err(HostKeyError::Unknown { .. })));
        assert!(kh.record("127.0.0.1", 2222, std::slice::from_ref(&a), "temper-test").unwrap().is_empty());
        kh.check("127.0.0.1", 2222, &a).unwrap();
        let e = kh.check("127.0.0.1", 2222, &b).unwrap_err();
        let says = e.to_string();
        assert!(says.contains(&fingerprint(&a)) && says.contains(&fingerprint(&b)) && says.contains("[127.0.0.1]:2222"), "{says}");
        assert!(matches!(kh.check("127.0.0.1", 2223, &a), Err(HostKeyError::Unknown { .. })), "another port is another guest");
        // Recorded again: the old key goes, the other entries stay.
        kh.record("127.0.0.1", 22, std::slice::from_ref(&b), "other").unwrap();
        assert_eq!(kh.record("127.0.0.1", 2222, std::slice::from_ref(&b), "rebuilt").unwrap(), vec![a.clone()]);
        kh.check("127.0.0.1", 2222, &b).unwrap();
        kh.check("127.0.0.1", 22, &b).unwrap();
        let text = std::fs::read_to_string(kh.path()).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(
            text.contains("\n127.0.0.1 ssh-ed25519 ") || text.starts_with("127.0.0.1 ssh-ed25519 "),
            "port 22 as OpenSSH writes it: {text}"
        );
        let mode = std::fs::metadata(kh.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    /// A file others may write is no pin: refused, saying why.
    #[test]
    fn a_file_others_may_write_is_refused() {
        let d = dir();
        let kh = KnownHosts::new(d.path().join("known_hosts"));
        kh.record("h", 2222, &[parse_key(A).unwrap()], "").unwrap();
        std::fs::set_permissions(kh.path(), std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = kh.keys("h", 2222).unwrap_err().to_string();
        assert!(e.contains("writable by group or others (mode 0666)"), "{e}");
        std::fs::set_permissions(kh.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(kh.keys("h", 2222).unwrap_err().to_string().contains("its folder"));
    }

    /// `vm/up.sh` and `vm/boot-image.sh` record the test VMs' keys where temper reads them.
    #[test]
    fn the_vm_scripts_pin_in_the_same_file() {
        let pin = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vm/pin.sh")).unwrap();
        let line = format!("KNOWN_HOSTS=${{TEMPER_KNOWN_HOSTS_FILE:-{DEFAULT_KNOWN_HOSTS}}}");
        assert!(pin.lines().any(|l| l.trim() == line), "vm/pin.sh lacks `{line}`");
    }

    #[test]
    fn openssh_lines_are_read_and_others_ignored() {
        let d = dir();
        let p = d.path().join("known_hosts");
        let b64 = A.split_whitespace().nth(1).unwrap();
        std::fs::write(
            &p,
            format!("# a comment\n\n@revoked [h]:1 ssh-ed25519 {b64}\n|1|hashed= ssh-ed25519 {b64}\nx,[h]:1 ssh-ed25519 {b64} c\n"),
        )
        .unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(KnownHosts::new(&p).keys("h", 1).unwrap().len(), 1);
        assert!(parse_key("ssh-ed25519 notbase64").is_err());
    }
}
