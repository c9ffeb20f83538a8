//! The bodies of the fuzz targets, shared by the cargo-fuzz binaries (`fuzz/fuzz_targets/`,
//! nightly) and by the corpus replay test (`tests/fuzz_replay.rs`, stable). Each module has
//! `pub fn run(data: &[u8])`, which must never panic: every panic (and every failed assertion
//! on the results) is a finding.
#![allow(dead_code)]

pub mod common;
#[cfg(feature = "fits")]
pub mod fits_open;
pub mod header_text;
pub mod npy_header;
pub mod wcs_transform;

/// A fuzz target body.
pub type Body = fn(&[u8]);

/// The targets by name, for the replay test.
pub const TARGETS: &[(&str, Body)] = &[
    ("header_text", header_text::run),
    #[cfg(feature = "fits")]
    ("fits_open", fits_open::run),
    ("npy_header", npy_header::run),
    ("wcs_transform", wcs_transform::run),
];
