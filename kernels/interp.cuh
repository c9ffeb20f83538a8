// scipy-exact sampling of one input window (src/interp/kernel/), the input decoding of
// src/io/decode.rs (byte order, BSCALE/BZERO, BLANK) and reproject's float32 rounding
// (src/engine/precision.rs).
//
// Needs common.cuh and wcs.cuh (RP_NAN) before it.
//
// Flat layout written by src/engine/kernel_params.rs (`encode_sampling`), RP_SAMPLING_LEN doubles:
//
//   [0] order (0..5; orders >= 2 sample prefiltered f64 spline coefficients)
//   [1] NaN policy (0 Propagate, 1 Renormalize; Renormalize only for orders 0 and 1)
//   [2] values to float32 (reproject's cast of integer input; applied after decoding)
//   [3] result to float32 (reproject's float32 results)
//   [4] has_scale, [5] zero (BZERO), [6] scale (BSCALE): value = zero + scale * sample
//   [7] has_blank, [8] blank >> 32 (signed), [9] blank & 0xffffffff: an integer sample equal
//       to BLANK is NaN
//
// Input element types (`input_type`): 0 f32, 1 f64, 2 u8, 3 i16, 4 i32, 5 i64.

#define RP_SAMPLING_LEN 10

typedef struct {
    int order;
    int renormalize;
    int values_f32;
    int result_f32;
    int has_scale;
    double zero, scale;
    int has_blank;
    long long blank;
} RpSampling;

// 0 on success.
RP_DEVICE int rp_sampling_setup(const double* s, RpSampling* out) {
    for (int i = 0; i < RP_SAMPLING_LEN; i++)
        if (!(s[i] - s[i] == 0.0)) return 1;
    if (!(s[0] >= 0.0 && s[0] <= 5.0)) return 1;
    out->order = (int)s[0];
    out->renormalize = s[1] != 0.0;
    if (out->renormalize && out->order > 1) return 2;
    out->values_f32 = s[2] != 0.0;
    out->result_f32 = s[3] != 0.0;
    out->has_scale = s[4] != 0.0;
    out->zero = s[5];
    out->scale = s[6];
    out->has_blank = s[7] != 0.0;
    out->blank = (long long)(((unsigned long long)(long long)s[8] << 32) |
                             (unsigned long long)s[9]);
    // A variant (common.cuh) refuses parameters it was not compiled for.
#ifdef RP_V_ORDER
    if (out->order != RP_V_ORDER) return 4;
#endif
#ifdef RP_V_NAN
    if (out->renormalize != RP_V_NAN) return 4;
#endif
    return 0;
}

// The input element type a variant is compiled for (RP_V_INPUT), else the launch's.
#ifdef RP_V_INPUT
#define RP_INPUT_TYPE(t) RP_V_INPUT
#else
#define RP_INPUT_TYPE(t) (t)
#endif
// The order a variant is compiled for (RP_V_ORDER), else the parameters'.
#ifdef RP_V_ORDER
#define RP_ORDER(s) RP_V_ORDER
#else
#define RP_ORDER(s) ((s)->order)
#endif
// The NaN policy a variant is compiled for (RP_V_NAN), else the parameters'.
#ifdef RP_V_NAN
#define RP_RENORMALIZE(s) RP_V_NAN
#else
#define RP_RENORMALIZE(s) ((s)->renormalize)
#endif


// The input window: element (r, c) is pixel (y0 + r, x0 + c) of the ny x nx plane.
// `plain`: the elements are the values (native byte order, no BZERO/BSCALE, no BLANK, no
// float32 cast), so a load is one read and one conversion (rp_window_plain). `whole`: the
// window holds the whole plane, so every tap of a position in the plane's valid range is in
// it (rp_make_window).
typedef struct {
    const void* data;
    int type;
    int big_endian;
    long long pitch;
    int y0, x0, h, w;
    int ny, nx;
    int plain;
    int whole;
} RpWindow;

// The low 32 bits of v. On the device through an opaque conversion, so that a product of two
// such 32-bit values widened to 64 bits compiles to one wide multiply (IMAD.WIDE.U32); the
// compiler sees (unsigned)v widened as v & 0xffffffff, a 64-bit factor (two more instructions).
RP_DEVICE unsigned rp_low32(long long v) {
#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
    unsigned u;
    asm("cvt.u32.u64 %0, %1;" : "=r"(u) : "l"(v));
    return u;
#else
    return (unsigned)v;
#endif
}

// Whether the samples of a window read with `s` need no decoding.
RP_DEVICE int rp_window_plain(const RpSampling* s, int big_endian) {
    return !big_endian && !s->has_scale && !s->has_blank && !s->values_f32;
}

// The window of `data` (element (r, c) at data[r * pitch + c]) that starts at pixel (y0, x0)
// of an ny x nx plane and holds h x w pixels, read with `s`.
RP_DEVICE RpWindow rp_make_window(const RpSampling* s, const void* data, int type, int big_endian,
                                  long long pitch, int y0, int x0, int h, int w, int ny,
                                  int nx) {
    RpWindow win;
    win.data = data;
    win.type = type;
    win.big_endian = big_endian;
    win.pitch = pitch;
    win.y0 = y0;
    win.x0 = x0;
    win.h = h;
    win.w = w;
    win.ny = ny;
    win.nx = nx;
    win.plain = rp_window_plain(s, big_endian);
    win.whole = y0 == 0 && x0 == 0 && h >= ny && w >= nx;
    return win;
}

// Element i of a plain window's data (in range; element (r, c) is r * pitch + c): its value.
RP_DEVICE double rp_plain_at(const RpWindow* w, long long i) {
    switch (RP_INPUT_TYPE(w->type)) {
    case 0:
        return (double)((const float*)w->data)[i];
    case 1:
        return ((const double*)w->data)[i];
    case 2:
        return (double)((const unsigned char*)w->data)[i];
    case 3:
        return (double)((const short*)w->data)[i];
    case 4:
        return (double)((const int*)w->data)[i];
    default:
        return (double)((const long long*)w->data)[i];
    }
}

// The decoded value of element i of the window's data (in range). A plain window's element
// is its value (the decoding below would give the same, in more steps).
RP_DEVICE double rp_load_at(const RpSampling* s, const RpWindow* w, long long i) {
    if (w->plain) return rp_plain_at(w, i);
    double v;
    int integer = 1;
    long long key = 0;
    switch (RP_INPUT_TYPE(w->type)) {
    case 0:
        v = rp_float32_value(((const unsigned int*)w->data)[i], w->big_endian);
        integer = 0;
        break;
    case 1:
        v = rp_float64_value(((const unsigned long long*)w->data)[i], w->big_endian);
        integer = 0;
        break;
    case 2:
        key = ((const unsigned char*)w->data)[i];
        v = (double)key;
        break;
    case 3:
        key = rp_int16_value(((const unsigned short*)w->data)[i], w->big_endian);
        v = (double)key;
        break;
    case 4:
        key = rp_int32_value(((const unsigned int*)w->data)[i], w->big_endian);
        v = (double)key;
        break;
    default:
        key = rp_int64_value(((const unsigned long long*)w->data)[i], w->big_endian);
        v = (double)key;
        break;
    }
    if (integer && s->has_blank && key == s->blank) {
        v = RP_NAN;
    } else if (s->has_scale) {
        v = s->zero + s->scale * v;
    }
    if (s->values_f32) v = (double)(float)v;
    return v;
}

// The decoded value of window element (r, c) (local indices, in range).
RP_DEVICE double rp_load(const RpSampling* s, const RpWindow* w, long long r, long long c) {
    return rp_load_at(s, w, r * w->pitch + c);
}

// Whether image indices i0 and i1 (rows or columns, >= 0) both lie in the window's range
// that starts at `first` and holds `len` pixels (both >= 0: the block kernel reads no window
// with a negative origin or size). Unsigned, so that no operand can overflow.
RP_DEVICE int rp_in_window(int i0, int i1, int first, int len) {
    return (unsigned)i0 - (unsigned)first < (unsigned)len &&
           (unsigned)i1 - (unsigned)first < (unsigned)len;
}

// The value of image pixel (iy, ix), or 0 with *ok = 0 if the window does not hold it.
RP_DEVICE double rp_tap(const RpSampling* s, const RpWindow* w, long long iy, long long ix,
                        int* ok) {
    long long r = iy - w->y0, c = ix - w->x0;
    if (r < 0 || r >= w->h || c < 0 || c >= w->w) {
        *ok = 0;
        return 0.0;
    }
    return rp_load(s, w, r, c);
}

// The edge rule's clamp: a coordinate of the valid range -0.5 <= c < n - 0.5 (which
// rp_block_coord checks before anything is sampled) clamped to [0, n - 1].
RP_DEVICE double rp_clamp(double c, int n) {
    double last = (double)n - 1.0;
    return c <= 0.0 ? 0.0 : (c >= last ? last : c);
}

#if RP_WITH_SPLINE
RP_DEVICE long long rp_mirror(long long idx, long long len) {
    if (len <= 1) return 0;
    long long s2 = 2 * len - 2;
    if (idx < 0) {
        long long i = s2 * (-idx / s2) + idx;
        return i <= 1 - len ? i + s2 : -i;
    }
    if (idx >= len) {
        long long i = idx - s2 * (idx / s2);
        return i >= len ? s2 - i : i;
    }
    return idx;
}

#endif  // RP_WITH_SPLINE

#if RP_WITH_NEAREST
RP_DEVICE double rp_nearest(const RpSampling* s, const RpWindow* w, double y, double x) {
    double cy = rp_clamp(y, w->ny), cx = rp_clamp(x, w->nx);
    int ok = 1;
    double v = rp_tap(s, w, (long long)(cy + 0.5), (long long)(cx + 0.5), &ok);
    if (!ok) return RP_NAN;
    double t = 0.0;
    t += v;
    return t;
}

#endif  // RP_WITH_NEAREST

#if RP_WITH_BILINEAR
// The two taps along an axis of n pixels, and their weights, for a coordinate c of the valid
// range (-0.5 <= c < n - 0.5). The CPU clamps c to [0, n - 1] first (`linear_axis` in
// src/interp/kernel/plane.rs); this gives the same bits without the clamp's selects. (int)c is
// already the clamped tap (0 below 1, n - 1 from n - 1 on), and where the clamp would act the
// clamped fraction is 0, so the weights are 1.0 and 0.0: below 0 the unclamped fraction is
// negative, and from n - 1 on there is no next tap (i + 1 == n).
RP_DEVICE void rp_linear_axis(double c, int n, int* i0, int* i1, double* w0, double* w1) {
    int i = (int)c;
    double f = c - (double)i;
    int inside = i + 1 < n;
    *w0 = (inside && f > 0.0) ? 1.0 - f : 1.0;
    *w1 = 1.0 - *w0;
    *i0 = i;
    *i1 = inside ? i + 1 : (n >= 2 ? n - 2 : 0);
}

RP_DEVICE double rp_bilinear(const RpSampling* s, const RpWindow* w, double y, double x,
                             int renormalize) {
    int iy0, iy1, ix0, ix1;
    double wy0, wy1, wx0, wx1;
    rp_linear_axis(y, w->ny, &iy0, &iy1, &wy0, &wy1);
    rp_linear_axis(x, w->nx, &ix0, &ix1, &wx0, &wx1);
    // Any tap outside the window gives NaN (as rp_tap): both rows and both columns checked
    // once, then the four elements read from two row offsets. The taps of a position in the
    // valid range lie in [0, n - 1] on each axis, so a window of the whole plane (the
    // device-resident planes) holds them without a check.
    if (!w->whole &&
        (!rp_in_window(iy0, iy1, w->y0, w->h) || !rp_in_window(ix0, ix1, w->x0, w->w)))
        return RP_NAN;
    // Window rows and columns in range (checked above) times a pitch below 2^31 (checked by
    // the block kernel before any load): 32-bit factors of 64-bit offsets.
    unsigned r0 = (unsigned)(iy0 - w->y0), r1 = (unsigned)(iy1 - w->y0);
    unsigned c0 = (unsigned)(ix0 - w->x0);
    unsigned long long pitch = rp_low32(w->pitch);
    long long i0 = (long long)(r0 * pitch + c0), i1 = (long long)(r1 * pitch + c0);
    long long dc = ix1 - ix0;
    long long at[4] = {i0, i0 + dc, i1, i1 + dc};
    double v[4];
    // A plain window's four reads go out together, before any waits on one.
    if (w->plain) {
        for (int k = 0; k < 4; k++) v[k] = rp_plain_at(w, at[k]);
    } else {
        for (int k = 0; k < 4; k++) v[k] = rp_load_at(s, w, at[k]);
    }
    double wy[4] = {wy0, wy0, wy1, wy1};
    double wx[4] = {wx0, wx1, wx0, wx1};
    if (!renormalize) {
        double t = 0.0;
        for (int k = 0; k < 4; k++) t += v[k] * wy[k] * wx[k];
        return t;
    }
    int any_nan = 0;
    for (int k = 0; k < 4; k++)
        if (wy[k] != 0.0 && wx[k] != 0.0 && v[k] != v[k]) any_nan = 1;
    if (!any_nan) {
        double t = 0.0;
        for (int k = 0; k < 4; k++)
            if (wy[k] != 0.0 && wx[k] != 0.0) t += v[k] * wy[k] * wx[k];
        return t;
    }
    double num = 0.0, den = 0.0;
    for (int k = 0; k < 4; k++) {
        if (wy[k] != 0.0 && wx[k] != 0.0 && v[k] == v[k]) {
            num += v[k] * wy[k] * wx[k];
            den += wy[k] * wx[k];
        }
    }
    return den > 0.0 ? num / den : RP_NAN;
}

#endif  // RP_WITH_BILINEAR

#if RP_WITH_SPLINE
// scipy's spline weights of order o (2..5) at clamped coordinate cc with knot fl, as
// `weights` in src/interp/kernel/mod.rs computes them. Its divisions by constants are
// rp_div_const's, which gives the division's bits for every dividend here: x = cc - fl lies
// in [0, 1) (odd orders) or about [-0.5, 0.5) (even), so each dividend is +0 (x itself, at a
// whole-pixel position) or between (2^-53)^5 = 2^-265 (y t t for order 5, with y = 1 - x no
// smaller than 2^-53) and 8.
RP_DEVICE void rp_spline_weights(int o, double cc, double fl, double* w) {
    for (int i = 0; i < 6; i++) w[i] = 0.0;
    double x = cc - fl;
    double y = x;
    double z = 1.0 - x;
    double t;
    switch (o) {
    case 2:
        w[1] = 0.75 - x * x;
        y = 0.5 - x;
        w[0] = 0.5 * y * y;
        break;
    case 3:
        w[1] = rp_div_const(y * y * (y - 2.0) * 3.0 + 4.0, 6.0, 1.0 / 6.0);
        w[2] = rp_div_const(z * z * (z - 2.0) * 3.0 + 4.0, 6.0, 1.0 / 6.0);
        w[0] = rp_div_const(z * z * z, 6.0, 1.0 / 6.0);
        break;
    case 4:
        t = x * x;
        w[2] = t * (t * 0.25 - 0.625) + 115.0 / 192.0;
        y = 1.0 + x;
        w[1] = y * (y * (rp_div_const(y * (5.0 - y), 6.0, 1.0 / 6.0) - 1.25) + 5.0 / 24.0) +
               55.0 / 96.0;
        w[3] = z * (z * (rp_div_const(z * (5.0 - z), 6.0, 1.0 / 6.0) - 1.25) + 5.0 / 24.0) +
               55.0 / 96.0;
        y = 0.5 - x;
        t = y * y;
        w[0] = rp_div_const(t * t, 24.0, 1.0 / 24.0);
        break;
    default:
        t = y * y;
        w[2] = t * (t * (0.25 - rp_div_const(y, 12.0, 1.0 / 12.0)) - 0.5) + 0.55;
        t = z * z;
        w[3] = t * (t * (0.25 - rp_div_const(z, 12.0, 1.0 / 12.0)) - 0.5) + 0.55;
        y += 1.0;
        w[1] = y * (y * (y * (y * (rp_div_const(y, 24.0, 1.0 / 24.0) - 0.375) + 1.25) - 1.75) +
                    0.625) +
               0.425;
        z += 1.0;
        w[4] = z * (z * (z * (z * (rp_div_const(z, 24.0, 1.0 / 24.0) - 0.375) + 1.25) - 1.75) +
                    0.625) +
               0.425;
        y = 1.0 - x;
        t = y * y;
        w[0] = rp_div_const(y * t * t, 120.0, 1.0 / 120.0);
        break;
    }
    double last = 1.0;
    for (int i = 0; i < o; i++) last -= w[i];
    w[o] = last;
}

// The o + 1 taps along an axis of n pixels for knot `knot`, mirrored into the image.
// 32-bit: the knot lies in [0, n - 1] (of a clamped coordinate), so start + k lies in
// [-2, n + 2], and the block kernel reads nothing from a plane with a side within 256 of 2^31
// (32-bit tap indices took 17 instructions and 8 registers off the bicubic build's pixel:
// docs/measurements/sass-2026-11-28-session26).
RP_DEVICE void rp_spline_taps(int o, int knot, int n, int* idx) {
    int start = knot - o / 2;
    if (start >= 0 && (unsigned)start + o < (unsigned)n) {
        for (int k = 0; k <= o; k++) idx[k] = start + k;
    } else {
        for (int k = 0; k <= o; k++) idx[k] = (int)rp_mirror(start + k, n);
    }
}

// The sum of the taps' coefficients times their weights, in the CPU's order: rows ry (plane
// rows), window columns rx; `consecutive`: rx[k] is rx[0] + k (a constant where inlined).
RP_DEVICE double rp_spline_sum(const RpSampling* s, const RpWindow* w, int o, const int* ry,
                               const int* rx, const double* wy, const double* wx,
                               int consecutive) {
    unsigned long long pitch = rp_low32(w->pitch);
    double t = 0.0;
    RP_UNROLL
    for (int k0 = 0; k0 <= o; k0++) {
        double w0 = wy[k0];
        long long row = (long long)((unsigned)(ry[k0] - w->y0) * pitch);
        RP_UNROLL
        for (int k1 = 0; k1 <= o; k1++) {
            long long at = consecutive ? row + (unsigned)rx[0] + k1 : row + (unsigned)rx[k1];
            double coeff = rp_load_at(s, w, at);
            coeff *= w0;
            coeff *= wx[k1];
            t += coeff;
        }
    }
    return t;
}

RP_DEVICE double rp_spline(const RpSampling* s, const RpWindow* w, double y, double x) {
    int o = RP_ORDER(s);
    double cy = rp_clamp(y, w->ny), cx = rp_clamp(x, w->nx);
    int ky = (o & 1) ? (int)cy : (int)(cy + 0.5);
    int kx = (o & 1) ? (int)cx : (int)(cx + 0.5);
    int ry[6], rx[6];
    rp_spline_taps(o, ky, w->ny, ry);
    rp_spline_taps(o, kx, w->nx, rx);
    // Any tap outside the window gives NaN (as rp_tap). The taps are mirrored into [0, n - 1]
    // on each axis, so a window of the whole plane holds them without a check.
    if (!w->whole) {
        RP_UNROLL
        for (int k = 0; k <= o; k++) {
            if (ry[k] < w->y0 || ry[k] >= (long long)w->y0 + w->h) return RP_NAN;
            if (rx[k] < w->x0 || rx[k] >= (long long)w->x0 + w->w) return RP_NAN;
        }
    }
    double wy[6], wx[6];
    rp_spline_weights(o, cy, (double)ky, wy);
    rp_spline_weights(o, cx, (double)kx, wx);
    // Window rows and columns in range (checked above) times a pitch below 2^31 (checked by
    // the block kernel before any load): 32-bit factors of 64-bit offsets, as rp_bilinear's.
    // (The columns in place: a general build keeps these arrays in its stack frame.)
    RP_UNROLL
    for (int k = 0; k <= o; k++) rx[k] -= w->x0;
    // The taps of an interior position are consecutive columns: each load is then an offset
    // from the row's first (one address per row, not per tap).
    if (rx[o] == rx[0] + o) return rp_spline_sum(s, w, o, ry, rx, wy, wx, 1);
    return rp_spline_sum(s, w, o, ry, rx, wy, wx, 0);
}

// The sample at input position (y row, x column), before result rounding. Taps outside the
// window (a caller bug; the CPU engine panics there) give NaN.
#endif  // RP_WITH_SPLINE

// The sample at input position (y, x), which must lie in the valid range of the input plane
// (-0.5 <= y < ny - 0.5, the same for x: rp_block_coord's range, checked once there).
RP_DEVICE double rp_sample(const RpSampling* s, const RpWindow* w, double y, double x) {
#if !defined(RP_V_ORDER)
    if (s->order == 0) return rp_nearest(s, w, y, x);
    if (s->order == 1) return rp_bilinear(s, w, y, x, RP_RENORMALIZE(s));
    return rp_spline(s, w, y, x);
#elif RP_V_ORDER == 0
    return rp_nearest(s, w, y, x);
#elif RP_V_ORDER == 1
    return rp_bilinear(s, w, y, x, RP_RENORMALIZE(s));
#else
    return rp_spline(s, w, y, x);
#endif
}

// reproject's result rounding.
RP_DEVICE double rp_round_result(const RpSampling* s, double v) {
    return s->result_f32 ? (double)(float)v : v;
}
