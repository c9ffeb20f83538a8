// Host build of the block kernel, for tests/gpu_host_pipeline.rs: runs `rp_reproject_block`
// over a 2-D grid of 16x16 "thread blocks" exactly as a launch would (every thread one call),
// and reports each pixel's value, footprint and input position.
//
// Build: c++ -O2 -ffp-contract=off -std=c++14 -I kernels kernels/host/pipeline_harness.cpp
// (-DRP_PERTURB_LIBM: with the one-ulp libm perturbation of perturbed_libm.h)
// A build of a variant pattern (kernels/variants.txt, `*` values) defines RP_HARNESS_VALUES=n
// and each open define as rp_harness_value[k]; their values follow on the command line.
// Usage: pipeline_harness IN OUT [VALUE...]
//
// IN (little-endian, as written by the test):
//   i64 n_transform, f64[n_transform]; i64 n_sampling, f64[n_sampling];
//   i64[15]: input_type, big_endian, in_pitch, win_y0, win_x0, win_ny, win_nx, in_ny, in_nx,
//            out_y0, out_x0, blk_ny, blk_nx, out_f64, input bytes;
//   u8[input bytes] (the window, in_pitch elements per row)
// OUT: f64[4 * blk_ny * blk_nx]: values (as stored in the output type), footprint, input x,
//   input y, each block row-major.
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#ifdef RP_HARNESS_VALUES
static int rp_harness_value[RP_HARNESS_VALUES];
#else
#define RP_HARNESS_VALUES 0
#endif

#include "common.cuh"
#ifdef RP_PERTURB_LIBM
#include "perturbed_libm.h"
#endif
#include "projections.cuh"
#include "wcs.cuh"
#include "interp.cuh"
#include "reproject.cu"

static int read_i64(FILE* f, long long* v) { return fread(v, 8, 1, f) == 1 ? 0 : 1; }

#include "asan_options.h"

int main(int argc, char** argv) {
    if (argc != 3 + RP_HARNESS_VALUES) {
        fprintf(stderr, "usage: %s IN OUT and %d values\n", argv[0], RP_HARNESS_VALUES);
        return 2;
    }
#if RP_HARNESS_VALUES > 0
    for (int k = 0; k < RP_HARNESS_VALUES; k++) rp_harness_value[k] = atoi(argv[3 + k]);
#endif
    FILE* f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    long long n;
    if (read_i64(f, &n) || n < 0 || n > (1 << 26)) return 3;
    std::vector<double> transform(n > 0 ? n : 1);
    if (fread(transform.data(), 8, n, f) != (size_t)n) return 3;
    if (read_i64(f, &n) || n < 0 || n > (1 << 20)) return 3;
    std::vector<double> sampling(n > 0 ? n : 1);
    if (fread(sampling.data(), 8, n, f) != (size_t)n) return 3;
    long long a[15];
    for (int i = 0; i < 15; i++)
        if (read_i64(f, &a[i])) return 3;
    std::vector<unsigned char> input(a[14] > 0 ? a[14] + 8 : 8);
    if (fread(input.data(), 1, a[14], f) != (size_t)a[14]) return 3;
    fclose(f);
    // Align the window to 8 bytes as a device allocation would be, and end it at the next
    // multiple of 8 bytes (AddressSanitizer, in the tests' builds, stops the harness at a read
    // past that).
    std::vector<double> aligned(a[14] > 0 ? (a[14] + 7) / 8 : 1);
    for (long long i = 0; i < a[14]; i++) ((unsigned char*)aligned.data())[i] = input[i];

    int blk_ny = (int)a[11], blk_nx = (int)a[12], out_f64 = (int)a[13];
    long long npix = (long long)blk_ny * blk_nx;
    std::vector<double> out_d(npix > 0 ? npix : 1), fp_d(npix > 0 ? npix : 1);
    std::vector<float> out_f(npix > 0 ? npix : 1), fp_f(npix > 0 ? npix : 1);
    void* out = out_f64 ? (void*)out_d.data() : (void*)out_f.data();
    void* fp = out_f64 ? (void*)fp_d.data() : (void*)fp_f.data();

    blockDim.x = 16;
    blockDim.y = 16;
    blockDim.z = 1;
    unsigned int gx = (blk_nx + 16 * RP_PIXELS_PER_THREAD - 1) / (16 * RP_PIXELS_PER_THREAD);
    unsigned int gy = (blk_ny + 15) / 16;
    for (blockIdx.y = 0; blockIdx.y < gy; blockIdx.y++)
        for (blockIdx.x = 0; blockIdx.x < gx; blockIdx.x++)
            for (threadIdx.y = 0; threadIdx.y < 16; threadIdx.y++)
                for (threadIdx.x = 0; threadIdx.x < 16; threadIdx.x++)
                    rp_reproject_block(transform.data(), sampling.data(), aligned.data(),
                                       (int)a[0], (int)a[1], a[2], (int)a[3], (int)a[4],
                                       (int)a[5], (int)a[6], (int)a[7], (int)a[8], (int)a[9],
                                       (int)a[10], blk_ny, blk_nx, out, fp, out_f64, blk_nx);

    // The input positions, from the same per-pixel function.
    RpBlockParams params;
    rp_block_setup(transform.data(), sampling.data(), &params);
    if (params.status != 0) fprintf(stderr, "parameters rejected: status %d\n", params.status);
    RpWindow w = rp_make_window(&params.sampling, aligned.data(), (int)a[0], (int)a[1], a[2],
                                (int)a[3], (int)a[4], (int)a[5], (int)a[6], (int)a[7],
                                (int)a[8]);
    std::vector<double> res(4 * (npix > 0 ? npix : 1));
    for (int r = 0; r < blk_ny; r++)
        for (int c = 0; c < blk_nx; c++) {
            long long i = (long long)r * blk_nx + c;
            double px, py;
            rp_pixel_value(&params, &w, (int)a[9] + r, (int)a[10] + c, &px, &py);
            res[i] = out_f64 ? out_d[i] : (double)out_f[i];
            res[npix + i] = out_f64 ? fp_d[i] : (double)fp_f[i];
            res[2 * npix + i] = px;
            res[3 * npix + i] = py;
        }
    FILE* o = fopen(argv[2], "wb");
    if (!o) {
        perror(argv[2]);
        return 1;
    }
    if (fwrite(res.data(), 8, 4 * npix, o) != (size_t)(4 * npix)) return 4;
    fclose(o);
    return params.status == 0 ? 0 : 5;
}
