//! One test per bug the fuzz targets found (`fuzz/`, see fuzz/README.md), on the library's
//! public API; the inputs the fuzzers found are replayed by `tests/fuzz_replay.rs`
//! (`fuzz/regressions/`).

use reproject::wcs::Wcs;
use reproject::Error;

const TAN: &str = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 50.5\nCRPIX2 = 50.5\n\
                   CRVAL1 = 150.0\nCRVAL2 = 30.0\nCDELT1 = -0.001\nCDELT2 = 0.001\n";

/// `Wcs::from_params` indexed `crval` (and the other per-axis vectors) by axis without checking
/// their lengths: a hand-built or deserialised `WcsParams` with a short one panicked.
#[test]
fn from_params_with_inconsistent_lengths_is_an_error() {
    let params = Wcs::from_header_str(TAN).unwrap().params().clone();
    for cut in 0..4 {
        let mut p = params.clone();
        match cut {
            0 => drop(p.crval.pop()),
            1 => drop(p.ctype.pop()),
            2 => drop(p.cunit.pop()),
            _ => drop(p.axis_types.pop()),
        }
        assert!(
            matches!(Wcs::from_params(p.clone()), Err(Error::ShapeMismatch(_))),
            "cut {cut}"
        );
        // The same through serde, as plans travel between processes.
        let json = serde_json::to_string(&p).unwrap();
        assert!(serde_json::from_str::<Wcs>(&json).is_err(), "cut {cut}");
    }
}

/// MJD-OBS → DATE-OBS (and DATE-OBS → MJD-OBS) overflowed i64 day arithmetic for absurd
/// dates (a panic in debug builds, garbage in release).
#[test]
fn absurd_observation_dates_do_not_overflow() {
    for extra in [
        "MJD-OBS = 1E300\n",
        "MJD-OBS = -1.7976931348623157E308\n",
        "MJD-OBS = 9.2E18\n",
        "DATE-OBS= '99999999999999999-01-01'\n",
        "DATE-OBS= '-9223372036854775807-12-31T00:00:00'\n",
    ] {
        let wcs = Wcs::from_header_str(&format!("{TAN}{extra}")).unwrap();
        let p = wcs.params();
        if extra.starts_with("MJD") {
            assert!(p.date_obs.is_none(), "{extra}: {:?}", p.date_obs);
        } else {
            assert!(p.mjd_obs.is_none(), "{extra}: {:?}", p.mjd_obs);
        }
    }
    // Ordinary dates still convert.
    let wcs = Wcs::from_header_str(&format!("{TAN}MJD-OBS = 51544.5\n")).unwrap();
    assert_eq!(
        wcs.params().date_obs.as_deref(),
        Some("2000-01-01T12:00:00")
    );
}

/// Huge but finite LONPOLE or PVi_1 overflowed to NaN in the spherical rotation and
/// `pixel_to_world` returned `Some((NaN, NaN))` instead of `None`.
#[test]
fn huge_pole_angles_give_none_not_nan() {
    for extra in [
        "LONPOLE = 1.7976931348623157E308\n",
        "PV1_1 = -1.7976931348623157E308\n",
    ] {
        let header = format!("{TAN}{extra}").replace("TAN", "MOL");
        let wcs = Wcs::from_header_str(&header).unwrap();
        for (x, y) in [(0.0, 0.0), (49.5, 49.5), (100.0, 3.0)] {
            // Before the fix: Some((NaN, NaN)).
            assert_eq!(wcs.pixel_to_world(x, y), None, "{extra}");
        }
        let (mut lon, mut lat) = (vec![0.0; 1], vec![0.0; 1]);
        wcs.pixel_to_world_slice(&[0.0], &[0.0], &mut lon, &mut lat)
            .unwrap();
        assert!(lon[0].is_nan() && lat[0].is_nan());
    }
}

#[cfg(feature = "fits")]
mod fits {
    use std::path::PathBuf;

    use reproject::io::{FitsSource, ImageSource};
    use reproject::wcs::Wcs;
    use reproject::Error;

    /// A header padded to whole 2880-byte blocks, cards padded to 80 bytes.
    fn header(cards: &[&str]) -> Vec<u8> {
        let mut h: Vec<u8> = Vec::new();
        for c in cards.iter().chain(["END"].iter()) {
            let mut card = c.as_bytes().to_vec();
            card.resize(80, b' ');
            h.extend(card);
        }
        h.resize(h.len().div_ceil(2880) * 2880, b' ');
        h
    }

    fn write(name: &str, bytes: &[u8]) -> PathBuf {
        let path = std::env::temp_dir().join(format!(
            "reproject-fuzz-findings-{}-{name}.fits",
            std::process::id()
        ));
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn regression(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/regressions/fits_open")
            .join(name)
    }

    /// A primary HDU without data, then a binary table with the given cards 2 to 8.
    fn table(cards: [&str; 7]) -> Vec<u8> {
        let mut file = header(&[
            "SIMPLE  =                    T",
            "BITPIX  =                    8",
            "NAXIS   =                    0",
            "EXTEND  =                    T",
        ]);
        let mut t = vec!["XTENSION= 'BINTABLE'"];
        t.extend(cards);
        t.extend(["TTYPE1  = 'A       '", "TFORM1  = 'E       '"]);
        file.extend(header(&t));
        file.extend(vec![0u8; 2880]);
        file
    }

    const GOOD: [&str; 7] = [
        "BITPIX  =                    8",
        "NAXIS   =                    2",
        "NAXIS1  =                    4",
        "NAXIS2  =                    3",
        "PCOUNT  =                    0",
        "GCOUNT  =                    1",
        "TFIELDS =                    1",
    ];

    /// CFITSIO 3.49's `ffgttb` lets through TFIELDS > 999, a bad NAXIS1/NAXIS2 and illegal
    /// characters (typos `*status == BAD_...`), then allocates that many columns: gigabytes or a
    /// crash from a few kB. Refused before CFITSIO sees the file, plain or gzipped.
    #[test]
    fn malformed_table_headers_are_refused_before_cfitsio() {
        let good = write("table-good", &table(GOOD));
        // The well-formed table is just not an image.
        assert!(matches!(
            FitsSource::open(&good, 1),
            Err(Error::InvalidArgument(_))
        ));
        assert!(Wcs::from_fits(&good, 1).is_ok());
        std::fs::remove_file(&good).unwrap();
        let cases: [(usize, &str); 6] = [
            (6, "TFIELDS =            100000000"),
            (6, "TFIELDS =                   -1"),
            (6, "TFIELDS = 'many'"),
            (2, "NAXIS1  =                   -4"),
            (3, "NAXIS2  =                  1.5"),
            (1, "NAXIS   = \u{f1}\u{f1}"),
        ];
        for (i, (at, card)) in cases.into_iter().enumerate() {
            let mut cards = GOOD;
            cards[at] = card;
            let bytes = table(cards);
            let plain = write(&format!("table-{i}"), &bytes);
            let gz = write(&format!("table-{i}-gz"), &gzip(&bytes));
            for path in [&plain, &gz] {
                for hdu in [0, 1] {
                    let e = FitsSource::open(path, hdu).unwrap_err();
                    assert!(
                        matches!(&e, Error::Fits(m) if m.contains("malformed table")),
                        "{e}"
                    );
                    assert!(Wcs::from_fits(path, hdu).is_err(), "{card}");
                }
            }
            std::fs::remove_file(&plain).unwrap();
            std::fs::remove_file(&gz).unwrap();
        }
        // The same in a table header cut short inside its first block (CFITSIO reads the
        // cards that are there).
        let mut cards = GOOD;
        cards[3] = "NAXIS2  =               LDS = 1";
        let mut bytes = table(cards);
        bytes.truncate(2880 + 700);
        let short = write("table-short", &bytes);
        let e = FitsSource::open(&short, 1).unwrap_err();
        assert!(e.to_string().contains("malformed table"), "{e}");
        assert!(Wcs::from_fits(&short, 1).is_err());
        std::fs::remove_file(&short).unwrap();
        // A file that ends inside the first card of the table header: CFITSIO reads cards
        // 2 to 8 anyway (and a NUL-padded card is a C string to it).
        let mut bytes = table(GOOD);
        bytes.truncate(2880 + 20);
        let cut = write("table-cut", &bytes);
        let e = FitsSource::open(&cut, 1).unwrap_err();
        assert!(e.to_string().contains("malformed table"), "{e}");
        std::fs::remove_file(&cut).unwrap();
        // A primary NAXIS this walk cannot read (CFITSIO reads "0   0" as 0): the following
        // blocks are scanned for tables instead of skipped.
        let mut bytes = table(GOOD);
        bytes[2 * 80 + 16] = b'0'; // primary card 3: "NAXIS   =       0            0"
        bytes[2880 + 3 * 80 + 25] = b'x'; // table card 4: NAXIS1 no longer an integer
        let odd = write("table-odd-primary", &bytes);
        let e = FitsSource::open(&odd, 1).unwrap_err();
        assert!(e.to_string().contains("malformed table"), "{e}");
        std::fs::remove_file(&odd).unwrap();
        for name in [
            "cfitsio-ffgttb-tfields-a.fits",
            "cfitsio-ffgttb-tfields-b.fits",
            "cfitsio-ffgttb-short-last-block.fits",
            "cfitsio-ffgttb-unparsed-primary-naxis.fits",
            "cfitsio-ffgttb-table-header-cut-after-xtension.fits",
        ] {
            assert!(FitsSource::open(regression(name), 1).is_err(), "{name}");
            assert!(Wcs::from_fits(regression(name), 1).is_err(), "{name}");
        }
    }

    /// CFITSIO divides by ZTILEn (default ZNAXIS1) unchecked while opening a tile-compressed
    /// image HDU: ZTILE1 = 0 was SIGFPE. Refused before CFITSIO reads the file.
    #[test]
    fn zero_tile_sizes_are_refused_before_cfitsio() {
        let compressed = |tiles: &[&str]| {
            let mut file = header(&[
                "SIMPLE  =                    T",
                "BITPIX  =                    8",
                "NAXIS   =                    0",
                "EXTEND  =                    T",
            ]);
            let mut cards = vec!["XTENSION= 'BINTABLE'"];
            cards.extend(GOOD);
            cards.extend([
                "TTYPE1  = 'COMPRESSED_DATA'",
                "TFORM1  = '1PB(0)  '",
                "ZIMAGE  =                    T",
                "ZBITPIX =                   16",
                "ZNAXIS  =                    2",
                "ZCMPTYPE= 'RICE_1  '",
            ]);
            cards.extend(tiles);
            file.extend(header(&cards));
            file.extend(vec![0u8; 2880]);
            file
        };
        for (i, tiles) in [
            &[
                "ZNAXIS1 =                    5",
                "ZNAXIS2 =                    4",
                "ZTILE1  =                    0",
            ][..],
            &[
                "ZNAXIS1 =                    5",
                "ZNAXIS2 =                    4",
                "ZTILE2  =                   -1",
            ],
            &[
                "ZNAXIS1 =                    0",
                "ZNAXIS2 =                    4",
            ],
        ]
        .into_iter()
        .enumerate()
        {
            let path = write(&format!("ztile-{i}"), &compressed(tiles));
            for hdu in [0, 1] {
                let e = FitsSource::open(&path, hdu).unwrap_err();
                assert!(e.to_string().contains("tile size"), "{tiles:?}: {e}");
                assert!(Wcs::from_fits(&path, hdu).is_err());
            }
            std::fs::remove_file(&path).unwrap();
        }
        let path = regression("cfitsio-ztile-zero-sigfpe.fits");
        assert!(FitsSource::open(&path, 1).is_err());
        assert!(Wcs::from_fits(&path, 1).is_err());
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    /// Non-ASCII header bytes became three-byte replacement characters, so the header text
    /// was no longer 80-character cards (and `header_cards` split them wrongly). They are
    /// '?' now, as astropy reads them.
    #[test]
    fn non_ascii_header_bytes_keep_the_card_layout() {
        let mut file = header(&[
            "SIMPLE  =                    T",
            "BITPIX  =                  -32",
            "NAXIS   =                    2",
            "NAXIS1  =                    2",
            "NAXIS2  =                    2",
            "OBSERVER= 'Ca\u{f1}ete'",
            "CTYPE1  = 'RA---TAN'",
            "CTYPE2  = 'DEC--TAN'",
            "CRVAL1  =                 10.0",
            "CRVAL2  =                 20.0",
        ]);
        // The \u{f1} above is two UTF-8 bytes; make one of them a lone Latin-1 byte as well.
        let at = file.windows(2).position(|w| w == [0xc3, 0xb1]).unwrap();
        file[at] = 0xf1;
        file.extend(vec![0u8; 2880]);
        let path = write("non-ascii", &file);
        let src = FitsSource::open(&path, 0).unwrap();
        assert_eq!(src.header_text().len() % 80, 0);
        assert!(src.header_text().is_ascii());
        assert!(src
            .header_cards()
            .any(|c| c.starts_with("OBSERVER= 'Ca??ete'")));
        assert_eq!(src.header_cards().count(), src.header_text().len() / 80);
        assert_eq!(src.shape(), &[2, 2]);
        assert!(Wcs::from_fits(&path, 0).unwrap().has_celestial());
        std::fs::remove_file(&path).unwrap();
        let src = FitsSource::open(regression("non-ascii-header-card-length.fits"), 0);
        if let Ok(src) = src {
            assert_eq!(src.header_text().len() % 80, 0);
        }
    }

    /// CFITSIO 3.49's HCOMPRESS decoder trusts the tile stream (a corrupt tile read and wrote
    /// out of bounds: SEGV in dodecode64, and leaked its buffers): HCOMPRESS_1 images are
    /// refused, valid ones included (`hcompress-valid.fits`, written by astropy).
    #[test]
    fn hcompress_tiles_are_refused() {
        let e = FitsSource::open(regression("hcompress-valid.fits"), 1).unwrap_err();
        assert!(e.to_string().contains("HCOMPRESS_1"), "{e}");
        // The header (and so the WCS) is still readable.
        assert!(Wcs::from_fits(regression("hcompress-valid.fits"), 1).is_ok());
        for name in ["cfitsio-hcompress-segv.fits", "cfitsio-hcompress-leak.fits"] {
            assert!(FitsSource::open(regression(name), 1).is_err(), "{name}");
        }
    }

    /// A gzipped file whose size trailer is below its compressed size makes CFITSIO reserve
    /// 4 to 8 GB (never touched); the open must still fail or succeed cleanly.
    #[test]
    fn gzip_with_a_lying_size_trailer_opens_or_fails_cleanly() {
        let path = regression("cfitsio-gzip-isize-4gb-reservation.fits.gz");
        for hdu in [0, 1] {
            if let Ok(src) = FitsSource::open(&path, hdu) {
                let _ = src.shape();
            }
            let _ = Wcs::from_fits(&path, hdu);
        }
    }

    /// CFITSIO can fail after allocating the header text (`ffcnvthdr2str` of a damaged
    /// compressed HDU); the text was leaked. Now freed; the open is still an error.
    #[test]
    fn damaged_compressed_header_is_an_error() {
        let path = regression("cnvthdr2str-error-leak.fits");
        for hdu in [0, 1] {
            let _ = FitsSource::open(&path, hdu);
        }
    }
}
