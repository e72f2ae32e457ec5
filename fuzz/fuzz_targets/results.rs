//! Arbitrary bytes into the results reader: any outcome but a panic or a hang is fine.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(t) = temper_scap::parse_results_bytes(data) {
        let _ = temper_scap::results_json(&t, true).to_string();
        let _ = t.counts(false);
    }
});
