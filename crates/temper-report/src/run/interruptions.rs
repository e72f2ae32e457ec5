//! The times a run stopped and `temper resume` took it up again, from its events: where it
//! stood, how long it was down, the attempt it cut short, and whether its kept state had to be
//! rebuilt because the snapshots were gone. The reviewer reads these before trusting the run.
use serde::Serialize;
use temper_journal::{AttemptNo, AttemptState, Event, EventData, Phase, RunStatus};

use crate::text::{ms, short, span_ms};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Interruption {
    /// When the run was taken up again.
    pub resumed_at: String,
    /// The run's last event before it stopped.
    pub stopped_at: Option<String>,
    /// `12 min 05 s`, or `-` when unknown.
    pub down_for: String,
    /// The run's status when it was resumed (`running`: it died without saying so).
    pub was: RunStatus,
    pub phase: Phase,
    pub checkpoint: String,
    /// Attempts the stop cut short: closed, never run again; their rules were picked again first.
    pub cut_short: Vec<CutShort>,
    /// The kept state rebuilt, when its snapshots were gone.
    pub rebuilt: Option<Rebuilt>,
    /// All of it in one line, for the reports.
    pub says: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CutShort {
    pub rule_id: String,
    pub short_id: String,
    /// The attempt's number on its rule.
    pub attempt: AttemptNo,
    pub state: AttemptState,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rebuilt {
    /// The snapshots that were gone.
    pub missing: Vec<String>,
    /// The older kept state the guest was restored to.
    pub from: String,
    /// Kept fixes run again on it.
    pub replayed: usize,
}

impl Interruption {
    fn line(&self) -> String {
        let mut s = format!("stopped during {} (run status {}), down {}", self.phase, self.was, self.down_for);
        for c in &self.cut_short {
            s.push_str(&format!("; attempt #{} on `{}` cut short ({}), closed and picked again", c.attempt, c.short_id, c.state));
        }
        if let Some(r) = &self.rebuilt {
            s.push_str(&format!(
                "; snapshot(s) {} gone: rebuilt from `{}` by running {} kept fix(es) again",
                r.missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", "),
                r.from,
                r.replayed
            ));
        }
        s
    }
}

/// Each resume in `events` (in order), with what followed it up to the next one.
pub fn interruptions(events: &[Event]) -> Vec<Interruption> {
    let mut out: Vec<Interruption> = Vec::new();
    let mut last: Option<&str> = None;
    for e in events {
        match &e.data {
            EventData::Resume { was, phase, checkpoint } => {
                let down = last.and_then(|l| span_ms(l, Some(&e.ts))).map(ms).unwrap_or_else(|| "-".into());
                out.push(Interruption {
                    resumed_at: e.ts.clone(),
                    stopped_at: last.map(String::from),
                    down_for: down,
                    was: *was,
                    phase: *phase,
                    checkpoint: checkpoint.clone(),
                    cut_short: Vec::new(),
                    rebuilt: None,
                    says: String::new(),
                });
            }
            EventData::AttemptInterrupted { attempt, state } => {
                if let (Some(i), Some(rule)) = (out.last_mut(), &e.rule_id) {
                    let c = CutShort { rule_id: rule.clone(), short_id: short(rule).to_string(), attempt: *attempt, state: *state };
                    i.cut_short.push(c);
                }
            }
            EventData::CheckpointLost { missing, from, replayed } => {
                if let Some(i) = out.last_mut() {
                    i.rebuilt = Some(Rebuilt { missing: missing.clone(), from: from.clone(), replayed: *replayed });
                }
            }
            _ => {}
        }
        last = Some(&e.ts);
    }
    for i in &mut out {
        i.says = i.line();
    }
    out
}
