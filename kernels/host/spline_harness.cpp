// Host build of the device spline prefilter (kernels/spline.cu) for tests/gpu_host_spline.rs:
// reads a plane and the pole constants of both axes, filters every column, then every row, as
// the device launches would, and writes the plane back. Built with -O2 -ffp-contract=off
// -pthread.
//
//   spline_harness IN OUT [lines|warps|rows-by-warps]
//   IN:  ny, nx, npoles (3 little-endian int64), gain, the constants of axis 0 (4 * npoles
//        doubles), of axis 1 (4 * npoles), then ny * nx doubles (row-major)
//   OUT: ny * nx doubles
//   lines (the default): each line on its own, one after the other.
//   warps: the rows as the device filters them, each group of RP_RING_LANES rows by as many
//          host threads (one per lane) that share the ring and meet at every __syncwarp.
//   rows-by-warps: as warps, without the columns (each row then is a line of its own: the
//          lanes of a warp may stop the initial sum at different chunks).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#define RP_HOST_WARP
#include "common.cuh"
#include "spline.cu"

double rp_ring[2][2][RP_RING_LEN][RP_RING_LANES];
thread_local int rp_host_lane = 0;

// The warp's barrier: every lane waits until all RP_RING_LANES have arrived (and votes).
static std::mutex warp_mutex;
static std::condition_variable warp_arrived;
static int warp_waiting = 0;
static unsigned long long warp_generation = 0;

static int warp_votes = 0, warp_any = 0;

// __any_sync: every lane waits until all have voted, and all get whether any voted true.
int rp_host_warp_any(int v) {
    std::unique_lock<std::mutex> lock(warp_mutex);
    unsigned long long generation = warp_generation;
    warp_votes |= v != 0;
    if (++warp_waiting == RP_RING_LANES) {
        warp_any = warp_votes;
        warp_votes = 0;
        warp_waiting = 0;
        warp_generation++;
        warp_arrived.notify_all();
        return warp_any;
    }
    warp_arrived.wait(lock, [&] { return warp_generation != generation; });
    // No lane can finish the next round before this one has arrived at it.
    return warp_any;
}

void rp_host_warp_sync(void) { rp_host_warp_any(0); }

int main(int argc, char** argv) {
    if (argc != 3 && argc != 4) return 2;
    bool rows_only = argc == 4 && strcmp(argv[3], "rows-by-warps") == 0;
    bool warps = rows_only || (argc == 4 && strcmp(argv[3], "warps") == 0);
    if (argc == 4 && !warps && strcmp(argv[3], "lines") != 0) return 2;
    FILE* in = fopen(argv[1], "rb");
    if (!in) return 3;
    long long head[3];
    double gain;
    if (fread(head, sizeof head, 1, in) != 1 || fread(&gain, sizeof gain, 1, in) != 1) return 4;
    long long ny = head[0], nx = head[1], npoles = head[2];
    double* poles = (double*)malloc(sizeof(double) * 8 * (npoles + 1));
    double* data = (double*)malloc(sizeof(double) * (ny * nx + 1));
    if (fread(poles, sizeof(double), 8 * npoles, in) != (size_t)(8 * npoles)) return 5;
    if (fread(data, sizeof(double), ny * nx, in) != (size_t)(ny * nx)) return 6;
    fclose(in);
    for (long long c = 0; c < nx && !rows_only; c++)
        rp_spline_filter_thread(data, nx, (int)ny, 1, nx, poles, (int)npoles, gain, c, 1);
    const double* row_poles = poles + 4 * npoles;
    if (warps) {
        // Each warp in turn, its lanes at once (the last warp's spare lanes have no row).
        for (long long first = 0; first < ny; first += RP_RING_LANES) {
            std::vector<std::thread> lanes;
            for (int lane = 0; lane < RP_RING_LANES; lane++) {
                lanes.emplace_back([=] {
                    rp_host_lane = lane;
                    rp_spline_filter_thread(data, ny, (int)nx, nx, 1, row_poles, (int)npoles,
                                            gain, first + lane, RP_RING_LANES);
                });
            }
            for (std::thread& t : lanes) t.join();
        }
    } else {
        for (long long r = 0; r < ny; r++)
            rp_spline_filter_thread(data, ny, (int)nx, nx, 1, row_poles, (int)npoles, gain, r,
                                    1);
    }
    FILE* out = fopen(argv[2], "wb");
    if (!out || fwrite(data, sizeof(double), ny * nx, out) != (size_t)(ny * nx)) return 7;
    fclose(out);
    return 0;
}
