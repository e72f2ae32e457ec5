//! The host's own look at the handed-over image: what of temper's is still there, read from its
//! files (a read-only listing of the disk, no code from the guest). The manifest calls a thing
//! removed only when this finds none of it.
use serde::Serialize;
use temper_journal::footprint::Footprint;

use super::{Item, RUN_TRACES};

/// A disk's files, read on the host.
pub trait ImageView {
    /// A file's bytes; `None` when there is no such file.
    fn read(&self, path: &str) -> Option<Vec<u8>>;
    /// A folder's entries' names; `None` when there is no such folder.
    fn list(&self, dir: &str) -> Option<Vec<String>>;
    fn exists(&self, path: &str) -> bool;
}

/// What the image must not hold.
#[derive(Debug, Clone)]
pub struct Expect<'a> {
    pub user: &'a str,
    /// The harness's public key, `TYPE BASE64`.
    pub public_key: Option<&'a str>,
    pub footprint: &'a Footprint,
    /// The dependencies the handover removed with temper's packages.
    pub dependencies: &'a [String],
}

/// Something of temper's the image still holds, and where it was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Leftover {
    pub item: Item,
    pub what: String,
    pub found_in: String,
}

/// The account files a user or its group appears in (and their backups).
const ACCOUNT_FILES: &[&str] = &[
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/gshadow",
    "/etc/subuid",
    "/etc/subgid",
    "/etc/passwd-",
    "/etc/shadow-",
    "/etc/group-",
    "/etc/gshadow-",
    "/etc/subuid-",
    "/etc/subgid-",
];

/// Everything of temper's `view` still holds, per what `e` says temper put there.
pub fn leftovers(view: &dyn ImageView, e: &Expect) -> Vec<Leftover> {
    let mut out = Vec::new();
    let mut found = |item: Item, what: &str, found_in: &str| out.push(Leftover { item, what: what.into(), found_in: found_in.into() });
    let text = |p: &str| view.read(p).map(|b| String::from_utf8_lossy(&b).into_owned());
    let f = e.footprint;
    if f.user {
        for file in ACCOUNT_FILES {
            let named = |l: &str| l.split(':').next() == Some(e.user);
            let member = |l: &str| {
                (file.contains("group") || file.contains("gshadow"))
                    && l.rsplit(':').next().is_some_and(|m| m.split(',').any(|u| u == e.user))
            };
            if text(file).is_some_and(|t| t.lines().any(|l| named(l) || member(l))) {
                found(Item::User, e.user, file);
            }
        }
        let home = format!("/home/{}", e.user);
        if view.exists(&home) {
            found(Item::Home, &home, &home);
        }
        for spool in [format!("/var/mail/{}", e.user), format!("/var/spool/mail/{}", e.user)] {
            if view.exists(&spool) {
                found(Item::User, e.user, &spool);
            }
        }
    }
    if f.sudo_rule {
        let own = format!("/etc/sudoers.d/{}", e.user);
        if view.exists(&own) {
            found(Item::SudoRule, &own, &own);
        }
        let mut files = vec!["/etc/sudoers".to_string()];
        files.extend(view.list("/etc/sudoers.d").unwrap_or_default().into_iter().map(|n| format!("/etc/sudoers.d/{n}")));
        for file in files.iter().filter(|p| **p != own) {
            if text(file).is_some_and(|t| t.lines().any(|l| l.split_whitespace().next() == Some(e.user))) {
                found(Item::SudoRule, &format!("a rule for {}", e.user), file);
            }
        }
    }
    if let (true, Some(key)) = (f.key, e.public_key.and_then(|k| k.split_whitespace().nth(1))) {
        let mut homes = vec!["/root".to_string()];
        homes.extend(view.list("/home").unwrap_or_default().into_iter().map(|h| format!("/home/{h}")));
        for h in homes {
            let ak = format!("{h}/.ssh/authorized_keys");
            if text(&ak).is_some_and(|t| t.contains(key)) {
                found(Item::Key, "the harness's public key", &ak);
            }
        }
    }
    let status = text("/var/lib/dpkg/status");
    let installed = dpkg_installed(status.as_deref().unwrap_or_default());
    for (item, names) in [(Item::Package, &f.packages), (Item::Dependency, &e.dependencies.to_vec())] {
        for p in names.iter().filter(|p| installed.contains(&p.as_str())) {
            found(item, p, "/var/lib/dpkg/status");
        }
    }
    for file in &f.files {
        if view.exists(file) {
            found(Item::File, file, file);
        }
    }
    for trace in RUN_TRACES {
        match trace.strip_suffix('*') {
            Some(prefix) => {
                let (dir, stem) = prefix.rsplit_once('/').unwrap_or(("", prefix));
                for n in view.list(dir).unwrap_or_default().into_iter().filter(|n| n.starts_with(stem)) {
                    found(Item::Trace, trace, &format!("{dir}/{n}"));
                }
            }
            None if view.exists(trace) => found(Item::Trace, trace, trace),
            None => {}
        }
    }
    out
}

/// The packages dpkg's status file has in any state but purged ("not-installed").
pub fn dpkg_installed(status: &str) -> Vec<&str> {
    status
        .split("\n\n")
        .filter_map(|stanza| {
            let field = |name: &str| stanza.lines().find_map(|l| l.strip_prefix(name)).map(str::trim);
            let package = field("Package:")?;
            let state = field("Status:")?;
            (!state.ends_with("not-installed")).then_some(package)
        })
        .collect()
}

/// What a clone would share with its source: each finding in words. The machine id must be
/// empty (a new one at first boot), no SSH host key, no shell history, no log of this machine.
pub fn not_clone_ready(view: &dyn ImageView) -> Vec<String> {
    let mut out = Vec::new();
    if view.read("/etc/machine-id").is_some_and(|id| !id.iter().all(u8::is_ascii_whitespace)) {
        out.push("/etc/machine-id holds this machine's id".into());
    }
    for n in view.list("/etc/ssh").unwrap_or_default().into_iter().filter(|n| n.starts_with("ssh_host_")) {
        out.push(format!("/etc/ssh/{n}: a host key"));
    }
    let mut homes = vec!["/root".to_string()];
    homes.extend(view.list("/home").unwrap_or_default().into_iter().map(|h| format!("/home/{h}")));
    for h in homes {
        if view.read(&format!("{h}/.bash_history")).is_some_and(|b| !b.is_empty()) {
            out.push(format!("{h}/.bash_history: a shell history"));
        }
    }
    for dir in ["/var/log/journal"] {
        if view.list(dir).is_some_and(|e| !e.is_empty()) {
            out.push(format!("{dir}: this machine's journal"));
        }
    }
    out
}

#[cfg(test)]
mod tests;
