//! The one error type of the crate.
//!
//! Every fallible operation returns [`Result`]. Bad input (a malformed header, an unsupported
//! projection, a singular matrix, a truncated file) is reported through a specific variant and
//! never through a panic.

use thiserror::Error;

/// Everything that can go wrong in reproject-rs.
///
/// ```
/// use reproject::{wcs::Wcs, Error};
/// let err = Wcs::from_header_str("CTYPE1  = 'RA---XYZ'\nCTYPE2  = 'DEC--XYZ'\n").unwrap_err();
/// assert!(matches!(err, Error::UnknownProjection(_)));
/// ```
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A header card could not be read at all (bad layout, unterminated string, truncated).
    #[error("malformed header card {card}: {reason}")]
    MalformedCard {
        /// 1-based index of the card in the header.
        card: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A keyword the WCS needs is absent.
    #[error("missing keyword {0}")]
    MissingKeyword(String),
    /// A keyword is present but its value cannot be used.
    #[error("invalid value for {keyword}: {reason}")]
    InvalidValue {
        /// The keyword, with its alternate-WCS letter.
        keyword: String,
        /// What is wrong with the value.
        reason: String,
    },
    /// The same keyword appears twice with different values.
    #[error("keyword {0} appears more than once with different values")]
    DuplicateKeyword(String),
    /// A CTYPE that looks celestial but is not in the FITS 4-3 form (e.g. `RA--TAN`).
    #[error("malformed CTYPE '{0}': celestial axes need the 4-3 form, e.g. 'RA---TAN'")]
    MalformedCtype(String),
    /// The projection code is not one of WCSLIB's 28 (or the NCP/GLS aliases).
    #[error("unknown projection code '{0}'")]
    UnknownProjection(String),
    /// The two celestial axes disagree (different codes, unpaired axis, duplicated axis).
    #[error("inconsistent celestial axes: {0}")]
    InconsistentAxes(String),
    /// A `PVi_m` index outside what WCSLIB supports.
    #[error("{keyword}: PV index out of range ({reason})")]
    PvOutOfRange {
        /// The offending keyword.
        keyword: String,
        /// Why it is out of range.
        reason: String,
    },
    /// Projection parameters that WCSLIB's `prjset` rejects.
    #[error("invalid parameters for the {code} projection: {reason}")]
    InvalidProjectionParameters {
        /// Three-letter projection code.
        code: String,
        /// Why the parameters are rejected.
        reason: String,
    },
    /// The linear transformation matrix (PC·CDELT or CD) cannot be inverted.
    #[error("the pixel-to-intermediate matrix is singular")]
    SingularMatrix,
    /// Reference point and pole parameters with no valid celestial rotation (WCSLIB `celset`).
    #[error("invalid celestial transformation: {0}")]
    InvalidCelestial(String),
    /// A celestial WCS was required but the header has no longitude/latitude pair.
    #[error("the WCS has no celestial (longitude, latitude) axis pair")]
    NoCelestialAxes,
    /// An axis type that is parsed but cannot be evaluated.
    #[error("unsupported axis type '{0}'")]
    UnsupportedAxis(String),
    /// Shapes or lengths that do not fit together.
    #[error("shape mismatch: {0}")]
    ShapeMismatch(String),
    /// An argument outside its documented range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A valid request that reproject-rs does not implement (e.g. axes coupled to the image
    /// plane, time axes in different time scales, solar frames of different observers), as
    /// opposed to an invalid one ([`Error::InvalidArgument`]).
    #[error("not supported: {0}")]
    Unsupported(String),
    /// Reading a FITS file failed.
    #[error("FITS error: {0}")]
    Fits(String),
    /// An operating-system I/O error.
    #[error("I/O error: {0}")]
    Io(String),
    /// An output (or a job's files) owned by another live run or its workers
    /// ([`crate::io::OutputLock`]): nothing of it was read, changed or removed.
    #[error("output busy: {0}")]
    OutputBusy(String),
    /// An output path that exists (or a partial file left by a run that stopped) and that the
    /// call may not replace because overwriting is off.
    #[error("{0} (overwriting is off)")]
    OutputExists(String),
    /// No usable GPU: no CUDA driver or NVRTC library, no device, kernels that did not build,
    /// or a job the GPU kernels do not cover (only an error when the GPU was asked for).
    #[error("GPU unavailable: {0}")]
    GpuUnavailable(String),
    /// A GPU operation failed (out of memory, launch or copy error) on a block.
    #[error("GPU error on block {block}: {message}")]
    Gpu {
        /// The output block, e.g. "rows 0..512, columns 512..1024 of plane 0".
        block: String,
        /// What failed.
        message: String,
    },
    /// The run was cancelled (its cancellation flag was set); blocks finished before stay
    /// written.
    #[error("cancelled: {0}")]
    Cancelled(String),
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e.to_string())
    }
}

/// Shorthand for results carrying [`enum@Error`].
///
/// ```
/// use reproject::wcs::Wcs;
/// fn projection(header: &str) -> reproject::Result<String> {
///     Ok(Wcs::from_header_str(header)?.projection_code().map_or("none", |c| c.as_str()).into())
/// }
/// let centre = "CRVAL1 = 150\nCRVAL2 = 30\n";
/// assert_eq!(projection(&format!("CTYPE1 = 'RA---SIN'\nCTYPE2 = 'DEC--SIN'\n{centre}"))?, "SIN");
/// assert!(projection(&format!("CTYPE1 = 'RA---XYZ'\nCTYPE2 = 'DEC--XYZ'\n{centre}")).is_err());
/// # Ok::<(), reproject::Error>(())
/// ```
pub type Result<T> = std::result::Result<T, Error>;
