//! The crew a run's steps are made from: the run's books, the machine, the offer, the agents,
//! the skill and its content, and the loop's knobs. Each step takes from it only what it uses
//! when it is made (its `new`), and holds nothing else; none is handed the crew itself.
use std::sync::Arc;

use temper_scap::Benchmark;

use crate::agent::{Architect, Reflector, Worker};
use crate::lease::Lease;
use crate::ports::OfflineJudge;
use crate::ports::{Guest, Hypervisor};
use crate::ralph::books::Observer;
use crate::ralph::books::{self, Books, Spent};
use crate::ralph::machine::{self, Machine};
use crate::ralph::offer::{self, Offer};
use crate::ralph::settings::Settings;
use crate::scan::Scanner;
use crate::skill::Skill;
use temper_journal::{Journal, RunJournal};

/// The agents for the three roles.
#[derive(Clone, Copy)]
pub struct Agents<'a> {
    pub architect: &'a dyn Architect,
    pub worker: &'a dyn Worker,
    pub reflector: &'a dyn Reflector,
}

/// What a run is driven with: the ports (the hardware sits behind their traits), the agents, the
/// skill and its content, and how the loop is tuned.
pub struct Parts<'a> {
    pub store: &'a dyn Journal,
    pub hv: &'a dyn Hypervisor,
    pub guest: &'a dyn Guest,
    pub agents: Agents<'a>,
    pub skill: &'a Skill,
    /// The profile's selected rules, for titles, rationale and stock fixes.
    pub content: &'a Benchmark,
    pub scanner: Scanner,
    pub settings: Settings,
    pub observer: &'a dyn Observer,
    /// Judges the final state's disk from outside the guest, to cross-examine its final scan
    /// (`finish/cross.rs`); `None`: the guest's scan alone.
    pub offline: Option<&'a dyn OfflineJudge>,
}

/// What the steps are made from (each takes only what it uses).
pub(super) struct Crew<'a> {
    pub books: Books<'a>,
    pub machine: Machine<'a>,
    pub offer: Offer<'a>,
    pub agents: Agents<'a>,
    pub skill: &'a Skill,
    /// The profile's selected rules, for titles, rationale and stock fixes.
    pub content: &'a Benchmark,
    pub settings: Settings,
    /// Judges the final state's disk from outside the guest (`finish/cross.rs`).
    pub offline: Option<&'a dyn OfflineJudge>,
}

impl<'a> Crew<'a> {
    pub fn new(parts: Parts<'a>, lease: &'a Lease) -> Self {
        let Parts { store, hv, guest, agents, skill, content, scanner, settings, observer, offline } = parts;
        let journal = RunJournal::new(store, lease.run);
        // The guest writes the results: a rule id the content lacks is dropped at the scanner.
        let scanner = scanner.with_known_rules(content.selected_rules.iter().map(|r| r.id.clone()));
        let spent = Arc::new(Spent::default());
        let books = Books::open(books::Opening {
            journal,
            observer,
            lease,
            spent: spent.clone(),
            notes: scanner.clone(),
            skill: skill.name().to_string(),
        });
        let machine = Machine::new(machine::MachineParts { hv, guest, scanner: scanner.clone(), run: lease.run, spent }, &settings);
        let offer = Offer::new(offer::OfferParts { journal, skill, content, scanner }, &settings);
        Self { books, machine, offer, agents, skill, content, settings, offline }
    }
}
