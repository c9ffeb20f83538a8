//! Trigonometry in degrees, exactly as astropy's WCSLIB build computes it.
//!
//! astropy compiles WCSLIB with `WCSTRIG_MACRO`, so `cosd(x)` is plain `cos(x * D2R)` (and
//! `cosd(90)` is 6.1e-17, not 0). Matching astropy to the last bits means doing the same here:
//! no exact-multiple-of-90 shortcuts and no clamping of `asin`/`acos` arguments.

/// Degrees to radians, `PI / 180` rounded once as in `wcsmath.h`.
pub const D2R: f64 = std::f64::consts::PI / 180.0;
/// Radians to degrees, `180 / PI` rounded once as in `wcsmath.h`.
pub const R2D: f64 = 180.0 / std::f64::consts::PI;

/// Sine of an angle in degrees.
#[inline(always)]
pub fn sind(x: f64) -> f64 {
    (x * D2R).sin()
}

/// Cosine of an angle in degrees.
#[inline(always)]
pub fn cosd(x: f64) -> f64 {
    (x * D2R).cos()
}

/// Sine and cosine of an angle in degrees.
#[inline(always)]
pub fn sincosd(x: f64) -> (f64, f64) {
    let r = x * D2R;
    (r.sin(), r.cos())
}

/// Tangent of an angle in degrees.
#[inline(always)]
pub fn tand(x: f64) -> f64 {
    (x * D2R).tan()
}

/// Arcsine in degrees (NaN outside [-1, 1], as libm).
#[inline(always)]
pub fn asind(x: f64) -> f64 {
    x.asin() * R2D
}

/// Arccosine in degrees (NaN outside [-1, 1], as libm).
#[inline(always)]
pub fn acosd(x: f64) -> f64 {
    x.acos() * R2D
}

/// Arctangent in degrees.
#[inline(always)]
pub fn atand(x: f64) -> f64 {
    x.atan() * R2D
}

/// Two-argument arctangent `atan2(y, x)` in degrees.
#[inline(always)]
pub fn atan2d(y: f64, x: f64) -> f64 {
    y.atan2(x) * R2D
}

/// C's `copysign` as WCSLIB's prj.c defines it: `|x|` with the sign of `y` (`y < 0` only).
#[inline(always)]
pub fn copysign(x: f64, y: f64) -> f64 {
    if y < 0.0 {
        -x.abs()
    } else {
        x.abs()
    }
}
