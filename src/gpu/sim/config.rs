//! How a simulator behaves ([`SimConfig`], from the environment too) and what it records:
//! each driver call ([`Call`]) and the bytes, allocations and launches counted ([`SimStats`]).

#[cfg(doc)]
use super::SimDriver;
#[cfg(doc)]
use crate::gpu::driver::Driver;
use crate::gpu::driver::FaultKind;

/// How a [`SimDriver`] behaves.
///
/// ```
/// use reproject::gpu::driver::{Driver, FaultKind};
/// use reproject::gpu::sim::{SimConfig, SimDriver};
/// let config = SimConfig { memory: 1 << 20, ..SimConfig::default() };
/// let sim = SimDriver::new(SimConfig { fail_at: Some((1, FaultKind::Other)), ..config });
/// assert!(sim.alloc(512 << 10).is_ok()); // call 0
/// assert_eq!(sim.alloc(8).unwrap_err().kind, FaultKind::Other); // call 1: the injected fault
/// assert_eq!(sim.alloc(1 << 20).unwrap_err().kind, FaultKind::OutOfMemory); // past 1 MiB
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Fail the first fallible call whose index (counted from 0 over the calls recorded, see
    /// [`SimDriver::calls`]) is at least this one with this kind of fault. "At least": threads
    /// interleave their calls differently from run to run, so an index may fall on a call that
    /// cannot fail (a free); the fault then strikes the next call that can.
    pub fail_at: Option<(usize, FaultKind)>,
    /// Seed of the completion order.
    pub seed: u64,
    /// Device memory in bytes.
    pub memory: usize,
    /// The simulated device's ordinal.
    pub ordinal: usize,
    /// Record only: queue, order, check and record every operation, but copy nothing and run
    /// no kernel, and keep no device memory behind the allocations (so a job of any size can
    /// be recorded for [`crate::gpu::timeline`] cheaply; what the host reads back is meaningless).
    pub record_only: bool,
    /// Specialised variants start out of the on-disk cache, as on a machine that has not
    /// compiled them yet: [`Driver::variant_ready`] says no until a load, or
    /// [`Driver::prepare_variant`] and then [`SimDriver::finish_compilations`], compiled them.
    pub uncached_variants: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            fail_at: None,
            seed: 0x2545_f491_4f6c_dd1d,
            memory: 1 << 30,
            ordinal: 0,
            record_only: false,
            uncached_variants: false,
        }
    }
}

impl SimConfig {
    /// The configuration `REPROJECT_RS_CUDA_SIM_FAIL`, `_SEED` and `_MEMORY` describe, for
    /// device `ordinal`.
    ///
    /// ```
    /// let c = reproject::gpu::sim::SimConfig::from_env(1);
    /// assert_eq!(c.ordinal, 1);
    /// ```
    pub fn from_env(ordinal: usize) -> SimConfig {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let mut config = SimConfig {
            ordinal,
            ..SimConfig::default()
        };
        if let Some(seed) = var("REPROJECT_RS_CUDA_SIM_SEED").and_then(|s| s.parse().ok()) {
            config.seed = seed;
        }
        if let Some(m) = var("REPROJECT_RS_CUDA_SIM_MEMORY").and_then(|s| s.parse().ok()) {
            config.memory = m;
        }
        if let Some(spec) = var("REPROJECT_RS_CUDA_SIM_FAIL") {
            let (index, kind) = spec.split_once(':').unwrap_or((&spec, "other"));
            let kind = match kind {
                "oom" => FaultKind::OutOfMemory,
                "sticky" => FaultKind::Sticky,
                _ => FaultKind::Other,
            };
            config.fail_at = index.trim().parse().ok().map(|i| (i, kind));
        }
        config
    }
}

/// One recorded driver call.
///
/// ```
/// use reproject::gpu::driver::Driver;
/// use reproject::gpu::sim::{Call, SimDriver};
/// let sim = SimDriver::new(Default::default());
/// sim.alloc(100)?;
/// let alloc = Call { index: 0, name: "cuMemAlloc", stream: None, bytes: 100, fallible: true };
/// assert_eq!(sim.calls(), [alloc]);
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// Its index among every call of the driver.
    pub index: usize,
    /// The CUDA driver function it stands for.
    pub name: &'static str,
    /// The stream, for queued work.
    pub stream: Option<u64>,
    /// Bytes allocated or copied.
    pub bytes: usize,
    /// Whether the call can fail (and so can be made to fail).
    pub fallible: bool,
}

/// What a [`SimDriver`] has done.
///
/// ```
/// use reproject::gpu::driver::Driver;
/// use reproject::gpu::sim::SimDriver;
/// let sim = SimDriver::new(Default::default());
/// let (dev, host) = (sim.alloc(1000)?, sim.alloc_host(1000)?);
/// sim.upload_now(&[7; 1000], dev)?;
/// let s = sim.stats();
/// assert_eq!((s.uploaded, s.device_allocations, s.host_allocations), (1000, 1, 1));
/// assert_eq!(s.device_bytes_in_use, 1024); // rounded up to 256 bytes
/// sim.free_host(host);
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Bytes copied host → device.
    pub uploaded: u64,
    /// Bytes copied device → host.
    pub downloaded: u64,
    /// Page-locked host allocations.
    pub host_allocations: usize,
    /// Device allocations.
    pub device_allocations: usize,
    /// Kernel launches completed.
    pub launches: usize,
    /// Device bytes allocated and handed out now (not those the driver keeps for reuse).
    pub device_bytes_in_use: usize,
    /// Device bytes kept for reuse now (see [`crate::gpu::pool`]).
    pub device_bytes_kept: usize,
    /// Streams created (not those handed out again).
    pub streams_created: usize,
    /// Launches that parsed the block kernel's parameters once for the launches that follow
    /// (`BlockLaunch::parse_params`; counted in `launches` too).
    pub parameter_parses: usize,
    /// Kernel builds compiled: the first load of each specialised variant, as the CUDA
    /// driver compiles each once per process (the general kernel comes with the device).
    pub compilations: usize,
}
