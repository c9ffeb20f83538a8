// The WCS pipeline around the projections: linear step (lin.c), SIP and TPV distortions,
// spherical rotation (sph.c), frame rotation, and the three pixel-transform paths of
// src/pixel_transform.rs (Homography, Vector, General), with reproject's round-trip check as
// src/engine/coords.rs does it. Every formula follows the Rust code operation by operation
// (same order of additions and multiplications; compiled with --fmad=false on the device and
// -ffp-contract=off on the host), so the host build reproduces the CPU engine to the last bit
// wherever the C library's sin/cos/atan2... agree with Rust's (glibc on Linux).
//
// Needs common.cuh and projections.cuh before it (RpPrj, rp_prj_*).
//
// Flat layout written by src/engine/kernel_params.rs (`encode_transform`), all doubles; integers and
// flags are stored as exact doubles:
//
//   transform := version (=1), total length, has_backward, PT(forward), [PT(backward)]
//   PT        := kind (0 homography, 1 vector, 2 general, 3 linear planes),
//                kind 0: H (9, row-major)
//                kind 1: CEL(out), CEL(in), R (9, row-major), has_frame, [FRAME]
//                kind 2: CEL(out), CEL(in), has_frame, [FRAME]
//                kind 3: LIN2(out), AXES(out), factors (2), LIN2(in), AXES(in)
//   LIN2      := crpix (2), m (4), inv (4), unity, cdelt (2)        -- Linear2
//   AXES      := 2 x (log (0 linear, 1 logarithmic), crval)       -- plane::AxisWorld
//   FRAME     := M (9, row-major), has_remove_eterms, [A (3)], has_add_eterms, [A (3)]
//   CEL       := swapped (latitude axis first),
//                LIN2
//                projection (RP_PRJ_PARAMS, Projection::device_params)
//                euler (5)                                          -- SphericalRotation
//                has_distortion, [DIS]
//   DIS       := lat_first, has_sip, [SIP], has_tpv, [TPV]
//   SIP       := crpix (2), tolerance, max_iter, ap_bp_guess,
//                order_a, A ((order_a+1)^2, row-major [p][q]), order_b, B (...),
//                has_reverse, [order_ap, AP (...), order_bp, BP (...)]
//   TPV       := crpix (2), pc (4), pc_inv (4), cdelt (2), lat_first,
//                2 x (degree, radial, c (40))
//
// The big coefficient arrays stay in global memory: the parsed structs point into `transform`.

#define RP_TRANSFORM_VERSION 1
#define RP_TPV_TERMS 40
#define RP_POLE 1e-12
// What a sky variant leaves out (its setup refuses parameters that need it): TPV, FK4
// E-terms and, unless RP_V_SIP and RP_V_FRAME, SIP and the frame change.
#if RP_SKY_VARIANT
#define RP_CEL_HAS_DIS(c) (RP_V_SIP && (c)->has_dis)
#define RP_CEL_HAS_TPV(c) 0
#define RP_PT_HAS_FRAME(t) (RP_V_FRAME && (t)->has_frame)
#define RP_PT_HAS_ETERMS 0
#else
#define RP_CEL_HAS_DIS(c) ((c)->has_dis)
#define RP_CEL_HAS_TPV(c) ((c)->has_tpv)
#define RP_PT_HAS_FRAME(t) ((t)->has_frame)
#define RP_PT_HAS_ETERMS 1
#endif
// The large steps are called from several places: kept out of line on the device, so that
// each (with the projections' big switches inlined into it) is compiled once. A sky variant,
// with two projections and no TPV, inlines them (no call frames: 164 -> 54 registers for
// TAN -> TAN bilinear, kernels/README.md).
#if (defined(__CUDACC_RTC__) || defined(__CUDACC__)) && RP_SKY_VARIANT
#define RP_OUTLINE RP_DEVICE
#elif defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define RP_OUTLINE __device__ __noinline__
#else
#define RP_OUTLINE static
#endif
#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define RP_NAN __longlong_as_double(0x7ff8000000000000LL)
#else
#define RP_NAN NAN
#endif

// Homography variants (RP_V_HOMOGRAPHY) compile only the homography: no celestial
// structures, parsers or transforms (the #if RP_WITH_SKY sections).
#if RP_WITH_SKY
// ---------------------------------------------------------------------------------------------
// Degree trigonometry, as src/wcs/trig.rs (WCSLIB's unparenthesised D2R/R2D expansions).

RP_DEVICE double rpw_d2r(double x) { return x * RP_PI / 180.0; }
RP_DEVICE double rpw_r2d(double x) { return x * 180.0 / RP_PI; }
RP_DEVICE double rpw_sind(double x) { return sin(rpw_d2r(x)); }
RP_DEVICE double rpw_cosd(double x) { return cos(rpw_d2r(x)); }
RP_DEVICE double rpw_asind(double x) { return rpw_r2d(asin(x)); }
RP_DEVICE double rpw_acosd(double x) { return rpw_r2d(acos(x)); }
RP_DEVICE double rpw_atan2d(double y, double x) { return rpw_r2d(atan2(y, x)); }
// Rust's f64::to_radians / to_degrees (src/wcs/frame_transform/mod.rs, pixel_transform.rs).
RP_DEVICE double rpw_to_radians(double x) { return x * (RP_PI / 180.0); }
RP_DEVICE double rpw_to_degrees(double x) { return x * 57.2957795130823208767981548141051703; }
RP_DEVICE int rpw_finite(double x) { return x - x == 0.0; }

// ---------------------------------------------------------------------------------------------
// Parsed structures.

typedef struct {
    double crpix[2];
    double m[4];
    double inv[4];
    int unity;
    double cdelt[2];
} RpLin;

typedef struct {
    double crpix[2];
    double tol;
    int max_iter;
    int ap_bp_guess;
    int ma, mb;
    const double* a;
    const double* b;
    int has_reverse;
    int map, mbp;
    const double* ap;
    const double* bp;
} RpSip;

typedef struct {
    double crpix[2], pc[4], pc_inv[4], cdelt[2];
    int lat_first;
    int degree[2];
    int radial[2];
    const double* c[2];
} RpTpv;

typedef struct {
    int swapped;
    RpLin lin;
    RpPrj prj;
    double eul[5];
    int has_dis;
    int dis_lat_first;
    int has_sip;
    RpSip sip;
    int has_tpv;
    RpTpv tpv;
} RpCel;

#endif  // RP_WITH_SKY

typedef struct {
    int kind;
    double h[9];
#if RP_WITH_SKY
    RpCel out, in;
    double rot[9];
    int has_frame;
    double frame[9];
    int remove_eterms, add_eterms;
    double eterms_remove[3], eterms_add[3];
    // Kind 3 (linear planes): per side (0 output, 1 input) and axis, 0 linear or 1 logarithmic
    // and CRVAL; the output-to-input unit factors; the linear steps are out.lin and in.lin.
    int wkind[2][2];
    double wcrval[2][2];
    double factor[2];
#endif
} RpPixelTransform;

typedef struct {
    int has_backward;
    RpPixelTransform forward, backward;
} RpTransform;

// Sequential reader of the flat array; `bad` is set on a value out of range or overrun.
typedef struct {
    const double* p;
    long long at, len;
    int bad;
} RpReader;

RP_DEVICE double rp_rd(RpReader* r) {
    if (r->at >= r->len) {
        r->bad = 1;
        return 0.0;
    }
    return r->p[r->at++];
}

RP_DEVICE int rp_rd_int(RpReader* r, int lo, int hi) {
    double v = rp_rd(r);
    if (!(v >= (double)lo && v <= (double)hi)) {
        r->bad = 1;
        return lo;
    }
    return (int)v;
}

// A pointer to `n` doubles of the array, skipping them.
RP_DEVICE const double* rp_rd_array(RpReader* r, long long n) {
    if (n < 0 || r->at + n > r->len) {
        r->bad = 1;
        return r->p;
    }
    const double* q = r->p + r->at;
    r->at += n;
    return q;
}

RP_DEVICE void rp_rd_n(RpReader* r, double* out, int n) {
    RP_ROLLED
    for (int i = 0; i < n; i++) out[i] = rp_rd(r);
}

#if RP_WITH_SKY
RP_DEVICE void rp_parse_sip(RpReader* r, RpSip* s) {
    rp_rd_n(r, s->crpix, 2);
    s->tol = rp_rd(r);
    s->max_iter = rp_rd_int(r, 0, 1 << 30);
    s->ap_bp_guess = rp_rd_int(r, 0, 1);
    s->ma = rp_rd_int(r, 0, 19);
    s->a = rp_rd_array(r, (long long)(s->ma + 1) * (s->ma + 1));
    s->mb = rp_rd_int(r, 0, 19);
    s->b = rp_rd_array(r, (long long)(s->mb + 1) * (s->mb + 1));
    s->has_reverse = rp_rd_int(r, 0, 1);
    s->map = s->mbp = 0;
    s->ap = s->bp = r->p;
    if (s->has_reverse) {
        s->map = rp_rd_int(r, 0, 19);
        s->ap = rp_rd_array(r, (long long)(s->map + 1) * (s->map + 1));
        s->mbp = rp_rd_int(r, 0, 19);
        s->bp = rp_rd_array(r, (long long)(s->mbp + 1) * (s->mbp + 1));
    }
}

RP_DEVICE void rp_parse_tpv(RpReader* r, RpTpv* t) {
    rp_rd_n(r, t->crpix, 2);
    rp_rd_n(r, t->pc, 4);
    rp_rd_n(r, t->pc_inv, 4);
    rp_rd_n(r, t->cdelt, 2);
    t->lat_first = rp_rd_int(r, 0, 1);
    for (int k = 0; k < 2; k++) {
        t->degree[k] = rp_rd_int(r, 1, 7);
        t->radial[k] = rp_rd_int(r, 0, 1);
        t->c[k] = rp_rd_array(r, RP_TPV_TERMS);
    }
}

RP_DEVICE void rp_parse_lin(RpReader* r, RpLin* l) {
    rp_rd_n(r, l->crpix, 2);
    rp_rd_n(r, l->m, 4);
    rp_rd_n(r, l->inv, 4);
    l->unity = rp_rd_int(r, 0, 1);
    rp_rd_n(r, l->cdelt, 2);
}

// The two world axes of one side of a linear-plane transform.
RP_DEVICE void rp_parse_axes(RpReader* r, RpPixelTransform* t, int side) {
    for (int k = 0; k < 2; k++) {
        t->wkind[side][k] = rp_rd_int(r, 0, 1);
        t->wcrval[side][k] = rp_rd(r);
    }
}

RP_OUTLINE void rp_parse_cel(RpReader* r, RpCel* c) {
    c->swapped = rp_rd_int(r, 0, 1);
    rp_parse_lin(r, &c->lin);
    const double* prj = rp_rd_array(r, RP_PRJ_PARAMS);
    if (r->bad || rp_prj_setup(prj, &c->prj) != 0) r->bad = 1;
    rp_rd_n(r, c->eul, 5);
    c->has_dis = rp_rd_int(r, 0, 1);
    c->dis_lat_first = 0;
    c->has_sip = c->has_tpv = 0;
    if (c->has_dis) {
        c->dis_lat_first = rp_rd_int(r, 0, 1);
        c->has_sip = rp_rd_int(r, 0, 1);
        if (c->has_sip) rp_parse_sip(r, &c->sip);
        c->has_tpv = rp_rd_int(r, 0, 1);
        if (c->has_tpv) rp_parse_tpv(r, &c->tpv);
    }
}

#endif  // RP_WITH_SKY

#if RP_SKY_VARIANT
// Whether a sky variant (common.cuh) computes `t` as the general kernel does: kind 1, no TPV,
// SIP and a frame change only where the variant has them, no E-terms. (Its projections were
// checked when they were set up.)
RP_DEVICE int rp_sky_variant_admits_side(const RpCel* c) {
    return !c->has_dis || (RP_V_SIP && !c->has_tpv);
}

RP_DEVICE int rp_sky_variant_admits(const RpPixelTransform* t) {
    if (t->kind != 1) return 0;
    if (!rp_sky_variant_admits_side(&t->out) || !rp_sky_variant_admits_side(&t->in)) return 0;
    if (t->remove_eterms || t->add_eterms) return 0;
    return RP_V_FRAME || !t->has_frame;
}
#endif

RP_DEVICE void rp_parse_pt(RpReader* r, RpPixelTransform* t) {
    t->kind = rp_rd_int(r, 0, 3);
#if RP_WITH_SKY
    t->has_frame = 0;
#endif
    if (t->kind == 0) {
        rp_rd_n(r, t->h, 9);
        return;
    }
#if !RP_WITH_SKY
    // A homography variant reads nothing else.
    r->bad = 1;
#else
    if (t->kind == 3) {
        rp_parse_lin(r, &t->out.lin);
        rp_parse_axes(r, t, 0);
        rp_rd_n(r, t->factor, 2);
        rp_parse_lin(r, &t->in.lin);
        rp_parse_axes(r, t, 1);
        return;
    }
    rp_parse_cel(r, &t->out);
    rp_parse_cel(r, &t->in);
    if (t->kind == 1) rp_rd_n(r, t->rot, 9);
    t->has_frame = rp_rd_int(r, 0, 1);
    t->remove_eterms = t->add_eterms = 0;
    if (t->has_frame) {
        rp_rd_n(r, t->frame, 9);
        t->remove_eterms = rp_rd_int(r, 0, 1);
        if (t->remove_eterms) rp_rd_n(r, t->eterms_remove, 3);
        t->add_eterms = rp_rd_int(r, 0, 1);
        if (t->add_eterms) rp_rd_n(r, t->eterms_add, 3);
    }
#endif
}

// Parses `encode_transform`'s array (`len` doubles); 0 on success.
RP_DEVICE int rp_transform_setup(const double* p, long long len, RpTransform* t) {
    RpReader r;
    r.p = p;
    r.at = 0;
    r.len = len;
    r.bad = 0;
    if (rp_rd(&r) != RP_TRANSFORM_VERSION) return 1;
    double total = rp_rd(&r);
    if (!(total >= 3.0 && total <= (double)len)) return 2;
    r.len = (long long)total;
    t->has_backward = rp_rd_int(&r, 0, 1);
    rp_parse_pt(&r, &t->forward);
    if (t->has_backward) rp_parse_pt(&r, &t->backward);
    if (r.bad || r.at != r.len) return 3;
#if RP_SKY_VARIANT
    if (!rp_sky_variant_admits(&t->forward)) return 4;
    if (t->has_backward && !rp_sky_variant_admits(&t->backward)) return 4;
#endif
    return 0;
}

#if RP_WITH_SKY
// ---------------------------------------------------------------------------------------------
// Linear2 (src/wcs/linear.rs).

RP_DEVICE double rp_mul_skip_zero(const double* row, double u, double v) {
    double a = row[0] != 0.0 ? row[0] * u : 0.0;
    return row[1] != 0.0 ? a + row[1] * v : a;
}

RP_DEVICE void rp_lin_pix1_to_img(const RpLin* l, double p1, double p2, double* u, double* v) {
    double a = p1 - l->crpix[0];
    double b = p2 - l->crpix[1];
    *u = rp_mul_skip_zero(l->m, a, b);
    *v = rp_mul_skip_zero(l->m + 2, a, b);
}

RP_DEVICE void rp_lin_img_to_pix(const RpLin* l, double u, double v, double* x, double* y) {
    if (l->unity) {
        *x = (u / l->cdelt[0] + l->crpix[0]) - 1.0;
        *y = (v / l->cdelt[1] + l->crpix[1]) - 1.0;
        return;
    }
    *x = (rp_mul_skip_zero(l->inv, u, v) + l->crpix[0]) - 1.0;
    *y = (rp_mul_skip_zero(l->inv + 2, u, v) + l->crpix[1]) - 1.0;
}

// ---------------------------------------------------------------------------------------------
// SIP (src/wcs/distortion/sip.rs).

// Horner evaluation of one polynomial of order m, coefficients c[p*(m+1)+q] of u^p v^q.
RP_DEVICE double rp_sip_eval(const double* c, int m, double x, double y) {
    int n = m + 1;
    double sum = 0.0;
    for (int j = 0; j <= m; j++) {
        int base = (m - j) * n;
        double t = c[base + j];
        for (int k = j - 1; k >= 0; k--) t = y * t + c[base + k];
        sum = j == 0 ? t : x * sum + t;
    }
    return sum;
}

RP_DEVICE void rp_sip_pix1_to_foc1(const RpSip* s, double p1, double p2, double* f1, double* f2) {
    double u = p1 - s->crpix[0];
    double v = p2 - s->crpix[1];
    *f1 = p1 + rp_sip_eval(s->a, s->ma, u, v);
    *f2 = p2 + rp_sip_eval(s->b, s->mb, u, v);
}

RP_DEVICE void rp_sip_pix_to_foc(const RpSip* s, double x, double y, double* f0, double* f1) {
    double a, b;
    rp_sip_pix1_to_foc1(s, x + 1.0, y + 1.0, &a, &b);
    *f0 = a - 1.0;
    *f1 = b - 1.0;
}

// Sip::invert with the SipInversion encoded (astropy's fixed-point iteration).
RP_OUTLINE void rp_sip_invert(const RpSip* s, double fx, double fy, double* ox, double* oy) {
    double x = fx, y = fy;
    if (s->ap_bp_guess && s->has_reverse) {
        double f1 = fx + 1.0, f2 = fy + 1.0;
        double u = f1 - s->crpix[0];
        double v = f2 - s->crpix[1];
        x = (f1 + rp_sip_eval(s->ap, s->map, u, v)) - 1.0;
        y = (f2 + rp_sip_eval(s->bp, s->mbp, u, v)) - 1.0;
    }
    double tol2 = s->tol * s->tol;
    double f0, f1;
    rp_sip_pix_to_foc(s, x, y, &f0, &f1);
    double dx = f0 - fx, dy = f1 - fy;
    x -= dx;
    y -= dy;
    double dn = dx * dx + dy * dy;
    double dn_prev = dn;
    int k = 1;
    while (dn >= tol2 && k < s->max_iter) {
        rp_sip_pix_to_foc(s, x, y, &f0, &f1);
        dx = f0 - fx;
        dy = f1 - fy;
        dn = dx * dx + dy * dy;
        if (dn >= dn_prev && dn >= tol2) break;
        dn_prev = dn;
        x -= dx;
        y -= dy;
        k++;
    }
    *ox = x;
    *oy = y;
}

// ---------------------------------------------------------------------------------------------
// TPV (src/wcs/distortion/tpv.rs).

RP_DEVICE int rp_tpv_xpow(int k) {
    // X_POW == DEG_START: first term of each total degree.
    const int t[8] = {0, 1, 4, 7, 12, 17, 24, 31};
    return t[k];
}

RP_DEVICE double rp_tpv_eval(const double* p, int n, int radial, double u, double v) {
    double h = p[rp_tpv_xpow(n)];
    for (int k = n - 1; k >= 1; k--) h = p[rp_tpv_xpow(k)] + u * h;
    double d = p[0] + u * h;
    if (n == 1) {
        d += v * p[2];
    } else {
        double hv = p[rp_tpv_xpow(n) + n];
        for (int k = n - 1; k >= 1; k--) hv = p[rp_tpv_xpow(k) + k] + v * hv;
        double y = 0.0;
        for (int a = n - 2; a >= 0; a--) {
            int top = n - 1 - a;
            // coeff(a + 1, b) = p[DEG_START[a + 1 + b] + b]
            double t = p[rp_tpv_xpow(a + 1 + top) + top];
            for (int b = top - 1; b >= 1; b--) t = p[rp_tpv_xpow(a + 1 + b) + b] + v * t;
            y = a == n - 2 ? t : t + u * y;
        }
        d += v * hv + u * y * v;
    }
    if (radial) {
        double s = u * u + v * v;
        double r = sqrt(s);
        double rr;
        if (n <= 2) {
            rr = p[3];
        } else if (n <= 4) {
            rr = p[3] + s * p[11];
        } else if (n <= 6) {
            rr = p[3] + s * (p[11] + s * p[23]);
        } else {
            rr = p[3] + s * (p[11] + s * (p[23] + s * p[39]));
        }
        d += r * rr;
    }
    return d;
}

RP_DEVICE void rp_tpv_distort(const RpTpv* t, double x0, double x1, double* d0, double* d1) {
    if (t->lat_first) {
        *d0 = rp_tpv_eval(t->c[0], t->degree[0], t->radial[0], x1, x0);
        *d1 = rp_tpv_eval(t->c[1], t->degree[1], t->radial[1], x0, x1);
    } else {
        *d0 = rp_tpv_eval(t->c[0], t->degree[0], t->radial[0], x0, x1);
        *d1 = rp_tpv_eval(t->c[1], t->degree[1], t->radial[1], x1, x0);
    }
}

// Tpv::undistort (WCSLIB disitr); 0 on success.
RP_OUTLINE int rp_tpv_undistort(const RpTpv* t, double d0, double d1, double* o0, double* o1) {
    const double TOL = 1.0e-13;
    const int ITERMAX = 30;
    double dis[2] = {d0, d1};
    double raw[2] = {d0, d1};
    int convergence = 0;
    for (int iter = 0; iter < ITERMAX; iter++) {
        double dcrd0[2];
        rp_tpv_distort(t, raw[0], raw[1], &dcrd0[0], &dcrd0[1]);
        convergence = 1;
        double delta[2];
        for (int j = 0; j < 2; j++) {
            delta[j] = dis[j] - dcrd0[j];
            double dd = fabs(dis[j]) < 1.0 ? delta[j] : delta[j] / dis[j];
            if (TOL < fabs(dd)) convergence = 0;
        }
        if (convergence) break;
        for (int j = 0; j < 2; j++) {
            delta[j] /= 2.0;
            if (fabs(delta[j]) < 1.0e-6) {
                delta[j] = delta[j] < 0.0 ? -1.0e-6 : 1.0e-6;
            } else if (1.0 < fabs(delta[j])) {
                delta[j] = delta[j] < 0.0 ? -1.0 : 1.0;
            }
        }
        if (iter < ITERMAX / 2) {
            double rcrd1[2] = {raw[0] + delta[0], raw[1] + delta[1]};
            double dcrd1[2];
            rp_tpv_distort(t, rcrd1[0], rcrd1[1], &dcrd1[0], &dcrd1[1]);
            for (int j = 0; j < 2; j++)
                raw[j] += (dis[j] - dcrd0[j]) * (delta[j] / (dcrd1[j] - dcrd0[j]));
        } else {
            double rcrd1[2] = {raw[0], raw[1]};
            for (int j = 0; j < 2; j++) {
                rcrd1[j] += delta[j];
                double dcrd1[2];
                rp_tpv_distort(t, rcrd1[0], rcrd1[1], &dcrd1[0], &dcrd1[1]);
                raw[j] += (dis[j] - dcrd0[j]) * (delta[j] / (dcrd1[j] - dcrd0[j]));
                rcrd1[j] -= delta[j];
            }
        }
    }
    if (!(convergence && rpw_finite(raw[0]) && rpw_finite(raw[1]))) return 1;
    *o0 = raw[0];
    *o1 = raw[1];
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Celestial transform (src/wcs/mod.rs CelestialTransform, distortion/mod.rs Distortion).

// Pixel (0-based, (lng, lat) order) → intermediate world coordinates.
RP_OUTLINE void rp_cel_pix_to_img(const RpCel* c, double x, double y, double* u, double* v) {
    if (!RP_CEL_HAS_DIS(c)) {
        rp_lin_pix1_to_img(&c->lin, x + 1.0, y + 1.0, u, v);
        return;
    }
    int lf = c->dis_lat_first;
    double p0 = lf ? y + 1.0 : x + 1.0;
    double p1 = lf ? x + 1.0 : y + 1.0;
    double f0 = p0, f1 = p1;
    if (c->has_sip) rp_sip_pix1_to_foc1(&c->sip, p0, p1, &f0, &f1);
    if (!RP_CEL_HAS_TPV(c)) {
        double a = lf ? f1 : f0, b = lf ? f0 : f1;
        rp_lin_pix1_to_img(&c->lin, a, b, u, v);
        return;
    }
    const RpTpv* t = &c->tpv;
    double t0 = f0 - t->crpix[0];
    double t1 = f1 - t->crpix[1];
    double q0 = (0.0 + t->pc[0] * t0) + t->pc[1] * t1;
    double q1 = (0.0 + t->pc[2] * t0) + t->pc[3] * t1;
    double d0, d1;
    rp_tpv_distort(t, q0, q1, &d0, &d1);
    double u0 = t->cdelt[0] * d0, u1 = t->cdelt[1] * d1;
    *u = lf ? u1 : u0;
    *v = lf ? u0 : u1;
}

// Intermediate → pixel (0-based, (lng, lat) order); 0 on success (finite result).
RP_OUTLINE int rp_cel_img_to_pix(const RpCel* c, double u, double v, double* x, double* y) {
    double a, b;
    if (!RP_CEL_HAS_DIS(c)) {
        rp_lin_img_to_pix(&c->lin, u, v, &a, &b);
    } else {
        int lf = c->dis_lat_first;
        double x0, x1;
        if (!RP_CEL_HAS_TPV(c)) {
            double s, t;
            rp_lin_img_to_pix(&c->lin, u, v, &s, &t);
            x0 = lf ? t : s;
            x1 = lf ? s : t;
        } else {
            const RpTpv* t = &c->tpv;
            double w0 = lf ? v : u, w1 = lf ? u : v;
            double d0 = w0 / t->cdelt[0], d1 = w1 / t->cdelt[1];
            double t0, t1;
            if (rp_tpv_undistort(t, d0, d1, &t0, &t1) != 0) return 1;
            double p0 = (t->crpix[0] + t->pc_inv[0] * t0) + t->pc_inv[1] * t1;
            double p1 = (t->crpix[1] + t->pc_inv[2] * t0) + t->pc_inv[3] * t1;
            x0 = p0 - 1.0;
            x1 = p1 - 1.0;
        }
        if (c->has_sip) {
            if (!(rpw_finite(x0) && rpw_finite(x1))) return 1;
            rp_sip_invert(&c->sip, x0, x1, &x0, &x1);
        }
        a = lf ? x1 : x0;
        b = lf ? x0 : x1;
    }
    if (!(rpw_finite(a) && rpw_finite(b))) return 1;
    *x = a;
    *y = b;
    return 0;
}

// SphericalRotation::native_to_celestial (WCSLIB sphx2s).
RP_OUTLINE void rp_sph_x2s(const double* eul, double phi, double theta, double* lng_out,
                          double* lat_out) {
    const double SPH_TOL = 1.0e-5;
    double lng, lat;
    if (eul[4] == 0.0) {
        if (eul[1] == 0.0) {
            double dlng = fmod(eul[0] + 180.0 - eul[2], 360.0);
            lng = phi + dlng;
            lat = theta;
        } else {
            double dlng = fmod(eul[0] + eul[2], 360.0);
            lng = dlng - phi;
            lat = -theta;
        }
    } else {
        double dphi = phi - eul[2];
        double sinthe = rpw_sind(theta), costhe = rpw_cosd(theta);
        double sinphi = rpw_sind(dphi), cosphi = rpw_cosd(dphi);
        double x = sinthe * eul[4] - costhe * eul[3] * cosphi;
        if (fabs(x) < SPH_TOL) x = -rpw_cosd(theta + eul[1]) + costhe * eul[3] * (1.0 - cosphi);
        double y = -costhe * sinphi;
        double dlng;
        if (x != 0.0 || y != 0.0) {
            dlng = rpw_atan2d(y, x);
        } else if (eul[1] < 90.0) {
            dlng = dphi + 180.0;
        } else {
            dlng = -dphi;
        }
        lng = eul[0] + dlng;
        if (fmod(dphi, 180.0) == 0.0) {
            lat = theta + cosphi * eul[1];
            if (lat > 90.0) lat = 180.0 - lat;
            if (lat < -90.0) lat = -180.0 - lat;
        } else {
            double z = sinthe * eul[3] + costhe * eul[4] * cosphi;
            if (fabs(z) > 0.99) {
                lat = copysign(rpw_acosd(sqrt(x * x + y * y)), z);
            } else {
                lat = rpw_asind(z);
            }
        }
    }
    // normalize
    if (eul[0] >= 0.0) {
        if (lng < 0.0) lng += 360.0;
    } else if (lng > 0.0) {
        lng -= 360.0;
    }
    if (lng > 360.0) {
        lng -= 360.0;
    } else if (lng < -360.0) {
        lng += 360.0;
    }
    *lng_out = lng;
    *lat_out = lat;
}

RP_DEVICE double rp_sph_norm_phi(double phi) {
    if (phi > 180.0) {
        phi -= 360.0;
    } else if (phi < -180.0) {
        phi += 360.0;
    }
    return phi;
}

// SphericalRotation::celestial_to_native (WCSLIB sphs2x).
RP_OUTLINE void rp_sph_s2x(const double* eul, double lng, double lat, double* phi_out,
                          double* theta_out) {
    const double SPH_TOL = 1.0e-5;
    if (eul[4] == 0.0) {
        if (eul[1] == 0.0) {
            double dphi = fmod(eul[2] - 180.0 - eul[0], 360.0);
            *phi_out = rp_sph_norm_phi(fmod(lng + dphi, 360.0));
            *theta_out = lat;
        } else {
            double dphi = fmod(eul[2] + eul[0], 360.0);
            *phi_out = rp_sph_norm_phi(fmod(dphi - lng, 360.0));
            *theta_out = -lat;
        }
        return;
    }
    double dlng = lng - eul[0];
    double sinlat = rpw_sind(lat), coslat = rpw_cosd(lat);
    double sinlng = rpw_sind(dlng), coslng = rpw_cosd(dlng);
    double x = sinlat * eul[4] - coslat * eul[3] * coslng;
    if (fabs(x) < SPH_TOL) x = -rpw_cosd(lat + eul[1]) + coslat * eul[3] * (1.0 - coslng);
    double y = -coslat * sinlng;
    double dphi;
    if (x != 0.0 || y != 0.0) {
        dphi = rpw_atan2d(y, x);
    } else if (eul[1] < 90.0) {
        dphi = dlng - 180.0;
    } else {
        dphi = -dlng;
    }
    *phi_out = rp_sph_norm_phi(fmod(eul[2] + dphi, 360.0));
    double theta;
    if (fmod(dlng, 180.0) == 0.0) {
        theta = lat + coslng * eul[1];
        if (theta > 90.0) theta = 180.0 - theta;
        if (theta < -90.0) theta = -180.0 - theta;
    } else {
        double z = sinlat * eul[3] + coslat * eul[4] * coslng;
        if (fabs(z) > 0.99) {
            theta = copysign(rpw_acosd(sqrt(x * x + y * y)), z);
        } else {
            theta = rpw_asind(z);
        }
    }
    *theta_out = theta;
}

// CelestialTransform::pixel_to_world; 0 on success.
RP_OUTLINE int rp_cel_pixel_to_world(const RpCel* c, double x, double y, double* lon,
                                    double* lat) {
    double a = c->swapped ? y : x, b = c->swapped ? x : y;
    double u, v, phi, theta;
    rp_cel_pix_to_img(c, a, b, &u, &v);
    if (rp_prj_x2s(&c->prj, u, v, &phi, &theta) != 0) return 1;
    rp_sph_x2s(c->eul, phi, theta, lon, lat);
    return 0;
}

// CelestialTransform::world_to_pixel; 0 on success.
RP_OUTLINE int rp_cel_world_to_pixel(const RpCel* c, double lon, double lat, double* x,
                                    double* y) {
    if (!(rpw_finite(lon) && rpw_finite(lat))) return 1;
    double phi, theta, u, v, a, b;
    rp_sph_s2x(c->eul, lon, lat, &phi, &theta);
    if (rp_prj_s2x(&c->prj, phi, theta, &u, &v) != 0) return 1;
    if (rp_cel_img_to_pix(c, u, v, &a, &b) != 0) return 1;
    *x = c->swapped ? b : a;
    *y = c->swapped ? a : b;
    return 0;
}

// CelestialTransform::pixel_to_native_vector; 0 on success.
RP_OUTLINE int rp_cel_pixel_to_native_vector(const RpCel* c, double x, double y, double v[3]) {
    double a = c->swapped ? y : x, b = c->swapped ? x : y;
    double u, w;
    rp_cel_pix_to_img(c, a, b, &u, &w);
    return rp_prj_x2v(&c->prj, u, w, v);
}

// CelestialTransform::native_vector_to_pixel; 0 on success.
RP_OUTLINE int rp_cel_native_vector_to_pixel(const RpCel* c, const double v[3], double* x,
                                            double* y) {
    double u, w, a, b;
    if (rp_prj_v2x(&c->prj, v, &u, &w) != 0) return 1;
    if (rp_cel_img_to_pix(c, u, w, &a, &b) != 0) return 1;
    *x = c->swapped ? b : a;
    *y = c->swapped ? a : b;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Frame change (FrameTransform::apply, src/wcs/frame_transform/mod.rs): a rotation, with FK4's
// E-terms removed before it and/or added after it.

RP_DEVICE double rp_wrap_360(double lon) {
    double w = fmod(lon, 360.0);
    if (w < 0.0) w += 360.0;  // rem_euclid
    return w >= 360.0 ? 0.0 : w;
}

RP_DEVICE double rp_dot3(const double* a, const double* b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

// FK4 -> FK4NoETerms: r' = r - A + (A.r) r, renormalised (eterms_remove).
RP_DEVICE void rp_eterms_remove(double* v, const double* a) {
    double d_orig = sqrt(rp_dot3(v, v));
    double r[3];
    for (int i = 0; i < 3; i++) r[i] = v[i] / d_orig;
    double ar = rp_dot3(a, r);
    double q[3];
    for (int i = 0; i < 3; i++) q[i] = r[i] - a[i] + ar * r[i];
    double s = d_orig / sqrt(rp_dot3(q, q));
    for (int i = 0; i < 3; i++) v[i] = q[i] * s;
}

// FK4NoETerms -> FK4: ten fixed-point iterations of r = (A + r0) / (1 + A.r) (eterms_add).
RP_DEVICE void rp_eterms_add(double* v, const double* a) {
    double d_orig = sqrt(rp_dot3(v, v));
    double r0[3], init[3], r[3];
    for (int i = 0; i < 3; i++) r0[i] = v[i] / d_orig;
    for (int i = 0; i < 3; i++) init[i] = a[i] + r0[i];
    for (int i = 0; i < 3; i++) r[i] = r0[i];
    for (int k = 0; k < 10; k++) {
        double d = 1.0 + rp_dot3(a, r);
        for (int i = 0; i < 3; i++) r[i] = init[i] / d;
    }
    double s = d_orig / sqrt(rp_dot3(r, r));
    for (int i = 0; i < 3; i++) v[i] = r[i] * s;
}

// FrameTransform::apply (never the identity here: equal frames carry no frame step).
RP_OUTLINE void rp_frame_apply(const RpPixelTransform* t, double lon, double lat,
                               double* lon_out, double* lat_out) {
    if (!(rpw_finite(lon) && rpw_finite(lat))) {
        *lon_out = *lat_out = RP_NAN;
        return;
    }
    const double* m = t->frame;
    double l = rpw_to_radians(lon), b = rpw_to_radians(lat);
    double sl = sin(l), cl = cos(l), sb = sin(b), cb = cos(b);
    double v[3] = {cb * cl, cb * sl, sb};
    if (RP_PT_HAS_ETERMS && t->remove_eterms) rp_eterms_remove(v, t->eterms_remove);
    double r[3];
    for (int i = 0; i < 3; i++) r[i] = m[3 * i] * v[0] + m[3 * i + 1] * v[1] + m[3 * i + 2] * v[2];
    if (RP_PT_HAS_ETERMS && t->add_eterms) rp_eterms_add(r, t->eterms_add);
    double lo = rpw_to_degrees(atan2(r[1], r[0]));
    double la = rpw_to_degrees(atan2(r[2], hypot(r[0], r[1])));
    *lon_out = rp_wrap_360(lo);
    *lat_out = la;
}

// ---------------------------------------------------------------------------------------------
// PixelTransform::map (src/pixel_transform.rs); 0 on success.

RP_DEVICE int rp_through_the_sky(const RpPixelTransform* t, double x, double y, double* px,
                                 double* py) {
    double lon, lat;
    if (rp_cel_pixel_to_world(&t->out, x, y, &lon, &lat) != 0) return 1;
    if (RP_PT_HAS_FRAME(t)) rp_frame_apply(t, lon, lat, &lon, &lat);
    return rp_cel_world_to_pixel(&t->in, lon, lat, px, py);
}

// One non-celestial axis (src/wcs/plane.rs AxisWorld): intermediate -> world and back.
RP_DEVICE double rp_axis_to_world(int log_axis, double crval, double x) {
    return log_axis ? crval * exp(x / crval) : crval + x;
}

// A logarithmic axis has no intermediate coordinate at a world value <= 0 (WCSLIB's logs2x).
RP_DEVICE double rp_axis_to_intermediate(int log_axis, double crval, double w) {
    if (!log_axis) return w - crval;
    return w > 0.0 ? crval * log(w / crval) : RP_NAN;
}

// Kind 3: output plane -> world values -> the input's units -> input plane.
RP_DEVICE int rp_linear_planes(const RpPixelTransform* t, double x, double y, double* px,
                               double* py) {
    double u, v;
    rp_lin_pix1_to_img(&t->out.lin, x + 1.0, y + 1.0, &u, &v);
    double a = rp_axis_to_world(t->wkind[0][0], t->wcrval[0][0], u) * t->factor[0];
    double b = rp_axis_to_world(t->wkind[0][1], t->wcrval[0][1], v) * t->factor[1];
    u = rp_axis_to_intermediate(t->wkind[1][0], t->wcrval[1][0], a);
    v = rp_axis_to_intermediate(t->wkind[1][1], t->wcrval[1][1], b);
    rp_lin_img_to_pix(&t->in.lin, u, v, &a, &b);
    if (!(rpw_finite(a) && rpw_finite(b))) return 1;
    *px = a;
    *py = b;
    return 0;
}

// Kind 1: through the native unit vectors (the rotation R), or through the sky next to a pole.
RP_DEVICE int rp_vector_map(const RpPixelTransform* t, double x, double y, double* px,
                            double* py) {
    double v[3];
    if (rp_cel_pixel_to_native_vector(&t->out, x, y, v) != 0) return 1;
    const double* m = t->rot;
    double w[3] = {
        m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
        m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
        m[6] * v[0] + m[7] * v[1] + m[8] * v[2],
    };
    if (fabs(w[0]) + fabs(w[1]) < RP_POLE * fabs(w[2])) return rp_through_the_sky(t, x, y, px, py);
    return rp_cel_native_vector_to_pixel(&t->in, w, px, py);
}

RP_OUTLINE int rp_pt_map(const RpPixelTransform* t, double x, double y, double* px, double* py) {
    // A sky variant's setup admits kind 1 only (rp_sky_variant_admits).
    if (RP_SKY_VARIANT) return rp_vector_map(t, x, y, px, py);
    if (t->kind == 3) return rp_linear_planes(t, x, y, px, py);
    if (t->kind == 0) {
        const double* h = t->h;
        double w = h[6] * x + h[7] * y + h[8];
        if (w != w || w <= 0.0) return 1;
        double a = (h[0] * x + h[1] * y + h[2]) / w;
        double b = (h[3] * x + h[4] * y + h[5]) / w;
        if (!(rpw_finite(a) && rpw_finite(b))) return 1;
        *px = a;
        *py = b;
        return 0;
    }
    if (t->kind == 1) return rp_vector_map(t, x, y, px, py);
    return rp_through_the_sky(t, x, y, px, py);
}

#endif  // RP_WITH_SKY

// ---------------------------------------------------------------------------------------------
// CoordinateMap (src/engine/coords.rs): the input position of output pixel (x column, y row)
// of an input plane of in_ny x in_nx pixels: 0 where it has none, is outside [-0.5, n - 0.5)
// or fails the round-trip check; else 1, with the position in (px, py) (in that range: the
// samplers rely on it). (px, py) are not to be read after a 0.

RP_DEVICE int rp_block_coord(const RpTransform* t, int in_ny, int in_nx, double x, double y,
                             double* px, double* py) {
    double x_hi = (double)in_nx - 0.5, y_hi = (double)in_ny - 0.5;
    const RpPixelTransform* f = &t->forward;
    // A homography build's setup refuses any other forward transform, so it needs no test
    // (bilinear: 40 registers instead of 48 on sm_90). The builds with nearest neighbour keep
    // it: without it ptxas gives them 34 registers instead of 32 (75% occupancy, not 100%).
    if ((!RP_WITH_SKY && !RP_WITH_NEAREST) || f->kind == 0) {
        // The block loop of block_coords: per-row constants, one reciprocal.
        const double* h = f->h;
        double cw = h[7] * y + h[8], ca = h[1] * y + h[2], cb = h[4] * y + h[5];
        double w = h[6] * x + cw;
        double inv_w = 1.0 / w;
        double a = (h[0] * x + ca) * inv_w;
        double b = (h[3] * x + cb) * inv_w;
        *px = a;
        *py = b;
        return (w > 0.0) & (a >= -0.5) & (a < x_hi) & (b >= -0.5) & (b < y_hi);
    }
#if !RP_WITH_SKY
    // Unreachable: a homography variant's setup refuses any other forward transform.
    return 0;
#else
    double a, b;
    if (rp_pt_map(f, x, y, &a, &b) != 0 || !(a >= -0.5 && a < x_hi && b >= -0.5 && b < y_hi))
        return 0;
    if (t->has_backward) {
        double bx, by;
        if (rp_pt_map(&t->backward, a, b, &bx, &by) == 0) {
            if (fabs(bx - x) > 1.0 || fabs(by - y) > 1.0) return 0;
        }
    }
    *px = a;
    *py = b;
    return 1;
#endif
}
