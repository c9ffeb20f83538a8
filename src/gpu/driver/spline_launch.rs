//! The launches of the spline prefilter's kernels: the samples they read, what each does,
//! and their grids.

use super::block_launch::{input_elem, invalid_grid};
use super::{DevicePtr, DriverFault, DriverResult, FaultKind};

/// The samples of a device input plane as the spline prefilter reads them: no decoding (device
/// inputs are values), rounded to float32 where `values_f32` is set.
///
/// ```
/// use reproject::gpu::driver::{DevicePtr, SplineSamples};
/// // A float32 plane of 4 rows of 5 samples, 6 per row in memory.
/// let s = SplineSamples {
///     input: DevicePtr(1 << 20),
///     input_type: 0,
///     big_endian: 0,
///     pitch: 6,
///     values_f32: 0,
/// };
/// assert_eq!(s.bytes((4, 5)), (3 * 6 + 5) * 4);
/// assert!(s.filter_reads());
/// assert!(!SplineSamples { input_type: 3, ..s }.filter_reads()); // int16: by the values kernel
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplineSamples {
    /// The input's element (0, 0).
    pub input: DevicePtr,
    /// Input element type code (as [`BlockLaunch::input_type`]).
    ///
    /// [`BlockLaunch::input_type`]: super::BlockLaunch::input_type
    pub input_type: i32,
    /// Whether input samples are big-endian.
    pub big_endian: i32,
    /// Input elements per row.
    pub pitch: i64,
    /// Whether values are rounded to float32 (reproject's cast of integer input).
    pub values_f32: i32,
}

impl SplineSamples {
    /// The bytes from the plane's first sample to its last, for a plane of `plane` (rows,
    /// columns); 0 for an empty one or an unknown type.
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineSamples};
    /// let s = SplineSamples {
    ///     input: DevicePtr(4096), input_type: 3, big_endian: 1, pitch: 10, values_f32: 1,
    /// };
    /// assert_eq!(s.bytes((2, 8)), (10 + 8) * 2); // int16: a row of 10, then 8 samples
    /// assert_eq!(s.bytes((0, 8)), 0);
    /// assert_eq!(SplineSamples { input_type: 9, ..s }.bytes((2, 8)), 0); // unknown type
    /// ```
    pub fn bytes(&self, plane: (usize, usize)) -> usize {
        let (ny, nx) = plane;
        if ny == 0 || nx == 0 {
            return 0;
        }
        let pitch = usize::try_from(self.pitch).unwrap_or(0);
        ((ny - 1) * pitch + nx) * input_elem(self.input_type)
    }

    /// Whether the filter's column pass reads these samples itself ([`SplineOp::Filter`]'s
    /// `source`): 4- and 8-byte types (float32, float64, int32, int64), which `cp.async`
    /// copies whole. The others go through [`SplineOp::Values`] first.
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineSamples};
    /// let s = SplineSamples {
    ///     input: DevicePtr(4096), input_type: 3, big_endian: 1, pitch: 10, values_f32: 1,
    /// };
    /// let read = |t| SplineSamples { input_type: t, ..s }.filter_reads();
    /// assert_eq!((0..6).filter(|&t| read(t)).collect::<Vec<i32>>(), [0, 1, 4, 5]);
    /// ```
    pub fn filter_reads(&self) -> bool {
        matches!(self.input_type, 0 | 1 | 4 | 5)
    }
}

/// What one launch of the spline prefilter's kernels does (`kernels/spline_values.cu`,
/// `kernels/spline.cu`) to a plane of float64 values.
///
/// ```
/// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp, SplineSamples};
/// // The values of a 4 x 5 float32 input (5 elements per row), not rounded.
/// let s = SplineSamples {
///     input: DevicePtr(1 << 20),
///     input_type: 0,
///     big_endian: 0,
///     pitch: 5,
///     values_f32: 0,
/// };
/// let launch = SplineLaunch::new(DevicePtr(4096), (4, 5), SplineOp::Values(s))?;
/// assert_eq!(launch.reads(), (DevicePtr(1 << 20), 4 * 5 * 4));
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SplineOp {
    /// `rp_spline_values`: writes the plane from a device input's samples.
    Values(SplineSamples),
    /// `rp_spline_filter`: filters every line along `axis` (0: the columns, 1: the rows) in
    /// place, with the pole constants of that axis (`4 × npoles` doubles, see
    /// `spline_pole_params` in `src/interp/spline.rs`) and the filter's gain; with a `source`,
    /// the lines' values are read from those samples (4- and 8-byte types,
    /// [`SplineSamples::filter_reads`]) and the plane is only written, so no values launch
    /// precedes it.
    Filter {
        /// 0 (columns) or 1 (rows).
        axis: u8,
        /// The pole constants.
        poles: DevicePtr,
        /// Poles (1 or 2).
        npoles: i32,
        /// The filter's gain.
        gain: f64,
        /// The samples the values are read from, if not the plane's.
        source: Option<SplineSamples>,
    },
}

/// The arguments of one launch of the spline prefilter's kernels on a row-major plane of
/// float64 values (`data`, `plane.0 × plane.1`), with its one-dimensional grid: one thread per
/// pixel ([`SplineOp::Values`]) or per line ([`SplineOp::Filter`]).
///
/// ```
/// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp};
/// let filter = SplineOp::Filter {
///     axis: 0,
///     poles: DevicePtr(256),
///     npoles: 1,
///     gain: 6.0,
///     source: None,
/// };
/// let launch = SplineLaunch::new(DevicePtr(4096), (100, 300), filter)?;
/// assert_eq!(launch.filter_lines(), Some((300, 100, 1, 300))); // 300 columns of 100
/// assert_eq!(launch.data_bytes(), 100 * 300 * 8);
/// assert_eq!(launch.invalid_configuration(), None);
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SplineLaunch {
    /// Thread blocks (one-dimensional).
    pub grid: u32,
    /// Threads per block.
    pub threads: u32,
    /// The plane of values (read and written in place; written by [`SplineOp::Values`]).
    pub data: DevicePtr,
    /// The plane (rows, columns).
    pub plane: (i32, i32),
    /// What the launch does.
    pub op: SplineOp,
}

/// Threads per block of the spline values launches (one thread per pixel).
const SPLINE_THREADS: u32 = 128;

/// Threads per block of the spline filter launches (one thread per line): a plane has few lines
/// (16384 fill only 4 warps of each of an H100's 132 SMs), so warp-sized blocks spread them over
/// every SM (4096 lines in blocks of 128 would leave 100 SMs idle). The kernel's shared ring has
/// a lane for each (`RP_RING_LANES` of `kernels/spline.cu`).
const FILTER_THREADS: u32 = 32;

impl SplineLaunch {
    /// The launch of `op` on the `plane` (rows, columns) of values at `data`, with a grid
    /// covering its threads. Errors: a plane whose sizes exceed the kernels' 32-bit indices,
    /// or a grid too large (as `cuLaunchKernel` faults).
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp};
    /// let poles = DevicePtr(256);
    /// let rows = SplineOp::Filter { axis: 1, poles, npoles: 1, gain: 6.0, source: None };
    /// let launch = SplineLaunch::new(DevicePtr(4096), (100, 300), rows)?;
    /// assert_eq!((launch.grid, launch.threads), (4, 32)); // a thread per row: 100 rows
    /// assert!(SplineLaunch::new(DevicePtr(4096), (1 << 31, 1), rows).is_err()); // 32-bit indices
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn new(data: DevicePtr, plane: (usize, usize), op: SplineOp) -> DriverResult<SplineLaunch> {
        let fault = |what: String| DriverFault::new("cuLaunchKernel", FaultKind::Other, what);
        let int = |v: usize| {
            i32::try_from(v).map_err(|_| fault(format!("{v} exceeds the kernels' 32-bit indices")))
        };
        let plane32 = (int(plane.0)?, int(plane.1)?);
        if let SplineOp::Filter {
            source: Some(s), ..
        } = op
            && !s.filter_reads()
        {
            return Err(fault(format!(
                "the filter reads 4- and 8-byte samples, not input type {}",
                s.input_type
            )));
        }
        let threads = match op {
            SplineOp::Values { .. } => plane.0 * plane.1,
            SplineOp::Filter { axis: 0, .. } => plane.1,
            SplineOp::Filter { .. } => plane.0,
        };
        let per_block = match op {
            SplineOp::Values { .. } => SPLINE_THREADS,
            SplineOp::Filter { .. } => FILTER_THREADS,
        };
        let grid = u32::try_from(threads.div_ceil(per_block as usize).max(1))
            .map_err(|_| fault(format!("a grid of {threads} threads is too large")))?;
        Ok(SplineLaunch {
            grid,
            threads: per_block,
            data,
            plane: plane32,
            op,
        })
    }

    /// What CUDA refuses in this launch's configuration, as [`BlockLaunch::invalid_configuration`].
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp};
    /// let op = SplineOp::Filter {
    ///     axis: 0,
    ///     poles: DevicePtr(256),
    ///     npoles: 1,
    ///     gain: 6.0,
    ///     source: None,
    /// };
    /// let mut launch = SplineLaunch::new(DevicePtr(4096), (8, 8), op)?;
    /// assert_eq!(launch.invalid_configuration(), None);
    /// launch.threads = 2048;
    /// assert!(launch.invalid_configuration().is_some());
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    ///
    /// [`BlockLaunch::invalid_configuration`]: super::BlockLaunch::invalid_configuration
    pub fn invalid_configuration(&self) -> Option<String> {
        invalid_grid((self.grid, 1), (self.threads, 1))
    }

    /// `rp_spline_filter`'s line arguments of a [`SplineOp::Filter`] launch: (lines, line
    /// length, elements between line starts, elements between a line's elements); `None` for
    /// [`SplineOp::Values`].
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp, SplineSamples};
    /// let poles = DevicePtr(256);
    /// let columns = SplineOp::Filter { axis: 0, poles, npoles: 1, gain: 6.0, source: None };
    /// let launch = SplineLaunch::new(DevicePtr(4096), (3, 7), columns)?;
    /// assert_eq!(launch.filter_lines(), Some((7, 3, 1, 7))); // 7 columns of 3, a row apart
    /// let s = SplineSamples {
    ///     input: poles, input_type: 1, big_endian: 0, pitch: 7, values_f32: 0,
    /// };
    /// let values = SplineLaunch::new(DevicePtr(4096), (3, 7), SplineOp::Values(s))?;
    /// assert_eq!(values.filter_lines(), None);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn filter_lines(&self) -> Option<(i64, i32, i64, i64)> {
        let (ny, nx) = self.plane;
        match self.op {
            SplineOp::Values { .. } => None,
            SplineOp::Filter { axis: 0, .. } => Some((i64::from(nx), ny, 1, i64::from(nx))),
            SplineOp::Filter { .. } => Some((i64::from(ny), nx, i64::from(nx), 1)),
        }
    }

    /// The bytes of the plane of values (read and written).
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp, SplineSamples};
    /// let s = SplineSamples {
    ///     input: DevicePtr(1 << 20), input_type: 0, big_endian: 0, pitch: 7, values_f32: 0,
    /// };
    /// let launch = SplineLaunch::new(DevicePtr(4096), (3, 7), SplineOp::Values(s))?;
    /// assert_eq!(launch.data_bytes(), 3 * 7 * 8); // float64 values, from float32 samples
    /// assert_eq!(launch.reads().1, 3 * 7 * 4);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn data_bytes(&self) -> usize {
        let (ny, nx) = self.plane_size();
        ny * nx * 8
    }

    /// The other device memory the launch reads: (address, bytes) of the input samples
    /// ([`SplineOp::Values`]) or of the pole constants ([`SplineOp::Filter`]; its source's
    /// samples are [`SplineLaunch::source_reads`]).
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp};
    /// let filter = SplineOp::Filter {
    ///     axis: 1,
    ///     poles: DevicePtr(256),
    ///     npoles: 2,
    ///     gain: 1.0,
    ///     source: None,
    /// };
    /// let launch = SplineLaunch::new(DevicePtr(4096), (3, 7), filter)?;
    /// assert_eq!(launch.reads(), (DevicePtr(256), 2 * 4 * 8));
    /// assert_eq!(launch.filter_lines(), Some((3, 7, 7, 1))); // 3 rows of 7
    /// assert_eq!(launch.source_reads(), None);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn reads(&self) -> (DevicePtr, usize) {
        match self.op {
            SplineOp::Values(s) => (s.input, s.bytes(self.plane_size())),
            SplineOp::Filter { poles, npoles, .. } => {
                (poles, usize::try_from(npoles).unwrap_or(0) * 4 * 8)
            }
        }
    }

    /// The samples a [`SplineOp::Filter`] launch with a source reads its values from:
    /// (address, bytes), and `rp_spline_filter_from`'s steps of the source's lines (samples
    /// between line starts, between a line's elements).
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp, SplineSamples};
    /// let s = SplineSamples {
    ///     input: DevicePtr(1 << 20),
    ///     input_type: 1,
    ///     big_endian: 0,
    ///     pitch: 9,
    ///     values_f32: 0,
    /// };
    /// let columns = SplineOp::Filter {
    ///     axis: 0,
    ///     poles: DevicePtr(256),
    ///     npoles: 1,
    ///     gain: 6.0,
    ///     source: Some(s),
    /// };
    /// let launch = SplineLaunch::new(DevicePtr(4096), (3, 7), columns)?;
    /// assert_eq!(launch.source_reads(), Some(((DevicePtr(1 << 20), (2 * 9 + 7) * 8), (1, 9))));
    /// // int16 samples go through the values kernel: a filter reading them is refused.
    /// let int16 = SplineSamples { input_type: 3, ..s };
    /// let refused = SplineOp::Filter {
    ///     axis: 0,
    ///     poles: DevicePtr(256),
    ///     npoles: 1,
    ///     gain: 6.0,
    ///     source: Some(int16),
    /// };
    /// assert!(SplineLaunch::new(DevicePtr(4096), (3, 7), refused).is_err());
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn source_reads(&self) -> Option<((DevicePtr, usize), (i64, i64))> {
        match self.op {
            SplineOp::Filter {
                axis,
                source: Some(s),
                ..
            } => {
                let steps = if axis == 0 {
                    (1, s.pitch)
                } else {
                    (s.pitch, 1)
                };
                Some(((s.input, s.bytes(self.plane_size())), steps))
            }
            _ => None,
        }
    }

    /// The bytes the launch reads and writes in device memory, as its kernel moves them: the
    /// values kernel reads the samples and writes the plane; each pole of the filter reads its
    /// values twice (the source's samples for the first pole of a launch with a source) and
    /// writes the plane once, plus its checkpoints (1/32 written, read again). The initial
    /// sum's reads, which stop early on long lines, are left out.
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, SplineLaunch, SplineOp};
    /// use reproject::gpu::driver::SplineSamples;
    /// let plane = 64 * 64 * 8;
    /// let rows = SplineOp::Filter {
    ///     axis: 1,
    ///     poles: DevicePtr(256),
    ///     npoles: 1,
    ///     gain: 6.0,
    ///     source: None,
    /// };
    /// let launch = SplineLaunch::new(DevicePtr(4096), (64, 64), rows)?;
    /// assert_eq!(launch.traffic_bytes(), 3 * plane + 2 * plane / 32);
    /// // The columns from float32 samples read half the bytes of float64 values, twice.
    /// let f32s = SplineSamples {
    ///     input: DevicePtr(1 << 20),
    ///     input_type: 0,
    ///     big_endian: 0,
    ///     pitch: 64,
    ///     values_f32: 0,
    /// };
    /// let columns = SplineOp::Filter {
    ///     axis: 0,
    ///     poles: DevicePtr(256),
    ///     npoles: 1,
    ///     gain: 6.0,
    ///     source: Some(f32s),
    /// };
    /// let launch = SplineLaunch::new(DevicePtr(4096), (64, 64), columns)?;
    /// assert_eq!(launch.traffic_bytes(), 2 * plane / 2 + plane + 2 * plane / 32);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn traffic_bytes(&self) -> usize {
        let plane = self.data_bytes();
        match self.op {
            SplineOp::Values(s) => s.bytes(self.plane_size()) + plane,
            SplineOp::Filter { npoles, source, .. } => {
                let poles = usize::try_from(npoles).unwrap_or(0);
                let first = source.map_or(plane, |s| s.bytes(self.plane_size()));
                let reads = if poles == 0 {
                    0
                } else {
                    2 * first + 2 * (poles - 1) * plane
                };
                reads + poles * (plane + 2 * plane / 32)
            }
        }
    }

    /// The plane's (rows, columns) as sizes.
    fn plane_size(&self) -> (usize, usize) {
        let n = |v: i32| usize::try_from(v).unwrap_or(0);
        (n(self.plane.0), n(self.plane.1))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_filter_launches_as_many_threads_as_its_ring_has_lanes() {
        let lanes = format!("#define RP_RING_LANES {}", super::FILTER_THREADS);
        assert!(crate::gpu::spline_source().contains(&lanes));
    }
}
