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

// Filters one line of `n` elements `step` apart, in place. Lines of fewer than 2 elements are
// left as they are.
RP_DEVICE void rp_spline_filter_line(double* b, int n, long long step, const double* poles,
                                     int npoles, double gain) {
    if (n < 2) return;
    for (int i = 0; i < n; i++) b[i * step] *= gain;
    for (int p = 0; p < npoles; p++) {
        double z = poles[4 * p], z_n_1 = poles[4 * p + 1], div = poles[4 * p + 2];
        double zz1 = poles[4 * p + 3];
        // causal initialisation, mirror boundary
        double c0 = b[0] + z_n_1 * b[(n - 1) * step];
        double z_i = z;
        for (int i = 1; i < n - 1; i++) {
            c0 += z_i * (b[i * step] + z_n_1 * b[(n - 1 - i) * step]);
            z_i *= z;
        }
        b[0] = c0 / div;
        // causal recursion
        for (int i = 1; i < n; i++) b[i * step] += z * b[(i - 1) * step];
        // anticausal initialisation, mirror boundary
        b[(n - 1) * step] = (z * b[(n - 2) * step] + b[(n - 1) * step]) * z / zz1;
        // anticausal recursion
        for (int i = n - 2; i >= 0; i--) b[i * step] = z * (b[(i + 1) * step] - b[i * step]);
    }
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
