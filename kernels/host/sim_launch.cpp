// Host build of the block kernel for the CUDA simulator (src/gpu/sim/, REPROJECT_RS_CUDA_SIM=1):
// `rp_sim_launch` runs `rp_reproject_block` once per thread of the launch's grid, in launch
// order, exactly as tests/gpu_host_pipeline.rs's harness does; `rp_sim_accumulate` runs the
// accumulate kernel of mosaics likewise, and `rp_sim_spline_values` / `rp_sim_spline_filter`
// the spline prefilter's kernels. build.rs compiles this file with
// the flags of that harness (-O2 -ffp-contract=off) into the library, and with its sanitizers
// too under REPROJECT_RS_SANITIZE_SIM=1 (RP_SIM_SANITIZED).
// The general kernel: sim_variant.cpp with no gate, under the kernel's own name.
#define RP_SIM_ENTRY rp_sim_launch
#define RP_SIM_KERNEL rp_reproject_block
#include "sim_variant.cpp"

#include "accumulate.cu"

// With RP_HOST_GRID (sim_variant.cpp) spline.cu's host build has its kernel entry point.
#include "spline.cu"
#include "spline_values.cu"

#ifdef RP_SIM_SANITIZED
#include "asan_options.h"
#endif

// `rp_accumulate` over the launch's grid, thread by thread.
extern "C" void rp_sim_accumulate(unsigned grid_x, unsigned grid_y, unsigned block_x,
                                  unsigned block_y, const double* values, const double* weights,
                                  int op, int correction, double c0, double c1, double c2,
                                  int planes, int part_ny, int part_nx, int part_y0,
                                  int part_x0, int blk_r0, int blk_c0, int blk_ny, int blk_nx,
                                  double* data, double* footprint) {
    rp_for_each_thread(grid_x, grid_y, block_x, block_y, [&] {
        rp_accumulate(values, weights, op, correction, c0, c1, c2, planes, part_ny, part_nx,
                      part_y0, part_x0, blk_r0, blk_c0, blk_ny, blk_nx, data, footprint);
    });
}

// `rp_spline_values` over the launch's (one-dimensional) grid, thread by thread.
extern "C" void rp_sim_spline_values(unsigned grid_x, unsigned block_x, const void* input,
                                     int input_type, int big_endian, long long pitch, int ny,
                                     int nx, int values_f32, double* out) {
    rp_for_each_thread(grid_x, 1, block_x, 1, [&] {
        rp_spline_values(input, input_type, big_endian, pitch, ny, nx, values_f32, out);
    });
}

// `rp_spline_filter` over the launch's one-dimensional grid, thread by thread.
extern "C" void rp_sim_spline_filter(unsigned grid_x, unsigned block_x, double* data,
                                     long long lines, int n, long long line_step,
                                     long long elem_step, const double* poles, int npoles,
                                     double gain) {
    rp_for_each_thread(grid_x, 1, block_x, 1, [&] {
        rp_spline_filter(data, lines, n, line_step, elem_step, poles, npoles, gain);
    });
}

// `rp_spline_filter_from` over the launch's one-dimensional grid, thread by thread.
extern "C" void rp_sim_spline_filter_from(unsigned grid_x, unsigned block_x, double* data,
                                          long long lines, int n, long long line_step,
                                          long long elem_step, const double* poles, int npoles,
                                          double gain, const void* source,
                                          long long source_line_step,
                                          long long source_elem_step, int source_type,
                                          int big_endian, int values_f32) {
    rp_for_each_thread(grid_x, 1, block_x, 1, [&] {
        rp_spline_filter_from(data, lines, n, line_step, elem_step, poles, npoles, gain, source,
                              source_line_step, source_elem_step, source_type, big_endian,
                              values_f32);
    });
}
