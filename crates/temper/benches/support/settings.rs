//! What a bench runs temper with, against the README's command: every `TEMPER_*` variable that
//! is a temper.toml setting (the bench's own knobs, the guest it names and the files it keeps
//! apart are not). A bench prints this line beside its figures, so that no figure comes from a
//! setting the README's command does not use without saying so.

/// Variables that choose a guest, a file or the bench's own behaviour, not how temper works.
const NOT_SETTINGS: &[&str] = &[
    "TEMPER_DOMAIN",
    "TEMPER_SSH_PORT",
    "TEMPER_DOMAIN2",
    "TEMPER_SSH_PORT2",
    "TEMPER_VM_DIR",
    "TEMPER_LOG",
    "TEMPER_CONFIG",
    "TEMPER_DB",
    "TEMPER_SKILLS_DIR",
    "TEMPER_BASELINE",
];

/// `settings: the README's` or `settings changed from the README's: TEMPER_SCAN_LANES=1`.
pub fn line() -> String {
    let mut changed: Vec<String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("TEMPER_") && !k.starts_with("TEMPER_BENCH_") && !NOT_SETTINGS.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    changed.sort();
    if changed.is_empty() {
        "settings: the README's (no TEMPER_* setting changed)".into()
    } else {
        format!("settings changed from the README's: {}", changed.join(" "))
    }
}
