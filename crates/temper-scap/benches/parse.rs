//! `cargo bench -p temper-scap`: min/median/max of the readers on real content, next to
//! Python's xml.etree doing the same job (full parse, profile selection, rule fields and
//! resolved shell fixes) in the same run.
//!
//! Env: TEMPER_SSG_DIR (SSG content), TEMPER_SHARED_DIR (for the real results file),
//! TEMPER_BENCH_RUNS (default 9), TEMPER_BENCH_PY_RUNS (default 3).
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use temper_scap::{list_profiles, parse_results, read_benchmark};

const DEFAULT_SSG_DIR: &str = "/var/cache/temper/vm/ssg/usr/share/xml/scap/ssg/content";

struct Stats {
    min: Duration,
    median: Duration,
    max: Duration,
}

fn stats(mut v: Vec<Duration>) -> Stats {
    v.sort();
    Stats { min: v[0], median: v[v.len() / 2], max: v[v.len() - 1] }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn print(name: &str, s: &Stats, note: &str) {
    println!("{name:<44} min {:>8.1} ms  median {:>8.1} ms  max {:>8.1} ms  {note}", ms(s.min), ms(s.median), ms(s.max));
}

fn measure<T>(runs: usize, mut f: impl FnMut() -> T) -> (Stats, T) {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let out = f();
        times.push(t.elapsed());
        last = Some(out);
    }
    (stats(times), last.expect("at least one run"))
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or(default)
}

fn need(p: PathBuf, hint: &str) -> PathBuf {
    if !p.is_file() {
        eprintln!("missing {}: {hint}", p.display());
        std::process::exit(1);
    }
    p
}

/// The same job in Python: ElementTree parse, selection with Group ancestry, values with
/// refine-value, rule fields, flattened description, shell fix with <sub> resolved.
const PY: &str = r#"
import sys, time, json, xml.etree.ElementTree as ET
X = '{http://checklists.nist.gov/xccdf/1.2}'
path, prof, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def run():
    root = ET.parse(path).getroot()
    bench = root if root.tag == X + 'Benchmark' else next(root.iter(X + 'Benchmark'))
    profile = next(p for p in bench.findall(X + 'Profile') if p.get('id').endswith('_profile_' + prof))
    sel = {s.get('idref'): s.get('selected') == 'true' for s in profile.findall(X + 'select')}
    refine = {r.get('idref'): r.get('selector') for r in profile.findall(X + 'refine-value')}
    values = {}
    for v in bench.iter(X + 'Value'):
        default, opts = None, {}
        for val in v.findall(X + 'value'):
            s = val.get('selector')
            if s:
                opts[s] = val.text or ''
            elif default is None:
                default = val.text or ''
        c = refine.get(v.get('id'))
        values[v.get('id')] = opts.get(c, default) if c else (default or '')
    def fixtext(f):
        parts = [f.text or '']
        for c in f:
            if c.tag == X + 'sub':
                parts.append(values.get(c.get('idref'), ''))
            parts.append(c.tail or '')
        return ''.join(parts)
    def text(e):
        return ' '.join(''.join(e.itertext()).split()) if e is not None else ''
    def rule(r):
        fix = next((fixtext(f) for f in r.findall(X + 'fix') if f.get('system') == 'urn:xccdf:fix:script:sh'), None)
        return dict(id=r.get('id'), title=text(r.find(X + 'title')), severity=r.get('severity'),
                    description=text(r.find(X + 'description')), rationale=text(r.find(X + 'rationale')),
                    refs=[x.text for x in r.findall(X + 'reference')], fix=fix)
    rules = []
    def walk(node, on):
        for ch in node:
            if ch.tag == X + 'Group':
                walk(ch, on and sel.get(ch.get('id'), ch.get('selected', 'true') == 'true'))
            elif ch.tag == X + 'Rule' and on and sel.get(ch.get('id'), ch.get('selected', 'true') == 'true'):
                rules.append(rule(ch))
    walk(bench, True)
    return rules
times = []
for _ in range(runs):
    t = time.perf_counter()
    n = len(run())
    times.append(time.perf_counter() - t)
print(json.dumps({'times': times, 'rules': n}))
"#;

fn python(ds: &Path, profile: &str, runs: usize) -> Option<(Stats, usize)> {
    let out = Command::new("python3")
        .args(["-c", PY, ds.to_str()?, profile, &runs.to_string()])
        .output()
        .map_err(|e| eprintln!("python3 not run: {e}"))
        .ok()?;
    if !out.status.success() {
        eprintln!("python3 failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let times = v["times"].as_array()?.iter().filter_map(|t| t.as_f64()).map(Duration::from_secs_f64).collect();
    Some((stats(times), v["rules"].as_u64()? as usize))
}

fn main() {
    let dir = PathBuf::from(std::env::var("TEMPER_SSG_DIR").unwrap_or_else(|_| DEFAULT_SSG_DIR.into()));
    let fetch = "run `bash vm/fetch-ssg.sh` (or set TEMPER_SSG_DIR)";
    let ds = need(dir.join("ssg-rhel9-ds.xml"), fetch);
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    let shared = std::env::var("TEMPER_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| if beside.is_dir() { beside } else { PathBuf::from("/work/shared") });
    let results = need(shared.join("data/debian12-standard-results.xml"), "set TEMPER_SHARED_DIR");
    let runs = env_usize("TEMPER_BENCH_RUNS", 9);
    let py_runs = env_usize("TEMPER_BENCH_PY_RUNS", 3);
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len() as f64 / 1e6).unwrap_or(0.0);
    println!("temper-scap parse bench: {runs} runs each ({py_runs} for Python)");

    let (rust, n) = measure(runs, || read_benchmark(&ds, Some("stig")).expect("read").selected_rules.len());
    print("rhel9 stig: read_benchmark (rust)", &rust, &format!("{n} rules, {:.1} MB", size(&ds)));

    match python(&ds, "stig", py_runs) {
        Some((py, pn)) => {
            print("rhel9 stig: xml.etree (python3)", &py, &format!("{pn} rules"));
            println!("{:<44} python/rust median ratio {:.1}x", "", py.median.as_secs_f64() / rust.median.as_secs_f64());
        }
        None => println!("rhel9 stig: xml.etree (python3)             not run"),
    }

    let (s, n) = measure(runs, || list_profiles(&ds).expect("profiles").len());
    print("rhel9: list_profiles", &s, &format!("{n} profiles"));

    let (s, c) = measure(runs, || parse_results(&results).expect("results").rule_results.len());
    print("debian12 results: parse_results", &s, &format!("{c} rule results, {:.1} MB (goal < 100 ms)", size(&results)));
}
