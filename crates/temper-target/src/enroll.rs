//! Making a shut-off disk a temper target, with libguestfs (Debian's `libguestfs-tools`):
//! `inspect` reads what it lacks (guestfish, read-only), `prepare` adds it (virt-customize):
//! the harness user with its key and NOPASSWD sudo, `openscap-scanner`, the SSG datastream.
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::io::AsyncWriteExt;

#[derive(Debug, thiserror::Error)]
pub enum EnrollError {
    #[error("`{0}` is not a user name temper can create (lower case letters, digits, _ and -)")]
    BadUser(String),
    #[error("{tool} could not run: {reason} (install libguestfs-tools: bash vm/host-deps.sh)")]
    Tool { tool: &'static str, reason: String },
    #[error("{tool} failed on {disk}: {stderr}")]
    Failed { tool: &'static str, disk: PathBuf, stderr: String },
    #[error(
        "openscap-scanner is missing and the guest has no package source (no deb line in /etc/apt/sources.list or sources.list.d): install openscap-scanner in the image, or give it a mirror"
    )]
    NoPackageSource,
}

/// What the harness needs in the guest.
#[derive(Debug, Clone)]
pub struct Harness {
    pub user: String,
    /// The public key (OpenSSH format) the user logs in with.
    pub public_key: PathBuf,
    /// The datastream on the host, copied in when the guest lacks it.
    pub datastream: PathBuf,
    /// Where the guest's copy goes (`guest_content_dir`).
    pub guest_content_dir: String,
}

impl Harness {
    fn guest_datastream(&self) -> String {
        let name = self.datastream.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        format!("{}/{name}", self.guest_content_dir.trim_end_matches('/'))
    }
}

/// What a disk has of what the harness needs.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Inspection {
    pub user: bool,
    /// The harness's public key is in the user's authorized_keys.
    pub key: bool,
    pub sudo_rule: bool,
    pub oscap: bool,
    pub datastream: bool,
    /// A deb line to install packages from.
    pub package_source: bool,
    /// The guest's SSH host keys (`/etc/ssh/ssh_host_*_key.pub`), as the disk holds them: the
    /// keys temper pins before it first connects.
    pub host_keys: Vec<String>,
    /// The folder the datastream goes in (`guest_content_dir`).
    pub content_dir: bool,
}

impl Inspection {
    /// Each need, in words, and whether the disk has it; the package source last (a means, not a need).
    pub fn checks(&self) -> [(&'static str, bool); 7] {
        [
            ("the harness user", self.user),
            ("the harness user's key in ~/.ssh/authorized_keys", self.key),
            ("the harness user's NOPASSWD sudo rule (/etc/sudoers.d)", self.sudo_rule),
            ("openscap-scanner (/usr/bin/oscap)", self.oscap),
            ("the SSG datastream", self.datastream),
            ("the guest's SSH host keys (/etc/ssh/ssh_host_*_key.pub)", !self.host_keys.is_empty()),
            ("a package source (a deb line)", self.package_source),
        ]
    }

    /// What `prepare` adds to a disk this inspection found: the target's footprint, which the
    /// handover (`temper image export`) takes away again.
    pub fn footprint(&self, h: &Harness) -> temper_journal::footprint::Footprint {
        temper_journal::footprint::Footprint {
            user: !self.user,
            key: !self.key,
            sudo_rule: !self.sudo_rule,
            packages: if self.oscap { vec![] } else { vec!["openscap-scanner".into()] },
            files: if self.datastream { vec![] } else { vec![h.guest_datastream()] },
            dirs: if self.datastream || self.content_dir { vec![] } else { vec![h.guest_content_dir.trim_end_matches('/').to_string()] },
        }
    }

    /// What is missing, in words; empty when the disk is ready.
    pub fn missing(&self) -> Vec<&'static str> {
        self.checks()[..6].iter().filter(|(_, ok)| !ok).map(|(what, _)| *what).collect()
    }
}

fn check_user(user: &str) -> Result<(), EnrollError> {
    let ok = !user.is_empty()
        && user.len() <= 32
        && user.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && user.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if ok { Ok(()) } else { Err(EnrollError::BadUser(user.into())) }
}

/// libguestfs in its own qemu, without KVM unless the caller set it otherwise (temper's guests
/// run under TCG; a paravirtual /dev/kvm crashes its appliance).
pub(crate) fn tool(name: &'static str) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(name);
    c.env("LIBGUESTFS_BACKEND", std::env::var("LIBGUESTFS_BACKEND").unwrap_or_else(|_| "direct".into()));
    if std::env::var_os("LIBGUESTFS_BACKEND_SETTINGS").is_none() {
        c.env("LIBGUESTFS_BACKEND_SETTINGS", "force_tcg");
    }
    c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

pub(crate) async fn run(name: &'static str, mut cmd: tokio::process::Command, disk: &Path, input: &str) -> Result<String, EnrollError> {
    let err = |e: std::io::Error| EnrollError::Tool { tool: name, reason: e.to_string() };
    let mut child = cmd.spawn().map_err(err)?;
    let mut stdin = child.stdin.take().expect("piped");
    stdin.write_all(input.as_bytes()).await.map_err(err)?;
    drop(stdin);
    let out = child.wait_with_output().await.map_err(err)?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(EnrollError::Failed { tool: name, disk: disk.to_path_buf(), stderr });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Reads the disk, read-only: what of the harness's needs it has.
pub async fn inspect(disk: &Path, h: &Harness) -> Result<Inspection, EnrollError> {
    check_user(&h.user)?;
    let u = &h.user;
    // `-` before a command: its error (a missing file) is not fatal; `@` lines mark sections.
    let script = format!(
        "echo @passwd\n-cat /etc/passwd\necho @keys\n-cat /home/{u}/.ssh/authorized_keys\n\
         echo @sudo\nexists /etc/sudoers.d/{u}\necho @oscap\nexists /usr/bin/oscap\n\
         echo @datastream\nexists {ds}\necho @contentdir\nis-dir {dir}\necho @sources\n-cat /etc/apt/sources.list\n-glob cat /etc/apt/sources.list.d/*\n\
         echo @hostkeys\n-glob cat /etc/ssh/ssh_host_*_key.pub\necho @end\n",
        ds = h.guest_datastream(),
        dir = h.guest_content_dir.trim_end_matches('/'),
    );
    let mut cmd = tool("guestfish");
    cmd.arg("--ro").arg("-a").arg(disk).arg("-i");
    let out = run("guestfish", cmd, disk, &script).await?;
    let key = std::fs::read_to_string(&h.public_key).unwrap_or_default();
    let key = key.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
    Ok(parse(&out, u, &key))
}

/// guestfish's answers to `inspect`'s script.
fn parse(out: &str, user: &str, key: &str) -> Inspection {
    let section = |name: &str| -> Vec<&str> {
        let mut lines = out.lines().skip_while(|l| l.trim() != name).skip(1);
        std::iter::from_fn(|| lines.next().filter(|l| !l.starts_with('@'))).collect()
    };
    let yes = |name: &str| section(name).first().is_some_and(|l| l.trim() == "true");
    Inspection {
        user: section("@passwd").iter().any(|l| l.split(':').next() == Some(user)),
        key: !key.is_empty() && section("@keys").iter().any(|l| l.contains(key)),
        sudo_rule: yes("@sudo"),
        oscap: yes("@oscap"),
        datastream: yes("@datastream"),
        content_dir: yes("@contentdir"),
        package_source: section("@sources").iter().map(|l| l.trim()).any(|l| l.starts_with("deb ") || l.starts_with("URIs:")),
        host_keys: section("@hostkeys")
            .iter()
            .map(|l| l.trim())
            .filter(|l| l.starts_with("ssh-") || l.starts_with("ecdsa-"))
            .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
            .collect(),
    }
}

/// Adds what `found` says is missing, with one virt-customize run on the shut-off disk.
pub async fn prepare(disk: &Path, h: &Harness, found: &Inspection) -> Result<(), EnrollError> {
    check_user(&h.user)?;
    if !found.oscap && !found.package_source {
        return Err(EnrollError::NoPackageSource);
    }
    let u = &h.user;
    let mut cmd = tool("virt-customize");
    cmd.arg("-a").arg(disk).arg("--no-logfile");
    if !found.oscap {
        cmd.args(["--install", "openscap-scanner"]);
    }
    if !found.datastream {
        cmd.args(["--mkdir", &h.guest_content_dir]);
        cmd.arg("--upload").arg(format!("{}:{}", h.datastream.display(), h.guest_datastream()));
    }
    cmd.args(["--run-command", &format!("id -u {u} >/dev/null 2>&1 || useradd -m -s /bin/bash {u}")]);
    cmd.arg("--ssh-inject").arg(format!("{u}:file:{}", h.public_key.display()));
    cmd.args(["--write", &format!("/etc/sudoers.d/{u}:{u} ALL=(ALL) NOPASSWD:ALL\n")]);
    cmd.args(["--chmod", &format!("0440:/etc/sudoers.d/{u}")]);
    cmd.args(["--run-command", &format!("visudo -cf /etc/sudoers.d/{u}")]);
    if found.host_keys.is_empty() {
        // Made here, on the disk, so that temper reads them from it and pins them before it
        // first connects (sshd would make its own at first boot, seen first over the network).
        cmd.args(["--run-command", "ssh-keygen -A"]);
    }
    run("virt-customize", cmd, disk, "").await.map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT: &str = "@passwd\nroot:x:0:0:root:/root:/bin/bash\ntemper:x:1000:1000::/home/temper:/bin/bash\n@keys\n\
                       ssh-ed25519 AAAAkey temper\n@sudo\ntrue\n@oscap\nfalse\n@datastream\ntrue\n@contentdir\ntrue\n@sources\n\
                       # deb http://old\ndeb http://deb.debian.org/debian bookworm main\n@hostkeys\n\
                       ssh-ed25519 AAAAhost root@guest\n@end\n";

    #[test]
    fn guestfish_answers_are_read_by_section() {
        let i = parse(OUT, "temper", "ssh-ed25519 AAAAkey");
        let host_keys = vec!["ssh-ed25519 AAAAhost".to_string()];
        assert_eq!(
            i,
            Inspection {
                user: true,
                key: true,
                sudo_rule: true,
                oscap: false,
                datastream: true,
                package_source: true,
                content_dir: true,
                host_keys
            }
        );
        assert_eq!(i.missing(), ["openscap-scanner (/usr/bin/oscap)"]);
        let other = parse(OUT, "admin", "ssh-ed25519 BBBB");
        assert!(!other.user && !other.key, "{other:?}");
        let bare = parse(
            "@passwd\nroot:x:0:0::/root:/bin/sh\n@keys\n@sudo\nfalse\n@oscap\nfalse\n@datastream\nfalse\n@contentdir\nfalse\n@sources\n# deb x\n@hostkeys\n@end\n",
            "temper",
            "k",
        );
        assert_eq!(bare, Inspection::default(), "a commented deb line is no package source");
        assert_eq!(bare.missing().len(), 6);
    }

    #[test]
    fn only_plain_user_names_reach_the_guest() {
        assert!(check_user("temper").is_ok() && check_user("ops_2").is_ok());
        for bad in ["", "Temper", "a b", "x;rm -rf /", "$(id)", "-x"] {
            assert!(matches!(check_user(bad), Err(EnrollError::BadUser(_))), "{bad}");
        }
    }

    #[test]
    fn what_prepare_adds_is_the_targets_footprint() {
        let h = Harness {
            user: "temper".into(),
            public_key: "/k.pub".into(),
            datastream: "/host/ds.xml".into(),
            guest_content_dir: "/usr/share/c/".into(),
        };
        let bare = Inspection::default().footprint(&h);
        assert!(bare.user && bare.key && bare.sudo_rule);
        assert_eq!(
            (bare.packages, bare.files, bare.dirs),
            (vec!["openscap-scanner".to_string()], vec!["/usr/share/c/ds.xml".to_string()], vec!["/usr/share/c".to_string()])
        );
        let had = Inspection { user: true, oscap: true, datastream: true, content_dir: true, ..Inspection::default() }.footprint(&h);
        assert!(!had.user && had.key && had.sudo_rule && had.packages.is_empty() && had.files.is_empty() && had.dirs.is_empty());
    }
}
