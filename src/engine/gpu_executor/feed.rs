//! The resident planes' upload in bands of rows: the first thread to need the planes uploads
//! them, and each launch waits only for the rows it reads.

use std::ops::Range;
use std::sync::Arc;
use std::sync::{Condvar, Mutex};

use super::input::{sent_of, Input};
use super::owned::{DeviceAlloc, HostAlloc};
use super::resident::{kernel_i32, Resident};
use super::sizing::host_copy_threads;
use super::spline::SplinePoles;
use super::staging::fill_rows_on;
use super::{CudaExecutor, Failure};
use crate::engine::blocks::Block;
use crate::engine::crew::Crew;
use crate::engine::gpu_times::Step;
use crate::engine::Plan;
use crate::gpu::driver::{DevicePtr, Driver, DriverFault, FaultKind, SplineSamples};

/// Fails the feed if the uploading thread unwinds (a panic), so that no block waits for rows
/// that will never come: they fall back to the CPU.
struct ReleaseWaiters<'f>(&'f Feed);

impl Drop for ReleaseWaiters<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.fail(Failure::Driver(DriverFault::new(
                "(upload)",
                FaultKind::Other,
                "the thread uploading the input planes stopped",
            )));
        }
    }
}

/// Where the banded upload of the resident planes stands.
#[derive(Default)]
struct FeedState {
    /// Whether a thread has taken the upload on.
    claimed: bool,
    /// Rows `0..ready` of every plane are on the device (their copies synchronized).
    ready: usize,
    /// Why the upload stopped, if it failed.
    failed: Option<Failure>,
}

/// The resident planes' upload in bands of rows, band by band across the planes, by the first
/// thread that needs the planes; a launch waits only for the rows its input window needs
/// ([`Feed::wait_for`]), so the first blocks compute while later bands cross the bus.
pub(super) struct Feed {
    /// Rows per band.
    band_rows: usize,
    state: Mutex<FeedState>,
    changed: Condvar,
}

impl Feed {
    pub(super) fn new(band_rows: usize) -> Feed {
        Feed {
            band_rows: band_rows.max(1),
            state: Mutex::new(FeedState::default()),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FeedState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the caller is the first to ask (and so uploads the planes).
    fn claim(&self) -> bool {
        !std::mem::replace(&mut self.lock().claimed, true)
    }

    /// Rows `0..rows` of every plane are on the device.
    fn publish(&self, rows: usize) {
        let mut st = self.lock();
        st.ready = st.ready.max(rows);
        self.changed.notify_all();
    }

    /// The upload stopped: every waiter gets `why`.
    fn fail(&self, why: Failure) {
        self.lock().failed.get_or_insert(why);
        self.changed.notify_all();
    }

    /// Waits until rows `0..rows` of every plane are on the device (or the upload failed).
    pub(super) fn wait_for(&self, rows: usize) -> std::result::Result<(), Failure> {
        let mut st = self.lock();
        loop {
            if st.ready >= rows {
                return Ok(());
            }
            if let Some(why) = &st.failed {
                return Err(why.clone());
            }
            st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// The input rows the launches of `block` read from resident planes: the window of the bounds
/// of its corners' input positions for a homography (see `CoordinateMap::corner_bounds`; a
/// row at least, so a block that sees no input waits for nothing), every row otherwise.
pub(super) fn resident_rows(plan: &Plan, block: &Block) -> Range<usize> {
    let ny = plan.plane_shape_in.0;
    match plan.coords.corner_bounds(block) {
        Some(b) => {
            let rows = plan.window_for(b).rows;
            if rows.is_empty() {
                0..ny.min(1)
            } else {
                rows
            }
        }
        None => 0..ny,
    }
}

impl CudaExecutor {
    /// Makes sure the resident planes of `resident` get uploaded: the first caller uploads
    /// them, band by band, before it returns (the others wait for rows as they need them).
    pub(super) fn feed(&self, driver: &Arc<dyn Driver>, plan: &Plan, resident: &Resident) {
        let (Some(planes), Some(feed)) = (&resident.planes, &resident.feed) else {
            return;
        };
        if feed.claim() {
            // Should this thread unwind, the blocks waiting for rows go to the CPU.
            let _released = ReleaseWaiters(feed);
            let spline = resident.spline.as_ref();
            if let Err(why) = self.upload_bands(driver, plan, planes, feed, spline) {
                feed.fail(why);
            }
        }
    }

    /// Uploads every plane into `planes` band by band (the band's rows of each plane in
    /// turn) through two lanes (a page-locked staging buffer and a stream each): a band is
    /// read on the host while the previous one crosses the bus, and the rows of a band are
    /// published ([`Feed::publish`]) once its copies are synchronized, so that no launch
    /// reads rows a copy still writes. With `spline` (orders ≥ 2) the rows are the values the
    /// prefilter starts from: once every row is up the planes are prefiltered in place, and
    /// only then is any row published.
    fn upload_bands(
        &self,
        driver: &Arc<dyn Driver>,
        plan: &Plan,
        planes: &[DeviceAlloc],
        feed: &Feed,
        spline: Option<&SplinePoles>,
    ) -> std::result::Result<(), Failure> {
        let (ny, nx) = plan.plane_shape_in;
        let inputs: Vec<Input> = (0..planes.len())
            .map(|p| sent_of(plan, p, &self.params.decoding))
            .collect();
        // Where each plane's rows go: the plane, or (spline orders' stored samples) a buffer
        // of samples the plane's values are made from once every row is up.
        let samples = inputs
            .iter()
            .map(|input| match (input, spline) {
                (Input::Raw(raw, t), Some(_)) => Ok(Some((
                    DeviceAlloc::new(driver, (ny * nx * input.elem()).max(8))?,
                    *t,
                    i32::from(raw.big_endian),
                ))),
                _ => Ok(None),
            })
            .collect::<std::result::Result<Vec<_>, DriverFault>>()?;
        let targets: Vec<DevicePtr> = planes
            .iter()
            .zip(&samples)
            .map(|(plane, s)| s.as_ref().map_or(plane.ptr, |(buffer, ..)| buffer.ptr))
            .collect();
        let row_bytes = inputs.iter().map(|i| nx * i.elem()).max().unwrap_or(8);
        let staging = (feed.band_rows.min(ny) * row_bytes).max(8);
        let mut buffers = [
            HostAlloc::new(driver, staging)?,
            HostAlloc::new(driver, staging)?,
        ];
        let first = driver.create_stream()?;
        let streams = match driver.create_stream() {
            Ok(second) => [first, second],
            Err(f) => {
                driver.destroy_stream(first);
                return Err(f.into());
            }
        };
        // The buffers outlive the streams' work, whatever fails. The staging is filled on a
        // crew of host threads spawned once for every band.
        let r = std::thread::scope(|scope| -> std::result::Result<(), Failure> {
            let crew = &Crew::spawn(scope, host_copy_threads());
            // Per lane, while its copy is pending: the rows published once it is done (the
            // band's end after its last plane, else none).
            let mut pending: [Option<usize>; 2] = [None, None];
            let finish = |pending: &mut [Option<usize>; 2], lane: usize| {
                if let Some(rows) = pending[lane].take() {
                    let t = std::time::Instant::now();
                    driver.synchronize(streams[lane])?;
                    self.times.add(Step::UploadWaits, t);
                    if spline.is_none() {
                        feed.publish(rows);
                    }
                }
                Ok::<(), DriverFault>(())
            };
            let pieces: Vec<(usize, usize)> = (0..ny)
                .step_by(feed.band_rows)
                .flat_map(|r0| (0..planes.len()).map(move |p| (r0, p)))
                .collect();
            for (k, &(r0, plane)) in pieces.iter().enumerate() {
                let lane = k % 2;
                // Its previous band must be on the device before the buffer is refilled.
                finish(&mut pending, lane)?;
                let r1 = (r0 + feed.band_rows).min(ny);
                let input = inputs[plane];
                let bytes = (r1 - r0) * nx * input.elem();
                // SAFETY: no copy from this buffer is pending (synchronized above, or none).
                let host = unsafe { buffers[lane].bytes_mut() };
                let t = std::time::Instant::now();
                fill_rows_on(crew, plan, plane, input, r0..r1, 0..nx, &mut host[..bytes])?;
                self.times.add(Step::Staging, t);
                let dst = targets[plane].offset(r0 * nx * input.elem());
                // SAFETY: the plane holds its rows; the buffer is not touched until its
                // stream is synchronized.
                unsafe { driver.upload(streams[lane], buffers[lane].buffer(), 0, dst, bytes)? };
                pending[lane] = Some(if plane + 1 == planes.len() { r1 } else { 0 });
            }
            // The older of the last two pieces first, so rows are published in order.
            let n = pieces.len();
            finish(&mut pending, n % 2)?;
            finish(&mut pending, (n + 1) % 2)?;
            if let Some(spline) = spline {
                let values_f32 = i32::from(plan.rounding.rounds_values());
                let pitch = i64::from(kernel_i32(nx)?);
                let ops: Vec<Option<SplineSamples>> = samples
                    .iter()
                    .map(|s| {
                        s.as_ref()
                            .map(|(buffer, input_type, big_endian)| SplineSamples {
                                input: buffer.ptr,
                                input_type: *input_type,
                                big_endian: *big_endian,
                                pitch,
                                values_f32,
                            })
                    })
                    .collect();
                let ptrs: Vec<DevicePtr> = planes.iter().map(|p| p.ptr).collect();
                // SAFETY: every row of the samples is on the device (synchronized above).
                self.times.time(Step::Prefilter, || unsafe {
                    spline.run(driver, &ptrs, &ops)
                })?;
                feed.publish(ny);
            }
            Ok(())
        });
        for stream in streams {
            if r.is_err() {
                let _ = driver.synchronize(stream);
            }
            driver.destroy_stream(stream);
        }
        r
    }
}
