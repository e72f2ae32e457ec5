//! `temper target enroll`: any libvirt domain (shut off), or any qcow2 image, made a temper
//! target. libguestfs adds what the disk lacks (the harness user with its own new key and
//! NOPASSWD sudo, openscap-scanner, the SSG datastream); then the domain is defined (for an
//! image) and started, access is checked, the `baseline` snapshot taken, and the target's
//! `[[target]]` table printed. `--check` only says what is missing. The guest's SSH host keys
//! are read from the disk (made there when it has none) and pinned before the first connection.
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use temper_core::ports::{Exec, Guest, Hypervisor};
use temper_journal::target::Target;

use temper_target::{DirectBoot, DomainSpec, Harness, KnownHosts, LibvirtConfig, LibvirtHypervisor, PublicKey, SshConfig, SshGuest};

use crate::config::Config;

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["domain", "image"])))]
pub struct EnrollArgs {
    /// A defined libvirt domain, shut off (its first file disk is changed).
    #[arg(long)]
    pub domain: Option<String>,
    /// A qcow2 image: changed in place, then defined as domain NAME.
    #[arg(long)]
    pub image: Option<PathBuf>,
    /// The target's (and, for an image, the domain's) name; default: the domain or image name.
    #[arg(long)]
    pub name: Option<String>,
    /// Where the guest's SSH answers on the host: for an image, the port forwarded from 127.0.0.1.
    #[arg(long, default_value_t = 2230)]
    pub ssh_port: u16,
    #[arg(long, default_value_t = Target::default().ssh_host)]
    pub ssh_host: String,
    /// The harness user to create.
    #[arg(long, default_value_t = Target::default().ssh_user)]
    pub user: String,
    /// For an image without a bootloader: the kernel, initrd and command line to boot it with.
    #[arg(long)]
    pub kernel: Option<String>,
    #[arg(long, requires = "kernel")]
    pub initrd: Option<String>,
    #[arg(long, requires = "kernel")]
    pub cmdline: Option<String>,
    #[arg(long, default_value_t = 1536)]
    pub memory_mib: u32,
    /// Only say what the disk lacks; change nothing. Exit 0 when nothing is missing, else 2.
    #[arg(long)]
    pub check: bool,
}

pub async fn run(config: &Config, args: EnrollArgs) -> anyhow::Result<u8> {
    let name = args.name.clone().or(args.domain.clone()).unwrap_or_else(|| stem(args.image.as_deref()));
    let hv = LibvirtHypervisor::new(LibvirtConfig { uri: config.base.libvirt_uri.clone(), domain: name.clone() });
    let disk = match (&args.domain, &args.image) {
        (Some(d), _) => {
            let domain = LibvirtHypervisor::new(LibvirtConfig { uri: config.base.libvirt_uri.clone(), domain: d.clone() });
            let (disk, running) = domain.disk().await?;
            if running && !args.check {
                bail!("domain `{d}` is running: shut it down (`virsh shutdown {d}`), then enroll it");
            }
            disk
        }
        (None, Some(image)) => std::fs::canonicalize(image).with_context(|| format!("image {}", image.display()))?,
        (None, None) => unreachable!("clap requires one"),
    };
    let key = temper_journal::target::vm_dir().join("keys").join(format!("{name}_ed25519"));
    let skill = crate::wiring::skill(config, &config.base.skill)?;
    let harness = Harness {
        user: args.user.clone(),
        public_key: key.with_extension("pub"),
        datastream: config.content_dir.join(&skill.manifest.datastream),
        guest_content_dir: config.guest_content_dir.clone(),
    };
    let found = temper_target::inspect(&disk, &harness).await?;
    let missing = found.missing();
    for (what, ok) in found.checks() {
        println!("  {} {what}", if ok { "ok     " } else { "MISSING" });
    }
    if args.check {
        println!("{}: {}", disk.display(), if missing.is_empty() { "ready".into() } else { format!("lacks {}", missing.join(", ")) });
        return Ok(if missing.is_empty() { 0 } else { 2 });
    }
    if !found.key {
        new_key(&key)?;
    }
    let mut found = found;
    let footprint = found.footprint(&harness);
    if !missing.is_empty() {
        temper_target::prepare(&disk, &harness, &found).await?;
        // Said only once the image is looked at again: virt-customize can succeed and add nothing.
        found = temper_target::inspect(&disk, &harness).await?;
        let still = found.missing();
        if !still.is_empty() {
            bail!("{} still lacks {} after virt-customize was run to add it: see its output above", disk.display(), still.join(", "));
        }
        println!("added: {}", missing.join(", "));
    }
    // The host keys as the disk holds them, pinned before the first connection.
    let host_keys = found.host_keys.iter().map(|k| temper_target::parse_key(k)).collect::<Result<Vec<_>, _>>()?;
    let known = KnownHosts::new(&config.known_hosts_file);
    let was = known.record(&args.ssh_host, args.ssh_port, &host_keys, &format!("temper-enroll:{name}"))?;
    let fps = |keys: &[PublicKey]| keys.iter().map(temper_target::fingerprint).collect::<Vec<_>>().join(", ");
    println!(
        "recorded the host keys of {} from the disk in {}: {}{}",
        temper_target::host_pattern(&args.ssh_host, args.ssh_port),
        known.path().display(),
        fps(&host_keys),
        if was.is_empty() || was == host_keys { String::new() } else { format!(" (in place of {})", fps(&was)) }
    );
    if args.image.is_some() {
        let direct_boot =
            args.kernel.clone().map(|kernel| DirectBoot { kernel, initrd: args.initrd.clone(), cmdline: args.cmdline.clone() });
        let spec = DomainSpec {
            name: name.clone(),
            disk: disk.clone(),
            memory_mib: args.memory_mib,
            ssh_port: args.ssh_port,
            direct_boot,
            console: None,
        };
        hv.define(&spec).await?;
    }
    hv.start().await?;
    let ssh = SshConfig {
        host: args.ssh_host.clone(),
        port: args.ssh_port,
        user: args.user.clone(),
        key_path: key.clone(),
        ..SshConfig::default()
    }
    .pinned_in(known);
    let guest = SshGuest::new(ssh)?;
    guest.reconnect(Duration::from_secs(300)).await.context("the enrolled guest over SSH")?;
    let sudo = guest.exec(Exec::new(["true"])).await?;
    if !sudo.success() {
        bail!("`sudo -n true` fails in the enrolled guest: {}", sudo.stderr_str().trim());
    }
    let baseline = Target::default().baseline;
    hv.snapshot_create(&baseline, "temper baseline, taken at enrollment").await?;
    println!(
        "enrolled {name}: domain running, SSH as {} on {}:{}, snapshot {baseline}. Add to temper.toml:\n",
        args.user, args.ssh_host, args.ssh_port
    );
    println!(
        "[[target]]\nname = {}\nlibvirt_uri = {}\ndomain = {}\nbaseline = {}\nssh_host = {}\nssh_port = {}\nssh_user = {}\nssh_key = {}\n\
         # What temper added here; `temper image export` takes it away again.\nfootprint = {}\n\
         # health_command = \"...\"   # your service's check: prints HEALTHY, exits 0",
        toml_str(&name),
        toml_str(&config.base.libvirt_uri),
        toml_str(&name),
        toml_str(&baseline),
        toml_str(&args.ssh_host),
        args.ssh_port,
        toml_str(&args.user),
        toml_str(&key.display().to_string()),
        footprint_toml(&footprint),
    );
    Ok(0)
}

fn stem(image: Option<&Path>) -> String {
    image.and_then(|p| p.file_stem()).map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "enrolled".into())
}

/// The footprint as a TOML inline table.
fn footprint_toml(f: &temper_journal::footprint::Footprint) -> String {
    let list = |v: &[String]| format!("[{}]", v.iter().map(|s| toml_str(s)).collect::<Vec<_>>().join(", "));
    format!(
        "{{ user = {}, key = {}, sudo_rule = {}, packages = {}, files = {}, dirs = {} }}",
        f.user,
        f.key,
        f.sudo_rule,
        list(&f.packages),
        list(&f.files),
        list(&f.dirs)
    )
}

fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A new ed25519 key for this target only, never printed.
fn new_key(key: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(key.parent().unwrap_or(Path::new(".")))?;
    let _ = std::fs::remove_file(key);
    let _ = std::fs::remove_file(key.with_extension("pub"));
    let out = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "temper"])
        .arg("-f")
        .arg(key)
        .output()
        .context("ssh-keygen")?;
    if !out.status.success() {
        bail!("ssh-keygen: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}
