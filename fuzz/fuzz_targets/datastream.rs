//! Arbitrary bytes into the datastream reader: any outcome but a panic or a hang is fine.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = temper_scap::list_profiles_bytes(data);
    for profile in [None, Some("p")] {
        if let Ok(b) = temper_scap::read_benchmark_bytes(data, profile) {
            let _ = temper_scap::rules_json(&b.selected_rules).to_string();
        }
    }
});
