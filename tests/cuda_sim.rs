//! The GPU pipeline (`CudaExecutor`) on the CUDA simulator (`reproject::gpu::sim`): the real
//! block kernel compiled as host C++, driver calls completed in a random legal order, every
//! call recorded, faults injected. Runs on machines without a GPU (CI).
//!
//! - Every path (eager on 1 and 2 threads, several block sizes, lazy handles in random order,
//!   float32 outputs) gives the same bits on the simulator, and the CPU engine's bits, for
//!   TAN, a frame change with a non-homography pair, SIP, orders 0-5, NaN holes and a cube.
//! - Random completion orders (several seeds, several threads) give the same bits and no
//!   ordering hazard; the bytes moved each way are the input once and the outputs once.
//! - Spline orders 2-5 prefilter on the device: the values go up once, the CPU never makes
//!   its coefficients (unless the planes do not fit: window mode samples the CPU's).
//! - A fault injected at every driver call index of a small job (bilinear, and bicubic with
//!   its prefilter launches; out of memory, a sticky error, a plain error) ends with the right
//!   image, never a panic or a wrong pixel.
//! - Two simulated devices share the blocks.
//! - Serial jobs still drive the GPU with a thread per core (at most 8).
//! - A plan whose kernel variant is not compiled yet runs the general kernel meanwhile.

use std::path::PathBuf;
use std::sync::Arc;

use ndarray::{Array2, Array3, ArrayD, IxDyn};
use reproject::engine::executor::BlockExecutor;
use reproject::engine::lazy::LazyReprojection;
use reproject::engine::{Backend, CudaExecutor, Options, Parallel, Plan};
use reproject::gpu::driver::{Driver, FaultKind};
use reproject::gpu::sim::{SimConfig, SimDriver};
use reproject::interp::Order;
use reproject::io::{ArraySource, ImageSource, SampleType, StoredType};
use reproject::wcs::Wcs;

fn header(
    ctype: (&str, &str),
    crval: (f64, f64),
    crpix: (f64, f64),
    cdelt: f64,
    extra: &str,
) -> String {
    format!(
        "CTYPE1  = '{}'\nCTYPE2  = '{}'\nCRVAL1  = {:?}\nCRVAL2  = {:?}\nCRPIX1  = {:?}\n\
         CRPIX2  = {:?}\nCDELT1  = {:?}\nCDELT2  = {:?}\n{extra}",
        ctype.0, ctype.1, crval.0, crval.1, crpix.0, crpix.1, -cdelt, cdelt
    )
}

fn image(ny: usize, nx: usize, holes: bool) -> Array2<f64> {
    Array2::from_shape_fn((ny, nx), |(y, x)| {
        if holes && (y * 7 + x * 3) % 61 == 0 {
            return f64::NAN;
        }
        let (fy, fx) = (y as f64 / ny as f64, x as f64 / nx as f64);
        100.0 + 40.0 * (6.0 * fx).sin() * (4.0 * fy).cos() + 3.0 * (37.0 * fx * fy).sin()
    })
}

/// One job: input header and pixels (planes, rows, columns), output header and plane shape.
struct Case {
    name: &'static str,
    input_header: String,
    input: Array3<f64>,
    output_header: String,
    shape: (usize, usize),
    order: Order,
}

const SIP: &str = "A_ORDER = 2\nA_0_2 = 2.0e-5\nA_1_1 = -1.5e-5\nA_2_0 = 1.0e-5\n\
                   B_ORDER = 2\nB_0_2 = -1.0e-5\nB_1_1 = 2.0e-5\nB_2_0 = 1.5e-5\n";

fn cases() -> Vec<Case> {
    let tan_out = header(
        ("RA---TAN", "DEC--TAN"),
        (150.02, 30.01),
        (45.5, 30.5),
        0.01,
        "PC1_1 = 0.98\nPC1_2 = -0.17\nPC2_1 = 0.17\nPC2_2 = 0.98\n",
    );
    let plane = |holes| image(64, 72, holes).insert_axis(ndarray::Axis(0));
    let clear = image(64, 72, false);
    let mut cases = vec![
        Case {
            name: "TAN -> rotated TAN (homography), NaN holes",
            input_header: header(
                ("RA---TAN", "DEC--TAN"),
                (150.0, 30.0),
                (36.5, 32.5),
                0.01,
                "",
            ),
            input: plane(true),
            output_header: tan_out.clone(),
            shape: (52, 60),
            order: Order::Bilinear,
        },
        Case {
            name: "SIP TAN -> TAN",
            input_header: header(
                ("RA---TAN-SIP", "DEC--TAN-SIP"),
                (150.0, 30.0),
                (36.5, 32.5),
                0.01,
                SIP,
            ),
            input: plane(false),
            output_header: tan_out.clone(),
            shape: (52, 60),
            order: Order::Bilinear,
        },
        Case {
            name: "cube of 3 planes, TAN -> TAN",
            input_header: header(
                ("RA---TAN", "DEC--TAN"),
                (150.0, 30.0),
                (36.5, 32.5),
                0.01,
                "",
            ),
            input: Array3::from_shape_fn((3, 64, 72), |(p, y, x)| clear[[y, x]] * (p + 1) as f64),
            output_header: tan_out.clone(),
            shape: (52, 60),
            order: Order::Bilinear,
        },
    ];
    for order in [
        Order::NearestNeighbor,
        Order::Bilinear,
        Order::Biquadratic,
        Order::Bicubic,
        Order::Quartic,
        Order::Quintic,
    ] {
        cases.push(Case {
            name: "CAR galactic -> ZEA ICRS (frame change, not a homography)",
            input_header: header(
                ("GLON-CAR", "GLAT-CAR"),
                (120.0, 10.0),
                (36.5, 32.5),
                0.5,
                "",
            ),
            input: plane(order == Order::Bilinear),
            output_header: header(
                ("RA---ZEA", "DEC--ZEA"),
                (10.0, 72.0),
                (30.5, 26.5),
                0.8,
                "",
            ),
            shape: (52, 60),
            order,
        });
    }
    cases.push(Case {
        // Rows wider than a thread block's columns (two pixels per thread): three
        // thread blocks across, the last one partial.
        name: "wide rows, TAN -> rotated TAN (homography)",
        input_header: header(
            ("RA---TAN", "DEC--TAN"),
            (150.0, 30.0),
            (80.5, 12.5),
            0.01,
            "",
        ),
        input: image(24, 170, true).insert_axis(ndarray::Axis(0)),
        output_header: header(
            ("RA---TAN", "DEC--TAN"),
            (150.01, 30.0),
            (75.5, 10.5),
            0.01,
            "PC1_1 = 0.999\nPC1_2 = -0.02\nPC2_1 = 0.02\nPC2_2 = 0.999\n",
        ),
        shape: (20, 150),
        order: Order::Bilinear,
    });
    cases
}

fn source(case: &Case) -> ArraySource<'_, f64> {
    let view = if case.input.shape()[0] == 1 {
        case.input.index_axis(ndarray::Axis(0), 0).into_dyn()
    } else {
        case.input.view().into_dyn()
    };
    ArraySource::new(view).unwrap()
}

fn plan<'a>(case: &Case, source: &'a ArraySource<'a, f64>, options: &Options) -> Plan<'a> {
    let wcs_in = Wcs::from_header_str(&case.input_header).unwrap();
    let wcs_out = Wcs::from_header_str(&case.output_header).unwrap();
    Plan::new(
        source,
        &wcs_in,
        &wcs_out,
        &[case.shape.0, case.shape.1],
        options,
    )
    .unwrap()
}

fn sim(config: SimConfig) -> Arc<SimDriver> {
    Arc::new(SimDriver::new(config))
}

/// The plan on the simulated drivers.
fn on_sim<'a>(plan: Plan<'a>, drivers: &[Arc<SimDriver>]) -> (Plan<'a>, Arc<CudaExecutor>) {
    let drivers = drivers
        .iter()
        .map(|d| d.clone() as Arc<dyn Driver>)
        .collect();
    let executor = Arc::new(CudaExecutor::new(&plan, drivers).unwrap());
    (plan.with_executor(executor.clone()), executor)
}

fn compute<T: reproject::engine::OutputSample + num_zero::Zero>(
    plan: &Plan,
) -> (ArrayD<T>, ArrayD<T>) {
    let shape = plan.shape_out().to_vec();
    let mut data = ArrayD::from_elem(IxDyn(&shape), T::zero());
    let mut footprint = data.clone();
    plan.compute_into(data.view_mut(), footprint.view_mut())
        .unwrap();
    (data, footprint)
}

/// `Zero` for the two output types, without another dependency.
mod num_zero {
    pub trait Zero {
        fn zero() -> Self;
    }
    impl Zero for f64 {
        fn zero() -> Self {
            0.0
        }
    }
    impl Zero for f32 {
        fn zero() -> Self {
            0.0
        }
    }
}

fn bits<T: Copy + Into<f64>>(a: &ArrayD<T>) -> Vec<u64> {
    a.iter()
        .map(|&v| {
            let v: f64 = v.into();
            if v.is_nan() {
                u64::MAX
            } else {
                v.to_bits()
            }
        })
        .collect()
}

fn assert_same<T: Copy + Into<f64>>(
    what: &str,
    a: &(ArrayD<T>, ArrayD<T>),
    b: &(ArrayD<T>, ArrayD<T>),
) {
    assert_eq!(a.0.shape(), b.0.shape(), "{what}: shapes");
    let (da, db) = (bits(&a.0), bits(&b.0));
    let differ = da.iter().zip(&db).filter(|(x, y)| x != y).count();
    assert_eq!(differ, 0, "{what}: {differ} values differ");
    assert_eq!(bits(&a.1), bits(&b.1), "{what}: footprints differ");
}

#[test]
fn every_path_gives_the_cpu_bits_on_the_simulator() {
    if !SimDriver::has_kernels() {
        panic!("the CUDA simulator was built without its host kernels (no C++ compiler)");
    }
    for case in cases() {
        let source = source(&case);
        let base = Options {
            order: case.order,
            ..Options::default()
        };
        let cpu = compute::<f64>(&plan(&case, &source, &base));
        assert!(
            cpu.1.iter().any(|&f| f == 1.0),
            "{}: no coverage",
            case.name
        );
        assert!(cpu.1.iter().any(|&f| f == 0.0), "{}: no edge", case.name);
        let variants = [
            ("serial, automatic blocks", Parallel::Serial, None),
            (
                "2 threads, 17x23 blocks",
                Parallel::Threads(2),
                Some((17, 23)),
            ),
            (
                "3 threads, 64x8 blocks",
                Parallel::Threads(3),
                Some((64, 8)),
            ),
        ];
        for (what, parallel, block_size) in variants {
            let options = Options {
                parallel,
                block_size,
                backend: Backend::Cuda,
                ..base.clone()
            };
            let driver = sim(SimConfig::default());
            let (p, executor) = on_sim(
                plan(&case, &source, &options),
                std::slice::from_ref(&driver),
            );
            let gpu = compute::<f64>(&p);
            assert_same(&format!("{} ({what})", case.name), &gpu, &cpu);
            assert!(
                !p.cpu_spline_coefficients_made(),
                "{} ({what}): the CPU made the spline coefficients",
                case.name
            );
            assert!(
                executor.failure().is_none(),
                "{}: {:?}",
                case.name,
                executor.failure()
            );
            assert!(
                driver.stats().launches > 0,
                "{}: nothing ran on the simulator",
                case.name
            );
            assert!(
                driver.hazards().is_empty(),
                "{}: {:?}",
                case.name,
                driver.hazards()
            );
        }
        // Lazy handles, in a scrambled order, into float32 and float64 blocks.
        let options = Options {
            block_size: Some((16, 20)),
            backend: Backend::Cuda,
            ..base.clone()
        };
        let driver = sim(SimConfig::default());
        let (p, _) = on_sim(
            plan(&case, &source, &options),
            std::slice::from_ref(&driver),
        );
        let lazy = LazyReprojection::new(p);
        let mut handles = lazy.blocks();
        let n = handles.len();
        handles.sort_by_key(|h| (h.index() * 7919) % n);
        let shape = lazy.plan().shape_out().to_vec();
        let planes = lazy.plan().planes();
        let (ny, nx) = lazy.plan().plane_shape_out();
        let mut data = Array3::<f32>::zeros((planes, ny, nx));
        let mut footprint = data.clone();
        for h in &handles {
            let b = h.block().clone();
            let s = ndarray::s![.., b.rows.clone(), b.cols.clone()];
            h.compute_into(data.slice_mut(s), footprint.slice_mut(s))
                .unwrap();
        }
        let lazy32 = (
            data.into_shape_with_order(IxDyn(&shape)).unwrap(),
            footprint.into_shape_with_order(IxDyn(&shape)).unwrap(),
        );
        let cpu32 = compute::<f32>(&plan(&case, &source, &base));
        assert_same(
            &format!("{} (lazy handles, float32)", case.name),
            &lazy32,
            &cpu32,
        );
        assert!(!lazy.plan().cpu_spline_coefficients_made());
        assert!(driver.hazards().is_empty());
    }
}

#[test]
fn random_completion_orders_give_the_same_bits_and_move_the_minimum() {
    let case = &cases()[2]; // the cube
    let source = source(case);
    let options = Options {
        parallel: Parallel::Threads(3),
        block_size: Some((13, 17)),
        ..Options::default()
    };
    let cpu = compute::<f64>(&plan(case, &source, &Options::default()));
    let planes = 3;
    let (ny, nx) = case.shape;
    for seed in 1..=6u64 {
        let driver = sim(SimConfig {
            seed: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            ..SimConfig::default()
        });
        let (p, _) = on_sim(plan(case, &source, &options), std::slice::from_ref(&driver));
        let gpu = compute::<f64>(&p);
        assert_same(&format!("seed {seed}"), &gpu, &cpu);
        assert!(driver.hazards().is_empty(), "{:?}", driver.hazards());
        drop(p);
        let stats = driver.stats();
        // Down: the value of every output pixel, once (the footprint is derived on the host).
        assert_eq!(stats.downloaded, (planes * ny * nx * 8) as u64);
        // Up: the input planes once (float64), and the two parameter arrays.
        let params = stats.uploaded - (planes * 64 * 72 * 8) as u64;
        assert!(params > 0 && params < 16 * 1024, "parameter bytes {params}");
        assert_eq!(stats.device_bytes_in_use, 0, "device memory left allocated");
        // The parameters are parsed once for the plan's build, not in every launch's blocks.
        let blocks = ny.div_ceil(13) * nx.div_ceil(17);
        assert_eq!(stats.parameter_parses, 1);
        assert_eq!(stats.launches, 1 + planes * blocks);
    }
}

/// `case` computed on `driver` by a new plan (as every Python call makes one), its output
/// plane one block, so that the buffers in use at once do not depend on the scheduling.
fn one_block_job<'a>(
    case: &Case,
    source: &'a ArraySource<'a, f64>,
    driver: &Arc<SimDriver>,
) -> (ArrayD<f64>, ArrayD<f64>) {
    let options = Options {
        block_size: Some(case.shape),
        ..Options::default()
    };
    let (p, _) = on_sim(plan(case, source, &options), std::slice::from_ref(driver));
    compute::<f64>(&p)
}

/// After a first job, the same job (a new plan: window mode, then resident planes) takes
/// every page-locked buffer, device allocation and stream from the driver's pools (no
/// `cuMemHostAlloc`, `cuMemAlloc` or `cuStreamCreate` at all) and compiles no kernel. One
/// block per
/// job, so that the buffers in use at once do not depend on the scheduling (with several
/// blocks in flight the pool reaches the peak the scheduling reaches, then stops growing).
#[test]
fn after_a_warm_up_job_no_page_locked_memory_is_allocated() {
    let case = &cases()[2]; // the cube
    let source = source(case);
    let cpu = compute::<f64>(&plan(case, &source, &Options::default()));
    for memory in [1 << 30, 4 << 20] {
        // 4 MiB of device memory: the planes do not fit, the block uploads its window.
        let driver = sim(SimConfig {
            memory,
            ..SimConfig::default()
        });
        let run = || one_block_job(case, &source, &driver);
        assert_same("warm-up", &run(), &cpu);
        let warm = driver.stats().host_allocations;
        assert!(warm > 0, "the first job allocates");
        let (device_warm, streams_warm) = (
            driver.stats().device_allocations,
            driver.stats().streams_created,
        );
        // The plan readies both output types' builds (its executor cannot know which the
        // caller's outputs will take).
        let compiled = driver.stats().compilations;
        assert_eq!(
            compiled, 2,
            "the warm-up compiles the homography variants (float32, float64 outputs) once each"
        );
        for k in 0..3 {
            assert_same(&format!("job {k} after the warm-up"), &run(), &cpu);
            assert_eq!(
                driver.stats().host_allocations,
                warm,
                "job {k} after the warm-up allocated page-locked memory ({memory} B device)"
            );
            assert_eq!(
                driver.stats().compilations,
                compiled,
                "job {k} after the warm-up compiled a kernel"
            );
            // Device memory and streams come from the driver too.
            let stats = driver.stats();
            assert_eq!(
                (stats.device_allocations, stats.streams_created),
                (device_warm, streams_warm),
                "job {k} after the warm-up allocated device memory or made streams ({memory} B)"
            );
            assert_eq!(
                stats.device_bytes_in_use, 0,
                "device memory left handed out"
            );
        }
        let calls = driver.calls();
        let allocs = calls.iter().filter(|c| c.name == "cuMemHostAlloc").count();
        assert_eq!(allocs, warm);
        assert!(driver.hazards().is_empty(), "{:?}", driver.hazards());
    }
}

/// A buffer as large as a pool's limit, given back before the jobs (the benchmark's 1 GiB
/// copy buffer), must not keep the jobs' own buffers out of the pools: the pools make room
/// for the newest. Mutation: a pool that refuses new buffers when full allocates afresh in
/// every job.
#[test]
fn a_full_pool_makes_room_for_the_jobs_buffers() {
    let case = &cases()[0];
    let source = source(case);
    let cpu = compute::<f64>(&plan(case, &source, &Options::default()));
    let memory = 1usize << 30;
    let driver = sim(SimConfig {
        memory,
        ..SimConfig::default()
    });
    // Page-locked: the host pool's limit (1 GiB); device: the device pool's (an eighth).
    let big_host = driver.alloc_host(1 << 30).unwrap();
    driver.free_host(big_host);
    let big_device = driver.alloc(memory / 8).unwrap();
    driver.free(big_device);
    let run = || one_block_job(case, &source, &driver);
    assert_same("warm-up", &run(), &cpu);
    let warm = driver.stats();
    for k in 0..2 {
        assert_same(&format!("job {k} after the warm-up"), &run(), &cpu);
        let stats = driver.stats();
        assert_eq!(
            (stats.host_allocations, stats.device_allocations),
            (warm.host_allocations, warm.device_allocations),
            "job {k} after the warm-up allocated (page-locked, device)"
        );
    }
    assert!(driver.hazards().is_empty(), "{:?}", driver.hazards());
}

/// Out of memory when the input planes are allocated: the blocks stay on the GPU, each
/// uploading only its input window (not the whole input per block), and give the CPU's bits.
#[test]
fn after_an_out_of_memory_on_the_planes_each_block_uploads_only_its_window() {
    let case = &cases()[0]; // TAN -> rotated TAN, float64 input
    let source = source(case);
    let options = Options {
        block_size: Some((17, 23)),
        ..Options::default()
    };
    let cpu = compute::<f64>(&plan(case, &source, &Options::default()));
    let (_, in_ny, in_nx) = case.input.dim();
    let plane_bytes = in_ny * in_nx * 8;
    // The call allocating the plane, found in a run without faults (serial: the same calls).
    let clean = sim(SimConfig::default());
    let (p, _) = on_sim(plan(case, &source, &options), std::slice::from_ref(&clean));
    assert_same("no fault", &compute::<f64>(&p), &cpu);
    let at = clean
        .calls()
        .iter()
        .find(|c| c.name == "cuMemAlloc" && c.bytes == plane_bytes)
        .expect("the plane is allocated")
        .index;
    let driver = sim(SimConfig {
        fail_at: Some((at, FaultKind::OutOfMemory)),
        ..SimConfig::default()
    });
    let (p, executor) = on_sim(plan(case, &source, &options), std::slice::from_ref(&driver));
    assert_same("out of memory on the plane", &compute::<f64>(&p), &cpu);
    assert!(executor.failure().is_none(), "{:?}", executor.failure());
    let blocks = case.shape.0.div_ceil(17) * case.shape.1.div_ceil(23);
    let uploads: Vec<usize> = driver
        .calls()
        .iter()
        .filter(|c| c.name == "cuMemcpyHtoDAsync" && c.index > at)
        .map(|c| c.bytes)
        .collect();
    assert!(
        uploads.len() >= blocks,
        "{} uploads, {blocks} blocks",
        uploads.len()
    );
    assert!(uploads.iter().all(|&b| b < plane_bytes / 2), "{uploads:?}");
    let total: usize = uploads.iter().sum();
    assert!(
        total < 3 * plane_bytes,
        "{total} bytes up for a {plane_bytes}-byte plane"
    );
    assert!(driver.hazards().is_empty(), "{:?}", driver.hazards());
}

/// A source whose reads panic (a caller's source with a bug, say).
struct PanickingSource(Vec<usize>);

impl ImageSource for PanickingSource {
    fn shape(&self) -> &[usize] {
        &self.0
    }
    fn stored_type(&self) -> StoredType {
        StoredType {
            sample: SampleType::F64,
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
    ) -> reproject::Result<()> {
        panic!("this source cannot be read");
    }
}

/// The thread uploading the resident planes panics (the source's read panics): the blocks
/// waiting for its rows are released (to the CPU, whose read panics too), so the run ends
/// with the panic instead of hanging.
#[test]
fn a_panic_while_the_planes_go_up_leaves_no_block_waiting() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let case = &cases()[0];
        let source = PanickingSource(vec![case.input.dim().1, case.input.dim().2]);
        let wcs_in = Wcs::from_header_str(&case.input_header).unwrap();
        let wcs_out = Wcs::from_header_str(&case.output_header).unwrap();
        let options = Options {
            block_size: Some((13, 17)),
            parallel: Parallel::Threads(3),
            ..Options::default()
        };
        let plan = Plan::new(
            &source,
            &wcs_in,
            &wcs_out,
            &[case.shape.0, case.shape.1],
            &options,
        )
        .unwrap();
        let (plan, _) = on_sim(plan, &[sim(SimConfig::default())]);
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            compute::<f64>(&plan);
        }));
        let _ = done.send(run.is_err());
    });
    let panicked = finished
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the run hangs: blocks wait for rows that never come");
    assert!(panicked, "the source's panic was lost");
}

#[test]
fn a_fault_at_any_driver_call_ends_with_the_right_image() {
    let case = &cases()[4]; // CAR galactic -> ZEA, bilinear, NaN holes
    assert_eq!(case.order, Order::Bilinear);
    faults_at_every_call_end_with_the_right_image(case);
}

/// As [`a_fault_at_any_driver_call_ends_with_the_right_image`] for a small bicubic job: its
/// calls include the prefilter's constants and launches.
#[test]
fn a_fault_at_any_driver_call_of_a_spline_job_ends_with_the_right_image() {
    let case = &cases()[6]; // CAR galactic -> ZEA, bicubic
    assert_eq!(case.order, Order::Bicubic);
    faults_at_every_call_end_with_the_right_image(case);
}

/// A fault injected at every call index of `case`'s job on the simulator (each kind) ends with
/// the CPU's image; almost every fault makes the executor fall back to the CPU.
fn faults_at_every_call_end_with_the_right_image(case: &Case) {
    let source = source(case);
    let options = Options {
        order: case.order,
        block_size: Some((26, 30)),
        backend: Backend::Cuda,
        ..Options::default()
    };
    let cpu_options = Options {
        order: case.order,
        ..Options::default()
    };
    let cpu = compute::<f64>(&plan(case, &source, &cpu_options));
    let clean = sim(SimConfig::default());
    let (p, _) = on_sim(plan(case, &source, &options), std::slice::from_ref(&clean));
    assert_same("clean run", &compute::<f64>(&p), &cpu);
    // The calls of the computation (not those of dropping the plan's device state after it).
    let calls: Vec<usize> = clean
        .calls()
        .iter()
        .filter(|c| c.fallible)
        .map(|c| c.index)
        .collect();
    drop(p);
    assert!(calls.len() > 20, "only {} calls", calls.len());
    let mut fell_back = 0;
    for &index in &calls {
        for kind in [FaultKind::OutOfMemory, FaultKind::Sticky, FaultKind::Other] {
            let driver = sim(SimConfig {
                fail_at: Some((index, kind)),
                ..SimConfig::default()
            });
            let (p, executor) =
                on_sim(plan(case, &source, &options), std::slice::from_ref(&driver));
            let result = compute::<f64>(&p);
            assert_same(&format!("fault {kind:?} at call {index}"), &result, &cpu);
            // Two threads share the blocks, so a run makes one or two sets of block buffers
            // and interleaves its calls differently: the fault strikes the first fallible call
            // at or after the index, and the last few indices of the clean run may not be
            // reached.
            let reached = driver
                .calls()
                .iter()
                .any(|c| c.index >= index && c.fallible);
            match (executor.failure(), kind) {
                (Some(_), _) => fell_back += 1,
                // An out-of-memory error while the input planes go up is handled on the GPU:
                // each block then uploads its own window.
                (None, FaultKind::OutOfMemory) => {}
                (None, _) if !reached => {}
                (None, _) => panic!(
                    "a {kind:?} fault at call {index} went unnoticed: {:?}",
                    driver.calls().get(index)
                ),
            }
            if kind == FaultKind::Sticky && executor.failure().is_some() {
                assert!(driver.poisoned().is_some());
                let after = driver.calls().len();
                // The poisoned context is not used again by this executor.
                let again = compute::<f64>(&p);
                assert_same("after the sticky error", &again, &cpu);
                let used = driver.calls()[after..]
                    .iter()
                    .filter(|c| c.fallible)
                    .count();
                assert_eq!(used, 0, "the poisoned context was used again");
            }
            assert!(driver.hazards().is_empty(), "{:?}", driver.hazards());
        }
    }
    assert!(
        fell_back >= 2 * calls.len() * 9 / 10,
        "{fell_back} fallbacks for {} calls",
        calls.len()
    );
}

#[test]
fn blocks_spread_over_two_devices() {
    let case = &cases()[0];
    let source = source(case);
    let options = Options {
        parallel: Parallel::Threads(2),
        block_size: Some((13, 15)),
        ..Options::default()
    };
    let cpu = compute::<f64>(&plan(case, &source, &Options::default()));
    let devices = [
        sim(SimConfig {
            ordinal: 0,
            ..SimConfig::default()
        }),
        sim(SimConfig {
            ordinal: 1,
            ..SimConfig::default()
        }),
    ];
    let (p, executor) = on_sim(plan(case, &source, &options), &devices);
    assert_eq!(executor.name(), "cuda:0,1");
    assert_same("two devices", &compute::<f64>(&p), &cpu);
    for d in &devices {
        assert!(
            d.stats().launches > 0,
            "device {} got no block",
            d.ordinal()
        );
    }
}

/// The host side of the GPU pipeline (staging, draining results, footprints) runs on every
/// core up to 8 whatever the CPU's parallelism asks for: reproject's default is
/// `parallel=False`, and two block threads left a 16384² job from Python at 730 ms on the
/// H100 machine against 63 ms with 16 (docs/measurements/h100-2026-11-26). Every core is not
/// more (8 beat 16 in every pair measured, docs/measurements/h100-2026-11-27-session14); an
/// explicit larger count is given. Into fresh outputs, whose first writes are the host's
/// work, every core up to 16 (two at least).
#[test]
fn serial_jobs_keep_the_host_side_of_the_gpu_busy() {
    let case = &cases()[0];
    let source = source(case);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (_, executor) = on_sim(
        plan(case, &source, &Options::default()),
        &[sim(SimConfig::default())],
    );
    for asked in [
        Parallel::Serial,
        Parallel::Threads(1),
        Parallel::Threads(2),
        Parallel::AllCores,
    ] {
        assert_eq!(
            executor.parallel(asked, false).threads(),
            cores.clamp(2, 8),
            "{asked:?} on {cores} cores"
        );
        assert_eq!(
            executor.parallel(asked, true).threads(),
            cores.clamp(2, 16),
            "{asked:?} into fresh outputs on {cores} cores"
        );
    }
    assert_eq!(
        executor.parallel(Parallel::Threads(12), false).threads(),
        12
    );
}

/// A FITS file of `BITPIX` `bitpix` holding `samples` (big-endian bytes, `planes` × 40 × 48)
/// with the extra cards (BSCALE, BZERO, BLANK).
fn scaled_fits(name: &str, bitpix: i32, planes: usize, samples: &[u8], cards: &[&str]) -> PathBuf {
    let mut header = vec![
        "SIMPLE  = T".to_string(),
        format!("BITPIX  = {bitpix}"),
        format!("NAXIS   = {}", if planes > 1 { 3 } else { 2 }),
        "NAXIS1  = 48".to_string(),
        "NAXIS2  = 40".to_string(),
    ];
    if planes > 1 {
        header.push(format!("NAXIS3  = {planes}"));
    }
    header.extend(cards.iter().map(|c| c.to_string()));
    header.push("END".to_string());
    let mut bytes: Vec<u8> = header
        .iter()
        .flat_map(|c| format!("{c:<80}").into_bytes())
        .collect();
    bytes.resize(bytes.len().div_ceil(2880) * 2880, b' ');
    bytes.extend_from_slice(samples);
    bytes.resize(bytes.len().div_ceil(2880) * 2880, 0);
    let path = std::env::temp_dir().join(format!("rp-cuda-sim-{}-{name}.fits", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Scaled and BLANK FITS integers (BITPIX 16 with BSCALE/BZERO/BLANK, the unsigned 16- and
/// 8-bit conventions, BITPIX 32 scaled, a cube) go up as stored and are decoded by the kernel:
/// the CPU's bits, and only the stored bytes cross the bus (2 a pixel for BITPIX 16, not 8).
#[test]
fn scaled_fits_integers_are_decoded_on_the_device() {
    let wcs_in = Wcs::from_header_str(&header(
        ("RA---TAN", "DEC--TAN"),
        (150.0, 30.0),
        (24.5, 20.5),
        0.01,
        "",
    ))
    .unwrap();
    let wcs_out = Wcs::from_header_str(&header(
        ("RA---TAN", "DEC--TAN"),
        (150.01, 30.0),
        (22.5, 19.5),
        0.01,
        "PC1_1 = 0.98\nPC1_2 = -0.17\nPC2_1 = 0.17\nPC2_2 = 0.98\n",
    ))
    .unwrap();
    let value = |p: usize, y: usize, x: usize| ((y * 37 + x * 11 + p * 5) % 200) as i64 * 3 - 250;
    let be = |bitpix: i32, v: i64| -> Vec<u8> {
        match bitpix {
            8 => vec![v.rem_euclid(256) as u8],
            16 => (v as i16).to_be_bytes().to_vec(),
            _ => (v as i32).to_be_bytes().to_vec(),
        }
    };
    let cases: [(&str, i32, usize, &[&str]); 5] = [
        (
            "i16 scaled blank",
            16,
            1,
            &["BSCALE  = 0.5", "BZERO   = 10.0", "BLANK   = -148"],
        ),
        (
            "u16 convention blank",
            16,
            1,
            &["BZERO   = 32768", "BLANK   = -31"],
        ),
        (
            "u8 signed convention",
            8,
            1,
            &["BZERO   = -128", "BLANK   = 77"],
        ),
        ("i32 scaled", 32, 1, &["BSCALE  = 1.0E-3", "BZERO   = -2.5"]),
        (
            "i16 scaled cube",
            16,
            3,
            &["BSCALE  = 2.0", "BZERO   = -7.0", "BLANK   = -148"],
        ),
    ];
    for (name, bitpix, planes, cards) in cases {
        let mut samples = Vec::new();
        for p in 0..planes {
            for y in 0..40 {
                for x in 0..48 {
                    samples.extend(be(bitpix, value(p, y, x)));
                }
            }
        }
        let path = scaled_fits(&name.replace(' ', "-"), bitpix, planes, &samples, cards);
        let source = reproject::io::FitsSource::open(&path, 0).unwrap();
        let mut shape = if planes > 1 { vec![planes] } else { vec![] };
        shape.extend([36, 44]);
        let make =
            |options: &Options| Plan::new(&source, &wcs_in, &wcs_out, &shape, options).unwrap();
        let options = Options {
            parallel: Parallel::Threads(2),
            block_size: Some((16, 24)),
            ..Options::default()
        };
        let cpu = compute::<f64>(&make(&options));
        let driver = sim(SimConfig::default());
        let (p, executor) = on_sim(make(&options), std::slice::from_ref(&driver));
        let gpu = compute::<f64>(&p);
        assert_same(name, &gpu, &cpu);
        assert!(
            executor.failure().is_none(),
            "{name}: {:?}",
            executor.failure()
        );
        drop(p);
        // Up: the stored samples, once, and the parameter arrays.
        let params = driver.stats().uploaded - samples.len() as u64;
        assert!(
            params < 16 * 1024,
            "{name}: {params} bytes beyond the stored samples"
        );
        std::fs::remove_file(&path).unwrap();
    }
}

/// The kernel variants: a homography plan's launches name the variant specialised for its
/// order and input type, a celestial plan the sky variant of its projection pair, frame and
/// SIP (each family runs here, with the CPU's bits); a plan no key covers (FK4 E-terms)
/// launches the general kernel.
#[test]
fn launches_name_the_variant_of_their_plan() {
    use reproject::engine::kernel_variant::{
        KernelVariant, VariantInput, VariantNan, VariantOutput,
    };
    use reproject::wcs::projection::ProjectionCode;
    use std::collections::HashSet;
    let all = cases();
    let homography = &all[0];
    let sip = &all[1];
    let sky = &all[4]; // CAR galactic -> ZEA ICRS
    let fk4 = Case {
        name: "TAN FK4 -> TAN ICRS",
        input_header: format!(
            "{}RADESYS = 'FK4'\nEQUINOX = 1950.0\n",
            homography.input_header
        ),
        input: homography.input.clone(),
        output_header: homography.output_header.clone(),
        shape: homography.shape,
        order: homography.order,
    };
    let mut ran = HashSet::new();
    let mut check = |name: &str, source: &dyn Fn() -> Box<dyn ImageSourceBox>, order, want| {
        let options = Options {
            order,
            block_size: Some((26, 30)),
            ..Options::default()
        };
        let src = source();
        let cpu = compute::<f64>(&src.plan(&options));
        let driver = sim(SimConfig::default());
        let (p, executor) = on_sim(src.plan(&options), std::slice::from_ref(&driver));
        assert_same(&format!("{name} {order:?}"), &compute::<f64>(&p), &cpu);
        assert!(executor.failure().is_none(), "{:?}", executor.failure());
        let launched = driver.launched_variants();
        assert!(!launched.is_empty(), "{name} {order:?}: nothing launched");
        let want: KernelVariant = want;
        for v in &launched {
            assert_eq!(*v, want.defines(), "{name} {order:?}");
        }
        ran.insert(want.family());
    };
    for (k, order) in Order::ALL.into_iter().enumerate() {
        let o = k as u8;
        // Float64 outputs, unrounded (native byte order); NaN propagated.
        let h = |input| KernelVariant::Homography {
            order: o,
            input,
            output: match o {
                0 | 1 => VariantOutput::F64,
                _ => VariantOutput::Any,
            },
            nan: match o {
                1 => VariantNan::Propagate,
                _ => VariantNan::Any,
            },
        };
        // ZEA from CAR, with the galactic -> ICRS rotation compiled for the poles.
        let s = |input| KernelVariant::Sky {
            out_prj: ProjectionCode::Zea as u8,
            in_prj: ProjectionCode::Car as u8,
            frame: true,
            sip: false,
            order: o,
            input,
        };
        for (name, case, variant) in [
            ("homography", homography, &h as &dyn Fn(_) -> _),
            ("sky", sky, &s),
        ] {
            let f64_source = || boxed(case, |v| v);
            check(
                &format!("{name} f64"),
                &f64_source,
                order,
                variant(VariantInput::F64),
            );
            if o <= 1 {
                let f32_source = || boxed(case, |v| v as f32);
                check(
                    &format!("{name} f32"),
                    &f32_source,
                    order,
                    variant(VariantInput::F32),
                );
                let i16_source = || boxed(case, |v| (v * 50.0).round() as i16);
                check(
                    &format!("{name} i16"),
                    &i16_source,
                    order,
                    variant(VariantInput::Any),
                );
            }
        }
        if o <= 3 {
            // TAN from TAN-SIP.
            let sip_variant = KernelVariant::Sky {
                out_prj: ProjectionCode::Tan as u8,
                in_prj: ProjectionCode::Tan as u8,
                frame: false,
                sip: true,
                order: o,
                input: VariantInput::F64,
            };
            check("SIP TAN -> TAN", &|| boxed(sip, |v| v), order, sip_variant);
            check(
                "FK4 -> ICRS",
                &|| boxed(&fk4, |v| v),
                order,
                KernelVariant::General,
            );
        }
    }
    let every: HashSet<_> = KernelVariant::representatives()
        .iter()
        .map(KernelVariant::family)
        .collect();
    assert_eq!(ran, every, "not every build family ran on the simulator");
}

/// A launch (or load) of a build the simulator does not have is a fault, never the general
/// kernel in its place.
/// A plan whose kernel variant is not compiled yet (not loaded, not in the on-disk cache)
/// does not wait for NVRTC: it runs the general kernel, with the same bits, while the device
/// compiles the variant, which launches after the compilation run (here: the next plan's).
#[test]
fn plans_run_the_general_kernel_until_their_variant_is_compiled() {
    use reproject::engine::kernel_variant::{KernelVariant, VariantInput};
    use reproject::gpu::variant::KernelDefines;
    use reproject::wcs::projection::ProjectionCode;
    let case = &cases()[4]; // CAR galactic -> ZEA ICRS
    let options = Options {
        block_size: Some((26, 30)),
        ..Options::default()
    };
    let src = boxed(case, |v| v);
    let cpu = compute::<f64>(&src.plan(&options));
    let driver = sim(SimConfig {
        uncached_variants: true,
        ..SimConfig::default()
    });
    let sky = KernelVariant::Sky {
        out_prj: ProjectionCode::Zea as u8,
        in_prj: ProjectionCode::Car as u8,
        frame: true,
        sip: false,
        order: 1,
        input: VariantInput::F64,
    }
    .defines();
    assert!(!driver.variant_ready(&sky));
    for (run, want) in [("first", KernelDefines::general()), ("second", sky.clone())] {
        let launched_before = driver.launched_variants().len();
        let (p, executor) = on_sim(src.plan(&options), std::slice::from_ref(&driver));
        assert_same(run, &compute::<f64>(&p), &cpu);
        assert!(executor.failure().is_none(), "{:?}", executor.failure());
        let launched = &driver.launched_variants()[launched_before..];
        assert!(!launched.is_empty(), "{run}: nothing launched");
        assert!(launched.iter().all(|v| *v == want), "{run}: {launched:?}");
        // The first plan set the compilation off; it ends between the two plans.
        assert_eq!(
            driver.finish_compilations(),
            usize::from(run == "first"),
            "{run}"
        );
        assert!(driver.variant_ready(&sky), "{run}");
    }
    assert_eq!(driver.stats().compilations, 1);
}

#[test]
fn an_unknown_variant_is_a_fault() {
    use reproject::gpu::driver::{BlockLaunch, DevicePtr};
    use reproject::gpu::variant::KernelDefines;
    let driver = sim(SimConfig::default());
    let bogus = KernelDefines::new(["RP_V_HOMOGRAPHY", "RP_V_ORDER=9"]).unwrap();
    let fault = driver.load_variant(&bogus).unwrap_err();
    assert!(fault.message.contains("no build"), "{fault}");
    assert!(driver.load_variant(&KernelDefines::general()).is_ok());
    let stream = driver.create_stream().unwrap();
    let buffers: Vec<DevicePtr> = (0..5).map(|_| driver.alloc(4096).unwrap()).collect();
    let launch = BlockLaunch {
        variant: bogus,
        grid: (1, 1),
        threads: (8, 8),
        transform: buffers[0],
        sampling: buffers[1],
        input: buffers[2],
        input_type: 1,
        big_endian: 0,
        in_pitch: 8,
        window: (0, 0, 8, 8),
        plane: (8, 8),
        out_origin: (0, 0),
        block: (8, 8),
        out: buffers[3],
        footprint: buffers[4],
        out_f64: 1,
        out_pitch: 8,
    };
    // SAFETY: allocations of 4096 bytes hold what the launch describes.
    let fault = unsafe { driver.launch(stream, &launch) }.unwrap_err();
    assert_eq!(fault.kind, FaultKind::Other);
    assert!(fault.message.contains("RP_V_ORDER=9"), "{fault}");
    assert!(driver.launched_variants().is_empty());
    driver.synchronize(stream).unwrap();
    assert_eq!(driver.stats().launches, 0);
    for b in buffers {
        driver.free(b);
    }
    driver.destroy_stream(stream);
}

/// An input of the homography case converted to another element type, with its plan.
trait ImageSourceBox {
    fn plan(&self, options: &Options) -> Plan<'_>;
}

struct Converted<T: reproject::io::ArrayElement> {
    input: Array2<T>,
    case_in: String,
    case_out: String,
    shape: (usize, usize),
}

impl<T: reproject::io::ArrayElement> ImageSourceBox for Converted<T> {
    fn plan(&self, options: &Options) -> Plan<'_> {
        let source = ArraySource::new(self.input.view().into_dyn()).unwrap();
        let wcs_in = Wcs::from_header_str(&self.case_in).unwrap();
        let wcs_out = Wcs::from_header_str(&self.case_out).unwrap();
        let shared: Arc<dyn reproject::io::ImageSource + '_> = Arc::new(source);
        Plan::with_shared_source(
            shared,
            &wcs_in,
            &wcs_out,
            &[self.shape.0, self.shape.1],
            options,
        )
        .unwrap()
    }
}

fn boxed<T: reproject::io::ArrayElement>(
    case: &Case,
    convert: impl Fn(f64) -> T,
) -> Box<dyn ImageSourceBox> {
    let plane = case.input.index_axis(ndarray::Axis(0), 0);
    Box::new(Converted {
        input: plane.mapv(|v| convert(if v.is_nan() { 0.0 } else { v })),
        case_in: case.input_header.clone(),
        case_out: case.output_header.clone(),
        shape: case.shape,
    })
}

/// Float32 inputs with a spline: reproject rounds their results to float32 (as for bilinear
/// FITS memory maps), so float64 outputs cross the bus as float32 (half the bytes) and widen
/// exactly on the host: the CPU's bits, 4 bytes a pixel down.
#[test]
fn float32_results_come_back_as_float32() {
    for case in [&cases()[0], &cases()[4]] {
        let image = case
            .input
            .index_axis(ndarray::Axis(0), 0)
            .mapv(|v| v as f32);
        let source = ArraySource::new(image.view().into_dyn()).unwrap();
        let wcs_in = Wcs::from_header_str(&case.input_header).unwrap();
        let wcs_out = Wcs::from_header_str(&case.output_header).unwrap();
        let options = Options {
            order: Order::Bicubic,
            block_size: Some((20, 24)),
            ..Options::default()
        };
        let make = || {
            Plan::new(
                &source,
                &wcs_in,
                &wcs_out,
                &[case.shape.0, case.shape.1],
                &options,
            )
            .unwrap()
        };
        let cpu = compute::<f64>(&make());
        assert!(cpu
            .0
            .iter()
            .all(|&v| v.is_nan() || f64::from(v as f32) == v));
        let driver = sim(SimConfig::default());
        let (p, _) = on_sim(make(), std::slice::from_ref(&driver));
        assert_same(case.name, &compute::<f64>(&p), &cpu);
        let pixels = (case.shape.0 * case.shape.1) as u64;
        assert_eq!(driver.stats().downloaded, 4 * pixels, "{}", case.name);
    }
}

/// The profiling driver (`gpu::profile`) serializes a job's copies and launches and counts
/// them: the same bits as the CPU, the input's bytes up, one value per pixel down, a launch
/// per block.
#[test]
fn a_profiled_job_gives_the_same_bits_and_its_phases() {
    use reproject::gpu::profile::ProfilingDriver;
    let case = &cases()[0];
    let source = source(case);
    let options = Options {
        parallel: Parallel::Threads(2),
        block_size: Some((26, 30)),
        ..Options::default()
    };
    let cpu = compute::<f64>(&plan(case, &source, &options));
    let inner: Arc<dyn Driver> = sim(SimConfig::default());
    let profiled = Arc::new(ProfilingDriver::new(inner));
    let p = plan(case, &source, &options);
    let executor = CudaExecutor::new(&p, vec![profiled.clone() as Arc<dyn Driver>]).unwrap();
    let p = p.with_executor(Arc::new(executor));
    assert_same("profiled", &compute::<f64>(&p), &cpu);
    let phases = profiled.phases();
    let (ny, nx) = case.shape;
    assert_eq!(
        phases.uploaded,
        (64 * 72 * 8) as u64,
        "the input plane, once"
    );
    assert_eq!(
        phases.downloaded,
        (ny * nx * 8) as u64,
        "one value per pixel"
    );
    assert_eq!(
        phases.launches,
        1 + 4,
        "one launch parsing the parameters, one per block"
    );
    assert_eq!(
        phases.prefilter_launches, 0,
        "a bilinear job has no prefilter"
    );
    assert!(phases.device_time() > std::time::Duration::ZERO);

    // A bicubic job's prefilter: the values kernel and one filter launch per axis of its
    // plane, counted among the kernels.
    let case = &cases()[6]; // CAR galactic -> ZEA, bicubic
    assert_eq!(case.order, Order::Bicubic);
    let source = self::source(case);
    let options = Options {
        order: case.order,
        ..options
    };
    let inner: Arc<dyn Driver> = sim(SimConfig::default());
    let profiled = Arc::new(ProfilingDriver::new(inner));
    let p = plan(case, &source, &options);
    let cpu = compute::<f64>(&plan(case, &source, &options));
    let executor = CudaExecutor::new(&p, vec![profiled.clone() as Arc<dyn Driver>]).unwrap();
    let p = p.with_executor(Arc::new(executor));
    assert_same("profiled bicubic", &compute::<f64>(&p), &cpu);
    let phases = profiled.phases();
    assert_eq!(
        phases.prefilter_launches, 2,
        "the filter along the columns, from the stored samples, then along the rows"
    );
    assert!(phases.launches > phases.prefilter_launches);
    assert!(phases.prefilter_time <= phases.kernel_time);
}

/// The input planes go up in bands of rows (two at least) through two lanes (staging buffer and
/// stream): the second band is read and queued on the other stream before the first band's copy
/// is waited for.
#[test]
fn resident_uploads_alternate_two_lanes() {
    let case = &cases()[0];
    let source = source(case);
    let cpu = compute::<f64>(&plan(case, &source, &Options::default()));
    let driver = sim(SimConfig::default());
    let (p, _) = on_sim(
        plan(case, &source, &Options::default()),
        std::slice::from_ref(&driver),
    );
    assert_same("two lanes", &compute::<f64>(&p), &cpu);
    let calls = driver.calls();
    let uploads: Vec<_> = calls
        .iter()
        .filter(|c| c.name == "cuMemcpyHtoDAsync")
        .collect();
    assert_eq!(uploads.len(), 2, "the plane in two chunks");
    let (a, b) = (uploads[0], uploads[1]);
    assert_ne!(a.stream, b.stream, "the chunks go on two streams");
    let waited_between = calls[a.index..b.index]
        .iter()
        .any(|c| c.name == "cuStreamSynchronize" && c.stream == a.stream);
    assert!(!waited_between, "the second chunk waited for the first");
    assert_eq!(
        uploads.iter().map(|c| c.bytes).sum::<usize>(),
        64 * 72 * 8,
        "the whole plane, once"
    );
}

#[test]
fn tall_planes_are_staged_by_the_crew_with_the_cpu_bits() {
    // 1600 rows of 40 float64: bands of 800 rows (half the plane), each filled in parts of
    // at least 64 rows by the uploader's crew of host threads.
    let case = Case {
        name: "tall TAN -> TAN",
        input_header: header(
            ("RA---TAN", "DEC--TAN"),
            (150.0, 30.0),
            (20.5, 800.5),
            0.001,
            "",
        ),
        input: image(1600, 40, true).insert_axis(ndarray::Axis(0)),
        output_header: header(
            ("RA---TAN", "DEC--TAN"),
            (150.0, 30.1),
            (18.5, 700.5),
            0.0011,
            "",
        ),
        shape: (1500, 36),
        order: Order::Bilinear,
    };
    let source = source(&case);
    let cpu = compute::<f64>(&plan(&case, &source, &Options::default()));
    assert!(cpu.0.iter().filter(|v| v.is_finite()).count() > 10_000);
    let driver = sim(SimConfig::default());
    let (p, executor) = on_sim(
        plan(&case, &source, &Options::default()),
        std::slice::from_ref(&driver),
    );
    assert_same(case.name, &compute::<f64>(&p), &cpu);
    assert!(executor.host_times().staging > std::time::Duration::ZERO);
    let uploaded: usize = driver
        .calls()
        .iter()
        .filter(|c| c.name == "cuMemcpyHtoDAsync")
        .map(|c| c.bytes)
        .sum();
    assert_eq!(uploaded, 1600 * 40 * 8, "the plane, once");
}

#[test]
fn host_times_count_each_block_and_the_uploader() {
    let case = &cases()[0];
    let source = source(case);
    let options = Options {
        block_size: Some((16, 60)),
        ..Options::default()
    };
    let (p, executor) = on_sim(plan(case, &source, &options), &[sim(SimConfig::default())]);
    compute::<f64>(&p);
    let first = executor.host_times();
    // 52 rows in blocks of 16: 4 blocks, each launched, waited for and stored once; the
    // uploader staged the plane and the setup ran once.
    assert_eq!(first.blocks, 4, "{first}");
    for (what, t) in [
        ("setup", first.setup),
        ("staging", first.staging),
        ("GPU waits", first.gpu_waits),
        ("stores", first.stores),
    ] {
        assert!(t > std::time::Duration::ZERO, "{what}: {first}");
    }
    // The plan called again keeps its planes: blocks add up, the uploader does not.
    compute::<f64>(&p);
    let again = executor.host_times();
    assert_eq!(again.blocks, 8);
    assert_eq!((again.setup, again.staging), (first.setup, first.staging));
    assert!(again.stores > first.stores);
}

/// The spline orders' cases: the cube (TAN -> TAN, 3 planes) with each order 2-5.
fn spline_cube_cases() -> Vec<Case> {
    let cube = &cases()[2];
    [
        Order::Biquadratic,
        Order::Bicubic,
        Order::Quartic,
        Order::Quintic,
    ]
    .into_iter()
    .map(|order| Case {
        name: "cube of 3 planes, TAN -> TAN, spline",
        input_header: cube.input_header.clone(),
        input: cube.input.clone(),
        output_header: cube.output_header.clone(),
        shape: cube.shape,
        order,
    })
    .collect()
}

/// Orders 2-5 prefilter on the device: the CPU engine's bits under random completion orders
/// and several threads, no hazard, and the minimum moved: the input values up once (no
/// coefficients: the CPU never makes them), the output values down once.
#[test]
fn spline_orders_prefilter_on_the_device_and_move_the_minimum() {
    for case in spline_cube_cases() {
        let source = source(&case);
        let cpu_options = Options {
            order: case.order,
            ..Options::default()
        };
        let cpu = compute::<f64>(&plan(&case, &source, &cpu_options));
        assert!(
            cpu.1.iter().any(|&f| f == 1.0),
            "{:?}: no coverage",
            case.order
        );
        let options = Options {
            parallel: Parallel::Threads(3),
            block_size: Some((13, 17)),
            backend: Backend::Cuda,
            ..cpu_options
        };
        let (planes, (ny, nx)) = (3, case.shape);
        for seed in 1..=3u64 {
            let driver = sim(SimConfig {
                seed: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15),
                ..SimConfig::default()
            });
            let (p, executor) = on_sim(
                plan(&case, &source, &options),
                std::slice::from_ref(&driver),
            );
            let gpu = compute::<f64>(&p);
            let what = format!("{:?}, seed {seed}", case.order);
            assert_same(&what, &gpu, &cpu);
            assert!(
                executor.failure().is_none(),
                "{what}: {:?}",
                executor.failure()
            );
            assert!(
                driver.hazards().is_empty(),
                "{what}: {:?}",
                driver.hazards()
            );
            assert!(
                !p.cpu_spline_coefficients_made(),
                "{what}: the CPU made the coefficients"
            );
            drop((p, executor));
            let stats = driver.stats();
            assert_eq!(stats.downloaded, (planes * ny * nx * 8) as u64, "{what}");
            // Up: the input values once (float64), the parameters and the pole constants.
            let params = stats.uploaded - (planes * 64 * 72 * 8) as u64;
            assert!(
                params > 0 && params < 16 * 1024,
                "{what}: {params} other bytes"
            );
            assert_eq!(stats.device_bytes_in_use, 0, "{what}: device memory left");
        }
    }
}

/// Spline orders with float32 and int16 inputs: the stored samples go up as they are (4 and 2
/// bytes a pixel, not 8) and become the prefilter's values on the device, with the CPU's bits.
#[test]
fn spline_orders_send_the_stored_samples_up() {
    let case = &spline_cube_cases()[1]; // bicubic
    let wcs_in = Wcs::from_header_str(&case.input_header).unwrap();
    let wcs_out = Wcs::from_header_str(&case.output_header).unwrap();
    let f32_input = case.input.mapv(|v| v as f32);
    let i16_input = case
        .input
        .mapv(|v| if v.is_finite() { v as i16 } else { 0 });
    let sources: [(&str, Box<dyn ImageSource + '_>, usize); 2] = [
        (
            "float32",
            Box::new(ArraySource::new(f32_input.view().into_dyn()).unwrap()),
            4,
        ),
        (
            "int16",
            Box::new(ArraySource::new(i16_input.view().into_dyn()).unwrap()),
            2,
        ),
    ];
    let shape = [case.shape.0, case.shape.1];
    for (what, source, elem) in &sources {
        let cpu_options = Options {
            order: case.order,
            ..Options::default()
        };
        let cpu_plan = Plan::new(source.as_ref(), &wcs_in, &wcs_out, &shape, &cpu_options);
        let cpu = compute::<f64>(&cpu_plan.unwrap());
        let options = Options {
            parallel: Parallel::Threads(3),
            block_size: Some((13, 17)),
            backend: Backend::Cuda,
            ..cpu_options
        };
        let driver = sim(SimConfig::default());
        let gpu_plan = Plan::new(source.as_ref(), &wcs_in, &wcs_out, &shape, &options).unwrap();
        let (p, executor) = on_sim(gpu_plan, std::slice::from_ref(&driver));
        assert_same(what, &compute::<f64>(&p), &cpu);
        assert!(
            executor.failure().is_none(),
            "{what}: {:?}",
            executor.failure()
        );
        assert!(!p.cpu_spline_coefficients_made(), "{what}");
        assert!(
            driver.hazards().is_empty(),
            "{what}: {:?}",
            driver.hazards()
        );
        drop((p, executor));
        let (planes, ny, nx) = case.input.dim();
        let params = driver.stats().uploaded - (planes * ny * nx * elem) as u64;
        assert!(
            params > 0 && params < 16 * 1024,
            "{what}: {params} other bytes up"
        );
    }
}

/// Planes that do not fit in the device's memory (window mode): the prefilter needs whole
/// planes, so the blocks sample the CPU's coefficients, with the CPU's bits.
#[test]
fn spline_planes_that_do_not_fit_sample_the_cpu_coefficients() {
    for case in spline_cube_cases() {
        let source = source(&case);
        let cpu_options = Options {
            order: case.order,
            ..Options::default()
        };
        let cpu = compute::<f64>(&plan(&case, &source, &cpu_options));
        let driver = sim(SimConfig {
            memory: 4 << 20,
            ..SimConfig::default()
        });
        let options = Options {
            block_size: Some((26, 30)),
            backend: Backend::Cuda,
            ..cpu_options
        };
        let (p, executor) = on_sim(
            plan(&case, &source, &options),
            std::slice::from_ref(&driver),
        );
        let gpu = compute::<f64>(&p);
        assert_same(&format!("{:?}, window mode", case.order), &gpu, &cpu);
        assert!(executor.failure().is_none(), "{:?}", executor.failure());
        assert!(p.cpu_spline_coefficients_made());
        assert!(driver.hazards().is_empty(), "{:?}", driver.hazards());
    }
}

/// A fault at the first prefilter launch (each kind): the executor falls back to the CPU,
/// which then makes its coefficients, and the image is the CPU's.
#[test]
fn a_fault_at_the_spline_launch_falls_back_with_the_cpu_coefficients() {
    let case = &spline_cube_cases()[1]; // bicubic
    let source = source(case);
    let cpu_options = Options {
        order: case.order,
        ..Options::default()
    };
    let cpu = compute::<f64>(&plan(case, &source, &cpu_options));
    let options = Options {
        block_size: Some((26, 30)),
        backend: Backend::Cuda,
        ..cpu_options
    };
    let clean = sim(SimConfig::default());
    let (p, _) = on_sim(plan(case, &source, &options), std::slice::from_ref(&clean));
    assert_same("clean run", &compute::<f64>(&p), &cpu);
    drop(p);
    // The prefilter's launches come first (they make the resident planes), on a stream of
    // their own: two per plane (the columns, from the stored samples, then the rows). The
    // driver hands that stream out again once it is given back: the launches before.
    let calls = clean.calls();
    let first = calls
        .iter()
        .find(|c| c.name == "cuLaunchKernel")
        .expect("a launch");
    let given_back = calls
        .iter()
        .find(|c| c.name == "cuStreamDestroy" && c.stream == first.stream)
        .map_or(usize::MAX, |c| c.index);
    let spline: Vec<usize> = calls
        .iter()
        .filter(|c| c.name == "cuLaunchKernel" && c.stream == first.stream)
        .filter(|c| c.index < given_back)
        .map(|c| c.index)
        .collect();
    assert_eq!(spline.len(), 2 * 3, "prefilter launches {spline:?}");
    for &index in &spline {
        for kind in [FaultKind::OutOfMemory, FaultKind::Sticky, FaultKind::Other] {
            let driver = sim(SimConfig {
                fail_at: Some((index, kind)),
                ..SimConfig::default()
            });
            let (p, executor) =
                on_sim(plan(case, &source, &options), std::slice::from_ref(&driver));
            let result = compute::<f64>(&p);
            assert_same(&format!("fault {kind:?} at call {index}"), &result, &cpu);
            assert!(
                executor.failure().is_some(),
                "{kind:?} at {index} unnoticed"
            );
            assert!(p.cpu_spline_coefficients_made());
            assert!(driver.hazards().is_empty(), "{:?}", driver.hazards());
        }
    }
}

/// The CPU's coefficients, made on first use by whichever block needs them first while the
/// others wait, serve blocks running on every pool setting (all cores, several threads):
/// window mode on the simulator (every block of a GPU plan asks for them) and a plan that may
/// run on a GPU computed by the CPU executor. No deadlock, the CPU engine's bits.
#[test]
fn lazily_made_cpu_coefficients_serve_concurrent_blocks() {
    use reproject::engine::executor::CpuExecutor;
    let case = &spline_cube_cases()[1]; // bicubic
    let source = source(case);
    let cpu_options = Options {
        order: case.order,
        ..Options::default()
    };
    let cpu = compute::<f64>(&plan(case, &source, &cpu_options));
    for parallel in [Parallel::AllCores, Parallel::Threads(4)] {
        let options = Options {
            parallel,
            block_size: Some((9, 11)),
            backend: Backend::Cuda,
            ..cpu_options.clone()
        };
        let driver = sim(SimConfig {
            memory: 4 << 20,
            ..SimConfig::default()
        });
        let (p, _) = on_sim(plan(case, &source, &options), std::slice::from_ref(&driver));
        assert!(!p.cpu_spline_coefficients_made());
        assert_same(&format!("{parallel:?}, window mode"), &compute(&p), &cpu);
        assert!(p.cpu_spline_coefficients_made());
        let p = plan(case, &source, &options).with_executor(Arc::new(CpuExecutor));
        assert!(!p.cpu_spline_coefficients_made());
        assert_same(&format!("{parallel:?}, on the CPU"), &compute(&p), &cpu);
        assert!(p.cpu_spline_coefficients_made());
    }
}

/// A caller's buffer locked in place (register_host) serves copies both ways like pinned
/// memory, and unlocking it while a copy on it is still queued is a hazard the simulator
/// reports.
#[test]
fn registered_caller_memory_copies_both_ways_and_unlocking_early_is_a_hazard() {
    let driver = sim(SimConfig {
        seed: 7,
        ..SimConfig::default()
    });
    let stream = driver.create_stream().unwrap();
    let on_device = driver.alloc(64).unwrap();
    let mut memory: Vec<u8> = (0..64).collect();
    // SAFETY: `memory` outlives the registration.
    let host = unsafe { driver.register_host(memory.as_mut_ptr(), 64) }.unwrap();
    // SAFETY: both hold 64 bytes; `memory` is untouched until the stream is synchronized.
    unsafe {
        driver.upload(stream, &host, 0, on_device, 64).unwrap();
        driver.download(stream, on_device, &host, 32, 32).unwrap();
    }
    driver.synchronize(stream).unwrap();
    driver.unregister_host(host);
    assert!(driver.hazards().is_empty(), "{:?}", driver.hazards());
    let expected: Vec<u8> = (0..32).chain(0..32).collect();
    assert_eq!(memory, expected);
    let names: Vec<_> = driver.calls().iter().map(|c| c.name).collect();
    assert!(names.contains(&"cuMemHostRegister") && names.contains(&"cuMemHostUnregister"));

    // SAFETY: as above; the copy is left pending on purpose, and completed before `memory`
    // goes.
    let host = unsafe { driver.register_host(memory.as_mut_ptr(), 64) }.unwrap();
    unsafe { driver.download(stream, on_device, &host, 0, 64).unwrap() };
    driver.unregister_host(host);
    driver.synchronize(stream).unwrap();
    assert!(
        driver
            .hazards()
            .iter()
            .any(|h| h.contains("cuMemHostUnregister")),
        "{:?}",
        driver.hazards()
    );
    driver.free(on_device);
    driver.destroy_stream(stream);
}

/// Plans made and dropped at once on several threads share one device's pools: every
/// allocation, page-locked buffer and stream one plan gives back may go to another at once.
/// Under random completion orders each result keeps the CPU engine's bits, nothing is freed
/// (and so handed out again) under pending work, and nothing stays handed out.
#[test]
fn plans_on_several_threads_share_the_device_pools_safely() {
    let mut jobs = cases();
    jobs.truncate(3);
    jobs.push(spline_cube_cases().swap_remove(1)); // bicubic: the device prefilter
    let sources: Vec<_> = jobs.iter().map(source).collect();
    let cpu: Vec<_> = jobs
        .iter()
        .zip(&sources)
        .map(|(case, source)| {
            let options = Options {
                order: case.order,
                ..Options::default()
            };
            compute::<f64>(&plan(case, source, &options))
        })
        .collect();
    for seed in 1..=2u64 {
        let driver = sim(SimConfig {
            seed: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            ..SimConfig::default()
        });
        std::thread::scope(|scope| {
            for (k, ((case, source), cpu)) in jobs.iter().zip(&sources).zip(&cpu).enumerate() {
                let driver = driver.clone();
                scope.spawn(move || {
                    let options = Options {
                        order: case.order,
                        parallel: Parallel::Threads(2),
                        block_size: Some((13 + k, 17)),
                        backend: Backend::Cuda,
                        ..Options::default()
                    };
                    for call in 0..3 {
                        let (p, executor) =
                            on_sim(plan(case, source, &options), std::slice::from_ref(&driver));
                        let what = format!("{}, seed {seed}, call {call}", case.name);
                        assert_same(&what, &compute::<f64>(&p), cpu);
                        assert!(
                            executor.failure().is_none(),
                            "{what}: {:?}",
                            executor.failure()
                        );
                    }
                });
            }
        });
        assert!(driver.hazards().is_empty(), "{:?}", driver.hazards());
        let stats = driver.stats();
        assert_eq!(
            stats.device_bytes_in_use, 0,
            "device memory left handed out"
        );
        assert!(stats.device_bytes_kept > 0, "nothing was kept for reuse");
    }
}
