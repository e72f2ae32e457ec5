//! Rules whose check walks a directory tree: an object that recurses down with no depth limit
//! (world-writable files, unowned files). Under TCG one such check can take minutes, so the
//! loop checks them at the final scan rather than in every regression check.
use crate::Benchmark;

use super::content::OvalContent;
use super::doc::closure;
use super::index::Section;
use super::route::{OvalCheck, Route, Router};

/// The rules of `rules` whose OVAL check walks a directory tree, in their order.
pub fn tree_walkers(content: &OvalContent, benchmark: &Benchmark, rules: &[String]) -> Vec<String> {
    let router = Router::new(content, benchmark);
    rules.iter().filter(|id| matches!(router.route(id), Some(Route::Oval(c)) if walks(content, &c))).cloned().collect()
}

fn walks(content: &OvalContent, check: &OvalCheck) -> bool {
    let Some(comp) = content.component(&check.href) else { return false };
    let Ok(ids) = closure(comp, std::slice::from_ref(&check.definition)) else { return false };
    ids.iter().filter_map(|id| comp.entries.get(id)).filter(|e| e.section == Section::Objects).any(|e| {
        let xml = &content.bytes[e.range.clone()];
        has(xml, br#"recurse_direction="down""#) && has(xml, br#"max_depth="-1""#)
    })
}

fn has(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}
