//! cargo-fuzz target `header_text`; the body lives in `fuzz/bodies/header_text.rs`, shared with
//! `tests/fuzz_replay.rs` (stable toolchain).
#![no_main]

#[path = "../bodies/mod.rs"]
mod bodies;

libfuzzer_sys::fuzz_target!(|data: &[u8]| bodies::header_text::run(data));
