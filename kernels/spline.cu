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
// executor (src/engine/gpu_executor/spline.rs) filters each plane's columns, then its rows,
// so the coefficients never cross the bus (issue 17). The values the CPU's prefilter starts
// from are uploaded as they are, or read from samples on the device (a device-resident input,
// or the stored samples of a host input): the column pass reads 4- and 8-byte samples itself
// (`rp_spline_filter_from`), and `rp_spline_values` (spline_values.cu) first makes the values
// of 1- and 2-byte ones.

// Streaming a line through shared memory. The recursions are serial along a line and a plane
// has one line per thread (16384 lines fill 4 warps of each of an H100's 132 SMs), so the
// filter is bound by how many loads each thread keeps in flight: one per step took about
// 45 ms for a 16384² plane on an H100, 12 in registers about 31 ms
// (docs/measurements/h100-2026-11-26). Here the next RP_RING_LEN elements of each line are
// copied into a shared-memory ring (cp.async: no registers held) while the recursion runs over
// the previous ones, so RP_RING_LEN loads per stream are in flight meanwhile.
//
// Columns (lines side by side in memory) stream one line per thread: the warp's loads and
// stores of one step are neighbours, coalesced (4.7 ms for a 16384² plane, 82% of the H100's
// DRAM bandwidth). Rows (each line contiguous) would make every thread's load a sector of its
// own (12.7 ms, bound by L2 transactions: docs/measurements/h100-2026-11-26-session12), so the
// warp streams its 32 rows together: lane j copies element j of the chunk of every row into
// the ring, and the results go back the same way from the ring, so each load and store of
// the warp covers 32 neighbouring elements of one row.
//
// The operations and their order are those of the CPU's filter: only where the operands wait
// changes, and the anticausal pass computes the causal values again from a checkpoint per
// chunk instead of reading them back (rp_spline_pole). Host builds copy at once; RP_HOST_WARP
// builds run a warp as host threads (kernels/host/spline_harness.cpp).
#define RP_RING_LEN 32
// Threads of a filter launch (src/gpu/driver/spline_launch.rs FILTER_THREADS): one warp, a
// lane of the ring each (RP_RING_LEN must not exceed it: slots are swizzled by lane ^ k).
#define RP_RING_LANES 32

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
// Two streams (the causal initialisation reads a line from both ends) of two stages.
__shared__ double rp_ring[2][2][RP_RING_LEN][RP_RING_LANES];
#define RP_RING_LANE ((int)threadIdx.x)
#define RP_WARP_ROWS 1
RP_DEVICE void rp_copy_async(double* to_shared, const double* from) {
    unsigned dst = (unsigned)__cvta_generic_to_shared(to_shared);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(dst), "l"(from) : "memory");
}
// A sample of `bytes` (4 or 8) into the start of a slot.
RP_DEVICE void rp_copy_sample_async(double* to_shared, const unsigned char* from, int bytes) {
    unsigned dst = (unsigned)__cvta_generic_to_shared(to_shared);
    if (bytes == 4)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(from) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(dst), "l"(from) : "memory");
}
// The bits of the sample of `bytes` at the start of `at` (a slot, or the source).
RP_DEVICE unsigned long long rp_sample_bits(const void* at, int bytes) {
    return bytes == 4 ? *(const unsigned int*)at : *(const unsigned long long*)at;
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
RP_DEVICE void rp_warp_sync(void) { __syncwarp(); }
// Whether any lane of the warp votes `v` (every lane votes).
RP_DEVICE int rp_warp_any(int v) { return __any_sync(0xffffffffu, v); }
#define RP_SPLINE_NAN __longlong_as_double(0x7ff8000000000000LL)
// At most 96 registers (20 blocks of a warp per SM). The ring's shared memory limits the
// blocks per SM to 6, so registers would matter only beyond 341. With the row path and the
// early stop of the initial sum NVRTC 12.9 takes 80 (sm_80) and 96 (sm_90) without bounds;
// with these, and the anticausal pass's checkpoints, 92 and 96 (94 and 94 without them); a
// cap of 64 spilled 4 B on sm_90 (tests/gpu_kernels_compile.rs holds it).
#define RP_FILTER_BOUNDS __launch_bounds__(RP_RING_LANES, 20)
#elif defined(RP_HOST_WARP)
// A warp run as RP_RING_LANES host threads: one ring for all, a barrier for __syncwarp.
extern double rp_ring[2][2][RP_RING_LEN][RP_RING_LANES];
extern thread_local int rp_host_lane;
void rp_host_warp_sync(void);
int rp_host_warp_any(int v);
#define RP_RING_LANE rp_host_lane
#define RP_WARP_ROWS 1
static inline void rp_copy_async(double* to, const double* from) { *to = *from; }
static inline void rp_copies_commit(void) {}
static inline void rp_copies_wait(int) {}
static inline void rp_warp_sync(void) { rp_host_warp_sync(); }
static inline int rp_warp_any(int v) { return rp_host_warp_any(v); }
#define RP_SPLINE_NAN NAN
#define RP_FILTER_BOUNDS
#else
static thread_local double rp_ring[2][2][RP_RING_LEN][RP_RING_LANES];
#define RP_RING_LANE 0
#define RP_WARP_ROWS 0
static inline void rp_copy_async(double* to, const double* from) { *to = *from; }
static inline void rp_copies_commit(void) {}
static inline void rp_copies_wait(int) {}
static inline void rp_warp_sync(void) {}
static inline int rp_warp_any(int v) { return v; }
#define RP_FILTER_BOUNDS
#define RP_SPLINE_NAN NAN
#endif
#if !(defined(__CUDACC_RTC__) || defined(__CUDACC__))
// Host builds: a sample copied at once, its bits read without aliasing.
static inline void rp_copy_sample_async(double* to, const unsigned char* from, int bytes) {
    memcpy(to, from, bytes);
}
static inline unsigned long long rp_sample_bits(const void* at, int bytes) {
    unsigned long long u8 = 0;
    unsigned int u4 = 0;
    if (bytes == 4) return memcpy(&u4, at, 4), u4;
    return memcpy(&u8, at, 8), u8;
}
#endif

// The line a thread filters: `b`, its elements `step` apart. `rows` set: the warp streams its
// rows together (elements contiguous, `step` 1), lane r's line `rows + r * row_step`, the
// first `row_count` lanes' lines exist; a lane without one (`active` false) moves the others'
// elements and stores nothing of its own.
//
// `src` set (kSource passes): the line's values are read from these samples, and the plane is
// only written: element i at src + i * src_step bytes, each of src_bytes (4 or 8), of input
// type src_type (see RpSource).
struct RpLine {
    double* b;
    long long step;
    double* rows;
    long long row_step;
    int row_count;
    bool active;
    const unsigned char* src;
    long long src_step;
    int src_type, src_big_endian, src_f32, src_bytes;
};

// The samples a filter launch reads its values from, in place of its plane's, which it then
// only writes (the first pole's passes of the columns, from a device input): line k's element
// i at data + k * line_step + i * elem_step (in samples) of input type `type` (interp.cuh's
// codes; the 4- and 8-byte ones: 0 f32, 1 f64, 4 i32, 5 i64), read as the CPU reads a device
// input (`rp_spline_values`: no decoding), rounded to float32 where `values_f32` is set.
// `data` 0: none.
struct RpSource {
    const void* data;
    long long line_step, elem_step;
    int type, big_endian, values_f32;
};

// Bytes of a sample of input type `type` the filter reads (0: one it cannot read).
RP_DEVICE int rp_source_bytes(int type) {
    return type == 0 || type == 4 ? 4 : type == 1 || type == 5 ? 8 : 0;
}

// The value of a sample's bits `u` (the low 4 bytes for 4-byte types), as rp_load_at reads a
// device input (no BLANK, no scaling), rounded to float32 where `f32` is set.
RP_DEVICE double rp_sample_value(unsigned long long u, int type, int big_endian, int f32) {
    double v = type == 0   ? rp_float32_value((unsigned int)u, big_endian)
               : type == 1 ? rp_float64_value(u, big_endian)
               : type == 4 ? (double)rp_int32_value((unsigned int)u, big_endian)
                           : (double)rp_int64_value(u, big_endian);
    if (f32) v = (double)(float)v;
    return v;
}

// The value in a ring slot: the plane's, or (kSource) the sample copied there.
template <bool kSource>
RP_DEVICE double rp_slot_value(const RpLine& l, const double* slot) {
    if (!kSource) return *slot;
    return rp_sample_value(rp_sample_bits(slot, l.src_bytes), l.src_type, l.src_big_endian,
                           l.src_f32);
}

// The value of element i of the line: the plane's, or (kSource) the sample's.
template <bool kSource>
RP_DEVICE double rp_line_value(const RpLine& l, long long i) {
    if (!kSource) return l.b[i * l.step];
    return rp_sample_value(rp_sample_bits(l.src + i * l.src_step, l.src_bytes), l.src_type,
                           l.src_big_endian, l.src_f32);
}

// Slot k of stage `stage` of ring stream `stream`, of lane `lane`'s line. Swizzled, so that
// the slots of one k across the lanes and those of one lane across k lie in distinct banks.
RP_DEVICE double* rp_ring_slot(int stream, int stage, int k, int lane) {
    return &rp_ring[stream][stage][k][lane ^ k];
}

// Starts copying the `count` (<= RP_RING_LEN) elements first + dir * k of the line (of every
// row of the warp, `kRows`) into stage `stage` of ring stream `stream` (committed by the
// caller).
template <bool kRows, bool kSource>
RP_DEVICE void rp_ring_copy(const RpLine& l, int stream, int stage, long long first, int dir,
                            int count) {
    if (kRows) {
        int j = RP_RING_LANE;
        if (j < count) {
            const double* e = l.rows + first + (long long)dir * j;
            for (int r = 0; r < l.row_count; r++)
                rp_copy_async(rp_ring_slot(stream, stage, j, r), e + r * l.row_step);
        }
    } else if (kSource) {
        for (int k = 0; k < count; k++)
            rp_copy_sample_async(rp_ring_slot(stream, stage, k, RP_RING_LANE),
                                 l.src + (first + (long long)dir * k) * l.src_step, l.src_bytes);
    } else {
        for (int k = 0; k < count; k++)
            rp_copy_async(rp_ring_slot(stream, stage, k, RP_RING_LANE),
                          l.b + (first + (long long)dir * k) * l.step);
    }
}

// rp_ring_copy as one commit.
template <bool kRows, bool kSource>
RP_DEVICE void rp_ring_fetch(const RpLine& l, int stream, int stage, long long first, int dir,
                             int count) {
    rp_ring_copy<kRows, kSource>(l, stream, stage, first, dir, count);
    rp_copies_commit();
}

// Waits for the copies but those of the last `pending` commits (rows: every lane's, so the
// warp's lines are all there).
template <bool kRows>
RP_DEVICE void rp_ring_ready(int pending) {
    rp_copies_wait(pending);
    if (kRows) rp_warp_sync();
}

// Rows: stores the `count` results the warp left in stage `stage` of ring stream 0 at the
// elements first + dir * k of its rows, each lane its element of every row.
RP_DEVICE void rp_ring_store(const RpLine& l, int stage, long long first, int dir, int count) {
    rp_warp_sync();
    int j = RP_RING_LANE;
    if (j < count) {
        double* e = l.rows + first + (long long)dir * j;
        for (int r = 0; r < l.row_count; r++) e[r * l.row_step] = *rp_ring_slot(0, stage, j, r);
    }
}

// The causal pass's chunks: chunk j holds the elements 1 + j L .. min((j + 1) L, n - 1) of a
// line of n, L = RP_RING_LEN (the elements after the first, whose value the initialisation
// gives).
RP_DEVICE int rp_chunks(int n) { return (n - 2) / RP_RING_LEN + 1; }
RP_DEVICE int rp_chunk_len(int j, int n) {
    int left = n - 1 - j * RP_RING_LEN;
    return left < RP_RING_LEN ? left : RP_RING_LEN;
}

// Calls v = f(value of element i) for the elements i = 1 .. n - 1 of the line, in that order
// (the plane's values, or kSource the samples'), streamed through ring stream 0 chunk by chunk
// (`kRows`: the warp's rows together), and stores only the last v of each whole chunk (element
// (j + 1) L) in the plane: the checkpoints the anticausal pass (rp_spline_anticausal) starts
// each chunk from.
template <bool kRows, bool kSource, typename F>
RP_DEVICE void rp_stream_checkpoints(const RpLine& l, int n, F f) {
    const int L = RP_RING_LEN;
    int chunks = rp_chunks(n);
    rp_ring_fetch<kRows, kSource>(l, 0, 0, 1, 1, rp_chunk_len(0, n));
    for (int j = 0, stage = 0; j < chunks; j++, stage ^= 1) {
        int m = rp_chunk_len(j, n);
        bool ahead = j + 1 < chunks;
        if (ahead) {
            if (kRows) rp_warp_sync();  // the stage refilled is read by every lane
            rp_ring_fetch<kRows, kSource>(l, 0, stage ^ 1, 1 + (long long)(j + 1) * L, 1,
                                 rp_chunk_len(j + 1, n));
        }
        rp_ring_ready<kRows>(ahead);
        double v = 0.0;
        for (int k = 0; k < m; k++)
            v = f(rp_slot_value<kSource>(l, rp_ring_slot(0, stage, k, RP_RING_LANE)));
        if (m == L && l.active) l.b[(long long)(j + 1) * L * l.step] = v;
    }
    if (kRows) rp_warp_sync();  // the checkpoints are the warp's before anything reads them
}

// Calls f(i, b[(first_a + dir_a * i) * step], b[(first_b + dir_b * i) * step]) for the `count`
// pairs, i = 0, 1, ..., in that order, streamed through both ring streams, until f has said
// (returned false) that it needs no more: the stream then stops at the end of a chunk (rows:
// once every lane of the warp has said so), and f is called for the rest of that chunk only.
template <bool kRows, bool kSource, typename F>
RP_DEVICE void rp_stream2(const RpLine& l, long long first_a, int dir_a, long long first_b,
                          int dir_b, int count, F f) {
    const int L = RP_RING_LEN;
    if (count <= 0) return;
    int n0 = count < L ? count : L;
    rp_ring_fetch<kRows, kSource>(l, 0, 0, first_a, dir_a, n0);
    rp_ring_fetch<kRows, kSource>(l, 1, 0, first_b, dir_b, n0);
    for (int start = 0, stage = 0; start < count; start += L, stage ^= 1) {
        int n = count - start < L ? count - start : L;
        int ahead = count - start - L;
        if (ahead > 0) {
            int m = ahead < L ? ahead : L;
            long long next = start + L;
            if (kRows) rp_warp_sync();
            long long a = first_a + (long long)dir_a * next, b = first_b + (long long)dir_b * next;
            rp_ring_fetch<kRows, kSource>(l, 0, stage ^ 1, a, dir_a, m);
            rp_ring_fetch<kRows, kSource>(l, 1, stage ^ 1, b, dir_b, m);
        }
        // Both streams' commits of this stage are done once all but the last two are.
        rp_ring_ready<kRows>(ahead > 0 ? 2 : 0);
        bool more = true;
        for (int k = 0; k < n; k++)
            more = f(start + k, rp_slot_value<kSource>(l, rp_ring_slot(0, stage, k, RP_RING_LANE)),
                     rp_slot_value<kSource>(l, rp_ring_slot(1, stage, k, RP_RING_LANE)));
        // (A lane without a row wants nothing: its slots were never filled.)
        if (!(kRows ? rp_warp_any(more && l.active) : more)) {
            rp_copies_wait(0);  // the next stage's copies land before the ring is used again
            break;
        }
    }
    if (kRows) rp_warp_sync();  // every lane is done with the ring
}

// `v`, times `gain` when `scale` (the CPU's separate gain pass, applied as the first pole reads
// the value: the same product).
RP_DEVICE double rp_spline_gained(double v, bool scale, double gain) {
    return scale ? v * gain : v;
}

// Starts copying chunk j of the line (of every row of the warp, `kRows`) into stage `stage` of
// ring stream 0 and, but for the first chunk, the checkpoint before it (element j L, this
// lane's line) into ring stream 1, as one commit.
template <bool kRows, bool kSource>
RP_DEVICE void rp_chunk_fetch(const RpLine& l, int stage, int j, int n) {
    long long first = 1 + (long long)j * RP_RING_LEN;
    rp_ring_copy<kRows, kSource>(l, 0, stage, first, 1, rp_chunk_len(j, n));
    if (j > 0) rp_copy_async(rp_ring_slot(1, stage, 0, RP_RING_LANE), l.b + (first - 1) * l.step);
    rp_copies_commit();
}

// The anticausal pass of a pole, after rp_stream_checkpoints: the chunks last first, each
// fetched with the checkpoint before it (`c0`, the causal value of element 0, for the first).
// The chunk's causal values are computed again from that checkpoint with the operations of the
// causal pass, so with the same bits (a whole chunk's last one is its stored checkpoint). Then
// the anticausal recursion runs down the chunk, and the chunk is stored. `nan`: the anticausal
// initialisation is NaN (see rp_spline_pole).
template <bool kRows, bool kSource>
RP_DEVICE void rp_spline_anticausal(const RpLine& l, int n, double z, double zz1, bool scale,
                                    double gain, double c0, bool nan) {
    const int L = RP_RING_LEN;
    const int lane = RP_RING_LANE;
    int chunks = rp_chunks(n);
    double next = 0.0;
    rp_chunk_fetch<kRows, kSource>(l, 0, chunks - 1, n);
    for (int j = chunks - 1, stage = 0; j >= 0; j--, stage ^= 1) {
        int m = rp_chunk_len(j, n);
        if (j > 0) {
            if (kRows) rp_warp_sync();  // the stage refilled is read by every lane
            rp_chunk_fetch<kRows, kSource>(l, stage ^ 1, j - 1, n);
        }
        rp_ring_ready<kRows>(j > 0);
        // the chunk's causal values
        double before = j > 0 ? *rp_ring_slot(1, stage, 0, lane) : c0;
        double prev = before;
        for (int k = 0; k < m && (kSource || k < L - 1); k++) {
            double* slot = rp_ring_slot(0, stage, k, lane);
            prev = rp_spline_gained(rp_slot_value<kSource>(l, slot), scale, gain) + z * prev;
            *slot = prev;
        }
        // the anticausal recursion, from its initialisation (mirror boundary) at the line's end
        int k = m - 1;
        if (j == chunks - 1) {
            double* last = rp_ring_slot(0, stage, m - 1, lane);
            double before_last = m >= 2 ? *rp_ring_slot(0, stage, m - 2, lane) : before;
            next = nan ? RP_SPLINE_NAN : (z * before_last + *last) * z / zz1;
            *last = next;
            k = m - 2;
        }
        for (; k >= 0; k--) {
            double* slot = rp_ring_slot(0, stage, k, lane);
            next = z * (next - *slot);
            *slot = next;
        }
        long long first = 1 + (long long)j * L;
        if (kRows)
            rp_ring_store(l, stage, first, 1, m);
        else
            for (int i = 0; i < m; i++)
                l.b[(first + i) * l.step] = *rp_ring_slot(0, stage, i, lane);
    }
    if (l.active) l.b[0] = z * (next - c0);
    if (kRows) rp_warp_sync();  // the stores are the warp's before anything reads them
}

// One pole of the filter on the line: causal initialisation and recursion, then the
// anticausal ones (the order of `filter_lanes` in src/interp/spline.rs). `scale`: the values
// are still to be multiplied by `gain` (the first pole). `kRows`: the warp streams its rows.
//
// The causal pass stores only a checkpoint per chunk of RP_RING_LEN elements, and the
// anticausal pass computes each chunk's causal values again from it: the line is read twice
// and written once, where storing every causal value would read it twice and write it twice.
template <bool kRows, bool kSource>
RP_DEVICE void rp_spline_pole(const RpLine& l, int n, const double* pole, bool scale,
                              double gain) {
    double z = pole[0], z_n_1 = pole[1], div = pole[2], zz1 = pole[3];
    // causal initialisation, mirror boundary: the sum over the line's inner elements, read
    // from both ends at once
    double c0 = rp_spline_gained(rp_line_value<kSource>(l, 0), scale, gain) +
                z_n_1 * rp_spline_gained(rp_line_value<kSource>(l, n - 1), scale, gain);
    double z_i = z;
    // The sum stops early (`cut`) where the CPU's remaining terms cannot change it: once z^i
    // has underflowed to 0 (past about 420-890 terms for orders 2-5), on a line whose
    // z^(n-1) is 0 too, every remaining term z_i * (a + 0 * r) is a zero when the values are
    // finite, and adding a zero leaves a nonzero c0 as it is (a zero c0 could change sign:
    // the sum goes on). That saves reading most of the line twice. Whether the values were
    // finite is known once the causal pass has read them all.
    bool cut = false, may_cut = z_n_1 == 0.0;
    rp_stream2<kRows, kSource>(l, 1, 1, n - 2, -1, n - 2, [&](int, double a, double r) {
        if (cut) return false;
        c0 += z_i * (rp_spline_gained(a, scale, gain) + z_n_1 * rp_spline_gained(r, scale, gain));
        z_i *= z;
        cut = may_cut && z_i == 0.0 && c0 != 0.0;
        return !cut;
    });
    double prev = c0 / div, first = prev;
    // causal recursion, storing the checkpoints
    bool finite = true;
    rp_stream_checkpoints<kRows, kSource>(l, n, [&](double v) {
        double g = rp_spline_gained(v, scale, gain);
        finite = finite && g - g == 0.0;
        prev = g + z * prev;
        return prev;
    });
    // A value that is not finite makes a term the sum left out NaN on the CPU (0 * inf, NaN):
    // its c0, and so every element of the line from this pole on, is NaN.
    rp_spline_anticausal<kRows, kSource>(l, n, z, zz1, scale, gain, first, cut && !finite);
}

// Filters the line `l` of `n` elements in place (`l.src` set: from its samples). Lines of fewer
// than 2 elements are left as they are. `kRows`: `l.rows` is set, the warp streams its rows
// together (never with a source).
template <bool kRows>
RP_DEVICE void rp_spline_filter_line(const RpLine& l, int n, const double* poles, int npoles,
                                     double gain) {
    if (n < 2 || npoles < 1) {
        if (l.active)
            for (int i = 0; i < n; i++) {
                double v = l.src ? rp_line_value<true>(l, i) : l.b[i * l.step];
                l.b[i * l.step] = n < 2 ? v : v * gain;
            }
        return;
    }
    for (int p = 0; p < npoles; p++) {
        if (!kRows && p == 0 && l.src)
            rp_spline_pole<false, true>(l, n, poles, true, gain);
        else
            rp_spline_pole<kRows, false>(l, n, poles + 4 * p, p == 0, gain);
    }
}

// One thread's part of filtering `lines` lines in place: line k starts at data[k * line_step],
// its elements `elem_step` apart; this thread's is `line` (lines at or past `lines` are none).
// `lanes`: the threads that run together, lines line - lane .. of one warp; where they are the
// ring's RP_RING_LANES and the lines are rows (elem_step 1), they stream their rows together.
// `source`: the samples the values are read from (see RpSource), one line per thread.
RP_DEVICE void rp_spline_filter_thread(double* data, long long lines, int n,
                                       long long line_step, long long elem_step,
                                       const double* poles, int npoles, double gain,
                                       long long line, int lanes,
                                       RpSource source = RpSource()) {
    RpLine l;
    l.step = elem_step;
    l.rows = 0;
    l.row_step = line_step;
    l.row_count = 0;
    l.active = line < lines;
    long long own = line;
#if RP_WARP_ROWS
    if (elem_step == 1 && lanes == RP_RING_LANES && !source.data) {
        long long first = line - RP_RING_LANE;
        l.rows = data + first * line_step;
        l.row_count = lines - first < RP_RING_LANES ? (int)(lines - first) : RP_RING_LANES;
        if (!l.active) own = first;  // a line to read; nothing of it is stored
    }
#else
    (void)lanes;
#endif
    if (!l.active && !l.rows) return;
    l.b = data + own * line_step;
    l.src = 0;
    l.src_bytes = rp_source_bytes(source.type);
    if (source.data) {
        if (!l.src_bytes) {  // a sample type the filter cannot read: NaN, not a guess
            for (int i = 0; i < n; i++) l.b[i * l.step] = RP_SPLINE_NAN;
            return;
        }
        l.src = (const unsigned char*)source.data + own * source.line_step * l.src_bytes;
        l.src_step = source.elem_step * l.src_bytes;
        l.src_type = source.type;
        l.src_big_endian = source.big_endian;
        l.src_f32 = source.values_f32;
    }
    if (l.rows)
        rp_spline_filter_line<true>(l, n, poles, npoles, gain);
    else
        rp_spline_filter_line<false>(l, n, poles, npoles, gain);
}

// On the device, and in host builds that provide thread indices (the simulator's, RP_HOST_GRID).
#if defined(__CUDACC_RTC__) || defined(__CUDACC__) || defined(RP_HOST_GRID)
// One thread per line: line k starts at data[k * line_step], its elements `elem_step` apart.
// Launched with blocks of one warp (RP_RING_LANES threads).
RP_GLOBAL void RP_FILTER_BOUNDS rp_spline_filter(double* data, long long lines, int n,
                                                 long long line_step, long long elem_step,
                                                 const double* poles, int npoles, double gain) {
    long long line = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    rp_spline_filter_thread(data, lines, n, line_step, elem_step, poles, npoles, gain, line,
                            (int)blockDim.x);
}

// rp_spline_filter reading the values from the samples at `source` (see RpSource; the steps
// in samples), one line per thread (the columns of a device input: no rows by warp). A kernel
// of its own, so that neither pays the other's registers (a single kernel with both took 138
// without bounds, and spilled on sm_80 at the bounds' 96).
RP_GLOBAL void RP_FILTER_BOUNDS rp_spline_filter_from(
    double* data, long long lines, int n, long long line_step, long long elem_step,
    const double* poles, int npoles, double gain, const void* source,
    long long source_line_step, long long source_elem_step, int source_type, int big_endian,
    int values_f32) {
    long long line = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    RpSource src;
    src.data = source;
    src.line_step = source_line_step;
    src.elem_step = source_elem_step;
    src.type = source_type;
    src.big_endian = big_endian;
    src.values_f32 = values_f32;
    rp_spline_filter_thread(data, lines, n, line_step, elem_step, poles, npoles, gain, line, 1,
                            src);
}
#endif
