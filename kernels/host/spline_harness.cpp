// Host build of the device spline prefilter (kernels/spline.cu) for tests/gpu_host_spline.rs:
// reads a plane and the pole constants of both axes, filters every column, then every row, as
// the device launches would, and writes the plane back. Built with -O2 -ffp-contract=off.
//
//   spline_harness IN OUT
//   IN:  ny, nx, npoles (3 little-endian int64), gain, the constants of axis 0 (4 * npoles
//        doubles), of axis 1 (4 * npoles), then ny * nx doubles (row-major)
//   OUT: ny * nx doubles
#include <stdio.h>
#include <stdlib.h>

#include "common.cuh"
#include "spline.cu"

int main(int argc, char** argv) {
    if (argc != 3) return 2;
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
    for (long long c = 0; c < nx; c++)
        rp_spline_filter_line(data + c, (int)ny, nx, poles, (int)npoles, gain);
    for (long long r = 0; r < ny; r++)
        rp_spline_filter_line(data + r * nx, (int)nx, 1, poles + 4 * npoles, (int)npoles, gain);
    FILE* out = fopen(argv[2], "wb");
    if (!out || fwrite(data, sizeof(double), ny * nx, out) != (size_t)(ny * nx)) return 7;
    fclose(out);
    return 0;
}
