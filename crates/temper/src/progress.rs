//! The live status line in the terminal.
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use temper_core::ralph::{Observer, Status};

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
        let rule = s.rule.as_deref().map(temper_scap::short_rule_id).unwrap_or("-");
        self.0.set_message(format!(
            "run {} | {} | {rule} #{} | fixed {} escalated {} open {} | {} elapsed{}",
            s.run,
            s.phase.as_str(),
            s.attempt,
            s.fixed,
            s.escalated,
            s.open,
            hms(s.elapsed.as_secs()),
            s.eta.map(|e| format!(" | eta {}", e.human())).unwrap_or_default(),
        ));
    }
}

pub fn hms(s: u64) -> String {
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}
