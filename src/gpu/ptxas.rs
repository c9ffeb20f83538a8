//! The resources ptxas reports for each entry point (registers, stack frame, spills, shared
//! memory) in NVRTC's log with `--ptxas-options=-v`, and the occupancy they give. Pure
//! parsing: [`super::resources`] compiles and re-exports these; the runtime reads the spills
//! to choose a variant's launch bounds.

/// Where a [`KernelResources`] was read.
///
/// ```
/// use reproject::gpu::resources::{KernelResources, ReportSource};
/// assert_eq!(KernelResources::default().source, ReportSource::Ptxas);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReportSource {
    /// ptxas's verbose report in NVRTC's log: every field.
    #[default]
    Ptxas,
    /// The CUBIN's own attributes ([`super::resources::cubin_resources`]), for a build whose
    /// log has no report: everything but the spills, which are known only for a kernel
    /// without a stack frame.
    Cubin,
}

/// The resources of one kernel entry point, as ptxas reports them.
///
/// ```
/// use reproject::gpu::resources::parse_ptxas_log;
/// let log = "ptxas info    : Compiling entry function 'k' for 'sm_90'\n\
///            ptxas info    : Function properties for k\n\
///            ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
///            ptxas info    : Used 64 registers, used 0 barriers\n";
/// let k = &parse_ptxas_log(log)[0];
/// assert_eq!((k.name.as_str(), k.registers, k.stack_frame), ("k", 64, 0));
/// assert_eq!(k.occupancy(256, "sm_90"), Some(0.5)); // 64 registers: half the warps
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KernelResources {
    /// The entry point's name.
    pub name: String,
    /// Registers per thread.
    pub registers: u32,
    /// Stack frame per thread (bytes).
    pub stack_frame: u32,
    /// Bytes stored to local memory because registers ran out.
    pub spill_stores: u32,
    /// Bytes loaded back from those spills.
    pub spill_loads: u32,
    /// Static shared memory per thread block (bytes).
    pub shared_memory: u32,
    /// Where these figures were read.
    pub source: ReportSource,
}

/// The first unsigned integer before `unit` in `line` (e.g. `528` in "528 bytes stack frame"
/// for unit "bytes stack frame").
fn number_before(line: &str, unit: &str) -> Option<u32> {
    let end = line.find(unit)?;
    let digits: String = line[..end]
        .trim_end()
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.chars().rev().collect::<String>().parse().ok()
}

/// The entry points' resources in a ptxas verbose log (NVRTC's program log compiled with
/// `--ptxas-options=-v`), in the order the log names them.
///
/// ```
/// use reproject::gpu::resources::parse_ptxas_log;
/// let log = "ptxas info    : Compiling entry function 'k' for 'sm_90'\n\
///            ptxas info    : Function properties for k\n\
///            ptxas         .     16 bytes stack frame, 4 bytes spill stores, \
///            8 bytes spill loads\n\
///            ptxas info    : Used 40 registers, used 1 barriers, 3624 bytes smem\n";
/// let k = &parse_ptxas_log(log)[0];
/// assert_eq!((k.registers, k.stack_frame, k.spill_stores, k.spill_loads, k.shared_memory),
///            (40, 16, 4, 8, 3624));
/// ```
pub fn parse_ptxas_log(log: &str) -> Vec<KernelResources> {
    let mut entries: Vec<KernelResources> = Vec::new();
    // The function whose properties the next "bytes stack frame" line gives.
    let mut properties_of: Option<String> = None;
    let mut current: Option<usize> = None;
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or_default().to_string();
            entries.push(KernelResources {
                name,
                ..KernelResources::default()
            });
            current = Some(entries.len() - 1);
        } else if let Some(rest) = line.split("Function properties for ").nth(1) {
            properties_of = Some(rest.trim().to_string());
        } else if line.contains("bytes stack frame") {
            let of = properties_of.take();
            if let Some(e) = entries.iter_mut().find(|e| Some(&e.name) == of.as_ref()) {
                e.stack_frame = number_before(line, "bytes stack frame").unwrap_or(0);
                e.spill_stores = number_before(line, "bytes spill stores").unwrap_or(0);
                e.spill_loads = number_before(line, "bytes spill loads").unwrap_or(0);
            }
        } else if line.contains("Used ")
            && line.contains(" registers")
            && let Some(e) = current.and_then(|i| entries.get_mut(i))
        {
            e.registers = number_before(line, "registers").unwrap_or(0);
            e.shared_memory = number_before(line, "bytes smem").unwrap_or(0);
        }
    }
    entries
}

/// Per-SM limits of the architectures the kernels target.
struct SmLimits {
    registers: u32,
    threads: u32,
    blocks: u32,
    shared_memory: u32,
}

/// Shared memory the system reserves for each resident thread block on compute capability 8.0
/// and later (`cudaDevAttrReservedSharedMemoryPerBlock`), besides the kernel's own.
const RESERVED_SHARED_MEMORY: u32 = 1024;

fn limits(arch: &str) -> Option<SmLimits> {
    let shared_memory = match arch {
        "sm_80" => 164 * 1024,
        "sm_86" | "sm_89" => 100 * 1024,
        "sm_90" => 228 * 1024,
        _ => return None,
    };
    let (threads, blocks) = match arch {
        "sm_86" => (1536, 16),
        "sm_89" => (1536, 24),
        _ => (2048, 32),
    };
    Some(SmLimits {
        registers: 65_536,
        threads,
        blocks,
        shared_memory,
    })
}

impl KernelResources {
    /// Whether the spill counts are known: always from ptxas's report; from a CUBIN only for
    /// a kernel without a stack frame, since spills live in the frame.
    ///
    /// ```
    /// use reproject::gpu::resources::{KernelResources, ReportSource};
    /// let read = KernelResources { source: ReportSource::Cubin, ..Default::default() };
    /// assert!(read.spills_known());
    /// assert!(!KernelResources { stack_frame: 16, ..read }.spills_known());
    /// ```
    pub fn spills_known(&self) -> bool {
        self.source == ReportSource::Ptxas || self.stack_frame == 0
    }

    /// The theoretical occupancy (resident warps over the SM's maximum) of thread blocks of
    /// `threads` threads on `arch` (sm_80, sm_86, sm_89, sm_90), as the CUDA occupancy
    /// calculator computes it from registers (allocated per warp in units of 256),
    /// shared memory (the kernel's and the 1 KiB the system reserves for each block) and the
    /// SM's thread and block limits; `None` for another architecture.
    ///
    /// ```
    /// use reproject::gpu::resources::KernelResources;
    /// let k = KernelResources { registers: 164, shared_memory: 3624, ..Default::default() };
    /// assert_eq!(k.occupancy(256, "sm_90"), Some(0.125));   // one block of 8 warps of 64
    /// let k = KernelResources { registers: 64, ..Default::default() };
    /// assert_eq!(k.occupancy(256, "sm_90"), Some(0.5));
    /// ```
    pub fn occupancy(&self, threads: u32, arch: &str) -> Option<f64> {
        let sm = limits(arch)?;
        let warps = threads.div_ceil(32).max(1);
        let blocks = self.blocks_per_sm(threads, arch)?;
        Some(f64::from(blocks * warps) / f64::from(sm.threads / 32))
    }

    /// How many thread blocks of `threads` threads fit on one SM of `arch` at once (see
    /// [`KernelResources::occupancy`]); `None` for an architecture not listed there.
    ///
    /// ```
    /// use reproject::gpu::resources::KernelResources;
    /// let k = KernelResources { registers: 85, ..Default::default() };
    /// assert_eq!(k.blocks_per_sm(256, "sm_90"), Some(2)); // 88 per thread as allocated
    /// // 32 KiB of shared memory a block, plus the 1 KiB reserved: 6 of 228 KiB.
    /// let k = KernelResources { registers: 96, shared_memory: 32768, ..Default::default() };
    /// assert_eq!(k.blocks_per_sm(32, "sm_90"), Some(6));
    /// ```
    pub fn blocks_per_sm(&self, threads: u32, arch: &str) -> Option<u32> {
        let sm = limits(arch)?;
        let warps = threads.div_ceil(32).max(1);
        let per_warp = (self.registers * 32).div_ceil(256) * 256;
        let by_registers = sm
            .registers
            .checked_div(per_warp * warps)
            .unwrap_or(sm.blocks);
        let by_shared = sm.shared_memory / (self.shared_memory + RESERVED_SHARED_MEMORY);
        let by_threads = sm.threads / (warps * 32);
        Some(by_registers.min(by_shared).min(by_threads).min(sm.blocks))
    }
}
