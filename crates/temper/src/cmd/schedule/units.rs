//! The two systemd units of a schedule, as text: `temper-<name>.timer` fires
//! `temper-<name>.service`, a oneshot that runs `temper schedule fire`.
use std::path::{Path, PathBuf};
use std::process::Command;

use super::ScheduleError;
use crate::telemetry::LogFormat;

/// A failed run's retry delay (exit 75, or a crash), and the cap on starts: at most
/// `START_BURST` starts in `START_WINDOW`, then systemd stops retrying until the next timer.
pub const RETRY_AFTER: &str = "15min";
const START_WINDOW: &str = "6h";
const START_BURST: u32 = 12;

/// Which systemd manager the units are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    System,
    User,
}

impl Scope {
    /// `systemctl` or `systemctl --user`.
    pub fn systemctl(self) -> &'static str {
        match self {
            Self::System => "systemctl",
            Self::User => "systemctl --user",
        }
    }

    /// Where the manager reads administrator units from.
    pub fn default_dir(self) -> Result<PathBuf, ScheduleError> {
        match self {
            Self::System => Ok(PathBuf::from("/etc/systemd/system")),
            Self::User => std::env::var_os("XDG_CONFIG_HOME")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")))
                .map(|d| d.join("systemd/user"))
                .ok_or(ScheduleError::NoHome),
        }
    }
}

/// A schedule's name: letters, digits, `-` and `_` (it becomes part of the unit names).
pub fn check_name(name: &str) -> Result<(), ScheduleError> {
    let ok = (1..=64).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok { Ok(()) } else { Err(ScheduleError::BadName(name.into())) }
}

pub fn service_file(name: &str) -> String {
    format!("temper-{name}.service")
}

pub fn timer_file(name: &str) -> String {
    format!("temper-{name}.timer")
}

/// `--at`: `HH:MM` every day, or any OnCalendar expression that `systemd-analyze calendar` accepts.
pub fn on_calendar(at: &str) -> Result<String, ScheduleError> {
    let at = at.trim();
    if let Some((h, m)) = at.split_once(':')
        && !m.contains(':')
        && [h, m].iter().all(|p| !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit()))
    {
        let bad = |why: String| ScheduleError::BadTime { at: at.into(), why };
        let (h, m): (u32, u32) = (h.parse().unwrap_or(99), m.parse().unwrap_or(99));
        if h > 23 {
            return Err(bad(format!("the hour is {h}; it must be 00 to 23")));
        }
        if m > 59 {
            return Err(bad(format!("the minute is {m}; it must be 00 to 59")));
        }
        return Ok(format!("*-*-* {h:02}:{m:02}:00"));
    }
    let out = Command::new("systemd-analyze").args(["calendar", "--", at]).output().map_err(|e| ScheduleError::BadTime {
        at: at.into(),
        why: format!("not HH:MM, and `systemd-analyze calendar` could not check it ({e})"),
    })?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(ScheduleError::BadTime { at: at.into(), why: format!("systemd-analyze calendar: {why}") });
    }
    Ok(at.to_string())
}

/// Everything the two units say.
#[derive(Debug, Clone)]
pub struct Units {
    pub name: String,
    pub scope: Scope,
    /// An OnCalendar expression.
    pub calendar: String,
    /// Absolute: the temper binary, the config file, the working directory.
    pub exe: PathBuf,
    pub config: PathBuf,
    pub workdir: PathBuf,
    pub log_format: LogFormat,
    /// Loaded into the service's environment (secrets such as `TEMPER_LLM_API_KEY` stay there).
    pub env_file: Option<PathBuf>,
    /// `temper run` arguments, passed through `schedule fire`.
    pub run_args: Vec<String>,
}

impl Units {
    pub fn service(&self) -> String {
        let name = &self.name;
        let mut exec = vec![self.exe.display().to_string(), "--config".into(), self.config.display().to_string(), "--log-format".into()];
        exec.extend([self.log_format.as_str().into(), "schedule".into(), "fire".into(), "--name".into(), name.clone(), "--".into()]);
        exec.extend(self.run_args.iter().cloned());
        let exec = exec.iter().map(|w| exec_word(w)).collect::<Vec<_>>().join(" ");
        let after = match self.scope {
            Scope::System => "After=network-online.target libvirtd.service\nWants=network-online.target\n",
            Scope::User => "",
        };
        let env_file = self.env_file.as_ref().map(|f| format!("EnvironmentFile={}\n", escape_specifiers(&f.display().to_string())));
        format!(
            "# Written by `temper schedule install`; `temper schedule remove --name {name}` deletes it.
# `temper schedule fire` resumes the unfinished run, else starts one. Its exit code, as systemd takes it:
#   0   every failing rule fixed or dispositioned   success
#   2   some rules remain (failing, escalated)      success (SuccessExitStatus=2)
#   75  paused: the LLM stayed unavailable          failure, retried after RestartSec (fire resumes the run)
#   a crash or a kill (a signal, any other code)    failure, retried the same way
#   1   an error                                    failure, not retried (RestartPreventExitStatus=1);
#                                                   the next timer resumes the interrupted run
# At most {START_BURST} starts in {START_WINDOW} (StartLimit*). systemd 252 refuses RestartForceExitStatus= on a
# oneshot service, hence Restart=on-failure with the exceptions above.
[Unit]
Description=temper scheduled run ({name})
{after}StartLimitIntervalSec={START_WINDOW}
StartLimitBurst={START_BURST}

[Service]
Type=oneshot
WorkingDirectory={workdir}
ExecStart={exec}
{env}SuccessExitStatus=2
Restart=on-failure
RestartPreventExitStatus=1
RestartSec={RETRY_AFTER}
TimeoutStartSec=infinity
",
            workdir = escape_specifiers(&self.workdir.display().to_string()),
            env = env_file.unwrap_or_default(),
        )
    }

    pub fn timer(&self) -> String {
        let (name, service) = (&self.name, service_file(&self.name));
        format!(
            "# Written by `temper schedule install`: fires {service}. Persistent: a time missed while the
# machine was off fires at the next boot.
[Unit]
Description=temper scheduled run ({name}): timer

[Timer]
OnCalendar={calendar}
Persistent=true
Unit={service}

[Install]
WantedBy=timers.target
",
            calendar = escape_specifiers(&self.calendar),
        )
    }
}

/// `%` starts a specifier in every unit setting.
fn escape_specifiers(s: &str) -> String {
    s.replace('%', "%%")
}

/// One ExecStart word: as is when plain, else double-quoted with C escapes. `%` and `$` are
/// doubled, so specifiers and variables are never expanded.
fn exec_word(s: &str) -> String {
    let plain = !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@".contains(c));
    let s = escape_specifiers(s).replace('$', "$$");
    if plain {
        return s;
    }
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hh_mm_becomes_a_daily_calendar_and_out_of_range_is_refused() {
        assert_eq!(on_calendar("02:00").unwrap(), "*-*-* 02:00:00");
        assert_eq!(on_calendar("7:05").unwrap(), "*-*-* 07:05:00");
        let e = on_calendar("25:00").unwrap_err().to_string();
        assert!(e.contains("hour is 25"), "{e}");
        assert!(on_calendar("12:60").unwrap_err().to_string().contains("minute is 60"));
    }

    #[test]
    fn names_are_unit_safe() {
        assert!(check_name("nightly").is_ok() && check_name("rhel9_stig-2").is_ok());
        for bad in ["", "-x", "a b", "a/b", "a@b", "a.timer"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn exec_words_are_quoted_and_never_expanded() {
        assert_eq!(exec_word("--agent"), "--agent");
        assert_eq!(exec_word("/usr/bin/temper"), "/usr/bin/temper");
        assert_eq!(exec_word("a b"), "\"a b\"");
        assert_eq!(exec_word("100%"), "\"100%%\"");
        assert_eq!(exec_word("$HOME"), "\"$$HOME\"");
        assert_eq!(exec_word("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
        assert_eq!(exec_word(";"), "\";\"");
        assert_eq!(exec_word(""), "\"\"");
    }
}
