//! How [`crate::gpu::Backend::Auto`] chooses between the CPU engine and the GPU: a cost model
//! that estimates a job's time on each and takes the faster, so that small jobs (where the
//! GPU's fixed cost and the bytes that must cross PCIe dominate) stay on the CPU and large ones
//! go to the GPU.
//!
//! ```text
//! CPU  = pixels · (transform + distortion + interpolation ns per pixel and thread) / threads
//!        + fresh output bytes / (host write rate per thread · threads)
//! GPU  = start (if this process has not opened the GPU yet: the context and the kernels
//!        loaded, plus their compilation when they are not in the disk cache)
//!        + fixed cost per call + max(bytes up and down / PCIe, pixels · kernel ns per pixel)
//!        + pixels · spline ns per pixel (orders 2-5)
//!        + fresh output bytes / (its write rate per thread · the GPU path's host writers)
//! ```
//!
//! Fresh outputs (memory allocated for the call and never written, as every Python call
//! without `output_array` returns) cost their first write wherever the job runs: the kernel
//! zeroes each new page as it is first touched, on the thread that touches it. The CPU
//! engine writes with all its threads, the GPU path with its host threads: every core up to
//! 16 into fresh outputs (8 into others, which are not counted here), each faster than a CPU
//! thread, since its blocks are short there and the values it reads back are still in the
//! host's cache (`engine::gpu_executor`'s block shapes).
//!
//! The copies and the kernels overlap (the pipeline of `engine::gpu_executor`), so the GPU's time
//! is the larger of the two after its fixed cost; a spline order's prefilter waits for the whole
//! input and holds every block back, so it adds to them. The constants ([`CostModel::H100`]) are
//! fitted to the H100 machine's measurements (`docs/measurements/h100-2026-11-26` and
//! `docs/measurements/h100-2026-11-27-session14`: the CPU engine and the GPU on the same 16-core
//! host). They decide only where a job runs, never its values: both executors give the same values.
//!
//! ```
//! use reproject::engine::cost::{CostModel, JobSize};
//! use reproject::gpu::Readiness;
//! let job = |side: u64| JobSize { pixels: side * side, input_bytes: side * side * 4,
//!                                 output_bytes: side * side * 4, homography: true,
//!                                 distortion: false, order: 1, gpu: Readiness::Open,
//!                                 fresh_output_bytes: 0, gpu_host_writers: 8 };
//! let model = CostModel::H100;
//! assert!(!model.estimate(&job(256), 16).prefers_gpu());   // small: the CPU
//! assert!(model.estimate(&job(16384), 16).prefers_gpu());  // 16384²: the GPU
//! // The same job in a process that has not opened the GPU yet: its start decides.
//! assert!(!model.estimate(&JobSize { gpu: Readiness::Cached, ..job(16384) }, 16).prefers_gpu());
//! // On one thread the GPU pays its start, but not the compilation of its kernels.
//! assert!(model.estimate(&JobSize { gpu: Readiness::Cached, ..job(16384) }, 1).prefers_gpu());
//! let uncompiled = JobSize { gpu: Readiness::Uncompiled, ..job(16384) };
//! assert!(!model.estimate(&uncompiled, 1).prefers_gpu());
//! ```

use std::fmt;
use std::time::Duration;

use crate::gpu::Readiness;

/// What a job costs to move and compute, as the cost model sees it.
///
/// ```
/// let job = reproject::engine::cost::JobSize { pixels: 100, input_bytes: 400,
///     output_bytes: 400, homography: false, distortion: false, order: 3,
///     gpu: reproject::gpu::Readiness::Open, fresh_output_bytes: 1600, gpu_host_writers: 8 };
/// assert_eq!(job.order, 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobSize {
    /// Output pixels over every plane.
    pub pixels: u64,
    /// Bytes of input the GPU would upload (every plane, as sent).
    pub input_bytes: u64,
    /// Bytes of results the GPU would download.
    pub output_bytes: u64,
    /// Whether the output → input map is a homography (cheap per pixel on the CPU).
    pub homography: bool,
    /// Whether either WCS has a SIP or TPV distortion (its inverse is iterated per pixel).
    pub distortion: bool,
    /// The interpolation order (0-5; 2-5 are prefiltered splines).
    pub order: usize,
    /// How far this process is from computing on the GPU: the estimate counts its start
    /// unless it is open, and the kernels' compilation when they are not cached.
    pub gpu: Readiness,
    /// Bytes of fresh memory (allocated for the call, never written) the results and the
    /// footprint fill, on either device: 0 for outputs written before (the caller's arrays,
    /// reused buffers).
    pub fresh_output_bytes: u64,
    /// The host threads that write the GPU path's results ([`crate::engine::BlockExecutor`]'s
    /// `parallel`: into fresh outputs every core up to 16, whatever the CPU's parallelism
    /// asks for).
    pub gpu_host_writers: usize,
}

/// Estimated times of one job on the CPU and on the GPU.
///
/// ```
/// use std::time::Duration;
/// let e = reproject::engine::cost::Estimate {
///     cpu: Duration::from_millis(3),
///     gpu: Duration::from_millis(5),
/// };
/// assert!(!e.prefers_gpu());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// On the CPU engine, with the job's threads.
    pub cpu: Duration,
    /// On the GPU, data starting and ending in host memory.
    pub gpu: Duration,
}

impl Estimate {
    /// Whether the GPU is estimated faster.
    ///
    /// ```
    /// use std::time::Duration;
    /// use reproject::engine::cost::Estimate;
    /// let e = Estimate { cpu: Duration::from_millis(290), gpu: Duration::from_millis(60) };
    /// assert!(e.prefers_gpu());
    /// let tie = Estimate { cpu: Duration::from_millis(5), gpu: Duration::from_millis(5) };
    /// assert!(!tie.prefers_gpu()); // a tie stays on the CPU
    /// ```
    pub fn prefers_gpu(&self) -> bool {
        self.gpu < self.cpu
    }
}

impl fmt::Display for Estimate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "estimated {:.1} ms on the CPU, {:.1} ms on the GPU",
            self.cpu.as_secs_f64() * 1e3,
            self.gpu.as_secs_f64() * 1e3
        )
    }
}

/// The constants of the model (see the module documentation).
///
/// ```
/// use reproject::engine::cost::CostModel;
/// assert!(CostModel::H100.pcie_bytes_per_s > 1e10);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// CPU nanoseconds per output pixel and thread spent on a homography's input position.
    pub cpu_ns_homography: f64,
    /// CPU nanoseconds per output pixel and thread spent on any other transform (projections,
    /// frame changes).
    pub cpu_ns_transform: f64,
    /// Extra CPU nanoseconds per output pixel and thread for a SIP or TPV distortion.
    pub cpu_ns_distortion: f64,
    /// CPU nanoseconds per output pixel and thread of interpolation, by order 0-5 (splines
    /// include their share of the prefilter).
    pub cpu_ns_interp: [f64; 6],
    /// The GPU's start in a process that has not used it yet (context, kernels loaded from
    /// the on-disk cache), in seconds.
    pub gpu_start_s: f64,
    /// What the start adds when the kernels are not in the on-disk cache: NVRTC compiling
    /// the general kernels for the device, in seconds.
    pub gpu_compile_s: f64,
    /// The GPU's fixed cost of one call (streams, launches, the pipeline's fill and drain),
    /// in seconds.
    pub gpu_fixed_s: f64,
    /// Host ↔ device bytes per second the host path achieves, both directions together.
    pub pcie_bytes_per_s: f64,
    /// Kernel nanoseconds per output pixel, for a homography and for other transforms.
    pub gpu_ns_homography: f64,
    /// See [`CostModel::gpu_ns_homography`].
    pub gpu_ns_transform: f64,
    /// Extra kernel nanoseconds per output pixel for a SIP or TPV distortion.
    pub gpu_ns_distortion: f64,
    /// Extra nanoseconds per output pixel for spline orders, after the copies: the device
    /// prefilter starts once every input row is up, and no block starts before it.
    pub gpu_ns_spline: f64,
    /// Bytes of fresh output memory one CPU engine thread fills per second (its first write,
    /// the kernel zeroing each new page).
    pub host_fresh_bytes_per_s: f64,
    /// Bytes of fresh output memory one host thread of the GPU path fills per second.
    pub gpu_fresh_bytes_per_s: f64,
}

impl CostModel {
    /// An NVIDIA H100 (PCIe 5) beside a 16-core host. The CPU is fitted to
    /// `docs/measurements/h100-2026-11-26` (the engine's own benchmark, `gpu_bench`), the GPU
    /// to run 5 of `docs/measurements/h100-2026-11-27-session14`, where every call made its
    /// plan, as every Python call does:
    /// - CPU on 16 threads: 16384² float32 TAN → TAN bilinear in 176 ms (10.5 ns a pixel and
    ///   thread; 163 ms later), bicubic in 317 ms (18.9 ns); 4096² CAR galactic → TAN in 116 ms
    ///   (111 ns); SIP order 3 → TAN in 246 ms (235 ns: 124 ns for the distortion). Orders 0,
    ///   2, 4 and 5, which were not measured there, keep their ratios to order 3 from the
    ///   development machine. The bicubic time is that of a plan called again: with its plan
    ///   made in the call the CPU took 2.2-2.3 s, most of it the prefilter's input read on
    ///   one thread (since made parallel, not measured there), so the model favours the CPU
    ///   on splines, which the GPU still wins;
    /// - GPU, host-resident, a plan made in the call: 16384² bilinear in 59.5 ms for 2.15 GB
    ///   across, CAR → TAN and SIP → TAN in 12.0 and 13.0 ms for about 0.2 GB: 41.3 GB/s for
    ///   both directions together (the host's staging, not the bus, sets it) and 7.5 ms of
    ///   fixed cost; bicubic in 92.4 ms, 32.9 ms more than bilinear for the same bytes: the
    ///   prefilter starts once every input row is up and no block starts before it, so a
    ///   spline order adds 0.12 ns a pixel after the copies; kernels 0.009 ns a pixel for a
    ///   homography (2.3 ms device-resident), 0.15 ns for CAR → TAN, 0.10 ns more for SIP
    ///   (session 11), below the copies in every job measured;
    /// - a process's first GPU call: about 0.35 s more than the CPU's (the CLI's GPU mosaic
    ///   and its `cuda:all` run with kernels from the disk cache), and 16.9 s more (up to
    ///   27 s) when NVRTC compiles the general kernels first (the benchmark's setup line in
    ///   `docs/measurements/h100-2026-11-26`, with and without the disk cache);
    /// - fresh float64 data and footprint (4.3 GB for 16384²), from the same run's Python
    ///   benchmark: they added 136 ms to the CPU's bilinear call (16 writing threads): 1.9
    ///   GB/s a thread. Written alone on 16 threads they took 141-164 ms. The GPU path's 16
    ///   host threads, on its short blocks into fresh outputs, took the bilinear call to
    ///   192-196 ms from Rust and 195.1 ms from Python (runs 1 and 5 of
    ///   `docs/measurements/h100-2026-11-27-session18`): about 107 ms more than into reused
    ///   float64 outputs, 2.5 GB/s a thread.
    ///
    /// ```
    /// use reproject::engine::cost::{CostModel, JobSize};
    /// use reproject::gpu::Readiness;
    /// let job = |side: u64| JobSize { pixels: side * side, input_bytes: side * side * 4,
    ///     output_bytes: side * side * 4, homography: false, distortion: false, order: 1,
    ///     gpu: Readiness::Open, fresh_output_bytes: 0, gpu_host_writers: 16 };
    /// // A small job stays on the CPU; a large CAR → TAN one goes to the GPU.
    /// assert!(!CostModel::H100.estimate(&job(64), 16).prefers_gpu());
    /// assert!(CostModel::H100.estimate(&job(16384), 16).prefers_gpu());
    /// ```
    pub const H100: CostModel = CostModel {
        cpu_ns_homography: 2.5,
        cpu_ns_transform: 102.0,
        cpu_ns_distortion: 124.0,
        cpu_ns_interp: [6.0, 8.0, 11.5, 16.4, 24.6, 31.2],
        gpu_start_s: 0.35,
        gpu_compile_s: 16.9,
        gpu_fixed_s: 7.5e-3,
        pcie_bytes_per_s: 41.3e9,
        gpu_ns_homography: 0.009,
        gpu_ns_transform: 0.15,
        gpu_ns_distortion: 0.10,
        gpu_ns_spline: 0.12,
        host_fresh_bytes_per_s: 1.9e9,
        gpu_fresh_bytes_per_s: 2.5e9,
    };

    /// The job's estimated times, the CPU engine running on `threads` threads.
    ///
    /// ```
    /// use reproject::engine::cost::{CostModel, JobSize};
    /// let job = JobSize { pixels: 4096 * 4096, input_bytes: 4096 * 4096 * 8,
    ///     output_bytes: 4096 * 4096 * 8, homography: false, distortion: false, order: 1,
    ///     gpu: reproject::gpu::Readiness::Open, fresh_output_bytes: 0, gpu_host_writers: 8 };
    /// let (one, many) = (CostModel::H100.estimate(&job, 1), CostModel::H100.estimate(&job, 64));
    /// assert!(one.cpu > many.cpu && one.gpu == many.gpu);
    /// ```
    pub fn estimate(&self, job: &JobSize, threads: usize) -> Estimate {
        let pixels = job.pixels as f64;
        let order = job.order.min(5);
        let (transform, kernel) = if job.homography {
            (self.cpu_ns_homography, self.gpu_ns_homography)
        } else {
            (self.cpu_ns_transform, self.gpu_ns_transform)
        };
        let (cpu_distortion, gpu_distortion) = if job.distortion {
            (self.cpu_ns_distortion, self.gpu_ns_distortion)
        } else {
            (0.0, 0.0)
        };
        let threads = threads.max(1) as f64;
        let fresh = |rate: f64, writers: f64| job.fresh_output_bytes as f64 / (rate * writers);
        let cpu = pixels * (transform + cpu_distortion + self.cpu_ns_interp[order]) / threads
            + fresh(self.host_fresh_bytes_per_s, threads) * 1e9;
        let spline = if order >= 2 { self.gpu_ns_spline } else { 0.0 };
        let kernels = pixels * (kernel + gpu_distortion) * 1e-9;
        let copies = (job.input_bytes + job.output_bytes) as f64 / self.pcie_bytes_per_s;
        let start = match job.gpu {
            Readiness::Open => 0.0,
            Readiness::Cached => self.gpu_start_s,
            Readiness::Uncompiled => self.gpu_start_s + self.gpu_compile_s,
        };
        let gpu = start
            + self.gpu_fixed_s
            + copies.max(kernels)
            + pixels * spline * 1e-9
            + fresh(
                self.gpu_fresh_bytes_per_s,
                job.gpu_host_writers.max(1) as f64,
            );
        Estimate {
            cpu: Duration::from_secs_f64(cpu * 1e-9),
            gpu: Duration::from_secs_f64(gpu),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(side: u64, homography: bool, order: usize, elem: u64) -> JobSize {
        JobSize {
            pixels: side * side,
            input_bytes: side * side * elem,
            output_bytes: side * side * 4,
            homography,
            distortion: false,
            order,
            gpu: Readiness::Open,
            fresh_output_bytes: 0,
            gpu_host_writers: 8,
        }
    }

    /// The side of the smallest square job the model sends to the GPU.
    fn crossover(job: impl Fn(u64) -> JobSize, threads: usize) -> u64 {
        (16..=65536)
            .step_by(16)
            .find(|&s| CostModel::H100.estimate(&job(s), threads).prefers_gpu())
            .expect("large jobs go to the GPU")
    }

    /// The jobs of `docs/measurements/h100-2026-11-26` (`gpu_bench`, 16 host threads): the
    /// model gives their measured times within 15 %, and so picks the faster device.
    #[test]
    fn the_model_gives_the_measured_h100_times() {
        let m = CostModel::H100;
        let tan = |order| square(16384, true, order, 4);
        let (car, sip) = (
            JobSize {
                input_bytes: 1800 * 3600 * 8,
                output_bytes: 4096 * 4096 * 8,
                ..square(4096, false, 1, 8)
            },
            JobSize {
                distortion: true,
                output_bytes: 4096 * 4096 * 8,
                ..square(4096, false, 1, 4)
            },
        );
        // (job, CPU ms, GPU host-resident ms), measured: the CPU in the first H100 run, the GPU
        // in h100-2026-11-27-session14, run 5, a plan made in each call (see CostModel::H100).
        for (name, job, cpu, gpu) in [
            ("TAN bilinear", tan(1), 176.1, 59.5),
            ("TAN bicubic", tan(3), 317.1, 92.4),
            ("CAR -> TAN", car, 116.1, 12.0),
            ("SIP -> TAN", sip, 246.3, 13.0),
        ] {
            let e = m.estimate(&job, 16);
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            for (what, model, measured) in [("CPU", ms(e.cpu), cpu), ("GPU", ms(e.gpu), gpu)] {
                assert!(
                    (model / measured - 1.0).abs() < 0.15,
                    "{name} on the {what}: model {model:.1} ms, measured {measured} ms"
                );
            }
            assert!(e.prefers_gpu(), "{name}: {e}");
        }
        assert!(!m.estimate(&square(256, true, 1, 4), 16).prefers_gpu());
        assert!(!m.estimate(&square(1024, true, 0, 4), 16).prefers_gpu());
    }

    /// The Python calls of run 5 of `docs/measurements/h100-2026-11-27-session18`, which
    /// return fresh float64 data and footprints (16 threads for the CPU, `parallel=True`; 16
    /// host writers on short blocks for the GPU): the model gives their measured times within
    /// 15 % and picks the GPU for each; with 8 host writers the GPU's estimate grows.
    #[test]
    fn fresh_outputs_weigh_on_both_devices() {
        let m = CostModel::H100;
        let fresh = |job: JobSize| JobSize {
            fresh_output_bytes: job.pixels * 16,
            output_bytes: job.pixels * 8,
            gpu_host_writers: 16,
            ..job
        };
        let tan = |order| fresh(square(16384, true, order, 4));
        let car = fresh(JobSize {
            input_bytes: 1800 * 3600 * 8,
            ..square(4096, false, 1, 8)
        });
        let sip = fresh(JobSize {
            distortion: true,
            ..square(4096, false, 1, 4)
        });
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let close = |name: &str, model: f64, measured: f64| {
            assert!(
                (model / measured - 1.0).abs() < 0.15,
                "{name}: model {model:.1} ms, measured {measured} ms"
            );
        };
        let bilinear = m.estimate(&tan(1), 16);
        close("bilinear on the CPU", ms(bilinear.cpu), 311.7);
        close("bilinear on the GPU", ms(bilinear.gpu), 195.1);
        assert!(bilinear.prefers_gpu(), "{bilinear}");
        let bicubic = m.estimate(&tan(3), 16);
        close("bicubic on the GPU", ms(bicubic.gpu), 204.5);
        assert!(bicubic.prefers_gpu(), "{bicubic}");
        let (car, sip) = (m.estimate(&car, 16), m.estimate(&sip, 16));
        close("CAR -> TAN on the CPU", ms(car.cpu), 134.3);
        close("CAR -> TAN on the GPU", ms(car.gpu), 20.2);
        close("SIP -> TAN on the GPU", ms(sip.gpu), 21.5);
        assert!(car.prefers_gpu() && sip.prefers_gpu());
        let eight = m.estimate(
            &JobSize {
                gpu_host_writers: 8,
                ..tan(1)
            },
            16,
        );
        assert!(eight.gpu > bilinear.gpu && eight.cpu == bilinear.cpu);
    }

    /// The same bilinear call from Rust (`gpu_bench`'s line for fresh float64 outputs, run 5
    /// of session 18): 196.2 ms on the GPU path's 16 host threads, 308.3 ms on the CPU's 16.
    /// On one CPU thread, as `parallel=False` leaves it, the GPU wins by more.
    #[test]
    fn sixteen_writers_bring_the_gpu_below_the_cpu_into_fresh_outputs() {
        let m = CostModel::H100;
        let job = JobSize {
            fresh_output_bytes: 16384 * 16384 * 16,
            output_bytes: 16384 * 16384 * 8,
            gpu_host_writers: 16,
            ..square(16384, true, 1, 4)
        };
        let (all, one) = (m.estimate(&job, 16), m.estimate(&job, 1));
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        for (name, model, measured) in [("GPU", ms(all.gpu), 196.2), ("CPU", ms(all.cpu), 308.3)] {
            assert!(
                (model / measured - 1.0).abs() < 0.15,
                "{name}: model {model:.1} ms, measured {measured} ms"
            );
        }
        assert!(all.prefers_gpu(), "{all}");
        assert!(one.gpu == all.gpu && one.cpu > all.cpu);
    }

    #[test]
    fn the_crossover_falls_with_fewer_threads_and_costlier_pixels() {
        let homography = |order| move |s| square(s, true, order, 4);
        let bilinear = crossover(homography(1), 16);
        assert!(crossover(homography(1), 2) < bilinear);
        assert!(crossover(homography(3), 16) < bilinear);
        assert!(crossover(|s| square(s, false, 1, 4), 16) < bilinear);
        let distorted = |s| JobSize {
            distortion: true,
            ..square(s, false, 1, 4)
        };
        assert!(crossover(distorted, 16) < crossover(|s| square(s, false, 1, 4), 16));
        // A homography bilinear job on 16 threads: between 1024² and 4096².
        assert!((1024..4096).contains(&bilinear), "{bilinear}");
    }

    #[test]
    fn a_process_that_has_not_opened_the_gpu_counts_its_start() {
        let cold = |s| JobSize {
            gpu: Readiness::Cached,
            ..square(s, true, 1, 4)
        };
        let warm = crossover(|s| square(s, true, 1, 4), 16);
        assert!(crossover(cold, 16) > 2 * warm);
        // The 16384² job of the benchmark: 176 ms on 16 threads against 59.5 ms on a GPU that
        // is open, but 0.35 s more for one that is not.
        let m = CostModel::H100;
        assert!(m.estimate(&square(16384, true, 1, 4), 16).prefers_gpu());
        assert!(!m.estimate(&cold(16384), 16).prefers_gpu());
        assert!(m.estimate(&cold(16384), 2).prefers_gpu());
    }

    #[test]
    fn kernels_that_are_not_compiled_yet_count_their_compilation() {
        let m = CostModel::H100;
        let job = |side, gpu| JobSize {
            gpu,
            ..square(side, true, 3, 4)
        };
        let gpu_time = |side, gpu| m.estimate(&job(side, gpu), 1).gpu.as_secs_f64();
        let compile = gpu_time(16384, Readiness::Uncompiled) - gpu_time(16384, Readiness::Cached);
        assert!((compile - m.gpu_compile_s).abs() < 1e-9, "{compile}");
        // The benchmark's bicubic job on one thread (about 5 s on the CPU): worth a GPU whose
        // kernels are cached, not one that compiles them first.
        assert!(m.estimate(&job(16384, Readiness::Cached), 1).prefers_gpu());
        assert!(!m
            .estimate(&job(16384, Readiness::Uncompiled), 1)
            .prefers_gpu());
        // A job that keeps one thread busy far longer than the compilation waits for it.
        assert!(m
            .estimate(&job(65536, Readiness::Uncompiled), 1)
            .prefers_gpu());
    }

    #[test]
    fn bytes_that_must_cross_count_against_the_gpu() {
        let m = CostModel::H100;
        let f32_in = m.estimate(&square(4096, true, 1, 4), 16);
        let f64_in = m.estimate(&square(4096, true, 1, 8), 16);
        assert_eq!(f32_in.cpu, f64_in.cpu);
        assert!(f64_in.gpu > f32_in.gpu);
        let e = Estimate {
            cpu: Duration::from_millis(2),
            gpu: Duration::from_micros(1500),
        };
        assert_eq!(
            e.to_string(),
            "estimated 2.0 ms on the CPU, 1.5 ms on the GPU"
        );
    }
}
