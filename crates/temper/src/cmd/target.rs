//! `temper target list`: the targets of temper.toml; `temper target enroll`: any VM made one
//! (`enroll.rs`); `temper target trust`: a guest's new SSH host key, recorded after a look
//! (`trust.rs`).
use clap::Subcommand;

use super::print_json;
use crate::config::Config;

#[derive(Debug, Subcommand)]
pub enum TargetCmd {
    /// Every target: `[[target]]` tables over the flat keys, or the flat keys alone as `default`.
    #[command(after_help = "Examples:\n  temper target list\n  temper target list --json")]
    List {
        #[arg(long)]
        json: bool,
    },
    /// Make any libvirt domain (shut off) or qcow2 image a temper target: the harness user with
    /// its own key and NOPASSWD sudo, openscap-scanner and the SSG content where missing, then
    /// start it and take the baseline snapshot. Prints its [[target]] table.
    #[command(
        after_help = "Examples:\n  temper target enroll --domain web-1 --ssh-port 2240 --check\n  temper target enroll --image rhel9.qcow2 --name rhel9 --ssh-port 2241"
    )]
    Enroll(super::enroll::EnrollArgs),
    /// Record the SSH host key a target's guest offers now, after a look: it shows the key
    /// recorded and the key offered, and asks; `--fingerprint` (checked on the guest's console)
    /// records it without asking, when it is the one offered.
    #[command(
        after_help = "Examples:\n  temper target trust default\n  temper target trust web-1 --fingerprint SHA256:3Xb1…   # from `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` on its console"
    )]
    Trust(super::trust::TrustArgs),
}

pub async fn run(config: &Config, cmd: TargetCmd) -> anyhow::Result<u8> {
    match cmd {
        TargetCmd::Enroll(args) => super::enroll::run(config, args).await,
        TargetCmd::Trust(args) => super::trust::run(config, args).await,
        TargetCmd::List { json } => {
            let targets = config.targets()?;
            // The one a command without `--target` takes, if any.
            let chosen = targets.get(None).ok().map(|t| t.name.clone());
            if json {
                let mut all = Vec::new();
                for t in targets.all() {
                    let mut v = serde_json::to_value(t)?;
                    v["chosen_by_default"] = (chosen.as_ref() == Some(&t.name)).into();
                    all.push(v);
                }
                print_json(&all)?;
                return Ok(0);
            }
            for t in targets.all() {
                let mark = if chosen.as_ref() == Some(&t.name) { "*" } else { " " };
                let profile = t.profile.as_deref().unwrap_or("(the skill's)");
                println!("{mark} {}\t{}\tskill {}\tprofile {profile}\tbaseline {}", t.name, t.label(), t.skill, t.baseline);
            }
            Ok(0)
        }
    }
}
