//! The single pass: find the Benchmark, read its Profiles, then walk Groups and Rules with
//! the chosen profile's selection in hand (XCCDF puts Profiles before any item).
use std::collections::BTreeMap;

use quick_xml::events::{BytesStart, Event};

use crate::Severity;
use crate::error::{ScapError, ScapResult};
use crate::xml::{Xml, local, parse_bool};

use super::profile::{Policy, ProfileDef, ProfileInfo, find_profile, parse_profile};
use super::rule::{ContentRule, Fix, RawRule, parse_rule};
use super::score::ScoreTree;
use super::tailoring::Tailoring;
use super::value::{Value, parse_value};
use super::{Benchmark, MAX_TITLE};

pub(super) fn profiles(input: &[u8]) -> ScapResult<Vec<ProfileInfo>> {
    let mut x = Xml::new(input)?;
    let (e, empty) = seek_benchmark(&mut x)?;
    let mut w = Walker::new(None, None, true);
    w.run(&mut x, &e, empty)?;
    Ok(w.defs.into_iter().map(|d| d.info).collect())
}

pub(super) fn benchmark(input: &[u8], profile: Option<&str>, tailoring: Option<&Tailoring>) -> ScapResult<Benchmark> {
    let mut x = Xml::new(input)?;
    let (e, empty) = seek_benchmark(&mut x)?;
    let mut w = Walker::new(profile, tailoring, false);
    w.run(&mut x, &e, empty)?;
    Ok(w.finish())
}

/// Reads up to the first Benchmark start tag: the root itself (plain XCCDF) or a child
/// of a datastream `component`. Everything else is skipped.
fn seek_benchmark<'a>(x: &mut Xml<'a>) -> ScapResult<(BytesStart<'a>, bool)> {
    let root = |name: &str| match name {
        "Benchmark" | "data-stream-collection" => Ok(()),
        other => Err(ScapError::NotADatastream(other.to_string())),
    };
    x.descend(&["data-stream-collection", "component"], "Benchmark", root, |_, e, empty| Ok(Some((e, empty))))?
        .ok_or(ScapError::NoBenchmark)
}

struct Walker<'p> {
    profile: Option<&'p str>,
    tailoring: Option<&'p Tailoring>,
    profiles_only: bool,
    id: String,
    title: String,
    version: String,
    defs: Vec<ProfileDef>,
    chosen: Option<ProfileInfo>,
    policy: Option<Policy>,
    values: BTreeMap<String, Value>,
    rules: Vec<RawRule>,
    rule_count: usize,
    tree: ScoreTree,
}

impl<'p> Walker<'p> {
    fn new(profile: Option<&'p str>, tailoring: Option<&'p Tailoring>, profiles_only: bool) -> Self {
        Self {
            profile,
            tailoring,
            profiles_only,
            id: String::new(),
            title: String::new(),
            version: String::new(),
            defs: Vec::new(),
            chosen: None,
            policy: None,
            values: BTreeMap::new(),
            rules: Vec::new(),
            rule_count: 0,
            tree: ScoreTree::default(),
        }
    }

    /// Builds the policy when the first item shows up; false means "stop here".
    fn ready(&mut self) -> ScapResult<bool> {
        if self.profiles_only {
            return Ok(false);
        }
        if self.policy.is_none() {
            let tailored = self.tailoring.zip(self.profile).and_then(|(t, name)| t.def(name));
            let policy = match (tailored, self.profile) {
                (Some(def), _) => {
                    let base = def.extends.as_deref().and_then(|b| self.defs.iter().find(|d| d.info.id == b));
                    let mut info = def.info.clone();
                    if info.title.is_empty() {
                        info.title = format!("{} (tailored)", base.map_or(info.id.as_str(), |b| b.info.title.as_str()));
                    }
                    self.chosen = Some(info);
                    Policy::resolve_tailored(&self.defs, def)?
                }
                (None, Some(name)) => {
                    let i = find_profile(&self.defs, name)?;
                    self.chosen = Some(self.defs[i].info.clone());
                    Policy::resolve(&self.defs, i)?
                }
                (None, None) => Policy::default(),
            };
            self.policy = Some(policy);
        }
        Ok(true)
    }

    fn policy(&self) -> &Policy {
        self.policy.as_ref().expect("ready() ran")
    }

    fn run(&mut self, x: &mut Xml<'_>, e: &BytesStart<'_>, empty: bool) -> ScapResult<()> {
        let offset = x.pos();
        self.id = x.attr(e, "id")?.ok_or(ScapError::MissingAttr { element: "Benchmark", attr: "id", offset })?;
        if empty {
            self.ready()?;
            return Ok(());
        }
        // Effective selection of each open Group, and its node in the score tree.
        let mut groups: Vec<(bool, usize)> = Vec::new();
        loop {
            let (c, c_empty) = match x.next()? {
                Event::Start(c) => (c, false),
                Event::Empty(c) => (c, true),
                Event::End(_) => {
                    if groups.pop().is_none() {
                        break;
                    }
                    continue;
                }
                Event::Eof => {
                    return Err(x.truncated(if groups.is_empty() { "Benchmark" } else { "Group" }));
                }
                _ => continue,
            };
            let offset = x.pos();
            let parent = groups.last().is_none_or(|g| g.0);
            let node = groups.last().map(|g| g.1);
            match local(&c) {
                "Profile" => {
                    if self.policy.is_some() {
                        return Err(ScapError::Invalid { what: "Profile position", value: "after Values, Groups or Rules".into(), offset });
                    }
                    self.defs.push(parse_profile(x, &c, c_empty)?);
                }
                "Value" => {
                    if !self.ready()? {
                        return Ok(());
                    }
                    let v = parse_value(x, &c, c_empty)?;
                    self.values.insert(v.id.clone(), v);
                }
                "Group" => {
                    if !self.ready()? {
                        return Ok(());
                    }
                    let on = parent && self.item_selected(x, &c, "Group", offset)?.1;
                    if !c_empty {
                        let weight = weight(x, &c, offset)?;
                        groups.push((on, self.tree.group(node, weight)));
                    }
                }
                "Rule" => {
                    if !self.ready()? {
                        return Ok(());
                    }
                    self.rule_count += 1;
                    let (id, on) = self.item_selected(x, &c, "Rule", offset)?;
                    if parent && on {
                        self.tree.rule(node, id.clone(), weight(x, &c, offset)?);
                        let severity = x.attr(&c, "severity")?.map(Severity::from).unwrap_or_default();
                        let raw = parse_rule(x, id, severity, c_empty)?;
                        self.rules.push(raw);
                    } else if !c_empty {
                        x.skip(&c)?;
                    }
                }
                "version" if groups.is_empty() && !c_empty => self.version = x.plain("version", MAX_TITLE)?,
                "title" if groups.is_empty() && !c_empty => self.title = x.plain("title", MAX_TITLE)?,
                _ if !c_empty => x.skip(&c)?,
                _ => {}
            }
        }
        self.ready()?;
        Ok(())
    }

    /// The item's id and its own selection under the policy.
    fn item_selected(&self, x: &Xml<'_>, c: &BytesStart<'_>, element: &'static str, offset: u64) -> ScapResult<(String, bool)> {
        let [id, selected, cluster] = x.attrs(c, ["id", "selected", "cluster-id"])?;
        let id = id.ok_or(ScapError::MissingAttr { element, attr: "id", offset })?;
        let default = match selected {
            Some(s) => parse_bool(&s, "selected", offset)?,
            None => true,
        };
        let on = self.policy().selected(&id, cluster.as_deref(), default);
        Ok((id, on))
    }

    fn finish(self) -> Benchmark {
        let policy = self.policy.unwrap_or_default();
        let resolved: BTreeMap<String, String> = self.values.iter().map(|(id, v)| (id.clone(), v.chosen(&policy))).collect();
        let lookup = |id: &str| resolved.get(id).map(String::as_str);
        let selected_rules = self.rules.into_iter().map(|r| build(r, &policy, &lookup)).collect();
        let profiles: Vec<ProfileInfo> = self.defs.into_iter().map(|d| d.info).collect();
        Benchmark {
            id: self.id,
            title: self.title,
            version: self.version,
            profile: self.chosen,
            tailoring: self.tailoring.map(Tailoring::info),
            profiles,
            values: self.values,
            resolved_values: resolved.clone(),
            selected_rules,
            rule_count: self.rule_count,
            score_tree: self.tree,
        }
    }
}

/// An item's `weight` (XCCDF: a non-negative decimal, 1 when absent).
fn weight(x: &Xml<'_>, c: &BytesStart<'_>, offset: u64) -> ScapResult<f32> {
    match x.attr(c, "weight")? {
        None => Ok(1.0),
        Some(w) => match w.trim().parse::<f32>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(ScapError::Invalid { what: "weight", value: w, offset }),
        },
    }
}

fn build<'v>(r: RawRule, policy: &Policy, lookup: &impl Fn(&str) -> Option<&'v str>) -> ContentRule {
    let mut ignored = Vec::new();
    let fix = r.fix.map(|f| {
        let mut unresolved = Vec::new();
        let script = f.script.render(lookup, &mut unresolved);
        Fix { script, reboot: f.reboot, disruption: f.disruption, complexity: f.complexity, strategy: f.strategy, unresolved }
    });
    ContentRule {
        severity: policy.severity(&r.id).unwrap_or(r.severity),
        title: r.title.render(lookup, &mut ignored),
        description: r.description.render(lookup, &mut ignored),
        rationale: r.rationale.render(lookup, &mut ignored),
        id: r.id,
        stig_ids: r.stig_ids,
        sv_ids: r.sv_ids,
        v_ids: r.v_ids,
        srg_ids: r.srg_ids,
        cci: r.cci,
        cce: r.cce,
        oval: r.oval,
        fix,
    }
}
