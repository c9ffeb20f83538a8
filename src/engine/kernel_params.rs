//! Flat `f64` parameter arrays describing a plan's pixel transform and sampling, as the CUDA
//! kernels in `kernels/` read them.
//!
//! Two arrays travel to the device with every plan: the transform (`encode_transform`,
//! parsed by `rp_transform_setup` in `kernels/wcs.cuh`) and the sampling
//! (`encode_sampling`, parsed by `rp_sampling_setup` in `kernels/interp.cuh`). Integers and
//! flags are stored as exact doubles. Only numbers cross over: derived values that the CPU
//! engine precomputes (the homography, the rotation matrices, the inverse linear matrices, the
//! Euler angles) are sent as the CPU computed them, so the device starts from the same bits.
//!
//! # Transform layout
//!
//! ```text
//! transform := version (= 1), total length, has_backward, PT(forward), [PT(backward)]
//! PT        := kind (0 homography, 1 vector, 2 general, 3 linear planes),
//!              kind 0: H (9, row-major)
//!              kind 1: CEL(out), CEL(in), R (9, row-major), has_frame, [FRAME]
//!              kind 2: CEL(out), CEL(in), has_frame, [FRAME]
//!              kind 3: LIN2(out), AXES(out), factors (2), LIN2(in), AXES(in)
//! LIN2      := crpix (2), m (4), inv (4), unity, cdelt (2)           Linear2
//! AXES      := 2 × (log (0 linear, 1 logarithmic), crval)           plane::AxisWorld
//! FRAME     := M (9, row-major), has_remove_eterms, [A (3)], has_add_eterms, [A (3)]
//! CEL       := swapped (latitude axis first),
//!              LIN2
//!              projection (35 values, Projection::device_params)
//!              euler (5)                                             SphericalRotation
//!              has_distortion, [DIS]
//! DIS       := lat_first, has_sip, [SIP], has_tpv, [TPV]
//! SIP       := crpix (2), tolerance, max_iter, ap_bp_guess,
//!              order_a, A ((order_a+1)², row-major [p][q]), order_b, B,
//!              has_reverse, [order_ap, AP, order_bp, BP]
//! TPV       := crpix (2), pc (4), pc_inv (4), cdelt (2), lat_first,
//!              2 × (degree, radial, c (40))
//! ```
//!
//! `FRAME` is the frame change (`FrameTransform::apply`: FK4 E-terms removed, rotation `M`,
//! E-terms added), used where the vector path falls back to spherical coordinates at a native
//! pole and by the general path (which plans take for FK4 frames, whose change is not a
//! rotation). The backward
//! transform is present when the plan checks round trips (reproject's `roundtrip_coords`) and
//! the forward one is not the homography.
//!
//! # Sampling layout
//!
//! ```text
//! [0] order (0..5)            [1] NaN policy (0 Propagate, 1 Renormalize)
//! [2] values to float32       [3] result to float32
//! [4] has_scale  [5] zero (BZERO)  [6] scale (BSCALE): value = zero + scale · sample
//! [7] has_blank  [8] BLANK >> 32 (signed)  [9] BLANK & 0xffffffff
//! ```
//!
//! For orders ≥ 2 the kernel samples prefiltered f64 coefficients (made on the device by
//! `kernels/spline.cu`, or the CPU's in window mode), so decoding and the float32 cast of
//! values are off there (they happened before the prefilter).

use std::ops::Range;

use super::blocks::Block;
use super::Plan;
use crate::error::Result;
use crate::interp::NanPolicy;
use crate::pixel_transform::{Kind, PixelTransform};
use crate::wcs::linear::Linear2;
use crate::wcs::plane::{AxisWorld, LinearPlane};
use crate::wcs::CelestialTransform;

/// Version of the transform layout (first value of the array).
pub(crate) const TRANSFORM_VERSION: f64 = 1.0;

/// Number of values in the sampling array.
pub(crate) const SAMPLING_LEN: usize = 10;

pub use crate::io::InputDecoding;

/// Whether the GPU kernels reproduce the CPU engine for `plan`, and why not: the one rule
/// the device path asks. CPU-only: interpolation beyond the image plane, the approximate
/// transform, NaN renormalisation for orders ≥ 2 (it needs the prefiltered mask as a second
/// input), and transforms the kernels do not encode (positions given in a table, spectral
/// algorithm codes, time-reference offsets).
pub(crate) fn kernel_support(plan: &Plan) -> std::result::Result<(), String> {
    encode_transform_checked(plan).map(|_| ())
}

/// The transform of `plan` as `kernels/wcs.cuh` reads it, or `None` where the kernels cannot
/// reproduce the CPU engine ([`kernel_support`]). The runtime then computes that plan on the
/// CPU.
pub(crate) fn encode_transform(plan: &Plan) -> Option<Vec<f64>> {
    encode_transform_checked(plan).ok()
}

/// The longest input plane side the block kernel reads (`kernels/reproject.cu` reads nothing
/// from a longer one: 2^31 - 256, so that the spline taps' 32-bit indices cannot overflow).
const MAX_INPUT_SIDE: usize = 0x7fff_ff00;

/// [`kernel_support`]'s checks, and the transform array when they pass (encoded once).
fn encode_transform_checked(plan: &Plan) -> std::result::Result<Vec<f64>, String> {
    let view = plan.kernel_view();
    let options = plan.options();
    let ((in_ny, in_nx), (ny, nx)) = (plan.plane_shape_in, plan.plane_shape_out());
    if [in_ny, in_nx, ny, nx]
        .iter()
        .any(|&n| i32::try_from(n).is_err())
    {
        return Err(format!(
            "planes of {in_ny}x{in_nx} (input) and {ny}x{nx} (output) pixels: the kernels \
             index rows and columns with 32-bit integers"
        ));
    }
    if in_ny.max(in_nx) > MAX_INPUT_SIDE {
        return Err(format!(
            "an input plane of {in_ny}x{in_nx} pixels: the kernels read sides of up to \
             {MAX_INPUT_SIDE} pixels (32-bit spline tap indices run a few past a side)"
        ));
    }
    if view.interpolates_beyond_plane {
        return Err("interpolation along the axes beyond the image plane is CPU-only".into());
    }
    let (forward, backward, approximate) = view.coords.parts();
    if approximate.is_some() {
        return Err("the approximate transform is CPU-only".into());
    }
    if options.nan_policy == NanPolicy::Renormalize && options.order.needs_prefilter() {
        return Err("spline orders with nan_policy Renormalize are CPU-only".into());
    }
    encode_transforms(forward, backward).ok_or_else(|| {
        "this transform (positions given in a table, distortion lookup tables, a spectral \
         algorithm code or a time reference offset) is CPU-only"
            .into()
    })
}

/// The transform array for an explicit forward (output → input pixels) and optional backward
/// transform (the round-trip check).
pub(crate) fn encode_transforms(
    forward: &PixelTransform,
    backward: Option<&PixelTransform>,
) -> Option<Vec<f64>> {
    let mut v = vec![TRANSFORM_VERSION, 0.0, flag(backward.is_some())];
    encode_pixel_transform(forward, &mut v)?;
    if let Some(b) = backward {
        encode_pixel_transform(b, &mut v)?;
    }
    v[1] = v.len() as f64;
    Some(v)
}

/// The sampling array of `plan` for input samples decoded as `decoding` says.
pub(crate) fn encode_sampling(plan: &Plan, decoding: &InputDecoding) -> Vec<f64> {
    let view = plan.kernel_view();
    let (values_f32, result_f32) = (view.values_f32, view.result_f32);
    let options = plan.options();
    let raw = !options.order.needs_prefilter();
    let (has_scale, zero, scale) = match decoding.scale {
        Some((z, s)) if raw => (1.0, z, s),
        _ => (0.0, 0.0, 1.0),
    };
    let (has_blank, hi, lo) = match decoding.blank {
        Some(b) if raw => (1.0, (b >> 32) as f64, (b & 0xffff_ffff) as f64),
        _ => (0.0, 0.0, 0.0),
    };
    let renormalize = options.nan_policy == NanPolicy::Renormalize;
    let v: [f64; SAMPLING_LEN] = [
        options.order.degree() as f64,
        flag(renormalize),
        flag(values_f32 && raw),
        flag(result_f32),
        has_scale,
        zero,
        scale,
        has_blank,
        hi,
        lo,
    ];
    v.to_vec()
}

fn flag(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

fn push_mat3(v: &mut Vec<f64>, m: &[[f64; 3]; 3]) {
    v.extend(m.iter().flatten());
}

/// Appends `t`; `None` for positions given in a table, which the kernels do not read.
fn encode_pixel_transform(t: &PixelTransform, v: &mut Vec<f64>) -> Option<()> {
    match t.kind() {
        Kind::Homography(h) => {
            v.push(0.0);
            push_mat3(v, h);
        }
        Kind::Vector {
            wcs_out,
            wcs_in,
            rotation,
            frame,
        } => {
            v.push(1.0);
            encode_celestial(wcs_out, v)?;
            encode_celestial(wcs_in, v)?;
            push_mat3(v, rotation);
            encode_frame(frame.as_deref(), v);
        }
        Kind::General {
            wcs_out,
            wcs_in,
            frame,
        } => {
            v.push(2.0);
            encode_celestial(wcs_out, v)?;
            encode_celestial(wcs_in, v)?;
            encode_frame(frame.as_deref(), v);
        }
        Kind::Table(_) => return None,
        Kind::Linear {
            out,
            inp,
            conversions,
        } => {
            // The kernels scale world values; time-reference offsets stay on the CPU.
            if conversions.iter().any(|c| c.offset != 0.0) {
                return None;
            }
            v.push(3.0);
            encode_linear2(out.linear(), v);
            encode_plane_axes(out, v)?;
            v.extend(conversions.map(|c| c.factor));
            encode_linear2(inp.linear(), v);
            encode_plane_axes(inp, v)?;
        }
    }
    Some(())
}

fn encode_frame(frame: Option<&crate::wcs::frame_transform::FrameTransform>, v: &mut Vec<f64>) {
    let Some(f) = frame else {
        v.push(0.0);
        return;
    };
    let (remove, m, add) = f.steps();
    v.push(1.0);
    push_mat3(v, &m);
    for a in [remove, add] {
        v.push(flag(a.is_some()));
        v.extend(a.iter().flatten());
    }
}

fn encode_linear2(lin: &Linear2, v: &mut Vec<f64>) {
    v.extend(lin.crpix());
    v.extend(lin.matrix().iter().flatten());
    v.extend(lin.inverse().iter().flatten());
    let unity = lin.unity_cdelt();
    v.push(flag(unity.is_some()));
    v.extend(unity.unwrap_or([0.0, 0.0]));
}

/// Appends the world axes of `plane`; `None` for spectral algorithms, which the kernels do
/// not evaluate.
fn encode_plane_axes(plane: &LinearPlane, v: &mut Vec<f64>) -> Option<()> {
    for axis in plane.world() {
        match axis {
            AxisWorld::Linear(crval) => v.extend([0.0, crval]),
            AxisWorld::Log(crval) => v.extend([1.0, crval]),
            AxisWorld::Spectral(_) => return None,
        }
    }
    Some(())
}

/// Appends `c`; `None` for distortion lookup tables and an emulated astropy call, which the
/// kernels do not evaluate.
fn encode_celestial(c: &CelestialTransform, v: &mut Vec<f64>) -> Option<()> {
    v.push(flag(c.pixel_axes_swapped()));
    encode_linear2(c.linear(), v);
    v.extend(c.projection().device_params());
    v.extend(c.rotation().euler());
    let Some(d) = c.distortion() else {
        v.push(0.0);
        return Some(());
    };
    if d.lookup_tables().is_some() || d.grid_schedule().is_some() {
        return None;
    }
    v.push(1.0);
    v.push(flag(d.lat_first()));
    match d.sip() {
        None => v.push(0.0),
        Some(sip) => {
            v.push(1.0);
            v.extend(sip.crpix());
            let how = d.sip_inversion();
            v.push(how.tolerance);
            v.push(how.max_iter as f64);
            v.push(flag(how.ap_bp_guess));
            let [forward, reverse] = sip.polynomials();
            // An inactive SIP (no forward polynomials) never reaches a Distortion.
            let ((ma, a), (mb, b)) = forward.unwrap_or(((0, &[0.0]), (0, &[0.0])));
            for (m, c) in [(ma, a), (mb, b)] {
                v.push(m as f64);
                v.extend_from_slice(c);
            }
            match reverse {
                None => v.push(0.0),
                Some(((map, ap), (mbp, bp))) => {
                    v.push(1.0);
                    for (m, c) in [(map, ap), (mbp, bp)] {
                        v.push(m as f64);
                        v.extend_from_slice(c);
                    }
                }
            }
        }
    }
    match d.tpv() {
        None => v.push(0.0),
        Some((lin, tpv)) => {
            v.push(1.0);
            v.extend(lin.crpix());
            v.extend(lin.pc().iter().flatten());
            v.extend(lin.pc_inverse().iter().flatten());
            v.extend(lin.cdelt());
            v.push(flag(tpv.lat_first()));
            for p in tpv.polynomials() {
                let (radial, c) = p.terms();
                v.push(p.degree() as f64);
                v.push(flag(radial));
                v.extend_from_slice(c);
            }
        }
    }
    Some(())
}

/// What the GPU-free parity test (tests/gpu_host_pipeline.rs) feeds the host build of the
/// kernels for one block: both flat arrays, the input window the CPU engine reads, the plane's
/// spline coefficients (orders ≥ 2) and the CPU engine's input positions.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct HostParityInputs {
    /// [`encode_transform`]'s array.
    pub transform: Vec<f64>,
    /// [`encode_sampling`]'s array.
    pub sampling: Vec<f64>,
    /// Input rows of the window (empty when no pixel of the block sees the input).
    pub window_rows: Range<usize>,
    /// Input columns of the window.
    pub window_cols: Range<usize>,
    /// The plan's spline coefficients over the whole plane, row-major (orders ≥ 2, where a
    /// pixel of the block sees the input): the window is cut from it, and a device-resident
    /// plane's window is all of it.
    pub plane_coefficients: Option<Vec<f64>>,
    /// The CPU engine's input columns of the block's pixels, row-major (NaN: none).
    pub xs: Vec<f64>,
    /// The CPU engine's input rows.
    pub ys: Vec<f64>,
}

/// The inputs of the host parity test for `block` of input plane `plane` of `plan`, decoding
/// raw samples as `decoding` says; `Ok(None)` when [`encode_transform`] declines the plan.
///
/// ```
/// use reproject::engine::{blocks::Block, Options, Plan};
/// use reproject::engine::kernel_params::{host_parity_inputs, InputDecoding};
/// use reproject::io::ArraySource;
/// use reproject::wcs::Wcs;
/// let wcs = Wcs::from_header_str(
///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 10\nCRVAL2 = 20\n\
///      CDELT1 = -0.01\nCDELT2 = 0.01\n",
/// )
/// .unwrap();
/// let image = ndarray::Array2::<f64>::zeros((8, 8));
/// let source = ArraySource::new(image.view().into_dyn()).unwrap();
/// let plan = Plan::new(&source, &wcs, &wcs, &[8, 8], &Options::default()).unwrap();
/// let block = Block { rows: 0..4, cols: 0..8 };
/// let p = host_parity_inputs(&plan, &block, 0, &InputDecoding::default()).unwrap().unwrap();
/// assert_eq!(p.transform[0], 1.0);
/// assert_eq!(p.xs.len(), 32);
/// ```
#[doc(hidden)]
pub fn host_parity_inputs(
    plan: &Plan,
    block: &Block,
    plane: usize,
    decoding: &InputDecoding,
) -> Result<Option<HostParityInputs>> {
    let Some(transform) = encode_transform(plan) else {
        return Ok(None);
    };
    let sampling = encode_sampling(plan, decoding);
    let coords = plan.kernel_view().coords;
    let n = block.len();
    let (mut xs, mut ys) = (vec![0.0; n], vec![0.0; n]);
    let bounds = coords.block_coords(block, &mut xs, &mut ys);
    let (window_rows, window_cols, plane_coefficients) = match bounds {
        None => (0..0, 0..0, None),
        Some(b) => {
            let (w, c) = plan.gpu_window(b, plane)?;
            (w.rows, w.cols, c.map(|c| c.iter().copied().collect()))
        }
    };
    Ok(Some(HostParityInputs {
        transform,
        sampling,
        window_rows,
        window_cols,
        plane_coefficients,
        xs,
        ys,
    }))
}

/// The transform array of an explicit pair of pixel transforms (e.g.
/// [`PixelTransform::general`], which plans never use), for the parity test of the paths a
/// plan does not pick by itself.
#[doc(hidden)]
pub fn host_parity_transform(
    forward: &PixelTransform,
    backward: Option<&PixelTransform>,
) -> Option<Vec<f64>> {
    encode_transforms(forward, backward)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_halves_rebuild_the_integer() {
        for b in [i64::MIN, -32768, -1, 0, 7, 1 << 40, i64::MAX] {
            let (hi, lo) = ((b >> 32) as f64, (b & 0xffff_ffff) as f64);
            let back = ((hi as i64 as u64) << 32) | lo as u64;
            assert_eq!(back as i64, b);
        }
    }

    /// The one rule of what the kernels cover: linear planes yes; positions given in a
    /// table, spectral algorithm codes and time-reference offsets no, each with its reason.
    #[test]
    fn kernel_support_names_what_stays_on_the_cpu() {
        use crate::engine::Options;
        use crate::io::ArraySource;
        use crate::pixel_transform::PositionTable;
        use crate::wcs::Wcs;
        let image = ndarray::Array2::<f64>::zeros((8, 8));
        let source = ArraySource::new(image.view().into_dyn()).unwrap();
        let options = Options::default();
        let pair = |a: &str, b: &str| {
            (
                Wcs::from_header_str(a).unwrap(),
                Wcs::from_header_str(b).unwrap(),
            )
        };
        let support = |a: &str, b: &str| {
            let (w_in, w_out) = pair(a, b);
            kernel_support(&Plan::new(&source, &w_in, &w_out, &[6, 6], &options).unwrap())
        };
        let pix = "CTYPE1 = 'PIXX'\nCTYPE2 = 'PIXY'\nCDELT1 = 1.1\n";
        assert_eq!(support(pix, pix), Ok(()));
        let f2w = "CTYPE1 = 'PIXX'\nCTYPE2 = 'WAVE-F2W'\nCRVAL2 = 5E-7\nCDELT2 = 1E-9\n";
        assert!(support(f2w, f2w).unwrap_err().contains("CPU-only"));
        let time = |mjd: f64| format!("CTYPE1 = 'PIXX'\nCTYPE2 = 'TIME'\nMJDREF = {mjd}\n");
        assert!(support(&time(59000.0), &time(59000.0)).is_ok());
        assert!(support(&time(59000.0), &time(59000.5))
            .unwrap_err()
            .contains("time"));
        let table = PositionTable::new((6, 6), vec![1.0; 36], vec![2.0; 36]).unwrap();
        let plan = Plan::from_positions(&source, table, &[6, 6], &options).unwrap();
        assert!(kernel_support(&plan).unwrap_err().contains("table"));
        // Distortion lookup tables (CPDIS, D2IM) are evaluated on the CPU only.
        use crate::wcs::distortion::{LookupTable, LookupTables};
        let sky = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 5\nCRVAL2 = 5\n\
                   CDELT1 = -0.01\nCDELT2 = 0.01\n";
        let (w_in, w_out) = pair(sky, sky);
        assert_eq!(
            kernel_support(&Plan::new(&source, &w_in, &w_out, &[6, 6], &options).unwrap()),
            Ok(())
        );
        let half = LookupTable::new(vec![0.5], [1, 1], [1.0; 2], [0.0; 2], [1.0; 2]).unwrap();
        let tables = LookupTables {
            cpdis: [Some(half), None],
            ..Default::default()
        };
        let w_in = w_in.with_lookup_tables(tables).unwrap();
        let plan = Plan::new(&source, &w_in, &w_out, &[6, 6], &options).unwrap();
        assert!(kernel_support(&plan).unwrap_err().contains("lookup tables"));
        // Planes beyond 32-bit row or column indices (a 2^31-row output strip).
        let (w_in, w_out) = pair(pix, pix);
        let tall = Plan::new(&source, &w_in, &w_out, &[1 << 31, 1], &options).unwrap();
        assert!(kernel_support(&tall).unwrap_err().contains("32-bit"));
        let fits = Plan::new(&source, &w_in, &w_out, &[(1 << 31) - 1, 1], &options).unwrap();
        assert_eq!(kernel_support(&fits), Ok(()));
        // An input plane with a side past the kernels' limit (no pixels needed to plan it).
        for (side, ok) in [(MAX_INPUT_SIDE, true), (MAX_INPUT_SIDE + 1, false)] {
            let long = ShapeOnly(vec![1, side]);
            let plan = Plan::new(&long, &w_in, &w_out, &[6, 6], &options).unwrap();
            let support = kernel_support(&plan);
            assert_eq!(support.is_ok(), ok, "{side}: {support:?}");
            if !ok {
                assert!(support.unwrap_err().contains("sides of up to"));
            }
        }
    }

    /// A float64 source of a shape and no pixels.
    struct ShapeOnly(Vec<usize>);

    impl crate::io::ImageSource for ShapeOnly {
        fn shape(&self) -> &[usize] {
            &self.0
        }

        fn stored_type(&self) -> crate::io::StoredType {
            crate::io::StoredType {
                sample: crate::io::SampleType::F64,
                big_endian: false,
                scaled: false,
            }
        }

        fn read_window(
            &self,
            _plane: usize,
            _rows: std::ops::Range<usize>,
            _cols: std::ops::Range<usize>,
            _out: &mut [f64],
        ) -> crate::error::Result<()> {
            unreachable!("planning reads no pixels")
        }
    }
}
