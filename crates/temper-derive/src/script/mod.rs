//! The fix and revert scripts, as text. Every value from the evidence is single-quoted ([`q`])
//! after its characters were checked.
//!
//! A fix runs in three sections, so that it changes nothing unless it can change everything:
//! 1. **check**: each file is the one the scan named, reached as it named it ([`guard`]), and
//!    its owner, group and mode are still those the scan recorded, or already those wanted;
//! 2. **record**: on the target itself, each item's state before the fix (the first record
//!    stays: a fix run twice keeps the state from before its first run);
//! 3. **change**.
//!
//! The revert undoes the actions in reverse order, each to its record on that machine; an item
//! with no record is left as it is, and the revert says so. So a plan's revert, run on a target
//! other than the one the plan was made on, restores that target's own state. Each record is
//! kept by its item and names it ([`record`]): one that does not name the item as it is now is
//! refused for that item.
mod guard;
mod record;
mod restore;

use std::fmt::Write;

use crate::DerivedFix;
use crate::action::{Action, FileFix, LineFix, PackageFix, SysctlFix, UnitFix};
use record::{Names, Record};

pub use record::file_name as record_file_name;

/// How every derived fix script begins (a reflection tells it from a stock fix by it).
pub const HEADER: &str = "#!/bin/bash\n# Fix derived by temper";

/// Where a fix keeps its records and the copies of the files it edits, for its revert.
pub const STATE_DIR: &str = "/var/lib/temper/derived";

/// A shell word that is exactly `s`: single-quoted, each `'` closed, escaped and reopened.
pub fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The text every derived fix and its revert hold, whatever the rule and the items: the header,
/// `set -euo pipefail`, the guard and record functions, the sections' lines. A ban that matches
/// any of it would forbid every derived fix.
pub fn fixed_text() -> Vec<String> {
    // A rule id that survives `slug` and that no script text holds: it marks what varies.
    const RULE: &str = "TEMPERRULEPLACEHOLDER";
    let empty = render(RULE, &[]);
    [empty.fix_script, empty.revert_script]
        .iter()
        .flat_map(|s| s.split(RULE).map(str::to_string).collect::<Vec<_>>())
        .filter(|p| !p.trim().is_empty())
        .collect()
}

/// One derived fix of each family, on plain items: a ban that matches every one (its fix or its
/// revert) would forbid every derived fix.
pub fn samples() -> Vec<DerivedFix> {
    let meta = |mode| crate::action::Meta { uid: 0, gid: 0, mode };
    let actions = [
        Action::File(FileFix { path: "/usr/local/bin/tool".into(), was: meta(0o777), want: meta(0o755), chosen: None }),
        Action::Sysctl(SysctlFix { key: "kernel.dmesg_restrict".into(), value: "1".into(), was: Some("0".into()), overrides: Vec::new() }),
        Action::Unit(UnitFix { unit: "auditd.service".into(), enable: true, start: true, ..UnitFix::default() }),
        Action::Line(LineFix {
            path: "/etc/ssh/sshd_config".into(),
            key: "PermitRootLogin".into(),
            equals: false,
            value: "no".into(),
            any_case: true,
        }),
        Action::Package(PackageFix { name: "telnet".into(), install: false, was_version: None }),
    ];
    actions.into_iter().map(|a| render(&format!("sample_{}", a.family().as_str()), &[a])).collect()
}

/// The rule's short id, as a file name.
fn slug(rule: &str) -> String {
    let s: String = rule.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.is_empty() { "rule".into() } else { s }
}

/// One action's share of each section.
#[derive(Default)]
struct ActionPart {
    check: String,
    record: String,
    change: String,
    restore: String,
    step: String,
}

pub fn render(rule: &str, actions: &[Action]) -> DerivedFix {
    let rule = slug(rule);
    let tail = format!(" for {rule} from its OVAL check and the items found.\nset -euo pipefail\n");
    let state = format!("state={}\n{}{}", q(&format!("{STATE_DIR}/{rule}")), guard::FUNCTION.as_str(), record::FUNCTIONS);
    let files: Vec<&str> = actions.iter().filter_map(|a| if let Action::File(x) = a { Some(x.path.as_str()) } else { None }).collect();
    let parts: Vec<ActionPart> = actions.iter().enumerate().map(|(n, a)| part(&rule, n, a, &files)).collect();
    let mut fix = format!("{HEADER}{tail}{state}");
    fix += "# 1. check: every item is the one the scan named, as the scan found it (or already fixed).\n";
    parts.iter().for_each(|p| fix += &p.check);
    fix += "# 2. record: each item's state on this machine, before the fix; the revert restores it.\n";
    fix += "install -d -m 0700 -- \"$state\"\ntemper_path \"$state\"\n";
    parts.iter().for_each(|p| fix += &p.record);
    fix += "# 3. change.\n";
    parts.iter().for_each(|p| fix += &p.change);
    let mut revert = format!("#!/bin/bash\n# Revert of the fix derived by temper{tail}{state}");
    revert += "# Each item back to its state recorded on this machine before the fix; with no record, left as it is.\n";
    revert += "if [ -e \"$state\" ]; then temper_path \"$state\"; fi\n";
    parts.iter().rev().for_each(|p| revert += &p.restore);
    revert += record::REFUSED_EXIT;
    let mut families = Vec::new();
    for a in actions {
        if !families.contains(&a.family()) {
            families.push(a.family());
        }
    }
    let description = format!(
        "derived fix for {rule} ({}): {}",
        families.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(", "),
        parts.iter().map(|p| p.step.as_str()).collect::<Vec<_>>().join("; ")
    );
    DerivedFix {
        families,
        fix_script: fix,
        revert_script: revert,
        description,
        touched: actions.iter().map(|a| a.target().to_string()).collect(),
    }
}

/// `files`: every file item of the fix, for the ones another names by a linked folder.
fn part(rule: &str, n: usize, a: &Action, files: &[&str]) -> ActionPart {
    match a {
        Action::File(x) => file(n, x, &aliases(&x.path, files)),
        Action::Sysctl(x) => sysctl(rule, x),
        Action::Unit(x) => unit(x),
        Action::Line(x) => line(x),
        Action::Package(x) => package(x),
    }
}

/// The other items of the fix with `path`'s file name in another folder: what `path` may be
/// another name of (`/bin/su` and `/usr/bin/su` on a merged `/usr`), as shell words.
fn aliases(path: &str, files: &[&str]) -> Vec<String> {
    let split = |p: &str| p.rsplit_once('/').map(|(d, f)| (d.to_string(), f.to_string()));
    let Some((dir, name)) = split(path) else { return Vec::new() };
    files.iter().filter(|f| split(f).is_some_and(|(d, n)| n == name && d != dir)).map(|f| q(f)).collect()
}

/// A file item's check, record and change when it may be another name of one of `aliases`: the
/// check asks `temper_alias` once and keeps the answer (`alias_N`), and the record and the change
/// follow that answer. Asked again later, a folder swapped in between could turn the answer and
/// send the change to a name that was never checked.
fn unless_alias(n: usize, p: &str, aliases: &[String], [check, record, change]: [String; 3]) -> [String; 3] {
    if aliases.is_empty() {
        return [check, record, change];
    }
    let v = format!("alias_{n}");
    let indent = |s: &str| s.lines().map(|l| format!("  {l}\n")).collect::<String>();
    let check = format!("{v}=0\nif temper_alias {p} {}; then\n  {v}=1\nelse\n{}fi\n", aliases.join(" "), indent(&check));
    let only = |s: String| if s.is_empty() { s } else { format!("if [ \"${v}\" = 0 ]; then\n{}fi\n", indent(&s)) };
    [check, only(record), only(change)]
}

fn file(n: usize, x: &FileFix, aliases: &[String]) -> ActionPart {
    let p = q(&x.path);
    let rec = Record::new("meta", &[&x.path], Names::File, &p);
    let meta = |m: &crate::action::Meta| format!("{} {} {:o}", m.uid, m.gid, m.mode);
    let mut check = format!("temper_path {p}\n");
    writeln!(check, "temper_meta {p} {} {}", q(&meta(&x.was)), q(&meta(&x.want))).unwrap();
    let mut change = String::new();
    let owner_changes = (x.want.uid, x.want.gid) != (x.was.uid, x.was.gid);
    if owner_changes {
        writeln!(change, "chown -h {}:{} -- {p}", x.want.uid, x.want.gid).unwrap();
    }
    // chown clears setuid and setgid: the mode is set after it, in both directions.
    if x.want.mode != x.was.mode || owner_changes {
        writeln!(change, "chmod {:04o} -- {p}", x.want.mode).unwrap();
    }
    let mut step =
        format!("{}: {}:{} {:04o} -> {}:{} {:04o}", x.path, x.was.uid, x.was.gid, x.was.mode, x.want.uid, x.want.gid, x.want.mode);
    if let Some(why) = &x.chosen {
        step += &format!(" ({why})");
    }
    let record = rec.keep_first(&format!("stat -c '%u %g %a' -- {p}"));
    let [check, record, change] = unless_alias(n, &p, aliases, [check, record, change]);
    ActionPart { check, record, change, restore: restore::file(&p, &rec), step }
}

fn sysctl(rule: &str, x: &SysctlFix) -> ActionPart {
    let rec = Record::new("sysctl", &[&x.key], Names::Name, &q(&x.key));
    let dropin = q(&format!("/etc/sysctl.d/99-temper-{rule}.conf"));
    let setting = format!("{} = {}", x.key, x.value);
    let (mut check, mut record, mut change, mut restore) =
        (String::new(), rec.keep_first(&format!("sysctl -n {}", q(&x.key))), String::new(), String::new());
    // Files that set the key otherwise: its lines commented out (a copy kept first). A link to
    // another of them is that file, changed once.
    let all: Vec<String> = x.overrides.iter().map(|o| q(o)).collect();
    let key = x.key.replace('.', "\\.");
    for (path, f) in x.overrides.iter().zip(&all) {
        let copy = Record::new("copy", &[&x.key, path], Names::Copy, f);
        let unless_link = format!("temper_link_to {f} {} ||", all.join(" "));
        writeln!(check, "{unless_link} temper_path {f}").unwrap();
        write!(record, "{unless_link} {}", copy.keep_first_copy(f)).unwrap();
        writeln!(change, "{unless_link} sed -i -E {} {f}", q(&format!("s/^[[:space:]]*{key}[[:space:]]*=/# &/"))).unwrap();
        restore += &restore::line(f, &copy, &format!("{path} (for {})", x.key));
    }
    writeln!(change, "printf '%s\\n' {} > {dropin}", q(&setting)).unwrap();
    writeln!(change, "sysctl -w {}", q(&format!("{}={}", x.key, x.value))).unwrap();
    restore = restore::sysctl(&dropin, &q(&x.key), x.was.as_deref(), &rec) + &restore;
    let mut step = format!("{setting} at runtime and in /etc/sysctl.d/99-temper-{rule}.conf");
    if !x.overrides.is_empty() {
        step += &format!(", its other value commented out in {}", x.overrides.join(", "));
    }
    ActionPart { check, record, change, restore, step }
}

fn unit(x: &UnitFix) -> ActionPart {
    let u = q(&x.unit);
    let rec = Record::new("unit", &[&x.unit], Names::Name, &u);
    let mut change = String::new();
    let mut did = Vec::new();
    for (on, verb, word) in
        [(x.mask, "mask", "masked"), (x.stop, "stop", "stopped"), (x.enable, "enable", "enabled"), (x.start, "start", "started")]
    {
        if on {
            writeln!(change, "systemctl {verb} {u}").unwrap();
            did.push(word);
        }
    }
    // `is-enabled` and `is-active` exit non-zero for a unit that is not: their word is the record.
    let state =
        format!("printf '%s %s\\n' \"$(systemctl is-enabled {u} 2>/dev/null || true)\" \"$(systemctl is-active {u} 2>/dev/null || true)\"");
    ActionPart {
        check: String::new(),
        record: rec.keep_first(&state),
        change,
        restore: restore::unit(x, &u, &rec),
        step: format!("{} {}", x.unit, did.join(" and ")),
    }
}

fn line(x: &LineFix) -> ActionPart {
    let p = q(&x.path);
    let rec = Record::new("orig", &[&x.path], Names::Copy, &p);
    let setting = if x.equals { format!("{} = {}", x.key, x.value) } else { format!("{} {}", x.key, x.value) };
    let key = x.key.replace('.', "\\.");
    let flags = if x.any_case { "I" } else { "" };
    let matches = format!("^[[:space:]]*{key}([[:space:]]|=|$)");
    let mut change = String::new();
    let grep_case = if x.any_case { "-i " } else { "" };
    writeln!(change, "if grep -qE {grep_case}{} {p}; then", q(&matches)).unwrap();
    // `#` delimits: neither a key nor a value the family accepts holds one.
    writeln!(change, "  sed -i -E {} {p}", q(&format!("s#{matches}.*#{setting}#{flags}"))).unwrap();
    writeln!(change, "elif [ -s {p} ]; then").unwrap();
    // First in the file: sshd takes the first value it reads, and a Match block may end it.
    writeln!(change, "  sed -i {} {p}", q(&format!("1i {setting}"))).unwrap();
    writeln!(change, "else\n  printf '%s\\n' {} > {p}\nfi", q(&setting)).unwrap();
    ActionPart {
        check: format!("temper_path {p}\n"),
        record: rec.keep_first_copy(&p),
        change,
        restore: restore::line(&p, &rec, &x.path),
        step: format!("`{setting}` in {}", x.path),
    }
}

fn package(x: &PackageFix) -> ActionPart {
    let name = q(&x.name);
    let rec = Record::new("package", &[&x.name], Names::Name, &name);
    let apt = "DEBIAN_FRONTEND=noninteractive apt-get -y -q";
    let state = format!("{{ dpkg-query -W -f='${{db:Status-Status}} ${{Version}}\\n' -- {name} 2>/dev/null || echo not-installed; }}");
    let (change, step) = if x.install {
        (format!("{apt} install {name}\n"), format!("package {} installed", x.name))
    } else {
        (format!("{apt} purge {name}\n"), format!("package {} removed", x.name))
    };
    ActionPart { check: String::new(), record: rec.keep_first(&state), change, restore: restore::package(x, &name, apt, &rec), step }
}

#[cfg(test)]
mod tests;
