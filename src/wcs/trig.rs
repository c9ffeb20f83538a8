//! Trigonometry in degrees, exactly as astropy's WCSLIB build computes it.
//!
//! astropy compiles WCSLIB with `WCSTRIG_MACRO`, so `cosd(x)` is plain libm `cos` (and
//! `cosd(90)` is 6.1e-17, not 0): no exact-multiple-of-90 shortcuts and no clamping of
//! `asin`/`acos` arguments.
//!
//! One more detail decides the last bit: `wcsmath.h` defines `D2R` as `PI/180.0` and `R2D` as
//! `180.0/PI` *without parentheses*, so C's `x*D2R` is `(x*PI)/180` and `asin(v)*R2D` is
//! `(asin(v)*180)/PI`, not a multiplication by a rounded constant. [`deg_to_rad`] and
//! [`rad_to_deg`] are those expansions; the constants [`D2R`] and [`R2D`] are only right where
//! the C source puts the macro first (`D2R*x` is `(PI/180)*x`). The difference is one ulp, but
//! near a projection's divergence one ulp in θ moves the pixel by 1e-7.

use std::f64::consts::PI;

/// `PI/180` as C evaluates `D2R*x` (macro first).
pub const D2R: f64 = PI / 180.0;
/// `180/PI` as C evaluates `R2D*x` (macro first).
pub const R2D: f64 = 180.0 / PI;

/// C's `x*D2R`, i.e. `x*PI/180.0` evaluated left to right.
#[inline(always)]
pub fn deg_to_rad(x: f64) -> f64 {
    x * PI / 180.0
}

/// C's `x*R2D`, i.e. `x*180.0/PI` evaluated left to right.
#[inline(always)]
pub fn rad_to_deg(x: f64) -> f64 {
    x * 180.0 / PI
}

/// Sine of an angle in degrees.
#[inline(always)]
pub fn sind(x: f64) -> f64 {
    deg_to_rad(x).sin()
}

/// Cosine of an angle in degrees.
#[inline(always)]
pub fn cosd(x: f64) -> f64 {
    deg_to_rad(x).cos()
}

/// Sine and cosine of an angle in degrees.
#[inline(always)]
pub fn sincosd(x: f64) -> (f64, f64) {
    let r = deg_to_rad(x);
    (r.sin(), r.cos())
}

/// Tangent of an angle in degrees.
#[inline(always)]
pub fn tand(x: f64) -> f64 {
    deg_to_rad(x).tan()
}

/// Arcsine in degrees (NaN outside [-1, 1], as libm).
#[inline(always)]
pub fn asind(x: f64) -> f64 {
    rad_to_deg(x.asin())
}

/// Arccosine in degrees (NaN outside [-1, 1], as libm).
#[inline(always)]
pub fn acosd(x: f64) -> f64 {
    rad_to_deg(x.acos())
}

/// Arctangent in degrees.
#[inline(always)]
pub fn atand(x: f64) -> f64 {
    rad_to_deg(x.atan())
}

/// Two-argument arctangent `atan2(y, x)` in degrees.
#[inline(always)]
pub fn atan2d(y: f64, x: f64) -> f64 {
    rad_to_deg(y.atan2(x))
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
