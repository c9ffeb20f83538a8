// The block kernel: one thread per output pixel of one block, for one plane, as
// `Plan::compute_block` (src/engine/mod.rs) computes it: input position (CoordinateMap, with
// the round-trip check), scipy-exact sample of the input window, reproject's float32 rounding,
// footprint = value not NaN.
//
// Needs common.cuh, projections.cuh, wcs.cuh and interp.cuh before it.

#if !(defined(__CUDACC_RTC__) || defined(__CUDACC__))
// Host build (tests/gpu_host_pipeline.rs, the CUDA simulator of src/gpu/sim.rs): a "thread" is
// one call; every call parses the parameters itself (nothing is shared), so the barrier has
// nothing to wait for. The launch indices are per host thread, so launches may run at once.
static inline void __syncthreads(void) {}
typedef struct {
    unsigned int x, y, z;
} rp_host_dim3;
static thread_local rp_host_dim3 threadIdx, blockIdx, blockDim;
#define RP_SETUP_THREAD 1
#else
#define RP_SETUP_THREAD (threadIdx.x == 0 && threadIdx.y == 0)
#endif

// The parsed parameters of a launch.
typedef struct {
    int status;  // 0: ok; else the parameters did not parse and every pixel is NaN
    RpTransform transform;
    RpSampling sampling;
} RpBlockParams;

// Parses both flat arrays. `transform[1]` holds the transform's length.
RP_DEVICE void rp_block_setup(const double* transform, const double* sampling,
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

// The value (rounded as reproject does, NaN where there is none) of output pixel (row, col)
// of the output plane; also its input position (px, py), NaN where it has none.
RP_DEVICE double rp_pixel_value(const RpBlockParams* p, const RpWindow* w, int row, int col,
                                double* px, double* py) {
    *px = *py = RP_NAN;
    if (p->status != 0) return RP_NAN;
    rp_block_coord(&p->transform, w->ny, w->nx, (double)col, (double)row, px, py);
    if (*px != *px || *py != *py) return rp_round_result(&p->sampling, RP_NAN);
    return rp_round_result(&p->sampling, rp_sample(&p->sampling, w, *py, *px));
}

// `input` points at window element (0, 0), which is pixel (win_y0, win_x0) of the input
// plane; element (r, c) is at input[r * in_pitch + c]. `out` and `footprint` point at block
// element (0, 0), which is pixel (out_y0, out_x0) of the output plane; element (r, c) is at
// out[r * out_pitch + c].
RP_GLOBAL void rp_reproject_block(const double* transform, const double* sampling,
                                  const void* input, int input_type, int big_endian,
                                  long long in_pitch, int win_y0, int win_x0, int win_ny,
                                  int win_nx, int in_ny, int in_nx, int out_y0, int out_x0,
                                  int blk_ny, int blk_nx, void* out, void* footprint, int out_f64,
                                  long long out_pitch) {
    __shared__ RpBlockParams params;
    if (RP_SETUP_THREAD) rp_block_setup(transform, sampling, &params);
    __syncthreads();
    int c = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int r = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (r >= blk_ny || c >= blk_nx) return;
    RpWindow w;
    w.data = input;
    w.type = input_type;
    w.big_endian = big_endian;
    w.pitch = in_pitch;
    w.y0 = win_y0;
    w.x0 = win_x0;
    w.h = win_ny;
    w.w = win_nx;
    w.ny = in_ny;
    w.nx = in_nx;
    double px, py;
    // An unknown element type or a pitch shorter than the window reads nothing: checked
    // before any load.
#ifdef RP_V_INPUT
    int readable = input_type == RP_V_INPUT && in_pitch >= win_nx;
#else
    int readable = input_type >= 0 && input_type <= 5 && in_pitch >= win_nx;
#endif
    double v = readable ? rp_pixel_value(&params, &w, out_y0 + r, out_x0 + c, &px, &py) : RP_NAN;
    double f = v != v ? 0.0 : 1.0;
    long long at = (long long)r * out_pitch + c;
    if (out_f64) {
        ((double*)out)[at] = v;
        ((double*)footprint)[at] = f;
    } else {
        ((float*)out)[at] = (float)v;
        ((float*)footprint)[at] = (float)f;
    }
}
