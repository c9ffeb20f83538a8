//! How [`crate::gpu::Backend::Auto`] chooses between the CPU engine and the GPU: a cost model
//! that estimates a job's time on each and takes the faster, so that small jobs (where the
//! GPU's fixed cost and the bytes that must cross PCIe dominate) stay on the CPU and large ones
//! go to the GPU.
//!
//! ```text
//! CPU  = pixels · (transform + interpolation ns per pixel and thread) / threads
//! GPU  = fixed cost per call + bytes up and down / PCIe + pixels · kernel ns per pixel
//! ```
//!
//! The constants ([`CostModel::H100`]) come from the only hardware figures the project has
//! (`shared/measurements/h100`: CPU engine on 16 host threads; the kernel under Nsight Compute;
//! the pinned-copy floor) and from the goal of issue 17 for the host path (1.5× the pinned
//! copy of the bytes that must cross). They decide only where a job runs, never its values:
//! both executors give the same bits.
//!
//! ```
//! use reproject::engine::cost::{CostModel, JobSize};
//! let job = |side: u64| JobSize { pixels: side * side, input_bytes: side * side * 4,
//!                                 output_bytes: side * side * 4, homography: true, order: 1 };
//! let model = CostModel::H100;
//! assert!(!model.estimate(&job(256), 16).prefers_gpu());   // small: the CPU
//! assert!(model.estimate(&job(16384), 16).prefers_gpu());  // 16384²: the GPU
//! ```

use std::fmt;
use std::time::Duration;

/// What a job costs to move and compute, as the cost model sees it.
///
/// ```
/// let job = reproject::engine::cost::JobSize { pixels: 100, input_bytes: 400,
///     output_bytes: 400, homography: false, order: 3 };
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
    /// The interpolation order (0-5; 2-5 are prefiltered splines).
    pub order: usize,
}

/// Estimated times of one job on the CPU and on the GPU.
///
/// ```
/// use std::time::Duration;
/// let e = reproject::engine::cost::Estimate { cpu: Duration::from_millis(3), gpu: Duration::from_millis(5) };
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
    /// distortions, frame changes).
    pub cpu_ns_transform: f64,
    /// CPU nanoseconds per output pixel and thread of interpolation, by order 0-5 (splines
    /// include their share of the prefilter).
    pub cpu_ns_interp: [f64; 6],
    /// The GPU's fixed cost of one call (streams, launches, synchronisation), in seconds.
    pub gpu_fixed_s: f64,
    /// Host ↔ device bytes per second the host path achieves, both directions together.
    pub pcie_bytes_per_s: f64,
    /// Kernel nanoseconds per output pixel, for a homography and for other transforms.
    pub gpu_ns_homography: f64,
    /// See [`CostModel::gpu_ns_homography`].
    pub gpu_ns_transform: f64,
    /// Extra kernel nanoseconds per output pixel for spline orders (prefilter and taps).
    pub gpu_ns_spline: f64,
}

impl CostModel {
    /// An NVIDIA H100 (PCIe 5) beside a 16-core host, from `shared/measurements/h100`:
    /// - CPU: 16384² bilinear TAN → TAN in 290 ms on 16 threads from Python (17 ns a pixel
    ///   and thread), 4096² CAR → TAN float64 in 116 ms (111 ns); the spline orders from the
    ///   development machine's Python calls, 1024² to 4096² rotated TAN → TAN (orders 0/1 15-19
    ///   ns, 3 about 55 ns, 5 about 100 ns a pixel and thread);
    /// - pinned copies: 2 GiB across in 38.9 ms (55 GB/s both ways together); the host path
    ///   counted at issue 17's goal, 1.5× that copy;
    /// - the general kernel: 475 µs a 2048² launch (0.113 ns a pixel, 12.5 % occupancy); the
    ///   homography variants are budgeted at four times the occupancy.
    pub const H100: CostModel = CostModel {
        cpu_ns_homography: 4.0,
        cpu_ns_transform: 105.0,
        cpu_ns_interp: [10.0, 12.0, 35.0, 50.0, 75.0, 95.0],
        gpu_fixed_s: 1.0e-3,
        pcie_bytes_per_s: 55.0e9 / 1.5,
        gpu_ns_homography: 0.03,
        gpu_ns_transform: 0.113,
        gpu_ns_spline: 0.1,
    };

    /// The job's estimated times, the CPU engine running on `threads` threads.
    ///
    /// ```
    /// use reproject::engine::cost::{CostModel, JobSize};
    /// let job = JobSize { pixels: 4096 * 4096, input_bytes: 4096 * 4096 * 8,
    ///     output_bytes: 4096 * 4096 * 8, homography: false, order: 1 };
    /// let (one, many) = (CostModel::H100.estimate(&job, 1), CostModel::H100.estimate(&job, 64));
    /// assert!(one.cpu > many.cpu && one.gpu == many.gpu);
    /// ```
    pub fn estimate(&self, job: &JobSize, threads: usize) -> Estimate {
        let pixels = job.pixels as f64;
        let order = job.order.min(5);
        let transform = if job.homography {
            self.cpu_ns_homography
        } else {
            self.cpu_ns_transform
        };
        let cpu = pixels * (transform + self.cpu_ns_interp[order]) / threads.max(1) as f64;
        let kernel = if job.homography {
            self.gpu_ns_homography
        } else {
            self.gpu_ns_transform
        } + if order >= 2 { self.gpu_ns_spline } else { 0.0 };
        let bytes = (job.input_bytes + job.output_bytes) as f64;
        let gpu = self.gpu_fixed_s + bytes / self.pcie_bytes_per_s + pixels * kernel * 1e-9;
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
            order,
        }
    }

    /// The side of the smallest square job the model sends to the GPU.
    fn crossover(homography: bool, order: usize, threads: usize) -> u64 {
        (16..=32768)
            .step_by(16)
            .find(|&s| {
                CostModel::H100
                    .estimate(&square(s, homography, order, 4), threads)
                    .prefers_gpu()
            })
            .expect("large jobs go to the GPU")
    }

    #[test]
    fn small_jobs_stay_on_the_cpu_and_large_ones_go_to_the_gpu() {
        let m = CostModel::H100;
        // The measured jobs of shared/measurements/h100, on its 16 host threads.
        assert!(m.estimate(&square(16384, true, 1, 4), 16).prefers_gpu());
        assert!(m.estimate(&square(4096, true, 3, 4), 16).prefers_gpu());
        assert!(m.estimate(&square(4096, false, 1, 8), 16).prefers_gpu());
        assert!(!m.estimate(&square(256, true, 1, 4), 16).prefers_gpu());
        assert!(!m.estimate(&square(512, true, 0, 4), 16).prefers_gpu());
    }

    #[test]
    fn the_crossover_falls_with_fewer_threads_and_costlier_pixels() {
        let bilinear = crossover(true, 1, 16);
        assert!(crossover(true, 1, 2) < bilinear);
        assert!(crossover(true, 3, 16) < bilinear);
        assert!(crossover(false, 1, 16) < bilinear);
        // A homography bilinear job on 16 threads: between 1024² and 4096².
        assert!((1024..4096).contains(&bilinear), "{bilinear}");
    }

    #[test]
    fn bytes_that_must_cross_count_against_the_gpu() {
        let m = CostModel::H100;
        let f32_in = m.estimate(&square(2048, true, 1, 4), 16);
        let f64_in = m.estimate(&square(2048, true, 1, 8), 16);
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
