//! Reading the WCS from a FITS file's HDU (CFITSIO through `fitsio`).
#![cfg(feature = "fits")]

use std::path::PathBuf;

use fitsio::images::{ImageDescription, ImageType};
use fitsio::FitsFile;
use reproject::wcs::Wcs;
use reproject::Error;

fn scratch(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_file(&path);
    path
}

const KEYS: &[(&str, &str)] = &[("CTYPE1", "RA---TAN"), ("CTYPE2", "DEC--TAN")];
const NUMBERS: &[(&str, f64)] = &[
    ("CRPIX1", 10.5),
    ("CRPIX2", 20.5),
    ("CRVAL1", 83.6),
    ("CRVAL2", 22.0),
    ("CDELT1", -0.01),
    ("CDELT2", 0.01),
    ("PC1_2", 0.1),
];

/// A file with a blank primary HDU and the WCS on an image extension.
fn write_fits(path: &PathBuf) {
    let desc = ImageDescription {
        data_type: ImageType::Float,
        dimensions: &[40, 20],
    };
    let mut f = FitsFile::create(path).open().unwrap();
    let hdu = f.create_image("SCI", &desc).unwrap();
    for (k, v) in KEYS {
        hdu.write_key(&mut f, k, *v).unwrap();
    }
    for (k, v) in NUMBERS {
        hdu.write_key(&mut f, k, *v).unwrap();
    }
}

#[test]
fn wcs_from_an_image_extension() {
    let path = scratch("wcs_ext.fits");
    write_fits(&path);
    let from_file = Wcs::from_fits(&path, 1).unwrap();
    let text: String = KEYS
        .iter()
        .map(|(k, v)| format!("{k} = '{v}'\n"))
        .chain(NUMBERS.iter().map(|(k, v)| format!("{k} = {v:E}\n")))
        .collect();
    let from_text = Wcs::from_header_str(&text).unwrap();
    for &(x, y) in &[(0.0, 0.0), (9.5, 19.5), (39.0, 19.0)] {
        assert_eq!(
            from_file.pixel_to_world(x, y),
            from_text.pixel_to_world(x, y)
        );
    }
    // fitsio takes dimensions in row-major order; image_shape is FITS order (NAXIS1, NAXIS2).
    assert_eq!(from_file.params().image_shape, vec![20, 40]);
    // The primary HDU has no WCS.
    assert!(!Wcs::from_fits(&path, 0).unwrap().has_celestial());
}

#[test]
fn fits_errors_are_reported() {
    let path = scratch("wcs_ext_errors.fits");
    write_fits(&path);
    assert!(matches!(Wcs::from_fits(&path, 7), Err(Error::Fits(_))));
    assert!(matches!(
        Wcs::from_fits(scratch("does_not_exist.fits"), 0),
        Err(Error::Io(_))
    ));
    let not_fits = scratch("not_fits.fits");
    std::fs::write(&not_fits, b"this is not a FITS file").unwrap();
    assert!(matches!(Wcs::from_fits(&not_fits, 0), Err(Error::Fits(_))));
    // A truncated file: the header block cut in the middle.
    let bytes = std::fs::read(&path).unwrap();
    let truncated = scratch("truncated.fits");
    std::fs::write(&truncated, &bytes[..1000]).unwrap();
    assert!(Wcs::from_fits(&truncated, 0).is_err());
}
