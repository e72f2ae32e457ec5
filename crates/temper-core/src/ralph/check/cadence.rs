//! How often the regression set is checked: fixes per check, from what a check costs against a
//! one-rule rescan, re-derived from each check's own time.
use std::time::Duration;

use crate::ralph::settings::MAX_BATCH;
use crate::ralph::state::RunState;

/// What a regression check may cost each fix of its batch, in one-rule rescans. Checks find a
/// regression rarely (none in 146 fixes of the full ANSSI run), and one costs a bisection of a
/// few more checks then; half a rescan keeps the checks at about a third of the verification.
pub(in crate::ralph) const CHECK_SHARE: f64 = 0.5;

/// Fixes per regression check, from a one-rule rescan and the same rescan with the regression set:
/// the set's extra cost over [`CHECK_SHARE`] of a one-rule rescan. 1 means the set is cheap and
/// rides in every rule rescan (standard: 12.3 s with the set vs 9.7 s without → 1; ANSSI high,
/// hardened, in lanes: about 15 s vs 1.7 s → 15; capped at [`MAX_BATCH`]).
pub(in crate::ralph) fn batch_size(with_set: Duration, one_rule: Duration) -> u32 {
    let unit = one_rule.as_secs_f64().max(0.1) * CHECK_SHARE;
    let extra = with_set.saturating_sub(one_rule).as_secs_f64();
    ((extra / unit).round() as u32).clamp(1, MAX_BATCH)
}

/// The cadence a check that took `took` calls for; `None` when the cadence is set, not measured.
pub(in crate::ralph) fn retimed(state: &RunState, took: Duration) -> Option<u32> {
    state.one_rule().map(|one| batch_size(one + took, one))
}

#[cfg(test)]
mod tests {
    use super::*;
    use temper_journal::Booted;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn a_cheap_regression_set_rides_in_every_rescan() {
        // Measured on the test VM: standard, with the set 12.0 s, one rule 9.7 s.
        assert_eq!(batch_size(secs(12.0), secs(9.7)), 1);
        assert_eq!(batch_size(secs(5.0), secs(9.0)), 1, "noise: the set measured faster than one rule");
    }

    #[test]
    fn an_expensive_regression_set_is_batched_and_capped() {
        // ANSSI high: with the set about 170 s, one rule about 10 s.
        assert_eq!(batch_size(secs(170.0), secs(10.0)), MAX_BATCH);
        assert_eq!(batch_size(secs(40.0), secs(10.0)), 6, "30 s more: six fixes pay 5 s each");
        assert_eq!(batch_size(secs(4000.0), secs(10.0)), MAX_BATCH);
        assert_eq!(batch_size(secs(30.0), Duration::ZERO), MAX_BATCH, "no division by zero");
    }

    #[test]
    fn the_cadence_follows_each_checks_time() {
        // ANSSI high: a one-rule rescan 2.6 s; the set's checks 11 s at first, 26 s later.
        let booted = Booted { snapshot: "baseline".into(), through: None };
        let state = RunState::at("c".into(), booted, "temper-r1-".into()).with_cadence(4, Some(secs(2.6)));
        assert_eq!(retimed(&state, secs(5.0)), Some(4));
        assert_eq!(retimed(&state, secs(11.0)), Some(8));
        assert_eq!(retimed(&state, secs(26.0)), Some(20));
        assert_eq!(retimed(&state, secs(60.0)), Some(MAX_BATCH));
        assert_eq!(retimed(&state, secs(95.0)), Some(MAX_BATCH), "a walker joined the set");
        assert_eq!(retimed(&state, secs(1.0)), Some(1), "a cheap set rides in every rescan again");
        assert_eq!(retimed(&state.with_cadence(4, None), secs(26.0)), None, "a cadence set by hand stays");
    }
}
