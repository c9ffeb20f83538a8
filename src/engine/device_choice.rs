//! Where a plan's blocks compute: the executor the options name, and [`Backend::Auto`]'s
//! choice between the CPU and a GPU by the cost model.

use std::fmt;
use std::sync::Arc;

use super::executor::{BlockExecutor, CpuExecutor};
use super::{cost, gpu_executor, kernel_params, log_once, Backend, CudaExecutor, Plan};
use crate::error::{Error, Result};
use crate::gpu::Readiness;

/// Where [`Backend::Auto`] runs a job (see [`auto_choice`]).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum AutoChoice {
    /// On the CPU, estimated faster there even than on an open GPU (the estimate with it
    /// open): a small job, for which the GPU is not looked at.
    Cpu(cost::Estimate),
    /// On the CPU: no usable GPU.
    NoGpu(Error),
    /// On the CPU, estimated faster there only because the GPU's kernels would be compiled
    /// first: they should compile in the background for the next jobs.
    CpuWhileCompiling(cost::Estimate),
    /// On the CPU, estimated faster there only because the GPU is not open yet (its start
    /// counted: an open GPU would win).
    CpuUntilOpen(cost::Estimate),
    /// On the GPU.
    Gpu,
}

/// [`Backend::Auto`]'s choice for a job whose estimate with the GPU as ready as given is
/// `estimate`, the GPU's readiness found by `readiness` only for jobs large enough for an open
/// GPU (small ones never touch the driver).
fn auto_choice(
    estimate: impl Fn(Readiness) -> cost::Estimate,
    readiness: impl FnOnce() -> Result<Readiness>,
) -> AutoChoice {
    let if_open = estimate(Readiness::Open);
    if !if_open.prefers_gpu() {
        return AutoChoice::Cpu(if_open);
    }
    let readiness = match readiness() {
        Ok(readiness) => readiness,
        Err(e) => return AutoChoice::NoGpu(e),
    };
    let as_it_stands = estimate(readiness);
    match readiness {
        _ if as_it_stands.prefers_gpu() => AutoChoice::Gpu,
        Readiness::Uncompiled if estimate(Readiness::Cached).prefers_gpu() => {
            AutoChoice::CpuWhileCompiling(as_it_stands)
        }
        _ => AutoChoice::CpuUntilOpen(as_it_stands),
    }
}

impl Plan<'_> {
    /// Whether this job is worth a GPU at all, whatever this machine has: the kernels cover
    /// the plan and the cost model estimates it faster on a GPU that is open and ready than
    /// on the CPU (with the options' threads). A job that is not stays on the CPU with
    /// [`Backend::Auto`] on any machine; one that is goes to a GPU where one is ready
    /// ([`Plan::runs_on_gpu`]).
    ///
    /// ```
    /// use reproject::engine::{Options, Plan};
    /// use reproject::io::ArraySource;
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str(
    ///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
    ///      CDELT1 = -0.01\nCDELT2 = 0.01\n",
    /// )?;
    /// let image = ndarray::Array2::<f32>::zeros((64, 64));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// assert!(!Plan::new(&source, &wcs, &wcs, &[64, 64], &Options::default())?.worth_a_gpu());
    /// let serial = Options {
    ///     parallel: reproject::engine::Parallel::Serial,
    ///     ..Options::default()
    /// };
    /// assert!(Plan::new(&source, &wcs, &wcs, &[16384, 16384], &serial)?.worth_a_gpu());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn worth_a_gpu(&self) -> bool {
        self.estimate_with(Readiness::Open).prefers_gpu()
            && kernel_params::kernel_support(self).is_ok()
    }

    /// Whether this plan's blocks are meant for a GPU: always with [`Backend::Cuda`], never
    /// with [`Backend::Cpu`], and with [`Backend::Auto`] when it chooses one (a job large
    /// enough, with a usable GPU whose kernels cover the plan and are compiled; see
    /// [`Plan::executor`]). Decided without opening a GPU, once per plan; a GPU that then
    /// fails to open still leaves the blocks to the CPU. A job that `Auto` keeps on the CPU
    /// only because the GPU's kernels were never compiled starts their compilation in the
    /// background when this is decided ([`crate::gpu::compile_kernels_in_background`]).
    ///
    /// ```
    /// use reproject::engine::{Backend, Options, Plan};
    /// use reproject::io::ArraySource;
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str(
    ///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
    ///      CDELT1 = -0.01\nCDELT2 = 0.01\n",
    /// )?;
    /// let image = ndarray::Array2::<f32>::zeros((64, 64));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let plan = |backend| {
    ///     let options = Options { backend, ..Options::default() };
    ///     Plan::new(&source, &wcs, &wcs, &[64, 64], &options)
    /// };
    /// assert!(plan(Backend::Cuda)?.runs_on_gpu());
    /// assert!(!plan(Backend::Auto)?.runs_on_gpu()); // too small for a GPU
    /// assert!(!plan(Backend::Cpu)?.runs_on_gpu());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn runs_on_gpu(&self) -> bool {
        match self.options.backend {
            Backend::Cpu => false,
            Backend::Cuda => true,
            Backend::Auto => *self.auto_decision() == AutoChoice::Gpu,
        }
    }

    /// [`Backend::Auto`]'s choice for this plan ([`auto_choice`]), made on first use: the
    /// GPU's readiness is asked only for a job large enough for an open GPU, and a plan the
    /// kernels do not cover stays on the CPU without asking it. A job kept on the CPU only
    /// because the GPU's kernels are not compiled starts their compilation in the background
    /// here, for the jobs after it, whoever asked (the process computing the job, or the
    /// owner of worker processes, whose workers then compute on the CPU).
    pub(super) fn auto_decision(&self) -> &AutoChoice {
        self.auto.get_or_init(|| {
            let devices = self.options.devices;
            let choice = auto_choice(
                |gpu| self.estimate_with(gpu),
                || {
                    kernel_params::kernel_support(self).map_err(Error::GpuUnavailable)?;
                    crate::gpu::readiness(devices)
                },
            );
            if let AutoChoice::CpuWhileCompiling(estimate) = &choice
                && let Ok(true) = crate::gpu::compile_for_in_background(devices)
            {
                log_once(
                    "compiling",
                    &format!(
                        "computing on the CPU: {estimate}, whose kernels are not compiled \
                             yet; they compile in the background into the disk cache (once per \
                             machine, about 20 s; a process that ends first waits for them) for \
                             the jobs after this one (`reproject-rs warmup` compiles them ahead)"
                    ),
                );
            }
            choice
        })
    }

    /// What computes this plan's blocks: chosen once, on first use, from the options
    /// ([`Options::backend`](super::Options::backend) and
    /// [`Options::devices`](super::Options::devices)): the CPU engine, or the CUDA executor
    /// on the chosen GPUs (the simulator's under `REPROJECT_RS_CUDA_SIM`). `Auto` takes the
    /// GPU when the cost model estimates it faster ([`Plan::cost_estimate`]: small jobs stay
    /// on the CPU without looking at the GPU) and it can do the job, and says why not (once
    /// per process) when it cannot. A job that would be faster on a GPU whose kernels were
    /// never compiled, but not once their compilation is counted, runs on the CPU while they
    /// compile in the background into the disk cache
    /// ([`crate::gpu::compile_kernels_in_background`]), for the jobs after it.
    ///
    /// Errors (`Cuda` only): [`Error::GpuUnavailable`] when there is no usable GPU or the
    /// kernels do not cover the plan.
    ///
    /// ```
    /// # use ndarray::Array2;
    /// # use reproject::engine::{Options, Plan};
    /// # use reproject::io::ArraySource;
    /// # use reproject::wcs::Wcs;
    /// # let header = |crpix: f64| format!(
    /// #     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = {crpix}\nCRPIX2 = 16\n\
    /// #      CRVAL1 = 150\nCRVAL2 = 30\nCDELT1 = -0.001\nCDELT2 = 0.001\n");
    /// # let wcs_in = Wcs::from_header_str(&header(16.0))?;
    /// # let wcs_out = Wcs::from_header_str(&header(15.0))?;
    /// # let image = Array2::from_shape_fn((32, 32), |(y, x)| (10 * y + x) as f64);
    /// # let source = ArraySource::new(image.view().into_dyn())?;
    /// use reproject::gpu::Backend;
    /// let options = Options { backend: Backend::Cpu, ..Options::default() };
    /// let plan = Plan::new(&source, &wcs_in, &wcs_out, &[32, 32], &options)?;
    /// assert_eq!(plan.executor()?.name(), "cpu");
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn executor(&self) -> Result<&Arc<dyn BlockExecutor>> {
        if let Some(e) = self.executor.get() {
            return Ok(e);
        }
        let chosen: Arc<dyn BlockExecutor> = match self.options.backend {
            Backend::Cpu => Arc::new(CpuExecutor),
            Backend::Cuda => Arc::new(self.gpu_executor()?),
            Backend::Auto => self.auto_executor(),
        };
        Ok(self.executor.get_or_init(|| chosen))
    }

    /// The CUDA executor of this plan on the options' GPUs.
    pub(super) fn gpu_executor(&self) -> Result<CudaExecutor> {
        crate::gpu::drivers(self.options.devices)
            .and_then(|drivers| CudaExecutor::new(self, drivers))
    }

    /// [`Backend::Auto`]'s executor (see [`Plan::executor`]).
    pub(super) fn auto_executor(&self) -> Arc<dyn BlockExecutor> {
        // Machines without a GPU are the common case: silent there.
        let on_cpu = |key: &'static str, why: &dyn fmt::Display| -> Arc<dyn BlockExecutor> {
            if crate::gpu::driver_installed() {
                log_once(key, &format!("computing on the CPU: {why}"));
            }
            Arc::new(CpuExecutor)
        };
        match self.auto_decision().clone() {
            // The common case, and expected: silent.
            AutoChoice::Cpu(_) => Arc::new(CpuExecutor),
            AutoChoice::CpuUntilOpen(estimate) => on_cpu(
                "start",
                &format!(
                    "{estimate}, its start included (warm-up opens it ahead of the jobs: \
                     `reproject_rs.warmup()`, `gpu::warmup`)"
                ),
            ),
            AutoChoice::NoGpu(e) => on_cpu("cpu", &e),
            // Their compilation started with the choice (see `auto_decision`).
            AutoChoice::CpuWhileCompiling(_) => Arc::new(CpuExecutor),
            AutoChoice::Gpu => match self.gpu_executor() {
                Ok(gpu) => {
                    log_once("using", &format!("computing on {}", gpu.name()));
                    Arc::new(gpu)
                }
                Err(e) => on_cpu("cpu", &e),
            },
        }
    }

    /// What this job is estimated to cost on the CPU (with the options' threads) and on the
    /// GPU (data starting and ending in host memory, counting its start as this process
    /// stands: open, kernels cached or not compiled yet; a machine without a usable GPU is
    /// estimated as one with its kernels cached): how [`Backend::Auto`] chooses between them
    /// (see [`cost`]).
    ///
    /// ```
    /// use reproject::engine::{Backend, Options, Plan};
    /// use reproject::io::ArraySource;
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str(
    ///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\nCRVAL2 = 0\n\
    ///      CDELT1 = -0.01\nCDELT2 = 0.01\n",
    /// )?;
    /// let image = ndarray::Array2::<f32>::zeros((64, 64));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let options = Options { backend: Backend::Auto, ..Options::default() };
    /// let plan = Plan::new(&source, &wcs, &wcs, &[64, 64], &options)?;
    /// assert!(!plan.cost_estimate().prefers_gpu());
    /// assert_eq!(plan.executor()?.name(), "cpu"); // too small for the GPU
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn cost_estimate(&self) -> cost::Estimate {
        let readiness = crate::gpu::readiness(self.options.devices).unwrap_or(Readiness::Cached);
        self.estimate_with(readiness)
    }

    /// The cost model's estimate of this job with the GPU as `gpu` says.
    pub(super) fn estimate_with(&self, gpu: Readiness) -> cost::Estimate {
        let (ny, nx) = self.plane_shape_out();
        let pixels = (ny * nx * self.planes) as u64;
        let job = cost::JobSize {
            pixels,
            input_bytes: gpu_executor::upload_bytes(self),
            output_bytes: pixels * if self.rounding.rounds_results() { 4 } else { 8 },
            homography: self.coords.is_homography(),
            distortion: self.coords.is_distorted(),
            order: self.options.order.degree(),
            gpu,
            fresh_output_bytes: self.fresh_output_bytes,
            gpu_host_writers: gpu_executor::host_writers(
                self.options.parallel,
                self.outputs_fresh(),
            ),
        };
        cost::CostModel::H100.estimate(&job, self.options.parallel.threads())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::time::Duration;

    /// A job estimated at `cpu` ms on the CPU and, on the GPU, at `kernels` ms plus the start
    /// the readiness implies (0, 300 ms cached, 17 s more to compile).
    fn estimates(cpu: u64, kernels: u64) -> impl Fn(Readiness) -> cost::Estimate {
        move |gpu| {
            let start = match gpu {
                Readiness::Open => 0,
                Readiness::Cached => 300,
                Readiness::Uncompiled => 17_300,
            };
            cost::Estimate {
                cpu: Duration::from_millis(cpu),
                gpu: Duration::from_millis(kernels + start),
            }
        }
    }

    #[test]
    fn auto_looks_at_the_gpu_only_for_jobs_an_open_gpu_would_win() {
        let looked = Cell::new(false);
        let choice = auto_choice(estimates(10, 20), || {
            looked.set(true);
            Ok(Readiness::Open)
        });
        assert!(matches!(choice, AutoChoice::Cpu(_)), "{choice:?}");
        assert!(!looked.get(), "a small job asked the driver");
    }

    #[test]
    fn auto_takes_the_gpu_when_it_wins_as_it_stands() {
        for readiness in [Readiness::Open, Readiness::Cached] {
            let choice = auto_choice(estimates(1000, 20), || Ok(readiness));
            assert_eq!(choice, AutoChoice::Gpu, "{readiness:?}");
        }
        // A job long enough to wait for the compilation.
        let choice = auto_choice(estimates(60_000, 20), || Ok(Readiness::Uncompiled));
        assert_eq!(choice, AutoChoice::Gpu);
    }

    #[test]
    fn auto_compiles_in_the_background_what_only_the_compilation_holds_back() {
        let choice = auto_choice(estimates(1000, 20), || Ok(Readiness::Uncompiled));
        assert_eq!(
            choice,
            AutoChoice::CpuWhileCompiling(estimates(1000, 20)(Readiness::Uncompiled))
        );
        // Too small for a GPU that is not open, compiled or not: nothing to compile for.
        let choice = auto_choice(estimates(100, 20), || Ok(Readiness::Uncompiled));
        assert!(matches!(choice, AutoChoice::CpuUntilOpen(_)), "{choice:?}");
        let choice = auto_choice(estimates(100, 20), || Ok(Readiness::Cached));
        assert!(matches!(choice, AutoChoice::CpuUntilOpen(_)), "{choice:?}");
    }

    #[test]
    fn auto_without_a_gpu_says_why() {
        let why = Error::GpuUnavailable("no CUDA driver".into());
        let choice = auto_choice(estimates(1000, 20), || Err(why.clone()));
        assert_eq!(choice, AutoChoice::NoGpu(why));
    }
}
