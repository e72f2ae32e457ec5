//! Each item the guest says its probes collected, checked on the host against the object it
//! was collected for, as the host's definitions give it: its kind, its path, file name or file
//! path (with the object's recursion), its pattern, and each other entity the item has (a
//! package's name, a unit, a sysctl key). An item its object could not have collected (a file
//! outside the object's directories, a line of another file, a unit the object's pattern does
//! not name) is refused, with why: a derived fix acts on items, so a forged one could aim it.
use crate::fswalk::pattern::Pattern;

use super::{CollectedItem, Field, Spec};

/// Why `item` cannot be one of `object`'s items; `variables` gives the values of the variables
/// the object's entities name.
pub(crate) fn check(object: &Spec, variables: &[(String, String)], item: &CollectedItem) -> Result<(), String> {
    check_at(object, variables, item).map_err(|(_, why)| why)
}

/// [`check`], with how many of the object's entities the item met before one it did not (to
/// tell which object of a set it came closest to).
fn check_at(object: &Spec, variables: &[(String, String)], item: &CollectedItem) -> Result<(), (usize, String)> {
    if object.fields.iter().any(|f| f.name == "set") {
        return in_set(object, variables, item);
    }
    if kind(&object.kind, "_object") != kind(&item.kind, "_item") {
        return Err((0, format!("a {} is not what a {} collects", item.kind, object.kind)));
    }
    let file = ItemFile::of(item).map_err(|why| (0, why))?;
    for (n, f) in object.fields.iter().enumerate() {
        entity(object, f, variables, item, file.as_ref()).map_err(|why| (n + 1, why))?;
    }
    Ok(())
}

/// Whether the item meets one entity `f` of `object`.
fn entity(object: &Spec, f: &Field, variables: &[(String, String)], item: &CollectedItem, file: Option<&ItemFile>) -> Result<(), String> {
    let got = |name: &str| item.fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    match f.name.as_str() {
        "behaviors" | "set" | "notes" => {}
        n if n.starts_with("filter") => {}
        "filepath" => {
            let p = file.map(|f| f.path.as_str()).ok_or("it names no file")?;
            entity_holds(f, variables, p).map_err(|why| format!("its filepath {p:?} {why}"))?;
        }
        "path" => {
            let p = file.map(|f| f.dir.as_str()).ok_or("it has no path")?;
            path_holds(f, variables, p, &behaviors(object))?;
        }
        "filename" if f.nil => {
            if file.is_some_and(|f| !f.name.is_empty()) {
                return Err("its object names directories, not files".into());
            }
        }
        "filename" => {
            let n = file.map(|f| f.name.as_str()).ok_or("it has no file name")?;
            entity_holds(f, variables, n).map_err(|why| format!("its filename {n:?} {why}"))?;
        }
        // A line's pattern is the object's, as written; the text it matched must match it.
        "pattern" if object.kind.starts_with("textfilecontent") => {
            let want = values(f, variables)?;
            if let Some(p) = got("pattern").filter(|p| !want.iter().any(|w| w == p)) {
                return Err(format!("its pattern {p:?} is not its object's"));
            }
            let text = got("text").unwrap_or_default();
            let compiled: Vec<Pattern> = want.iter().filter_map(|w| Pattern::new(w).ok()).collect();
            if compiled.len() == want.len() && !compiled.iter().any(|p| p.is_match(text.as_bytes()).unwrap_or(false)) {
                return Err(format!("its text {text:?} does not match its object's pattern"));
            }
        }
        // APT's `name:arch` names the package `name` of that architecture; an `all` package
        // answers to any architecture's.
        "name" if object.kind.starts_with("dpkginfo") => {
            if let Some(v) = got("name") {
                let arch = got("arch");
                let qualified = arch.is_some_and(|a| entity_holds(f, variables, &format!("{v}:{a}")).is_ok());
                let any_arch = arch == Some("all")
                    && values(f, variables).is_ok_and(|w| w.iter().any(|w| w.split_once(':').is_some_and(|(n, _)| n == v)));
                if !qualified && !any_arch {
                    entity_holds(f, variables, v).map_err(|why| format!("its name {v:?} {why}"))?;
                }
            }
        }
        name => {
            if let Some(v) = got(name) {
                entity_holds(f, variables, v).map_err(|why| format!("its {name} {v:?} {why}"))?;
            }
        }
    }
    Ok(())
}

/// An item's file: its path, directory and name, from whichever it gives (a fix takes
/// `filepath` first, else `path` and `filename`); those it gives must agree.
struct ItemFile {
    path: String,
    dir: String,
    name: String,
}

impl ItemFile {
    fn of(item: &CollectedItem) -> Result<Option<Self>, String> {
        let got = |name: &str| item.fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let (filepath, dir, name) = (got("filepath").filter(|p| !p.is_empty()), got("path"), got("filename"));
        let joined = dir.map(|d| match name.filter(|n| !n.is_empty()) {
            Some(n) => format!("{}/{n}", d.trim_end_matches('/')),
            None => d.to_string(),
        });
        let Some(path) = filepath.map(str::to_string).or(joined.clone()) else { return Ok(None) };
        if let (Some(fp), Some(j), true) = (filepath, joined.as_deref(), name.is_some_and(|n| !n.is_empty()))
            && fp != j
        {
            return Err(format!("its filepath {fp:?} is not its path and filename ({j:?})"));
        }
        let (up, base) = match path.rfind('/') {
            Some(0) => ("/".to_string(), path[1..].to_string()),
            Some(i) => (path[..i].to_string(), path[i + 1..].to_string()),
            None => (String::new(), path.clone()),
        };
        let dir = dir.map(str::to_string).unwrap_or(up);
        let name = name.map(str::to_string).unwrap_or(if filepath.is_some() { base } else { String::new() });
        Ok(Some(ItemFile { path, dir, name }))
    }
}

/// An item of a set object: one of the set's objects (as far as the evidence keeps them) must
/// allow it. Why not: the reason of the object it came closest to.
fn in_set(object: &Spec, variables: &[(String, String)], item: &CollectedItem) -> Result<(), (usize, String)> {
    let mut closest: Option<(usize, String)> = None;
    for m in &object.members {
        match check_at(m, variables, item) {
            Ok(()) => return Ok(()),
            Err(e) if closest.as_ref().is_none_or(|c| e.0 > c.0) => closest = Some(e),
            Err(_) => {}
        }
    }
    Err(closest.unwrap_or_else(|| (0, "its object's set names no object the host knows".into())))
}

/// `file_object` -> `file`, `textfilecontent54_object` -> `textfilecontent` (an item's kind
/// has no version number, or the object's).
fn kind<'a>(name: &'a str, suffix: &str) -> &'a str {
    name.strip_suffix(suffix).unwrap_or(name).trim_end_matches(|c: char| c.is_ascii_digit())
}

/// How a path entity recurses (`behaviors`): `down` at most `max_depth` levels (`None`: no
/// limit), `up`, or not at all.
#[derive(Debug, PartialEq, Eq)]
enum Recurse {
    None,
    Down(Option<usize>),
    Up,
}

fn behaviors(object: &Spec) -> Recurse {
    let Some(b) = object.fields.iter().find(|f| f.name == "behaviors") else { return Recurse::None };
    let attr = |name: &str| b.value.split_whitespace().find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='));
    let depth = attr("max_depth").and_then(|d| d.parse::<i64>().ok()).unwrap_or(-1);
    match attr("recurse_direction") {
        Some("down") => Recurse::Down((depth >= 0).then_some(depth as usize)),
        Some("up") => Recurse::Up,
        _ => Recurse::None,
    }
}

/// The item's directory is the object's, or (recursing down) below one of its within the depth,
/// or (up) above it.
fn path_holds(f: &Field, variables: &[(String, String)], path: &str, recurse: &Recurse) -> Result<(), String> {
    let here = entity_holds(f, variables, path);
    match recurse {
        _ if here.is_ok() => Ok(()),
        Recurse::Down(limit) => {
            let mut p = path;
            let mut levels = 0;
            while let Some(up) = parent(p) {
                levels += 1;
                if limit.is_some_and(|l| levels > l) {
                    break;
                }
                if entity_holds(f, variables, up).is_ok() {
                    return Ok(());
                }
                p = up;
            }
            Err(format!("its path {path:?} is neither its object's nor below it: {}", here.unwrap_err()))
        }
        Recurse::Up => {
            let op = f.operation.as_deref().unwrap_or("equals");
            let under = values(f, variables)?.iter().any(|w| w == path || w.starts_with(&format!("{}/", path.trim_end_matches('/'))));
            match (op, under) {
                ("equals", true) => Ok(()),
                ("equals", false) => Err(format!("its path {path:?} is not above its object's")),
                _ => Err(format!("its object recurses up from a path `{op}` a value: the host does not check that")),
            }
        }
        Recurse::None => Err(format!("its path {path:?} {}", here.unwrap_err())),
    }
}

/// `/usr/bin` -> `/usr` -> `/`; `None` at the root.
fn parent(p: &str) -> Option<&str> {
    let p = p.trim_end_matches('/');
    if p.is_empty() {
        return None;
    }
    let cut = p.rfind('/')?;
    Some(if cut == 0 { "/" } else { &p[..cut] })
}

/// The values an entity asks for: its own, or its variable's.
fn values(f: &Field, variables: &[(String, String)]) -> Result<Vec<String>, String> {
    match &f.var_ref {
        Some(v) if f.value.is_empty() => {
            let vals: Vec<String> = variables.iter().filter(|(id, _)| id == v).map(|(_, val)| val.clone()).collect();
            if vals.is_empty() { Err(format!("its object's variable {v} has no value")) } else { Ok(vals) }
        }
        _ => Ok(vec![f.value.clone()]),
    }
}

/// Whether `got` meets entity `f` (any of its values): the operations OVAL's objects use.
fn entity_holds(f: &Field, variables: &[(String, String)], got: &str) -> Result<(), String> {
    let op = f.operation.as_deref().unwrap_or("equals");
    let int = f.datatype.as_deref() == Some("int");
    let mut why = String::new();
    for want in values(f, variables)? {
        let holds = match op {
            "equals" if int => num(&want)? == num(got)?,
            "equals" => got == want,
            "not equal" if int => num(&want)? != num(got)?,
            "not equal" => got != want,
            "case insensitive equals" => got.eq_ignore_ascii_case(&want),
            "case insensitive not equal" => !got.eq_ignore_ascii_case(&want),
            "pattern match" => Pattern::new(&want)?.is_match(got.as_bytes()).unwrap_or(false),
            "greater than" => num(got)? > num(&want)?,
            "greater than or equal" => num(got)? >= num(&want)?,
            "less than" => num(got)? < num(&want)?,
            "less than or equal" => num(got)? <= num(&want)?,
            other => return Err(format!("is held to `{other}`, an operation the host does not check")),
        };
        if holds {
            return Ok(());
        }
        why = format!("is not `{op}` {want:?}");
    }
    Err(why)
}

fn num(v: &str) -> Result<i64, String> {
    v.trim().parse().map_err(|_| format!("{v:?} is not a number"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oval::ItemStatus;

    fn field(name: &str, op: Option<&str>, value: &str) -> Field {
        Field { name: name.into(), value: value.into(), operation: op.map(String::from), ..Field::default() }
    }

    fn object(kind: &str, fields: Vec<Field>) -> Spec {
        Spec { id: "o".into(), kind: kind.into(), comment: String::new(), fields, operator: None, members: vec![] }
    }

    fn item(kind: &str, fields: &[(&str, &str)]) -> CollectedItem {
        CollectedItem {
            id: "1".into(),
            kind: kind.into(),
            status: ItemStatus::Exists,
            result: None,
            fields: fields.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        }
    }

    fn file(path: &str, name: &str) -> CollectedItem {
        item("file_item", &[("filepath", &format!("{path}/{name}")), ("path", path), ("filename", name)])
    }

    #[test]
    fn a_file_outside_its_objects_directories_is_refused() {
        let binaries = object(
            "file_object",
            vec![
                field("path", Some("pattern match"), r"^\/(|s)bin|^\/usr\/(|local\/)(|s)bin|^\/usr\/libexec"),
                field("filename", Some("pattern match"), "^.*$"),
            ],
        );
        assert_eq!(check(&binaries, &[], &file("/usr/bin", "ls")), Ok(()));
        let why = check(&binaries, &[], &file("/etc", "shadow")).unwrap_err();
        assert!(why.contains("\"/etc\""), "{why}");
        // A directory object: no file names.
        let dirs = object(
            "file_object",
            vec![field("path", None, "/etc/cron.d"), Field { name: "filename".into(), nil: true, ..Field::default() }],
        );
        assert_eq!(check(&dirs, &[], &item("file_item", &[("path", "/etc/cron.d"), ("filename", "")])), Ok(()));
        assert!(check(&dirs, &[], &file("/etc/cron.d", "job")).is_err());
        assert!(check(&dirs, &[], &item("sysctl_item", &[("name", "x")])).unwrap_err().contains("not what a file_object collects"));
    }

    #[test]
    fn recursion_down_allows_what_lies_below_within_the_depth() {
        let mut tree = object("file_object", vec![field("path", None, "/var/log"), field("filename", Some("pattern match"), ".*")]);
        tree.fields.insert(0, field("behaviors", None, "recurse_direction=down max_depth=1"));
        assert_eq!(check(&tree, &[], &file("/var/log/apt", "history.log")), Ok(()));
        assert!(check(&tree, &[], &file("/var/log/apt/x", "y")).is_err(), "two levels down, max_depth 1");
        assert!(check(&tree, &[], &file("/var/logs", "y")).is_err(), "a sibling whose name starts the same");
        tree.fields[0].value = "recurse_direction=down max_depth=-1".into();
        assert_eq!(check(&tree, &[], &file("/var/log/a/b/c", "d")), Ok(()));
        assert!(check(&tree, &[], &file("/etc", "shadow")).is_err());
    }

    #[test]
    fn a_file_path_a_line_and_a_pattern_must_be_the_objects() {
        let sshd = object(
            "textfilecontent54_object",
            vec![
                field("filepath", None, "/etc/ssh/sshd_config"),
                field("pattern", Some("pattern match"), r"^[ \t]*(?i)PermitRootLogin(?-i)[ \t]+(.+?)[ \t]*(?:$|#)"),
                Field { datatype: Some("int".into()), ..field("instance", Some("greater than or equal"), "1") },
            ],
        );
        let line = |path: &str, text: &str| {
            item(
                "textfilecontent_item",
                &[
                    ("filepath", path),
                    ("pattern", r"^[ \t]*(?i)PermitRootLogin(?-i)[ \t]+(.+?)[ \t]*(?:$|#)"),
                    ("instance", "1"),
                    ("text", text),
                ],
            )
        };
        assert_eq!(check(&sshd, &[], &line("/etc/ssh/sshd_config", "PermitRootLogin yes")), Ok(()));
        assert!(check(&sshd, &[], &line("/etc/ssh/sshd_config.d/x.conf", "PermitRootLogin yes")).unwrap_err().contains("filepath"));
        assert!(check(&sshd, &[], &line("/etc/ssh/sshd_config", "AuthorizedKeysCommand /tmp/k")).unwrap_err().contains("text"));
        // Through a variable: the host's value.
        let mut by_var = sshd.clone();
        by_var.fields[0] = Field { var_ref: Some("v".into()), ..field("filepath", None, "") };
        let vars = [("v".to_string(), "/etc/ssh/sshd_config".to_string())];
        assert_eq!(check(&by_var, &vars, &line("/etc/ssh/sshd_config", "PermitRootLogin no")), Ok(()));
        assert!(check(&by_var, &[], &line("/etc/ssh/sshd_config", "PermitRootLogin no")).unwrap_err().contains("no value"));
    }

    #[test]
    fn a_unit_a_package_and_a_set_are_checked_by_their_entities() {
        let unit = object(
            "systemdunitproperty_object",
            vec![field("unit", Some("pattern match"), r"^rsyslog\.service$"), field("property", None, "ActiveState")],
        );
        let it = |u: &str| item("systemdunitproperty_item", &[("unit", u), ("property", "ActiveState"), ("value", "inactive")]);
        assert_eq!(check(&unit, &[], &it("rsyslog.service")), Ok(()));
        assert!(check(&unit, &[], &it("ssh.service")).unwrap_err().contains("unit \"ssh.service\""));
        let pkg = object("dpkginfo_object", vec![field("name", None, "telnet")]);
        assert!(check(&pkg, &[], &item("dpkginfo_item", &[("name", "openssh-server")])).is_err());
        let qualified = object("dpkginfo_object", vec![field("name", None, "bash:amd64")]);
        assert_eq!(check(&qualified, &[], &item("dpkginfo_item", &[("name", "bash"), ("arch", "amd64")])), Ok(()));
        assert!(check(&qualified, &[], &item("dpkginfo_item", &[("name", "bash"), ("arch", "i386")])).is_err());
        let all = object("dpkginfo_object", vec![field("name", None, "tzdata:amd64")]);
        assert_eq!(check(&all, &[], &item("dpkginfo_item", &[("name", "tzdata"), ("arch", "all")])), Ok(()));
        assert!(check(&all, &[], &item("dpkginfo_item", &[("name", "bash"), ("arch", "all")])).is_err());
        let mut set = object("textfilecontent54_object", vec![field("set", None, "UNION of a, b")]);
        set.members = vec![
            object("textfilecontent54_object", vec![field("filepath", None, "/etc/a")]),
            object("textfilecontent54_object", vec![field("filepath", None, "/etc/b")]),
        ];
        let at = |p: &str| item("textfilecontent_item", &[("filepath", p)]);
        assert_eq!(check(&set, &[], &at("/etc/b")), Ok(()));
        assert!(check(&set, &[], &at("/etc/c")).is_err());
    }
}
