// The spline prefilter on the device: scipy's `spline_filter` (mirror boundary) of a plane in
// place, one thread per line, with the operations of `filter_lanes` in src/interp/spline.rs in
// the same order (`--fmad=false`), so the coefficients are the CPU's to the bit. Filter every
// column (axis 0: lines of `ny` elements `pitch` apart), then every row (axis 1).
//
// The pole constants that need `pow` come from the host (the device's `pow` may differ from
// the CPU's by an ulp): for each pole, 4 doubles: z, z^(n-1), 1 - z^(2(n-1)), z*z - 1, for the
// line length n of the axis (`spline_pole_params` in src/interp/spline.rs).
//
// Needs common.cuh before it. Part of the runtime's module (after accumulate.cu): the GPU
// executor (src/engine/gpu_executor.rs) uploads the values the CPU's prefilter starts from (or
// makes them on the device from a device-resident input, `rp_spline_values` in
// spline_values.cu) and launches this kernel twice per plane, columns then rows, so the
// coefficients never cross the bus (issue 17).

// Values a thread loads before it uses them. The recursions are serial along a line and a
// plane has one line per thread (16384 lines fill 4 warps of each of an H100's 132 SMs), so a
// filter that loads one value per step waits a memory latency per element: about 45 ms for a
// 16384² plane on an H100 (docs/measurements/h100-2026-11-26). A chunk keeps RP_SPLINE_CHUNK
// loads in flight per thread, with the same operations in the same order. 12 is the most that
// keeps the kernel within its budget of 64 registers (16 needs 80, 8 needs 48); the best value
// is for a GPU to tell (it is a define: the runtime could build others).
#ifndef RP_SPLINE_CHUNK
#define RP_SPLINE_CHUNK 12
#endif

// `v`, times `gain` when `scale` (the CPU's separate gain pass, applied as the first pole reads
// the value: the same product).
RP_DEVICE double rp_spline_gained(double v, bool scale, double gain) {
    return scale ? v * gain : v;
}

// One pole of the filter on the line: causal initialisation and recursion, then the
// anticausal ones (the order of `filter_lanes` in src/interp/spline.rs). `scale`: the values
// are still to be multiplied by `gain` (the first pole).
RP_DEVICE void rp_spline_pole(double* b, int n, long long step, const double* pole, bool scale,
                              double gain) {
    const int K = RP_SPLINE_CHUNK;
    double z = pole[0], z_n_1 = pole[1], div = pole[2], zz1 = pole[3];
    // causal initialisation, mirror boundary: the sum over the line's inner elements
    double c0 = rp_spline_gained(b[0], scale, gain) +
                z_n_1 * rp_spline_gained(b[(n - 1) * step], scale, gain);
    double z_i = z;
    int i = 1;
    // (two streams of loads: half a chunk of each)
    const int H = K / 2;
    for (; i + H <= n - 1; i += H) {
        double a[H], r[H];
#pragma unroll
        for (int k = 0; k < H; k++) {
            a[k] = b[(i + k) * step];
            r[k] = b[(n - 1 - i - k) * step];
        }
#pragma unroll
        for (int k = 0; k < H; k++) {
            c0 += z_i * (rp_spline_gained(a[k], scale, gain) +
                         z_n_1 * rp_spline_gained(r[k], scale, gain));
            z_i *= z;
        }
    }
    for (; i < n - 1; i++) {
        c0 += z_i * (rp_spline_gained(b[i * step], scale, gain) +
                     z_n_1 * rp_spline_gained(b[(n - 1 - i) * step], scale, gain));
        z_i *= z;
    }
    double prev = c0 / div;
    b[0] = prev;
    // causal recursion
    i = 1;
    for (; i + K <= n; i += K) {
        double v[K];
#pragma unroll
        for (int k = 0; k < K; k++) v[k] = b[(i + k) * step];
#pragma unroll
        for (int k = 0; k < K; k++) {
            prev = rp_spline_gained(v[k], scale, gain) + z * prev;
            v[k] = prev;
        }
#pragma unroll
        for (int k = 0; k < K; k++) b[(i + k) * step] = v[k];
    }
    for (; i < n; i++) {
        prev = rp_spline_gained(b[i * step], scale, gain) + z * prev;
        b[i * step] = prev;
    }
    // anticausal initialisation, mirror boundary
    double next = (z * b[(n - 2) * step] + prev) * z / zz1;
    b[(n - 1) * step] = next;
    // anticausal recursion
    i = n - 2;
    for (; i + 1 >= K; i -= K) {
        double v[K];
#pragma unroll
        for (int k = 0; k < K; k++) v[k] = b[(i - k) * step];
#pragma unroll
        for (int k = 0; k < K; k++) {
            next = z * (next - v[k]);
            v[k] = next;
        }
#pragma unroll
        for (int k = 0; k < K; k++) b[(i - k) * step] = v[k];
    }
    for (; i >= 0; i--) {
        next = z * (next - b[i * step]);
        b[i * step] = next;
    }
}

// Filters one line of `n` elements `step` apart, in place. Lines of fewer than 2 elements are
// left as they are.
RP_DEVICE void rp_spline_filter_line(double* b, int n, long long step, const double* poles,
                                     int npoles, double gain) {
    if (n < 2) return;
    if (npoles < 1) {
        for (int i = 0; i < n; i++) b[i * step] *= gain;
        return;
    }
    for (int p = 0; p < npoles; p++) rp_spline_pole(b, n, step, poles + 4 * p, p == 0, gain);
}

// On the device, and in host builds that provide thread indices (the simulator's, RP_HOST_GRID).
#if defined(__CUDACC_RTC__) || defined(__CUDACC__) || defined(RP_HOST_GRID)
// One thread per line: line k starts at data[k * line_step], its elements `elem_step` apart.
RP_GLOBAL void rp_spline_filter(double* data, long long lines, int n, long long line_step,
                                long long elem_step, const double* poles, int npoles,
                                double gain) {
    long long line = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (line >= lines) return;
    rp_spline_filter_line(data + line * line_step, n, elem_step, poles, npoles, gain);
}
#endif
