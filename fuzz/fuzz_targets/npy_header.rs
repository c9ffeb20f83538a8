//! cargo-fuzz target `npy_header`; the body lives in `fuzz/bodies/npy_header.rs`, shared with
//! `tests/fuzz_replay.rs` (stable toolchain).
#![no_main]

#[path = "../bodies/mod.rs"]
mod bodies;

libfuzzer_sys::fuzz_target!(|data: &[u8]| bodies::npy_header::run(data));
