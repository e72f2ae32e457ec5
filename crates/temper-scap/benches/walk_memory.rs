//! `cargo bench -p temper-scap --bench walk_memory`: the one walk's memory on the host over
//! hostile listings, as a guest may print them (no file system needed: the guest writes what
//! the host reads). For each listing: its entries and bytes, the time to read it and to collect
//! an object that takes every file (the largest set of items one object can have) and filter
//! them, and the process's peak resident memory (`VmHWM`, reset before each listing through
//! `/proc/self/clear_refs`) beside the output's own size. The bound stated in
//! docs/scan-engines.md ("Bounds") is checked against these figures by reading them.
//!
//! Listings (TEMPER_BENCH_LISTINGS, comma separated; default all):
//! - `many`: entries with one-byte names under 256 directories of 256, up to the listing's cap
//!   (`fswalk::MAX_ENTRIES`);
//! - `long`: entries with 255-byte names in a tree whose paths reach 4,000 bytes, up to the
//!   scanner's output cap (`MAX_WALK`, 512 MiB);
//! - `wide`: one directory holding a million entries.
use std::time::Instant;

use temper_scap::fswalk::{FileState, Listing, MAX_ENTRIES, WalkObject, collect, filter};

/// The scanner's cap on the walk's output (`temper_core::scan::MAX_WALK`).
const MAX_WALK: usize = 512 * 1024 * 1024;

const EVERY_FILE: &str = r#"<unix:file_object xmlns:unix="u" xmlns:xsi="x" id="oval:b:obj:1" version="1"><unix:behaviors recurse="directories" recurse_direction="down" max_depth="-1" recurse_file_system="all"/><unix:path>/r</unix:path><unix:filename operation="pattern match">^.*$</unix:filename></unix:file_object>"#;
const WORLD_WRITABLE: &str =
    r#"<unix:file_state xmlns:unix="u" id="oval:b:ste:1" version="1"><unix:owrite datatype="boolean">true</unix:owrite></unix:file_state>"#;

fn status(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines().find_map(|l| l.strip_prefix(field)).and_then(|v| v.split_whitespace().next()).and_then(|v| v.parse().ok()).unwrap_or(0) * 1024
}

/// Resets the peak resident memory to what is resident now.
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").expect("/proc/self/clear_refs (Linux 4.0 or newer)");
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn record(out: &mut Vec<u8>, kind: u8, mode: &str, path: &[u8]) {
    out.push(kind);
    out.extend_from_slice(b" ");
    out.extend_from_slice(mode.as_bytes());
    out.extend_from_slice(b" 0 0 2049 ext4\0");
    out.extend_from_slice(path);
    out.extend_from_slice(b"\0\0");
}

/// `many`: /r, 256 directories of 256 directories, files with one- and two-byte names in them.
fn many() -> Vec<u8> {
    let mut out = Vec::new();
    record(&mut out, b'd', "755", b"/r");
    let mut n = 1;
    let per = (MAX_ENTRIES - 1 - 256 - 256 * 256) / (256 * 256);
    for a in 0..256u32 {
        let da = format!("/r/{a:x}");
        record(&mut out, b'd', "755", da.as_bytes());
        n += 1;
        for b in 0..256u32 {
            let db = format!("{da}/{b:x}");
            record(&mut out, b'd', "755", db.as_bytes());
            n += 1;
            for f in 0..per {
                record(&mut out, b'f', if f % 97 == 0 { "666" } else { "644" }, format!("{db}/{f:x}").as_bytes());
                n += 1;
            }
        }
    }
    assert!(n <= MAX_ENTRIES);
    out
}

/// `long`: directories of 255-byte names fourteen deep (paths of about 3,590 bytes), each with
/// files of 255-byte names (paths of about 3,840 bytes: under PATH_MAX, past which the walk
/// leaves an object to oscap), to the output cap.
fn long() -> Vec<u8> {
    let mut out = Vec::new();
    record(&mut out, b'd', "755", b"/r");
    let name = |c: u8, i: usize| {
        let mut n = format!("{i:08}").into_bytes();
        n.resize(255, c);
        n
    };
    let mut i = 0;
    'top: loop {
        let mut dir = b"/r".to_vec();
        for level in 0..14 {
            dir.push(b'/');
            dir.extend_from_slice(&name(b'd', i * 16 + level));
            record(&mut out, b'd', "755", &dir);
            for f in 0..16 {
                let mut p = dir.clone();
                p.push(b'/');
                p.extend_from_slice(&name(b'f', f));
                if out.len() + p.len() + 30 > MAX_WALK {
                    break 'top;
                }
                record(&mut out, b'f', if f == 0 { "666" } else { "644" }, &p);
            }
        }
        i += 1;
    }
    out
}

/// `wide`: one directory holding a million files.
fn wide() -> Vec<u8> {
    let mut out = Vec::new();
    record(&mut out, b'd', "755", b"/r");
    for f in 0..1_000_000u32 {
        record(&mut out, b'f', if f % 97 == 0 { "666" } else { "644" }, format!("/r/file-{f:07}").as_bytes());
    }
    out
}

fn main() {
    let which = std::env::var("TEMPER_BENCH_LISTINGS").unwrap_or_else(|_| "many,long,wide".into());
    println!(
        "{:<6} {:>10} {:>10} {:>9} {:>10} {:>9} {:>9} {:>11} {:>10} {:>10}",
        "", "entries", "output", "read", "index", "items", "kept", "collect", "peak RSS", "over out"
    );
    let object = WalkObject::read(EVERY_FILE.as_bytes()).unwrap();
    let state = FileState::read(WORLD_WRITABLE.as_bytes()).unwrap();
    for name in which.split(',').map(str::trim) {
        let out = match name {
            "many" => many(),
            "long" => long(),
            "wide" => wide(),
            other => panic!("no listing {other}: many, long or wide"),
        };
        let bytes = out.len() as u64;
        // The output as the scanner holds it when the walk comes back: the base line.
        reset_peak();
        let before = status("VmRSS:");
        let t = Instant::now();
        let walk = Listing::parse(out).expect("the listing reads");
        let read = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let none = |_: &str| None;
        let mut c = collect(&object, &walk, &none).expect("collects");
        let items = c.items.len();
        filter(&mut c, &walk, &[(false, &state)], &none).unwrap();
        let collect_secs = t.elapsed().as_secs_f64();
        let peak = status("VmHWM:");
        println!(
            "{name:<6} {:>10} {:>7.1}MiB {:>8.2}s {:>7.1}MiB {:>9} {:>9} {:>10.2}s {:>7.1}MiB {:>7.1}MiB",
            walk.len(),
            mib(bytes),
            read,
            mib((walk.size() as u64).saturating_sub(bytes)),
            items,
            c.items.len(),
            collect_secs,
            mib(peak),
            mib(peak.saturating_sub(before)),
        );
        println!(
            "       {:.1} bytes an entry over the output; peak {:.2}x the output",
            peak.saturating_sub(before) as f64 / walk.len() as f64,
            peak as f64 / bytes as f64
        );
        drop(c);
        drop(walk);
    }
}
