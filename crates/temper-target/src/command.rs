//! The command line sent over SSH: argv quoted word by word, under `timeout` so the guest
//! kills the whole process group on expiry, and under `sudo -n` when asked.
use std::time::Duration;

use temper_core::ports::{Exec, PortError};

/// Seconds `timeout` waits after SIGTERM before it sends SIGKILL.
pub(crate) const KILL_AFTER_SECS: u64 = 2;

/// Builds the remote command for `exec`. `sudo` comes first so `timeout` runs as root and can
/// signal everything the command started.
pub fn remote_command(exec: &Exec) -> Result<String, PortError> {
    if exec.argv.is_empty() {
        return Err(PortError::Other("exec: empty argv".into()));
    }
    if exec.timeout.is_zero() {
        return Err(PortError::Other("exec: zero timeout".into()));
    }
    let secs = timeout_arg(exec.timeout);
    let kill = KILL_AFTER_SECS.to_string();
    let mut words: Vec<&str> = Vec::with_capacity(exec.argv.len() + 6);
    if exec.sudo {
        words.extend(["sudo", "-n"]);
    }
    words.extend(["timeout", "-k", kill.as_str(), secs.as_str()]);
    words.extend(exec.argv.iter().map(String::as_str));
    shlex::try_join(words).map_err(|e| PortError::Other(format!("exec: cannot quote argv: {e}")))
}

/// `timeout` takes fractional seconds; millisecond precision is plenty.
fn timeout_arg(t: Duration) -> String {
    format!("{}.{:03}", t.as_secs(), t.subsec_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sudo_wraps_timeout_and_argv_is_quoted() {
        let e = Exec::new(["printf", "%s", "it's $HOME `x` \"y\""]).timeout(Duration::from_millis(5500));
        let cmd = remote_command(&e).unwrap();
        assert!(cmd.starts_with("sudo -n timeout -k 2 5.500 printf "), "{cmd}");
        assert_eq!(shlex::split(&cmd).unwrap()[6..], ["printf", "%s", "it's $HOME `x` \"y\""]);
    }

    #[test]
    fn as_user_has_no_sudo() {
        let cmd = remote_command(&Exec::new(["id", "-un"]).as_user()).unwrap();
        assert_eq!(cmd, "timeout -k 2 60.000 id -un");
    }

    #[test]
    fn nul_and_empty_argv_are_errors() {
        assert!(remote_command(&Exec::new(["printf", "a\0b"])).is_err());
        assert!(remote_command(&Exec::new(Vec::<String>::new())).is_err());
        assert!(remote_command(&Exec::new(["true"]).timeout(Duration::ZERO)).is_err());
    }
}
