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
//   from-TYPE[-be][-f32] (TYPE f32, f64, i32 or i64): as warps, the columns reading their
//          values from samples of that type (the plane's values converted, big-endian with
//          -be, rows 3 samples longer than the plane's), rounded to float32 with -f32, as
//          from a device input (RpSource).
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

// The plane's values as samples of `type` (interp.cuh's codes), `pitch` per row, big-endian
// where `big_endian` is set.
static std::vector<unsigned char> samples(const double* data, long long ny, long long nx,
                                          long long pitch, int type, bool big_endian) {
    int bytes = rp_source_bytes(type);
    std::vector<unsigned char> out(ny * pitch * bytes + 8);
    for (long long r = 0; r < ny; r++)
        for (long long c = 0; c < nx; c++) {
            double v = data[r * nx + c];
            unsigned char raw[8];
            float f = (float)v;
            int i = (int)v;
            long long l = (long long)v;
            memcpy(raw, type == 0 ? (void*)&f : type == 4 ? (void*)&i : type == 5 ? (void*)&l
                                                                                 : (void*)&v,
                   bytes);
            unsigned char* at = &out[(r * pitch + c) * bytes];
            for (int b = 0; b < bytes; b++) at[b] = raw[big_endian ? bytes - 1 - b : b];
        }
    return out;
}

#include "asan_options.h"

int main(int argc, char** argv) {
    if (argc != 3 && argc != 4) return 2;
    bool rows_only = argc == 4 && strcmp(argv[3], "rows-by-warps") == 0;
    RpSource source = RpSource();
    std::vector<unsigned char> sample_bytes;
    const char* types[] = {"f32", "f64", "", "", "i32", "i64"};
    int source_type = -1;
    if (argc == 4 && strncmp(argv[3], "from-", 5) == 0)
        for (int t = 0; t < 6; t++)
            if (*types[t] && strncmp(argv[3] + 5, types[t], 3) == 0) source_type = t;
    bool warps = rows_only || source_type >= 0 || (argc == 4 && strcmp(argv[3], "warps") == 0);
    if (argc == 4 && !warps && strcmp(argv[3], "lines") != 0) return 2;
    FILE* in = fopen(argv[1], "rb");
    if (!in) return 3;
    long long head[3];
    double gain;
    if (fread(head, sizeof head, 1, in) != 1 || fread(&gain, sizeof gain, 1, in) != 1) return 4;
    long long ny = head[0], nx = head[1], npoles = head[2];
    // Exactly as long as the kernel may read (AddressSanitizer, in the tests' builds, stops
    // the harness at a byte past either).
    std::vector<double> pole_params(8 * npoles), plane(ny * nx);
    double* poles = pole_params.data();
    double* data = plane.data();
    if (fread(poles, sizeof(double), 8 * npoles, in) != (size_t)(8 * npoles)) return 5;
    if (fread(data, sizeof(double), ny * nx, in) != (size_t)(ny * nx)) return 6;
    fclose(in);
    if (source_type >= 0) {
        long long pitch = nx + 3;
        const char* options = argv[3] + 8;  // after "from-TYPE"
        bool big_endian = strstr(options, "-be") != 0;
        sample_bytes = samples(data, ny, nx, pitch, source_type, big_endian);
        source.data = sample_bytes.data();
        source.line_step = 1;
        source.elem_step = pitch;
        source.type = source_type;
        source.big_endian = big_endian;
        source.values_f32 = strstr(options, "-f32") != 0;
        for (long long i = 0; i < ny * nx; i++) data[i] = -7.0;  // written by the columns
    }
    for (long long c = 0; c < nx && !rows_only; c++)
        rp_spline_filter_thread(data, nx, (int)ny, 1, nx, poles, (int)npoles, gain, c, 1,
                                source);
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
