//! Each family's revert: the item back to its record on this machine, the record then removed;
//! with no record, nothing changed, and a line that says so (and what the scan had seen on the
//! machine the fix was made for, where it saw anything). A record that does not name its item
//! as the item is now is refused for that item ([`super::record`]).
use std::fmt::Write;

use super::q;
use super::record::Record;
use crate::action::{PackageFix, UnitFix};

/// `if [ -f REC ]; then PRE if NAMES; then BODY rm REC; fi; else echo NONE; fi`: `pre` (the
/// item's own checks) runs before the record's name is checked, `body` only on its item.
fn from_record(rec: &Record, pre: &str, body: &str, none: &str) -> String {
    let r = &rec.path;
    let body: String = body.lines().map(|l| format!("  {l}\n")).collect();
    format!(
        "if [ -f {r} ]; then\n{pre}  if {}; then\n{body}    {}\n  fi\nelse\n  echo {}\nfi\n",
        rec.names_its_item(),
        rec.remove(),
        q(&format!("temper: {none}: left as it is"))
    )
}

pub fn file(p: &str, rec: &Record) -> String {
    let r = &rec.path;
    let mut body = format!("  read -r u g m < {r}\n");
    body += "  case \"$u:$g:$m\" in *[!0-9:]*|:*|*::*|*:) temper_stop \"the record of the item is not 'uid gid mode'\" ;; esac\n";
    writeln!(body, "  chown -h \"$u:$g\" -- {p}\n  chmod \"$m\" -- {p}").unwrap();
    let none = format!("no record of {}'s owner, group and mode on this machine", unquote(p));
    from_record(rec, &format!("  temper_path {p}\n"), &body, &none)
}

pub fn sysctl(dropin: &str, key: &str, was: Option<&str>, rec: &Record) -> String {
    let body = format!("  sysctl -w {key}\"=$(cat {})\"\n", rec.path);
    let seen = was.map(|v| format!(" (the scan of the machine the fix was made for read {v})")).unwrap_or_default();
    let none = format!("no record of {}'s runtime value on this machine{seen}", unquote(key));
    format!("rm -f -- {dropin}\n{}", from_record(rec, "", &body, &none))
}

pub fn unit(x: &UnitFix, u: &str, rec: &Record) -> String {
    let mut body = format!("  read -r enabled active < {} || true\n", rec.path);
    // In reverse of the fix's order: start, enable, stop, mask.
    if x.start {
        writeln!(body, "  if [ \"$active\" != active ]; then systemctl stop {u}; fi").unwrap();
    }
    if x.enable {
        writeln!(
            body,
            "  case \"$enabled\" in enabled|enabled-runtime|static|alias|indirect|generated) ;; *) systemctl disable {u} ;; esac"
        )
        .unwrap();
    }
    if x.stop {
        writeln!(body, "  if [ \"$active\" = active ]; then systemctl start {u}; fi").unwrap();
    }
    if x.mask {
        writeln!(body, "  case \"$enabled\" in masked|masked-runtime) ;; *) systemctl unmask {u} ;; esac").unwrap();
    }
    let seen = x.was_active.as_deref().map(|a| format!(" (the scan of the machine the fix was made for saw it {a})")).unwrap_or_default();
    from_record(rec, "", &body, &format!("no record of {}'s state on this machine{seen}", x.unit))
}

/// `p` (a shell word) back from its copy `rec`; `named` says which file it is, in words.
pub fn line(p: &str, rec: &Record, named: &str) -> String {
    let body = format!("  cp -p -- {} {p}\n", rec.path);
    from_record(rec, &format!("  temper_path {p}\n"), &body, &format!("no copy of {named} from before the fix on this machine"))
}

pub fn package(x: &PackageFix, name: &str, apt: &str, rec: &Record) -> String {
    let mut body = format!("  read -r status version < {} || true\n", rec.path);
    if x.install {
        writeln!(body, "  if [ \"$status\" != installed ]; then {apt} purge {name}; fi").unwrap();
    } else {
        writeln!(body, "  if [ \"$status\" = installed ]; then {apt} install {}\"=$version\"; fi", name).unwrap();
    }
    let seen =
        x.was_version.as_deref().map(|v| format!(" (the scan of the machine the fix was made for found version {v})")).unwrap_or_default();
    from_record(rec, "", &body, &format!("no record of package {} on this machine{seen}", x.name))
}

/// A single-quoted word's text, for a message (itself quoted again by [`from_record`]).
fn unquote(w: &str) -> String {
    w.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')).unwrap_or(w).replace(r"'\''", "'")
}
