//! systemd units that failed: the listing (`systemctl --failed`), read the same way wherever it
//! is read (the reboot proof's check, the image's boot proof), and whether a fix script names a
//! unit, which ties a unit that fails to the fix that wrote or enabled it.
use std::collections::BTreeSet;
use std::time::Duration;

use crate::ports::{Exec, Guest};

/// The listing, as any user may ask for it.
pub fn listing() -> Exec {
    Exec::new(["systemctl", "--failed", "--plain", "--no-legend", "--no-pager", "--full"]).as_user().timeout(Duration::from_secs(60))
}

/// The unit names of a listing: each line's first word.
pub fn parse(listing: &str) -> BTreeSet<String> {
    listing.lines().filter_map(|l| l.split_whitespace().next()).map(String::from).collect()
}

/// The units that failed on `guest` now; `None` when the listing could not be read (no
/// systemd, the command failed): a check that cannot run blames nothing.
pub async fn failed(guest: &dyn Guest) -> Option<BTreeSet<String>> {
    match guest.exec(listing()).await {
        Ok(o) if o.success() => Some(parse(&o.stdout_str())),
        _ => None,
    }
}

/// `script` names `unit` as a whole word: `/etc/systemd/system/aidecheck.service` and
/// `systemctl enable aidecheck.service` do; `myaidecheck.service` and `aidecheck.services` do not.
pub fn named_in(script: &str, unit: &str) -> bool {
    let part = |c: char| c.is_ascii_alphanumeric() || "_.@-\\".contains(c);
    !unit.is_empty()
        && script.match_indices(unit).any(|(i, _)| {
            let before = script[..i].chars().next_back();
            let after = script[i + unit.len()..].chars().next();
            !before.is_some_and(part) && !after.is_some_and(part)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_reads_as_its_unit_names() {
        let listing =
            "aidecheck.service loaded failed failed Aide Check\nnginx.service    loaded failed failed A high performance web server\n\n";
        assert_eq!(parse(listing).into_iter().collect::<Vec<_>>(), ["aidecheck.service", "nginx.service"]);
    }

    #[test]
    fn a_unit_is_named_as_a_whole_word_only() {
        let fix = "cat > /etc/systemd/system/aidecheck.service <<EOF\nEOF\nsystemctl enable aidecheck.service\n";
        assert!(named_in(fix, "aidecheck.service"));
        assert!(named_in("systemctl enable 'aidecheck.service'", "aidecheck.service"));
        assert!(!named_in("systemctl enable myaidecheck.service aidecheck.services", "aidecheck.service"));
        assert!(!named_in(fix, "aidecheck.timer"));
        assert!(!named_in(fix, ""));
    }
}
