//! `temper target list`: the targets of temper.toml.
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
}

pub fn run(config: &Config, cmd: TargetCmd) -> anyhow::Result<u8> {
    match cmd {
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
