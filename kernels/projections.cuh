// The 28 spherical map projections of FITS WCS Paper II, as src/wcs/projection/ computes them
// (which is WCSLIB prj.c with bounds = 7 and r0 = 180/pi).
//
// Same formulas, operation order, branch structure, tolerances and iteration counts as the Rust
// code, so that the host build of this file (tests/gpu_host_projections.rs) agrees with it to
// the bit and the device build to the last ulp or two of CUDA's libm.
//
// Flat parameters written by Rust (`Projection::device_params`, 35 doubles):
//   [0]       code: index of the projection in ProjectionCode::ALL order (as f64)
//   [1]       bit mask (as f64, < 2^30) of which PVi_m, m = 0..29, are present
//   [2..32)   PVi_0 .. PVi_29 (0.0 where absent)
//   [32]      1.0 if a user fiducial offset (PVj_0 != 0) is given, else 0.0
//   [33],[34] phi0, theta0 of that user fiducial point (0.0 without one)
//
// rp_prj_setup derives the constants of WCSLIB's *set routines into an RpPrj (one per thread
// block, in shared memory: 312 bytes). It returns 0 when the projection is usable, and
//   1 for a malformed array (code or mask out of range, a present PV or the fiducial point not
//     finite; Projection::new rejects the last two as well),
//   2 for parameters the projection's *set routine rejects (Projection::new's
//     InvalidProjectionParameters),
//   3 when the user fiducial point cannot be projected.
// The point functions return 0 for a valid point and 1 exactly where the Rust function
// returns None; the outputs are then unspecified.

#define RP_PRJ_PARAMS 35

// Nothing of the projections in the homography variants (RP_V_HOMOGRAPHY, common.cuh).
#if RP_WITH_SKY

// Projection codes, in ProjectionCode::ALL order.
#define RP_PRJ_AZP 0
#define RP_PRJ_SZP 1
#define RP_PRJ_TAN 2
#define RP_PRJ_STG 3
#define RP_PRJ_SIN 4
#define RP_PRJ_ARC 5
#define RP_PRJ_ZPN 6
#define RP_PRJ_ZEA 7
#define RP_PRJ_AIR 8
#define RP_PRJ_CYP 9
#define RP_PRJ_CEA 10
#define RP_PRJ_CAR 11
#define RP_PRJ_MER 12
#define RP_PRJ_SFL 13
#define RP_PRJ_PAR 14
#define RP_PRJ_MOL 15
#define RP_PRJ_AIT 16
#define RP_PRJ_COP 17
#define RP_PRJ_COE 18
#define RP_PRJ_COD 19
#define RP_PRJ_COO 20
#define RP_PRJ_BON 21
#define RP_PRJ_PCO 22
#define RP_PRJ_TSC 23
#define RP_PRJ_CSC 24
#define RP_PRJ_QSC 25
#define RP_PRJ_HPX 26
#define RP_PRJ_XPH 27
#define RP_PRJ_COUNT 28

// r0 = 180/pi as the Rust constant R0 (= trig::R2D) holds it: the quotient rounded once.
#define RP_PRJ_R0 (180.0 / RP_PI)
// Rust's std::f64::consts::SQRT_2.
#define RP_PRJ_SQRT2 1.41421356237309504880168872420969808
// The projections a build compiles: all of them, or a sky variant's two (common.cuh). The
// others' cases are dead code and their setup fails (status 4), so the variant refuses them.
#if RP_SKY_VARIANT
#define RP_PRJ_USED(code) ((code) == RP_V_PRJ_OUT || (code) == RP_V_PRJ_IN)
#else
#define RP_PRJ_USED(code) 1
#endif
// The two dispatch functions are real calls on the device: each inlines every projection, and
// inlining them in turn into the four entry points and the setup would multiply the code size
// (and NVRTC's compile time) by five. A sky variant's two projections are inlined.
#if (defined(__CUDACC_RTC__) || defined(__CUDACC__)) && RP_SKY_VARIANT
#define RP_PRJ_DISPATCH RP_DEVICE
#elif defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define RP_PRJ_DISPATCH __device__ __noinline__
#else
#define RP_PRJ_DISPATCH static
#endif
// The largest finite double, for the finiteness tests (no isfinite needed).
#define RP_PRJ_DBL_MAX 1.7976931348623157e308

typedef struct {
    int code;     // RP_PRJ_*
    int n;        // ZPN: the degree; BON: 1 for the Sanson-Flamsteed case
    int flag1;    // AZP: divergence check; HPX: H odd
    int flag2;    // HPX: K odd
    int plain_tan;  // TAN without a fiducial offset: x2v/v2x need no trigonometry
    int pad_;
    double phi0, theta0;  // the native fiducial point in use
    double x0, y0;        // the plane offset of a user fiducial point
    double w[32];         // the projection's constants (ZPN: coefficients, w[30], w[31])
} RpPrj;

// ---------------------------------------------------------------------------------------------
// Trigonometry in degrees, as src/wcs/trig.rs (WCSLIB with WCSTRIG_MACRO): plain libm on
// x*PI/180.0 (the unparenthesised D2R), results times 180.0/PI (R2D). Other kernel files may
// use these too; the guard keeps a second copy out.
#ifndef RP_TRIG_HELPERS
#define RP_TRIG_HELPERS
// C's x*D2R, i.e. x*PI/180.0 left to right (trig::deg_to_rad).
RP_DEVICE double rp_deg_to_rad(double x) { return x * RP_PI / 180.0; }
// C's x*R2D, i.e. x*180.0/PI left to right (trig::rad_to_deg).
RP_DEVICE double rp_rad_to_deg(double x) { return x * 180.0 / RP_PI; }
RP_DEVICE double rp_sind(double x) { return sin(rp_deg_to_rad(x)); }
RP_DEVICE double rp_cosd(double x) { return cos(rp_deg_to_rad(x)); }
RP_DEVICE void rp_sincosd(double x, double* s, double* c) {
    double r = rp_deg_to_rad(x);
    *s = sin(r);
    *c = cos(r);
}
RP_DEVICE double rp_tand(double x) { return tan(rp_deg_to_rad(x)); }
RP_DEVICE double rp_asind(double x) { return rp_rad_to_deg(asin(x)); }
RP_DEVICE double rp_acosd(double x) { return rp_rad_to_deg(acos(x)); }
RP_DEVICE double rp_atand(double x) { return rp_rad_to_deg(atan(x)); }
RP_DEVICE double rp_atan2d(double y, double x) { return rp_rad_to_deg(atan2(y, x)); }
// WCSLIB prj.c's copysign (trig::copysign): |x| with the sign of y, negative only for y < 0.
RP_DEVICE double rp_copysign_wcs(double x, double y) { return y < 0.0 ? -fabs(x) : fabs(x); }
#endif

// ---------------------------------------------------------------------------------------------
// Small helpers.

RP_DEVICE int rp_prj_finite(double v) { return fabs(v) <= RP_PRJ_DBL_MAX; }

// C's (a > b) ? a : b and (a < b) ? a : b (zenithal.rs c_max, c_min).
RP_DEVICE double rp_prj_cmax(double a, double b) { return a > b ? a : b; }
RP_DEVICE double rp_prj_cmin(double a, double b) { return a < b ? a : b; }

// f64::clamp(v, lo, hi): NaN stays NaN.
RP_DEVICE double rp_prj_clamp(double v, double lo, double hi) {
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return v;
}

// Whether Rust's saturating `v as i64` (NaN -> 0) is odd.
RP_DEVICE int rp_prj_i64_odd(double v) {
    if (!(v == v)) return 0;
    if (v >= 9223372036854775808.0) return 1;    // i64::MAX
    if (v <= -9223372036854775808.0) return 0;   // i64::MIN
    long long i = (long long)v;
    return (i % 2) != 0;
}

// WCSLIB's prjbchk (mod.rs bounds_check): beyond +-180/+-90 by more than tol is invalid (1),
// within tol clamped onto the boundary.
RP_DEVICE int rp_prj_bchk(double tol, double* phi, double* theta) {
    if (*phi < -180.0) {
        if (*phi < -180.0 - tol) return 1;
        *phi = -180.0;
    } else if (*phi > 180.0) {
        if (*phi > 180.0 + tol) return 1;
        *phi = 180.0;
    }
    if (*theta < -90.0) {
        if (*theta < -90.0 - tol) return 1;
        *theta = -90.0;
    } else if (*theta > 90.0) {
        if (*theta > 90.0 + tol) return 1;
        *theta = 90.0;
    }
    return 0;
}

RP_DEVICE int rp_prj_bchk_set(double tol, double ph, double th, double* phi, double* theta) {
    *phi = ph;
    *theta = th;
    return rp_prj_bchk(tol, phi, theta);
}

// ---------------------------------------------------------------------------------------------
// Zenithal projections (zenithal.rs). Default fiducial point (0, 90).

// zenithal.rs perspective_theta: the latitude nearest the pole of s - t and s + t + 180.
RP_DEVICE double rp_prj_perspective_theta(double s, double t) {
    double a = s - t;
    double b = s + t + 180.0;
    if (a > 90.0) a -= 360.0;
    if (b > 90.0) b -= 360.0;
    return rp_prj_cmax(a, b);
}

// zenithal.rs sin_theta_nearest_pole: root of a s^2 + 2b s + c = 0 nearest the pole.
RP_DEVICE int rp_prj_sin_theta_nearest_pole(double a, double b, double c, double* out) {
    const double tol = 1.0e-13;
    double d = b * b - a * c;
    if (d < 0.0) return 1;
    d = sqrt(d);
    double sinth1 = (-b + d) / a;
    double sinth2 = (-b - d) / a;
    double sinthe = rp_prj_cmax(sinth1, sinth2);
    if (sinthe > 1.0) {
        if (sinthe - 1.0 < tol) {
            sinthe = 1.0;
        } else {
            sinthe = rp_prj_cmin(sinth1, sinth2);
        }
    }
    if (sinthe < -1.0 && sinthe + 1.0 > -tol) sinthe = -1.0;
    if (!(sinthe >= -1.0 && sinthe <= 1.0)) return 1;
    *out = sinthe;
    return 0;
}

// zenithal.rs azimuth.
RP_DEVICE double rp_prj_azimuth(double x, double y, double r) {
    return r == 0.0 ? 0.0 : rp_atan2d(x, -y);
}

// AZP. w: mu, w0 = r0 (mu + 1), tan_gamma, sec_gamma, cos_gamma, sin_gamma, theta_overlap;
// flag1 = check_divergence.
RP_DEVICE int rp_prj_azp_set(RpPrj* p, const double* pv, unsigned mask) {
    double mu = (mask & 2u) ? pv[1] : 0.0;
    double gamma = (mask & 4u) ? pv[2] : 0.0;
    double w0 = RP_PRJ_R0 * (mu + 1.0);
    if (w0 == 0.0) return 2;
    double cos_gamma = rp_cosd(gamma);
    if (cos_gamma == 0.0) return 2;
    double sin_gamma = rp_sind(gamma);
    p->w[0] = mu;
    p->w[1] = w0;
    p->w[2] = sin_gamma / cos_gamma;
    p->w[3] = 1.0 / cos_gamma;
    p->w[4] = cos_gamma;
    p->w[5] = sin_gamma;
    p->w[6] = fabs(mu) > 1.0 ? rp_asind(-1.0 / mu) : -90.0;
    p->flag1 = fabs(mu * cos_gamma) < 1.0;
    return 0;
}

RP_DEVICE int rp_prj_azp_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    const double tol = 1.0e-13;
    double yc = y * p->w[4];
    double r = sqrt(x * x + yc * yc);
    if (r == 0.0) return rp_prj_bchk_set(tol, 0.0, 90.0, phi, theta);
    double ph = rp_atan2d(x, -yc);
    double q = p->w[1] + y * p->w[5];
    double s = r / q;
    double t = s * p->w[0] / sqrt(s * s + 1.0);
    s = rp_atan2d(1.0, s);
    if (fabs(t) > 1.0) {
        if (fabs(t) > 1.0 + tol) return 1;
        t = rp_copysign_wcs(90.0, t);
    } else {
        t = rp_asind(t);
    }
    return rp_prj_bchk_set(tol, ph, rp_prj_perspective_theta(s, t), phi, theta);
}

RP_DEVICE int rp_prj_azp_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    double sin_phi, cos_phi, sin_theta, cos_theta;
    rp_sincosd(phi, &sin_phi, &cos_phi);
    rp_sincosd(theta, &sin_theta, &cos_theta);
    double s = p->w[2] * cos_phi;
    double t = (p->w[0] + sin_theta) + cos_theta * s;
    if (t == 0.0) return 1;
    double r = p->w[1] * cos_theta / t;
    if (theta < p->w[6]) return 1;
    if (p->flag1) {
        double t2 = p->w[0] / sqrt(1.0 + s * s);
        if (fabs(t2) <= 1.0 && theta < rp_prj_perspective_theta(rp_atand(-s), rp_asind(t2))) {
            return 1;
        }
    }
    *x = r * sin_phi;
    *y = -r * cos_phi * p->w[3];
    return 0;
}

// SZP. w: mu, xp, yp, zp, w7, theta_divergence.
RP_DEVICE int rp_prj_szp_set(RpPrj* p, const double* pv, unsigned mask) {
    double mu = (mask & 2u) ? pv[1] : 0.0;
    double phi_c = (mask & 4u) ? pv[2] : 0.0;
    double theta_c = (mask & 8u) ? pv[3] : 90.0;
    double zp = mu * rp_sind(theta_c) + 1.0;
    if (zp == 0.0) return 2;
    p->w[0] = mu;
    p->w[1] = -mu * rp_cosd(theta_c) * rp_sind(phi_c);
    p->w[2] = mu * rp_cosd(theta_c) * rp_cosd(phi_c);
    p->w[3] = zp;
    p->w[4] = (zp - 1.0) * zp - 1.0;
    p->w[5] = fabs(zp - 1.0) < 1.0 ? rp_asind(1.0 - zp) : -90.0;
    return 0;
}

RP_DEVICE int rp_prj_szp_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    double w0 = 1.0 / RP_PRJ_R0;
    double xr = x * w0;
    double yr = y * w0;
    double r2 = xr * xr + yr * yr;
    double x1 = (xr - p->w[1]) / p->w[3];
    double y1 = (yr - p->w[2]) / p->w[3];
    double xy = xr * x1 + yr * y1;
    double th, z;
    if (r2 < 1.0e-10) {
        th = 90.0 - RP_PRJ_R0 * sqrt(r2 / (1.0 + xy));
        z = r2 / 2.0;
    } else {
        double t = x1 * x1 + y1 * y1;
        double a = t + 1.0;
        double b = xy - t;
        double c = r2 - xy - xy + t - 1.0;
        double sinthe;
        if (rp_prj_sin_theta_nearest_pole(a, b, c, &sinthe)) return 1;
        th = rp_asind(sinthe);
        z = 1.0 - sinthe;
    }
    double ph = rp_atan2d(xr - x1 * z, -(yr - y1 * z));
    return rp_prj_bchk_set(1.0e-13, ph, th, phi, theta);
}

RP_DEVICE int rp_prj_szp_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    double s = 1.0 - rp_sind(theta);
    double t = p->w[3] - s;
    if (t == 0.0) return 1;
    double r = RP_PRJ_R0 * p->w[3] * rp_cosd(theta) / t;
    double u = RP_PRJ_R0 * p->w[1] * s / t;
    double v = RP_PRJ_R0 * p->w[2] * s / t;
    double sin_phi, cos_phi;
    rp_sincosd(phi, &sin_phi, &cos_phi);
    if (theta < p->w[5]) return 1;
    if (fabs(p->w[0]) > 1.0) {
        double s2 = p->w[1] * sin_phi - p->w[2] * cos_phi;
        double t2 = 1.0 / sqrt(p->w[4] + s2 * s2);
        if (fabs(t2) <= 1.0 &&
            theta < rp_prj_perspective_theta(rp_atan2d(s2, p->w[3] - 1.0), rp_asind(t2))) {
            return 1;
        }
    }
    *x = r * sin_phi - u;
    *y = -r * cos_phi - v;
    return 0;
}

// TAN.
RP_DEVICE int rp_prj_tan_x2s(double x, double y, double* phi, double* theta) {
    double r = sqrt(x * x + y * y);
    double ph = r == 0.0 ? 0.0 : rp_atan2d(x, -y);
    return rp_prj_bchk_set(1e-13, ph, rp_atan2d(RP_PRJ_R0, r), phi, theta);
}

RP_DEVICE int rp_prj_tan_s2x(double phi, double theta, double* x, double* y) {
    double sin_theta, cos_theta;
    rp_sincosd(theta, &sin_theta, &cos_theta);
    if (sin_theta <= 0.0) return 1;
    double r = RP_PRJ_R0 * cos_theta / sin_theta;
    double sin_phi, cos_phi;
    rp_sincosd(phi, &sin_phi, &cos_phi);
    *x = r * sin_phi;
    *y = -r * cos_phi;
    return 0;
}

// STG.
RP_DEVICE int rp_prj_stg_x2s(double x, double y, double* phi, double* theta) {
    double r = sqrt(x * x + y * y);
    *phi = rp_prj_azimuth(x, y, r);
    *theta = 90.0 - 2.0 * rp_atand(r * (RP_PI / 360.0));
    return 0;
}

RP_DEVICE int rp_prj_stg_s2x(double phi, double theta, double* x, double* y) {
    double s = 1.0 + rp_sind(theta);
    if (s == 0.0) return 1;
    double r = (360.0 / RP_PI) * rp_cosd(theta) / s;
    double sin_phi, cos_phi;
    rp_sincosd(phi, &sin_phi, &cos_phi);
    *x = r * sin_phi;
    *y = -r * cos_phi;
    return 0;
}

// SIN. w: xi, eta, w1 = xi^2 + eta^2, w2 = w1 + 1, w3 = w1 - 1.
RP_DEVICE int rp_prj_sin_set(RpPrj* p, const double* pv, unsigned mask) {
    double xi = (mask & 2u) ? pv[1] : 0.0;
    double eta = (mask & 4u) ? pv[2] : 0.0;
    double w1 = xi * xi + eta * eta;
    p->w[0] = xi;
    p->w[1] = eta;
    p->w[2] = w1;
    p->w[3] = w1 + 1.0;
    p->w[4] = w1 - 1.0;
    return 0;
}

RP_DEVICE int rp_prj_sin_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    double w0 = 1.0 / RP_PRJ_R0;
    double x0 = x * w0;
    double y0 = y * w0;
    double r2 = x0 * x0 + y0 * y0;
    if (p->w[2] == 0.0) {
        double ph = r2 != 0.0 ? rp_atan2d(x0, -y0) : 0.0;
        double th;
        if (r2 < 0.5) {
            th = rp_acosd(sqrt(r2));
        } else if (r2 <= 1.0) {
            th = rp_asind(sqrt(1.0 - r2));
        } else {
            return 1;
        }
        return rp_prj_bchk_set(1.0e-13, ph, th, phi, theta);
    }
    double xy = x0 * p->w[0] + y0 * p->w[1];
    double th, z;
    if (r2 < 1.0e-10) {
        th = 90.0 - RP_PRJ_R0 * sqrt(r2 / (1.0 + xy));
        z = r2 / 2.0;
    } else {
        double b = xy - p->w[2];
        double c = r2 - xy - xy + p->w[4];
        double sinthe;
        if (rp_prj_sin_theta_nearest_pole(p->w[3], b, c, &sinthe)) return 1;
        th = rp_asind(sinthe);
        z = 1.0 - sinthe;
    }
    double x1 = -y0 + p->w[1] * z;
    double y1 = x0 - p->w[0] * z;
    double ph = (x1 == 0.0 && y1 == 0.0) ? 0.0 : rp_atan2d(y1, x1);
    return rp_prj_bchk_set(1.0e-13, ph, th, phi, theta);
}

RP_DEVICE int rp_prj_sin_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    double t = rp_deg_to_rad(90.0 - fabs(theta));
    double z, cos_theta;
    if (t < 1.0e-5) {
        z = theta > 0.0 ? t * t / 2.0 : 2.0 - t * t / 2.0;
        cos_theta = t;
    } else {
        z = 1.0 - rp_sind(theta);
        cos_theta = rp_cosd(theta);
    }
    double r = RP_PRJ_R0 * cos_theta;
    double sin_phi, cos_phi;
    rp_sincosd(phi, &sin_phi, &cos_phi);
    if (p->w[2] == 0.0) {
        if (theta < 0.0) return 1;
        *x = r * sin_phi;
        *y = -r * cos_phi;
        return 0;
    }
    z = z * RP_PRJ_R0;
    double z1 = p->w[0] * z;
    double z2 = p->w[1] * z;
    if (theta < -rp_atand(p->w[0] * sin_phi - p->w[1] * cos_phi)) return 1;
    *x = r * sin_phi + z1;
    *y = -r * cos_phi + z2;
    return 0;
}

// ARC.
RP_DEVICE int rp_prj_arc_x2s(double x, double y, double* phi, double* theta) {
    double r = sqrt(x * x + y * y);
    if (r == 0.0) return rp_prj_bchk_set(1.0e-13, 0.0, 90.0, phi, theta);
    return rp_prj_bchk_set(1.0e-13, rp_atan2d(x, -y), 90.0 - r, phi, theta);
}

RP_DEVICE int rp_prj_arc_s2x(double phi, double theta, double* x, double* y) {
    double r = 90.0 - theta;
    double sin_phi, cos_phi;
    rp_sincosd(phi, &sin_phi, &cos_phi);
    *x = r * sin_phi;
    *y = -r * cos_phi;
    return 0;
}

// ZPN. n = degree; w[0..=n] the coefficients, w[30] = zd_max, w[31] = r_max.

// Zpn::poly: Horner from the highest coefficient.
RP_DEVICE double rp_prj_zpn_poly(const RpPrj* p, double zd) {
    double r = 0.0;
    for (int m = p->n; m >= 0; m--) r = r * zd + p->w[m];
    return r;
}

// The derivative in zpnset.
RP_DEVICE double rp_prj_zpn_deriv(const RpPrj* p, double zd) {
    double d = 0.0;
    for (int m = p->n; m >= 1; m--) d = d * zd + (double)m * p->w[m];
    return d;
}

RP_DEVICE int rp_prj_zpn_set(RpPrj* p, const double* pv, unsigned mask) {
    const double tol = 1.0e-13;
    int n = -1;
    for (int m = 0; m < 30; m++) {
        double c = ((mask >> m) & 1u) ? pv[m] : 0.0;
        p->w[m] = c;
        if (c != 0.0) n = m;
    }
    if (n < 0) return 2;
    for (int m = n + 1; m < 30; m++) p->w[m] = 0.0;
    p->n = n;
    if (n < 2) {
        p->w[30] = RP_PI;
        p->w[31] = 0.0;
        return 0;
    }
    double zd1 = 0.0;
    double d1 = p->w[1];
    if (d1 <= 0.0) return 2;
    int bracketed = 0;
    double zd2 = 0.0, d2 = 0.0;
    for (int j = 0; j < 180; j++) {
        double z = rp_deg_to_rad((double)j);
        double d = rp_prj_zpn_deriv(p, z);
        if (d <= 0.0) {
            zd2 = z;
            d2 = d;
            bracketed = 1;
            break;
        }
        zd1 = z;
        d1 = d;
    }
    double zd;
    if (!bracketed) {
        zd = RP_PI;
    } else {
        zd = 0.0;
        for (int k = 1; k <= 10; k++) {
            zd = zd1 - d1 * (zd2 - zd1) / (d2 - d1);
            double d = rp_prj_zpn_deriv(p, zd);
            if (fabs(d) < tol) break;
            if (d < 0.0) {
                zd2 = zd;
                d2 = d;
            } else {
                zd1 = zd;
                d1 = d;
            }
        }
    }
    p->w[30] = zd;
    p->w[31] = rp_prj_zpn_poly(p, zd);
    return 0;
}

RP_DEVICE int rp_prj_zpn_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    const double tol = 1.0e-13;
    const double* c = p->w;
    double r = sqrt(x * x + y * y) / RP_PRJ_R0;
    double ph = rp_prj_azimuth(x, y, r);
    double zd;
    if (p->n == 0) {
        return 1;
    } else if (p->n == 1) {
        zd = (r - c[0]) / c[1];
    } else if (p->n == 2) {
        double a = c[2], b = c[1], c0 = c[0] - r;
        double d = b * b - 4.0 * a * c0;
        if (d < 0.0) return 1;
        d = sqrt(d);
        double zd1 = (-b + d) / (2.0 * a);
        double zd2 = (-b - d) / (2.0 * a);
        zd = rp_prj_cmin(zd1, zd2);
        if (zd < -tol) zd = rp_prj_cmax(zd1, zd2);
        if (zd < 0.0) {
            if (zd < -tol) return 1;
            zd = 0.0;
        } else if (zd > RP_PI) {
            if (zd > RP_PI + tol) return 1;
            zd = RP_PI;
        }
    } else {
        double zd1 = 0.0, r1 = c[0];
        double zd2 = p->w[30], r2 = p->w[31];
        if (r < r1) {
            if (r < r1 - tol) return 1;
            zd = zd1;
        } else if (r > r2) {
            if (r > r2 + tol) return 1;
            zd = zd2;
        } else {
            zd = zd2;
            for (int j = 0; j < 100; j++) {
                double lambda = rp_prj_clamp((r2 - r) / (r2 - r1), 0.1, 0.9);
                zd = zd2 - lambda * (zd2 - zd1);
                double rt = rp_prj_zpn_poly(p, zd);
                if (rt < r) {
                    if (r - rt < tol) break;
                    r1 = rt;
                    zd1 = zd;
                } else {
                    if (rt - r < tol) break;
                    r2 = rt;
                    zd2 = zd;
                }
                if (fabs(zd2 - zd1) < tol) break;
            }
        }
    }
    return rp_prj_bchk_set(tol, ph, 90.0 - rp_rad_to_deg(zd), phi, theta);
}

RP_DEVICE int rp_prj_zpn_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    double s = rp_deg_to_rad(90.0 - theta);
    double r = rp_prj_zpn_poly(p, s) * RP_PRJ_R0;
    if (s > p->w[30]) return 1;
    double sin_phi, cos_phi;
    rp_sincosd(phi, &sin_phi, &cos_phi);
    *x = r * sin_phi;
    *y = -r * cos_phi;
    return 0;
}

// ZEA.
RP_DEVICE int rp_prj_zea_x2s(double x, double y, double* phi, double* theta) {
    double r = sqrt(x * x + y * y);
    double ph = rp_prj_azimuth(x, y, r);
    double s = r * (RP_PI / 360.0);
    double th;
    if (fabs(s) > 1.0) {
        if (fabs(r - (360.0 / RP_PI)) < 1.0e-12) {
            th = -90.0;
        } else {
            return 1;
        }
    } else {
        th = 90.0 - 2.0 * rp_asind(s);
    }
    return rp_prj_bchk_set(1.0e-13, ph, th, phi, theta);
}

RP_DEVICE int rp_prj_zea_s2x(double phi, double theta, double* x, double* y) {
    double r = (360.0 / RP_PI) * rp_sind((90.0 - theta) / 2.0);
    double sin_phi, cos_phi;
    rp_sincosd(phi, &sin_phi, &cos_phi);
    *x = r * sin_phi;
    *y = -r * cos_phi;
    return 0;
}

// AIR. w: w1, w3, w5, w6 (zenithal.rs Air); 2 r0 and the small-angle limit are constants.
#define RP_PRJ_AIR_W0 (2.0 * RP_PRJ_R0)
#define RP_PRJ_AIR_SMALL 1.0e-4

RP_DEVICE int rp_prj_air_set(RpPrj* p, const double* pv, unsigned mask) {
    double theta_b = (mask & 2u) ? pv[1] : 90.0;
    double w1, w2;
    if (theta_b == 90.0) {
        w1 = -0.5;
        w2 = 1.0;
    } else if (theta_b > -90.0) {
        double cos_xi = rp_cosd((90.0 - theta_b) / 2.0);
        w1 = log(cos_xi) * (cos_xi * cos_xi) / (1.0 - cos_xi * cos_xi);
        w2 = 0.5 - w1;
    } else {
        return 2;
    }
    p->w[0] = w1;
    p->w[1] = RP_PRJ_AIR_W0 * w2;
    p->w[2] = w2 * RP_PRJ_AIR_SMALL;
    p->w[3] = RP_PRJ_R0 / w2;
    return 0;
}

RP_DEVICE double rp_prj_air_radius(const RpPrj* p, double cos_xi) {
    double tan_xi = sqrt(1.0 - cos_xi * cos_xi) / cos_xi;
    return -(log(cos_xi) / tan_xi + p->w[0] * tan_xi);
}

RP_DEVICE int rp_prj_air_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    const double tol = 1.0e-12;
    double r = sqrt(x * x + y * y) / RP_PRJ_AIR_W0;
    double ph = rp_prj_azimuth(x, y, r);
    double xi;
    if (r == 0.0) {
        xi = 0.0;
    } else if (r < p->w[2]) {
        xi = r * p->w[3];
    } else {
        double x1 = 1.0, r1 = 0.0, x2 = 0.0, r2 = 0.0;
        int bracketed = 0;
        for (int k = 0; k < 30; k++) {
            double xt = x1 / 2.0;
            double rt = rp_prj_air_radius(p, xt);
            if (rt >= r) {
                x2 = xt;
                r2 = rt;
                bracketed = 1;
                break;
            }
            x1 = xt;
            r1 = rt;
        }
        if (!bracketed) return 1;
        int solved = 0;
        double cos_xi = 0.0;
        for (int k = 0; k < 100; k++) {
            double lambda = rp_prj_clamp((r2 - r) / (r2 - r1), 0.1, 0.9);
            cos_xi = x2 - lambda * (x2 - x1);
            double rt = rp_prj_air_radius(p, cos_xi);
            if (rt < r) {
                if (r - rt < tol) {
                    solved = 1;
                    break;
                }
                r1 = rt;
                x1 = cos_xi;
            } else {
                if (rt - r < tol) {
                    solved = 1;
                    break;
                }
                r2 = rt;
                x2 = cos_xi;
            }
        }
        if (!solved) return 1;
        xi = rp_acosd(cos_xi);
    }
    return rp_prj_bchk_set(1.0e-13, ph, 90.0 - 2.0 * xi, phi, theta);
}

RP_DEVICE int rp_prj_air_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    double r;
    if (theta == 90.0) {
        r = 0.0;
    } else if (theta > -90.0) {
        double xi = (RP_PI / 180.0) * (90.0 - theta) / 2.0;
        if (xi < RP_PRJ_AIR_SMALL) {
            r = xi * p->w[1];
        } else {
            r = RP_PRJ_AIR_W0 * rp_prj_air_radius(p, rp_cosd((90.0 - theta) / 2.0));
        }
    } else {
        return 1;
    }
    double sin_phi, cos_phi;
    rp_sincosd(phi, &sin_phi, &cos_phi);
    *x = r * sin_phi;
    *y = -r * cos_phi;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Cylindrical projections (cylindrical.rs). Default fiducial point (0, 0).

// CYP. w: mu, lambda, 1/lambda, r0 (mu + lambda), its inverse.
RP_DEVICE int rp_prj_cyp_set(RpPrj* p, const double* pv, unsigned mask) {
    double mu = (mask & 2u) ? pv[1] : 1.0;
    double lambda = (mask & 4u) ? pv[2] : 1.0;
    if (lambda == 0.0) return 2;
    double scale = RP_PRJ_R0 * (mu + lambda);
    if (scale == 0.0) return 2;
    p->w[0] = mu;
    p->w[1] = lambda;
    p->w[2] = 1.0 / lambda;
    p->w[3] = scale;
    p->w[4] = 1.0 / scale;
    return 0;
}

RP_DEVICE int rp_prj_cyp_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    double ph = p->w[2] * x;
    double eta = p->w[4] * y;
    double th = rp_atan2d(eta, 1.0) + rp_asind(eta * p->w[0] / sqrt(eta * eta + 1.0));
    return rp_prj_bchk_set(1e-13, ph, th, phi, theta);
}

RP_DEVICE int rp_prj_cyp_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    double xx = p->w[1] * phi;
    double eta = p->w[0] + rp_cosd(theta);
    if (eta == 0.0) return 1;
    *x = xx;
    *y = p->w[3] * rp_sind(theta) / eta;
    return 0;
}

// CEA. w: r0/lambda, lambda/r0.
RP_DEVICE int rp_prj_cea_set(RpPrj* p, const double* pv, unsigned mask) {
    double lambda = (mask & 2u) ? pv[1] : 1.0;
    if (lambda <= 0.0 || lambda > 1.0) return 2;
    p->w[0] = RP_PRJ_R0 / lambda;
    p->w[1] = lambda / RP_PRJ_R0;
    return 0;
}

RP_DEVICE int rp_prj_cea_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    double s = p->w[1] * y;
    double th;
    if (fabs(s) > 1.0) {
        if (fabs(s) > 1.0 + 1e-13) return 1;
        th = rp_copysign_wcs(90.0, s);
    } else {
        th = rp_asind(s);
    }
    return rp_prj_bchk_set(1e-13, x, th, phi, theta);
}

RP_DEVICE int rp_prj_cea_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    *x = phi;
    *y = p->w[0] * rp_sind(theta);
    return 0;
}

// CAR.
RP_DEVICE int rp_prj_car_x2s(double x, double y, double* phi, double* theta) {
    return rp_prj_bchk_set(1e-13, x, y, phi, theta);
}

RP_DEVICE int rp_prj_car_s2x(double phi, double theta, double* x, double* y) {
    *x = phi;
    *y = theta;
    return 0;
}

// MER.
RP_DEVICE int rp_prj_mer_x2s(double x, double y, double* phi, double* theta) {
    double th = 2.0 * rp_atand(exp(y / RP_PRJ_R0)) - 90.0;
    return rp_prj_bchk_set(1e-13, x, th, phi, theta);
}

RP_DEVICE int rp_prj_mer_s2x(double phi, double theta, double* x, double* y) {
    if (theta <= -90.0 || theta >= 90.0) return 1;
    *x = phi;
    *y = RP_PRJ_R0 * log(rp_tand((theta + 90.0) / 2.0));
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Pseudo-cylindrical projections (pseudocylindrical.rs). Default fiducial point (0, 0).

// SFL (also BON with theta_1 = 0).
RP_DEVICE int rp_prj_sfl_x2s(double x, double y, double* phi, double* theta) {
    double s = cos(y / RP_PRJ_R0);
    if (s == 0.0) return 1;
    return rp_prj_bchk_set(1e-12, x * (1.0 / s), y, phi, theta);
}

RP_DEVICE int rp_prj_sfl_s2x(double phi, double theta, double* x, double* y) {
    *x = rp_cosd(theta) * phi;
    *y = theta;
    return 0;
}

// PAR (pi r0 = 180).
RP_DEVICE int rp_prj_par_x2s(double x, double y, double* phi, double* theta) {
    double r = (1.0 / 180.0) * y;
    if (!(r >= -1.0 && r <= 1.0)) return 1;
    double s = 1.0 - 4.0 * r * r;
    double ph;
    if (s == 0.0) {
        if (fabs(x) - 1e-13 >= 0.0) return 1;
        ph = x * s;
    } else {
        ph = x * (1.0 / s);
    }
    return rp_prj_bchk_set(1e-12, ph, 3.0 * asin(r) * 180.0 / RP_PI, phi, theta);
}

RP_DEVICE int rp_prj_par_s2x(double phi, double theta, double* x, double* y) {
    double s = rp_sind(theta / 3.0);
    *x = (1.0 - 4.0 * s * s) * phi;
    *y = 180.0 * s;
    return 0;
}

// MOL. w: sqrt(2) r0, sqrt(2) r0/90, 1/(sqrt(2) r0), 90/r0, 2/pi.
RP_DEVICE int rp_prj_mol_set(RpPrj* p) {
    double sqrt2_r0 = RP_PRJ_SQRT2 * RP_PRJ_R0;
    p->w[0] = sqrt2_r0;
    p->w[1] = sqrt2_r0 / 90.0;
    p->w[2] = 1.0 / sqrt2_r0;
    p->w[3] = 90.0 / RP_PRJ_R0;
    p->w[4] = 2.0 / RP_PI;
    return 0;
}

RP_DEVICE int rp_prj_mol_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    const double tol = 1e-12;
    double y0 = y / RP_PRJ_R0;
    double r = 2.0 - y0 * y0;
    double s;
    if (r <= tol) {
        if (r < -tol) return 1;
        if (fabs(x) - tol >= 0.0) return 1;
        r = 0.0;
        s = 0.0;
    } else {
        r = sqrt(r);
        s = 1.0 / r;
    }
    double z = y * p->w[2];
    if (fabs(z) > 1.0) {
        if (fabs(z) > 1.0 + tol) return 1;
        z = rp_copysign_wcs(1.0, z) + y0 * r / RP_PI;
    } else {
        z = asin(z) * p->w[4] + y0 * r / RP_PI;
    }
    if (fabs(z) > 1.0) {
        if (fabs(z) > 1.0 + tol) return 1;
        z = rp_copysign_wcs(1.0, z);
    }
    return rp_prj_bchk_set(1e-11, p->w[3] * x * s, rp_asind(z), phi, theta);
}

// pseudocylindrical.rs mollweide_auxiliary: v + sin v = u by bisection.
RP_DEVICE double rp_prj_mollweide_auxiliary(double u) {
    const double tol = 1e-13;
    double v0 = -RP_PI, v1 = RP_PI;
    double v = u;
    for (int k = 0; k < 100; k++) {
        double resid = (v - u) + sin(v);
        if (resid < 0.0) {
            if (resid > -tol) break;
            v0 = v;
        } else {
            if (resid < tol) break;
            v1 = v;
        }
        v = (v0 + v1) / 2.0;
    }
    return v;
}

RP_DEVICE int rp_prj_mol_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    double xi, eta;
    if (fabs(theta) == 90.0) {
        xi = 0.0;
        eta = rp_copysign_wcs(p->w[0], theta);
    } else if (theta == 0.0) {
        xi = 1.0;
        eta = 0.0;
    } else {
        double gamma = rp_prj_mollweide_auxiliary(RP_PI * rp_sind(theta)) / 2.0;
        xi = cos(gamma);
        eta = p->w[0] * sin(gamma);
    }
    *x = xi * (p->w[1] * phi);
    *y = eta;
    return 0;
}

// AIT. w: 2 r0^2, 1/(2 r0)^2, 1/(4 r0)^2, 1/(2 r0).
RP_DEVICE int rp_prj_ait_set(RpPrj* p) {
    double two_r0_sq = 2.0 * RP_PRJ_R0 * RP_PRJ_R0;
    double inv_2r0_sq = 1.0 / (2.0 * two_r0_sq);
    p->w[0] = two_r0_sq;
    p->w[1] = inv_2r0_sq;
    p->w[2] = inv_2r0_sq / 4.0;
    p->w[3] = 1.0 / (2.0 * RP_PRJ_R0);
    return 0;
}

RP_DEVICE int rp_prj_ait_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    const double tol = 1e-13;
    double s = (1.0 - x * x * p->w[2]) - y * y * p->w[1];
    if (s < 0.5) {
        if (s < 0.5 - tol) return 1;
        s = 0.5;
    }
    double z = sqrt(s);
    double xp = 2.0 * z * z - 1.0;
    double yp = z * (x * p->w[3]);
    double ph = (xp == 0.0 && yp == 0.0) ? 0.0 : 2.0 * rp_atan2d(yp, xp);
    double t = z * y / RP_PRJ_R0;
    double th;
    if (fabs(t) > 1.0) {
        if (fabs(t) > 1.0 + tol) return 1;
        th = rp_copysign_wcs(90.0, t);
    } else {
        th = rp_asind(t);
    }
    return rp_prj_bchk_set(1e-13, ph, th, phi, theta);
}

RP_DEVICE int rp_prj_ait_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    double sin_phi, cos_phi, sin_theta, cos_theta;
    rp_sincosd(phi / 2.0, &sin_phi, &cos_phi);
    rp_sincosd(theta, &sin_theta, &cos_theta);
    double w = sqrt(p->w[0] / (1.0 + cos_theta * cos_phi));
    *x = 2.0 * w * cos_theta * sin_phi;
    *y = w * sin_theta;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Conic projections (conic.rs). PVi_1 = theta_a required, PVi_2 = eta (default 0); default
// fiducial point (0, theta_a). w[0] = theta_a, w[1] = C, w[2] = 1/C, w[3] = Y0 for all four.

// conic.rs conic_polar: (R, alpha) of the plane point.
RP_DEVICE void rp_prj_conic_polar(double x, double y, double y0, double sigma, double* r,
                                  double* alpha) {
    double dy = y0 - y;
    double rr = sqrt(x * x + dy * dy);
    if (sigma < 0.0) rr = -rr;
    *r = rr;
    *alpha = rr == 0.0 ? 0.0 : rp_atan2d(x / rr, dy / rr);
}

// conic.rs conic_plane.
RP_DEVICE void rp_prj_conic_plane(double r, double c, double phi, double y0, double* x, double* y) {
    double sin_alpha, cos_alpha;
    rp_sincosd(c * phi, &sin_alpha, &cos_alpha);
    *x = r * sin_alpha;
    *y = -r * cos_alpha + y0;
}

// COP. w[4] = r0 cos eta, w[5] = its inverse, w[6] = cot theta_a.
RP_DEVICE int rp_prj_cop_set(RpPrj* p, double sigma, double eta) {
    double c = rp_sind(sigma);
    if (c == 0.0) return 2;
    double r0_cos_eta = RP_PRJ_R0 * rp_cosd(eta);
    if (r0_cos_eta == 0.0) return 2;
    double cot_sigma = 1.0 / rp_tand(sigma);
    p->w[0] = sigma;
    p->w[1] = c;
    p->w[2] = 1.0 / c;
    p->w[3] = r0_cos_eta * cot_sigma;
    p->w[4] = r0_cos_eta;
    p->w[5] = 1.0 / r0_cos_eta;
    p->w[6] = cot_sigma;
    return 0;
}

RP_DEVICE int rp_prj_cop_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    double r, alpha;
    rp_prj_conic_polar(x, y, p->w[3], p->w[0], &r, &alpha);
    double th = p->w[0] + rp_atand(p->w[6] - r * p->w[5]);
    return rp_prj_bchk_set(1e-13, alpha * p->w[2], th, phi, theta);
}

RP_DEVICE int rp_prj_cop_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    double t = theta - p->w[0];
    double s = rp_cosd(t);
    double r;
    if (s == 0.0) {
        return 1;
    } else if (fabs(theta) == 90.0) {
        if ((theta < 0.0) != (p->w[0] < 0.0)) return 1;
        r = 0.0;
    } else {
        r = p->w[3] - p->w[4] * rp_sind(t) / s;
        if (r * p->w[1] < 0.0) return 1;
    }
    rp_prj_conic_plane(r, p->w[1], phi, p->w[3], x, y);
    return 0;
}

// COE. w[4] = chi, w[5] = psi, w[6] = 2C, w[7] = psi chi^2, w[8] = 1/(2 r0 chi),
// w[9] = R at theta = -90.
RP_DEVICE int rp_prj_coe_set(RpPrj* p, double sigma, double eta) {
    double theta1 = sigma - eta;
    double theta2 = sigma + eta;
    double c = (rp_sind(theta1) + rp_sind(theta2)) / 2.0;
    if (c == 0.0) return 2;
    double chi = RP_PRJ_R0 / c;
    double psi = 1.0 + rp_sind(theta1) * rp_sind(theta2);
    double two_c = 2.0 * c;
    p->w[0] = sigma;
    p->w[1] = c;
    p->w[2] = 1.0 / c;
    p->w[3] = chi * sqrt(psi - two_c * rp_sind(sigma));
    p->w[4] = chi;
    p->w[5] = psi;
    p->w[6] = two_c;
    p->w[7] = chi * chi * psi;
    p->w[8] = 1.0 / (2.0 * RP_PRJ_R0 * chi);
    p->w[9] = chi * sqrt(psi + two_c);
    return 0;
}

RP_DEVICE int rp_prj_coe_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    const double tol = 1e-12;
    double r, alpha;
    rp_prj_conic_polar(x, y, p->w[3], p->w[0], &r, &alpha);
    double th;
    if (fabs(r - p->w[9]) < tol) {
        th = -90.0;
    } else {
        double w = (p->w[7] - r * r) * p->w[8];
        if (fabs(w) > 1.0) {
            if (fabs(w - 1.0) < tol) {
                th = 90.0;
            } else if (fabs(w + 1.0) < tol) {
                th = -90.0;
            } else {
                return 1;
            }
        } else {
            th = rp_asind(w);
        }
    }
    return rp_prj_bchk_set(1e-13, alpha * p->w[2], th, phi, theta);
}

RP_DEVICE int rp_prj_coe_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    double r = theta == -90.0 ? p->w[9] : p->w[4] * sqrt(p->w[5] - p->w[6] * rp_sind(theta));
    rp_prj_conic_plane(r, p->w[1], phi, p->w[3], x, y);
    return 0;
}

// COD. w[4] = Y0 + theta_a.
RP_DEVICE int rp_prj_cod_set(RpPrj* p, double sigma, double eta) {
    double c;
    if (eta == 0.0) {
        c = rp_deg_to_rad(RP_PRJ_R0 * rp_sind(sigma));
    } else {
        c = RP_PRJ_R0 * rp_sind(sigma) * rp_sind(eta) / eta;
    }
    if (c == 0.0) return 2;
    double y0 = RP_PRJ_R0 * rp_cosd(eta) * rp_cosd(sigma) / c;
    p->w[0] = sigma;
    p->w[1] = c;
    p->w[2] = 1.0 / c;
    p->w[3] = y0;
    p->w[4] = y0 + sigma;
    return 0;
}

RP_DEVICE int rp_prj_cod_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    double r, alpha;
    rp_prj_conic_polar(x, y, p->w[3], p->w[0], &r, &alpha);
    return rp_prj_bchk_set(1e-13, alpha * p->w[2], p->w[4] - r, phi, theta);
}

RP_DEVICE int rp_prj_cod_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    rp_prj_conic_plane(p->w[4] - theta, p->w[1], phi, p->w[3], x, y);
    return 0;
}

// COO. w[4] = psi, w[5] = 1/psi.
RP_DEVICE int rp_prj_coo_set(RpPrj* p, double sigma, double eta) {
    double theta1 = sigma - eta;
    double theta2 = sigma + eta;
    double tan1 = rp_tand((90.0 - theta1) / 2.0);
    double cos1 = rp_cosd(theta1);
    double c;
    if (theta1 == theta2) {
        c = rp_sind(theta1);
    } else {
        double tan2 = rp_tand((90.0 - theta2) / 2.0);
        double cos2 = rp_cosd(theta2);
        c = log(cos2 / cos1) / log(tan2 / tan1);
    }
    if (c == 0.0) return 2;
    double psi = RP_PRJ_R0 * (cos1 / c) / pow(tan1, c);
    if (psi == 0.0) return 2;
    p->w[0] = sigma;
    p->w[1] = c;
    p->w[2] = 1.0 / c;
    p->w[3] = psi * pow(rp_tand((90.0 - sigma) / 2.0), c);
    p->w[4] = psi;
    p->w[5] = 1.0 / psi;
    return 0;
}

RP_DEVICE int rp_prj_coo_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    double r, alpha;
    rp_prj_conic_polar(x, y, p->w[3], p->w[0], &r, &alpha);
    double th;
    if (r == 0.0) {
        if (p->w[1] < 0.0) {
            th = -90.0;
        } else {
            return 1;
        }
    } else {
        th = 90.0 - 2.0 * rp_atand(pow(r * p->w[5], p->w[2]));
    }
    return rp_prj_bchk_set(1e-13, alpha * p->w[2], th, phi, theta);
}

RP_DEVICE int rp_prj_coo_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    double r;
    if (theta == -90.0) {
        if (p->w[1] >= 0.0) return 1;
        r = 0.0;
    } else {
        r = p->w[4] * pow(rp_tand((90.0 - theta) / 2.0), p->w[1]);
    }
    rp_prj_conic_plane(r, p->w[1], phi, p->w[3], x, y);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Polyconic projections (polyconic.rs). Default fiducial point (0, 0).

// BON. n = 1 for theta_1 = 0 (Sanson-Flamsteed); otherwise w: theta_1, Y0.
RP_DEVICE int rp_prj_bon_set(RpPrj* p, const double* pv, unsigned mask) {
    if (!(mask & 2u)) return 2;
    double theta1 = pv[1];
    if (theta1 == 0.0) {
        p->n = 1;
        return 0;
    }
    p->n = 0;
    p->w[0] = theta1;
    p->w[1] = RP_PRJ_R0 * rp_cosd(theta1) / rp_sind(theta1) + theta1;
    return 0;
}

RP_DEVICE int rp_prj_bon_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    if (p->n) return rp_prj_sfl_x2s(x, y, phi, theta);
    double y0 = p->w[1];
    double dy = y0 - y;
    double r = sqrt(x * x + dy * dy);
    if (p->w[0] < 0.0) r = -r;
    double alpha = r == 0.0 ? 0.0 : rp_atan2d(x / r, dy / r);
    double th = y0 - r;
    double cos_theta = rp_cosd(th);
    double ph = cos_theta == 0.0 ? 0.0 : alpha * (r / RP_PRJ_R0) / cos_theta;
    return rp_prj_bchk_set(1e-11, ph, th, phi, theta);
}

RP_DEVICE int rp_prj_bon_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    if (p->n) return rp_prj_sfl_s2x(phi, theta, x, y);
    double y0 = p->w[1];
    double r = y0 - theta;
    double alpha = rp_cosd(theta) / r * (RP_PRJ_R0 * phi);
    double sin_alpha, cos_alpha;
    rp_sincosd(alpha, &sin_alpha, &cos_alpha);
    *x = r * sin_alpha;
    *y = -r * cos_alpha + y0;
    return 0;
}

// PCO: 2 r0 and (pi/180)/(2 r0).
#define RP_PRJ_PCO_TWO_R0 (360.0 / RP_PI)
#define RP_PRJ_PCO_W3 ((RP_PI / 180.0) / RP_PRJ_PCO_TWO_R0)

RP_DEVICE int rp_prj_pco_x2s(double x, double y, double* phi, double* theta) {
    const double tol = 1e-12;
    double w = fabs(y);
    if (w < tol) return rp_prj_bchk_set(tol, x, 0.0, phi, theta);
    if (fabs(w - 90.0) < tol) {
        return rp_prj_bchk_set(tol, 0.0, rp_copysign_wcs(90.0, y), phi, theta);
    }
    double th, y_minus_theta, tan_theta;
    if (w < 1e-4) {
        th = y / (1.0 + RP_PRJ_PCO_W3 * x * x);
        y_minus_theta = y - th;
        tan_theta = rp_tand(th);
    } else {
        double xx = x * x;
        double pos = y, neg = 0.0;
        double f_pos = xx, f_neg = -xx;
        th = 0.0;
        y_minus_theta = 0.0;
        tan_theta = 0.0;
        for (int k = 0; k < 64; k++) {
            double lambda = rp_prj_clamp(f_pos / (f_pos - f_neg), 0.1, 0.9);
            th = pos - lambda * (pos - neg);
            y_minus_theta = y - th;
            tan_theta = rp_tand(th);
            double f = xx + y_minus_theta * (y_minus_theta - RP_PRJ_PCO_TWO_R0 / tan_theta);
            if (fabs(f) < tol || fabs(pos - neg) < tol) break;
            if (f > 0.0) {
                pos = th;
                f_pos = f;
            } else {
                neg = th;
                f_neg = f;
            }
        }
    }
    double x1 = RP_PRJ_R0 - y_minus_theta * tan_theta;
    double y1 = x * tan_theta;
    double ph = (x1 == 0.0 && y1 == 0.0) ? 0.0 : rp_atan2d(y1, x1) / rp_sind(th);
    return rp_prj_bchk_set(tol, ph, th, phi, theta);
}

RP_DEVICE int rp_prj_pco_s2x(double phi, double theta, double* x, double* y) {
    if (theta == 0.0) {
        *x = phi;
        *y = -0.0;
        return 0;
    }
    if (fabs(theta) < 1e-4) {
        double xx = phi * rp_cosd(theta);
        *x = xx;
        *y = (1.0 + RP_PRJ_PCO_W3 * xx * xx) * theta;
        return 0;
    }
    double sin_theta, cos_theta, sin_psi, cos_psi;
    rp_sincosd(theta, &sin_theta, &cos_theta);
    rp_sincosd(phi * sin_theta, &sin_psi, &cos_psi);
    double cot_theta = cos_theta / sin_theta;
    *x = RP_PRJ_R0 * cot_theta * sin_psi;
    *y = RP_PRJ_R0 * (cot_theta * (1.0 - cos_psi) + rp_deg_to_rad(theta));
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Quad-cube projections (quadcube.rs). Default fiducial point (0, 0). Faces: 0 top (+n),
// 1 phi = 0 (+l), 2 phi = 90 (+m), 3 phi = 180 (-l), 4 phi = 270 (-m), 5 bottom (-n).

#define RP_PRJ_QC_W0 45.0
#define RP_PRJ_QC_W1 (1.0 / 45.0)

// quadcube.rs unfold for f64: face and face-local coordinates, 1 outside the cross.
RP_DEVICE int rp_prj_qc_unfold(double xf, double yf, int* face, double* fx, double* fy) {
    if (-1.0 <= xf && xf <= 1.0) {
        if (!(-3.0 <= yf && yf <= 3.0)) return 1;
    } else if (!(-7.0 <= xf && xf <= 7.0) || !(-1.0 <= yf && yf <= 1.0)) {
        return 1;
    }
    if (xf < -1.0) xf = xf + 8.0;
    if (xf > 5.0) {
        *face = 4; *fx = xf - 6.0; *fy = yf;
    } else if (xf > 3.0) {
        *face = 3; *fx = xf - 4.0; *fy = yf;
    } else if (xf > 1.0) {
        *face = 2; *fx = xf - 2.0; *fy = yf;
    } else if (yf > 1.0) {
        *face = 0; *fx = xf; *fy = yf - 2.0;
    } else if (yf < -1.0) {
        *face = 5; *fx = xf; *fy = yf + 2.0;
    } else {
        *face = 1; *fx = xf; *fy = yf;
    }
    return 0;
}

// The same in float32 (CSC).
RP_DEVICE int rp_prj_qc_unfold_f(float xf, float yf, int* face, float* fx, float* fy) {
    if (-1.0f <= xf && xf <= 1.0f) {
        if (!(-3.0f <= yf && yf <= 3.0f)) return 1;
    } else if (!(-7.0f <= xf && xf <= 7.0f) || !(-1.0f <= yf && yf <= 1.0f)) {
        return 1;
    }
    if (xf < -1.0f) xf = xf + 8.0f;
    if (xf > 5.0f) {
        *face = 4; *fx = xf - 6.0f; *fy = yf;
    } else if (xf > 3.0f) {
        *face = 3; *fx = xf - 4.0f; *fy = yf;
    } else if (xf > 1.0f) {
        *face = 2; *fx = xf - 2.0f; *fy = yf;
    } else if (yf > 1.0f) {
        *face = 0; *fx = xf; *fy = yf - 2.0f;
    } else if (yf < -1.0f) {
        *face = 5; *fx = xf; *fy = yf + 2.0f;
    } else {
        *face = 1; *fx = xf; *fy = yf;
    }
    return 0;
}

// Face::offset.
RP_DEVICE int rp_prj_qc_offset_x(int face) { return face >= 2 && face <= 4 ? 2 * (face - 1) : 0; }
RP_DEVICE int rp_prj_qc_offset_y(int face) { return face == 0 ? 2 : (face == 5 ? -2 : 0); }

// Face::to_lmn, then to_native (pole convention and prjbchk).
RP_DEVICE int rp_prj_qc_native(int face, double zeta, double u, double v, double* phi,
                               double* theta) {
    double l, m, n;
    switch (face) {
    case 0: l = -v; m = u; n = zeta; break;
    case 1: l = zeta; m = u; n = v; break;
    case 2: l = -u; m = zeta; n = v; break;
    case 3: l = -zeta; m = -u; n = v; break;
    case 4: l = u; m = -zeta; n = v; break;
    default: l = v; m = u; n = -zeta; break;
    }
    double ph = (l == 0.0 && m == 0.0) ? 0.0 : rp_atan2d(m, l);
    return rp_prj_bchk_set(1.0e-13, ph, rp_asind(n), phi, theta);
}

// quadcube.rs to_face: the face of (phi, theta), its in-face components and zeta.
RP_DEVICE int rp_prj_qc_to_face(double phi, double theta, double* xi, double* eta, double* zeta,
                                double* cos_phi, double* sin_phi) {
    double sp, cp, st, ct;
    rp_sincosd(phi, &sp, &cp);
    rp_sincosd(theta, &st, &ct);
    double l = ct * cp, m = ct * sp, n = st;
    int face = 0;
    double best = n;
    if (l > best) { face = 1; best = l; }
    if (m > best) { face = 2; best = m; }
    if (-l > best) { face = 3; best = -l; }
    if (-m > best) { face = 4; best = -m; }
    if (-n > best) { face = 5; best = -n; }
    switch (face) {
    case 0: *xi = m; *eta = -l; break;
    case 1: *xi = m; *eta = n; break;
    case 2: *xi = -l; *eta = n; break;
    case 3: *xi = -m; *eta = n; break;
    case 4: *xi = l; *eta = n; break;
    default: *xi = m; *eta = l; break;
    }
    *zeta = best;
    *cos_phi = cp;
    *sin_phi = sp;
    return face;
}

// quadcube.rs clamp_edge: 1 beyond +-1 by more than tol, within it clamped.
RP_DEVICE int rp_prj_qc_clamp_edge(double* v, double tol) {
    if (fabs(*v) > 1.0) {
        if (fabs(*v) > 1.0 + tol) return 1;
        *v = rp_copysign_wcs(1.0, *v);
    }
    return 0;
}

// TSC.
RP_DEVICE int rp_prj_tsc_x2s(double x, double y, double* phi, double* theta) {
    int face;
    double xf, yf;
    if (rp_prj_qc_unfold(x * RP_PRJ_QC_W1, y * RP_PRJ_QC_W1, &face, &xf, &yf)) return 1;
    double t = 1.0 / sqrt(1.0 + xf * xf + yf * yf);
    return rp_prj_qc_native(face, t, t * xf, t * yf, phi, theta);
}

RP_DEVICE int rp_prj_tsc_s2x(double phi, double theta, double* x, double* y) {
    double xi, eta, zeta, cp, sp;
    int face = rp_prj_qc_to_face(phi, theta, &xi, &eta, &zeta, &cp, &sp);
    double xf = xi / zeta;
    double yf = eta / zeta;
    if (rp_prj_qc_clamp_edge(&xf, 1.0e-12)) return 1;
    if (rp_prj_qc_clamp_edge(&yf, 1.0e-12)) return 1;
    *x = RP_PRJ_QC_W0 * (xf + (double)rp_prj_qc_offset_x(face));
    *y = RP_PRJ_QC_W0 * (yf + (double)rp_prj_qc_offset_y(face));
    return 0;
}

// CSC: float32 polynomials in WCSLIB's operation order (quadcube.rs csc_inverse_axis).
RP_DEVICE float rp_prj_csc_inverse_axis(float a, float aa, float bb) {
    float z0 = -0.27292696f + aa * (-0.07629969f + aa * (-0.22797056f + aa * (0.54852384f +
               aa * (-0.62930065f + aa * (0.25795794f + aa * 0.02584375f)))));
    float z1 = -0.02819452f + aa * (-0.01471565f + aa * (0.48051509f + aa * (-1.74114454f +
               aa * (1.71547508f + aa * -0.53022337f))));
    float z2 = 0.27058160f + aa * (-0.56800938f + aa * (0.30803317f + aa * (0.98938102f +
               aa * -0.83180469f)));
    float z3 = -0.60441560f + aa * (1.50880086f + aa * (-0.93678576f + aa * 0.08693841f));
    float z4 = 0.93412077f + aa * (-1.41601920f + aa * 0.33887446f);
    float z5 = -0.63915306f + aa * 0.52032238f;
    float z6 = 0.14381585f;
    float sum = z0 + bb * (z1 + bb * (z2 + bb * (z3 + bb * (z4 + bb * (z5 + bb * z6)))));
    return a + a * (1.0f - aa) * sum;
}

RP_DEVICE int rp_prj_csc_x2s(double x, double y, double* phi, double* theta) {
    int face;
    float xf, yf;
    if (rp_prj_qc_unfold_f((float)(x * RP_PRJ_QC_W1), (float)(y * RP_PRJ_QC_W1), &face, &xf,
                           &yf)) {
        return 1;
    }
    float xx = xf * xf;
    float yy = yf * yf;
    float chi = rp_prj_csc_inverse_axis(xf, xx, yy);
    float psi = rp_prj_csc_inverse_axis(yf, yy, xx);
    float sum = chi * chi + psi * psi;
    double t = 1.0 / sqrt((double)sum + 1.0);
    return rp_prj_qc_native(face, t, (double)chi * t, (double)psi * t, phi, theta);
}

// quadcube.rs csc_forward_axis.
RP_DEVICE float rp_prj_csc_forward_axis(float a, float a2, float a4, float a2co, float b2,
                                        float b4, float b2co, float a2b2) {
    const float gstar = 1.37484847732f;
    const float mm = 0.004869491981f;
    const float gamma = -0.13161671474f;
    const float omega1 = -0.159596235474f;
    const float d0 = 0.0759196200467f;
    const float d1 = -0.0217762490699f;
    const float c00 = 0.141189631152f;
    const float c10 = 0.0809701286525f;
    const float c01 = -0.281528535557f;
    const float c11 = 0.15384112876f;
    const float c20 = -0.178251207466f;
    const float c02 = 0.106959469314f;
    float cross = c00 + c10 * a2 + c01 * b2 + c11 * a2b2 + c20 * a4 + c02 * b4;
    return a * (a2 + a2co * (gstar + b2 * (gamma * a2co + mm * a2 + b2co * cross) +
                             a2 * (omega1 - a2co * (d0 + d1 * a2))));
}

// clamp_edge(f64::from(v), 1e-7) back to float32.
RP_DEVICE int rp_prj_csc_clamp(float* v) {
    double d = (double)*v;
    if (rp_prj_qc_clamp_edge(&d, 1.0e-7)) return 1;
    *v = (float)d;
    return 0;
}

RP_DEVICE int rp_prj_csc_s2x(double phi, double theta, double* x, double* y) {
    double xi, eta, zeta, cp, sp;
    int face = rp_prj_qc_to_face(phi, theta, &xi, &eta, &zeta, &cp, &sp);
    float chi = (float)(xi / zeta);
    float psi = (float)(eta / zeta);
    float chi2 = chi * chi, psi2 = psi * psi;
    float chi2co = 1.0f - chi2, psi2co = 1.0f - psi2;
    float chipsi = fabsf(chi * psi);
    float chi4 = chi2 > 1.0e-16f ? chi2 * chi2 : 0.0f;
    float psi4 = psi2 > 1.0e-16f ? psi2 * psi2 : 0.0f;
    float chi2psi2 = chipsi > 1.0e-16f ? chi2 * psi2 : 0.0f;
    float xf = rp_prj_csc_forward_axis(chi, chi2, chi4, chi2co, psi2, psi4, psi2co, chi2psi2);
    float yf = rp_prj_csc_forward_axis(psi, psi2, psi4, psi2co, chi2, chi4, chi2co, chi2psi2);
    if (rp_prj_csc_clamp(&xf)) return 1;
    if (rp_prj_csc_clamp(&yf)) return 1;
    *x = RP_PRJ_QC_W0 * (double)(xf + (float)rp_prj_qc_offset_x(face));
    *y = RP_PRJ_QC_W0 * (double)(yf + (float)rp_prj_qc_offset_y(face));
    return 0;
}

// QSC.
RP_DEVICE int rp_prj_qsc_x2s(double x, double y, double* phi, double* theta) {
    int face;
    double xf, yf;
    if (rp_prj_qc_unfold(x * RP_PRJ_QC_W1, y * RP_PRJ_QC_W1, &face, &xf, &yf)) return 1;
    int direct = fabs(xf) > fabs(yf);
    double a = direct ? xf : yf;
    double b = direct ? yf : xf;
    double omega, tau, zeta, zeco;
    if (a == 0.0) {
        omega = 0.0;
        tau = 1.0;
        zeta = 1.0;
        zeco = 0.0;
    } else {
        double sin_w, cos_w;
        rp_sincosd(15.0 * b / a, &sin_w, &cos_w);
        omega = sin_w / (cos_w - 1.0 / RP_PRJ_SQRT2);
        tau = 1.0 + omega * omega;
        zeco = a * a * (1.0 - 1.0 / sqrt(1.0 + tau));
        zeta = 1.0 - zeco;
    }
    double w;
    if (zeta < -1.0) {
        if (zeta < -1.0 - 1.0e-12) return 1;
        zeta = -1.0;
        w = 0.0;
    } else {
        w = sqrt(zeco * (2.0 - zeco) / tau);
    }
    double u, v;
    if (direct) {
        u = xf < 0.0 ? -w : w;
        v = u * omega;
    } else {
        v = yf < 0.0 ? -w : w;
        u = v * omega;
    }
    return rp_prj_qc_native(face, zeta, u, v, phi, theta);
}

// quadcube.rs qsc_forward_axis.
RP_DEVICE void rp_prj_qsc_forward_axis(double major, double minor, double zeco, double* a_out,
                                       double* b_out) {
    double omega = minor / major;
    double tau = 1.0 + omega * omega;
    double a = sqrt(zeco / (1.0 - 1.0 / sqrt(1.0 + tau)));
    if (major < 0.0) a = -a;
    *a_out = a;
    *b_out = (a / 15.0) * (rp_atand(omega) - rp_asind(omega / sqrt(tau + tau)));
}

RP_DEVICE int rp_prj_qsc_s2x(double phi, double theta, double* x, double* y) {
    if (fabs(theta) == 90.0) {
        *x = -0.0;
        *y = rp_copysign_wcs(2.0 * RP_PRJ_QC_W0, theta);
        return 0;
    }
    double xi, eta, zeta, cos_phi, sin_phi;
    int face = rp_prj_qc_to_face(phi, theta, &xi, &eta, &zeta, &cos_phi, &sin_phi);
    double zeco = 1.0 - zeta;
    if (zeco < 1.0e-8) {
        double t = rp_deg_to_rad(theta);
        double pz;
        switch (face) {
        case 1:
            pz = atan2(sin_phi, cos_phi);
            zeco = (pz * pz + t * t) / 2.0;
            break;
        case 2:
            pz = atan2(sin_phi, cos_phi) - RP_PI / 2.0;
            zeco = (pz * pz + t * t) / 2.0;
            break;
        case 3:
            pz = atan2(sin_phi, cos_phi);
            pz = pz - rp_copysign_wcs(RP_PI, pz);
            zeco = (pz * pz + t * t) / 2.0;
            break;
        case 4:
            pz = atan2(sin_phi, cos_phi) + RP_PI / 2.0;
            zeco = (pz * pz + t * t) / 2.0;
            break;
        case 5:
            pz = rp_deg_to_rad(theta + 90.0);
            zeco = pz * pz / 2.0;
            break;
        default:
            pz = rp_deg_to_rad(90.0 - theta);
            zeco = pz * pz / 2.0;
            break;
        }
    }
    double xf, yf;
    if (xi == 0.0 && eta == 0.0) {
        xf = 0.0;
        yf = 0.0;
    } else if (fabs(xi) > fabs(eta)) {
        rp_prj_qsc_forward_axis(xi, eta, zeco, &xf, &yf);
    } else if (fabs(eta) >= fabs(xi)) {
        rp_prj_qsc_forward_axis(eta, xi, zeco, &yf, &xf);
    } else {
        xf = 0.0;
        yf = 0.0;
    }
    if (rp_prj_qc_clamp_edge(&xf, 1.0e-12)) return 1;
    if (rp_prj_qc_clamp_edge(&yf, 1.0e-12)) return 1;
    *x = RP_PRJ_QC_W0 * (xf + (double)rp_prj_qc_offset_x(face));
    *y = RP_PRJ_QC_W0 * (yf + (double)rp_prj_qc_offset_y(face));
    return 0;
}

// ---------------------------------------------------------------------------------------------
// HEALPix projections (healpix.rs).

#define RP_PRJ_HPX_TOL 1e-12

// HPX: flag1 = H odd, flag2 = K odd; w: K, sin_limit, y_scale, half_k1, y_equator,
// half_facet, facets_per_degree. Default fiducial point (0, 0).
RP_DEVICE int rp_prj_hpx_set(RpPrj* p, const double* pv, unsigned mask) {
    double h = (mask & 2u) ? pv[1] : 4.0;
    double k = (mask & 4u) ? pv[2] : 3.0;
    if (h <= 0.0 || k <= 0.0) return 2;
    p->flag1 = rp_prj_i64_odd(h + 0.5);
    p->flag2 = rp_prj_i64_odd(k + 0.5);
    p->w[0] = k;
    p->w[1] = (k - 1.0) / k;
    p->w[2] = 90.0 * k / h;
    p->w[3] = (k + 1.0) / 2.0;
    p->w[4] = 90.0 * (k - 1.0) / h;
    p->w[5] = 180.0 / h;
    p->w[6] = h / 360.0;
    return 0;
}

// Hpx::facet_centre.
RP_DEVICE double rp_prj_hpx_facet_centre(const RpPrj* p, double a) {
    return -180.0 + (2.0 * floor((a + 180.0) * p->w[6]) + 1.0) * p->w[5];
}

// Hpx::south_offset (the parity of the wrapping i64 sum is that of its terms).
RP_DEVICE double rp_prj_hpx_south_offset(const RpPrj* p, double a) {
    int odd = rp_prj_i64_odd(floor(a / p->w[5])) ^ (p->flag1 != 0);
    return odd ? -p->w[5] : p->w[5];
}

RP_DEVICE int rp_prj_hpx_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    double absy = fabs(y);
    if (absy <= p->w[4]) {
        return rp_prj_bchk_set(RP_PRJ_HPX_TOL, x, rp_asind(y / p->w[2]), phi, theta);
    }
    if (absy > p->w[5] * p->w[3]) return 1;
    double dx = x - rp_prj_hpx_facet_centre(p, x);
    if (!(p->flag2 || y > 0.0)) dx += rp_prj_hpx_south_offset(p, x);
    double sigma = p->w[3] - absy / p->w[5];
    double s, th;
    if (sigma == 0.0) {
        s = 1e9;
        th = 90.0;
    } else {
        double t = 1.0 - sigma * sigma / p->w[0];
        if (t < -1.0) return 1;
        s = 1.0 / sigma;
        th = rp_asind(t);
    }
    if (y < 0.0) th = -th;
    double r = s * dx;
    if (p->w[5] + 1e-12 <= fabs(r)) return 1;
    if (r != 0.0) r -= dx;
    return rp_prj_bchk_set(RP_PRJ_HPX_TOL, x + r, th, phi, theta);
}

RP_DEVICE int rp_prj_hpx_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    double sin_theta = rp_sind(theta);
    double abs_sin = fabs(sin_theta);
    if (abs_sin <= p->w[1]) {
        *x = phi;
        *y = p->w[2] * sin_theta;
        return 0;
    }
    double dphi = phi - rp_prj_hpx_facet_centre(p, phi);
    if (!(p->flag2 || theta > 0.0)) dphi += rp_prj_hpx_south_offset(p, phi);
    double sigma = sqrt(p->w[0] * (1.0 - abs_sin));
    double eta = p->w[5] * (p->w[3] - sigma);
    if (theta < 0.0) eta = -eta;
    double xx = phi + dphi * (sigma - 1.0);
    if (180.0 < xx) xx = 360.0 - xx;
    *x = xx;
    *y = eta;
    return 0;
}

// XPH. w: 1/sqrt(2), sqrt(2/3)*R2D, theta_series, sqrt(3/2)*D2R. Default fiducial (0, 90).
#define RP_PRJ_XPH_SIGMA_SERIES 1e-4

RP_DEVICE int rp_prj_xph_set(RpPrj* p) {
    double sigma_to_theta = rp_rad_to_deg(sqrt(2.0 / 3.0));
    p->w[0] = 1.0 / sqrt(2.0);
    p->w[1] = sigma_to_theta;
    p->w[2] = 90.0 - RP_PRJ_XPH_SIGMA_SERIES * sigma_to_theta;
    p->w[3] = rp_deg_to_rad(sqrt(1.5));
    return 0;
}

RP_DEVICE int rp_prj_xph_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    const double tol = RP_PRJ_HPX_TOL;
    double xr = x * p->w[0];
    double yr = y * p->w[0];
    double xi1, eta1, base;
    if (xr <= 0.0 && 0.0 < yr) {
        xi1 = -xr - yr;
        eta1 = xr - yr;
        base = -180.0;
    } else if (xr < 0.0 && yr <= 0.0) {
        xi1 = xr - yr;
        eta1 = xr + yr;
        base = -90.0;
    } else if (0.0 <= xr && yr < 0.0) {
        xi1 = xr + yr;
        eta1 = -xr + yr;
        base = 0.0;
    } else {
        xi1 = -xr + yr;
        eta1 = -xr - yr;
        base = 90.0;
    }
    double xi = xi1 + 45.0;
    double eta = eta1 + 90.0;
    double abseta = fabs(eta);
    if (abseta > 90.0) return 1;
    if (abseta <= 45.0) {
        if (45.0 + tol < fabs(xi1)) return 1;
        return rp_prj_bchk_set(tol, base + xi, rp_asind(eta / 67.5), phi, theta);
    }
    double sigma = (90.0 - abseta) / 45.0;
    double ph;
    if (xr == 0.0) {
        ph = yr <= 0.0 ? 0.0 : 180.0;
    } else if (yr == 0.0) {
        ph = xr < 0.0 ? -90.0 : 90.0;
    } else {
        ph = base + (45.0 + xi1 / sigma);
    }
    double th;
    if (sigma < RP_PRJ_XPH_SIGMA_SERIES) {
        th = 90.0 - sigma * p->w[1];
    } else {
        th = rp_asind(1.0 - sigma * sigma / 3.0);
    }
    if (eta < 0.0) th = -th;
    if (eta < -45.0 && eta + 90.0 + tol < fabs(xi1)) return 1;
    return rp_prj_bchk_set(tol, ph, th, phi, theta);
}

RP_DEVICE int rp_prj_xph_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    double chi = phi;
    if (180.0 <= fabs(chi)) {
        chi = fmod(chi, 360.0);
        if (chi < -180.0) {
            chi += 360.0;
        } else if (180.0 <= chi) {
            chi -= 360.0;
        }
    }
    chi += 180.0;
    double psi = fmod(chi, 90.0);
    double ph = chi - 180.0;
    double sin_theta = rp_sind(theta);
    double abs_sin = fabs(sin_theta);
    double xi, eta;
    if (abs_sin <= 2.0 / 3.0) {
        xi = psi;
        eta = 67.5 * sin_theta;
    } else {
        double sigma;
        if (theta < p->w[2]) {
            sigma = sqrt(3.0 * (1.0 - abs_sin));
        } else {
            sigma = (90.0 - theta) * p->w[3];
        }
        double e = 45.0 * (2.0 - sigma);
        xi = 45.0 + (psi - 45.0) * sigma;
        eta = theta < 0.0 ? -e : e;
    }
    xi = xi - 45.0;
    eta = eta - 90.0;
    double w = p->w[0];
    if (ph < -90.0) {
        *x = w * (-xi + eta);
        *y = w * (-xi - eta);
    } else if (ph < 0.0) {
        *x = w * (xi + eta);
        *y = w * (-xi + eta);
    } else if (ph < 90.0) {
        *x = w * (xi - eta);
        *y = w * (xi + eta);
    } else {
        *x = w * (-xi - eta);
        *y = w * (xi - eta);
    }
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Dispatch (mod.rs Kind::x2s / Kind::s2x): finite inputs, no fiducial offset.

RP_PRJ_DISPATCH int rp_prj_kind_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    switch (p->code) {
    case RP_PRJ_AZP: return RP_PRJ_USED(RP_PRJ_AZP) ? rp_prj_azp_x2s(p, x, y, phi, theta) : 1;
    case RP_PRJ_SZP: return RP_PRJ_USED(RP_PRJ_SZP) ? rp_prj_szp_x2s(p, x, y, phi, theta) : 1;
    case RP_PRJ_TAN: return RP_PRJ_USED(RP_PRJ_TAN) ? rp_prj_tan_x2s(x, y, phi, theta) : 1;
    case RP_PRJ_STG: return RP_PRJ_USED(RP_PRJ_STG) ? rp_prj_stg_x2s(x, y, phi, theta) : 1;
    case RP_PRJ_SIN: return RP_PRJ_USED(RP_PRJ_SIN) ? rp_prj_sin_x2s(p, x, y, phi, theta) : 1;
    case RP_PRJ_ARC: return RP_PRJ_USED(RP_PRJ_ARC) ? rp_prj_arc_x2s(x, y, phi, theta) : 1;
    case RP_PRJ_ZPN: return RP_PRJ_USED(RP_PRJ_ZPN) ? rp_prj_zpn_x2s(p, x, y, phi, theta) : 1;
    case RP_PRJ_ZEA: return RP_PRJ_USED(RP_PRJ_ZEA) ? rp_prj_zea_x2s(x, y, phi, theta) : 1;
    case RP_PRJ_AIR: return RP_PRJ_USED(RP_PRJ_AIR) ? rp_prj_air_x2s(p, x, y, phi, theta) : 1;
    case RP_PRJ_CYP: return RP_PRJ_USED(RP_PRJ_CYP) ? rp_prj_cyp_x2s(p, x, y, phi, theta) : 1;
    case RP_PRJ_CEA: return RP_PRJ_USED(RP_PRJ_CEA) ? rp_prj_cea_x2s(p, x, y, phi, theta) : 1;
    case RP_PRJ_CAR: return RP_PRJ_USED(RP_PRJ_CAR) ? rp_prj_car_x2s(x, y, phi, theta) : 1;
    case RP_PRJ_MER: return RP_PRJ_USED(RP_PRJ_MER) ? rp_prj_mer_x2s(x, y, phi, theta) : 1;
    case RP_PRJ_SFL: return RP_PRJ_USED(RP_PRJ_SFL) ? rp_prj_sfl_x2s(x, y, phi, theta) : 1;
    case RP_PRJ_PAR: return RP_PRJ_USED(RP_PRJ_PAR) ? rp_prj_par_x2s(x, y, phi, theta) : 1;
    case RP_PRJ_MOL: return RP_PRJ_USED(RP_PRJ_MOL) ? rp_prj_mol_x2s(p, x, y, phi, theta) : 1;
    case RP_PRJ_AIT: return RP_PRJ_USED(RP_PRJ_AIT) ? rp_prj_ait_x2s(p, x, y, phi, theta) : 1;
    case RP_PRJ_COP: return RP_PRJ_USED(RP_PRJ_COP) ? rp_prj_cop_x2s(p, x, y, phi, theta) : 1;
    case RP_PRJ_COE: return RP_PRJ_USED(RP_PRJ_COE) ? rp_prj_coe_x2s(p, x, y, phi, theta) : 1;
    case RP_PRJ_COD: return RP_PRJ_USED(RP_PRJ_COD) ? rp_prj_cod_x2s(p, x, y, phi, theta) : 1;
    case RP_PRJ_COO: return RP_PRJ_USED(RP_PRJ_COO) ? rp_prj_coo_x2s(p, x, y, phi, theta) : 1;
    case RP_PRJ_BON: return RP_PRJ_USED(RP_PRJ_BON) ? rp_prj_bon_x2s(p, x, y, phi, theta) : 1;
    case RP_PRJ_PCO: return RP_PRJ_USED(RP_PRJ_PCO) ? rp_prj_pco_x2s(x, y, phi, theta) : 1;
    case RP_PRJ_TSC: return RP_PRJ_USED(RP_PRJ_TSC) ? rp_prj_tsc_x2s(x, y, phi, theta) : 1;
    case RP_PRJ_CSC: return RP_PRJ_USED(RP_PRJ_CSC) ? rp_prj_csc_x2s(x, y, phi, theta) : 1;
    case RP_PRJ_QSC: return RP_PRJ_USED(RP_PRJ_QSC) ? rp_prj_qsc_x2s(x, y, phi, theta) : 1;
    case RP_PRJ_HPX: return RP_PRJ_USED(RP_PRJ_HPX) ? rp_prj_hpx_x2s(p, x, y, phi, theta) : 1;
    case RP_PRJ_XPH: return RP_PRJ_USED(RP_PRJ_XPH) ? rp_prj_xph_x2s(p, x, y, phi, theta) : 1;
    default: return 1;
    }
}

RP_PRJ_DISPATCH int rp_prj_kind_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    switch (p->code) {
    case RP_PRJ_AZP: return RP_PRJ_USED(RP_PRJ_AZP) ? rp_prj_azp_s2x(p, phi, theta, x, y) : 1;
    case RP_PRJ_SZP: return RP_PRJ_USED(RP_PRJ_SZP) ? rp_prj_szp_s2x(p, phi, theta, x, y) : 1;
    case RP_PRJ_TAN: return RP_PRJ_USED(RP_PRJ_TAN) ? rp_prj_tan_s2x(phi, theta, x, y) : 1;
    case RP_PRJ_STG: return RP_PRJ_USED(RP_PRJ_STG) ? rp_prj_stg_s2x(phi, theta, x, y) : 1;
    case RP_PRJ_SIN: return RP_PRJ_USED(RP_PRJ_SIN) ? rp_prj_sin_s2x(p, phi, theta, x, y) : 1;
    case RP_PRJ_ARC: return RP_PRJ_USED(RP_PRJ_ARC) ? rp_prj_arc_s2x(phi, theta, x, y) : 1;
    case RP_PRJ_ZPN: return RP_PRJ_USED(RP_PRJ_ZPN) ? rp_prj_zpn_s2x(p, phi, theta, x, y) : 1;
    case RP_PRJ_ZEA: return RP_PRJ_USED(RP_PRJ_ZEA) ? rp_prj_zea_s2x(phi, theta, x, y) : 1;
    case RP_PRJ_AIR: return RP_PRJ_USED(RP_PRJ_AIR) ? rp_prj_air_s2x(p, phi, theta, x, y) : 1;
    case RP_PRJ_CYP: return RP_PRJ_USED(RP_PRJ_CYP) ? rp_prj_cyp_s2x(p, phi, theta, x, y) : 1;
    case RP_PRJ_CEA: return RP_PRJ_USED(RP_PRJ_CEA) ? rp_prj_cea_s2x(p, phi, theta, x, y) : 1;
    case RP_PRJ_CAR: return RP_PRJ_USED(RP_PRJ_CAR) ? rp_prj_car_s2x(phi, theta, x, y) : 1;
    case RP_PRJ_MER: return RP_PRJ_USED(RP_PRJ_MER) ? rp_prj_mer_s2x(phi, theta, x, y) : 1;
    case RP_PRJ_SFL: return RP_PRJ_USED(RP_PRJ_SFL) ? rp_prj_sfl_s2x(phi, theta, x, y) : 1;
    case RP_PRJ_PAR: return RP_PRJ_USED(RP_PRJ_PAR) ? rp_prj_par_s2x(phi, theta, x, y) : 1;
    case RP_PRJ_MOL: return RP_PRJ_USED(RP_PRJ_MOL) ? rp_prj_mol_s2x(p, phi, theta, x, y) : 1;
    case RP_PRJ_AIT: return RP_PRJ_USED(RP_PRJ_AIT) ? rp_prj_ait_s2x(p, phi, theta, x, y) : 1;
    case RP_PRJ_COP: return RP_PRJ_USED(RP_PRJ_COP) ? rp_prj_cop_s2x(p, phi, theta, x, y) : 1;
    case RP_PRJ_COE: return RP_PRJ_USED(RP_PRJ_COE) ? rp_prj_coe_s2x(p, phi, theta, x, y) : 1;
    case RP_PRJ_COD: return RP_PRJ_USED(RP_PRJ_COD) ? rp_prj_cod_s2x(p, phi, theta, x, y) : 1;
    case RP_PRJ_COO: return RP_PRJ_USED(RP_PRJ_COO) ? rp_prj_coo_s2x(p, phi, theta, x, y) : 1;
    case RP_PRJ_BON: return RP_PRJ_USED(RP_PRJ_BON) ? rp_prj_bon_s2x(p, phi, theta, x, y) : 1;
    case RP_PRJ_PCO: return RP_PRJ_USED(RP_PRJ_PCO) ? rp_prj_pco_s2x(phi, theta, x, y) : 1;
    case RP_PRJ_TSC: return RP_PRJ_USED(RP_PRJ_TSC) ? rp_prj_tsc_s2x(phi, theta, x, y) : 1;
    case RP_PRJ_CSC: return RP_PRJ_USED(RP_PRJ_CSC) ? rp_prj_csc_s2x(phi, theta, x, y) : 1;
    case RP_PRJ_QSC: return RP_PRJ_USED(RP_PRJ_QSC) ? rp_prj_qsc_s2x(phi, theta, x, y) : 1;
    case RP_PRJ_HPX: return RP_PRJ_USED(RP_PRJ_HPX) ? rp_prj_hpx_s2x(p, phi, theta, x, y) : 1;
    case RP_PRJ_XPH: return RP_PRJ_USED(RP_PRJ_XPH) ? rp_prj_xph_s2x(p, phi, theta, x, y) : 1;
    default: return 1;
    }
}

// ---------------------------------------------------------------------------------------------
// The public interface (mod.rs Projection).

// Projection::new: validates the flat parameters, runs the projection's *set, and projects a
// user fiducial point to get the plane offset.
RP_DEVICE int rp_prj_setup(const double* params, RpPrj* p) {
    double code_f = params[0];
    double mask_f = params[1];
    if (!(code_f >= 0.0 && code_f < (double)RP_PRJ_COUNT && floor(code_f) == code_f)) return 1;
    if (!(mask_f >= 0.0 && mask_f < 1073741824.0 && floor(mask_f) == mask_f)) return 1;
    unsigned mask = (unsigned)mask_f;
    const double* pv = params + 2;
    for (int m = 0; m < 30; m++) {
        if (((mask >> m) & 1u) && !rp_prj_finite(pv[m])) return 1;
    }
    int offset = params[32] != 0.0;
    if (offset && !(rp_prj_finite(params[33]) && rp_prj_finite(params[34]))) return 1;

    p->code = (int)code_f;
    if (!RP_PRJ_USED(p->code)) return 4;
    p->n = 0;
    p->flag1 = 0;
    p->flag2 = 0;
    p->plain_tan = 0;
    p->pad_ = 0;
    p->x0 = 0.0;
    p->y0 = 0.0;
    for (int m = 0; m < 32; m++) p->w[m] = 0.0;

    int status = 0;
    double def_theta0 = 0.0;
    switch (p->code) {
    case RP_PRJ_AZP: status = RP_PRJ_USED(RP_PRJ_AZP) ? rp_prj_azp_set(p, pv, mask) : 4; def_theta0 = 90.0; break;
    case RP_PRJ_SZP: status = RP_PRJ_USED(RP_PRJ_SZP) ? rp_prj_szp_set(p, pv, mask) : 4; def_theta0 = 90.0; break;
    case RP_PRJ_TAN:
    case RP_PRJ_STG:
    case RP_PRJ_ARC:
    case RP_PRJ_ZEA: def_theta0 = 90.0; break;
    case RP_PRJ_SIN: status = RP_PRJ_USED(RP_PRJ_SIN) ? rp_prj_sin_set(p, pv, mask) : 4; def_theta0 = 90.0; break;
    case RP_PRJ_ZPN: status = RP_PRJ_USED(RP_PRJ_ZPN) ? rp_prj_zpn_set(p, pv, mask) : 4; def_theta0 = 90.0; break;
    case RP_PRJ_AIR: status = RP_PRJ_USED(RP_PRJ_AIR) ? rp_prj_air_set(p, pv, mask) : 4; def_theta0 = 90.0; break;
    case RP_PRJ_CYP: status = RP_PRJ_USED(RP_PRJ_CYP) ? rp_prj_cyp_set(p, pv, mask) : 4; break;
    case RP_PRJ_CEA: status = RP_PRJ_USED(RP_PRJ_CEA) ? rp_prj_cea_set(p, pv, mask) : 4; break;
    case RP_PRJ_MOL: status = RP_PRJ_USED(RP_PRJ_MOL) ? rp_prj_mol_set(p) : 4; break;
    case RP_PRJ_AIT: status = RP_PRJ_USED(RP_PRJ_AIT) ? rp_prj_ait_set(p) : 4; break;
    case RP_PRJ_COP:
    case RP_PRJ_COE:
    case RP_PRJ_COD:
    case RP_PRJ_COO: {
        if (!(mask & 2u)) {
            status = 2;
            break;
        }
        double sigma = pv[1];
        double eta = (mask & 4u) ? pv[2] : 0.0;
        if (p->code == RP_PRJ_COP) status = RP_PRJ_USED(RP_PRJ_COP) ? rp_prj_cop_set(p, sigma, eta) : 4;
        else if (p->code == RP_PRJ_COE) status = RP_PRJ_USED(RP_PRJ_COE) ? rp_prj_coe_set(p, sigma, eta) : 4;
        else if (p->code == RP_PRJ_COD) status = RP_PRJ_USED(RP_PRJ_COD) ? rp_prj_cod_set(p, sigma, eta) : 4;
        else status = RP_PRJ_USED(RP_PRJ_COO) ? rp_prj_coo_set(p, sigma, eta) : 4;
        def_theta0 = sigma;
        break;
    }
    case RP_PRJ_BON: status = RP_PRJ_USED(RP_PRJ_BON) ? rp_prj_bon_set(p, pv, mask) : 4; break;
    case RP_PRJ_HPX: status = RP_PRJ_USED(RP_PRJ_HPX) ? rp_prj_hpx_set(p, pv, mask) : 4; break;
    case RP_PRJ_XPH: status = RP_PRJ_USED(RP_PRJ_XPH) ? rp_prj_xph_set(p) : 4; def_theta0 = 90.0; break;
    default: break;  // CAR MER SFL PAR PCO TSC CSC QSC: nothing to set up, (0, 0)
    }
    if (status) return status;

    p->phi0 = 0.0;
    p->theta0 = def_theta0;
    if (offset) {
        p->phi0 = params[33];
        p->theta0 = params[34];
        double x0, y0;
        if (rp_prj_kind_s2x(p, p->phi0, p->theta0, &x0, &y0)) return 3;
        p->x0 = x0;
        p->y0 = y0;
    }
    p->plain_tan = p->code == RP_PRJ_TAN && p->x0 == 0.0 && p->y0 == 0.0;
    return 0;
}

// Projection::x2s: plane (x, y) to native (phi, theta), degrees.
RP_DEVICE int rp_prj_x2s(const RpPrj* p, double x, double y, double* phi, double* theta) {
    if (!(rp_prj_finite(x) && rp_prj_finite(y))) return 1;
    double ph, th;
    if (rp_prj_kind_x2s(p, x + p->x0, y + p->y0, &ph, &th)) return 1;
    if (!(rp_prj_finite(ph) && rp_prj_finite(th))) return 1;
    *phi = ph;
    *theta = th;
    return 0;
}

// Projection::s2x: native (phi, theta) to plane (x, y), degrees.
RP_DEVICE int rp_prj_s2x(const RpPrj* p, double phi, double theta, double* x, double* y) {
    if (!(rp_prj_finite(phi) && rp_prj_finite(theta))) return 1;
    double xx, yy;
    if (rp_prj_kind_s2x(p, phi, theta, &xx, &yy)) return 1;
    xx = xx - p->x0;
    yy = yy - p->y0;
    if (!(rp_prj_finite(xx) && rp_prj_finite(yy))) return 1;
    *x = xx;
    *y = yy;
    return 0;
}

// Projection::x2v: plane (x, y) to the native unit vector (cos t cos p, cos t sin p, sin t).
RP_DEVICE int rp_prj_x2v(const RpPrj* p, double x, double y, double v[3]) {
    if (p->plain_tan) {
        if (!(rp_prj_finite(x) && rp_prj_finite(y))) return 1;
        double norm = sqrt(x * x + y * y + RP_PRJ_R0 * RP_PRJ_R0);
        v[0] = -y / norm;
        v[1] = x / norm;
        v[2] = RP_PRJ_R0 / norm;
        return 0;
    }
    double phi, theta;
    if (rp_prj_x2s(p, x, y, &phi, &theta)) return 1;
    double sin_phi, cos_phi, sin_theta, cos_theta;
    rp_sincosd(phi, &sin_phi, &cos_phi);
    rp_sincosd(theta, &sin_theta, &cos_theta);
    v[0] = cos_theta * cos_phi;
    v[1] = cos_theta * sin_phi;
    v[2] = sin_theta;
    return 0;
}

// Projection::v2x: a native direction (any length) to the plane.
RP_DEVICE int rp_prj_v2x(const RpPrj* p, const double v[3], double* x, double* y) {
    if (p->plain_tan) {
        if (v[2] != v[2] || v[2] <= 0.0) return 1;
        double xx = RP_PRJ_R0 * v[1] / v[2];
        double yy = -RP_PRJ_R0 * v[0] / v[2];
        if (!(rp_prj_finite(xx) && rp_prj_finite(yy))) return 1;
        *x = xx;
        *y = yy;
        return 0;
    }
    double phi = rp_atan2d(v[1], v[0]);
    double theta = rp_atan2d(v[2], sqrt(v[0] * v[0] + v[1] * v[1]));
    return rp_prj_s2x(p, phi, theta, x, y);
}

// Projection::fiducial: the native fiducial point in use.
RP_DEVICE void rp_prj_fiducial(const RpPrj* p, double* phi0, double* theta0) {
    *phi0 = p->phi0;
    *theta0 = p->theta0;
}

#endif  // RP_WITH_SKY
