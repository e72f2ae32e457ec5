//! `temper run` and `temper resume`: the Ralph loop on the configured VM.
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use temper_agents::AgentKind;
use temper_core::claim::{self, Claim, TargetClaim};
use temper_core::lease::{Lease, LeaseError};
use temper_core::ports::{Clock, Hypervisor, Timed};
use temper_core::ralph::{Agents, LoopError, Parts, Quiet, Ralph, RebootProof, Settings};
use temper_core::script::Watch;
use temper_journal::Engine;
use temper_journal::RunSummary;
use temper_journal::plan::PlanOrigin;
use temper_journal::prelude::*;
use temper_journal::target::Target;
use temper_journal::{EventData, NewRun, Run, RunStatus};
use temper_store::Store;
use tracing::Level;

use super::last_plan::{self, NoPlan};
use super::{EXIT_ERROR, EXIT_PAUSED, print_json};
use crate::cli::{AgentArgs, RunArgs};
use crate::config::Config;
use crate::progress::{CliProgress, hms};
use crate::telemetry::notice;
use crate::wiring;
use temper_journal::RunId;

/// What a run was started with; stored so `resume` continues the same run.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RunOptions {
    /// Skill, profile, rules, controls and content: what makes two runs one job.
    #[serde(flatten)]
    job: last_plan::Job,
    rule_budget_secs: u64,
    max_attempts: u32,
    regression_every: Option<u32>,
    llm_url: Option<String>,
    llm_model: Option<String>,
    quiet: bool,
    json: bool,
    /// How rule rescans and regression checks are evaluated.
    #[serde(default)]
    engine: Engine,
    /// The fleet the run belongs to (`temper fleet run`, `temper worker`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fleet: Option<String>,
    /// A cold reboot at the end proves the fixes (runs from before it have none).
    #[serde(default)]
    reboot_proof: bool,
    /// The proven plan the run applies first (`--plan`, or the job's last proven one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    plan: Option<super::plan::AppliedPlan>,
    /// Why it applies none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    no_plan: Option<NoPlan>,
    /// What `temper fleet run --plan-from` did with its first target's plan, for this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    plan_from: Option<temper_journal::plan_from::PlanFrom>,
}

/// Where a run comes from when not from `temper run` itself.
#[derive(Debug, Clone, Default)]
pub struct RunOrigin {
    /// Groups the fleet's runs.
    pub fleet: Option<String>,
    /// The fleet queue item the run is for: the run is recorded on it as soon as it exists.
    pub queue_item: Option<i64>,
    /// `temper fleet run --plan-from`: the first target's plan, handed on or withheld.
    pub plan_from: Option<temper_journal::plan_from::PlanFrom>,
}

pub async fn start(config: &Config, args: RunArgs) -> anyhow::Result<u8> {
    let target = config.target(args.target.name.as_deref())?;
    start_on(config, target, args, RunOrigin::default()).await
}

/// `temper run` on `target`. A fleet queue item's run is recorded on the item as soon as it
/// exists, so a worker that takes the item over resumes that run.
pub async fn start_on(config: &Config, mut target: Target, args: RunArgs, origin: RunOrigin) -> anyhow::Result<u8> {
    if let Some(s) = &args.skill {
        target.skill = s.clone();
    }
    let skill = wiring::skill(config, &target.skill)?;
    let profile = args.profile.clone().or(target.profile.clone()).unwrap_or(skill.manifest.profile.clone());
    let tailoring = args.tailoring_file.as_deref().or(config.tailoring_file.as_deref());
    let waivers = args.waivers.as_deref().or(config.waivers_file.as_deref());
    let (controls, profile) = crate::controls::read(&skill, &profile, tailoring, waivers)?;
    let llm_url = args.agent.llm.clone().or(config.llm_url.clone());
    let kind = args.agent.agent.unwrap_or(if llm_url.is_some() { AgentKind::Tiered } else { AgentKind::Stock });
    let content_sha256 = temper_journal::plan::sha256_file(&wiring::host_datastream(config, &skill)).ok();
    // A plan given is checked before anything is recorded: one that does not fit makes no run.
    let given = match &args.plan {
        Some(dir) => {
            let trust = super::plan::trust(args.unsigned, args.allowed_signers.clone().or(config.allowed_signers_file.clone()), dir)?;
            if args.unsigned {
                eprintln!("temper: the signature of the plan in {} is not checked (--unsigned)", dir.display());
            }
            let at = temper_journal::plan::Applying { now: chrono::Utc::now(), target: Some(&target.name), fleet: origin.fleet.as_deref() };
            let r = super::plan::ForRun {
                trust: &trust,
                profile: &profile,
                controls: &controls,
                content_sha256: content_sha256.as_deref(),
                at,
            };
            Some(super::plan::for_run(dir, &r)?)
        }
        None => None,
    };
    let job = last_plan::Job {
        skill: target.skill.clone(),
        profile: profile.clone(),
        rules: args.rules.clone(),
        max_rules: args.max_rules,
        controls,
        content_sha256,
    };
    let store = crate::wiring::store(config).await?;
    let (plan, no_plan) = match given {
        Some(p) => (Some(p), None),
        None if args.no_plan => (None, Some(NoPlan::Off)),
        None => match last_plan::take(config, &store, &target, &job).await? {
            Ok(applied) => (Some(applied), None),
            Err(why) => (None, Some(why)),
        },
    };
    let opts = RunOptions {
        job,
        rule_budget_secs: args.rule_budget_secs.unwrap_or(config.rule_budget_secs),
        max_attempts: args.max_attempts.unwrap_or(config.max_attempts),
        regression_every: args.regression_every.or(config.regression_every),
        llm_url,
        llm_model: args.agent.model.clone().or(config.llm_model.clone()),
        quiet: args.quiet,
        json: args.json,
        engine: args.engine,
        fleet: origin.fleet,
        reboot_proof: config.reboot_proof && !args.no_reboot_proof,
        plan,
        no_plan,
        plan_from: origin.plan_from,
    };
    // Another run on this VM, from any store, keeps this one off before anything is recorded.
    let free = claim::check(&wiring::hypervisor(&target), &store.identity().await?, None).await;
    if let Err(e) = free {
        notice(Level::ERROR, format_args!("target {} ({}): {e}", target.name, target.label()));
        return Ok(EXIT_ERROR);
    }
    // A guest that offers another host key than the one recorded gets no run: nothing is recorded
    // or sent to it.
    if let Err(e) = wiring::check_host_key(config, &target).await {
        notice(Level::ERROR, format_args!("{e:#}"));
        return Ok(EXIT_ERROR);
    }
    let new = NewRun {
        skill: target.skill.clone(),
        profile,
        datastream: skill.manifest.datastream.clone(),
        content_version: None,
        target: target.label(),
        agent: kind.as_str().into(),
        options_json: serde_json::to_string(&opts)?,
        baseline: target.baseline.clone(),
    };
    let run = store.create_run_on(&new, &target).await?;
    if let Some(item) = origin.queue_item {
        store.set_queue_run(item, run).await?;
    }
    notice(
        Level::INFO,
        format_args!(
            "run {run} started on target {} ({}) from snapshot {} ({} agent, db {})",
            target.name,
            target.label(),
            target.baseline,
            kind.as_str(),
            store.describe()
        ),
    );
    match (&opts.plan, &opts.no_plan) {
        (Some(p), _) if p.origin == PlanOrigin::LastProven => notice(
            Level::INFO,
            format_args!(
                "run {run} applies the proven plan of run {} (the last run of this job on target {}, {} steps) before the normal loop; --no-plan runs the full loop",
                p.from_run,
                target.name,
                p.fixes.len()
            ),
        ),
        (Some(p), _) => {
            let (dir, from, steps) = (&p.dir, p.from_run, p.fixes.len());
            notice(Level::INFO, format_args!("run {run} applies the plan in {dir} (run {from}'s, {steps} steps) before the normal loop"));
        }
        // A first run, or one told so, needs no word; a run that could have had one says why not.
        (None, Some(why)) if !matches!(why, NoPlan::Off | NoPlan::NoEarlierRun) => {
            notice(Level::INFO, format_args!("run {run} applies no plan first: {}", why.says()))
        }
        (None, _) => {}
    }
    execute(config, Arc::new(store), RunToDrive { run, target, kind, opts, resuming: false }).await
}

pub async fn resume(config: &Config, run: Option<RunId>, agent: AgentArgs, quiet: bool, json: bool) -> anyhow::Result<u8> {
    let store = crate::wiring::store(config).await?;
    let row = match run {
        Some(id) => store.run(id).await?,
        None => store.unfinished_run().await?.context("no unfinished run to resume")?,
    };
    if row.status == RunStatus::Finished {
        anyhow::bail!("run {} is finished (exit code {:?}); start a new one with `temper run`", row.id, row.exit_code);
    }
    let mut opts: RunOptions = serde_json::from_str(&row.options_json).context("the run's stored options")?;
    if agent.llm.is_some() {
        opts.llm_url = agent.llm;
    }
    if agent.model.is_some() {
        opts.llm_model = agent.model;
    }
    opts.quiet |= quiet;
    opts.json |= json;
    let kind = agent.agent.or_else(|| AgentKind::parse(&row.agent)).unwrap_or(AgentKind::Stock);
    let target = stored_target(config, &row, &opts)?;
    if let Err(e) = wiring::check_host_key(config, &target).await {
        notice(Level::ERROR, format_args!("run {} is not resumed: {e:#}", row.id));
        return Ok(EXIT_ERROR);
    }
    notice(
        Level::INFO,
        format_args!(
            "resuming run {} from checkpoint {} (was {} in {}) on target {} ({})",
            row.id,
            row.checkpoint,
            row.status,
            row.phase,
            target.name,
            target.label()
        ),
    );
    execute(config, Arc::new(store), RunToDrive { run: row.id, target, kind, opts, resuming: true }).await
}

/// The target a run was started on, as stored with it, whatever the config says now. A run
/// from before targets were stored goes on with the configured one, its skill and baseline kept.
fn stored_target(config: &Config, row: &Run, opts: &RunOptions) -> anyhow::Result<Target> {
    if let Some(t) = &row.target_config {
        return Ok(t.clone());
    }
    let mut t = config.target(None)?;
    notice(Level::WARN, format_args!("run {} has no stored target (an older run): using the configured target `{}`", row.id, t.name));
    t.skill = opts.job.skill.clone();
    t.baseline = row.baseline.clone();
    Ok(t)
}

/// One run to drive: on what, with which agent and options.
struct RunToDrive {
    run: RunId,
    target: Target,
    kind: AgentKind,
    opts: RunOptions,
    /// A resume: the run is marked running again and the resume recorded.
    resuming: bool,
}

/// Takes the run's lease (refused while another live process drives it), then drives the run.
async fn execute(config: &Config, store: Arc<Store>, job: RunToDrive) -> anyhow::Result<u8> {
    let run = job.run;
    let clock = Arc::new(Clock::default());
    let journal: Arc<dyn Journal> = store.clone();
    let lease = match Lease::take(journal, run, clock.clone()).await {
        Ok(l) => l,
        Err(e @ LeaseError::Held { .. }) => {
            notice(Level::ERROR, format_args!("{e}"));
            return Ok(EXIT_ERROR);
        }
        Err(e) => return Err(e.into()),
    };
    store.lease_guards_item(run).await?;
    let hv: Arc<dyn Hypervisor> = Arc::new(wiring::hypervisor(&job.target));
    let mine = Claim::new(&*store, run, lease.driver.clone()).await?;
    let held = match TargetClaim::take(hv, mine, lease.term()).await {
        Ok(c) => c,
        Err(e) => {
            notice(Level::ERROR, format_args!("run {run} on target {}: {e}", job.target.name));
            lease.release().await?;
            return Ok(EXIT_ERROR);
        }
    };
    if job.resuming {
        let row = store.run(run).await?;
        store.set_status(run, RunStatus::Running, None).await?;
        let was = EventData::Resume { was: row.status, phase: row.phase, checkpoint: row.checkpoint };
        store.event(run, None, &was).await?;
    }
    let code = drive(config, &store, &lease, job).await;
    if let Err(e) = held.release().await {
        notice(Level::WARN, format_args!("releasing run {run}'s claim on its target: {e}"));
    }
    if let Err(e) = lease.release().await {
        notice(Level::WARN, format_args!("releasing run {run}: {e}"));
    }
    code
}

async fn drive(config: &Config, store: &Store, lease: &Lease, job: RunToDrive) -> anyhow::Result<u8> {
    let RunToDrive { run, target, kind, opts, .. } = job;
    let skill = wiring::skill(config, &opts.job.skill)?;
    let ds = wiring::host_datastream(config, &skill);
    let content = opts.job.controls.read_content(&opts.job.profile, &ds).with_context(|| format!("reading {}", ds.display()))?;
    store.set_content_version(run, &content.version).await?;
    let llm = wiring::llm_config(config, opts.llm_url.clone(), opts.llm_model.clone());
    let agent = wiring::agents(kind, llm, &skill)?;
    let (hv, guest) = (wiring::hypervisor(&target), wiring::guest(config, &target)?);
    let clock = lease.clock();
    let progress = (!opts.quiet).then(CliProgress::new);
    let mut scanner = wiring::scanner(config, &skill, &opts.job.profile).for_run(run);
    let side = wiring::oval(config, &skill, content.clone())?;
    if opts.engine == Engine::Oval {
        scanner = scanner.with_oval(side.clone());
    }
    let judge = wiring::offline_judge(config, &target, &side);
    let skill = crate::controls::apply(&opts.job.controls, skill, &mut scanner)?;
    let parts = Parts {
        store,
        hv: &Timed { inner: &hv, clock },
        guest: &Timed { inner: &guest, clock },
        agents: Agents { architect: agent.as_ref(), worker: agent.as_ref(), reflector: agent.as_ref() },
        skill: &skill,
        content: &content,
        scanner,
        settings: Settings {
            user: target.ssh_user.clone(),
            health_command: target.health_command.clone(),
            baseline: target.baseline.clone(),
            rules: opts.job.rules.clone(),
            max_rules: opts.job.max_rules,
            rule_budget: Duration::from_secs(opts.rule_budget_secs),
            max_attempts: opts.max_attempts,
            // The stock agent has one fix per rule: ask the Architect after every failure.
            reengage_every: if kind == AgentKind::Stock { 1 } else { config.reengage_every },
            fix_watch: Watch {
                cap: Duration::from_secs(config.fix_timeout_secs),
                stall_after: Duration::from_secs(config.fix_stall_secs),
                ..Watch::default()
            },
            regression_every: opts.regression_every,
            reboot: opts.reboot_proof.then(|| RebootProof {
                grace: Duration::from_secs(config.shutdown_grace_secs),
                boot_timeout: Duration::from_secs(config.boot_timeout_secs),
            }),
            plan: opts.plan.as_ref().map(|p| p.fixes.clone()).unwrap_or_default(),
            plan_cadence: opts.plan.as_ref().and_then(|p| p.regression_every),
            // A plan's derived step, derived again from this target's own evidence.
            derive: Some(temper_agents::derived::again),
            ..Settings::default()
        },
        observer: progress.as_ref().map_or(&Quiet as &dyn temper_core::ralph::Observer, |p| p),
        offline: judge.as_ref().map(|j| j as &dyn temper_core::ports::OfflineJudge),
    };
    let result = Ralph::new(parts, lease).run().await;
    if let Some(p) = &progress {
        p.finish();
    }
    match result {
        Ok(summary) => {
            // The proof passed: this process seals the plan it proved, for the job's next run.
            if summary.rebooted == Some(true) {
                match last_plan::seal_at_end(config, store, run).await {
                    Ok(dir) => notice(Level::INFO, format_args!("run {run}'s plan is sealed with this host's key in {}", dir.display())),
                    Err(e) => {
                        notice(Level::WARN, format_args!("run {run}'s plan could not be sealed (the next run does the full loop): {e:#}"))
                    }
                }
            }
            if opts.json {
                print_json(&summary)?;
            } else {
                print_summary(run, &summary);
            }
            Ok(summary.exit_code as u8)
        }
        Err(LoopError::Paused { run, reason }) => {
            notice(Level::WARN, format_args!("run {run} paused: the LLM is unavailable ({reason}); `temper resume` continues it"));
            Ok(EXIT_PAUSED)
        }
        Err(e) => {
            let msg = e.to_string();
            let _ = store.set_status(run, RunStatus::Interrupted, Some(&msg)).await;
            let _ = store.event(run, None, &EventData::Error { error: msg.clone() }).await;
            notice(Level::ERROR, format_args!("run {run} stopped: {msg}"));
            notice(Level::INFO, format_args!("fix the cause, then `temper resume {run}` continues from the last checkpoint"));
            Ok(EXIT_ERROR)
        }
    }
}

fn print_summary(run: RunId, s: &RunSummary) {
    let join = |m: &std::collections::BTreeMap<String, usize>| m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
    println!("run {run} finished, exit code {}", s.exit_code);
    println!("  rules:   {}", join(&s.statuses));
    println!("  before:  {}  (score {:?})", join(&s.before), s.score_before);
    println!("  after:   {}  (score {:?})", join(&s.after), s.score_after);
    println!("  reboot:  {}", temper_journal::reboot_line(s.rebooted));
    println!("  attempts {}, reverts: {}", s.attempts, join(&s.reverts));
    println!("  tokens:  {} prompt, {} completion", s.prompt_tokens, s.completion_tokens);
    println!(
        "  time:    {} wall = {:.1}s guest + {:.1}s llm + {:.1}s harness ({:.2}%)",
        hms(s.wall_secs as u64),
        s.guest_secs,
        s.llm_secs,
        s.harness_secs,
        s.harness_pct
    );
    if !s.failing_after.is_empty() {
        println!("  still failing after the final scan: {}", s.failing_after.join(", "));
    }
}
