//! `temper schedule`: `temper run` on a systemd timer, e.g. every night. `install` writes a
//! timer and a oneshot service, `show` prints them (and systemd's view when it is PID 1),
//! `remove` deletes them; the service runs `schedule fire`, which never overlaps itself and
//! resumes an unfinished run before it starts a new one.
mod fire;
mod show;
mod units;

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use crate::config::Config;
use crate::telemetry::LogFormat;
use units::{Scope, Units};

/// The exit codes of `schedule fire` (those of `temper run`), as the service takes them.
fn exit_codes() -> String {
    format!(
        "Exit codes of `schedule fire` (those of `temper run`) and what the service does with them:
  0   every failing rule fixed or dispositioned   success
  2   some rules remain                           success (SuccessExitStatus=2)
  75  paused: the LLM stayed unavailable          retried after {} (Restart=on-failure), resuming the run
  1   an error                                    failed, not retried (RestartPreventExitStatus=1)
  a crash or a kill                               retried like 75",
        units::RETRY_AFTER
    )
}

#[derive(Debug, Subcommand)]
pub enum ScheduleCmd {
    /// Write `temper-NAME.timer` and `temper-NAME.service`: `temper run ARGS` at `--at`.
    #[command(after_help = format!(
        "Examples:\n  temper schedule install --at 02:00 -- --agent stock --quiet\n  \
         temper schedule install --at 'Mon..Fri 01:30' --name weekdays --user -- --agent tiered --llm http://127.0.0.1:8000/v1\n\n{}\n\n\
         The service runs this binary with this config file (absolute paths) in this directory. TEMPER_* variables \
         of this shell are not carried: put settings in the config file, secrets in --env-file.",
        exit_codes()
    ))]
    Install(InstallArgs),
    /// Print the units, and `systemctl list-timers` for them when systemd is PID 1.
    #[command(after_help = "Examples:\n  temper schedule show\n  temper schedule show --name nightly --json")]
    Show {
        /// One schedule; all `temper-*` units in the directory when omitted.
        #[arg(long)]
        name: Option<String>,
        #[command(flatten)]
        place: Place,
        #[arg(long)]
        json: bool,
    },
    /// Delete a schedule's units (then `systemctl daemon-reload`).
    #[command(after_help = "Example:\n  temper schedule remove --name nightly")]
    Remove {
        #[arg(long, default_value = "nightly")]
        name: String,
        #[command(flatten)]
        place: Place,
    },
    /// What the timer runs: resume the unfinished run, else start `temper run ARGS`; skipped (exit
    /// 0) while another fire of this schedule holds its lock.
    #[command(after_help = format!("Example:\n  temper schedule fire --name nightly -- --agent stock --quiet\n\n{}", exit_codes()))]
    Fire {
        #[arg(long, default_value = "nightly")]
        name: String,
        /// `temper run` arguments; on a resume only --agent, --llm, --model, --quiet and --json apply.
        #[arg(last = true)]
        run_args: Vec<String>,
    },
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// `HH:MM` every day, or any systemd OnCalendar expression (checked with `systemd-analyze calendar`).
    #[arg(long)]
    pub at: String,
    #[arg(long, default_value = "nightly")]
    pub name: String,
    #[command(flatten)]
    pub place: Place,
    /// A file of `KEY=value` lines for the service's environment (e.g. TEMPER_LLM_API_KEY).
    #[arg(long)]
    pub env_file: Option<PathBuf>,
    /// The `temper run` arguments, after `--` (a fleet's `--fleet NAME` will go here too).
    #[arg(last = true)]
    pub run_args: Vec<String>,
}

/// Where the units live.
#[derive(Debug, Args)]
pub struct Place {
    /// A user unit (~/.config/systemd/user) instead of a system one (/etc/systemd/system).
    #[arg(long)]
    pub user: bool,
    /// Another directory (tests, packagers).
    #[arg(long)]
    pub unit_dir: Option<PathBuf>,
}

impl Place {
    fn scope(&self) -> Scope {
        if self.user { Scope::User } else { Scope::System }
    }

    fn dir(&self) -> Result<PathBuf, ScheduleError> {
        self.unit_dir.clone().map_or_else(|| self.scope().default_dir(), Ok)
    }
}

/// What the command line said besides the subcommand.
pub struct Ctx<'a> {
    pub config: &'a Config,
    /// The `--config` file, as given.
    pub config_file: &'a Path,
    pub log_format: LogFormat,
}

#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error("--at {at:?}: {why}")]
    BadTime { at: String, why: String },
    #[error("schedule name {0:?}: use letters, digits, `-` and `_` (up to 64, starting with a letter or digit)")]
    BadName(String),
    #[error("the run arguments: {0}")]
    BadRunArgs(String),
    #[error("no schedule named {name} in {}", dir.display())]
    NotFound { name: String, dir: PathBuf },
    #[error("--user needs HOME or XDG_CONFIG_HOME")]
    NoHome,
    #[error("{what} {}: {source}", path.display())]
    Io { what: &'static str, path: PathBuf, source: std::io::Error },
}

impl ScheduleError {
    fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_path_buf();
        move |source| Self::Io { what, path, source }
    }
}

pub async fn run(ctx: Ctx<'_>, cmd: ScheduleCmd) -> anyhow::Result<u8> {
    match cmd {
        ScheduleCmd::Install(args) => install(&ctx, args),
        ScheduleCmd::Show { name, place, json } => show::show(name.as_deref(), &place, json),
        ScheduleCmd::Remove { name, place } => remove(&name, &place),
        ScheduleCmd::Fire { name, run_args } => fire::fire(ctx.config, &name, run_args).await,
    }
}

fn install(ctx: &Ctx<'_>, args: InstallArgs) -> anyhow::Result<u8> {
    units::check_name(&args.name)?;
    let calendar = units::on_calendar(&args.at)?;
    fire::parse_run_args(&args.run_args)?;
    let dir = args.place.dir()?;
    let cwd = std::env::current_dir().map_err(ScheduleError::io("the current directory", Path::new(".")))?;
    let units = Units {
        name: args.name.clone(),
        scope: args.place.scope(),
        calendar,
        exe: std::env::current_exe().map_err(ScheduleError::io("this binary", Path::new("temper")))?,
        config: std::path::absolute(ctx.config_file).map_err(ScheduleError::io("the config file", ctx.config_file))?,
        workdir: cwd.clone(),
        log_format: ctx.log_format,
        env_file: args.env_file.map(|f| cwd.join(f)),
        run_args: args.run_args,
    };
    std::fs::create_dir_all(&dir).map_err(ScheduleError::io("creating", &dir))?;
    for (file, text) in [(units::service_file(&args.name), units.service()), (units::timer_file(&args.name), units.timer())] {
        let path = dir.join(file);
        let verb = if path.exists() { "replaced" } else { "wrote" };
        std::fs::write(&path, text).map_err(ScheduleError::io("writing", &path))?;
        println!("{verb} {}", path.display());
    }
    if !units.config.is_file() {
        println!("note: {} does not exist (yet): the run will use the defaults", units.config.display());
    }
    let carried = ["TEMPER_CONFIG", "TEMPER_LOG_FORMAT"];
    let loose: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| k.starts_with("TEMPER_") && !carried.contains(&k.as_str()))
        .collect();
    if !loose.is_empty() {
        println!("note: {} set in this shell, not in the unit: put them in the config file or --env-file", loose.join(", "));
    }
    let systemctl = units.scope.systemctl();
    println!("next: {systemctl} daemon-reload && {systemctl} enable --now {}", units::timer_file(&args.name));
    Ok(0)
}

fn remove(name: &str, place: &Place) -> anyhow::Result<u8> {
    units::check_name(name)?;
    let dir = place.dir()?;
    let timer = units::timer_file(name);
    let paths = [dir.join(&timer), dir.join(units::service_file(name)), dir.join("timers.target.wants").join(&timer)];
    let mut removed = 0;
    for path in paths.iter().filter(|p| p.symlink_metadata().is_ok()) {
        std::fs::remove_file(path).map_err(ScheduleError::io("removing", path))?;
        println!("removed {}", path.display());
        removed += 1;
    }
    if removed == 0 {
        return Err(ScheduleError::NotFound { name: name.into(), dir }.into());
    }
    let systemctl = place.scope().systemctl();
    println!("next: {systemctl} stop {timer} (if it is active) and {systemctl} daemon-reload");
    Ok(0)
}
