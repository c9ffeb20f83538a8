// The accumulate kernel of mosaics combined on the device: one input's samples over a part of
// an output block added into the block's accumulators, as `Target::add`
// (src/mosaic/coadd/combine.rs) adds them on the CPU, operation for operation
// (`--fmad=false`), so the sums have the CPU's bits. The host divides and blanks once every
// input is in.
//
// Needs common.cuh before it, and reproject.cu (the host build's thread indices).

// What one launch does (`op`).
#define RP_ACC_FILL 0   // every accumulator pixel: data = c0, footprint = 0
#define RP_ACC_MEAN 1   // data += v' * w, footprint += w (v' = 0 where w == 0)
#define RP_ACC_SUM 2    // as mean (the host does not divide)
#define RP_ACC_FIRST 3  // where footprint == 0: data = v', footprint = w
#define RP_ACC_LAST 4   // where w > 0: data = v', footprint = w
#define RP_ACC_MIN 5    // where w > 0 and v' < data: data = v', footprint = w
#define RP_ACC_MAX 6    // where w > 0 and v' > data: data = v', footprint = w

// The background correction (`correction`) at output pixel (x, y): 0 none; 1 the constant
// c0; 2 the plane c0 + c1 * x + c2 * y (added in that order, as `Correction::at`).
RP_DEVICE double rp_correction_at(int correction, double c0, double c1, double c2, int x,
                                  int y) {
    if (correction == 2) return c0 + c1 * (double)x + c2 * (double)y;
    return correction == 1 ? c0 : 0.0;
}

// One thread per pixel (row, column) of the part, for every plane.
//
// `values` holds the input's samples over the part (planes x part_ny x part_nx, C order, NaN
// where the input has none: the block kernel's float64 output), or is NULL when the input has
// none there (every sample NaN); `weights` the reprojected
// weights in the same layout, or NULL (weight 1). Part element (0, 0) is output pixel
// (part_y0, part_x0) and block element (blk_r0, blk_c0); `data` and `footprint` are the block's
// accumulators (planes x blk_ny x blk_nx, C order). With `op` RP_ACC_FILL, `values` and
// `weights` are not read and the part is the whole block.
RP_GLOBAL void rp_accumulate(const double* values, const double* weights, int op,
                             int correction, double c0, double c1, double c2, int planes,
                             int part_ny, int part_nx, int part_y0, int part_x0, int blk_r0,
                             int blk_c0, int blk_ny, int blk_nx, double* data,
                             double* footprint) {
    int c = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int r = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (r >= part_ny || c >= part_nx) return;
    double correction_here = rp_correction_at(correction, c0, c1, c2, part_x0 + c, part_y0 + r);
    long long part_plane = (long long)part_ny * part_nx;
    long long blk_plane = (long long)blk_ny * blk_nx;
    long long at_part = (long long)r * part_nx + c;
    double* d = data + (long long)(blk_r0 + r) * blk_nx + (blk_c0 + c);
    double* f = footprint + (d - data);
    for (int p = 0; p < planes; p++, d += blk_plane, f += blk_plane, at_part += part_plane) {
        if (op == RP_ACC_FILL) {
            *d = c0;
            *f = 0.0;
            continue;
        }
        // The input's sample and weight as the CPU prepares them: no value, or a NaN weight,
        // is a zero value of zero weight.
        double v = 0.0, w = 0.0;
        if (values) {
            v = values[at_part];
            w = weights ? weights[at_part] : 1.0;
            if (v != v || w != w) {
                v = 0.0;
                w = 0.0;
            }
        }
        double vc = correction != 0 ? v - correction_here : v;
        if (op == RP_ACC_MEAN || op == RP_ACC_SUM) {
            *d += (w == 0.0 ? 0.0 : vc) * w;
            *f += w;
            continue;
        }
        int take = op == RP_ACC_FIRST  ? *f == 0.0
                   : op == RP_ACC_LAST ? w > 0.0
                   : op == RP_ACC_MIN  ? (w > 0.0 && vc < *d)
                                       : (w > 0.0 && vc > *d);
        if (take) {
            *f = w;
            *d = vc;
        }
    }
}
