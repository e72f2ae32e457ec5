//! The command line (clap, derive). Every read command takes `--json`.
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use temper_agents::AgentKind;
use temper_journal::Engine;
use temper_journal::MemoryKind;
use temper_journal::{MemoryId, RunId};
use temper_report::Format;

#[derive(Debug, Parser)]
#[command(name = "temper", version, about = "Hardens a VM against a SCAP profile, one verified fix at a time.")]
#[command(
    after_help = "Examples:\n  temper doctor\n  temper run --agent stock --max-rules 5\n  temper report latest --format html -o report.html"
)]
pub struct Cli {
    /// The config file; `TEMPER_*` variables and flags override it.
    #[arg(long, global = true, env = "TEMPER_CONFIG", default_value = "temper.toml")]
    pub config: PathBuf,
    /// Lines on stderr: text (coloured only on a terminal) or json (one object per line).
    #[arg(long, global = true, env = "TEMPER_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: crate::telemetry::LogFormat,
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Build, start, stop or inspect the test VM.
    #[command(after_help = "Examples:\n  temper vm up\n  temper vm status --json")]
    Vm {
        #[arg(value_enum)]
        action: VmAction,
        #[command(flatten)]
        target: TargetArg,
        #[arg(long)]
        json: bool,
    },
    /// Check every prerequisite and say what to do about each failure.
    #[command(after_help = "Examples:\n  temper doctor --json\n  temper doctor --target b\n  temper doctor --all")]
    Doctor {
        #[command(flatten)]
        target: TargetArg,
        /// Check every target.
        #[arg(long, conflicts_with = "target")]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// The targets of temper.toml (`[[target]]` tables, or the flat keys as `default`).
    #[command(subcommand)]
    Target(crate::cmd::target::TargetCmd),
    /// Scan the VM with oscap, or read a results file.
    #[command(subcommand)]
    Scan(ScanCmd),
    /// Read SCAP content: profiles and rules of a datastream.
    #[command(subcommand)]
    Content(ContentCmd),
    /// Harden the VM: the Ralph loop.
    #[command(
        after_help = "Examples:\n  temper run --agent stock --profile xccdf_org.ssgproject.content_profile_standard\n  temper run --agent tiered --llm http://127.0.0.1:8000/v1 --model qwen --max-rules 10"
    )]
    Run(RunArgs),
    /// Continue an unfinished run (after a crash or a pause) from its last checkpoint.
    #[command(after_help = "Examples:\n  temper resume\n  temper resume 3 --llm http://127.0.0.1:8000/v1")]
    Resume {
        /// The run id; the newest unfinished run when omitted.
        run: Option<RunId>,
        #[command(flatten)]
        agent: AgentArgs,
        /// No progress line.
        #[arg(long)]
        quiet: bool,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show a run's progress, from the database (works while a run goes on).
    #[command(after_help = "Examples:\n  temper status\n  temper status 3 --json")]
    Status {
        run: Option<RunId>,
        #[arg(long)]
        json: bool,
    },
    /// Write a run's report or checklist, or a fleet's report (`fleet [NAME]`).
    #[command(
        after_help = "Examples:\n  temper report latest --format html -o report.html\n  temper report 3 --format ckl -o run3.ckl\n  temper report fleet night --format html -o night.html"
    )]
    Report {
        /// A run id, `latest`, or `fleet` for a fleet's report (md, html or json).
        #[arg(default_value = "latest")]
        run: String,
        /// With `fleet`: the fleet's name; the newest fleet when omitted.
        fleet: Option<String>,
        #[arg(long, value_enum, default_value = "md")]
        format: Format,
        /// Output file; stdout when omitted.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// The hardened image: a run's final state as a standalone qcow2, with its evidence.
    #[command(subcommand)]
    Image(crate::cmd::image::ImageCmd),
    /// The proven plan: a run's kept fixes, exported to apply elsewhere (bash, Ansible, `temper run --plan`).
    #[command(subcommand)]
    Plan(crate::cmd::plan::PlanCmd),
    /// Check an LLM endpoint.
    #[command(subcommand)]
    Llm(LlmCmd),
    /// Review and forget what temper has learned: lessons, bans and tips.
    #[command(subcommand)]
    Memory(MemoryCmd),
    /// Run `temper run` on a systemd timer (e.g. nightly): install, show, remove.
    #[command(subcommand)]
    Schedule(crate::cmd::schedule::ScheduleCmd),
    /// Serve a live, read-only web view of the runs (loopback unless a token is set).
    Serve(crate::cmd::serve::ServeArgs),
    /// The fleet queue (PostgreSQL): put targets on it, list it.
    #[command(subcommand)]
    Fleet(crate::cmd::fleet::FleetCmd),
    /// Take targets off the fleet queue and run them; start one per host, or several.
    #[command(after_help = "Examples:\n  temper worker\n  temper worker --once --name lab-1")]
    Worker(crate::cmd::fleet::WorkerArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum VmAction {
    Build,
    Up,
    Down,
    Status,
}

#[derive(Debug, Subcommand)]
pub enum ScanCmd {
    /// Scan the configured VM (the whole profile, or `--rule` repeated).
    #[command(after_help = "Example:\n  temper scan run --rule xccdf_org.ssgproject.content_rule_sshd_disable_root_login --json")]
    Run {
        #[command(flatten)]
        target: TargetArg,
        #[arg(long = "rule")]
        rules: Vec<String>,
        #[arg(long)]
        profile: Option<String>,
        /// An XCCDF 1.2 tailoring file, passed to oscap (`--tailoring-file`).
        #[arg(long)]
        tailoring_file: Option<PathBuf>,
        /// How named rules are evaluated: `oval` (one small OVAL document cut on the host,
        /// `oscap oval eval` in the guest, with evidence) or `xccdf` (`oscap xccdf eval --rule`).
        #[arg(long, default_value = "oval")]
        engine: Engine,
        /// With `--engine oval`: print each failing rule's evidence.
        #[arg(long)]
        evidence: bool,
        /// Include notselected in the counts.
        #[arg(long)]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Read an XCCDF results (or ARF) file.
    #[command(after_help = "Example:\n  temper scan parse results.xml --json")]
    Parse {
        file: PathBuf,
        #[arg(long)]
        all: bool,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ContentCmd {
    /// The profiles of a datastream.
    #[command(after_help = "Example:\n  temper content profiles ssg-rhel9-ds.xml --json")]
    Profiles {
        datastream: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// The rules a profile selects, with ids, DISA references and resolved stock fixes.
    #[command(
        after_help = "Examples:\n  temper content rules ssg-rhel9-ds.xml --profile xccdf_org.ssgproject.content_profile_stig --json\n  temper content rules ssg-debian12-ds.xml --tailoring-file tailoring.xml"
    )]
    Rules {
        datastream: PathBuf,
        /// The profile; with `--tailoring-file`, one of its profiles (or the profile it extends),
        /// and optional when it has only one.
        #[arg(long, required_unless_present = "tailoring_file")]
        profile: Option<String>,
        /// An XCCDF tailoring file: list the rules its tailored profile selects.
        #[arg(long)]
        tailoring_file: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Clone, Args)]
pub struct AgentArgs {
    /// stock (default without an LLM), llm, or tiered (default with an LLM).
    #[arg(long, value_enum)]
    pub agent: Option<AgentKind>,
    /// OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1
    #[arg(long)]
    pub llm: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
}

/// `--target NAME`, where a command works on one target.
#[derive(Debug, Clone, Default, Args)]
pub struct TargetArg {
    /// A target of temper.toml (`temper target list`); when omitted, the only one or `default`.
    #[arg(long = "target", id = "target", value_name = "NAME")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArg,
    #[command(flatten)]
    pub agent: AgentArgs,
    /// The skill (a folder under skills/); overrides the target's.
    #[arg(long)]
    pub skill: Option<String>,
    /// Overrides the target's and the skill's profile.
    #[arg(long)]
    pub profile: Option<String>,
    /// Only these rules (short or full ids, comma separated or repeated).
    #[arg(long, value_delimiter = ',')]
    pub rules: Vec<String>,
    /// An XCCDF 1.2 tailoring file (SCAP Workbench, autotailor): its profile, selections and
    /// values apply to the rules offered, the stock fixes and every scan.
    #[arg(long)]
    pub tailoring_file: Option<PathBuf>,
    /// A waivers file (`[[waiver]]` with rule, reason, approved_by, expires), on top of the skill's.
    #[arg(long)]
    pub waivers: Option<PathBuf>,
    #[arg(long)]
    pub max_rules: Option<usize>,
    #[arg(long)]
    pub rule_budget_secs: Option<u64>,
    #[arg(long)]
    pub max_attempts: Option<u32>,
    /// Kept fixes per regression-set rescan; by default measured from the first scan (1 on
    /// small profiles: the set rides in every rule rescan).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub regression_every: Option<u32>,
    /// How rule rescans and regression checks are evaluated: `oval` (the OVAL engine, with the
    /// failing items as evidence for the agents and the report) or `xccdf` (`oscap xccdf eval
    /// --rule`, which loads the whole datastream each time). First and final scans are xccdf.
    #[arg(long, default_value = "oval")]
    pub engine: Engine,
    /// Skip the reboot proof: no cold reboot at the end, so nothing shows the fixes survive one.
    #[arg(long)]
    pub no_reboot_proof: bool,
    /// Apply a proven plan (`temper plan export`) first: its steps in order, each checked as any
    /// fix; a step that fails goes to the normal loop. Refused when its content, profile,
    /// tailoring or scripts do not match.
    #[arg(long, value_name = "DIR")]
    pub plan: Option<PathBuf>,
    /// The keys a plan may be signed by: an allowed-signers file, in the format of git's
    /// `gpg.ssh.allowedSignersFile` (`PRINCIPAL KEYTYPE KEY` a line). Default: allowed_signers_file.
    #[arg(long, value_name = "FILE", requires = "plan")]
    pub allowed_signers: Option<PathBuf>,
    /// Apply a plan without checking its signature (one that is not signed is refused without).
    #[arg(long, requires = "plan", conflicts_with = "allowed_signers")]
    pub unsigned: bool,
    /// The full loop, no plan first. By default a run applies the proven plan of its target's
    /// last finished run of the same job (skill, profile, rules, tailoring, waivers, content),
    /// when that run passed its reboot proof, as `--plan` would.
    #[arg(long, conflicts_with = "plan")]
    pub no_plan: bool,
    /// No progress line (e.g. in CI logs).
    #[arg(long)]
    pub quiet: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum LlmCmd {
    /// Send one Worker-shaped request and say whether the endpoint can drive temper.
    #[command(after_help = "Example:\n  temper llm probe --llm http://127.0.0.1:8089/v1 --model qwen --json")]
    Probe {
        #[arg(long)]
        llm: Option<String>,
        #[arg(long)]
        model: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum MemoryCmd {
    /// List what temper remembers (all kinds, or one).
    #[command(after_help = "Example:\n  temper memory list --kind bans --json")]
    List {
        #[arg(long, value_enum)]
        kind: Option<MemoryKind>,
        #[arg(long)]
        json: bool,
    },
    /// Show one item.
    #[command(after_help = "Example:\n  temper memory show bans 3")]
    Show {
        #[arg(value_enum)]
        kind: MemoryKind,
        id: MemoryId,
        #[arg(long)]
        json: bool,
    },
    /// Forget one item (it stays in the database, inactive; a fix is retired).
    #[command(after_help = "Example:\n  temper memory forget lessons 7")]
    Forget {
        #[arg(value_enum)]
        kind: MemoryKind,
        id: MemoryId,
    },
    /// Approve a lesson, ban or tip for its skill, after a look (`memory show`): until then it
    /// holds only on the target of the run that learned it. A ban is checked again first.
    #[command(after_help = "Example:\n  temper memory show bans 3\n  temper memory approve bans 3 --by alice")]
    Approve {
        #[arg(value_enum)]
        kind: MemoryKind,
        id: MemoryId,
        /// Who approves it (recorded); default: the login name ($SUDO_USER, else $USER).
        #[arg(long)]
        by: Option<String>,
    },
}

/// `temper run` arguments given as a list (a schedule's, a queue item's), read as `temper run`
/// reads its own; the error is clap's message.
pub fn parse_run_args(args: &[String]) -> Result<RunArgs, String> {
    #[derive(Debug, Parser)]
    #[command(name = "temper run", no_binary_name = true)]
    struct RunLine {
        #[command(flatten)]
        run: RunArgs,
    }
    RunLine::try_parse_from(args).map(|l| l.run).map_err(|e| e.render().to_string().trim().to_string())
}
