//! Driver resources held for a scope: device memory and page-locked host memory, freed when
//! dropped, and a stream made for one queue of work.

use std::sync::Arc;

use crate::gpu::driver::{DevicePtr, Driver, DriverFault, HostBuffer, StreamId};

/// Device memory, freed when dropped.
pub(crate) struct DeviceAlloc {
    driver: Arc<dyn Driver>,
    pub(crate) ptr: DevicePtr,
    pub(crate) len: usize,
}

impl DeviceAlloc {
    /// `len` bytes of device memory on `driver`.
    pub(crate) fn new(
        driver: &Arc<dyn Driver>,
        len: usize,
    ) -> std::result::Result<Self, DriverFault> {
        let ptr = driver.alloc(len)?;
        Ok(DeviceAlloc {
            driver: driver.clone(),
            ptr,
            len,
        })
    }
}

impl Drop for DeviceAlloc {
    fn drop(&mut self) {
        self.driver.free(self.ptr);
    }
}

/// Page-locked host memory, freed when dropped.
pub(crate) struct HostAlloc {
    driver: Arc<dyn Driver>,
    buffer: Option<HostBuffer>,
}

impl HostAlloc {
    /// `len` bytes of page-locked memory from `driver`.
    pub(crate) fn new(
        driver: &Arc<dyn Driver>,
        len: usize,
    ) -> std::result::Result<Self, DriverFault> {
        Ok(HostAlloc {
            driver: driver.clone(),
            buffer: Some(driver.alloc_host(len)?),
        })
    }

    /// The buffer.
    pub(crate) fn buffer(&self) -> &HostBuffer {
        self.buffer.as_ref().expect("present until dropped")
    }

    /// The bytes, for writing.
    ///
    /// # Safety
    /// No copy from or into the buffer may be pending.
    pub(super) unsafe fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the caller's promises (# Safety above).
        unsafe {
            self.buffer
                .as_mut()
                .expect("present until dropped")
                .as_mut_slice()
        }
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        if let Some(b) = self.buffer.take() {
            self.driver.free_host(b);
        }
    }
}

/// Runs `queue` with a new stream of `driver`, then waits for the stream and destroys it
/// (after waiting, whatever failed).
pub(super) fn on_stream(
    driver: &Arc<dyn Driver>,
    queue: impl FnOnce(StreamId) -> std::result::Result<(), DriverFault>,
) -> std::result::Result<(), DriverFault> {
    let stream = driver.create_stream()?;
    let r = queue(stream).and_then(|()| driver.synchronize(stream));
    if r.is_err() {
        let _ = driver.synchronize(stream);
    }
    driver.destroy_stream(stream);
    r
}
