//! `fits_open`: arbitrary bytes as a FITS file.
//!
//! The bytes are written to a temporary `.fits` file, which is opened with
//! `Wcs::from_fits` (HDU 0 and 1) and `FitsSource::open` (HDU 0 and 1). Every source that
//! opens has its header WCS checked like `header_text` and a few small windows read
//! (`common::check_source`: in-range windows must read, out-of-range ones must be errors).

use reproject::io::FitsSource;
use reproject::wcs::Wcs;

use super::common::{check_source, check_wcs, TempInput};

/// Files bigger than this are not written (libFuzzer's -max_len keeps inputs far below).
const MAX_FILE: usize = 1 << 20;

pub fn run(data: &[u8]) {
    if data.len() > MAX_FILE {
        return;
    }
    let file = TempInput::new("fits", data);
    for hdu in [0, 1] {
        let wcs = Wcs::from_fits(file.path(), hdu);
        if let Ok(wcs) = &wcs {
            check_wcs(wcs, &[]);
        }
        if let Ok(src) = FitsSource::open(file.path(), hdu) {
            let _ = (
                src.bitpix(),
                src.scaling(),
                src.blank(),
                src.is_compressed(),
            );
            let _ = (src.is_memory_mapped(), src.hdu(), src.path());
            let header = src.header_text();
            assert_eq!(
                header.len() % 80,
                0,
                "header text not in 80-character cards"
            );
            assert_eq!(src.header_cards().count(), header.len() / 80);
            check_source(&src);
            // The same header gives the same WCS both ways (compressed HDUs differ: the
            // source shows the header of the image they hold).
            if let (Ok(a), Ok(b), false) = (&wcs, src.wcs(), src.is_compressed()) {
                assert_eq!(
                    format!("{:?}", a.params()),
                    format!("{:?}", b.params()),
                    "Wcs::from_fits and FitsSource::wcs disagree"
                );
            }
        }
    }
}
