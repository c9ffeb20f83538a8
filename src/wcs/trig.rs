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
///
/// ```
/// use reproject::wcs::trig::{deg_to_rad, D2R};
/// assert_eq!(D2R * 180.0, std::f64::consts::PI);
/// // C's `3*D2R` is `(3*PI)/180`, one ulp away from `D2R*3`:
/// assert_ne!(D2R * 3.0, deg_to_rad(3.0));
/// ```
pub const D2R: f64 = PI / 180.0;
/// `180/PI` as C evaluates `R2D*x` (macro first).
///
/// ```
/// use reproject::wcs::trig::{rad_to_deg, R2D};
/// assert_eq!(R2D * std::f64::consts::PI, 180.0);
/// // C's `0.1*R2D` is `(0.1*180)/PI`, one ulp away from `R2D*0.1`:
/// assert_ne!(R2D * 0.1, rad_to_deg(0.1));
/// ```
pub const R2D: f64 = 180.0 / PI;

/// C's `x*D2R`, i.e. `x*PI/180.0` evaluated left to right.
///
/// ```
/// use reproject::wcs::trig::deg_to_rad;
/// use std::f64::consts::PI;
/// assert_eq!(deg_to_rad(180.0), PI);
/// assert_eq!(deg_to_rad(3.0), 3.0 * PI / 180.0);
/// ```
#[inline(always)]
pub fn deg_to_rad(x: f64) -> f64 {
    x * PI / 180.0
}

/// C's `x*R2D`, i.e. `x*180.0/PI` evaluated left to right.
///
/// ```
/// use reproject::wcs::trig::rad_to_deg;
/// use std::f64::consts::PI;
/// assert_eq!(rad_to_deg(PI / 4.0), 45.0);
/// assert_eq!(rad_to_deg(0.1), 0.1 * 180.0 / PI);
/// ```
#[inline(always)]
pub fn rad_to_deg(x: f64) -> f64 {
    x * 180.0 / PI
}

/// Sine of an angle in degrees.
///
/// ```
/// use reproject::wcs::trig::sind;
/// assert_eq!(sind(90.0), 1.0);
/// // Plain libm on the radian value: sind(30) is 0.5 to within one ulp, not exactly.
/// assert!((sind(30.0) - 0.5).abs() <= f64::EPSILON);
/// ```
#[inline(always)]
pub fn sind(x: f64) -> f64 {
    deg_to_rad(x).sin()
}

/// Cosine of an angle in degrees.
///
/// ```
/// use reproject::wcs::trig::cosd;
/// assert_eq!(cosd(0.0), 1.0);
/// // No exact-multiple-of-90 shortcut, as astropy's WCSLIB build:
/// assert!(cosd(90.0) > 6e-17 && cosd(90.0) < 6.2e-17);
/// ```
#[inline(always)]
pub fn cosd(x: f64) -> f64 {
    deg_to_rad(x).cos()
}

/// Sine and cosine of an angle in degrees.
///
/// ```
/// use reproject::wcs::trig::{cosd, sincosd, sind};
/// assert_eq!(sincosd(37.5), (sind(37.5), cosd(37.5)));
/// let (s, c) = sincosd(60.0);
/// assert!((s - 0.75f64.sqrt()).abs() < 1e-15 && (c - 0.5).abs() < 1e-15);
/// ```
#[inline(always)]
pub fn sincosd(x: f64) -> (f64, f64) {
    let r = deg_to_rad(x);
    (r.sin(), r.cos())
}

/// Tangent of an angle in degrees.
///
/// ```
/// use reproject::wcs::trig::tand;
/// assert!((tand(45.0) - 1.0).abs() < 1e-15);
/// assert!((tand(-60.0) + 3f64.sqrt()).abs() < 1e-14);
/// ```
#[inline(always)]
pub fn tand(x: f64) -> f64 {
    deg_to_rad(x).tan()
}

/// Arcsine in degrees (NaN outside [-1, 1], as libm).
///
/// ```
/// use reproject::wcs::trig::asind;
/// assert_eq!(asind(1.0), 90.0);
/// assert!((asind(0.5) - 30.0).abs() < 1e-13);
/// assert!(asind(1.0 + 1e-15).is_nan()); // no clamping
/// ```
#[inline(always)]
pub fn asind(x: f64) -> f64 {
    rad_to_deg(x.asin())
}

/// Arccosine in degrees (NaN outside [-1, 1], as libm).
///
/// ```
/// use reproject::wcs::trig::acosd;
/// assert_eq!(acosd(-1.0), 180.0);
/// assert!((acosd(0.5) - 60.0).abs() < 1e-13);
/// assert!(acosd(-1.0 - 1e-15).is_nan()); // no clamping
/// ```
#[inline(always)]
pub fn acosd(x: f64) -> f64 {
    rad_to_deg(x.acos())
}

/// Arctangent in degrees.
///
/// ```
/// use reproject::wcs::trig::atand;
/// assert_eq!(atand(1.0), 45.0);
/// assert_eq!(atand(f64::INFINITY), 90.0);
/// ```
#[inline(always)]
pub fn atand(x: f64) -> f64 {
    rad_to_deg(x.atan())
}

/// Two-argument arctangent `atan2(y, x)` in degrees.
///
/// ```
/// use reproject::wcs::trig::atan2d;
/// assert_eq!(atan2d(1.0, -1.0), 135.0); // the quadrant of (x, y) = (-1, 1)
/// assert_eq!(atan2d(-1.0, -1.0), -135.0);
/// ```
#[inline(always)]
pub fn atan2d(y: f64, x: f64) -> f64 {
    rad_to_deg(y.atan2(x))
}

/// C's `copysign` as WCSLIB's prj.c defines it: `|x|` with the sign of `y` (`y < 0` only).
///
/// ```
/// use reproject::wcs::trig::copysign;
/// assert_eq!(copysign(2.0, -0.5), -2.0);
/// // Unlike f64::copysign, a negative zero `y` counts as positive:
/// assert_eq!(copysign(-2.0, -0.0), 2.0);
/// assert_eq!((-2.0f64).copysign(-0.0), -2.0);
/// ```
#[inline(always)]
pub fn copysign(x: f64, y: f64) -> f64 {
    if y < 0.0 {
        -x.abs()
    } else {
        x.abs()
    }
}
