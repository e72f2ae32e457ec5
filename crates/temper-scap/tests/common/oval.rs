//! The OVAL engine and real oscap side by side on this host. Evaluations never overlap (they
//! would slow each other and move the timings).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use temper_scap::oval::{OvalContent, OvalEngine, OvalEval, OvalPlan, OvalResults, RuleOutcome, Split, XccdfReason};
use temper_scap::{Benchmark, Outcome, Tailoring, parse_results, read_benchmark, read_benchmark_tailored};

use super::{oscap, ssg};

/// What to evaluate.
pub struct Case<'a> {
    pub label: &'a str,
    pub ds: &'a str,
    pub profile: &'a str,
    pub tailoring: Option<&'a Path>,
    /// Only these rules (the oracle then runs with `--rule`); `None`: the whole profile.
    pub rules: Option<Vec<String>>,
    /// A platforms-only run first, so the checks of rules not applicable never run.
    pub two_stage: bool,
}

/// One case evaluated by both engines.
pub struct Compared {
    pub label: String,
    pub rules: usize,
    pub plan: Arc<OvalPlan>,
    pub build: Duration,
    /// The platforms-only run of a two-stage case, and how many rules it found not applicable.
    pub platforms: Option<(Duration, usize)>,
    pub oval: Duration,
    pub xccdf: Option<Duration>,
    pub oracle: Duration,
    pub outcomes: Vec<RuleOutcome>,
    pub engine: BTreeMap<String, Outcome>,
    pub expected: BTreeMap<String, Outcome>,
    /// The OVAL results file (with system characteristics).
    pub oval_results: PathBuf,
}

/// One engine (index and plan cache) per datastream, for the whole test binary.
pub fn engine(ds: &str) -> Arc<OvalEngine> {
    static E: OnceLock<Mutex<BTreeMap<String, Arc<OvalEngine>>>> = OnceLock::new();
    let mut map = E.get_or_init(Default::default).lock().unwrap();
    map.entry(ds.to_string())
        .or_insert_with(|| Arc::new(OvalEngine::new(OvalContent::read(ssg(ds)).expect("index the datastream"))))
        .clone()
}

fn serial() -> MutexGuard<'static, ()> {
    static M: Mutex<()> = Mutex::new(());
    M.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn work_dir(label: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("oval_engine").join(label);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed())
}

/// `oscap xccdf eval --profile P [--tailoring-file T] [--rule R...] --results OUT DS`.
fn xccdf_eval(c: &Case<'_>, profile_id: &str, rules: &[&str], out: &Path) -> Duration {
    let ds = ssg(c.ds).to_str().unwrap().to_string();
    let mut args: Vec<String> = ["xccdf", "eval", "--profile", profile_id].map(String::from).to_vec();
    if let Some(t) = c.tailoring {
        // As the scanner hands it over (see `Tailoring::for_oscap`: oscap 1.3.7 misreads
        // sibling elements with no whitespace between them).
        let for_oscap = out.with_extension("tailoring.xml");
        std::fs::write(&for_oscap, Tailoring::read(t).unwrap().for_oscap()).unwrap();
        args.extend(["--tailoring-file".into(), for_oscap.to_str().unwrap().into()]);
    }
    for r in rules {
        args.extend(["--rule".into(), r.to_string()]);
    }
    args.extend(["--results".into(), out.to_str().unwrap().into(), ds]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    timed(|| {
        oscap(&args);
    })
    .1
}

/// Runs `oscap oval eval` on a plan's files in `dir`, named after `stem`.
fn oval_eval(dir: &Path, stem: &str, plan: &OvalPlan) -> (OvalResults, Duration, PathBuf) {
    let (results, took) = oval_eval_files(dir, stem, plan, true);
    (OvalResults::read(&results).unwrap(), took, results)
}

/// Writes a plan's document (and variables) to `dir`, named after `stem`, and runs `oscap oval
/// eval` on them, the schema checked unless `skip_valid`: the results document's path, and how
/// long oscap took.
pub fn oval_eval_files(dir: &Path, stem: &str, plan: &OvalPlan, skip_valid: bool) -> (PathBuf, Duration) {
    let doc = dir.join(format!("{stem}.xml"));
    std::fs::write(&doc, plan.document.as_ref().expect("a document")).unwrap();
    let vars = plan.variables.as_ref().map(|v| {
        let p = dir.join(format!("{stem}-vars.xml"));
        std::fs::write(&p, v).unwrap();
        p
    });
    let results = dir.join(format!("{stem}-results.xml"));
    let eval = OvalEval {
        document: doc.to_str().unwrap(),
        variables: vars.as_ref().and_then(|p| p.to_str()),
        results: results.to_str().unwrap(),
        skip_valid,
    };
    let args = eval.args();
    let (out, took) = timed(|| Command::new("oscap").args(&args).output().expect("oscap: install it with `bash vm/host-deps.sh`"));
    assert!(out.status.success(), "oscap {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    (results, took)
}

pub fn compare(c: Case<'_>) -> Compared {
    let ds = ssg(c.ds);
    let bench: Benchmark = match c.tailoring {
        Some(t) => read_benchmark_tailored(&ds, &Tailoring::read(t).unwrap(), Some(c.profile)).unwrap(),
        None => read_benchmark(&ds, Some(c.profile)).unwrap(),
    };
    let profile_id = bench.profile.as_ref().unwrap().id.clone();
    let rules: Vec<String> = c.rules.clone().unwrap_or_else(|| bench.selected_rules.iter().map(|r| r.id.clone()).collect());
    let engine = engine(c.ds);
    let dir = work_dir(c.label);
    let _one_at_a_time = serial();

    // The engine: (platforms first,) one oscap oval eval, and the xccdf path for the rest.
    let (split, platforms, first_build) = if c.two_stage {
        let (first, built) = timed(|| engine.platforms(&bench, &rules).unwrap());
        let (res, took, _) = oval_eval(&dir, "platforms", &first);
        let split = first.split(&res);
        let na = split.not_applicable.len();
        (split, Some((took, na)), built)
    } else {
        (Split { evaluate: rules.clone(), not_applicable: Vec::new() }, None, Duration::ZERO)
    };
    let (plan, build) = timed(|| engine.plan(&bench, &split.evaluate).unwrap());
    let build = build + first_build;
    let (mut outcomes, oval, oval_results) = match plan.document {
        Some(_) => {
            let (res, took, path) = oval_eval(&dir, "doc", &plan);
            (plan.outcomes(&res), took, path)
        }
        None => (plan.outcomes(&OvalResults::default()), Duration::ZERO, PathBuf::new()),
    };
    outcomes.extend(split.not_applicable);
    let mut engine: BTreeMap<String, Outcome> = outcomes.iter().map(|o| (o.rule.clone(), o.outcome)).collect();
    let xccdf_rules: Vec<&str> = plan.xccdf_rules().into_iter().map(|(r, _)| r).collect();
    let xccdf = (!xccdf_rules.is_empty()).then(|| {
        let out = dir.join("xccdf-path.xml");
        let took = xccdf_eval(&c, &profile_id, &xccdf_rules, &out);
        let t = parse_results(&out).unwrap();
        for r in &xccdf_rules {
            engine.insert(r.to_string(), t.result_of(r).expect("the xccdf path ran every rule it was given"));
        }
        took
    });

    // The oracle: xccdf eval of the whole profile (or of the same rules).
    let full = dir.join("oracle.xml");
    let only: Vec<&str> = c.rules.iter().flatten().map(String::as_str).collect();
    let oracle = xccdf_eval(&c, &profile_id, &only, &full);
    let t = parse_results(&full).unwrap();
    let expected = rules.iter().map(|r| (r.clone(), t.result_of(r).expect("the oracle has every rule"))).collect();
    Compared {
        label: c.label.into(),
        rules: rules.len(),
        plan,
        build,
        platforms,
        oval,
        xccdf,
        oracle,
        outcomes,
        engine,
        expected,
        oval_results,
    }
}

/// Prints the figures and fails on any rule whose results differ.
pub fn assert_same(c: &Compared) {
    let s = &c.plan.stats;
    let mut reasons: BTreeMap<XccdfReason, usize> = BTreeMap::new();
    c.plan.xccdf_rules().into_iter().for_each(|(_, why)| *reasons.entry(why).or_default() += 1);
    let mut counts: BTreeMap<Outcome, usize> = BTreeMap::new();
    c.expected.values().for_each(|o| *counts.entry(*o).or_default() += 1);
    let (first, na) = c.platforms.unwrap_or_default();
    let engine_total = first + c.oval + c.xccdf.unwrap_or_default();
    eprintln!(
        "[{}] {} rules: {} oval path, {} xccdf path {reasons:?}, {} decided without evaluation | oscap says {counts:?}\n  \
         plan built in {:.1?} | engine {engine_total:.2?} (platforms {first:.2?}, {na} not applicable + oval eval {:.2?} + xccdf path \
         {:.2?}) | oscap xccdf eval {:.2?}\n  \
         document {} bytes = {:.1}% of the {}-byte datastream {:?}; variables document {} bytes",
        c.label,
        c.rules,
        s.oval_rules + na,
        s.xccdf_rules,
        s.fixed_rules,
        c.build,
        c.oval,
        c.xccdf.unwrap_or_default(),
        c.oracle,
        s.document_bytes,
        100.0 * s.document_bytes as f64 / s.datastream_bytes as f64,
        s.datastream_bytes,
        s.elements,
        c.plan.variables.as_ref().map_or(0, Vec::len),
    );
    assert_eq!(c.engine.len(), c.rules, "the engine gave a result for every rule");
    let wrong: Vec<String> = c
        .expected
        .iter()
        .filter(|(r, o)| c.engine.get(*r) != Some(o))
        .map(|(r, o)| format!("{r}: engine {:?}, oscap {o}", c.engine.get(r)))
        .collect();
    assert!(wrong.is_empty(), "[{}] {} of {} rules differ:\n  {}", c.label, wrong.len(), c.rules, wrong.join("\n  "));
}
