//! The handover as one bash script, for `sudo -n bash -s` on one SSH connection. It runs as root
//! from its first line, so nothing it changes (sudo's own rules included) can stop it halfway:
//! 1. the fixes of the rules held for the harness, then `visudo -c`;
//! 2. what runs left (the derived fixes' records, scan files);
//! 3. the files and packages temper installed, with what those packages alone brought in;
//! 4. the harness, last: its sudo rule, its key, the user with its home;
//! 5. a clean power-off, two seconds after it says `done`.
//!
//! It stops at the first step that fails: the host then reverts the domain to the snapshot it
//! started from, so a failure leaves nothing half done. Each line it prints for the host starts
//! with `temper-handover ` ([`super::report`] reads them); what it says is evidence, and the
//! host checks the image itself afterwards.
use std::fmt::Write;

use temper_journal::footprint::{Footprint, FootprintError, account_name};

use super::{HeldStep, RUN_TRACES};

/// What the script takes away and applies.
#[derive(Debug, Clone)]
pub struct Handover<'a> {
    /// The harness user (`ssh_user`).
    pub user: &'a str,
    /// The harness's public key, `TYPE BASE64 [COMMENT]` (the comment is not used): removed from the user's
    /// authorized_keys when temper added it to a user it did not create.
    pub public_key: Option<&'a str>,
    pub footprint: &'a Footprint,
    /// The image's admins' group (the skill's `admin_group`).
    pub admin_group: &'a str,
    pub steps: &'a [HeldStep],
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandoverScriptError {
    #[error("`{0}` is not a user or group name the handover can pass on")]
    Name(String),
    #[error("the harness's public key is not `TYPE BASE64`")]
    Key,
    #[error(transparent)]
    Footprint(#[from] FootprintError),
}

/// A shell word that is exactly `s`: single-quoted, each `'` closed, escaped and reopened.
pub fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The first line of every line the host reads.
pub const MARK: &str = "temper-handover ";

/// Renders the script. Names and paths are checked, then single-quoted; each held fix goes in
/// as a here-document under a delimiter its text does not hold, and runs as a file of its own
/// with stdin closed.
pub fn render(h: &Handover) -> Result<String, HandoverScriptError> {
    for name in [h.user, h.admin_group] {
        if !account_name(name) {
            return Err(HandoverScriptError::Name(name.into()));
        }
    }
    h.footprint.check()?;
    let key = match h.public_key {
        Some(k) => {
            let parts: Vec<&str> = k.split_whitespace().take(2).collect();
            let plain = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "+/=-@.".contains(c));
            if parts.len() != 2 || !parts.iter().all(|p| plain(p)) {
                return Err(HandoverScriptError::Key);
            }
            Some(parts.join(" "))
        }
        None => None,
    };
    let f = h.footprint;
    let mut s = String::new();
    s += HEAD;
    let _ = writeln!(s, "harness_user={}\nadmin_group={}\nexport harness_user admin_group", q(h.user), q(h.admin_group));
    s += "uid=$(id -u \"$harness_user\" 2>/dev/null || true)\n\n";

    s += "# 1. The rules held for the harness. This script is root already: what they change cannot stop it.\n";
    for (n, step) in h.steps.iter().enumerate() {
        let n = n + 1;
        let eof = delimiter(&step.script);
        let _ = writeln!(s, "# held {n}: {} ({})", step.rules.join(", "), step.apply.as_str());
        let _ = writeln!(s, "cat >\"$work/held-{n}.sh\" <<'{eof}'\n{}\n{eof}", step.script.trim_end());
        let _ = writeln!(s, "held {n} \"$work/held-{n}.sh\"");
    }
    s += "sudoers_ok \"the held fixes\"\n";
    s += "say \"admins $(getent group \"$admin_group\" | cut -d: -f4)\"\n\n";

    s += "# 2. What runs left: the derived fixes' records, the scan files.\n";
    let _ = writeln!(s, "for p in {}; do", RUN_TRACES.join(" "));
    s += "  [ -e \"$p\" ] || [ -L \"$p\" ] || continue\n  rm -rf -- \"$p\" || stop \"remove $p\"\n  say \"removed trace $p\"\ndone\n\n";

    s += "# 3. The files and packages temper installed.\n";
    for file in &f.files {
        let _ = writeln!(s, "gone file {}", q(file));
    }
    for dir in &f.dirs {
        let _ = writeln!(s, "rmdir -- {d} 2>/dev/null && say \"removed dir \"{d} || say \"kept dir \"{d}", d = q(dir));
    }
    if !f.packages.is_empty() {
        let _ = writeln!(s, "packages {}", f.packages.iter().map(|p| q(p)).collect::<Vec<_>>().join(" "));
    }
    s += "\n# 4. The harness, last: its sudo rule, its key, the user and its home.\n";
    if f.sudo_rule {
        s += "gone sudo_rule \"/etc/sudoers.d/$harness_user\"\nsudoers_ok \"the harness's sudo rule went\"\n";
    }
    if let (true, false, Some(key)) = (f.key, f.user, &key) {
        let _ = writeln!(s, "drop_key {}", q(key));
    }
    if f.user {
        s += "drop_user\n";
    }
    s += "for l in /var/lib/sudo/lectured /var/db/sudo/lectured; do rm -f -- \"$l/$harness_user\"; done\n";
    s += "left_behind\n";
    s += TAIL;
    Ok(s)
}

/// The script for an export that keeps the harness (`--keep-harness`): nothing applied or
/// removed, only the admins said and the clean power-off, so that the copied disk is one a
/// shut-down machine leaves (a live snapshot's ext4 still needs its journal replayed).
pub fn render_kept(admin_group: &str) -> Result<String, HandoverScriptError> {
    if !account_name(admin_group) {
        return Err(HandoverScriptError::Name(admin_group.into()));
    }
    let mut s = String::from(HEAD);
    let _ = writeln!(s, "admin_group={}\nuid=", q(admin_group));
    s += "say \"admins $(getent group \"$admin_group\" | cut -d: -f4)\"\n";
    s += TAIL;
    Ok(s)
}

/// A here-document delimiter that is no line of `text`.
fn delimiter(text: &str) -> String {
    (0..).map(|n| format!("TEMPER_HELD_FIX_{n}")).find(|d| !text.lines().any(|l| l.trim() == d)).expect("some number is free")
}

/// The functions every handover uses. The whole script is one function, read to its end before
/// it runs: what it starts then reads /dev/null, never the rest of the script.
const HEAD: &str = r#"#!/bin/bash
# temper's handover: the rules held for the harness, then everything temper put here, the harness last.
handover() {
set -uo pipefail
export LC_ALL=C DEBIAN_FRONTEND=noninteractive PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
say() { printf 'temper-handover %s\n' "$*"; }
stop() { say "failed $*"; exit 1; }
work=$(mktemp -d /run/temper-handover.XXXXXX) || stop "mktemp"
trap 'rm -rf -- "$work"' EXIT
# held N FILE: runs one held fix; its output goes to stderr, its last lines again on failure.
held() {
  if bash "$2" </dev/null >"$work/out" 2>&1; then cat "$work/out" >&2; say "held $1 applied"
  else local rc=$?; cat "$work/out" >&2; stop "held $1 exit $rc"; fi
}
sudoers_ok() {
  command -v visudo >/dev/null || return 0
  visudo -c >"$work/visudo" 2>&1 || { cat "$work/visudo" >&2; stop "visudo -c after $1"; }
}
# gone KIND PATH: removes a file temper put here.
gone() {
  if [ -e "$2" ] || [ -L "$2" ]; then rm -f -- "$2" || stop "remove $1 $2"; say "removed $1 $2"; else say "absent $1 $2"; fi
}
# packages NAME...: purges those installed, then what they alone brought in (apt's orphans that
# were not orphans before); dnf removes those itself.
packages() {
  local have=() p
  if command -v dpkg-query >/dev/null; then
    for p in "$@"; do
      if dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed; then have+=("$p"); else say "absent package $p"; fi
    done
    [ ${#have[@]} -gt 0 ] || return 0
    # Only these: a package of the image's that needs one of them keeps it all.
    local also
    also=$(apt-get -s purge "${have[@]}" 2>/dev/null | awk '/^Purg /{print $2}' | grep -vxF -f <(printf '%s\n' "${have[@]}") || true)
    [ -z "$also" ] || stop "purging ${have[*]} would remove the image's own $(echo $also)"
    apt-get -s autoremove 2>/dev/null | awk '/^Remv /{print $2}' | sort >"$work/orphans-before"
    apt-get purge -y -q "${have[@]}" >&2 || stop "apt-get purge ${have[*]}"
    for p in "${have[@]}"; do say "removed package $p"; done
    apt-get -s autoremove 2>/dev/null | awk '/^Remv /{print $2}' | sort >"$work/orphans-after"
    local deps=()
    mapfile -t deps < <(comm -13 "$work/orphans-before" "$work/orphans-after")
    if [ ${#deps[@]} -gt 0 ]; then
      apt-get purge -y -q "${deps[@]}" >&2 || stop "apt-get purge ${deps[*]}"
      for p in "${deps[@]}"; do say "removed dependency $p"; done
    fi
  elif command -v rpm >/dev/null; then
    for p in "$@"; do if rpm -q "$p" >/dev/null 2>&1; then have+=("$p"); else say "absent package $p"; fi; done
    [ ${#have[@]} -gt 0 ] || return 0
    rpm -e --test "${have[@]}" >&2 || stop "the image's own packages need ${have[*]}"
    dnf -y -q remove "${have[@]}" >&2 || stop "dnf remove ${have[*]}"
    for p in "${have[@]}"; do say "removed package $p"; done
  else
    stop "no dpkg or rpm to remove packages with"
  fi
}
# drop_key KEY: the harness's key out of a user temper did not create.
drop_key() {
  local home ak
  home=$(getent passwd "$harness_user" | cut -d: -f6)
  ak=$home/.ssh/authorized_keys
  if [ -n "$home" ] && [ -f "$ak" ] && grep -qF -- "$1" "$ak"; then
    { grep -vF -- "$1" "$ak" || true; } >"$work/keys" && cat "$work/keys" >"$ak" || stop "remove the key from $ak"
    say "removed key $ak"
  else say "absent key $ak"; fi
}
# drop_user: the harness user, its home, mail and group.
drop_user() {
  if [ -z "$uid" ]; then say "absent user $harness_user"; return 0; fi
  local home
  home=$(getent passwd "$harness_user" | cut -d: -f6)
  userdel -f -r "$harness_user" >"$work/userdel" 2>&1 || true
  cat "$work/userdel" >&2
  if id "$harness_user" >/dev/null 2>&1; then stop "userdel $harness_user"; fi
  if [ -n "$home" ] && [ "$home" != / ] && [ -e "$home" ]; then rm -rf -- "$home" || stop "remove $home"; fi
  say "removed user $harness_user"
  say "removed home $home"
}
# left_behind: files the harness's uid still owns on the root file system (at most 50).
left_behind() {
  [ -n "$uid" ] || return 0
  find / -xdev -uid "$uid" -print 2>/dev/null | head -50 | while IFS= read -r p; do say "left $p"; done
}
"#;

/// The end: `done`, then a power-off the host waits for (after this script's exit reached it).
const TAIL: &str = r#"sync
say done
systemd-run --quiet --on-active=2 systemctl poweroff >/dev/null 2>&1 \
  || setsid sh -c 'sleep 2; systemctl poweroff || poweroff' </dev/null >/dev/null 2>&1 &
}
handover </dev/null
"#;

#[cfg(test)]
mod tests;
