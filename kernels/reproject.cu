// The block kernel: one thread per output pixel of one block, for one plane, as
// `Plan::compute_block` (src/engine/mod.rs) computes it: input position (CoordinateMap, with
// the round-trip check), scipy-exact sample of the input window, reproject's float32 rounding,
// footprint = value not NaN.
//
// Needs common.cuh, projections.cuh, wcs.cuh and interp.cuh before it.

#if !(defined(__CUDACC_RTC__) || defined(__CUDACC__))
// Host build (tests/gpu_host_pipeline.rs, the CUDA simulator of src/gpu/sim/): a "thread" is
// one call; every call parses the parameters itself (nothing is shared), so the barrier has
// nothing to wait for. The launch indices are per host thread, so launches may run at once.
static inline void __syncthreads(void) {}
typedef struct {
    unsigned int x, y, z;
} rp_host_dim3;
static thread_local rp_host_dim3 threadIdx, blockIdx, blockDim;
#define RP_SETUP_THREAD 1
// Each host "thread" copies the whole of the parsed parameters for itself.
#define RP_COPY_FIRST 0
#define RP_COPY_STRIDE 1
#else
#define RP_SETUP_THREAD (threadIdx.x == 0 && threadIdx.y == 0)
// The threads of a thread block copy the parsed parameters together, a word each in turn.
#define RP_COPY_FIRST ((int)(threadIdx.y * blockDim.x + threadIdx.x))
#define RP_COPY_STRIDE ((int)(blockDim.x * blockDim.y))
#endif

// `out_f64` of a launch that parses the parameters once for the launches that follow, instead
// of computing pixels (see rp_reproject_block).
#define RP_PARSE_PARAMS 2

// The parsed parameters of a launch.
typedef struct {
    int status;  // 0: ok; else the parameters did not parse and every pixel is NaN
    RpTransform transform;
    RpSampling sampling;
} RpBlockParams;

// The celestial parse is a real call on the device: it runs once per plan (one thread of the
// parse launch; or thread (0, 0) of each thread block, with `sampling` given), and inlined
// into the kernel it would hold registers the per-pixel path then cannot have (sky TAN -> TAN
// bilinear: 96 registers inlined, 54 out of line; kernels/README.md). The homography's parse
// is a few loads: inlined.
#if (defined(__CUDACC_RTC__) || defined(__CUDACC__)) && RP_WITH_SKY
#define RP_SETUP_CALL __device__ __noinline__
#else
#define RP_SETUP_CALL RP_DEVICE
#endif

// Parses both flat arrays. `transform[1]` holds the transform's length.
RP_SETUP_CALL void rp_block_setup(const double* transform, const double* sampling,
                              RpBlockParams* p) {
    double len = transform[1];
    p->status = 0;
    if (!(len >= 3.0 && len < 1e9)) {
        p->status = 1;
        return;
    }
    if (rp_transform_setup(transform, (long long)len, &p->transform) != 0) p->status = 2;
    if (rp_sampling_setup(sampling, &p->sampling) != 0) p->status = 3;
}

// The value of output pixel (row, col) of the output plane before reproject's rounding (NaN
// where there is none); also its input position (px, py), NaN where it has none.
RP_DEVICE double rp_pixel_sample(const RpBlockParams* p, const RpWindow* w, int row, int col,
                                 double* px, double* py) {
    double x, y;
    // In the valid range of the input when it maps (the samplers check it no more).
    if (p->status != 0 ||
        !rp_block_coord(&p->transform, w->ny, w->nx, (double)col, (double)row, &x, &y)) {
        *px = *py = RP_NAN;
        return RP_NAN;
    }
    *px = x;
    *py = y;
    return rp_sample(&p->sampling, w, y, x);
}

// The value (rounded as reproject does, NaN where there is none) of output pixel (row, col)
// of the output plane; also its input position (px, py), NaN where it has none.
RP_DEVICE double rp_pixel_value(const RpBlockParams* p, const RpWindow* w, int row, int col,
                                double* px, double* py) {
    return rp_round_result(&p->sampling, rp_pixel_sample(p, w, row, col, px, py));
}

// Parses both flat arrays into `out`, which holds `capacity` bytes: status 5 when they are too
// few (every pixel of the launches reading it is then NaN).
RP_DEVICE void rp_parse_into(const double* transform, const double* sampling, void* out,
                             long long capacity) {
    if (capacity >= (long long)sizeof(RpBlockParams)) {
        rp_block_setup(transform, sampling, (RpBlockParams*)out);
    } else if (capacity >= (long long)sizeof(int)) {
        ((RpBlockParams*)out)->status = 5;
    }
}

// Copies parameters parsed once per plan (rp_parse_into) into `p`, the threads of the thread
// block together.
RP_DEVICE void rp_copy_params(const double* parsed, RpBlockParams* p) {
    const unsigned long long* from = (const unsigned long long*)parsed;
    unsigned long long* to = (unsigned long long*)p;
    int words = (int)(sizeof(RpBlockParams) / sizeof(unsigned long long));
    for (int i = RP_COPY_FIRST; i < words; i += RP_COPY_STRIDE) to[i] = from[i];
}

// This thread's pixels of block row r, from column first_c a thread block's width apart
// (RP_PIXELS_PER_THREAD): sampled where `readable`, else NaN; stored as float64 when `wide`,
// else float32 (block element (r, c) at out[r * out_pitch + c], and so the footprint).
RP_DEVICE void rp_thread_pixels(const RpBlockParams* p, const RpWindow* w, int readable, int wide,
                                int r, unsigned first_c, int out_y0, int out_x0, int blk_nx,
                                void* out, void* footprint, long long out_pitch) {
    RP_PIXEL_LOOP
    for (int k = 0; k < RP_PIXELS_PER_THREAD; k++) {
        unsigned uc = first_c + (unsigned)k * blockDim.x;
        if (uc >= (unsigned)blk_nx) break;
        int c = (int)uc;
        double px, py;
        double raw = readable ? rp_pixel_sample(p, w, out_y0 + r, out_x0 + c, &px, &py) : RP_NAN;
        // A block row and column (both >= 0) and a pitch below 2^31: 32-bit factors.
        unsigned long long at = (unsigned long long)(unsigned)r * (unsigned)out_pitch + (unsigned)c;
        if (wide) {
            double v = rp_round_result(&p->sampling, raw);
            ((double*)out)[at] = v;
            ((double*)footprint)[at] = v != v ? 0.0 : 1.0;
        } else {
            // reproject's float32 rounding, then float32: the same float as rounding once.
            float v = (float)raw;
            ((float*)out)[at] = v;
            ((float*)footprint)[at] = v != v ? 0.0f : 1.0f;
        }
    }
}

// `input` points at window element (0, 0), which is pixel (win_y0, win_x0) of the input
// plane; element (r, c) is at input[r * in_pitch + c]. `out` and `footprint` point at block
// element (0, 0), which is pixel (out_y0, out_x0) of the output plane; element (r, c) is at
// out[r * out_pitch + c].
//
// The parameters: with `sampling` not null, thread (0, 0) of each thread block parses both
// arrays. A launch with out_f64 == RP_PARSE_PARAMS parses them once into `out` (`out_pitch`
// bytes; thread (0, 0) of thread block (0, 0), nothing else runs), and launches with a null
// `sampling` then read those parsed parameters from `transform` (a plain copy: no thread
// waits on a serial parse), with the same results.
// RP_V_MIN_BLOCKS: see common.cuh.
#if defined(RP_V_MIN_BLOCKS) && (defined(__CUDACC_RTC__) || defined(__CUDACC__))
#define RP_BLOCK_BOUNDS __launch_bounds__(256, RP_V_MIN_BLOCKS)
#else
#define RP_BLOCK_BOUNDS
#endif
RP_GLOBAL void RP_BLOCK_BOUNDS rp_reproject_block(const double* transform, const double* sampling,
                                  const void* input, int input_type, int big_endian,
                                  long long in_pitch, int win_y0, int win_x0, int win_ny,
                                  int win_nx, int in_ny, int in_nx, int out_y0, int out_x0,
                                  int blk_ny, int blk_nx, void* out, void* footprint, int out_f64,
                                  long long out_pitch) {
    __shared__ RpBlockParams params;
    if (out_f64 == RP_PARSE_PARAMS) {
        if (RP_SETUP_THREAD && blockIdx.x == 0 && blockIdx.y == 0)
            rp_parse_into(transform, sampling, out, out_pitch);
        return;
    }
    if (sampling == 0) {
        rp_copy_params(transform, &params);
    } else if (RP_SETUP_THREAD) {
        rp_block_setup(transform, sampling, &params);
    }
    __syncthreads();
    int r = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    // This thread's first column; its others follow a thread block's width apart, so that
    // each store of a warp is contiguous (RP_PIXELS_PER_THREAD).
    unsigned first_c = blockIdx.x * blockDim.x * RP_PIXELS_PER_THREAD + threadIdx.x;
    // Nothing is stored at a pitch the 32-bit offsets below cannot take (the host passes none).
    if (r >= blk_ny || first_c >= (unsigned)blk_nx || out_pitch > 0x7fffffffLL) return;
    RpWindow w = rp_make_window(&params.sampling, input, input_type, big_endian, in_pitch, win_y0,
                                win_x0, win_ny, win_nx, in_ny, in_nx);
    // An unknown element type, a pitch shorter than the window or of 2^31 elements or more (the
    // samplers' element offsets are 32-bit rows times a 32-bit pitch), a window with a
    // negative origin or size, or (where splines are compiled) a plane side within 256 of
    // 2^31 (the spline taps' 32-bit indices run a few past a side) reads nothing: checked
    // before any load.
    int window_ok = in_pitch >= win_nx && in_pitch <= 0x7fffffffLL && win_y0 >= 0 && win_x0 >= 0 &&
                    win_ny >= 0 && win_nx >= 0;
#if RP_WITH_SPLINE
    window_ok = window_ok && in_ny <= 0x7fffff00 && in_nx <= 0x7fffff00;
#endif
#ifdef RP_V_INPUT
    int readable = input_type == RP_V_INPUT && window_ok;
#else
    int readable = input_type >= 0 && input_type <= 5 && window_ok;
#endif
#ifdef RP_V_OUT
    // A build for one output type stores that type. A launch for the other (a wrong pick)
    // gets NaN values and zero footprints of its own type, and nothing stored past them.
    if (out_f64 != RP_V_OUT) {
        rp_thread_pixels(&params, &w, 0, out_f64, r, first_c, out_y0, out_x0, blk_nx, out,
                         footprint, out_pitch);
        return;
    }
    rp_thread_pixels(&params, &w, readable, RP_V_OUT, r, first_c, out_y0, out_x0, blk_nx, out,
                     footprint, out_pitch);
#else
    rp_thread_pixels(&params, &w, readable, out_f64, r, first_c, out_y0, out_x0, blk_nx, out,
                     footprint, out_pitch);
#endif
}
