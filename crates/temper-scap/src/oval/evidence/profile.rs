//! Evidence from a whole profile's `oscap xccdf eval --oval-results`: oscap writes one OVAL
//! results document, with system characteristics, per OVAL component it evaluated, named
//! `<href>.result.xml` after the checks' `href`. The definitions keep their ids there.
use crate::Benchmark;
use crate::results::Outcome;

use super::super::cache::OvalEngine;
use super::super::route::{Route, Router};
use super::{Definitions, Evidence, OvalReport};

/// One results document oscap wrote, by its file name.
pub type NamedReport = (String, OvalReport);

impl OvalEngine {
    /// The evidence of each of `failing` (rule, its outcome) whose check is one OVAL definition,
    /// from `reports`: the one named after the check's `href` first, then any other that has
    /// the definition (oscap writes one document per evaluation of a component).
    pub fn profile_evidence(&self, benchmark: &Benchmark, reports: &[NamedReport], failing: &[(String, Outcome)]) -> Vec<Evidence> {
        if reports.is_empty() {
            return Vec::new();
        }
        let router = Router::new(self.content(), benchmark);
        let source = self.content().source();
        let mut out = Vec::new();
        for (rule, outcome) in failing {
            let Some(Route::Oval(c)) = router.route(rule) else { continue };
            let Some(&ci) = source.hrefs.get(&c.href) else { continue };
            // The host's definitions of the check, the profile's values bound: the reports give
            // only results and items.
            let Ok(defs) = Definitions::of_check(&source, ci, &c.definition, &c.exports) else { continue };
            let named = format!("{}.result.xml", c.href.rsplit('/').next().unwrap_or(&c.href));
            let mut order = reports.iter().filter(|(n, _)| *n == named).chain(reports.iter().filter(|(n, _)| *n != named));
            out.extend(order.find_map(|(_, r)| r.against(&defs).evidence(rule, *outcome, &c.definition, &c.definition)));
        }
        out
    }
}
