// Host build of one variant of the block kernel for the CUDA simulator (src/gpu/sim/,
// src/gpu/sim_variants.rs): sim_launch.cpp includes it for the general kernel (no gate), and
// build.rs writes, for each line of
// kernels/variants.txt, a file that #defines that line's gates (RP_V_*, see common.cuh), the
// launcher's name RP_SIM_ENTRY and the kernel's name RP_SIM_KERNEL, then includes this one.
// Compiled with the flags of sim_launch.cpp (-O2 -ffp-contract=off).
#if !defined(RP_SIM_ENTRY) || !defined(RP_SIM_KERNEL)
#error "define RP_SIM_ENTRY and RP_SIM_KERNEL (build.rs does)"
#endif
// Each build's kernel has a name of its own, so that the builds link into one library.
#define rp_reproject_block RP_SIM_KERNEL
#include "common.cuh"
#include "projections.cuh"
#include "wcs.cuh"
#include "interp.cuh"
#include "reproject.cu"

#ifndef RP_HOST_GRID
#define RP_HOST_GRID
// Runs `thread()` once per thread of a grid_x x grid_y grid of block_x x block_y threads, in
// launch order, with the thread indices set as CUDA would.
template <class Thread>
static void rp_for_each_thread(unsigned grid_x, unsigned grid_y, unsigned block_x,
                               unsigned block_y, Thread thread) {
    blockDim.x = block_x;
    blockDim.y = block_y;
    blockDim.z = 1;
    for (blockIdx.y = 0; blockIdx.y < grid_y; blockIdx.y++)
        for (blockIdx.x = 0; blockIdx.x < grid_x; blockIdx.x++)
            for (threadIdx.y = 0; threadIdx.y < block_y; threadIdx.y++)
                for (threadIdx.x = 0; threadIdx.x < block_x; threadIdx.x++) thread();
}
#endif

// As rp_sim_launch (sim_launch.cpp): every thread of the launch's grid, in launch order.
extern "C" void RP_SIM_ENTRY(unsigned grid_x, unsigned grid_y, unsigned block_x,
                             unsigned block_y, const double* transform, const double* sampling,
                             const void* input, int input_type, int big_endian,
                             long long in_pitch, int win_y0, int win_x0, int win_ny, int win_nx,
                             int in_ny, int in_nx, int out_y0, int out_x0, int blk_ny,
                             int blk_nx, void* out, void* footprint, int out_f64,
                             long long out_pitch) {
    rp_for_each_thread(grid_x, grid_y, block_x, block_y, [&] {
        rp_reproject_block(transform, sampling, input, input_type, big_endian, in_pitch, win_y0,
                           win_x0, win_ny, win_nx, in_ny, in_nx, out_y0, out_x0, blk_ny, blk_nx,
                           out, footprint, out_f64, out_pitch);
    });
}
