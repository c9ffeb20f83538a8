//! GPU benchmark: 16384×16384 float32 bilinear TAN → TAN, host-resident (input and outputs in
//! host memory: the transfer pipeline) and device-resident (everything in GPU memory), beside
//! a pinned H2D + D2H copy and a D2D copy of the same bytes measured in the same run, and the
//! CPU engine on every core; the same job bicubic; then a CAR galactic → TAN job and a SIP job
//! against the CPU engine. A host-resident job makes its plan in the call, as a Python call
//! does, so its input crosses the bus (a plan called again keeps its input on the device: that
//! time is printed beside it). Each host-resident job also runs once with its host threads'
//! timings (`engine::HostTimes`) and once through the profiling driver (`gpu::profile`: every
//! copy and launch waited for) for its per-phase breakdown, and each goal of issue 17 gets a
//! line with the measured ratio.
//!
//! ```text
//! cargo run --release --example gpu_bench [-- SIZE [bilinear]]   (SIZE defaults to 16384)
//! ```
//! `bilinear` stops after the first job (the machine's lines and the bilinear TAN → TAN job).
//! Prints `SKIPPED` and exits 0 without a usable GPU. Each time is the best of 3 runs after a
//! warm-up (the first run also compiles or loads the kernels, reported separately).

#[cfg(not(feature = "cuda"))]
fn main() {
    println!("SKIPPED gpu_bench: built without the `cuda` feature");
}

#[cfg(feature = "cuda")]
fn main() {
    if let Err(e) = bench::run() {
        eprintln!("gpu_bench failed: {e}");
        std::process::exit(1);
    }
}

#[cfg(feature = "cuda")]
#[path = "support/headers.rs"]
#[allow(dead_code)]
mod headers;

#[cfg(feature = "cuda")]
mod bench {
    use std::time::Instant;

    use ndarray::{Array2, ArrayD, IxDyn};
    use std::sync::Arc;

    use reproject::engine::{zeroed_output, CudaExecutor, Options, Parallel, Plan};
    use reproject::gpu::driver::{calls_between, CallCount, Driver};
    use reproject::gpu::profile::ProfilingDriver;
    use reproject::gpu::{
        copy_times, drivers, gpu_info, Backend, DeviceBuffer, DeviceImage, Devices,
    };
    use reproject::interp::Order;
    use reproject::io::{ArraySource, SampleType};
    use reproject::wcs::Wcs;
    use reproject::Result;

    const REPEATS: usize = 3;

    fn tan(crval: (f64, f64), crpix: f64, cdelt: f64, rot: f64) -> Result<Wcs> {
        Wcs::from_header_str(&super::headers::rotated_tan(crval, crpix, cdelt, rot))
    }

    /// Best wall time of `REPEATS` runs of `f` (after one warm-up run, and the kernel
    /// variants it set compiling).
    fn best(mut f: impl FnMut() -> Result<()>) -> Result<f64> {
        f()?;
        reproject::gpu::wait_for_compilations();
        let mut t_best = f64::INFINITY;
        for _ in 0..REPEATS {
            let t = Instant::now();
            f()?;
            t_best = t_best.min(t.elapsed().as_secs_f64());
        }
        Ok(t_best)
    }

    fn mpix(n: usize, t: f64) -> String {
        format!("{:8.1} ms  {:8.0} Mpix/s", t * 1e3, n as f64 / t / 1e6)
    }

    /// Auto's choice for the job of `plan` (its cost model's estimates, the CPU on every
    /// core) against the measured times: whether it picked the faster.
    fn auto_line(plan: &Plan, t_cpu: f64, t_gpu: f64) {
        let estimate = plan.cost_estimate();
        let (picked, faster) = (
            if estimate.prefers_gpu() { "GPU" } else { "CPU" },
            if t_gpu < t_cpu { "GPU" } else { "CPU" },
        );
        let verdict = if picked == faster { "right" } else { "WRONG" };
        println!("  auto: {estimate}; picks the {picked}, measured faster: {faster} ({verdict})");
    }

    /// The timeline model's prediction for the job (`source` from `wcs_in` onto a `size`²
    /// `wcs_out` with `options`), recorded on the record-only simulator and replayed at H100
    /// rates, beside the measured time: how far the model is from this machine.
    fn timeline_line(
        source: &ArraySource<'_, f32>,
        (wcs_in, wcs_out): (&Wcs, &Wcs),
        size: usize,
        options: &Options,
        measured: f64,
    ) -> Result<()> {
        use reproject::gpu::sim::{SimConfig, SimDriver};
        use reproject::gpu::timeline::{replay, Rates};
        let sim = Arc::new(SimDriver::new(SimConfig {
            record_only: true,
            memory: 80 << 30,
            ..SimConfig::default()
        }));
        let plan = Plan::new(source, wcs_in, wcs_out, &[size, size], options)?;
        let executor = CudaExecutor::new(&plan, vec![sim.clone() as Arc<dyn Driver>])?;
        let recorded = plan.with_executor(Arc::new(executor));
        let mut data = ArrayD::<f32>::zeros(IxDyn(&[size, size]));
        let mut footprint = data.clone();
        recorded.compute_into(data.view_mut(), footprint.view_mut())?;
        let t = replay(&sim.timeline(), &Rates::h100());
        println!(
            "  timeline model (H100 rates): {:.1} ms (busiest engine {:.1} ms); measured {:.1} ms, {:.2}x the model",
            t.critical_path * 1e3,
            t.floor() * 1e3,
            measured * 1e3,
            measured / t.critical_path
        );
        Ok(())
    }

    /// A goal's line: the measured ratio against the goal's bound (`at_most`: the ratio must
    /// not exceed it; else it must reach it).
    fn goal(what: &str, ratio: f64, bound: f64, at_most: bool) {
        let met = if at_most {
            ratio <= bound
        } else {
            ratio >= bound
        };
        let sign = if at_most { "<=" } else { ">=" };
        println!(
            "  goal {what}: {ratio:.2} ({sign} {bound}) {}",
            if met { "met" } else { "MISSED" }
        );
    }

    /// One run of `plan` (a new one) on the first GPU, as the benchmark runs it: where its host
    /// threads spent their time ([`reproject::engine::HostTimes`]), after the run's wall time
    /// and the time dropping the plan takes.
    fn host_times_line<T: reproject::engine::OutputSample>(
        plan: Plan,
        data: &mut ArrayD<T>,
        footprint: &mut ArrayD<T>,
    ) -> Result<String> {
        let gpus = drivers(Devices::First)?;
        let driver = gpus[0].clone();
        let executor = Arc::new(CudaExecutor::new(&plan, gpus)?);
        let plan = plan.with_executor(executor.clone());
        let before = driver.call_counts();
        let t = Instant::now();
        plan.compute_into(data.view_mut(), footprint.view_mut())?;
        let wall = t.elapsed();
        let times = executor.host_times();
        let during = driver.call_counts();
        // Dropping the plan frees its device memory and streams (inside a call's time).
        let t = Instant::now();
        drop((plan, executor));
        let dropped = t.elapsed();
        let list = |calls: Vec<CallCount>| {
            calls
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        Ok(format!(
            "{:.1} ms wall, then {:.1} ms to drop the plan; {times}\n    \
             driver calls (summed over threads): {}\n    driver calls dropping the plan: {}",
            wall.as_secs_f64() * 1e3,
            dropped.as_secs_f64() * 1e3,
            list(calls_between(&before, &during)),
            list(calls_between(&during, &driver.call_counts())),
        ))
    }

    /// One serialized run of `plan` on the first GPU through the profiling driver: where the
    /// time goes (uploads, kernels, downloads, host work between them).
    fn phases<T: reproject::engine::OutputSample + Default>(
        plan: Plan,
        shape: &[usize],
    ) -> Result<()> {
        let driver = drivers(Devices::First)?.remove(0);
        let profiled = Arc::new(ProfilingDriver::new(driver));
        let executor = CudaExecutor::new(&plan, vec![profiled.clone() as Arc<dyn Driver>])?;
        let plan = plan.with_executor(Arc::new(executor));
        let mut data = ArrayD::<T>::from_elem(IxDyn(shape), T::default());
        let mut footprint = data.clone();
        let t = Instant::now();
        plan.compute_into(data.view_mut(), footprint.view_mut())?;
        let wall = t.elapsed().as_secs_f64();
        let p = profiled.phases();
        let gbs =
            |bytes: u64, t: std::time::Duration| bytes as f64 / t.as_secs_f64().max(1e-9) / 1e9;
        let prefilter = if p.prefilter_launches > 0 {
            format!(
                " (prefilter {:.1} ms, {} launches)",
                p.prefilter_time.as_secs_f64() * 1e3,
                p.prefilter_launches
            )
        } else {
            String::new()
        };
        println!(
            "  phases (one run, nothing overlapped: {:.1} ms): upload {:.1} ms ({:.2} GB, {:.1} GB/s), \
             kernels {:.1} ms ({} launches){prefilter}, download {:.1} ms ({:.2} GB, {:.1} GB/s), host {:.1} ms",
            wall * 1e3,
            p.upload_time.as_secs_f64() * 1e3,
            p.uploaded as f64 / 1e9,
            gbs(p.uploaded, p.upload_time),
            p.kernel_time.as_secs_f64() * 1e3,
            p.launches,
            p.download_time.as_secs_f64() * 1e3,
            p.downloaded as f64 / 1e9,
            gbs(p.downloaded, p.download_time),
            (wall - p.device_time().as_secs_f64()).max(0.0) * 1e3
        );
        Ok(())
    }

    pub fn run() -> Result<()> {
        let size: usize = std::env::args()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(16384);
        let t = Instant::now();
        let info = match gpu_info() {
            Ok(info) => info,
            Err(e) => {
                println!("SKIPPED gpu_bench: {e}");
                return Ok(());
            }
        };
        println!("GPU {info}");
        println!(
            "setup (probe, NVRTC or cache, module load): {:.2} s",
            t.elapsed().as_secs_f64()
        );

        machine_lines(size * size * 4)?;

        let bilinear = tan_job(size, Order::Bilinear)?;
        if std::env::args().nth(2).as_deref() == Some("bilinear") {
            return Ok(());
        }
        let bicubic = tan_job(size, Order::Bicubic)?;
        println!(
            "\n{size}x{size} bicubic against bilinear (device-resident, a new plan each call)"
        );
        goal(
            "device-resident bicubic / bilinear",
            bicubic / bilinear,
            3.0,
            true,
        );
        other_jobs(size)
    }

    /// What bounds a host-resident job besides the kernels: PCIe one direction after the
    /// other and both at once (the duplex the pipeline's uploads and downloads can overlap
    /// in), what locking a caller's buffer in place costs, and the host's memory copying
    /// `bytes` on one thread and on every core (staging the input, draining the results).
    fn machine_lines(bytes: usize) -> Result<()> {
        let (serial, _) = copy_times(bytes, REPEATS)?;
        let duplex = reproject::gpu::duplex_time(bytes, REPEATS)?;
        println!(
            "\nPCIe, {:.2} GB each way: one after the other {:.1} ms, both at once {:.1} ms ({:.2}x)",
            bytes as f64 / 1e9,
            serial * 1e3,
            duplex * 1e3,
            serial / duplex
        );
        let locked = reproject::gpu::registered_copy_times(bytes, REPEATS)?;
        println!(
            "caller's buffer locked in place (cuMemHostRegister): lock {:.1} ms, up and down {:.1} ms, unlock {:.1} ms; pays for one call only if lock + unlock < the staging copies it saves",
            locked.register * 1e3,
            locked.copies * 1e3,
            locked.unregister * 1e3
        );
        // Whether fresh pages come as 2 MB pages (numpy asks for them with madvise): how much a
        // first write to new output memory costs.
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_else(|e| format!("unknown ({e})"));
        println!("transparent huge pages: {}", thp.trim());
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (one, all) = (host_copy_rate(bytes, 1), host_copy_rate(bytes, cores));
        println!(
            "host memory copy of {:.2} GB: {one:.1} GB/s on 1 thread, {all:.1} GB/s on {cores}",
            bytes as f64 / 1e9
        );
        Ok(())
    }

    /// GB/s of copying `bytes` between two host buffers on `threads` threads (best of
    /// `REPEATS`, after the pages are touched).
    fn host_copy_rate(bytes: usize, threads: usize) -> f64 {
        let src = vec![1u8; bytes];
        let mut dst = vec![0u8; bytes];
        let chunk = bytes.div_ceil(threads.max(1)).max(1);
        let mut best = f64::INFINITY;
        for _ in 0..REPEATS {
            let t = Instant::now();
            std::thread::scope(|scope| {
                for (d, s) in dst.chunks_mut(chunk).zip(src.chunks(chunk)) {
                    scope.spawn(move || d.copy_from_slice(s));
                }
            });
            best = best.min(t.elapsed().as_secs_f64());
        }
        bytes as f64 / best / 1e9
    }

    /// Job 1: TAN -> TAN, float32 in and out, host- and device-resident, and the CPU; returns
    /// the device-resident time of a call with a new plan (prefilter included).
    fn tan_job(size: usize, order: Order) -> Result<f64> {
        let n = size * size;
        let input = Array2::from_shape_fn((size, size), |(y, x)| {
            ((x as f32) * 0.001).sin() * 100.0 + (y as f32) * 0.01
        });
        let wcs_in = tan((150.0, 2.0), size as f64 / 2.0 + 0.5, 1e-4, 0.0)?;
        let wcs_out = tan((150.01, 2.01), size as f64 / 2.0 + 0.5, 1.05e-4, 12.0)?;
        let source = ArraySource::new(input.view().into_dyn())?;
        // Every core: for the GPU job that is the host's copy threads (8 here), for the CPU
        // every core.
        let options = Options {
            order,
            backend: Backend::Cuda,
            parallel: Parallel::AllCores,
            ..Options::default()
        };
        let plan = Plan::new(&source, &wcs_in, &wcs_out, &[size, size], &options)?;
        let mut data = ArrayD::<f32>::zeros(IxDyn(&[size, size]));
        let mut footprint = data.clone();
        // A host-resident job: a plan made for the call (as every Python call makes one), so
        // the input crosses the bus. A plan called again keeps its input on the device from
        // its first call: only the results cross.
        // Its time (best of REPEATS), then one more call with its host threads' timings.
        let new_plan = || Plan::new(&source, &wcs_in, &wcs_out, &[size, size], &options);
        let t_host = best(|| new_plan()?.compute_into(data.view_mut(), footprint.view_mut()))?;
        let host_times = host_times_line(new_plan()?, &mut data, &mut footprint)?;
        let t_host_again = best(|| plan.compute_into(data.view_mut(), footprint.view_mut()))?;
        let cpu_options = Options {
            backend: Backend::Cpu,
            parallel: Parallel::AllCores,
            ..options.clone()
        };
        let cpu_plan = Plan::new(&source, &wcs_in, &wcs_out, &[size, size], &cpu_options)?;
        let (mut cpu_data, mut cpu_fp) = (data.clone(), data.clone());
        // The CPU also makes its plan in the call (for splines that is its prefilter).
        let t_cpu = best(|| {
            Plan::new(&source, &wcs_in, &wcs_out, &[size, size], &cpu_options)?
                .compute_into(cpu_data.view_mut(), cpu_fp.view_mut())
        })?;
        let t_cpu_again = best(|| cpu_plan.compute_into(cpu_data.view_mut(), cpu_fp.view_mut()))?;
        drop((cpu_data, cpu_fp));

        let in_bytes = n * 4;
        let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let d_input = DeviceBuffer::from_host(&bytes)?;
        drop(bytes);
        let d_data = DeviceBuffer::zeros(n * 4)?;
        let d_fp = DeviceBuffer::zeros(n * 4)?;
        let image = DeviceImage {
            ptr: d_input.device_ptr(),
            sample: SampleType::F32,
            big_endian: false,
            pitch: size,
        };
        // What a call costs: a fresh plan each time (for orders 2-5 that includes the device
        // prefilter, which a plan makes on its first call), as the Python API runs; and the
        // same plan called again (its coefficients reused: the kernels alone).
        let t_dev = best(|| unsafe {
            Plan::new(&source, &wcs_in, &wcs_out, &[size, size], &options)?.compute_on_device(
                &image,
                d_data.device_ptr(),
                d_fp.device_ptr(),
                false,
            )
        })?;
        let t_dev_again = best(|| unsafe {
            plan.compute_on_device(&image, d_data.device_ptr(), d_fp.device_ptr(), false)
        })?;
        // Same values both ways.
        let back = d_data.to_host()?;
        let same = back
            .chunks_exact(4)
            .zip(data.iter())
            .all(|(b, h)| f32::from_ne_bytes([b[0], b[1], b[2], b[3]]).to_bits() == h.to_bits());

        // Copies of the same bytes: input in, values out (pinned; the footprint is derived on
        // the host), and on the device.
        let (t_h2d_d2h_1g, t_d2d) = copy_times(in_bytes, REPEATS)?;
        // copy_times moves `in_bytes` each way: what the host-resident job must move.
        let t_pcie_floor = t_h2d_d2h_1g;
        // The device-resident job reads the input and writes values and footprint (3 times
        // in_bytes); the D2D copy moves 2 times in_bytes.
        let t_dev_floor = 1.5 * t_d2d;
        println!(
            "\n{size}x{size} float32 {order:?} TAN -> TAN ({:.2} GB in, {:.2} GB out)",
            in_bytes as f64 / 1e9,
            in_bytes as f64 / 1e9
        );
        println!("  host-resident (a new plan)    {}", mpix(n, t_host));
        println!("    host threads: {host_times}");
        println!(
            "  host-resident, plan reused    {}  (the input stays on the device)",
            mpix(n, t_host_again)
        );
        println!("  device-resident (a new plan)  {}", mpix(n, t_dev));
        println!("  device-resident (plan reused) {}", mpix(n, t_dev_again));
        println!(
            "  CPU ({} threads)              {}",
            rayon::current_num_threads(),
            mpix(n, t_cpu)
        );
        println!("  CPU, plan reused              {}", mpix(n, t_cpu_again));
        println!(
            "  pinned H2D+D2H of {:.2} GB     {:8.1} ms ({:.1} GB/s each way, averaged)",
            in_bytes as f64 / 1e9,
            t_h2d_d2h_1g * 1e3,
            2.0 * in_bytes as f64 / t_h2d_d2h_1g / 1e9
        );
        println!(
            "  D2D copy of {:.2} GB           {:8.1} ms ({:.0} GB/s read+write)",
            in_bytes as f64 / 1e9,
            t_d2d * 1e3,
            2.0 * in_bytes as f64 / t_d2d / 1e9
        );
        println!("  host- and device-resident values identical: {same}");
        goal(
            "host-resident / pinned copy of the bytes that cross",
            t_host / t_pcie_floor,
            1.5,
            true,
        );
        goal(
            "device-resident / D2D copy of the bytes touched",
            t_dev / t_dev_floor,
            2.0,
            true,
        );
        goal("CPU / GPU host-resident", t_cpu / t_host, 5.0, false);
        auto_line(&cpu_plan, t_cpu, t_host);
        if order == Order::Bilinear {
            fresh_outputs_lines(&new_plan, &cpu_options, (&source, &wcs_in, &wcs_out), size)?;
        }
        timeline_line(&source, (&wcs_in, &wcs_out), size, &options, t_host)?;
        phases::<f32>(plan, &[size, size])?;
        Ok(t_dev)
    }

    /// The job as a Python call runs it: a new plan, into float64 outputs allocated for the
    /// call as the API allocates them (`engine::zeroed_output`: fresh pages, 2 MiB ones where
    /// transparent huge pages allow, whose first writes the kernel faults in and zeroes), on
    /// the CPU and on the GPU, best of `REPEATS`; the outputs are freed after the timing, as
    /// Python frees them later. The GPU runs twice: with the plan told that its outputs are
    /// fresh (`Plan::with_fresh_outputs`, as the API tells it: a block thread per core, blocks
    /// of 128 rows) and not told (at most 8 block threads, blocks of 1024 rows, as into
    /// outputs written before), with its host threads' timings for the first.
    fn fresh_outputs_lines<'a>(
        new_plan: &dyn Fn() -> Result<Plan<'a>>,
        cpu_options: &Options,
        (source, wcs_in, wcs_out): (&ArraySource<'_, f32>, &Wcs, &Wcs),
        size: usize,
    ) -> Result<()> {
        let fresh = || zeroed_output::<f64>(&[size, size]);
        let bytes = 2 * size * size * std::mem::size_of::<f64>();
        let told = || new_plan().map(|p| p.with_fresh_outputs(bytes as u64));
        // One call into the float64 data and footprint given.
        type Call<'c> = dyn Fn(&mut ArrayD<f64>, &mut ArrayD<f64>) -> Result<()> + 'c;
        let time = |call: &Call<'_>| {
            let mut best = f64::INFINITY;
            for _ in 0..REPEATS {
                let (mut data, mut footprint) = (fresh(), fresh());
                let t = Instant::now();
                call(&mut data, &mut footprint)?;
                best = best.min(t.elapsed().as_secs_f64());
            }
            Ok::<f64, reproject::Error>(best)
        };
        let t_gpu = time(&|d, f| told()?.compute_into(d.view_mut(), f.view_mut()))?;
        let t_gpu_untold = time(&|d, f| new_plan()?.compute_into(d.view_mut(), f.view_mut()))?;
        let t_cpu = time(&|d, f| {
            Plan::new(source, wcs_in, wcs_out, &[size, size], cpu_options)?
                .with_fresh_outputs(bytes as u64)
                .compute_into(d.view_mut(), f.view_mut())
        })?;
        let (mut data, mut footprint) = (fresh(), fresh());
        let gpu_times = host_times_line(told()?, &mut data, &mut footprint)?;
        let n = size * size;
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        println!("  fresh float64 outputs, a new plan (as a Python call):");
        println!(
            "    GPU {} ({cores} block threads); CPU {}",
            mpix(n, t_gpu),
            mpix(n, t_cpu)
        );
        println!(
            "    GPU, plan not told the outputs are fresh (at most 8 block threads, 1024-row blocks) {}",
            mpix(n, t_gpu_untold)
        );
        println!("    GPU host threads, one more call: {gpu_times}");
        let auto = Plan::new(source, wcs_in, wcs_out, &[size, size], cpu_options)?
            .with_fresh_outputs(bytes as u64);
        auto_line(&auto, t_cpu, t_gpu);
        goal(
            "CPU / GPU, fresh float64 outputs",
            t_cpu / t_gpu,
            1.0,
            false,
        );
        Ok(())
    }

    /// 2. CAR galactic -> TAN and 3. SIP -> TAN, GPU against the CPU on every core.
    fn other_jobs(size: usize) -> Result<()> {
        let m = (size / 4).max(256);
        let car = Array2::from_shape_fn((1800, 3600), |(y, x)| {
            (x as f64 * 0.01).sin() + y as f64 * 1e-3
        });
        let wcs_car = Wcs::from_header_str(
            "CTYPE1 = 'GLON-CAR'\nCTYPE2 = 'GLAT-CAR'\nCRVAL1 = 0.0\nCRVAL2 = 0.0\n\
             CRPIX1 = 1800.5\nCRPIX2 = 900.5\nCDELT1 = -0.1\nCDELT2 = 0.1\n",
        )?;
        let wcs_tan = tan((266.4, -28.9), m as f64 / 2.0 + 0.5, 20.0 / m as f64, 0.0)?;
        let sip_img = Array2::from_shape_fn((4096, 4096), |(y, x)| ((x + 2 * y) % 97) as f32);
        let wcs_sip = Wcs::from_header_str(
            "CTYPE1 = 'RA---TAN-SIP'\nCTYPE2 = 'DEC--TAN-SIP'\nCRVAL1 = 150.0\nCRVAL2 = 2.0\n\
             CRPIX1 = 2048.5\nCRPIX2 = 2048.5\nCD1_1 = -5E-5\nCD1_2 = 1E-6\nCD2_1 = 1E-6\n\
             CD2_2 = 5E-5\nA_ORDER = 3\nA_0_2 = 2E-6\nA_1_1 = -1.5E-6\nA_2_0 = 3E-6\n\
             A_3_0 = 1E-9\nB_ORDER = 3\nB_0_2 = -2.5E-6\nB_1_1 = 1E-6\nB_2_0 = 1.2E-6\n\
             B_0_3 = 1E-9\n",
        )?;
        let wcs_sip_out = tan((150.0, 2.0), m as f64 / 2.0 + 0.5, 0.2 / m as f64, 5.0)?;
        let car_src = ArraySource::new(car.view().into_dyn())?;
        let sip_src = ArraySource::new(sip_img.view().into_dyn())?;
        compare(
            "CAR galactic -> TAN (ICRS)",
            &car_src,
            &wcs_car,
            &wcs_tan,
            m,
        )?;
        compare("SIP (order 3) -> TAN", &sip_src, &wcs_sip, &wcs_sip_out, m)?;
        Ok(())
    }

    fn compare<T: reproject::io::ArrayElement>(
        label: &str,
        src: &ArraySource<'_, T>,
        wcs_in: &Wcs,
        wcs_out: &Wcs,
        m: usize,
    ) -> Result<()> {
        let mut times = Vec::new();
        let mut results = Vec::new();
        let options = |backend| Options {
            backend,
            parallel: Parallel::AllCores,
            ..Options::default()
        };
        for backend in [Backend::Cuda, Backend::Cpu] {
            // A plan per call, as a host-resident call makes one (the input crosses).
            let plan = || Plan::new(src, wcs_in, wcs_out, &[m, m], &options(backend));
            let mut data = ArrayD::<f64>::zeros(IxDyn(&[m, m]));
            let mut fp = data.clone();
            times.push(best(|| {
                plan()?.compute_into(data.view_mut(), fp.view_mut())
            })?);
            results.push((data, fp));
        }
        let max_rel = results[0]
            .0
            .iter()
            .zip(results[1].0.iter())
            .filter(|(a, b)| a.is_finite() && b.is_finite())
            .map(|(a, b)| ((a - b) / b.abs().max(1e-300)).abs())
            .fold(0.0, f64::max);
        let fp_diff = results[0]
            .1
            .iter()
            .zip(results[1].1.iter())
            .filter(|(a, b)| a != b)
            .count();
        println!("\n{label}, {m}x{m} float64 bilinear");
        println!("  GPU (host-resident)           {}", mpix(m * m, times[0]));
        println!(
            "  CPU ({} threads)              {}",
            rayon::current_num_threads(),
            mpix(m * m, times[1])
        );
        println!(
            "  speed-up {:.1}x; max relative difference {max_rel:.2e}; footprint differences {fp_diff}",
            times[1] / times[0]
        );
        goal("CPU / GPU host-resident", times[1] / times[0], 3.0, false);
        let cpu_plan = Plan::new(src, wcs_in, wcs_out, &[m, m], &options(Backend::Cpu))?;
        auto_line(&cpu_plan, times[1], times[0]);
        let plan = Plan::new(src, wcs_in, wcs_out, &[m, m], &options(Backend::Cuda))?;
        phases::<f64>(plan, &[m, m])?;
        Ok(())
    }
}
