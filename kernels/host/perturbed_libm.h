// Emulates a different libm (CUDA's differs from glibc by an ulp or two): every transcendental
// result used by the kernels is moved by one ulp, up or down, on about half of the arguments
// (a deterministic hash of the argument bits), so the parity test can show how far such
// differences carry through the pipeline.
#pragma once
// Included by pipeline_harness.cpp after common.cuh (which includes math.h) when built with
// -DRP_PERTURB_LIBM.
#include <string.h>
static inline double rp_perturb(double r, double a, double b) {
    unsigned long long u, v; memcpy(&u, &a, 8); memcpy(&v, &b, 8);
    unsigned long long h = (u ^ (v * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    int k = (int)(h & 3);
    if (!(r - r == 0.0) || r == 0.0) return r;
    if (k == 1) return nextafter(r, INFINITY);
    if (k == 2) return nextafter(r, -INFINITY);
    return r;
}
static inline double rp_sin_(double x) { return rp_perturb(sin(x), x, 1.0); }
static inline double rp_cos_(double x) { return rp_perturb(cos(x), x, 2.0); }
static inline double rp_tan_(double x) { return rp_perturb(tan(x), x, 3.0); }
static inline double rp_asin_(double x) { return rp_perturb(asin(x), x, 4.0); }
static inline double rp_acos_(double x) { return rp_perturb(acos(x), x, 5.0); }
static inline double rp_atan_(double x) { return rp_perturb(atan(x), x, 6.0); }
static inline double rp_atan2_(double y, double x) { return rp_perturb(atan2(y, x), y, x); }
static inline double rp_exp_(double x) { return rp_perturb(exp(x), x, 7.0); }
static inline double rp_log_(double x) { return rp_perturb(log(x), x, 8.0); }
static inline double rp_pow_(double x, double y) { return rp_perturb(pow(x, y), x, y); }
static inline double rp_hypot_(double x, double y) { return rp_perturb(hypot(x, y), x, y + 9.0); }
#define sin rp_sin_
#define cos rp_cos_
#define tan rp_tan_
#define asin rp_asin_
#define acos rp_acos_
#define atan rp_atan_
#define atan2 rp_atan2_
#define exp rp_exp_
#define log rp_log_
#define pow rp_pow_
#define hypot rp_hypot_
