//! An Ansible inventory for the test guest, from the harness's SSH settings (`TEMPER_SSH_*`).
//! Shared by `e2e_plan` and the `plan_replay` bench (`#[path]`).
use std::path::{Path, PathBuf};

use temper_target::SshConfig;

/// Writes `path`: one host, `name`, in group `guest`; returns `path`. Its host key is checked
/// against the keys temper pinned (`TEMPER_KNOWN_HOSTS_FILE`, recorded by `vm/up.sh`).
pub fn inventory(path: &Path, name: &str) -> PathBuf {
    let ssh = SshConfig::from_env().unwrap();
    let known = temper_target::KnownHosts::from_env();
    let line = format!(
        "[guest]\n{name} ansible_host={} ansible_port={} ansible_user={} ansible_ssh_private_key_file={} \
         ansible_ssh_common_args='-o StrictHostKeyChecking=yes -o UserKnownHostsFile={} -o GlobalKnownHostsFile=/dev/null'\n",
        ssh.host,
        ssh.port,
        ssh.user,
        ssh.key_path.display(),
        known.path().display()
    );
    std::fs::write(path, line).unwrap();
    path.to_path_buf()
}
