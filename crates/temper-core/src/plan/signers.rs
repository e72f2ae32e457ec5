//! The allowed-signers file, in the format of `ssh-keygen -Y verify -f` and git's
//! `gpg.ssh.allowedSignersFile` (ssh-keygen(1), ALLOWED SIGNERS): one key a line,
//! `PRINCIPALS [OPTIONS] KEYTYPE BASE64 [COMMENT]`, with the options `namespaces="…"`,
//! `valid-after=…`, `valid-before=…` and `cert-authority`. A comment line
//! `# temper-revoked-plans PATH` points to a list of revoked plans (`seal`), which ssh-keygen
//! and git read as the comment it is.
use chrono::{DateTime, Local, NaiveDate, NaiveDateTime, TimeZone, Utc};
use ssh_key::PublicKey;
use ssh_key::public::KeyData;

/// One line of the file.
#[derive(Debug, Clone)]
pub struct Allowed {
    /// The line's number, for messages.
    pub line: usize,
    pub principals: String,
    pub key: KeyData,
    namespaces: Option<String>,
    valid_after: Option<DateTime<Utc>>,
    valid_before: Option<DateTime<Utc>>,
    /// A CA line: it allows certificates, which a plan's signature never holds.
    cert_authority: bool,
}

/// Why a key that is in the file does not sign for `namespace` now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignerRefusal {
    Namespace(String),
    NotYet(String),
    Expired(String),
    CertAuthority,
}

impl std::fmt::Display for SignerRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Namespace(n) => write!(f, "its namespaces=\"{n}\" does not hold this one"),
            Self::NotYet(t) => write!(f, "it is valid only after {t}"),
            Self::Expired(t) => write!(f, "it was valid only before {t}"),
            Self::CertAuthority => write!(f, "it is a cert-authority line, and a plan is signed by a key, not a certificate"),
        }
    }
}

impl Allowed {
    /// Whether this line lets its key sign for `namespace` at `now`.
    pub fn allows(&self, namespace: &str, now: DateTime<Utc>) -> Result<(), SignerRefusal> {
        if self.cert_authority {
            return Err(SignerRefusal::CertAuthority);
        }
        if let Some(ns) = self.namespaces.as_deref().filter(|ns| !pattern_list(namespace, ns)) {
            return Err(SignerRefusal::Namespace(ns.to_string()));
        }
        if let Some(t) = self.valid_after.filter(|t| now < *t) {
            return Err(SignerRefusal::NotYet(t.to_rfc3339()));
        }
        if let Some(t) = self.valid_before.filter(|t| now >= *t) {
            return Err(SignerRefusal::Expired(t.to_rfc3339()));
        }
        Ok(())
    }
}

/// Reads an allowed-signers file's text; `Err` names the first line it cannot read.
pub fn parse(text: &str) -> Result<Vec<Allowed>, String> {
    let mut all = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        all.push(line(i + 1, l).map_err(|e| format!("line {}: {e}", i + 1))?);
    }
    Ok(all)
}

/// How a comment line names a revocation list.
pub const REVOKED: &str = "# temper-revoked-plans ";

/// The revocation lists an allowed-signers file's text names, as written (a relative path is
/// the file's folder's).
pub fn revocation_lists(text: &str) -> Vec<&str> {
    text.lines().filter_map(|l| l.trim().strip_prefix(REVOKED)).map(str::trim).filter(|p| !p.is_empty()).collect()
}

fn line(n: usize, l: &str) -> Result<Allowed, String> {
    let (principals, rest) = field(l)?;
    let principals = principals.trim_matches('"').to_string();
    let (mut namespaces, mut valid_after, mut valid_before, mut cert_authority) = (None, None, None, false);
    // Options are there unless the next field is a key type.
    let first = rest.split_whitespace().next().unwrap_or_default();
    let key_text = if ssh_key::Algorithm::new(first).is_ok() {
        rest
    } else {
        let (options, key) = field(rest)?;
        for opt in split_outside_quotes(options) {
            let (name, value) = opt.split_once('=').map_or((opt, None), |(k, v)| (k, Some(v.trim_matches('"'))));
            match (name.to_ascii_lowercase().as_str(), value) {
                ("cert-authority", None) => cert_authority = true,
                ("namespaces", Some(v)) => namespaces = Some(v.to_string()),
                ("valid-after", Some(v)) => valid_after = Some(timestamp(v)?),
                ("valid-before", Some(v)) => valid_before = Some(timestamp(v)?),
                _ => return Err(format!("unknown option `{opt}`")),
            }
        }
        key
    };
    let key = PublicKey::from_openssh(key_text).map_err(|e| format!("not a public key ({e})"))?;
    Ok(Allowed { line: n, principals, key: key.key_data().clone(), namespaces, valid_after, valid_before, cert_authority })
}

/// The first space-separated field of `l` (spaces inside double quotes kept), and the rest.
fn field(l: &str) -> Result<(&str, &str), String> {
    let mut quoted = false;
    for (i, c) in l.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ' ' | '\t' if !quoted => return Ok((&l[..i], l[i..].trim_start())),
            _ => {}
        }
    }
    Err("a principal and a key are needed".into())
}

/// `a,b="x,y",c` as its comma-separated parts, commas inside quotes kept.
fn split_outside_quotes(s: &str) -> Vec<&str> {
    let (mut parts, mut start, mut quoted) = (Vec::new(), 0, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// `YYYYMMDD[Z]` or `YYYYMMDDHHMM[SS][Z]`: UTC with `Z`, the local time without.
fn timestamp(v: &str) -> Result<DateTime<Utc>, String> {
    let bad = || format!("`{v}` is not a timestamp (YYYYMMDD[Z] or YYYYMMDDHHMM[SS][Z])");
    let (digits, utc) = v.strip_suffix(['Z', 'z']).map_or((v, false), |d| (d, true));
    let naive = match digits.len() {
        8 => NaiveDate::parse_from_str(digits, "%Y%m%d").map_err(|_| bad())?.and_hms_opt(0, 0, 0).ok_or_else(bad)?,
        12 => NaiveDateTime::parse_from_str(digits, "%Y%m%d%H%M").map_err(|_| bad())?,
        14 => NaiveDateTime::parse_from_str(digits, "%Y%m%d%H%M%S").map_err(|_| bad())?,
        _ => return Err(bad()),
    };
    if utc {
        Ok(Utc.from_utc_datetime(&naive))
    } else {
        Local.from_local_datetime(&naive).earliest().map(|t| t.with_timezone(&Utc)).ok_or_else(bad)
    }
}

/// ssh_config(5)'s pattern-list: comma-separated `*`/`?` patterns, `!` negating one.
fn pattern_list(name: &str, list: &str) -> bool {
    let mut hit = false;
    for p in list.split(',').map(str::trim) {
        match p.strip_prefix('!') {
            Some(neg) if glob(name.as_bytes(), neg.as_bytes()) => return false,
            Some(_) => {}
            None => hit |= glob(name.as_bytes(), p.as_bytes()),
        }
    }
    hit
}

fn glob(s: &[u8], p: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, _) => s.is_empty(),
        (Some(b'*'), _) => glob(s, &p[1..]) || (!s.is_empty() && glob(&s[1..], p)),
        (Some(b'?'), Some(_)) => glob(&s[1..], &p[1..]),
        (Some(a), Some(b)) if a == b => glob(&s[1..], &p[1..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIASNW/CZ7oZW+TnPR87Z5ua8rkdPqrtOhYNDGmRArAch";

    #[test]
    fn lines_with_and_without_options() {
        let text = format!(
            "# ops\n\nalice@example.com {KEY} alice's laptop\n\"bob@x,carol@x\" namespaces=\"git,temper-*\",valid-before=20300101Z {KEY}\n"
        );
        let all = parse(&text).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!((all[0].line, all[0].principals.as_str()), (3, "alice@example.com"));
        assert_eq!(all[1].principals, "bob@x,carol@x");
        let now = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap();
        assert_eq!(all[1].allows("temper-plan", now), Ok(()));
        assert_eq!(all[1].allows("file", now), Err(SignerRefusal::Namespace("git,temper-*".into())));
        let later = Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0).unwrap();
        assert!(matches!(all[1].allows("temper-plan", later), Err(SignerRefusal::Expired(_))));
    }

    #[test]
    fn bad_lines_are_named() {
        assert_eq!(parse(&format!("a {KEY}\nb nosuch=1 {KEY}\n")).unwrap_err(), "line 2: unknown option `nosuch=1`");
        assert!(parse("a ssh-ed25519 AAAA\n").unwrap_err().starts_with("line 1: not a public key"));
        assert!(parse(&format!("a valid-after=2030 {KEY}\n")).unwrap_err().contains("not a timestamp"));
        let ca = parse(&format!("*@x cert-authority {KEY}\n")).unwrap();
        assert_eq!(ca[0].allows("temper-plan", Utc::now()), Err(SignerRefusal::CertAuthority));
    }

    #[test]
    fn revocation_lists_are_named_in_comments() {
        let text = format!(
            "# temper-revoked-plans revoked.txt\nalice {KEY}\n  # temper-revoked-plans /etc/temper/more\n# temper-revoked-plans \n"
        );
        assert_eq!(revocation_lists(&text), ["revoked.txt", "/etc/temper/more"]);
        assert_eq!(parse(&text).unwrap().len(), 1, "a comment to the allowed signers' readers");
    }

    #[test]
    fn patterns() {
        assert!(pattern_list("temper-plan", "git,temper-plan"));
        assert!(pattern_list("temper-plan", "*"));
        assert!(!pattern_list("temper-plan", "*,!temper-*"));
        assert!(!pattern_list("temper-plan", "git"));
        assert!(pattern_list("temper-plan", "temper-pla?"));
    }
}
