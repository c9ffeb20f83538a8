// Host harness for kernels/projections.cuh, driven by tests/gpu_host_projections.rs.
//
// Reads native-endian f64 records from stdin until end of input:
//   35 parameters (RP_PRJ_PARAMS), the point count N, then N points (a, b, c).
// For each record it writes: the rp_prj_setup status, phi0, theta0 (rp_prj_fiducial), and, only
// when the setup succeeded, 13 values per point:
//   rp_prj_x2s(a, b)         -> status, phi, theta
//   rp_prj_s2x(a, b)         -> status, x, y        (a, b read as phi, theta)
//   rp_prj_x2v(a, b)         -> status, v0, v1, v2
//   rp_prj_v2x({a, b, c})    -> status, x, y
// Outputs of an invalid point are NaN. Exit status 0, or 2 for a truncated record.
#include "../common.cuh"
#include "../projections.cuh"

#include <stdio.h>

static int read_doubles(double* out, size_t n) {
    return fread(out, sizeof(double), n, stdin) == n;
}

static void put(double v) { fwrite(&v, sizeof(double), 1, stdout); }

#include "asan_options.h"

int main() {
    double params[RP_PRJ_PARAMS];
    const double nan = NAN;
    while (read_doubles(params, 1)) {
        if (!read_doubles(params + 1, RP_PRJ_PARAMS - 1)) return 2;
        double count;
        if (!read_doubles(&count, 1) || !(count >= 0.0)) return 2;
        RpPrj prj;
        int status = rp_prj_setup(params, &prj);
        double phi0 = nan, theta0 = nan;
        if (status == 0) rp_prj_fiducial(&prj, &phi0, &theta0);
        put((double)status);
        put(phi0);
        put(theta0);
        for (long long i = 0; i < (long long)count; i++) {
            double pt[3];
            if (!read_doubles(pt, 3)) return 2;
            if (status != 0) continue;
            double a = nan, b = nan;
            int s = rp_prj_x2s(&prj, pt[0], pt[1], &a, &b);
            put((double)s);
            put(s ? nan : a);
            put(s ? nan : b);
            s = rp_prj_s2x(&prj, pt[0], pt[1], &a, &b);
            put((double)s);
            put(s ? nan : a);
            put(s ? nan : b);
            double v[3] = {nan, nan, nan};
            s = rp_prj_x2v(&prj, pt[0], pt[1], v);
            put((double)s);
            put(s ? nan : v[0]);
            put(s ? nan : v[1]);
            put(s ? nan : v[2]);
            s = rp_prj_v2x(&prj, pt, &a, &b);
            put((double)s);
            put(s ? nan : a);
            put(s ? nan : b);
        }
    }
    return 0;
}
