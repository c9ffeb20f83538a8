//! FITS files with distortion lookup tables (HST's layout: SIP in the science header, CPDIS
//! tables in `WCSDVARR` extensions, a D2IM table in a `D2IMARR` extension): read as astropy
//! reads them, by `Wcs::from_fits`, `FitsSource::wcs`, the CLI and worker processes.
#![cfg(feature = "fits")]

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;

use fitsio::images::{ImageDescription, ImageType};
use fitsio::FitsFile;
use reproject::engine::{reproject_interp, Options};
use reproject::io::{FitsSource, ImageSource};
use reproject::wcs::distortion::{LookupTable, LookupTables};
use reproject::wcs::Wcs;
use reproject::Error;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("lookup_tables");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// The science header: TAN-SIP of a 60 x 40 image.
const SCIENCE: &[&str] = &[
    "CTYPE1  = 'RA---TAN-SIP'",
    "CTYPE2  = 'DEC--TAN-SIP'",
    "CRPIX1  = 30.5",
    "CRPIX2  = 20.5",
    "CRVAL1  = 150.1",
    "CRVAL2  = 2.2",
    "CD1_1   = -2.0E-4",
    "CD1_2   = 3.0E-5",
    "CD2_1   = 2.5E-5",
    "CD2_2   = 2.0E-4",
    "A_ORDER = 2",
    "B_ORDER = 2",
    "A_2_0   = 3.0E-5",
    "B_0_2   = -2.0E-5",
];

/// The cards naming the tables: CPDIS1 and CPDIS2 (`cpdis1_axis` is DP1's `AXIS.1` record,
/// 1 unless the table is stored transposed), and D2IM on axis 2.
fn table_cards(cpdis1_axis: u32) -> Vec<String> {
    let mut cards = vec![];
    for (i, extver, axis1) in [(1, 1, cpdis1_axis), (2, 2, 1)] {
        cards.push(format!("CPDIS{i}  = 'Lookup'"));
        cards.push(format!("DP{i}     = 'EXTVER: {extver}'"));
        cards.push(format!("DP{i}     = 'NAXES: 2'"));
        cards.push(format!("DP{i}     = 'AXIS.1: {axis1}'"));
        cards.push(format!("DP{i}     = 'AXIS.2: {}'", 3 - axis1));
    }
    cards.push("D2IMDIS2= 'Lookup'".into());
    cards.push("D2IM2   = 'EXTVER: 1'".into());
    cards.push("D2IM2   = 'AXIS.1: 1'".into());
    cards.push("D2IM2   = 'AXIS.2: 2'".into());
    cards
}

/// A smooth table of `nx` x `ny` samples (`ny` rows).
fn samples(nx: usize, ny: usize, phase: f32, scale: f32) -> Vec<f32> {
    (0..nx * ny)
        .map(|i| scale * ((i % nx) as f32 * 0.7 + phase).sin() * ((i / nx) as f32 * 0.5).cos())
        .collect()
}

/// The tables as they are written: (EXTNAME, EXTVER, samples, (NAXIS1, NAXIS2), CRPIX, CRVAL,
/// CDELT).
#[allow(clippy::type_complexity)]
fn tables() -> Vec<(
    &'static str,
    i64,
    Vec<f32>,
    [usize; 2],
    [f64; 2],
    [f64; 2],
    [f64; 2],
)> {
    vec![
        (
            "WCSDVARR",
            1,
            samples(9, 7, 0.3, 0.6),
            [9, 7],
            [1.5, 2.0],
            [3.0, -5.0],
            [8.0, 8.0],
        ),
        (
            "WCSDVARR",
            2,
            samples(9, 7, 1.1, 0.4),
            [9, 7],
            [1.0, 1.0],
            [0.0, 0.0],
            [8.0, 7.0],
        ),
        (
            "D2IMARR",
            1,
            samples(60, 1, 0.5, 0.2),
            [60, 1],
            [1.0, 1.0],
            [0.0, 0.0],
            [1.0, 1.0],
        ),
    ]
}

/// An HST-like file: an empty primary HDU, the science image (HDU 1), then the tables.
fn write_file(path: &Path, cards: &[String], image: &[f32]) {
    let mut f = FitsFile::create(path).open().unwrap();
    let desc = ImageDescription {
        data_type: ImageType::Float,
        dimensions: &[40, 60],
    };
    let hdu = f.create_image("SCI", &desc).unwrap();
    hdu.write_image(&mut f, image).unwrap();
    let science = SCIENCE.iter().map(|c| c.to_string());
    for card in science.chain(cards.iter().cloned()) {
        write_card(&mut f, &card);
    }
    for (name, extver, data, naxis, crpix, crval, cdelt) in tables() {
        let desc = ImageDescription {
            data_type: ImageType::Float,
            dimensions: &[naxis[1], naxis[0]],
        };
        let hdu = f.create_image(name, &desc).unwrap();
        hdu.write_image(&mut f, &data).unwrap();
        hdu.write_key(&mut f, "EXTVER", extver).unwrap();
        for (key, v) in [("CRPIX", crpix), ("CRVAL", crval), ("CDELT", cdelt)] {
            hdu.write_key(&mut f, &format!("{key}1"), v[0]).unwrap();
            hdu.write_key(&mut f, &format!("{key}2"), v[1]).unwrap();
        }
    }
}

/// Appends a raw card (record-valued keywords repeat a keyword) to the current HDU.
fn write_card(f: &mut FitsFile, card: &str) {
    let card = CString::new(card).unwrap();
    let mut status = 0;
    // SAFETY: `f` is an open FITS file; the card is a NUL-terminated string.
    unsafe { fitsio::sys::ffprec(f.as_raw(), card.as_ptr(), &mut status) };
    assert_eq!(status, 0, "ffprec");
}

/// The tables a reader should find: CPDIS1 (transposed when DP1's `AXIS.1` is 2), CPDIS2,
/// D2IM2.
fn expected_tables(cpdis1_transposed: bool) -> LookupTables {
    let mut t = tables()
        .into_iter()
        .map(|(_, _, data, naxis, crpix, crval, cdelt)| {
            LookupTable::new(data, naxis, crpix, crval, cdelt).unwrap()
        });
    let (cpdis1, cpdis2, d2im2) = (t.next().unwrap(), t.next().unwrap(), t.next().unwrap());
    let cpdis1 = if cpdis1_transposed {
        cpdis1.transposed()
    } else {
        cpdis1
    };
    LookupTables {
        det2im: [None, Some(d2im2)],
        cpdis: [Some(cpdis1), Some(cpdis2)],
    }
}

/// The science header's WCS without its tables (NAXISn as the file has them).
fn science_wcs() -> Wcs {
    let text = format!(
        "NAXIS = 2\nNAXIS1 = 60\nNAXIS2 = 40\n{}",
        SCIENCE.join("\n")
    );
    Wcs::from_header_str(&text).unwrap()
}

fn image() -> Vec<f32> {
    (0..60 * 40)
        .map(|i| ((i * 37) % 101) as f32 / 10.0)
        .collect()
}

#[test]
fn the_tables_are_read_from_their_extensions() {
    for transposed in [false, true] {
        let path = scratch(&format!("hst_{transposed}.fits"));
        write_file(
            &path,
            &table_cards(if transposed { 2 } else { 1 }),
            &image(),
        );
        let wcs = Wcs::from_fits(&path, 1).unwrap();
        let expected = science_wcs()
            .with_lookup_tables(expected_tables(transposed))
            .unwrap();
        // Equal parameters, tables included, and the same positions.
        assert!(wcs == expected, "transposed: {transposed}");
        assert!(wcs != science_wcs());
        for (x, y) in [(0.0, 0.0), (59.0, 39.0), (12.3, 31.7)] {
            assert_eq!(wcs.pixel_to_world(x, y), expected.pixel_to_world(x, y));
            assert_ne!(wcs.pixel_to_world(x, y), science_wcs().pixel_to_world(x, y));
        }
        let source = FitsSource::open(&path, 1).unwrap();
        assert!(source.wcs().unwrap() == wcs);
        // The header alone names tables it does not hold: refused, never ignored.
        let refused = Wcs::from_header_str(source.header_text());
        assert!(matches!(refused, Err(Error::Unsupported(m)) if m.contains("lookup tables")));
    }
}

#[test]
fn a_reprojection_from_the_file_uses_the_tables() {
    let path = scratch("hst_reproject.fits");
    write_file(&path, &table_cards(1), &image());
    let source = FitsSource::open(&path, 1).unwrap();
    let target = Wcs::from_header_str(
        "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 25\nCRPIX2 = 22\nCRVAL1 = 150.1\n\
         CRVAL2 = 2.2\nCDELT1 = -2.2E-4\nCDELT2 = 2.2E-4\n",
    )
    .unwrap();
    let options = Options::default();
    let from_file = reproject_interp(
        &source,
        &source.wcs().unwrap(),
        &target,
        &[44, 50],
        &options,
    );
    let (data, footprint) = from_file.unwrap();
    let in_memory = science_wcs()
        .with_lookup_tables(expected_tables(false))
        .unwrap();
    let (want, want_fp) =
        reproject_interp(&source, &in_memory, &target, &[44, 50], &options).unwrap();
    let bits = |a: &ndarray::ArrayD<f64>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&data), bits(&want));
    assert_eq!(bits(&footprint), bits(&want_fp));
    let (bare, _) =
        reproject_interp(&source, &science_wcs(), &target, &[44, 50], &options).unwrap();
    assert_ne!(bits(&data), bits(&bare));
    assert!(footprint.iter().filter(|&&f| f > 0.0).count() > 1000);

    // The command line, in this process's threads and in worker processes, writes the same.
    let dir = path.parent().unwrap();
    let target_path = dir.join("target.hdr");
    std::fs::write(
        &target_path,
        "NAXIS   = 2\nNAXIS1  = 50\nNAXIS2  = 44\nCTYPE1  = 'RA---TAN'\nCTYPE2  = 'DEC--TAN'\n\
         CRPIX1  = 25\nCRPIX2  = 22\nCRVAL1  = 150.1\nCRVAL2  = 2.2\nCDELT1  = -2.2E-4\n\
         CDELT2  = 2.2E-4\nEND\n",
    )
    .unwrap();
    for processes in [None, Some("2")] {
        let out = dir.join(format!("out_{}.fits", processes.unwrap_or("1")));
        let _ = std::fs::remove_file(&out);
        let mut args = vec!["reproject", path.to_str().unwrap(), "--hdu", "1", "--to"];
        args.extend([
            target_path.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
        ]);
        args.push("--quiet");
        if let Some(n) = processes {
            args.extend(["--processes", n]);
        }
        let run = Command::new(env!("CARGO_BIN_EXE_reproject-rs"))
            .args(&args)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let written = FitsSource::open(&out, 0).unwrap();
        let mut values = vec![0.0; 44 * 50];
        written.read_window(0, 0..44, 0..50, &mut values).unwrap();
        let values: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
        assert_eq!(values, bits(&data), "processes: {processes:?}");
    }
    let info = Command::new(env!("CARGO_BIN_EXE_reproject-rs"))
        .args(["info", path.to_str().unwrap(), "--hdu", "1"])
        .output()
        .unwrap();
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(
        info.contains("tables:      D2IM2 60x1, CPDIS1 9x7, CPDIS2 9x7"),
        "{info}"
    );
}

#[test]
fn broken_table_descriptions_are_errors() {
    /// A file's name, its table cards, and the error it must give.
    type Case = (&'static str, Vec<String>, fn(&Error) -> bool);
    let cases: [Case; 4] = [
        // An EXTVER no extension has.
        (
            "missing_ext",
            table_cards(1)
                .into_iter()
                .map(|c| c.replace("'EXTVER: 2'", "'EXTVER: 7'"))
                .collect(),
            |e| matches!(e, Error::Fits(m) if m.contains("WCSDVARR, 7")),
        ),
        // No AXIS.1 record: astropy's reader fails too.
        (
            "no_axis",
            table_cards(1)
                .into_iter()
                .filter(|c| !c.contains("DP1     = 'AXIS.1"))
                .collect(),
            |e| matches!(e, Error::MissingKeyword(k) if k == "DP1.AXIS.1"),
        ),
        // A record that is not `field: number`.
        (
            "bad_record",
            table_cards(1)
                .into_iter()
                .map(|c| c.replace("'NAXES: 2'", "'NAXES two'"))
                .collect(),
            |e| matches!(e, Error::InvalidValue { keyword, .. } if keyword == "DP1"),
        ),
        // The pre-2012 D2IM form.
        (
            "axiscorr",
            table_cards(1)
                .into_iter()
                .chain(["AXISCORR= 2".to_string()])
                .collect(),
            |e| matches!(e, Error::Unsupported(m) if m.contains("AXISCORR")),
        ),
    ];
    for (name, cards, expected) in cases {
        let path = scratch(&format!("{name}.fits"));
        write_file(&path, &cards, &image());
        let err = Wcs::from_fits(&path, 1).unwrap_err();
        assert!(expected(&err), "{name}: {err:?}");
        let source = FitsSource::open(&path, 1).unwrap();
        assert_eq!(source.wcs().unwrap_err(), err, "{name}");
    }
    // A negative CPERR1 skips that table, as astropy's reader does.
    let path = scratch("cperr.fits");
    write_file(
        &path,
        &[table_cards(1), vec!["CPERR1  = -1.0".into()]].concat(),
        &image(),
    );
    let mut tables = expected_tables(false);
    tables.cpdis[0] = None;
    assert!(Wcs::from_fits(&path, 1).unwrap() == science_wcs().with_lookup_tables(tables).unwrap());
    let source = FitsSource::open(&path, 1).unwrap();
    assert_eq!(source.plane_shape(), (40, 60));
}
