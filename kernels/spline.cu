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

// Streaming a line through shared memory. The recursions are serial along a line and a plane
// has one line per thread (16384 lines fill 4 warps of each of an H100's 132 SMs), so the
// filter is bound by how many loads each thread keeps in flight: one per step took about
// 45 ms for a 16384² plane on an H100, 12 in registers about 31 ms
// (docs/measurements/h100-2026-11-26). Here each thread copies its next RP_RING_LEN elements
// into its slots of a shared-memory ring (cp.async: no registers held) while it runs the
// recursion over the previous ones, so RP_RING_LEN loads per stream are in flight meanwhile
// (18.7 ms for a 16384² plane on the H100, the values kernel included).
// The operations and their order are those of the CPU's filter: only where the operands wait
// changes. Host builds copy at once.
#define RP_RING_LEN 32
// Threads of a filter launch (src/gpu/driver.rs FILTER_THREADS): one lane of the ring each.
#define RP_RING_LANES 32

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
// Two streams (the causal initialisation reads a line from both ends) of two stages.
__shared__ double rp_ring[2][2][RP_RING_LEN][RP_RING_LANES];
#define RP_RING_LANE ((int)threadIdx.x)
RP_DEVICE void rp_copy_async(double* to_shared, const double* from) {
    unsigned dst = (unsigned)__cvta_generic_to_shared(to_shared);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(dst), "l"(from) : "memory");
}
RP_DEVICE void rp_copies_commit(void) { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits for this thread's copies but those of the last `pending` (0, 1 or 2) commits.
RP_DEVICE void rp_copies_wait(int pending) {
    if (pending >= 2)
        asm volatile("cp.async.wait_group 2;\n" ::: "memory");
    else if (pending == 1)
        asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    else
        asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}
#else
static thread_local double rp_ring[2][2][RP_RING_LEN][RP_RING_LANES];
#define RP_RING_LANE 0
static inline void rp_copy_async(double* to, const double* from) { *to = *from; }
static inline void rp_copies_commit(void) {}
static inline void rp_copies_wait(int) {}
#endif

// Slot k of stage `stage` of ring stream `stream`, this thread's.
RP_DEVICE double* rp_ring_slot(int stream, int stage, int k) {
    return &rp_ring[stream][stage][k][RP_RING_LANE];
}

// Starts copying the `count` (<= RP_RING_LEN) elements b[(first + dir * k) * step] into stage
// `stage` of ring stream `stream`, as one commit.
RP_DEVICE void rp_ring_fetch(int stream, int stage, const double* b, long long step,
                             long long first, int dir, int count) {
    for (int k = 0; k < count; k++)
        rp_copy_async(rp_ring_slot(stream, stage, k), b + (first + (long long)dir * k) * step);
    rp_copies_commit();
}

// Calls f(i, v) for the `count` elements v = b[(first + dir * i) * step], i = 0, 1, ..., in
// that order, each read before f is called for it (so f may write the element it is given,
// and any before it), streamed through ring stream 0.
template <typename F>
RP_DEVICE void rp_stream(const double* b, long long step, long long first, int dir, int count,
                         F f) {
    const int L = RP_RING_LEN;
    if (count <= 0) return;
    rp_ring_fetch(0, 0, b, step, first, dir, count < L ? count : L);
    for (int start = 0, stage = 0; start < count; start += L, stage ^= 1) {
        int n = count - start < L ? count - start : L;
        int ahead = count - start - L;
        if (ahead > 0) {
            rp_ring_fetch(0, stage ^ 1, b, step, first + (long long)dir * (start + L), dir,
                          ahead < L ? ahead : L);
        }
        rp_copies_wait(ahead > 0);
        for (int k = 0; k < n; k++) f(start + k, *rp_ring_slot(0, stage, k));
    }
}

// As rp_stream for two streams at once: f(i, b[(first_a + dir_a * i) * step],
// b[(first_b + dir_b * i) * step]).
template <typename F>
RP_DEVICE void rp_stream2(const double* b, long long step, long long first_a, int dir_a,
                          long long first_b, int dir_b, int count, F f) {
    const int L = RP_RING_LEN;
    if (count <= 0) return;
    int n0 = count < L ? count : L;
    rp_ring_fetch(0, 0, b, step, first_a, dir_a, n0);
    rp_ring_fetch(1, 0, b, step, first_b, dir_b, n0);
    for (int start = 0, stage = 0; start < count; start += L, stage ^= 1) {
        int n = count - start < L ? count - start : L;
        int ahead = count - start - L;
        if (ahead > 0) {
            int m = ahead < L ? ahead : L;
            long long next = start + L;
            rp_ring_fetch(0, stage ^ 1, b, step, first_a + (long long)dir_a * next, dir_a, m);
            rp_ring_fetch(1, stage ^ 1, b, step, first_b + (long long)dir_b * next, dir_b, m);
        }
        // Both streams' commits of this stage are done once all but the last two are.
        rp_copies_wait(ahead > 0 ? 2 : 0);
        for (int k = 0; k < n; k++)
            f(start + k, *rp_ring_slot(0, stage, k), *rp_ring_slot(1, stage, k));
    }
}

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
    double z = pole[0], z_n_1 = pole[1], div = pole[2], zz1 = pole[3];
    // causal initialisation, mirror boundary: the sum over the line's inner elements, read
    // from both ends at once
    double c0 = rp_spline_gained(b[0], scale, gain) +
                z_n_1 * rp_spline_gained(b[(n - 1) * step], scale, gain);
    double z_i = z;
    rp_stream2(b, step, 1, 1, n - 2, -1, n - 2, [&](int, double a, double r) {
        c0 += z_i * (rp_spline_gained(a, scale, gain) + z_n_1 * rp_spline_gained(r, scale, gain));
        z_i *= z;
    });
    double prev = c0 / div;
    b[0] = prev;
    // causal recursion
    rp_stream(b, step, 1, 1, n - 1, [&](int i, double v) {
        prev = rp_spline_gained(v, scale, gain) + z * prev;
        b[(i + 1) * step] = prev;
    });
    // anticausal initialisation, mirror boundary
    double next = (z * b[(n - 2) * step] + prev) * z / zz1;
    b[(n - 1) * step] = next;
    // anticausal recursion
    rp_stream(b, step, n - 2, -1, n - 1, [&](int i, double v) {
        next = z * (next - v);
        b[(n - 2 - i) * step] = next;
    });
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
