// Shared definitions of the CUDA kernels of reproject-rs.
//
// Every file of kernels/ is plain CUDA C that NVRTC compiles at run time and that a host C++
// compiler can also build (for the GPU-free parity tests in tests/gpu_host_*.rs). The files do
// not #include each other: the Rust side concatenates them in the fixed order of
// `KERNEL_SOURCES` (common.cuh first), and the host harnesses include them in that same order.
#pragma once

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
// NVRTC: math functions (sin, atan2, ...) are built in; no headers are available or needed.
#define RP_DEVICE __device__ __forceinline__
#define RP_GLOBAL extern "C" __global__
#else
// Host build for tests: the same code as ordinary inline C++ functions.
#include <math.h>
#include <stdint.h>
#include <string.h>
#define RP_DEVICE static inline
#define RP_GLOBAL extern "C"
#define __shared__
#endif

#define RP_PI 3.141592653589793238462643
// WCSLIB's unparenthesised D2R/R2D macros: x*D2R is (x*PI)/180, as src/wcs/trig.rs computes it.
#define RP_D2R RP_PI / 180.0
#define RP_R2D 180.0 / RP_PI

// a / d rounded to nearest, as the division gives it, for a divisor d that is a whole number
// whose odd part is below 2^40 (the spline weights divide by 6, 12, 24 and 120), with inv =
// 1 / d rounded to nearest (the caller writes `1.0 / d`, which the compiler folds): a multiply
// and two fused multiply-adds, where a division compiles to a reciprocal estimate, its
// refinements, a range test and a slow-path branch. For +0 and for 2^-900 <= |a| <= 2^900,
// which the callers ensure (-0 gives +0; NaN, infinities and subnormals are not promised).
// Why: q = a * inv is within (2u + u^2) |a / d| of a / d (u = 2^-53), and the fused step
// s = q + (a - d q) inv, with the remainder rounded once, within about 4 u^2 |a / d|, less than
// 2^-51 ulp. The exact quotient a / d is M 2^j / m in ulps of it (M the 53-bit significand of
// a, m the odd part of d), whose fraction is a multiple of 1 / m: at least 1 / (2 m) ulp from
// a rounding midpoint, far beyond 2^-51. So s rounds as a / d does. a * inv alone rounds
// otherwise for about a third of dividends. tests/gpu_host_division.rs compares both with the
// division (kernels/host/division_harness.cpp).
RP_DEVICE double rp_div_const(double a, double d, double inv) {
    double q = a * inv;
    return fma(fma(-q, d, a), inv, q);
}

// Byte swaps (big-endian samples).
RP_DEVICE unsigned int rp_bswap32(unsigned int u) {
    return (u >> 24) | ((u >> 8) & 0xff00u) | ((u << 8) & 0xff0000u) | (u << 24);
}

RP_DEVICE unsigned long long rp_bswap64(unsigned long long u) {
    return ((unsigned long long)rp_bswap32((unsigned int)u) << 32) |
           rp_bswap32((unsigned int)(u >> 32));
}

RP_DEVICE unsigned short rp_bswap16(unsigned short u) {
    return (unsigned short)((u >> 8) | (u << 8));
}

// A sample's value from its stored bits, in the byte order it was stored in: the one decoding
// of 2-, 4- and 8-byte samples, shared by the block kernel's loads (interp.cuh's rp_load_at)
// and the spline filter's reads of device samples (spline.cu's rp_sample_value).
RP_DEVICE double rp_float32_value(unsigned int u, int big_endian) {
    if (big_endian) u = rp_bswap32(u);
    union {
        unsigned int u;
        float f;
    } p;
    p.u = u;
    return (double)p.f;
}

RP_DEVICE double rp_float64_value(unsigned long long u, int big_endian) {
    if (big_endian) u = rp_bswap64(u);
    union {
        unsigned long long u;
        double d;
    } p;
    p.u = u;
    return p.d;
}

RP_DEVICE long long rp_int16_value(unsigned short u, int big_endian) {
    return (short)(big_endian ? rp_bswap16(u) : u);
}

RP_DEVICE long long rp_int32_value(unsigned int u, int big_endian) {
    return (int)(big_endian ? rp_bswap32(u) : u);
}

RP_DEVICE long long rp_int64_value(unsigned long long u, int big_endian) {
    return (long long)(big_endian ? rp_bswap64(u) : u);
}

// Kernel variants. With no RP_V_* define the block kernel is the general one, which chooses
// everything at run time. src/engine/kernel_variant.rs picks a specialised variant per plan and
// launch, passed as NVRTC -D options (the host builds #define them); the parameters must then
// agree with it, or every pixel of the launch is NaN (rp_block_setup refuses them):
//   RP_V_HOMOGRAPHY       the forward transform is the homography (no projection, no
//                         distortion, no frame change, no general transform compiled)
//   RP_V_ORDER=0..5       the interpolation order (the splines' loops then unroll)
//   RP_V_INPUT=0..5       the input element type (input_type must be that)
//   RP_V_OUT=0|1          the output type, float32 or float64 (homography orders 0 and 1;
//                         a launch of the other type gets NaN values of its own type)
//   RP_V_NAN=0|1          the NaN policy, Propagate or Renormalize (homography order 1)
//   RP_V_SKY              the forward transform is the celestial one through native unit
//                         vectors (kind 1), without TPV distortions or FK4 E-terms, as is the
//                         backward one if any; with
//     RP_V_PRJ_OUT=code,  the output's and the input's projection codes (RP_PRJ_*): only
//     RP_V_PRJ_IN=code    these two are compiled (dispatch, setup), all steps inlined
//     RP_V_FRAME=0|1      whether the frame change (taken next to a pole) is compiled
//     RP_V_SIP=0|1        whether SIP distortions are compiled (never TPV)
//   RP_V_MIN_BLOCKS=n     __launch_bounds__(256, n) (not part of a variant's key: the runtime
//                         adds it where the compiler then reports no spill and no larger stack
//                         frame; src/gpu/runtime.rs compile_variant)
// The sky gates, RP_V_OUT and RP_V_NAN are used in expressions only, never in #if, so that the
// CUDA simulator's host builds can take them at run time (kernels/variants.txt, `*` values).
#ifdef RP_V_SKY
#define RP_SKY_VARIANT 1
#else
#define RP_SKY_VARIANT 0
#endif
#ifdef RP_V_HOMOGRAPHY
#define RP_WITH_SKY 0
#else
#define RP_WITH_SKY 1
#endif
#ifdef RP_V_ORDER
#define RP_WITH_NEAREST (RP_V_ORDER == 0)
#define RP_WITH_BILINEAR (RP_V_ORDER == 1)
#define RP_WITH_SPLINE (RP_V_ORDER >= 2)
#else
#define RP_WITH_NEAREST 1
#define RP_WITH_BILINEAR 1
#define RP_WITH_SPLINE 1
#endif
// Output pixels each thread of the block kernel computes, in one row, a thread block's width
// apart: a launch's grid covers blockDim.x * RP_PIXELS_PER_THREAD columns per thread block
// (src/gpu/variant.rs `KernelDefines::pixels_per_thread`, which the launches use). In the
// bilinear homography builds four: the per-thread work before the first pixel is shared and
// the pixels' loads interleave; with the output type and NaN policy in their key (RP_V_OUT,
// RP_V_NAN) four cost no register over two (sm_90 float32: 40). Elsewhere one: a second
// spline pixel holds registers (bicubic 59 -> 78: 37.5% occupancy, 6.3 -> 8.3 ms on the
// H100), a second celestial pixel spills (CAR -> CAR 56 -> 100 registers).
#if defined(RP_V_HOMOGRAPHY) && defined(RP_V_ORDER) && RP_V_ORDER == 1
#define RP_PIXELS_PER_THREAD 4
#else
#define RP_PIXELS_PER_THREAD 1
#endif
#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define RP_PIXEL_LOOP _Pragma("unroll")
#else
#define RP_PIXEL_LOOP
#endif
// Loops of the parameters' parse (rp_block_setup), kept rolled on the device: the parse runs
// once per plan, and an unrolled copy is code that every build compiles (sky TAN -> TAN
// bilinear on sm_90: 8.0 -> 6.7 s) and, inlined into a homography build, registers it holds
// (sm_80 bilinear: 56 -> 48).
#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define RP_ROLLED _Pragma("unroll 1")
#else
#define RP_ROLLED
#endif
// Loops whose trip count a variant fixes (the splines' taps): unrolled on the device, so that
// their small arrays live in registers, not in a stack frame.
#if defined(RP_V_ORDER) && (defined(__CUDACC_RTC__) || defined(__CUDACC__))
#define RP_UNROLL _Pragma("unroll")
#else
#define RP_UNROLL
#endif
