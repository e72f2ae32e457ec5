//! The deny-list: scripts are checked before they run. A refused script is an attempt
//! with its reason, never an execution.
use regex::Regex;

/// Where a deny pattern came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenySource {
    Builtin,
    Skill,
    /// A Reflector ban, from this run or an earlier one.
    Ban,
}

impl DenySource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Builtin => "builtin",
            Self::Skill => "skill",
            Self::Ban => "ban",
        }
    }
}

#[derive(Debug, Clone)]
pub struct DenyRule {
    pub pattern: Regex,
    pub reason: String,
    pub source: DenySource,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DenyRefusal {
    pub pattern: String,
    pub reason: String,
    pub source: DenySource,
    /// The first line of the script that matched.
    pub line: String,
}

impl std::fmt::Display for DenyRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "refused by {} rule `{}` ({}): {}", self.source.as_str(), self.pattern, self.reason, self.line)
    }
}

#[derive(Debug, Clone, Default)]
pub struct DenyList {
    rules: Vec<DenyRule>,
}

/// Built-in patterns, with `{user}` replaced by the harness user's name.
const BUILTIN: &[(&str, &str)] = &[
    (r"(?m)(^|[;&|`(]\s*|\bsudo\s+|\bexec\s+)(reboot|poweroff|halt|shutdown)\b", "reboots or powers off the machine"),
    (r"\bsystemctl\s+(--\S+\s+)*(reboot|poweroff|halt|kexec|soft-reboot|emergency|rescue)\b", "reboots or changes the machine's state"),
    (r"\b(tel)?init\s+[06]\b", "reboots or halts the machine"),
    (
        r"\bsystemctl\s+(--\S+\s+)*(stop|disable|mask|kill)\s+(\S+\s+)*(ssh|sshd|ssh\.service|sshd\.service|ssh\.socket)\b",
        "stops or disables sshd",
    ),
    (r"\bservice\s+sshd?\s+stop\b", "stops sshd"),
    (r"\b(pkill|killall)\s+(-\S+\s+)*sshd?\b", "kills sshd"),
    (r"\bupdate-rc\.d\s+sshd?\s+(remove|disable)\b", "disables sshd"),
    (r"/etc/sudoers\.d/{user}\b", "touches the harness user's sudo rule"),
    (r"/home/{user}/\.ssh\b", "touches the harness user's SSH keys"),
    (r"\b(userdel|deluser)\s+(-\S+\s+)*{user}\b", "removes the harness user"),
    (r"\b(gpasswd\s+-d|deluser)\s+{user}\s+(sudo|wheel)\b", "removes the harness user's sudo"),
    (r"\b(usermod|passwd|chage)\s+(\S+\s+)*-(L|l|e|E)\b(\s+\S+)*\s+{user}\b", "locks or expires the harness user"),
    (r"\busermod\s+(\S+\s+)*-s\s+\S*(nologin|false)\S*\s+{user}\b", "takes the harness user's shell"),
    (r"(sed|perl)\b[^\n]*NOPASSWD", "rewrites NOPASSWD sudo rules, the harness's included"),
    (r"(?m)\brm\s+(-\S+\s+)*(--no-preserve-root\s+)?(-\S+\s+)*/(\*)?(\s|;|$)", "removes the root filesystem"),
    (r"--no-preserve-root", "removes the root filesystem"),
    (r"\bmkfs(\.\w+)?\s", "formats a filesystem"),
    (r"\bdd\s+[^\n]*of=/dev/(vd|sd|nvme|hd)", "overwrites a disk"),
];

impl DenyList {
    /// The built-in rules for the harness user `user`.
    pub fn builtin(user: &str) -> Self {
        let user = regex::escape(user);
        let rules = BUILTIN
            .iter()
            .map(|(p, r)| DenyRule {
                pattern: Regex::new(&p.replace("{user}", &user)).expect("built-in deny pattern compiles"),
                reason: (*r).to_string(),
                source: DenySource::Builtin,
            })
            .collect();
        Self { rules }
    }

    /// Adds a pattern; one that does not compile is returned as an error and not added.
    pub fn add(&mut self, pattern: &str, reason: &str, source: DenySource) -> Result<(), regex::Error> {
        self.rules.push(DenyRule { pattern: Regex::new(pattern)?, reason: reason.to_string(), source });
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Checks a script; the first matching rule refuses it.
    pub fn check(&self, script: &str) -> Result<(), DenyRefusal> {
        for rule in &self.rules {
            if let Some(m) = rule.pattern.find(script) {
                let line =
                    script[..m.end()].rsplit('\n').next().unwrap_or("").to_string() + script[m.end()..].split('\n').next().unwrap_or("");
                return Err(DenyRefusal {
                    pattern: rule.pattern.as_str().to_string(),
                    reason: rule.reason.clone(),
                    source: rule.source,
                    line: line.trim().to_string(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(s: &str) -> bool {
        DenyList::builtin("temper").check(s).is_err()
    }

    #[test]
    fn refuses_destructive_commands() {
        for s in [
            "reboot",
            "sudo shutdown -r now",
            "echo x; poweroff",
            "systemctl reboot",
            "systemctl stop sshd",
            "systemctl disable --now ssh.service",
            "systemctl mask ssh",
            "service ssh stop",
            "pkill -9 sshd",
            "rm -f /etc/sudoers.d/temper",
            "echo 'temper ALL=(ALL) ALL' > /etc/sudoers.d/temper",
            "truncate -s0 /home/temper/.ssh/authorized_keys",
            "userdel -r temper",
            "gpasswd -d temper sudo",
            "passwd -l temper",
            "usermod -s /sbin/nologin temper",
            "sed -i '/NOPASSWD/d' /etc/sudoers.d/*",
            "rm -rf /",
            "rm -rf --no-preserve-root /",
            "rm -rf /*",
            "init 6",
        ] {
            assert!(refused(s), "should refuse: {s}");
        }
    }

    #[test]
    fn allows_ordinary_hardening() {
        for s in [
            "sed -i 's/^#\\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config\nsystemctl reload sshd",
            "systemctl restart sshd",
            "apt-get install -y auditd && systemctl enable --now auditd",
            "rm -rf /tmp/build",
            "echo 'shutdown hook' > /etc/motd",
            "chmod 0600 /etc/ssh/sshd_config",
            "systemctl stop rsync.service",
            "usermod -L games",
        ] {
            assert!(DenyList::builtin("temper").check(s).is_ok(), "should allow: {s}");
        }
    }

    #[test]
    fn user_name_is_escaped_and_specific() {
        let d = DenyList::builtin("ops.bot");
        assert!(d.check("rm /etc/sudoers.d/ops.bot").is_err());
        assert!(d.check("rm /etc/sudoers.d/opsXbot").is_ok());
    }

    #[test]
    fn bans_refuse_with_their_source_and_line() {
        let mut d = DenyList::builtin("temper");
        d.add(r"authselect\s+select", "broke PAM last time", DenySource::Ban).unwrap();
        let r = d.check("set -e\nauthselect select sssd --force\necho done").unwrap_err();
        assert_eq!(r.source, DenySource::Ban);
        assert_eq!(r.line, "authselect select sssd --force");
        assert!(d.add("(", "bad", DenySource::Ban).is_err());
    }
}
