//! # reproject-rs
//!
//! Reprojection of astronomical images between FITS World Coordinate Systems, matching
//! astropy's `reproject.reproject_interp`.
//!
//! The foundation is [`wcs`]: a FITS WCS engine that maps pixel ↔ world exactly as
//! astropy.wcs / WCSLIB do (header parsing, the PC/CD/CROTA linear part, all 28 projections,
//! the native ↔ celestial rotation).
//!
//! ```
//! use reproject::wcs::Wcs;
//! let wcs = Wcs::from_header_str("CTYPE1 = 'GLON-AIT'\nCTYPE2 = 'GLAT-AIT'\nCDELT1 = -0.5\nCDELT2 = 0.5\nCRPIX1 = 361\nCRPIX2 = 181\nCRVAL1 = 0.0\nCRVAL2 = 0.0\n")?;
//! let (l, b) = wcs.pixel_to_world(360.0, 180.0).unwrap();
//! assert!(l.abs() < 1e-12 && b.abs() < 1e-12);
//! # Ok::<(), reproject::Error>(())
//! ```

#![warn(missing_docs)]

pub mod engine;
pub mod error;
pub mod interp;
pub mod io;
pub mod pixel_transform;
pub mod wcs;

pub use error::{Error, Result};
