//! The live status line in the terminal.
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use temper_core::ralph::{Observer, Status};
use temper_journal::AttemptNo;

pub struct CliProgress(ProgressBar);

impl CliProgress {
    /// Drawn (with `\r` and escape codes) only when stderr is a terminal; hidden in logs and under systemd.
    pub fn new() -> Self {
        if !std::io::stderr().is_terminal() {
            return Self(ProgressBar::hidden());
        }
        let bar = ProgressBar::new_spinner();
        bar.set_style(ProgressStyle::with_template("{spinner} {msg}").unwrap_or_else(|_| ProgressStyle::default_spinner()));
        bar.enable_steady_tick(Duration::from_millis(250));
        Self(bar)
    }

    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

impl Observer for CliProgress {
    /// A hidden bar (stderr is no terminal) shows nothing.
    fn shows_eta(&self) -> bool {
        !self.0.is_hidden()
    }

    fn update(&self, s: &Status) {
        self.0.set_message(line(s));
    }
}

/// `run 3 | fix | sshd_set_keepalive #2 | fixed 85 escalated 0 open 21 of 106 | 0:40:12 elapsed`:
/// where the run stands, as `temper status` counts it.
fn line(s: &Status) -> String {
    let at = &s.standing;
    let rule = at.rule.as_deref().map(temper_scap::short_rule_id).unwrap_or("-");
    format!(
        "run {} | {} | {rule} #{} | {} of {} | {} elapsed{}",
        s.run,
        at.phase.as_str(),
        s.attempt.map_or(0, AttemptNo::get),
        at.states(),
        at.tally.in_scope,
        hms(s.elapsed.as_secs()),
        s.eta.map(|e| format!(" | eta {}", e.human())).unwrap_or_default(),
    )
}

pub fn hms(s: u64) -> String {
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use temper_journal::{Phase, RunId, Standing, Tally};

    #[test]
    fn the_line_shows_the_states_of_the_rules_in_scope_and_what_they_add_up_to() {
        let tally =
            Tally { failing_at_start: 145, became_applicable: 21, in_scope: 166, open: 21, fixed: 130, escalated: 15, ..Tally::default() };
        let rule = Some("xccdf_org.ssgproject.content_rule_sshd_set_keepalive".to_string());
        let standing = Standing { phase: Phase::Fix, rule, attempt: Some(1), attempts: 160, tally };
        let s = Status { run: RunId::new(3).unwrap(), standing, attempt: AttemptNo::new(2), elapsed: Duration::from_secs(3725), eta: None };
        assert_eq!(line(&s), "run 3 | fix | sshd_set_keepalive #2 | fixed 130 escalated 15 open 21 of 166 | 1:02:05 elapsed");
    }
}
