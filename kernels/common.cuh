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
#define RP_DEVICE static inline
#define RP_GLOBAL extern "C"
#define __shared__
#endif

#define RP_PI 3.141592653589793238462643
// WCSLIB's unparenthesised D2R/R2D macros: x*D2R is (x*PI)/180, as src/wcs/trig.rs computes it.
#define RP_D2R RP_PI / 180.0
#define RP_R2D 180.0 / RP_PI
