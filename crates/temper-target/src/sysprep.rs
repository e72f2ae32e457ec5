//! The handed-over image made ready to be cloned, with libguestfs' `virt-sysprep` on the image
//! file (never the domain's disk): what belongs to one machine goes, what the image's users need
//! to boot and log in stays. Each operation applied, and each left out, says why.
use std::path::Path;

use crate::enroll::{EnrollError, run, tool};

/// The operations applied, and why each.
pub const APPLIED: &[(&str, &str)] = &[
    (
        "machine-id",
        "empties /etc/machine-id: each clone makes its own at its first boot (an empty file, not a missing one: systemd does not take it for a first boot, so no first-boot prompt waits on the console)",
    ),
    (
        "ssh-hostkeys",
        "removes the SSH host keys, which clones must not share; ssh.service makes new ones before sshd starts (a drop-in: ssh-keygen -A)",
    ),
    (
        "logfiles",
        "removes this machine's logs: the journal, syslog and auth.log, audit.log, wtmp, btmp and lastlog, apt's and dpkg's logs (the harness's logins, sudo and installs among them)",
    ),
    ("bash-history", "removes the shell histories"),
    ("utmp", "removes the record of who was logged in"),
    ("tmp-files", "empties /tmp and /var/tmp"),
    ("package-manager-cache", "empties the cache of downloaded packages"),
    ("passwd-backups", "removes /etc/passwd-, /etc/shadow- and the other account backups, which still name the harness user"),
    ("dhcp-client-state", "removes this machine's DHCP leases"),
    ("dhcp-server-state", "removes the leases a DHCP server here handed out"),
    ("net-hwaddr", "removes MAC addresses pinned in network configuration"),
    ("udev-persistent-net", "removes udev rules that pin interface names to this machine's MAC addresses"),
    ("pam-data", "removes PAM's per-machine data"),
    ("mail-spool", "removes local mail"),
    ("crash-data", "removes kernel crash dumps"),
    ("backup-files", "removes editor backup files (*~, *.bak)"),
    ("pacct-log", "removes process accounting logs"),
    ("blkid-tab", "removes blkid's cache of this machine's devices"),
    ("abrt-data", "removes ABRT's crash reports"),
    ("rpm-db", "removes the RPM database's host-specific files (RHEL)"),
    ("yum-uuid", "removes yum's machine UUID (RHEL)"),
    ("net-hostname", "removes HOSTNAME from ifcfg files (RHEL)"),
    ("kerberos-hostkeytab", "removes this machine's Kerberos keytab"),
    ("ipa-client", "removes this machine's IPA enrollment"),
    ("sssd-db-log", "removes sssd's caches and logs"),
    ("samba-db-log", "removes Samba's databases and logs"),
    ("dovecot-data", "removes Dovecot's data"),
    ("puppet-data-log", "removes Puppet's data and logs"),
    ("rh-subscription-manager", "removes this machine's RHSM registration"),
    ("rhn-systemid", "removes this machine's RHN system id"),
    ("smolt-uuid", "removes Smolt's hardware UUID"),
    (
        "customize",
        "writes the ssh.service drop-in that makes the host keys at first boot (Debian's sshd makes none by itself), then empties /etc/machine-id again (customize fills an empty one)",
    ),
];

/// virt-sysprep's default operations left out, and why each.
pub const LEFT_OUT: &[(&str, &str)] = &[
    ("ssh-userdir", "it removes every user's ~/.ssh: the image's own users could no longer log in with their keys"),
    ("cron-spool", "cron and at jobs are the image's configuration, not one machine's"),
    ("lvm-uuids", "the boot configuration may name volumes by UUID, and virt-sysprep does not rewrite it"),
    ("net-nmconn", "NetworkManager's connection profiles are the image's network configuration"),
    ("script", "there is no script of ours to run"),
];

/// Where the drop-in goes, and what it says. It resets ExecStartPre so that the keys exist
/// before Debian's own `sshd -t` check runs.
pub const SSH_DROP_IN: (&str, &str) = (
    "/etc/systemd/system/ssh.service.d/host-keys.conf",
    "# The host keys were removed when this image was prepared for cloning: each machine makes\n\
     # its own before sshd first starts (ssh-keygen -A makes only those missing).\n\
     [Service]\nExecStartPre=\nExecStartPre=/usr/bin/ssh-keygen -A\nExecStartPre=/usr/sbin/sshd -t\n",
);

/// Runs virt-sysprep's [`APPLIED`] operations on `image`; with `ssh_unit`, the drop-in too
/// (Debian's ssh.service; RHEL's sshd makes its keys itself). `scratch` holds the drop-in's file.
pub async fn sysprep(image: &Path, ssh_unit: bool, logs: &[KeptLog], scratch: &Path) -> Result<(), EnrollError> {
    let ops: Vec<&str> = APPLIED.iter().map(|(op, _)| *op).collect();
    let mut cmd = tool("virt-sysprep");
    cmd.args(["--format", "qcow2"]).arg("-a").arg(image).args(["--operations", &ops.join(",")]);
    let file = scratch.join(format!(".host-keys-{}.conf", std::process::id()));
    if ssh_unit {
        let (dest, text) = SSH_DROP_IN;
        std::fs::write(&file, text).map_err(|e| EnrollError::Tool { tool: "virt-sysprep", reason: format!("{}: {e}", file.display()) })?;
        let dir = Path::new(dest).parent().map(|p| p.display().to_string()).unwrap_or_default();
        cmd.args(["--mkdir", &dir]).arg("--upload").arg(format!("{}:{dest}", file.display())).args(["--chmod", &format!("0644:{dest}")]);
    }
    cmd.args(NO_MACHINE_ID);
    let result = run("virt-sysprep", cmd, image, "").await;
    let _ = std::fs::remove_file(&file);
    result?;
    if logs.is_empty() {
        return Ok(());
    }
    // `logfiles` removed them: each put back empty as it was, by libguestfs' own calls (no
    // program of the guest's runs).
    let mut cmd = tool("guestfish");
    cmd.args(["--format=qcow2", "-a"]).arg(image).arg("-i");
    run("guestfish", cmd, image, &put_back(logs)).await.map(|_| ())
}

/// guestfish's script that makes each of `logs` an empty file with its owner, group and mode.
fn put_back(logs: &[KeptLog]) -> String {
    logs.iter().map(|l| format!("touch {p}\nchown {} {} {p}\nchmod 0{:o} {p}\n", l.uid, l.gid, l.mode & 0o7777, p = l.path)).collect()
}

/// A file rsyslog writes, as the disk had it before `logfiles` removed it: put back empty with
/// its owner, group and mode after virt-sysprep, so that the image reads as the run proved it
/// (the rsyslog files rules) and rsyslog appends to it at first boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptLog {
    pub path: String,
    pub uid: u32,
    pub gid: u32,
    pub mode: u32,
}

/// The files under `/var/log` that rsyslog's configuration (`/etc/rsyslog.conf`,
/// `/etc/rsyslog.d/*.conf`) writes to and `disk` holds as regular files.
pub fn rsyslog_logs(disk: &crate::DiskFiles) -> Vec<KeptLog> {
    use temper_core::handover::ImageView;
    let mut confs = vec!["/etc/rsyslog.conf".to_string()];
    confs.extend(
        disk.list("/etc/rsyslog.d").unwrap_or_default().into_iter().filter(|n| n.ends_with(".conf")).map(|n| format!("/etc/rsyslog.d/{n}")),
    );
    let mut paths: Vec<String> = Vec::new();
    for conf in confs {
        let text = disk.read(&conf).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
        for p in log_paths(&text) {
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
    }
    // Each folder listed once (one debugfs run each).
    let mut folders: std::collections::HashMap<String, Vec<crate::DiskEntry>> = std::collections::HashMap::new();
    let mut out = Vec::new();
    for path in paths {
        let Some((dir, name)) = path.rsplit_once('/') else { continue };
        let entries = folders.entry(dir.to_string()).or_insert_with(|| disk.entries(dir).unwrap_or_default());
        if let Some(e) = entries.iter().find(|e| e.name == name && e.mode & 0o170000 == 0o100000) {
            out.push(KeptLog { uid: e.uid, gid: e.gid, mode: e.mode, path });
        }
    }
    out
}

/// The files an rsyslog configuration writes to under `/var/log`: a selector line's action
/// (`auth.* /var/log/auth.log`, `-/var/log/syslog`) or an `omfile` action's `file="…"`.
fn log_paths(conf: &str) -> Vec<String> {
    let ok =
        |p: &str| p.starts_with("/var/log/") && !p.contains("..") && p.chars().all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c));
    let mut out = Vec::new();
    for line in conf.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('$')) {
        if let Some(at) = line.find("file=\"") {
            let rest = &line[at + 6..];
            out.extend(rest.split('"').next().filter(|p| ok(p)).map(str::to_string));
        } else if let Some(last) = line.split_whitespace().last() {
            let p = last.trim_start_matches('-');
            if line.split_whitespace().count() >= 2 && ok(p) {
                out.push(p.to_string());
            }
        }
    }
    out
}

/// libguestfs' customize step writes a machine id into an empty `/etc/machine-id` (after the
/// `machine-id` operation emptied it): emptied again, last.
pub const NO_MACHINE_ID: [&str; 2] = ["--truncate", "/etc/machine-id"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_operations_keep_the_users_way_in_and_say_why() {
        let applied: Vec<&str> = APPLIED.iter().map(|(o, _)| *o).collect();
        for must in ["machine-id", "ssh-hostkeys", "logfiles", "bash-history", "passwd-backups", "customize"] {
            assert!(applied.contains(&must), "{must}");
        }
        for never in ["ssh-userdir", "user-account", "fs-uuids"] {
            assert!(!applied.contains(&never), "{never} would take the image's users' way in");
        }
        assert!(APPLIED.iter().chain(LEFT_OUT).all(|(_, why)| why.len() > 15));
        assert!(SSH_DROP_IN.1.contains("ExecStartPre=\nExecStartPre=/usr/bin/ssh-keygen -A\nExecStartPre=/usr/sbin/sshd -t\n"));
    }

    #[test]
    fn rsyslogs_files_are_its_file_actions_under_var_log() {
        let conf = "# x\n$FileGroup adm\nauth,authpriv.*\t\t\t/var/log/auth.log\n*.*;auth,authpriv.none\t\t-/var/log/syslog\n\
                    action(type=\"omfile\" file=\"/var/log/cron.log\")\n*.emerg :omusrmsg:*\nmail.* /etc/passwd\nx.* /var/log/../shadow\n";
        assert_eq!(log_paths(conf), ["/var/log/auth.log", "/var/log/syslog", "/var/log/cron.log"]);
        let kept = KeptLog { path: "/var/log/auth.log".into(), uid: 0, gid: 4, mode: 0o100640 };
        assert_eq!(put_back(&[kept]), "touch /var/log/auth.log\nchown 0 4 /var/log/auth.log\nchmod 0640 /var/log/auth.log\n");
    }

    /// virt-sysprep knows every operation named here (its own list, on this host).
    #[test]
    fn virt_sysprep_knows_them() {
        let Ok(out) = std::process::Command::new("virt-sysprep").arg("--list-operations").output() else {
            panic!("virt-sysprep is missing: bash vm/host-deps.sh installs libguestfs-tools");
        };
        let text = String::from_utf8_lossy(&out.stdout);
        let known: Vec<&str> = text.lines().filter_map(|l| l.split_whitespace().next()).collect();
        for (op, _) in APPLIED.iter().chain(LEFT_OUT) {
            assert!(known.contains(op), "virt-sysprep has no `{op}`: {known:?}");
        }
        // `NAME * TEXT`: on by default. Each is applied or left out, with a reason.
        let defaults = text.lines().filter(|l| l.split_whitespace().nth(1) == Some("*")).filter_map(|l| l.split_whitespace().next());
        for d in defaults {
            assert!(APPLIED.iter().chain(LEFT_OUT).any(|(op, _)| *op == d), "virt-sysprep's default `{d}` is neither applied nor left out");
        }
    }
}
