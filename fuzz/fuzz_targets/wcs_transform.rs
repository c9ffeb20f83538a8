//! cargo-fuzz target `wcs_transform`; the body lives in `fuzz/bodies/wcs_transform.rs`, shared with
//! `tests/fuzz_replay.rs` (stable toolchain).
#![no_main]

#[path = "../bodies/mod.rs"]
mod bodies;

libfuzzer_sys::fuzz_target!(|data: &[u8]| bodies::wcs_transform::run(data));
