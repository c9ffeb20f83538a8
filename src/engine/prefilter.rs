//! The CPU's spline coefficients of a plan (orders 2-5): made once, on first use where a GPU
//! may prefilter instead, in memory or in a scratch file.

use super::coefficients::{Placement, PlaneStore};
use super::{in_row_bands, kernel_params, Backend, Parallel, Plan};
use crate::error::Result;
use crate::interp::spline::{filter_line, prefilter, prefilter_masked};
use crate::interp::NanPolicy;

/// Spline coefficients of every input plane (orders ≥ 2), computed once per call, in memory
/// or in a memory-mapped scratch file (see [`coefficients`](super::coefficients)).
pub(super) struct Coefficients {
    /// Prefiltered values, one plane per input plane.
    pub(super) planes: PlaneStore,
    /// For `NanPolicy::Renormalize`: the prefiltered validity masks.
    pub(super) masks: Option<PlaneStore>,
    /// For `NanPolicy::Renormalize`: whether each input plane has non-finite pixels and is
    /// sampled through its mask; a plane without is sampled as with `Propagate`.
    pub(super) masked: Vec<bool>,
}

/// Whether spline coefficients are made for this process only, or for other processes to map
/// too ([`spline_share`](super::spline_share)).
#[derive(Clone, Copy)]
pub(super) enum Sharing {
    Private,
    Shareable,
}

impl Plan<'_> {
    /// Whether the spline coefficients (orders ≥ 2) live in a memory-mapped scratch file
    /// because they do not fit in memory (see `$REPROJECT_RS_SPLINE_MEMORY` and
    /// `$REPROJECT_RS_SCRATCH_DIR` in [`coefficients`](super::coefficients)).
    ///
    /// ```
    /// use ndarray::Array2;
    /// use reproject::engine::{Options, Plan};
    /// use reproject::io::ArraySource;
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str(
    ///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 10\nCRVAL2 = 20\n\
    ///      CDELT1 = -0.01\nCDELT2 = 0.01\n",
    /// )?;
    /// let image = Array2::<f64>::zeros((8, 8));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let options = Options { order: "bicubic".parse()?, ..Options::default() };
    /// let plan = Plan::new(&source, &wcs, &wcs, &[8, 8], &options)?;
    /// assert!(!plan.spline_in_scratch_file()); // 512 bytes fit in memory
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn spline_in_scratch_file(&self) -> bool {
        self.coefficients
            .get()
            .is_some_and(|c| c.as_ref().is_ok_and(|c| c.planes.in_file()))
    }

    /// Whether the CPU's spline coefficients (orders ≥ 2) have been computed: at once for a
    /// plan of the CPU backend (or [`Backend::Auto`] with a job too small for a GPU); for a
    /// plan that may run on a GPU ([`Backend::Cuda`], [`Backend::Auto`]) only once the CPU
    /// needs them (a block computed on the CPU, a fallback after a GPU fault, input planes
    /// too large for the device's memory). A GPU plan whose input planes are resident on the
    /// device prefilters them there and never computes them.
    ///
    /// ```
    /// use ndarray::Array2;
    /// use reproject::engine::{Backend, Options, Plan};
    /// use reproject::io::ArraySource;
    /// use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str(
    ///     "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 10\nCRVAL2 = 20\n\
    ///      CDELT1 = -0.01\nCDELT2 = 0.01\n",
    /// )?;
    /// let image = Array2::<f64>::zeros((8, 8));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let cpu = Options {
    ///     order: "bicubic".parse()?,
    ///     backend: Backend::Cpu,
    ///     ..Options::default()
    /// };
    /// assert!(Plan::new(&source, &wcs, &wcs, &[8, 8], &cpu)?.cpu_spline_coefficients_made());
    /// let auto = Options { backend: Backend::Auto, ..cpu.clone() }; // too small for a GPU
    /// assert!(Plan::new(&source, &wcs, &wcs, &[8, 8], &auto)?.cpu_spline_coefficients_made());
    /// let gpu = Options { backend: Backend::Cuda, ..cpu };
    /// assert!(!Plan::new(&source, &wcs, &wcs, &[8, 8], &gpu)?.cpu_spline_coefficients_made());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn cpu_spline_coefficients_made(&self) -> bool {
        self.coefficients.get().is_some_and(|c| c.is_ok())
    }

    /// Whether the spline prefilter may run on a GPU for this plan (so the CPU's coefficients
    /// wait until the CPU needs them): kernels that cover the plan, and `Cuda`, or `Auto`
    /// with a job large enough for a GPU (one too small even for an open GPU stays on the
    /// CPU, and computes them now, as a CPU plan does).
    pub(super) fn gpu_may_prefilter(&self) -> bool {
        match self.options.backend {
            Backend::Cpu => false,
            Backend::Cuda => kernel_params::kernel_support(self).is_ok(),
            Backend::Auto => self.worth_a_gpu(),
        }
    }

    /// The CPU's spline coefficients of every input plane (orders ≥ 2; `None` for orders 0
    /// and 1), computed on first use (see the field's documentation).
    ///
    /// They are computed on a thread of their own, in a thread pool of their own: the caller
    /// may be a worker of the pool that computes blocks, which must not pick up (by work
    /// stealing) another block that waits for these same coefficients, and whose other workers
    /// may all be waiting for them (so they cannot run the prefilter's work either).
    pub(super) fn coefficients(&self) -> Result<Option<&Coefficients>> {
        if !self.options.order.needs_prefilter() {
            return Ok(None);
        }
        let made = self.coefficients.get_or_init(|| {
            std::thread::scope(|scope| {
                scope
                    .spawn(|| {
                        let threads = self.options.parallel.threads();
                        self.prefilter_all(Parallel::Threads(threads), Sharing::Private)
                    })
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
        });
        match made {
            Ok(c) => Ok(Some(c)),
            Err(e) => Err(e.clone()),
        }
    }

    /// The CPU's spline coefficients of every input plane, the input read and the filters
    /// run in parallel as `parallel` says, in stores other processes can map or not.
    pub(super) fn prefilter_all(
        &self,
        parallel: Parallel,
        sharing: Sharing,
    ) -> Result<Coefficients> {
        let (ny, nx) = self.plane_shape_in;
        let planes_in = self.planes_in;
        let order = self.options.order;
        let renormalize = self.options.nan_policy == NanPolicy::Renormalize;
        // Filtered in place; Renormalize keeps the filtered masks too.
        let stores = if renormalize { 2 } else { 1 };
        let bytes = (ny as u64)
            .saturating_mul(nx as u64)
            .saturating_mul(planes_in as u64)
            .saturating_mul(8 * stores);
        let placement = Placement::for_size(bytes)?;
        let store = |placement: &Placement| match sharing {
            Sharing::Private => PlaneStore::new(planes_in, (ny, nx), placement),
            Sharing::Shareable => PlaneStore::new_shareable(planes_in, (ny, nx), placement),
        };
        let mut planes = store(&placement)?;
        // In bands on every thread: the store is fresh memory (or a scratch file), and a
        // 16384² plane's 2.1 GB of float64 written on one thread was the serial part of a
        // prefilter that took about 1.9 s of the CPU's bicubic call on the H100 machine's 16
        // cores (session 14).
        parallel.install(|| {
            (0..planes_in).try_for_each(|plane| {
                let mut view = planes.plane_mut(plane);
                let buf = view.as_slice_mut().expect("store planes are contiguous");
                in_row_bands(&mut buf[..ny * nx], nx, 0, |r0, band| {
                    self.read_values(plane, r0..r0 + band.len() / nx, 0..nx, band)
                })
            })
        })??;
        if self.spectral.is_some() {
            // scipy filters the cube along its leading axes first, axis 0 (the last WCS
            // axis) first; planes are numbered in C order of those axes.
            let n = ny * nx;
            let values = planes.values_mut();
            let lead = &self.lead_in;
            for a in 0..lead.len() {
                let stride: usize = lead[a + 1..].iter().product();
                let len = lead[a];
                let mut line = vec![0.0; len];
                let starts = (0..planes_in).filter(|p| (p / stride).is_multiple_of(len));
                for start in starts {
                    for i in 0..n {
                        for (j, v) in line.iter_mut().enumerate() {
                            *v = values[(start + j * stride) * n + i];
                        }
                        filter_line(&mut line, order);
                        for (j, v) in line.iter().enumerate() {
                            values[(start + j * stride) * n + i] = *v;
                        }
                    }
                }
            }
        }
        // On the threads the options ask for (the filters run in parallel over lines).
        let mut masked = vec![false; planes_in];
        let masks = if renormalize {
            let mut masks = store(&placement)?;
            parallel.install(|| {
                for (p, masked) in masked.iter_mut().enumerate() {
                    // A plane without non-finite pixels is sampled exactly as with Propagate
                    // (see NanPolicy): dividing by its mask sample, ≈ 1 but not exactly, would
                    // change the last bits.
                    if planes.plane(p).iter().all(|v| v.is_finite()) {
                        prefilter(planes.plane_mut(p), order);
                        continue;
                    }
                    *masked = true;
                    let (coeffs, mask) = prefilter_masked(planes.plane(p), order);
                    planes.plane_mut(p).assign(&coeffs);
                    masks.plane_mut(p).assign(&mask);
                }
            })?;
            Some(masks)
        } else {
            parallel.install(|| {
                for p in 0..planes_in {
                    prefilter(planes.plane_mut(p), order);
                }
            })?;
            None
        };
        Ok(Coefficients {
            planes,
            masks,
            masked,
        })
    }
}
