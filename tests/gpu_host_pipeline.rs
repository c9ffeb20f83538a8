//! The CUDA reprojection kernels (`kernels/*.cuh`, `kernels/reproject.cu`) compiled as host
//! C++ and compared with the CPU engine, so the GPU pipeline is checked on machines without a
//! GPU.
//!
//! `kernels/host/pipeline_harness.cpp` runs `rp_reproject_block` thread by thread over a block
//! with the arrays of `reproject::engine::kernel_params` and the same input window as the CPU engine;
//! this test compares its values, footprints and input positions with
//! `Plan::compute_block` for every projection family, SIP, TPV, frame changes, orders 0–3,
//! float32/float64 output, NaN input pixels, big-endian and integer input and blocks at the
//! image edges. Acceptance (issue 7): values within 1e-9 relative, input positions within
//! 1e-9 px, footprints identical except for pixels whose position lies within 1e-9 px of the
//! edge of the input (counted and printed).
//!
//! Needs a C++ compiler (`$CXX`, `c++`, `g++` or `clang++`) and the WCS test vectors
//! (`$WCS_VECTORS`, or `../shared/wcs-vectors` beside the checkout; a case missing from them is
//! a failure). Without a compiler or without the vectors the tests fail in CI (`$CI` set) and
//! with `REPROJECT_RS_REQUIRE_HOST_KERNELS=1` (which `scripts/test.sh` sets), and elsewhere
//! skip with a message saying why (see `tests/common/mod.rs`).
//! `RP_HOST_INCLUDE=DIR` puts `DIR` first on the harness's include path (to try kernel files
//! from elsewhere).

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use ndarray::Array3;
use reproject::engine::blocks::Block;
use reproject::engine::kernel_params::{host_parity_inputs, host_parity_transform, InputDecoding};
use reproject::engine::kernel_variant::{KernelVariant, VariantNan, VariantOutput};
use reproject::engine::{Options, Plan, Precision};
use reproject::gpu::variant::KernelDefines;
use reproject::interp::kernel::mirror_index;
use reproject::interp::{NanPolicy, Order};
use reproject::io::{ByteOrder, ImageSource, RawSource, SampleType};
use reproject::pixel_transform::PixelTransform;
use reproject::wcs::frame::CelestialFrame;
use reproject::wcs::frame_transform::FrameTransform;
use reproject::wcs::Wcs;

mod common;

const REL_TOL: f64 = 1e-9;
const PX_TOL: f64 = 1e-9;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Compiles the harness once; `None` (skipped with a message, or a failure where the host
/// kernels are required) when there is no C++ compiler.
fn harness() -> Option<&'static Path> {
    static BIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    BIN.get_or_init(|| build_harness(false, &KernelDefines::general()))
        .as_deref()
}

/// The harness with every transcendental function moved by an ulp on half of its arguments
/// (kernels/host/perturbed_libm.h), standing in for CUDA's libm.
fn perturbed_harness() -> Option<&'static Path> {
    PERTURBED
        .get_or_init(|| build_harness(true, &KernelDefines::general()))
        .as_deref()
}

static PERTURBED: OnceLock<Option<PathBuf>> = OnceLock::new();

/// The harness built with a kernel variant's defines (as the runtime compiles it), or with a
/// pattern's (`*` values taken on the command line, as the CUDA simulator's host builds take
/// them), with the libm of `bin` (the plain or the perturbed harness); built once each. For
/// the general kernel, `bin` itself.
fn variant_harness(bin: &Path, variant: &KernelDefines) -> PathBuf {
    if variant.is_general() {
        return bin.to_path_buf();
    }
    // One cell per build, so that tests on other threads compile their builds meanwhile.
    type Built = Mutex<HashMap<(bool, KernelDefines), Arc<OnceLock<PathBuf>>>>;
    static BUILT: OnceLock<Built> = OnceLock::new();
    let perturbed = PERTURBED.get().and_then(|p| p.as_deref()) == Some(bin);
    let cell = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry((perturbed, variant.clone()))
        .or_default()
        .clone();
    cell.get_or_init(|| {
        build_harness(perturbed, variant).expect("the general harness was built already")
    })
    .clone()
}

/// The WCS test vectors (`$WCS_VECTORS` or `../shared/wcs-vectors`); `None` as for
/// [`harness`] when they are missing.
fn vectors() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| common::host_vectors_dir("gpu_host_pipeline"))
        .as_deref()
}

/// The harness, for the tests that read their cases from the WCS vectors.
fn harness_with_vectors() -> Option<&'static Path> {
    let bin = harness()?;
    vectors()?;
    Some(bin)
}

fn build_harness(perturbed: bool, variant: &KernelDefines) -> Option<PathBuf> {
    {
        let cxx = common::host_cxx("gpu_host_pipeline")?;
        let mut name = if perturbed {
            "rp_pipeline_harness_perturbed".to_string()
        } else {
            "rp_pipeline_harness".to_string()
        };
        for d in variant.defines() {
            name.push('_');
            name.push_str(&d.replace('=', "").replace('*', "X"));
        }
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        let mut cmd = Command::new(&cxx);
        // Unoptimised: these builds are most of this file's time, and the blocks they run are
        // small. Without contraction (SSE2 doubles, one rounding per operation) the level does
        // not change a bit, which every comparison below checks anyway (the CUDA simulator's
        // builds, in build.rs, are -O2).
        cmd.arg("-O0").args(common::HOST_KERNEL_FLAGS);
        if perturbed {
            cmd.arg("-DRP_PERTURB_LIBM");
        }
        let mut open = 0;
        for d in variant.defines() {
            match d.strip_suffix("=*") {
                Some(name) => {
                    cmd.arg(format!("-D{name}=rp_harness_value[{open}]"));
                    open += 1;
                }
                None => {
                    cmd.arg(format!("-D{d}"));
                }
            }
        }
        if open > 0 {
            cmd.arg(format!("-DRP_HARNESS_VALUES={open}"));
        }
        if let Ok(dir) = std::env::var("RP_HOST_INCLUDE") {
            cmd.arg("-I").arg(dir);
        }
        cmd.arg("-I")
            .arg(root().join("kernels"))
            .arg(root().join("kernels/host/pipeline_harness.cpp"))
            .arg("-o")
            .arg(&out);
        let res = cmd
            .output()
            .unwrap_or_else(|e| panic!("running {cxx}: {e}"));
        assert!(
            res.status.success(),
            "the host build of the kernels failed:\n{}",
            String::from_utf8_lossy(&res.stderr)
        );
        Some(out)
    }
}

/// The raw input: bytes of the whole plane and how they are stored.
#[derive(Clone)]
struct RawInput {
    bytes: Vec<u8>,
    sample: SampleType,
    order: ByteOrder,
    /// Kernel type code.
    code: i64,
    elem: usize,
    shape: (usize, usize),
}

#[derive(Clone, Copy, Debug)]
enum InType {
    F64Le,
    F32Be,
    F32Le,
    I16Be,
    F64Be,
    I32Le,
    U8,
}

fn value_at(y: usize, x: usize) -> f64 {
    let (xf, yf) = (x as f64, y as f64);
    100.0 + 0.5 * xf + 0.3 * yf + 10.0 * (xf * 0.3).sin() * (yf * 0.2).cos()
}

fn make_input(t: InType, shape: (usize, usize)) -> RawInput {
    let (ny, nx) = shape;
    let nan_at = |y: usize, x: usize| (y * 7 + x * 3).is_multiple_of(97);
    let mut bytes = Vec::new();
    for y in 0..ny {
        for x in 0..nx {
            let v = if nan_at(y, x) {
                f64::NAN
            } else {
                value_at(y, x)
            };
            match t {
                InType::F64Le => bytes.extend(v.to_le_bytes()),
                InType::F32Be => bytes.extend((v as f32).to_be_bytes()),
                InType::F32Le => bytes.extend((v as f32).to_le_bytes()),
                InType::I16Be => {
                    let i = if v.is_nan() {
                        -7
                    } else {
                        (v * 50.0).round() as i16
                    };
                    bytes.extend(i.to_be_bytes())
                }
                InType::F64Be => bytes.extend(v.to_be_bytes()),
                InType::I32Le => {
                    let i = if v.is_nan() {
                        -70000
                    } else {
                        (v * 1e6).round() as i32
                    };
                    bytes.extend(i.to_le_bytes())
                }
                InType::U8 => bytes.push(if v.is_nan() { 0 } else { v.round() as u8 }),
            }
        }
    }
    let (sample, order, code, elem) = match t {
        InType::F64Le => (SampleType::F64, ByteOrder::Little, 1, 8),
        InType::F32Be => (SampleType::F32, ByteOrder::Big, 0, 4),
        InType::F32Le => (SampleType::F32, ByteOrder::Little, 0, 4),
        InType::I16Be => (SampleType::I16, ByteOrder::Big, 3, 2),
        InType::F64Be => (SampleType::F64, ByteOrder::Big, 1, 8),
        InType::I32Le => (SampleType::I32, ByteOrder::Little, 4, 4),
        InType::U8 => (SampleType::U8, ByteOrder::Little, 2, 1),
    };
    RawInput {
        bytes,
        sample,
        order,
        code,
        elem,
        shape,
    }
}

/// What one harness run returns: values, footprint, input x, input y.
struct HostBlock {
    values: Vec<f64>,
    footprint: Vec<f64>,
    xs: Vec<f64>,
    ys: Vec<f64>,
    /// The kernel refused the parameters (rp_block_setup's status not 0).
    refused: bool,
}

/// Runs the harness `bin` (with `values` for a pattern's build, [`variant_harness`]) on one
/// block.
#[allow(clippy::too_many_arguments)]
fn run_harness(
    bin: &Path,
    values: &[i32],
    transform: &[f64],
    sampling: &[f64],
    input: &[u8],
    input_type: i64,
    big_endian: bool,
    pitch: usize,
    window: (usize, usize, usize, usize),
    in_shape: (usize, usize),
    block: &Block,
    out_f64: bool,
    tag: &str,
) -> HostBlock {
    // Tests run in parallel: one file pair per call.
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let id = CALLS.fetch_add(1, Ordering::Relaxed);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let pid = std::process::id();
    let (inp, outp) = (
        dir.join(format!("rp_host_{pid}_{id}.in")),
        dir.join(format!("rp_host_{pid}_{id}.out")),
    );
    let mut buf = Vec::new();
    let i64s = |v: &[i64], buf: &mut Vec<u8>| {
        for x in v {
            buf.extend(x.to_le_bytes());
        }
    };
    i64s(&[transform.len() as i64], &mut buf);
    buf.extend(transform.iter().flat_map(|v| v.to_le_bytes()));
    i64s(&[sampling.len() as i64], &mut buf);
    buf.extend(sampling.iter().flat_map(|v| v.to_le_bytes()));
    let (ny, nx) = (block.rows.len(), block.cols.len());
    i64s(
        &[
            input_type,
            big_endian as i64,
            pitch as i64,
            window.0 as i64,
            window.1 as i64,
            window.2 as i64,
            window.3 as i64,
            in_shape.0 as i64,
            in_shape.1 as i64,
            block.rows.start as i64,
            block.cols.start as i64,
            ny as i64,
            nx as i64,
            out_f64 as i64,
            input.len() as i64,
        ],
        &mut buf,
    );
    buf.extend_from_slice(input);
    std::fs::write(&inp, &buf).unwrap();
    let res = Command::new(bin)
        .arg(&inp)
        .arg(&outp)
        .args(values.iter().map(i32::to_string))
        .output()
        .unwrap();
    // Exit status 5: the kernel refused the parameters (every pixel NaN, written all the same).
    let refused = res.status.code() == Some(5);
    assert!(
        res.status.success() || refused,
        "{tag}: harness failed ({:?}): {}",
        res.status,
        String::from_utf8_lossy(&res.stderr)
    );
    let raw = std::fs::read(&outp).unwrap();
    let all: Vec<f64> = raw
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let n = ny * nx;
    assert_eq!(all.len(), 4 * n, "{tag}: short harness output");
    let _ = std::fs::remove_file(&inp);
    let _ = std::fs::remove_file(&outp);
    HostBlock {
        values: all[..n].to_vec(),
        footprint: all[n..2 * n].to_vec(),
        xs: all[2 * n..3 * n].to_vec(),
        ys: all[3 * n..].to_vec(),
        refused,
    }
}

/// Largest differences seen, and the boundary pixels whose footprints differ.
#[derive(Default, Debug)]
struct Stats {
    blocks: usize,
    pixels: usize,
    valid: usize,
    max_rel: f64,
    max_px: f64,
    boundary_footprints: usize,
    /// The kernel variants the runtime would launch for the blocks compared (each run too and
    /// found bit-identical to the general kernel).
    variants: HashSet<KernelVariant>,
}

impl Stats {
    fn merge(&mut self, o: &Stats) {
        self.blocks += o.blocks;
        self.pixels += o.pixels;
        self.valid += o.valid;
        self.max_rel = self.max_rel.max(o.max_rel);
        self.max_px = self.max_px.max(o.max_px);
        self.boundary_footprints += o.boundary_footprints;
        self.variants.extend(o.variants.iter().copied());
    }
}

fn near_edge(c: f64, n: usize) -> bool {
    (c + 0.5).abs() <= PX_TOL || (c - (n as f64 - 0.5)).abs() <= PX_TOL
}

/// The float64 plane of spline coefficients `c` of `input`'s shape, as the kernel reads it.
fn coefficient_plane(input: &RawInput, c: &[f64]) -> RawInput {
    RawInput {
        bytes: c.iter().flat_map(|v| v.to_ne_bytes()).collect(),
        sample: SampleType::F64,
        order: if cfg!(target_endian = "big") {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        },
        code: 1,
        elem: 8,
        shape: input.shape,
    }
}

/// The bytes of rows `rows` and columns `cols` of `input`'s plane (pitch `cols.len()`).
fn window_of(input: &RawInput, rows: Range<usize>, cols: Range<usize>) -> Vec<u8> {
    let row_bytes = input.shape.1 * input.elem;
    let mut w = Vec::new();
    for r in rows {
        let s = r * row_bytes + cols.start * input.elem;
        w.extend_from_slice(&input.bytes[s..s + cols.len() * input.elem]);
    }
    w
}

/// The bits of `x`, every NaN as one value.
fn bit_list(x: &[f64]) -> Vec<u64> {
    x.iter()
        .map(|v| if v.is_nan() { u64::MAX } else { v.to_bits() })
        .collect()
}

/// The build of `variant`'s family (its pattern) and the values it runs `variant` with.
fn family_build(variant: KernelVariant) -> (KernelDefines, Vec<i32>) {
    let family = variant.family();
    let values = variant.defines().instance_of(&family).unwrap();
    (family, values)
}

/// Runs `check` on every item on as many threads as the machine has cores, so that the host
/// builds the items need (most of these tests' time) compile side by side; the statistics
/// merged. A failed check fails the test with its own message once the other threads stop.
fn on_every_core<T: Sync>(items: &[T], check: impl Fn(&T) -> Stats + Sync) -> Stats {
    let next = AtomicUsize::new(0);
    let total = Mutex::new(Stats::default());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads.min(items.len()) {
            s.spawn(|| {
                while let Some(item) = items.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let stats = check(item);
                    total.lock().unwrap().merge(&stats);
                }
            });
        }
    });
    total.into_inner().unwrap()
}

/// Sky variants that must refuse the parameters of `variant`'s plans: one projection
/// replaced by another on either side, and no frame change or SIP where the plan has one.
fn mismatched(variant: KernelVariant) -> Vec<KernelVariant> {
    let KernelVariant::Sky {
        out_prj,
        in_prj,
        frame,
        sip,
        order,
        input,
    } = variant
    else {
        return Vec::new();
    };
    let other = (0..28).find(|c| *c != out_prj && *c != in_prj).unwrap();
    let sky = |out_prj, in_prj, frame, sip| KernelVariant::Sky {
        out_prj,
        in_prj,
        frame,
        sip,
        order,
        input,
    };
    // A build compiles the set {out, in}: each wrong one lacks one of the plan's projections.
    let mut wrong = if out_prj == in_prj {
        vec![sky(other, other, frame, sip)]
    } else {
        vec![
            sky(other, in_prj, frame, sip),
            sky(out_prj, other, frame, sip),
        ]
    };
    if frame {
        wrong.push(sky(out_prj, in_prj, false, sip));
    }
    if sip {
        wrong.push(sky(out_prj, in_prj, frame, false));
    }
    wrong
}

struct Case {
    name: String,
    wcs_in: Wcs,
    wcs_out: Wcs,
    shape_in: (usize, usize),
    shape_out: (usize, usize),
}

thread_local! {
    /// Whether [`compare`] also runs each sky variant's own build (its projection pair and
    /// frame compiled in, as NVRTC builds it), besides its family's build: one C++ build per
    /// variant, so only where a test asks (the variant test), not for every projection pair.
    static CONCRETE_VARIANTS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Compares every block of a 2x2 split (edges included) for one configuration.
fn compare(
    bin: &Path,
    case: &Case,
    order: Order,
    in_type: InType,
    out_f64: bool,
    nan_policy: NanPolicy,
    precision: Precision,
) -> Stats {
    let input = make_input(in_type, case.shape_in);
    let shape = [input.shape.0, input.shape.1];
    let source = RawSource::new(&input.bytes, input.sample, input.order, &shape).unwrap();
    let options = Options {
        order,
        nan_policy,
        precision,
        ..Options::default()
    };
    let (ny, nx) = case.shape_out;
    let plan = Plan::new(&source, &case.wcs_in, &case.wcs_out, &[ny, nx], &options).unwrap();
    let big_endian = source.stored_type().big_endian;
    let tag = format!(
        "{}_{order:?}_{in_type:?}_{out_f64}_{precision:?}",
        case.name
    );
    let (ry, rx) = (ny * 2 / 5, nx * 3 / 5);
    let mut stats = Stats::default();
    for rows in [0..ry, ry..ny] {
        for cols in [0..rx, rx..nx] {
            let block = Block {
                rows: rows.clone(),
                cols: cols.clone(),
            };
            let (bh, bw) = (rows.len(), cols.len());
            let mut cpu = vec![0.0; bh * bw];
            let mut cpu_fp = vec![0.0; bh * bw];
            if out_f64 {
                let mut d = Array3::<f64>::zeros((1, bh, bw));
                let mut f = Array3::<f64>::zeros((1, bh, bw));
                plan.compute_block(&block, d.view_mut(), f.view_mut())
                    .unwrap();
                cpu.copy_from_slice(d.as_slice().unwrap());
                cpu_fp.copy_from_slice(f.as_slice().unwrap());
            } else {
                let mut d = Array3::<f32>::zeros((1, bh, bw));
                let mut f = Array3::<f32>::zeros((1, bh, bw));
                plan.compute_block(&block, d.view_mut(), f.view_mut())
                    .unwrap();
                for (o, v) in cpu.iter_mut().zip(d.iter()) {
                    *o = *v as f64;
                }
                for (o, v) in cpu_fp.iter_mut().zip(f.iter()) {
                    *o = *v as f64;
                }
            }
            let p = host_parity_inputs(&plan, &block, 0, &InputDecoding::default())
                .unwrap()
                .unwrap_or_else(|| panic!("{tag}: the encoder declined the plan"));
            let (wr, wc) = (p.window_rows.clone(), p.window_cols.clone());
            // The plane the kernel samples: the values, or the splines' coefficients.
            let coefficients = p
                .plane_coefficients
                .as_deref()
                .map(|c| coefficient_plane(&input, c));
            let (plane, be) = match &coefficients {
                Some(c) => (c, false),
                None => (&input, big_endian),
            };
            let (window_bytes, code, pitch) = (
                window_of(plane, wr.clone(), wc.clone()),
                plane.code,
                wc.len(),
            );
            let host = run_harness(
                bin,
                &[],
                &p.transform,
                &p.sampling,
                &window_bytes,
                code,
                be,
                pitch,
                (wr.start, wc.start, wr.len(), wc.len()),
                case.shape_in,
                &block,
                out_f64,
                &tag,
            );
            assert!(
                !host.refused,
                "{tag}: the general kernel refused the parameters"
            );
            // The variant the runtime launches for this block: the same bits as the general
            // kernel's (so the same comparison with the CPU below holds for it).
            let variant = KernelVariant::choose(&p.transform, &p.sampling, code as i32, out_f64);
            // The build of its family with the variant's values at run time, as the CUDA
            // simulator runs it; where asked (CONCRETE_VARIANTS), also the build NVRTC makes,
            // with the values compiled in.
            // This block, run by one build (a pattern's with its values).
            let run_build = |defines: &KernelDefines, values: &[i32]| {
                run_harness(
                    &variant_harness(bin, defines),
                    values,
                    &p.transform,
                    &p.sampling,
                    &window_bytes,
                    code,
                    be,
                    pitch,
                    (wr.start, wc.start, wr.len(), wc.len()),
                    case.shape_in,
                    &block,
                    out_f64,
                    &format!("{tag} [{defines}] {values:?}"),
                )
            };
            let mut builds = Vec::new();
            if variant != KernelVariant::General {
                builds.push(family_build(variant));
                if CONCRETE_VARIANTS.get() && matches!(variant, KernelVariant::Sky { .. }) {
                    builds.push((variant.defines(), Vec::new()));
                }
            }
            for (defines, values) in builds {
                let v = run_build(&defines, &values);
                assert!(!v.refused, "{tag}: [{defines}] refused the parameters");
                for (what, a, b) in [
                    ("values", &v.values, &host.values),
                    ("footprint", &v.footprint, &host.footprint),
                    ("input x", &v.xs, &host.xs),
                    ("input y", &v.ys, &host.ys),
                ] {
                    assert_eq!(
                        bit_list(a),
                        bit_list(b),
                        "{tag}: {what} of [{defines}] {values:?} differ from the general kernel's",
                    );
                }
            }
            // A window of the whole plane (as device-resident planes are uploaded, and the
            // coefficients the device prefilters): the samplers then read without checking
            // the window, with the same bits (in the variant test, which runs every family on
            // every input type and every order).
            if CONCRETE_VARIANTS.get()
                && (matches!(order, Order::NearestNeighbor | Order::Bilinear)
                    || coefficients.is_some())
            {
                let (whole, whole_pitch) = (&plane.bytes, input.shape.1);
                let mut whole_builds = vec![(KernelDefines::general(), Vec::new())];
                if variant != KernelVariant::General {
                    whole_builds.push(family_build(variant));
                }
                for (defines, values) in whole_builds {
                    let v = run_harness(
                        &variant_harness(bin, &defines),
                        &values,
                        &p.transform,
                        &p.sampling,
                        whole,
                        code,
                        be,
                        whole_pitch,
                        (0, 0, case.shape_in.0, case.shape_in.1),
                        case.shape_in,
                        &block,
                        out_f64,
                        &format!("{tag} [{defines}] whole window"),
                    );
                    assert_eq!(
                        bit_list(&v.values),
                        bit_list(&host.values),
                        "{tag}: [{defines}] with the whole plane as its window"
                    );
                }
            }
            // A homography build for the other output type writes NaN values and zero
            // footprints of the launch's type; one for the other NaN policy refuses the
            // parameters: never wrong values.
            if let (
                KernelVariant::Homography {
                    order: o @ (0 | 1),
                    input: vi,
                    output,
                    nan,
                },
                0,
            ) = (variant, stats.blocks)
            {
                let other_output = match output {
                    VariantOutput::F32 => VariantOutput::F64,
                    _ => VariantOutput::F32,
                };
                let other_nan = match nan {
                    VariantNan::Propagate => VariantNan::Renormalize,
                    _ => VariantNan::Propagate,
                };
                let mut wrong = vec![(
                    KernelVariant::Homography {
                        order: o,
                        input: vi,
                        output: other_output,
                        nan,
                    },
                    false,
                )];
                if o == 1 {
                    wrong.push((
                        KernelVariant::Homography {
                            order: o,
                            input: vi,
                            output,
                            nan: other_nan,
                        },
                        true,
                    ));
                }
                for (wrong, refuses) in wrong {
                    let (family, values) = family_build(wrong);
                    let w = run_build(&family, &values);
                    assert!(
                        w.refused == refuses
                            && w.values.iter().all(|v| v.is_nan())
                            && w.footprint.iter().all(|f| *f == 0.0),
                        "{tag}: [{}] computed pixels of a [{}] launch",
                        wrong.defines(),
                        variant.defines()
                    );
                }
            }
            // A sky variant built for other projections, or without the frame change a plan
            // needs, refuses the plan's parameters: every pixel NaN, never wrong values.
            if let (KernelVariant::Sky { .. }, Order::Bilinear, 0) = (variant, order, stats.blocks)
            {
                for wrong in mismatched(variant) {
                    let (family, values) = family_build(wrong);
                    let w = run_build(&family, &values);
                    assert!(
                        w.refused
                            && w.values.iter().all(|v| v.is_nan())
                            && w.footprint.iter().all(|f| *f == 0.0),
                        "{tag}: [{}] computed pixels of a [{}] plan",
                        wrong.defines(),
                        variant.defines()
                    );
                }
            }
            stats.variants.insert(variant);
            stats.blocks += 1;
            for i in 0..bh * bw {
                stats.pixels += 1;
                let (r, c) = (rows.start + i / bw, cols.start + i % bw);
                let where_ = format!("{tag}: pixel (row {r}, col {c})");
                // Input positions.
                let (cx, cy, hx, hy) = (p.xs[i], p.ys[i], host.xs[i], host.ys[i]);
                let boundary = near_edge(cx, case.shape_in.1)
                    || near_edge(cy, case.shape_in.0)
                    || near_edge(hx, case.shape_in.1)
                    || near_edge(hy, case.shape_in.0);
                if cx.is_nan() != hx.is_nan() || cy.is_nan() != hy.is_nan() {
                    assert!(
                        boundary,
                        "{where_}: input position CPU ({cx}, {cy}) vs kernel ({hx}, {hy})"
                    );
                } else if !cx.is_nan() {
                    let d = (cx - hx).abs().max((cy - hy).abs());
                    assert!(
                        d <= PX_TOL,
                        "{where_}: input position CPU ({cx}, {cy}) vs kernel ({hx}, {hy})"
                    );
                    stats.max_px = stats.max_px.max(d);
                }
                // Footprint and value.
                let (a, b) = (cpu[i], host.values[i]);
                if cpu_fp[i] != host.footprint[i] {
                    assert!(
                        boundary,
                        "{where_}: footprint CPU {} vs kernel {} (values {a} vs {b})",
                        cpu_fp[i], host.footprint[i]
                    );
                    stats.boundary_footprints += 1;
                    println!("{where_}: footprint differs at the input edge ({cx}, {cy})");
                    continue;
                }
                assert_eq!(host.footprint[i], if b.is_nan() { 0.0 } else { 1.0 });
                if a.is_nan() || b.is_nan() {
                    assert!(
                        a.is_nan() && b.is_nan(),
                        "{where_}: value CPU {a} vs kernel {b}"
                    );
                    continue;
                }
                stats.valid += 1;
                let scale = a.abs().max(b.abs());
                let rel = if scale == 0.0 {
                    0.0
                } else {
                    (a - b).abs() / scale
                };
                assert!(
                    rel <= REL_TOL,
                    "{where_}: value CPU {a} vs kernel {b} (relative {rel:e})"
                );
                stats.max_rel = stats.max_rel.max(rel);
            }
        }
    }
    assert!(stats.pixels > 0);
    stats
}

/// The header of a case of the vectors (which must be there: [`harness_with_vectors`] checked
/// that the vectors are).
fn header_text(name: &str) -> String {
    let path = vectors()
        .expect("the tests that read cases check the vectors first")
        .join(format!("{name}.hdr"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "case {name}: {}: {e} (the WCS vectors are incomplete)",
            path.display()
        )
    })
}

/// An integer keyword of a header (NAXISn).
fn keyword(text: &str, key: &str) -> Option<usize> {
    let cards: Vec<String> = if text.contains('\n') {
        text.lines().map(str::to_string).collect()
    } else {
        text.as_bytes()
            .chunks(80)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect()
    };
    cards.iter().find_map(|c| {
        let (k, v) = c.split_once('=')?;
        (k.trim() == key).then(|| v.split('/').next()?.trim().parse().ok())?
    })
}

/// Where the output looks: an output TAN (or other) header centred on the input's centre,
/// rotated by 20 degrees, covering about 1.3 times the input.
#[derive(Clone, Copy)]
enum OutFrame {
    Same,
    Galactic,
    Fk5J1975,
    Fk4B1950,
}

fn output_header(wcs_in: &Wcs, shape_in: (usize, usize), proj: &str, frame: OutFrame) -> String {
    // The input centre, or the nearest pixel on its diagonal that is on the sky.
    let (cy, cx) = (shape_in.0 as f64 / 2.0, shape_in.1 as f64 / 2.0);
    let (cx, cy, lon, lat) = (0..shape_in.0 / 2)
        .find_map(|k| {
            let (x, y) = (cx + k as f64, cy + k as f64);
            let (lon, lat) = wcs_in.pixel_to_world(x, y)?;
            wcs_in.pixel_to_world(x + 1.0, y)?;
            Some((x, y, lon, lat))
        })
        .expect("a pixel of the input's diagonal is on the sky");
    let (lon2, lat2) = wcs_in.pixel_to_world(cx + 1.0, cy).unwrap();
    let (l1, b1, l2, b2) = (
        lon.to_radians(),
        lat.to_radians(),
        lon2.to_radians(),
        lat2.to_radians(),
    );
    let cosd = b1.sin() * b2.sin() + b1.cos() * b2.cos() * (l1 - l2).cos();
    let scale_in = cosd.clamp(-1.0, 1.0).acos().to_degrees();
    let extent = scale_in * shape_in.0.max(shape_in.1) as f64 * 1.3;
    let n_out = 56.0;
    let s = extent / n_out;
    let from = wcs_in.frame().unwrap().clone();
    let (lng, lat_name, extra, to) = match frame {
        OutFrame::Same => ("RA--", "DEC-", String::new(), None),
        OutFrame::Galactic => (
            "GLON",
            "GLAT",
            String::new(),
            Some(CelestialFrame::Galactic),
        ),
        OutFrame::Fk5J1975 => (
            "RA--",
            "DEC-",
            "RADESYS = 'FK5'\nEQUINOX = 1975.0\n".to_string(),
            Some(CelestialFrame::Fk5 { equinox: 1975.0 }),
        ),
        OutFrame::Fk4B1950 => (
            "RA--",
            "DEC-",
            "RADESYS = 'FK4'\nEQUINOX = 1950.0\n".to_string(),
            Some(CelestialFrame::Fk4 { equinox: 1950.0 }),
        ),
    };
    let (lon, lat) = match to {
        None => (lon, lat),
        Some(to) => FrameTransform::new(&from, &to).unwrap().apply(lon, lat),
    };
    let same_frame = match (&from, frame) {
        (CelestialFrame::Fk5 { .. }, OutFrame::Same) => {
            "RADESYS = 'FK5'\nEQUINOX = 2000.0\n".to_string()
        }
        _ => String::new(),
    };
    // Conic projections need their standard parallel (PV2_1 = theta_a).
    let conic = if proj.starts_with("CO") {
        format!("PV2_1 = {}\n", lat.round())
    } else {
        String::new()
    };
    let (sn, cs) = 20f64.to_radians().sin_cos();
    format!(
        "CTYPE1 = '{lng}-{proj}'\nCTYPE2 = '{lat_name}-{proj}'\nCRPIX1 = 28.5\nCRPIX2 = 24.0\n\
         CRVAL1 = {lon}\nCRVAL2 = {lat}\nCD1_1 = {}\nCD1_2 = {}\nCD2_1 = {}\nCD2_2 = {}\n{extra}{same_frame}{conic}",
        -s * cs,
        s * sn,
        s * sn,
        s * cs
    )
}

fn case_from(name: &str, proj_out: &str, frame: OutFrame) -> Case {
    let text = header_text(name);
    let wcs_in = Wcs::from_header_str(&text).unwrap();
    let ny = keyword(&text, "NAXIS2").unwrap_or(256).min(160);
    let nx = keyword(&text, "NAXIS1").unwrap_or(256).min(180);
    let shape_in = (ny, nx);
    let out = output_header(&wcs_in, shape_in, proj_out, frame);
    let wcs_out = Wcs::from_header_str(&out).unwrap_or_else(|e| panic!("{name}: {e}\n{out}"));
    Case {
        name: format!("{name}-to-{proj_out}"),
        wcs_in,
        wcs_out,
        shape_in,
        shape_out: (48, 56),
    }
}

const TYPES: [InType; 7] = [
    InType::F64Le,
    InType::F32Be,
    InType::F32Le,
    InType::I16Be,
    InType::F64Be,
    InType::I32Le,
    InType::U8,
];

/// Runs orders 0-3 over one case, cycling through input and output types.
fn run_case(bin: &Path, case: &Case, seed: usize) -> Stats {
    let mut stats = Stats::default();
    for (k, order) in [
        Order::NearestNeighbor,
        Order::Bilinear,
        Order::Biquadratic,
        Order::Bicubic,
    ]
    .into_iter()
    .enumerate()
    {
        let t = TYPES[(seed + k) % TYPES.len()];
        let out_f64 = (seed + k).is_multiple_of(2);
        stats.merge(&compare(
            bin,
            case,
            order,
            t,
            out_f64,
            NanPolicy::Propagate,
            Precision::Reproject,
        ));
    }
    println!(
        "{}: {} blocks, {} pixels ({} valid), max relative value difference {:.3e}, max \
         position difference {:.3e} px, footprints differing at the input edge: {}",
        case.name,
        stats.blocks,
        stats.pixels,
        stats.valid,
        stats.max_rel,
        stats.max_px,
        stats.boundary_footprints
    );
    stats
}

fn summary(what: &str, s: &Stats) {
    println!(
        "TOTAL {what}: {} blocks, {} pixels ({} valid): max relative value difference {:.3e}, \
         max position difference {:.3e} px, boundary footprint differences {}",
        s.blocks, s.pixels, s.valid, s.max_rel, s.max_px, s.boundary_footprints
    );
}

#[test]
fn plain_tan_homography_and_frames() {
    let Some(bin) = harness_with_vectors() else {
        return;
    };
    let mut total = Stats::default();
    for (i, frame) in [OutFrame::Same, OutFrame::Galactic, OutFrame::Fk5J1975]
        .into_iter()
        .enumerate()
    {
        let case = case_from("1904-66_TAN", "TAN", frame);
        total.merge(&run_case(bin, &case, i));
    }
    summary("TAN/frames", &total);
}

#[test]
fn sip_and_tpv_distortions() {
    let Some(bin) = harness_with_vectors() else {
        return;
    };
    let mut total = Stats::default();
    for (i, (name, frame)) in [
        ("sip", OutFrame::Same),
        ("irac_sip", OutFrame::Galactic),
        ("extra_siponly", OutFrame::Same),
        ("tpvonly", OutFrame::Same),
        ("tpvonly", OutFrame::Fk5J1975),
    ]
    .into_iter()
    .enumerate()
    {
        let case = case_from(name, "TAN", frame);
        total.merge(&run_case(bin, &case, i));
    }
    summary("SIP/TPV", &total);
}

#[test]
fn every_projection_family() {
    let Some(bin) = harness_with_vectors() else {
        return;
    };
    let codes = [
        "AZP", "SZP", "TAN", "STG", "SIN", "ARC", "ZPN", "ZEA", "AIR", "CYP", "CEA", "CAR", "MER",
        "SFL", "PAR", "MOL", "AIT", "COP", "COE", "COD", "COO", "BON", "PCO", "TSC", "CSC", "QSC",
        "HPX", "NCP",
    ];
    let mut cases = Vec::new();
    for (i, code) in codes.iter().enumerate() {
        // Input in the projection, output TAN; and the other way round for half of them.
        cases.push((
            case_from(&format!("1904-66_{code}"), "TAN", OutFrame::Same),
            i,
        ));
    }
    for (i, name) in [
        "extra_XPH_synth",
        "extra_AIT_gal_allsky_synth",
        "extra_CAR_allsky_synth",
        "extra_SIN_CROTA2_synth",
        "extra_GAL_TAN_CDrot_synth",
        "extra_zpn-hole",
    ]
    .iter()
    .enumerate()
    {
        cases.push((case_from(name, "TAN", OutFrame::Galactic), i));
    }
    // Output in other projections (their inverse on the output side).
    for (i, proj) in [
        "SIN", "ZEA", "ARC", "AIT", "CAR", "MOL", "HPX", "TSC", "COE",
    ]
    .iter()
    .enumerate()
    {
        cases.push((case_from("1904-66_TAN", proj, OutFrame::Same), i));
    }
    let total = on_every_core(&cases, |(case, seed)| run_case(bin, case, *seed));
    summary("projections", &total);
}

#[test]
fn renormalized_nans() {
    let Some(bin) = harness_with_vectors() else {
        return;
    };
    let mut total = Stats::default();
    let case = case_from("sip", "TAN", OutFrame::Same);
    for (k, order) in [Order::NearestNeighbor, Order::Bilinear]
        .into_iter()
        .enumerate()
    {
        for t in TYPES {
            total.merge(&compare(
                bin,
                &case,
                order,
                t,
                k == 0,
                NanPolicy::Renormalize,
                Precision::Reproject,
            ));
        }
    }
    summary("renormalize", &total);
}

/// The general path (through the sky, never picked by plans unless FK4 E-terms are involved)
/// against `PixelTransform::general`, input positions only.
#[test]
fn general_path_positions() {
    let Some(bin) = harness_with_vectors() else {
        return;
    };
    let case = case_from("irac_sip", "TAN", OutFrame::Galactic);
    let input = make_input(InType::F64Le, case.shape_in);
    let source = RawSource::new(
        &input.bytes,
        input.sample,
        input.order,
        &[case.shape_in.0, case.shape_in.1],
    )
    .unwrap();
    let plan = Plan::new(
        &source,
        &case.wcs_in,
        &case.wcs_out,
        &[case.shape_out.0, case.shape_out.1],
        &Options::default(),
    )
    .unwrap();
    let (ny, nx) = case.shape_out;
    let block = Block {
        rows: 0..ny,
        cols: 0..nx,
    };
    let p = host_parity_inputs(&plan, &block, 0, &InputDecoding::default())
        .unwrap()
        .unwrap();
    let forward = PixelTransform::general(&case.wcs_out, &case.wcs_in).unwrap();
    let backward = PixelTransform::general(&case.wcs_in, &case.wcs_out).unwrap();
    let transform = host_parity_transform(&forward, Some(&backward)).unwrap();
    let host = run_harness(
        bin,
        &[],
        &transform,
        &p.sampling,
        &[],
        1,
        false,
        0,
        (0, 0, 0, 0),
        case.shape_in,
        &block,
        true,
        "general",
    );
    let (iy, ix) = case.shape_in;
    let (mut max, mut valid) = (0.0f64, 0);
    for r in 0..ny {
        for c in 0..nx {
            let i = r * nx + c;
            let (x, y) = (c as f64, r as f64);
            let cpu = forward.map(x, y).filter(|&(px, py)| {
                px >= -0.5 && px < ix as f64 - 0.5 && py >= -0.5 && py < iy as f64 - 0.5
            });
            let cpu = cpu.filter(|&(px, py)| {
                backward
                    .map(px, py)
                    .is_none_or(|(bx, by)| (bx - x).abs() <= 1.0 && (by - y).abs() <= 1.0)
            });
            match cpu {
                None => assert!(host.xs[i].is_nan() && host.ys[i].is_nan()),
                Some((px, py)) => {
                    let d = (px - host.xs[i]).abs().max((py - host.ys[i]).abs());
                    assert!(
                        d <= PX_TOL,
                        "pixel ({r}, {c}): {px}, {py} vs {}, {}",
                        host.xs[i],
                        host.ys[i]
                    );
                    max = max.max(d);
                    valid += 1;
                }
            }
            // No window: every value is NaN.
            assert!(host.values[i].is_nan() && host.footprint[i] == 0.0);
        }
    }
    assert!(valid > 0);
    println!("general path: {valid} positions, max difference {max:.3e} px");
}

/// Input decoding on the device: every integer type in both byte orders, BSCALE/BZERO and
/// BLANK, through an identity reprojection with order 0 (each output pixel is its input pixel).
#[test]
fn integer_decoding_scale_and_blank() {
    let Some(bin) = harness() else { return };
    let header = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 10\nCRPIX2 = 8\n\
                  CRVAL1 = 30\nCRVAL2 = 40\nCDELT1 = -0.01\nCDELT2 = 0.01\n";
    let wcs = Wcs::from_header_str(header).unwrap();
    let (ny, nx) = (13usize, 17usize);
    let image = ndarray::Array2::<f64>::zeros((ny, nx));
    let source = reproject::io::ArraySource::new(image.view().into_dyn()).unwrap();
    let options = Options {
        order: Order::NearestNeighbor,
        ..Options::default()
    };
    let plan = Plan::new(&source, &wcs, &wcs, &[ny, nx], &options).unwrap();
    let block = Block {
        rows: 0..ny,
        cols: 0..nx,
    };
    let raw = |y: usize, x: usize| -> i64 { (y as i64 * 37 - x as i64 * 11) * 3 - 5 };
    let blank = raw(5, 7);
    let mut checked = 0;
    for (code, size) in [(2i64, 1usize), (3, 2), (4, 4), (5, 8)] {
        for big in [false, true] {
            for (scale, with_blank, to_f32) in [
                (None, false, true),
                (Some((32768.0, 0.5)), true, false),
                (Some((-1.25, 3.0e-3)), true, true),
            ] {
                let decoding = InputDecoding {
                    scale,
                    blank: with_blank.then_some(if code == 2 { 200 } else { blank }),
                };
                let p = host_parity_inputs(&plan, &block, 0, &decoding)
                    .unwrap()
                    .unwrap();
                let mut sampling = p.sampling.clone();
                sampling[2] = if to_f32 { 1.0 } else { 0.0 };
                assert_eq!(sampling[4], if scale.is_some() { 1.0 } else { 0.0 });
                let mut bytes = Vec::new();
                let mut want = Vec::new();
                for y in 0..ny {
                    for x in 0..nx {
                        let v = if code == 2 {
                            (y * nx + x) as i64 % 256
                        } else {
                            raw(y, x)
                        };
                        let b: Vec<u8> = match (code, big) {
                            (2, _) => vec![v as u8],
                            (3, false) => (v as i16).to_le_bytes().to_vec(),
                            (3, true) => (v as i16).to_be_bytes().to_vec(),
                            (4, false) => (v as i32).to_le_bytes().to_vec(),
                            (4, true) => (v as i32).to_be_bytes().to_vec(),
                            (_, false) => v.to_le_bytes().to_vec(),
                            (_, true) => v.to_be_bytes().to_vec(),
                        };
                        assert_eq!(b.len(), size);
                        bytes.extend(b);
                        let mut w = if decoding.blank == Some(v) {
                            f64::NAN
                        } else if let Some((z, s)) = scale {
                            z + s * v as f64
                        } else {
                            v as f64
                        };
                        if to_f32 {
                            w = w as f32 as f64;
                        }
                        want.push(w);
                    }
                }
                let host = run_harness(
                    bin,
                    &[],
                    &p.transform,
                    &sampling,
                    &bytes,
                    code,
                    big,
                    nx,
                    (0, 0, ny, nx),
                    (ny, nx),
                    &block,
                    true,
                    "decode",
                );
                for (i, (&w, &h)) in want.iter().zip(&host.values).enumerate() {
                    assert!(
                        w.to_bits() == h.to_bits() || (w.is_nan() && h.is_nan()),
                        "type {code}, big-endian {big}, {scale:?}: pixel {i}: want {w}, got {h}"
                    );
                    checked += 1;
                }
                if with_blank && code != 2 {
                    assert!(host.values[5 * nx + 7].is_nan());
                    assert_eq!(host.footprint[5 * nx + 7], 0.0);
                }
            }
        }
    }
    println!("decoding: {checked} pixels bit-identical");
}

/// Inputs of one and two pixels along an axis (scipy's mirror of a single pixel), all six
/// orders, both precisions, through the homography (TAN output) and the vector path (SIN).
#[test]
fn tiny_inputs_every_order_both_precisions() {
    let Some(bin) = harness() else { return };
    let mut total = Stats::default();
    for (k, &(ny, nx)) in [(1usize, 1usize), (1, 5), (2, 3), (4, 2), (3, 3)]
        .iter()
        .enumerate()
    {
        let wcs_in = Wcs::from_header_str(&format!(
            "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {}\nCRPIX2 = {}\n\
             CRVAL1 = 120\nCRVAL2 = -30\nCDELT1 = -0.01\nCDELT2 = 0.01\n",
            (nx as f64 + 1.0) / 2.0,
            (ny as f64 + 1.0) / 2.0
        ))
        .unwrap();
        for proj in ["TAN", "SIN"] {
            let (sn, cs) = 25f64.to_radians().sin_cos();
            let s = 0.0023;
            let wcs_out = Wcs::from_header_str(&format!(
                "CTYPE1 = 'RA---{proj}'\nCTYPE2 = 'DEC--{proj}'\nCRPIX1 = 9.3\nCRPIX2 = 8.1\n\
                 CRVAL1 = 120.001\nCRVAL2 = -30.002\nCD1_1 = {}\nCD1_2 = {}\nCD2_1 = {}\n\
                 CD2_2 = {}\n",
                -s * cs,
                s * sn,
                s * sn,
                s * cs
            ))
            .unwrap();
            let case = Case {
                name: format!("tiny{ny}x{nx}-to-{proj}"),
                wcs_in: wcs_in.clone(),
                wcs_out,
                shape_in: (ny, nx),
                shape_out: (17, 19),
            };
            for (i, order) in Order::ALL.into_iter().enumerate() {
                for precision in [Precision::Reproject, Precision::Float64] {
                    let t = TYPES[(k + i) % TYPES.len()];
                    total.merge(&compare(
                        bin,
                        &case,
                        order,
                        t,
                        (k + i) % 2 == 1,
                        NanPolicy::Propagate,
                        precision,
                    ));
                }
            }
        }
    }
    summary("tiny inputs", &total);
}

/// Non-celestial planes (transform kind 3): pixel axes with a unit conversion and a rotated
/// plane, and a logarithmic spectral axis, every order: the host-compiled kernel gives the
/// CPU's positions and values bit for bit (both use the same libm here).
#[test]
fn linear_planes_every_order_bit_for_bit() {
    let Some(bin) = harness() else { return };
    let (sn, cs) = 0.4f64.sin_cos();
    let pairs = [
        (
            "pixel-km-to-m-rotated",
            "CTYPE1 = 'LINEAR'\nCTYPE2 = 'LINEAR'\nCUNIT1 = 'km'\nCUNIT2 = 'm'\nCRPIX1 = 20\n\
             CRPIX2 = 16\nCRVAL1 = 2\nCRVAL2 = 300\nCDELT1 = 0.1\nCDELT2 = 5\n"
                .to_string(),
            format!(
                "CTYPE1 = 'LINEAR'\nCTYPE2 = 'LINEAR'\nCUNIT1 = 'm'\nCUNIT2 = 'cm'\nCRPIX1 = 15\n\
                 CRPIX2 = 14\nCRVAL1 = 2050\nCRVAL2 = 30500\nCDELT1 = 120\nCDELT2 = 600\n\
                 PC1_1 = {cs}\nPC1_2 = {}\nPC2_1 = {sn}\nPC2_2 = {cs}\n",
                -sn
            ),
        ),
        (
            "log-wave-and-blank",
            "CTYPE1 = 'WAVE-LOG'\nCTYPE2 = ''\nCRPIX1 = 10\nCRPIX2 = 15\nCRVAL1 = 5E-7\n\
             CRVAL2 = 0\nCDELT1 = 1E-9\nCDELT2 = 1\n"
                .to_string(),
            "CTYPE1 = 'WAVE-LOG'\nCTYPE2 = ''\nCUNIT1 = 'nm'\nCRPIX1 = 12\nCRPIX2 = 13\n\
             CRVAL1 = 502\nCRVAL2 = 1\nCDELT1 = 1.3\nCDELT2 = 0.8\n"
                .to_string(),
        ),
    ];
    let mut total = Stats::default();
    for (k, (name, text_in, text_out)) in pairs.iter().enumerate() {
        let case = Case {
            name: name.to_string(),
            wcs_in: Wcs::from_header_str(text_in).unwrap(),
            wcs_out: Wcs::from_header_str(text_out).unwrap(),
            shape_in: (30, 40),
            shape_out: (33, 37),
        };
        assert!(PixelTransform::new(&case.wcs_out, &case.wcs_in)
            .unwrap()
            .is_linear());
        for (i, order) in Order::ALL.into_iter().enumerate() {
            let t = TYPES[(k + i) % TYPES.len()];
            total.merge(&compare(
                bin,
                &case,
                order,
                t,
                (k + i) % 2 == 1,
                NanPolicy::Propagate,
                Precision::Reproject,
            ));
        }
    }
    summary("linear planes", &total);
    assert!(total.valid > 1000, "too few valid pixels: {}", total.valid);
    assert_eq!(total.max_px, 0.0, "positions differ");
    assert_eq!(total.max_rel, 0.0, "values differ");
    assert_eq!(total.boundary_footprints, 0);
}

/// The acceptance of issue 7 with a libm that differs from the CPU's by an ulp (as CUDA's
/// does): every projection family, SIP, TPV and the frame changes (FK4 included) still agree
/// within 1e-9
/// relative and 1e-9 px, footprints only differing at the input edge. (Not included: the tiny
/// inputs of `tiny_inputs_every_order_both_precisions`, where quintic splines of integer data
/// spanning -7..5000 cancel to values near 0.1 whose relative difference then reaches 5e-9
/// although the absolute one is 6e-10.)
#[test]
fn device_like_libm() {
    let Some(bin) = perturbed_harness() else {
        return;
    };
    if vectors().is_none() {
        return;
    }
    let mut total = Stats::default();
    let mut cases: Vec<(String, &str, OutFrame)> = [
        "AZP", "SZP", "TAN", "STG", "SIN", "ARC", "ZPN", "ZEA", "AIR", "CYP", "CEA", "CAR", "MER",
        "SFL", "PAR", "MOL", "AIT", "COP", "COE", "COD", "COO", "BON", "PCO", "TSC", "CSC", "QSC",
        "HPX", "NCP",
    ]
    .iter()
    .map(|c| (format!("1904-66_{c}"), "TAN", OutFrame::Galactic))
    .collect();
    for (name, frame) in [
        ("sip", OutFrame::Same),
        ("irac_sip", OutFrame::Fk5J1975),
        ("tpvonly", OutFrame::Galactic),
        ("extra_XPH_synth", OutFrame::Same),
        ("extra_zpn-hole", OutFrame::Same),
        ("extra_ZEA_FK4_B1950_synth", OutFrame::Galactic),
    ] {
        cases.push((name.to_string(), "TAN", frame));
    }
    for (i, (name, proj, frame)) in cases.iter().enumerate() {
        let case = case_from(name, proj, *frame);
        total.merge(&run_case(bin, &case, i));
    }
    summary("device-like libm", &total);
}

/// SIP inverted from the AP/BP guess with a tight tolerance (kept by `Precision::Float64`),
/// both as input and as output WCS (the round trip inverts the output's SIP).
#[test]
fn sip_inversion_from_ap_bp_guess() {
    let Some(bin) = harness_with_vectors() else {
        return;
    };
    let how = reproject::wcs::distortion::SipInversion {
        tolerance: 1e-12,
        max_iter: 50,
        ap_bp_guess: true,
    };
    let mut total = Stats::default();
    for name in ["irac_sip", "sip"] {
        let case = case_from(name, "TAN", OutFrame::Same);
        let forward = Case {
            name: format!("{name}-apbp"),
            wcs_in: case.wcs_in.clone().with_sip_inversion(how),
            wcs_out: case.wcs_out.clone(),
            shape_in: case.shape_in,
            shape_out: case.shape_out,
        };
        // The SIP image as output: its inverse is on the forward path.
        let backward = Case {
            name: format!("TAN-to-{name}-apbp"),
            wcs_in: case.wcs_out.clone(),
            wcs_out: case.wcs_in.clone().with_sip_inversion(how),
            shape_in: (56, 64),
            shape_out: (40, 44),
        };
        for c in [&forward, &backward] {
            for (k, order) in [Order::Bilinear, Order::Bicubic].into_iter().enumerate() {
                total.merge(&compare(
                    bin,
                    c,
                    order,
                    TYPES[k],
                    k == 0,
                    NanPolicy::Propagate,
                    Precision::Float64,
                ));
            }
        }
    }
    summary("SIP AP/BP guess", &total);
}

/// FK4 frames: the frame change is not a rotation (E-terms), so plans take the general path
/// through the sky, in both directions (E-terms removed from an FK4 input, added for an FK4
/// output).
#[test]
fn fk4_eterms_general_path() {
    let Some(bin) = harness_with_vectors() else {
        return;
    };
    let mut total = Stats::default();
    let cases = [
        ("extra_ZEA_FK4_B1950_synth", "TAN", OutFrame::Same),
        ("extra_ZEA_FK4_B1950_synth", "SIN", OutFrame::Galactic),
        ("1904-66_TAN", "TAN", OutFrame::Fk4B1950),
        ("irac_sip", "ZEA", OutFrame::Fk4B1950),
    ];
    for (i, (name, proj, frame)) in cases.into_iter().enumerate() {
        let case = case_from(name, proj, frame);
        total.merge(&run_case(bin, &case, i));
    }
    summary("FK4 E-terms", &total);
}

/// Every family of specialised kernel variants (`KernelVariant::representatives`) on the
/// blocks the runtime would launch it for: a rotated TAN -> TAN reprojection (the homography),
/// a SIN -> TAN one between tangent points 3 degrees apart (the sky variant of SIN, TAN) and a
/// TAN-SIP -> TAN one (the sky variant with SIP),
/// of every order, float32, float64 and integer inputs in both byte orders, both output types
/// and both NaN policies for orders 0 and 1. `compare` runs each block with the general
/// kernel and with the variant the runtime picks: the same bits, and the CPU's values within
/// the tolerances.
#[test]
fn every_variant_gives_the_general_kernels_bits() {
    let Some(bin) = harness() else { return };
    // A 50 x 60 input of `ctype` (with `extra` cards) at (crval1, crval2), 0.01 degree pixels.
    let input = |ctype: &str, crval: (f64, f64), extra: &str| {
        Wcs::from_header_str(&format!(
            "CTYPE1 = 'RA---{ctype}'\nCTYPE2 = 'DEC--{ctype}'\nCRPIX1 = 30.5\nCRPIX2 = 25.0\n\
             CRVAL1 = {:?}\nCRVAL2 = {:?}\nCDELT1 = -0.01\nCDELT2 = 0.01\n{extra}",
            crval.0, crval.1
        ))
        .unwrap()
    };
    let case = |name: &str, wcs_in: Wcs, wcs_out: Wcs| Case {
        name: name.into(),
        wcs_in,
        wcs_out,
        shape_in: (50, 60),
        shape_out: (48, 56),
    };
    let (sn, cs) = 20f64.to_radians().sin_cos();
    let s = 0.008;
    let rotated_tan = Wcs::from_header_str(&format!(
        "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 28.5\nCRPIX2 = 24.0\n\
         CRVAL1 = 150.02\nCRVAL2 = 2.01\nCD1_1 = {}\nCD1_2 = {}\nCD2_1 = {}\nCD2_2 = {}\n",
        -s * cs,
        s * sn,
        s * sn,
        s * cs
    ))
    .unwrap();
    let tan_out = Wcs::from_header_str(
        "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 28.5\nCRPIX2 = 24.0\n\
         CRVAL1 = 150.32\nCRVAL2 = 4.01\nCDELT1 = -0.008\nCDELT2 = 0.008\n",
    )
    .unwrap();
    let sip_cards = "A_ORDER = 2\nA_0_2 = 2.0e-5\nA_1_1 = -1.5e-5\nA_2_0 = 1.0e-5\nB_ORDER = 2\n\
                     B_0_2 = -1.0e-5\nB_1_1 = 2.0e-5\nB_2_0 = 1.5e-5\n";
    let homography = case(
        "TAN-to-rotated-TAN",
        input("TAN", (150.0, 2.0), ""),
        rotated_tan,
    );
    let sky = case(
        "SIN-to-TAN",
        input("SIN", (150.3, 4.0), ""),
        tan_out.clone(),
    );
    let sip = case(
        "SIP-to-TAN",
        input("TAN-SIP", (150.3, 4.0), sip_cards),
        tan_out,
    );
    let cases = [homography, sky, sip];
    let mut runs = Vec::new();
    for case in &cases {
        for (k, order) in Order::ALL.into_iter().enumerate() {
            // The splines' coefficients are float64 whatever the input type: one input with
            // NaN pixels (every coefficient NaN, as on the CPU) and one without (I16Be), so
            // that their values are compared too.
            let types: &[InType] = if k <= 1 {
                &TYPES
            } else {
                &[InType::F64Le, InType::I16Be]
            };
            for (i, &t) in types.iter().enumerate() {
                let policies: &[NanPolicy] = if k <= 1 {
                    &[NanPolicy::Propagate, NanPolicy::Renormalize]
                } else {
                    &[NanPolicy::Propagate]
                };
                for &policy in policies {
                    let out_f64 = (k + i) % 2 == 0;
                    runs.push((case, order, t, out_f64, policy));
                    // Orders 0 and 1 key the output type: float64 input into both.
                    if k <= 1 && i == 0 {
                        runs.push((case, order, t, !out_f64, policy));
                    }
                }
            }
        }
    }
    let total = on_every_core(&runs, |&(case, order, t, out_f64, policy)| {
        CONCRETE_VARIANTS.set(true);
        compare(bin, case, order, t, out_f64, policy, Precision::Reproject)
    });
    summary("kernel variants", &total);
    let families = |v: &HashSet<KernelVariant>| -> HashSet<_> {
        v.iter()
            .filter(|v| **v != KernelVariant::General)
            .map(KernelVariant::family)
            .collect()
    };
    let every = families(&KernelVariant::representatives().into_iter().collect());
    let ran = families(&total.variants);
    let missed: Vec<_> = every.difference(&ran).collect();
    assert!(missed.is_empty(), "variant families never run: {missed:?}");
    // And every homography build, each output type and NaN policy its key has.
    let missed: Vec<_> = KernelVariant::representatives()
        .into_iter()
        .filter(|v| v.is_homography() && !total.variants.contains(v))
        .collect();
    assert!(
        missed.is_empty(),
        "homography variants never run: {missed:?}"
    );
    assert!(
        total.valid > 10_000,
        "too few valid pixels: {}",
        total.valid
    );
}

/// A window short of the plane (a row or a column less than it, on either side) makes NaN
/// exactly the pixels whose taps leave it, and gives the whole window's bits elsewhere, in the
/// general kernel and in the homography variant (whose samplers skip the check for a window of
/// the whole plane only): bilinear from the input's values, the splines of orders 2, 3 and 5
/// from the plan's coefficients. Builds with splines also refuse a plane side within 256 of
/// 2^31.
#[test]
fn a_window_short_of_the_plane_gives_nan_where_the_taps_leave_it() {
    let Some(bin) = harness() else { return };
    let wcs = |crpix: (f64, f64), crval: (f64, f64), cdelt: f64| {
        Wcs::from_header_str(&format!(
            "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {:?}\nCRPIX2 = {:?}\n\
             CRVAL1 = {:?}\nCRVAL2 = {:?}\nCDELT1 = {:?}\nCDELT2 = {:?}\n",
            crpix.0, crpix.1, crval.0, crval.1, -cdelt, cdelt
        ))
        .unwrap()
    };
    let (shape_in, shape_out) = ((30usize, 36usize), (34usize, 40usize));
    // The output covers the input and a margin around it, at a slightly finer scale.
    let wcs_in = wcs((18.5, 15.5), (150.0, 2.0), 0.01);
    let wcs_out = wcs((20.5, 17.5), (150.001, 2.002), 0.0093);
    let (ny, nx) = shape_in;
    // No NaN pixels: a spline's coefficients would all be NaN.
    let input = RawInput {
        bytes: (0..ny)
            .flat_map(|y| (0..nx).flat_map(move |x| value_at(y, x).to_le_bytes()))
            .collect(),
        ..make_input(InType::F64Le, shape_in)
    };
    let source = RawSource::new(
        &input.bytes,
        input.sample,
        input.order,
        &[shape_in.0, shape_in.1],
    )
    .unwrap();
    for order in [
        Order::Bilinear,
        Order::Biquadratic,
        Order::Bicubic,
        Order::Quintic,
    ] {
        let options = Options {
            order,
            ..Options::default()
        };
        let plan = Plan::new(
            &source,
            &wcs_in,
            &wcs_out,
            &[shape_out.0, shape_out.1],
            &options,
        )
        .unwrap();
        let block = Block {
            rows: 0..shape_out.0,
            cols: 0..shape_out.1,
        };
        let p = host_parity_inputs(&plan, &block, 0, &InputDecoding::default())
            .unwrap()
            .unwrap();
        // The plane the kernel samples: the values, or the splines' coefficients (float64).
        let plane = match &p.plane_coefficients {
            Some(c) => coefficient_plane(&input, c),
            None => input.clone(),
        };
        let variant = KernelVariant::choose(&p.transform, &p.sampling, plane.code as i32, true);
        assert!(variant.is_homography(), "{order:?}: {variant:?}");
        // The rows (or columns) that the taps of coordinate c read on an axis of n pixels:
        // floor(c) and the next one clamped to the plane (the edge rule) for bilinear, the
        // spline's o + 1 from its knot mirrored into the plane for order o.
        let taps = |c: f64, n: usize| -> Vec<usize> {
            let cc = c.clamp(0.0, n as f64 - 1.0);
            match order.degree() {
                1 => vec![cc as usize, (cc as usize + 1).min(n - 1)],
                o => {
                    let knot = if o % 2 == 1 { cc } else { cc + 0.5 }.floor() as isize;
                    let start = knot - o as isize / 2;
                    (start..=start + o as isize)
                        .map(|i| mirror_index(i, n as isize) as usize)
                        .collect()
                }
            }
        };
        for (defines, values) in [
            (KernelDefines::general(), Vec::new()),
            family_build(variant),
        ] {
            let harness = variant_harness(bin, &defines);
            let run = |window: (usize, usize, usize, usize)| {
                run_harness(
                    &harness,
                    &values,
                    &p.transform,
                    &p.sampling,
                    &window_of(
                        &plane,
                        window.0..window.0 + window.2,
                        window.1..window.1 + window.3,
                    ),
                    plane.code,
                    false,
                    window.3,
                    window,
                    shape_in,
                    &block,
                    true,
                    &format!("{order:?} [{defines}] window {window:?}"),
                )
            };
            let whole = run((0, 0, ny, nx));
            for window in [
                (1, 0, ny - 1, nx),
                (0, 0, ny - 1, nx),
                (0, 1, ny, nx - 1),
                (0, 0, ny, nx - 1),
            ] {
                let short = run(window);
                let (mut nan, mut same) = (0, 0);
                for i in 0..whole.values.len() {
                    let (x, y) = (whole.xs[i], whole.ys[i]);
                    let what = format!("{order:?} [{defines}] {window:?} pixel {i} at ({x}, {y})");
                    if x.is_nan() {
                        assert!(short.values[i].is_nan(), "{what}");
                        continue;
                    }
                    let inside = taps(y, ny)
                        .iter()
                        .all(|r| (window.0..window.0 + window.2).contains(r))
                        && taps(x, nx)
                            .iter()
                            .all(|c| (window.1..window.1 + window.3).contains(c));
                    if inside {
                        assert!(whole.values[i].is_finite(), "{what}");
                        assert_eq!(
                            short.values[i].to_bits(),
                            whole.values[i].to_bits(),
                            "{what}"
                        );
                        same += 1;
                    } else {
                        assert!(
                            short.values[i].is_nan() && short.footprint[i] == 0.0,
                            "{what}: {}",
                            short.values[i]
                        );
                        nan += 1;
                    }
                }
                assert!(
                    nan > 0 && same > 0,
                    "{order:?} [{defines}] {window:?}: {nan} NaN, {same} same"
                );
            }
            // A build with splines reads nothing from a plane with a side within 256 of 2^31
            // (their taps' indices are 32-bit): every value NaN, every footprint 0; at the
            // limit it reads.
            if order.degree() >= 2 {
                for (side, reads) in [(0x7fff_ff00usize, true), (0x7fff_ff01, false)] {
                    let v = run_harness(
                        &harness,
                        &values,
                        &p.transform,
                        &p.sampling,
                        &window_of(&plane, 0..ny, 0..nx),
                        plane.code,
                        false,
                        nx,
                        (0, 0, ny, nx),
                        (side, nx),
                        &block,
                        true,
                        &format!("{order:?} [{defines}] {side} rows"),
                    );
                    let finite = v.values.iter().filter(|x| x.is_finite()).count();
                    assert_eq!(finite > 0, reads, "{order:?} [{defines}] {side} rows");
                    assert_eq!(
                        v.footprint.iter().any(|&f| f != 0.0),
                        reads,
                        "{order:?} [{defines}] {side} rows"
                    );
                }
            }
        }
    }
}
