//! # reproject-rs
//!
//! Reprojection of astronomical images between FITS World Coordinate Systems, matching
//! astropy's `reproject.reproject_interp` (its edge, NaN and footprint rules, spline
//! prefilter and round-trip check) and much faster.
//!
//! ## The pipeline
//!
//! ```text
//!  input (io::ImageSource: ndarray, raw numpy bytes, memory-mapped .npy or FITS)
//!    │            wcs::Wcs (header text or FITS HDU)       wcs::Wcs of the output + shape
//!    ▼                         │                                     │
//!  engine::Plan::new ──────────┴──── pixel_transform::PixelTransform ┘
//!    │   (validation, spline coefficients for orders ≥ 2 (on the GPU for its plans),
//!    │    output pixel → input pixel:
//!    │    exact TAN homography / unit-vector path / WCSLIB celestial path, frame change)
//!    ▼
//!  engine::Plan::compute_block   ← one function per output block, used by:
//!    ├─ engine::reproject_interp / Plan::compute_into   (threads over blocks)
//!    ├─ engine::lazy::LazyReprojection / BlockHandle   (deferred, any order, any thread)
//!    ├─ processes (a reprojection or a mosaic)          (worker processes, one mapped file)
//!    └─ the Python bindings (numpy, dask map_blocks)
//!    ▼
//!  interp: scipy-exact sampling (orders 0–5) of the input window the block needs
//!    ▼
//!  (data, footprint) in memory, or in io::MappedOutput (.npy / FITS, published atomically)
//! ```
//!
//! ```
//! use ndarray::Array2;
//! use reproject::engine::{reproject_interp, Options};
//! use reproject::io::ArraySource;
//! use reproject::wcs::Wcs;
//! let galactic = Wcs::from_header_str(
//!     "CTYPE1 = 'GLON-CAR'\nCTYPE2 = 'GLAT-CAR'\nCRPIX1 = 50.5\nCRPIX2 = 25.5\n\
//!      CRVAL1 = 0\nCRVAL2 = 0\nCDELT1 = -0.1\nCDELT2 = 0.1\n",
//! )?;
//! let equatorial = Wcs::from_header_str(
//!     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 20.5\nCRPIX2 = 20.5\n\
//!      CRVAL1 = 266.4\nCRVAL2 = -28.9\nCDELT1 = -0.05\nCDELT2 = 0.05\nRADESYS = 'ICRS'\n",
//! )?;
//! let image = Array2::from_shape_fn((50, 100), |(y, x)| (x + y) as f32);
//! let source = ArraySource::new(image.view().into_dyn())?;
//! let (data, footprint) =
//!     reproject_interp(&source, &galactic, &equatorial, &[40, 40], &Options::default())?;
//! assert_eq!(footprint[[20, 20]], 1.0);
//! assert!(data[[20, 20]].is_finite());
//! # Ok::<(), reproject::Error>(())
//! ```
//!
//! The modules: [`wcs`] (FITS WCS, bit-identical to astropy on its test vectors),
//! [`pixel_transform`], [`interp`], [`io`], [`engine`], and [`error`] (the one error type).

#![warn(missing_docs)]

pub mod engine;
pub mod error;
pub mod gpu;
pub mod interp;
pub mod io;
pub mod mosaic;
pub mod pixel_transform;
mod pools;
pub mod processes;
pub mod wcs;

pub use error::{Error, Result};
