//! What a signer binds a plan to: when it expires, and the targets (or the fleet) it is for.
//! They are lines of the signed manifest itself (`SHA256SUMS`), which `sha256sum --check`
//! skips as comments and `ssh-keygen -Y sign` signs with the rest:
//!
//! ```text
//! # temper-plan expires 2027-01-31T00:00:00Z
//! # temper-plan for web1,web2
//! # temper-plan fleet night
//! ```
use chrono::{DateTime, Duration, NaiveDate, SecondsFormat, Utc};

/// How a term's line starts.
pub const PREFIX: &str = "# temper-plan ";

/// A plan's terms; the default binds it to nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Terms {
    /// Applied at or after this, it is refused.
    pub expires: Option<DateTime<Utc>>,
    /// The targets it is for (temper's target names); empty: any.
    pub targets: Vec<String>,
    /// The fleet whose runs it is for.
    pub fleet: Option<String>,
}

/// Where and when a plan is applied, for [`Terms::check`].
#[derive(Debug, Clone, Copy)]
pub struct Applying<'a> {
    pub now: DateTime<Utc>,
    /// The target's name; `None` where none is known (`temper plan verify` without `--target`).
    pub target: Option<&'a str>,
    /// The fleet the run belongs to.
    pub fleet: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TermsError {
    #[error("the plan expired at {0} (its signer set it to): nothing was run; ask its signer for a new one")]
    Expired(String),
    #[error("the plan is for the targets {targets}, not `{target}`: nothing was run")]
    NotForTarget { target: String, targets: String },
    #[error("the plan is for the runs of fleet `{fleet}`, and this run is {here}: nothing was run")]
    NotForFleet { fleet: String, here: String },
    #[error("`{0}` cannot name a target or a fleet in a plan's terms: letters, digits, `.`, `_` and `-` only")]
    BadName(String),
    #[error("`{0}` is not a time: give RFC 3339 (2027-01-31T00:00:00Z), a day (2027-01-31, its start in UTC) or a span (90d, 12h, 30m)")]
    BadTime(String),
    #[error("`{0}` is a term this temper does not know: nothing was run (a newer temper wrote it)")]
    Unknown(String),
    #[error("the term `{0}` is given twice")]
    Twice(String),
}

impl Terms {
    /// Binds nothing.
    pub fn is_empty(&self) -> bool {
        *self == Terms::default()
    }

    /// The manifest's lines for these terms, each ending in a newline.
    pub fn lines(&self) -> String {
        let mut s = String::new();
        if let Some(t) = self.expires {
            s += &format!("{PREFIX}expires {}\n", t.to_rfc3339_opts(SecondsFormat::Secs, true));
        }
        if !self.targets.is_empty() {
            s += &format!("{PREFIX}for {}\n", self.targets.join(","));
        }
        if let Some(f) = &self.fleet {
            s += &format!("{PREFIX}fleet {f}\n");
        }
        s
    }

    /// Reads one of the manifest's term lines (`line` starts with [`PREFIX`]).
    pub fn read_line(&mut self, line: &str) -> Result<(), TermsError> {
        let rest = line.strip_prefix(PREFIX).ok_or_else(|| TermsError::Unknown(line.to_string()))?;
        let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
        let twice = || TermsError::Twice(key.to_string());
        match key {
            "expires" if self.expires.is_some() => Err(twice()),
            "expires" => {
                let t = DateTime::parse_from_rfc3339(value).map_err(|_| TermsError::BadTime(value.to_string()))?;
                self.expires = Some(t.with_timezone(&Utc));
                Ok(())
            }
            "for" if !self.targets.is_empty() => Err(twice()),
            "for" => {
                self.targets = names(value)?;
                Ok(())
            }
            "fleet" if self.fleet.is_some() => Err(twice()),
            "fleet" => {
                self.fleet = Some(name(value)?);
                Ok(())
            }
            _ => Err(TermsError::Unknown(line.to_string())),
        }
    }

    /// Whether the plan may be applied there and then.
    pub fn check(&self, at: &Applying<'_>) -> Result<(), TermsError> {
        if let Some(t) = self.expires.filter(|t| at.now >= *t) {
            return Err(TermsError::Expired(t.to_rfc3339_opts(SecondsFormat::Secs, true)));
        }
        if let Some(target) = at.target.filter(|t| !self.targets.is_empty() && !self.targets.iter().any(|n| n == t)) {
            return Err(TermsError::NotForTarget { target: target.to_string(), targets: self.targets.join(", ") });
        }
        if let Some(fleet) = self.fleet.as_deref().filter(|f| at.fleet != Some(*f)) {
            let here = at.fleet.map_or("in no fleet".to_string(), |f| format!("of fleet `{f}`"));
            return Err(TermsError::NotForFleet { fleet: fleet.to_string(), here });
        }
        Ok(())
    }

    /// What they say, for a person: `expires 2027-01-31T00:00:00Z; for web1, web2`.
    pub fn says(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = self.expires {
            parts.push(format!("expires {}", t.to_rfc3339_opts(SecondsFormat::Secs, true)));
        }
        if !self.targets.is_empty() {
            parts.push(format!("for {}", self.targets.join(", ")));
        }
        if let Some(f) = &self.fleet {
            parts.push(format!("for the runs of fleet {f}"));
        }
        if parts.is_empty() { "no expiry, for any target".into() } else { parts.join("; ") }
    }
}

/// `--expires`: RFC 3339, a day (its start, UTC), or a span from `now` (`90d`, `12h`, `30m`).
pub fn expiry(text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, TermsError> {
    let bad = || TermsError::BadTime(text.to_string());
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    if let Ok(d) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).ok_or_else(bad)?.and_utc());
    }
    let (n, unit) = text.split_at(text.len().saturating_sub(1));
    let n: i64 = n.parse().map_err(|_| bad())?;
    let span = match unit {
        "d" => Duration::try_days(n),
        "h" => Duration::try_hours(n),
        "m" => Duration::try_minutes(n),
        _ => None,
    };
    span.filter(|_| n > 0).and_then(|s| now.checked_add_signed(s)).ok_or_else(bad)
}

/// A target's or a fleet's name as a term may hold it: it goes into the manifest, `replay.sh`
/// and the playbook as it is.
pub fn name(n: &str) -> Result<String, TermsError> {
    let ok = !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) && !n.starts_with('-');
    if ok { Ok(n.to_string()) } else { Err(TermsError::BadName(n.to_string())) }
}

/// `a,b`: each a [`name`], none twice.
pub fn names(list: &str) -> Result<Vec<String>, TermsError> {
    let mut out: Vec<String> = Vec::new();
    for n in list.split(',') {
        let n = name(n.trim())?;
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at(now: DateTime<Utc>, target: Option<&'static str>, fleet: Option<&'static str>) -> Applying<'static> {
        Applying { now, target, fleet }
    }

    #[test]
    fn terms_round_trip_through_their_lines() {
        let now = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap();
        let t =
            Terms { expires: Some(expiry("30d", now).unwrap()), targets: names("web1, web2,web1").unwrap(), fleet: Some("night".into()) };
        assert_eq!(t.lines(), "# temper-plan expires 2026-12-31T00:00:00Z\n# temper-plan for web1,web2\n# temper-plan fleet night\n");
        let mut back = Terms::default();
        for l in t.lines().lines() {
            back.read_line(l).unwrap();
        }
        assert_eq!(back, t);
        assert_eq!(Terms::default().lines(), "");
        assert!(matches!(back.read_line("# temper-plan for x"), Err(TermsError::Twice(_))));
        assert!(matches!(Terms::default().read_line("# temper-plan revoked-by x"), Err(TermsError::Unknown(_))));
        assert!(matches!(Terms::default().read_line("# temper-plan for a;rm -rf /"), Err(TermsError::BadName(_))));
    }

    #[test]
    fn expired_other_targets_and_other_fleets_are_refused() {
        let now = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap();
        let t = Terms { expires: Some(expiry("2026-12-02", now).unwrap()), targets: vec!["web1".into()], fleet: None };
        assert_eq!(t.check(&at(now, Some("web1"), None)), Ok(()));
        assert_eq!(t.check(&at(now, None, None)), Ok(()), "no target known: only the expiry");
        let e = t.check(&at(now + Duration::days(1), Some("web1"), None)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the plan expired at 2026-12-02T00:00:00Z (its signer set it to): nothing was run; ask its signer for a new one"
        );
        let e = t.check(&at(now, Some("db1"), None)).unwrap_err();
        assert_eq!(e.to_string(), "the plan is for the targets web1, not `db1`: nothing was run");
        let f = Terms { fleet: Some("night".into()), ..Terms::default() };
        assert_eq!(f.check(&at(now, Some("db1"), Some("night"))), Ok(()));
        let e = f.check(&at(now, Some("db1"), None)).unwrap_err();
        assert_eq!(e.to_string(), "the plan is for the runs of fleet `night`, and this run is in no fleet: nothing was run");
        assert!(matches!(f.check(&at(now, None, Some("day"))), Err(TermsError::NotForFleet { .. })));
    }

    #[test]
    fn expiry_takes_a_time_a_day_or_a_span() {
        let now = Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap();
        assert_eq!(expiry("2027-01-31T12:00:00+01:00", now).unwrap(), Utc.with_ymd_and_hms(2027, 1, 31, 11, 0, 0).unwrap());
        assert_eq!(expiry("2027-01-31", now).unwrap(), Utc.with_ymd_and_hms(2027, 1, 31, 0, 0, 0).unwrap());
        assert_eq!(expiry("12h", now).unwrap(), Utc.with_ymd_and_hms(2026, 12, 1, 22, 0, 0).unwrap());
        for bad in ["tomorrow", "0d", "-3d", "5w", ""] {
            assert!(matches!(expiry(bad, now), Err(TermsError::BadTime(_))), "{bad}");
        }
    }
}
