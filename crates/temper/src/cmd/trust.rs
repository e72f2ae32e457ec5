//! `temper target trust NAME`: the guest's SSH host key, recorded after a person looked at it.
//! The key the guest offers is read in the key exchange alone (nothing is sent to it), shown
//! beside the one recorded, and recorded when the person says yes, or when `--fingerprint`
//! names it. A guest whose key changed gets no run until then.
use std::io::{BufRead, IsTerminal, Write};

use anyhow::bail;
use clap::Args;
use temper_target::{KnownHosts, fingerprint, host_pattern};

use crate::config::Config;
use crate::wiring;

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The target (`temper target list`).
    pub name: String,
    /// The fingerprint the guest must offer (`SHA256:…`, as `ssh-keygen -lf` prints it on the
    /// guest's console): recorded without asking when it is that one, refused when it is not.
    #[arg(long)]
    pub fingerprint: Option<String>,
}

pub async fn run(config: &Config, args: TrustArgs) -> anyhow::Result<u8> {
    let target = config.target(Some(&args.name))?;
    let ssh = wiring::ssh_config(config, &target);
    let known = KnownHosts::new(&config.known_hosts_file);
    let host = host_pattern(&ssh.host, ssh.port);
    let recorded = known.keys(&ssh.host, ssh.port)?;
    let offered = temper_target::offered_host_key(&ssh).await?;
    let fp = fingerprint(&offered);
    let algo = offered.algorithm().to_string();
    println!("target {} ({}), {host}:", target.name, target.label());
    if recorded.is_empty() {
        println!("  recorded: none (in {})", known.path().display());
    }
    for k in &recorded {
        println!("  recorded: {} ({})", fingerprint(k), k.algorithm());
    }
    println!("  offered:  {fp} ({algo})");
    if recorded.iter().any(|k| k.key_data() == offered.key_data()) {
        println!("the key it offers is the one recorded: nothing to do");
        return Ok(0);
    }
    match args.fingerprint.as_deref().map(str::trim) {
        Some(want) if want == fp => {}
        Some(want) => bail!("the guest offers {fp}, not {want}: nothing was recorded (someone may be posing as the guest)"),
        None if !std::io::stdin().is_terminal() => {
            bail!("not a terminal, so nothing was recorded: check the key on the guest's console, then pass --fingerprint {fp}")
        }
        None => {
            print!(
                "Check it on the guest's console (ssh-keygen -lf /etc/ssh/ssh_host_{}_key.pub). Record {fp} as the host key of {}? [y/N] ",
                algo.trim_start_matches("ssh-"),
                target.name
            );
            std::io::stdout().flush()?;
            let mut answer = String::new();
            std::io::stdin().lock().read_line(&mut answer)?;
            if !matches!(answer.trim(), "y" | "Y" | "yes") {
                println!("nothing was recorded");
                return Ok(1);
            }
        }
    }
    let was = known.record(&ssh.host, ssh.port, std::slice::from_ref(&offered), &format!("temper-trust:{}", target.name))?;
    let old = was.iter().map(fingerprint).collect::<Vec<_>>().join(", ");
    println!(
        "recorded {fp} as the host key of {} ({host}) in {}{}",
        target.name,
        known.path().display(),
        if old.is_empty() { String::new() } else { format!(", in place of {old}") }
    );
    Ok(0)
}
