// The values the spline prefilter starts from, made on the device from samples there (a
// device-resident input, or a host input's stored samples) of 1 or 2 bytes, or of a plane of
// one row (the column pass, rp_spline_filter_from, reads the others itself): each sample read
// as the CPU reads it (type, byte order; device inputs are values, so no BZERO/BSCALE or
// BLANK), rounded to float32 when the plan rounds values (reproject's cast of integer input),
// as float64. One thread per pixel of an ny x nx plane: `out` is row-major (nx per row),
// `input` has `pitch` elements per row.
//
// Needs common.cuh and interp.cuh (rp_load) before it. Launched from the general module only:
// a variant's RP_V_INPUT would fix the input type.
RP_GLOBAL void rp_spline_values(const void* input, int input_type, int big_endian,
                                long long pitch, int ny, int nx, int values_f32,
                                double* out) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (nx <= 0 || i >= (long long)ny * nx) return;
    long long r = i / nx, c = i % nx;
    RpSampling s;
    s.order = 0;
    s.renormalize = 0;
    s.values_f32 = values_f32;
    s.result_f32 = 0;
    s.has_scale = 0;
    s.zero = 0.0;
    s.scale = 1.0;
    s.has_blank = 0;
    s.blank = 0;
    RpWindow w = rp_make_window(&s, input, input_type, big_endian, pitch, 0, 0, ny, nx, ny, nx);
    out[i] = rp_load(&s, &w, r, c);
}
