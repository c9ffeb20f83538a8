//! `npy_header`: arbitrary bytes as a `.npy` file.
//!
//! The bytes are written to a temporary `.npy` file and opened with `NpySource::open`; a
//! source that opens has a few small windows read (`common::check_source`). The header part
//! (after the magic and length fields, whatever they say) also goes to `NpyHeader::parse_dict`
//! directly, and so do the whole bytes read as Latin-1.

use reproject::io::{parse_numpy_dtype, NpyHeader, NpySource};

use super::common::{check_source, TempInput};

pub fn run(data: &[u8]) {
    if data.len() > 1 << 20 {
        return;
    }
    // The dictionary parser on its own.
    let latin1: String = data.iter().map(|&b| b as char).collect();
    if let Ok(h) = NpyHeader::parse_dict(&latin1) {
        let _ = parse_numpy_dtype(&h.descr);
    }
    if data.len() > 10 {
        let start = if data.get(6).is_some_and(|&v| v >= 2) {
            12
        } else {
            10
        };
        if let Some(rest) = data.get(start..) {
            let text = String::from_utf8_lossy(rest);
            let _ = NpyHeader::parse_dict(text.trim_end());
        }
    }
    // The whole file.
    let file = TempInput::new("npy", data);
    if let Ok(src) = NpySource::open(file.path()) {
        let _ = (
            src.header(),
            src.version(),
            src.data_offset(),
            src.byte_order(),
        );
        check_source(&src);
    }
}
