//! The spline prefilter on the device (orders 2-5): its pole constants, and the launches that
//! filter a plane in place.

use std::sync::Arc;

use super::f64_bytes;
use super::owned::{on_stream, DeviceAlloc};
use crate::engine::Plan;
use crate::gpu::driver::{
    DevicePtr, Driver, DriverFault, SplineLaunch, SplineOp, SplineSamples, StreamId,
};
use crate::interp::spline::{filter_gain, filter_poles, spline_pole_params};

/// The spline prefilter's pole constants on a device (orders ≥ 2): those of the columns
/// (lines of the plane's rows) then those of the rows (`spline_pole_params`), and the gain.
pub(super) struct SplinePoles {
    constants: DeviceAlloc,
    npoles: usize,
    gain: f64,
    /// The input plane (rows, columns).
    plane: (usize, usize),
}

impl SplinePoles {
    /// The constants of `plan`'s order and input plane, uploaded to `driver`; `None` for
    /// orders 0 and 1.
    pub(super) fn new(
        driver: &Arc<dyn Driver>,
        plan: &Plan,
    ) -> std::result::Result<Option<Self>, DriverFault> {
        let order = plan.options.order;
        let poles = filter_poles(order);
        if poles.is_empty() {
            return Ok(None);
        }
        let (ny, nx) = plan.plane_shape_in;
        let mut constants = spline_pole_params(order, ny);
        constants.extend(spline_pole_params(order, nx));
        let bytes = f64_bytes(&constants);
        let alloc = DeviceAlloc::new(driver, bytes.len())?;
        driver.upload_now(&bytes, alloc.ptr)?;
        Ok(Some(SplinePoles {
            constants: alloc,
            npoles: poles.len(),
            gain: filter_gain(poles),
            plane: (ny, nx),
        }))
    }

    /// Queues on `stream` the prefilter of the plane at `plane` in place: every column, then
    /// every row (scipy's order, the CPU's), skipping an axis whose lines have fewer than 2
    /// values (which the filter leaves as they are). With `samples`, the plane's values are
    /// those device samples: the column pass reads them itself where it can (4- and 8-byte
    /// samples, columns of at least 2), else the values kernel writes them into the plane first.
    fn queue(
        &self,
        driver: &Arc<dyn Driver>,
        stream: StreamId,
        plane: DevicePtr,
        samples: Option<SplineSamples>,
    ) -> std::result::Result<(), DriverFault> {
        let (ny, nx) = self.plane;
        if ny == 0 || nx == 0 {
            return Ok(());
        }
        let source = samples.filter(|s| ny >= 2 && s.filter_reads());
        if let (Some(s), None) = (samples, source) {
            let launch = SplineLaunch::new(plane, self.plane, SplineOp::Values(s))?;
            // SAFETY: the caller vouches for the samples; the plane holds ny × nx values.
            unsafe { driver.launch_spline(stream, &launch)? };
        }
        for (axis, n) in [(0u8, ny), (1u8, nx)] {
            if n < 2 {
                continue;
            }
            let op = SplineOp::Filter {
                axis,
                poles: self
                    .constants
                    .ptr
                    .offset(usize::from(axis) * self.npoles * 4 * 8),
                npoles: self.npoles as i32,
                gain: self.gain,
                source: source.filter(|_| axis == 0),
            };
            let launch = SplineLaunch::new(plane, self.plane, op)?;
            // SAFETY: the plane holds ny × nx values, the constants 4 × npoles per axis; the
            // caller vouches for the samples.
            unsafe { driver.launch_spline(stream, &launch)? };
        }
        Ok(())
    }

    /// Prefilters every plane of `planes` in place on a stream of its own, and waits for it;
    /// a plane with samples in `values` gets its values from those device samples.
    ///
    /// # Safety
    /// The samples `values` names must be on the device, each a whole plane.
    pub(super) unsafe fn run(
        &self,
        driver: &Arc<dyn Driver>,
        planes: &[DevicePtr],
        values: &[Option<SplineSamples>],
    ) -> std::result::Result<(), DriverFault> {
        on_stream(driver, |stream| {
            for (k, &plane) in planes.iter().enumerate() {
                self.queue(driver, stream, plane, values.get(k).copied().flatten())?;
            }
            Ok(())
        })
    }
}
