//! The values every format renders, built from one loaded run (`crate::run`): the run report,
//! each rule's ids, prose and next steps, the fleet report.
mod attempt;
mod controls;
mod counts;
mod cross;
mod fleet;
mod info;
mod next_step;
mod report;
mod rules;

pub use controls::{ControlsView, WaiverView, target_comment};
pub use counts::BeforeAfter;
pub use cross::{CrossOutcome, CrossView};
pub use fleet::{FleetEscalation, FleetReport, TargetRow, load_fleet};
pub use info::rule_info;
pub use next_step::next_steps;
pub use report::{Report, SCHEMA, build};
pub use rules::{FixedRule, RuleFindings, RuleSection, fixed_rules};
