//! `temper schedule show`: the unit files, and systemd's view of the timers when it is PID 1.
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use super::units::{self, Scope};
use super::{Place, ScheduleError};
use crate::cmd::print_json;

#[derive(Debug, Serialize)]
struct Schedule {
    name: String,
    timer_path: PathBuf,
    service_path: PathBuf,
    on_calendar: Option<String>,
    timer: String,
    service: String,
}

#[derive(Debug, Serialize)]
struct Shown {
    unit_dir: PathBuf,
    schedules: Vec<Schedule>,
    /// True when systemd is PID 1 here (`/run/systemd/system` exists).
    systemd_pid1: bool,
    /// `systemctl list-timers` for these timers, when systemd is PID 1.
    list_timers: Option<String>,
}

pub fn show(name: Option<&str>, place: &Place, json: bool) -> anyhow::Result<u8> {
    let dir = place.dir()?;
    let names = match name {
        Some(n) => {
            units::check_name(n)?;
            vec![n.to_string()]
        }
        None => all_names(&dir)?,
    };
    let mut schedules = Vec::new();
    for name in names {
        let (timer_path, service_path) = (dir.join(units::timer_file(&name)), dir.join(units::service_file(&name)));
        let read = |p: &Path| std::fs::read_to_string(p).map_err(ScheduleError::io("reading", p));
        let (timer, service) = match (read(&timer_path), read(&service_path)) {
            (Ok(t), Ok(s)) => (t, s),
            _ if !timer_path.exists() && !service_path.exists() => return Err(ScheduleError::NotFound { name, dir }.into()),
            (Err(e), _) | (_, Err(e)) => return Err(e.into()),
        };
        let on_calendar = timer.lines().find_map(|l| l.strip_prefix("OnCalendar=")).map(str::to_string);
        schedules.push(Schedule { name, timer_path, service_path, on_calendar, timer, service });
    }
    let systemd_pid1 = Path::new("/run/systemd/system").exists();
    let list_timers = (systemd_pid1 && !schedules.is_empty()).then(|| list_timers(place.scope(), &schedules));
    let shown = Shown { unit_dir: dir, schedules, systemd_pid1, list_timers };
    if json {
        print_json(&shown)?;
        return Ok(0);
    }
    if shown.schedules.is_empty() {
        println!("no schedules in {}", shown.unit_dir.display());
    }
    for s in &shown.schedules {
        println!("== {} ({})\n{}", s.timer_path.display(), s.on_calendar.as_deref().unwrap_or("no OnCalendar"), s.timer);
        println!("== {}\n{}", s.service_path.display(), s.service);
    }
    match &shown.list_timers {
        Some(out) => println!("{out}"),
        None if !systemd_pid1 => {
            println!("systemd is not PID 1 here (no /run/systemd/system): no timer state to show; the files above are what it would load")
        }
        None => {}
    }
    Ok(0)
}

/// The names of the `temper-NAME.timer` files in `dir`, sorted.
fn all_names(dir: &Path) -> Result<Vec<String>, ScheduleError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ScheduleError::io("reading", dir)(e)),
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|f| f.strip_prefix("temper-")?.strip_suffix(".timer").map(str::to_string))
        .filter(|n| units::check_name(n).is_ok())
        .collect();
    names.sort();
    Ok(names)
}

fn list_timers(scope: Scope, schedules: &[Schedule]) -> String {
    let mut cmd = Command::new("systemctl");
    if scope == Scope::User {
        cmd.arg("--user");
    }
    cmd.args(["list-timers", "--all", "--no-pager"]).args(schedules.iter().map(|s| units::timer_file(&s.name)));
    match cmd.output() {
        Ok(o) => format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)),
        Err(e) => format!("systemctl list-timers: {e}"),
    }
}
