//! cargo-fuzz target `fits_open`; the body lives in `fuzz/bodies/fits_open.rs`, shared with
//! `tests/fuzz_replay.rs` (stable toolchain).
#![no_main]

#[path = "../bodies/mod.rs"]
mod bodies;

libfuzzer_sys::fuzz_target!(|data: &[u8]| bodies::fits_open::run(data));
