//! Where a unit that failed at the image's boot comes from: the run's kept fixes whose script
//! names it (`aidecheck.service` in the fix that writes and enables it). The reviewer's next step
//! starts at that fix; a unit no kept fix names was the image's own, or came with a package.
use std::collections::BTreeMap;

/// Each failed unit, with the short ids of the rules whose kept fix names it. `kept`: each kept
/// fix's rule and script, in keep order.
pub fn named_by(failed: &[String], kept: &[(&str, &str)]) -> BTreeMap<String, Vec<String>> {
    let by = |unit: &str| -> Vec<String> {
        kept.iter()
            .filter(|(_, script)| temper_core::units::named_in(script, unit))
            .map(|(rule, _)| temper_scap::short_rule_id(rule).to_string())
            .collect()
    };
    failed.iter().map(|unit| (unit.clone(), by(unit))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_unit_is_traced_to_the_kept_fix_that_names_it() {
        let timer = (
            "xccdf_org.ssgproject.content_rule_aide_periodic_checking_systemd_timer",
            "cat > /etc/systemd/system/aidecheck.service <<EOF\nEOF\nsystemctl enable aidecheck.service\n",
        );
        let other = (
            "xccdf_org.ssgproject.content_rule_service_rsyslog_enabled",
            "systemctl enable rsyslog.service # not myaidecheck.service, nor aidecheck.services\n",
        );
        let found = named_by(&["aidecheck.service".into(), "nginx.service".into()], &[timer, other]);
        assert_eq!(found["aidecheck.service"], vec!["aide_periodic_checking_systemd_timer".to_string()]);
        assert!(found["nginx.service"].is_empty(), "{found:?}");
    }
}
