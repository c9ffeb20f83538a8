//! A launch of the accumulate kernel `rp_accumulate`: one input's samples added into an
//! output block's accumulators on the device.

use super::block_launch::invalid_grid;
use super::DevicePtr;

/// What one launch of the accumulate kernel `rp_accumulate` does (see
/// `kernels/accumulate.cu`).
///
/// ```
/// use reproject::gpu::driver::AccumulateOp::*;
/// let codes: Vec<i32> = [Fill, Mean, Sum, First, Last, Min, Max].map(|op| op.code()).to_vec();
/// assert_eq!(codes, [0, 1, 2, 3, 4, 5, 6]); // RP_ACC_FILL ... RP_ACC_MAX
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccumulateOp {
    /// Every accumulator pixel of the block: data = the first constant, footprint = 0.
    Fill,
    /// data += v·w, footprint += w (a mean's sums).
    Mean,
    /// As `Mean` (a sum's).
    Sum,
    /// Where the footprint is 0: data = v, footprint = w.
    First,
    /// Where w > 0: data = v, footprint = w.
    Last,
    /// Where w > 0 and v < data: data = v, footprint = w.
    Min,
    /// Where w > 0 and v > data: data = v, footprint = w.
    Max,
}

impl AccumulateOp {
    /// The kernel's `op` code.
    ///
    /// ```
    /// use reproject::gpu::driver::AccumulateOp;
    /// assert_eq!(AccumulateOp::Fill.code(), 0);
    /// assert_eq!(AccumulateOp::Max.code(), 6);
    /// ```
    pub fn code(self) -> i32 {
        match self {
            AccumulateOp::Fill => 0,
            AccumulateOp::Mean => 1,
            AccumulateOp::Sum => 2,
            AccumulateOp::First => 3,
            AccumulateOp::Last => 4,
            AccumulateOp::Min => 5,
            AccumulateOp::Max => 6,
        }
    }
}

/// The arguments of one launch of the accumulate kernel `rp_accumulate`
/// (`kernels/accumulate.cu`): one input's samples over a part of an output block added into
/// the block's float64 accumulators, with its grid (one thread per pixel of the part).
///
/// ```
/// use reproject::gpu::driver::{AccumulateLaunch, AccumulateOp, DevicePtr};
/// // A 100 x 200 part of one input's samples, added into the sums of a 256 x 256 block.
/// let mean = AccumulateLaunch {
///     grid: (7, 13), threads: (32, 8), values: Some(DevicePtr(1 << 30)), weights: None,
///     op: AccumulateOp::Mean, correction: 0, constants: (0.0, 0.0, 0.0), planes: 1,
///     part: (100, 200), part_origin: (40, 30), in_block: (40, 30), block: (256, 256),
///     data: DevicePtr(4096), footprint: DevicePtr(1 << 20),
/// };
/// assert_eq!(mean.part_bytes(), 100 * 200 * 8);
/// assert_eq!(mean.invalid_configuration(), None);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct AccumulateLaunch {
    /// Thread blocks (x, y).
    pub grid: (u32, u32),
    /// Threads per block (x, y).
    pub threads: (u32, u32),
    /// The input's float64 samples over the part (planes × rows × columns; not read by
    /// [`AccumulateOp::Fill`]); `None` when it has none there (every sample NaN).
    pub values: Option<DevicePtr>,
    /// Its reprojected weights in the same layout, if it has weights.
    pub weights: Option<DevicePtr>,
    /// What the launch does.
    pub op: AccumulateOp,
    /// The background correction: 0 none, 1 the constant `constants.0`, 2 the plane
    /// `constants.0 + constants.1·x + constants.2·y`. `constants.0` is the fill value of
    /// [`AccumulateOp::Fill`].
    pub correction: i32,
    /// The correction's (or the fill's) constants.
    pub constants: (f64, f64, f64),
    /// Planes.
    pub planes: i32,
    /// The part (rows, columns).
    pub part: (i32, i32),
    /// The output pixel (row, column) of part element (0, 0).
    pub part_origin: (i32, i32),
    /// The block element (row, column) of part element (0, 0).
    pub in_block: (i32, i32),
    /// The block (rows, columns).
    pub block: (i32, i32),
    /// The block's value accumulator (planes × rows × columns).
    pub data: DevicePtr,
    /// The block's footprint accumulator.
    pub footprint: DevicePtr,
}

impl AccumulateLaunch {
    /// What CUDA refuses in this launch's configuration, as [`BlockLaunch::invalid_configuration`].
    ///
    /// ```
    /// use reproject::gpu::driver::{AccumulateLaunch, AccumulateOp, DevicePtr};
    /// let launch = AccumulateLaunch {
    ///     grid: (8, 32), threads: (32, 8), values: None, weights: None,
    ///     op: AccumulateOp::Fill, correction: 0, constants: (0.0, 0.0, 0.0), planes: 1,
    ///     part: (256, 256), part_origin: (0, 0), in_block: (0, 0), block: (256, 256),
    ///     data: DevicePtr(4096), footprint: DevicePtr(1 << 20),
    /// };
    /// assert_eq!(launch.invalid_configuration(), None);
    /// assert_eq!(launch.block_bytes(), 256 * 256 * 8);
    /// ```
    ///
    /// [`BlockLaunch::invalid_configuration`]: super::BlockLaunch::invalid_configuration
    pub fn invalid_configuration(&self) -> Option<String> {
        invalid_grid(self.grid, self.threads)
    }

    /// The bytes of each accumulator (the whole block, every plane).
    ///
    /// ```
    /// # use reproject::gpu::driver::{AccumulateLaunch, AccumulateOp, DevicePtr};
    /// # let fill = AccumulateLaunch {
    /// #     grid: (8, 32), threads: (32, 8), values: None, weights: None,
    /// #     op: AccumulateOp::Fill, correction: 0, constants: (0.0, 0.0, 0.0), planes: 1,
    /// #     part: (256, 256), part_origin: (0, 0), in_block: (0, 0), block: (256, 256),
    /// #     data: DevicePtr(4096), footprint: DevicePtr(1 << 20),
    /// # };
    /// // `fill`: a launch filling a 256 x 256 block.
    /// assert_eq!(fill.block_bytes(), 256 * 256 * 8);
    /// let cube = AccumulateLaunch { planes: 3, ..fill };
    /// assert_eq!(cube.block_bytes(), 3 * 256 * 256 * 8); // float64, every plane
    /// ```
    pub fn block_bytes(&self) -> usize {
        let n = |v: i32| usize::try_from(v).unwrap_or(0);
        n(self.planes) * n(self.block.0) * n(self.block.1) * 8
    }

    /// The bytes of samples (and of weights) the launch reads; 0 for [`AccumulateOp::Fill`].
    ///
    /// ```
    /// # use reproject::gpu::driver::{AccumulateLaunch, AccumulateOp, DevicePtr};
    /// # let fill = AccumulateLaunch {
    /// #     grid: (8, 32), threads: (32, 8), values: None, weights: None,
    /// #     op: AccumulateOp::Fill, correction: 0, constants: (0.0, 0.0, 0.0), planes: 1,
    /// #     part: (256, 256), part_origin: (0, 0), in_block: (0, 0), block: (256, 256),
    /// #     data: DevicePtr(4096), footprint: DevicePtr(1 << 20),
    /// # };
    /// // `fill`: a launch filling a 256 x 256 block.
    /// assert_eq!(fill.part_bytes(), 0); // a fill reads no samples
    /// let values = Some(DevicePtr(1 << 30));
    /// let mean = AccumulateLaunch { op: AccumulateOp::Mean, values, ..fill };
    /// assert_eq!(mean.part_bytes(), 256 * 256 * 8);
    /// ```
    pub fn part_bytes(&self) -> usize {
        if self.op == AccumulateOp::Fill {
            return 0;
        }
        let n = |v: i32| usize::try_from(v).unwrap_or(0);
        n(self.planes) * n(self.part.0) * n(self.part.1) * 8
    }
}
