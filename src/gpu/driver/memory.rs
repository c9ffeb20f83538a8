//! Handles to memory and queues a driver hands out: device addresses (and what memory they
//! lie in), streams, and page-locked host buffers.

/// A device address (of an allocation, or inside one).
///
/// ```
/// use reproject::gpu::driver::DevicePtr;
/// assert_eq!(DevicePtr(4096).offset(8), DevicePtr(4104));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DevicePtr(pub u64);

impl DevicePtr {
    /// The address `bytes` further.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let base = sim.alloc(16)?;
    /// assert_eq!(base.offset(8).0, base.0 + 8);
    /// sim.upload_now(&[9; 8], base.offset(8))?; // the allocation's second half
    /// assert!(sim.upload_now(&[9; 8], base.offset(9)).is_err()); // a byte past its end
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn offset(self, bytes: usize) -> DevicePtr {
        DevicePtr(self.0 + bytes as u64)
    }
}

/// What memory a device address lies in ([`Driver::memory_at`]).
///
/// ```
/// use reproject::gpu::driver::{DevicePtr, MemoryAt};
/// let at = MemoryAt::Device { ordinal: Some(0), allocation: Some((DevicePtr(4096), 256)) };
/// assert_eq!(at.room_from(DevicePtr(4096 + 56)), Some(200)); // bytes left in the allocation
/// assert_eq!(MemoryAt::Unknown.room_from(DevicePtr(4096)), Some(0));
/// ```
///
/// [`Driver::memory_at`]: super::Driver::memory_at
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryAt {
    /// Memory of one device (`cuMemAlloc`, a CuPy array): the device's ordinal and the
    /// allocation the address lies in (start, bytes), each where the driver tells it.
    Device {
        /// The device's ordinal among the visible ones.
        ordinal: Option<usize>,
        /// The allocation's first address and size in bytes.
        allocation: Option<(DevicePtr, usize)>,
    },
    /// Memory every device can address: managed memory, or page-locked host memory mapped
    /// for the devices; the allocation where the driver tells it.
    Shared {
        /// The allocation's first address and size in bytes.
        allocation: Option<(DevicePtr, usize)>,
    },
    /// No memory the driver knows: ordinary host memory, memory given back, or no allocation.
    Unknown,
}

impl MemoryAt {
    /// The bytes from `ptr` to the end of its allocation: `Some(0)` for memory the driver
    /// does not know, `None` where it does not tell the allocation's extent.
    ///
    /// ```
    /// use reproject::gpu::driver::{DevicePtr, MemoryAt};
    /// let shared = MemoryAt::Shared { allocation: None };
    /// assert_eq!(shared.room_from(DevicePtr(64)), None); // no extent to check against
    /// ```
    pub fn room_from(&self, ptr: DevicePtr) -> Option<usize> {
        let allocation = match *self {
            MemoryAt::Device { allocation, .. } | MemoryAt::Shared { allocation } => allocation,
            MemoryAt::Unknown => return Some(0),
        };
        let (start, bytes) = allocation?;
        let end = start.0.saturating_add(bytes as u64);
        Some(if (start.0..end).contains(&ptr.0) {
            (end - ptr.0) as usize
        } else {
            0
        })
    }
}

/// A stream: operations queued on one stream run in order.
///
/// ```
/// use reproject::gpu::driver::Driver;
/// use reproject::gpu::sim::SimDriver;
/// let sim = SimDriver::new(Default::default());
/// let (stream, dev) = (sim.create_stream()?, sim.alloc(4)?);
/// let (mut up, down) = (sim.alloc_host(4)?, sim.alloc_host(4)?);
/// unsafe { up.as_mut_slice() }.copy_from_slice(b"WCS!");
/// // Queued after the upload on the same stream, the download sees its bytes.
/// unsafe { sim.upload(stream, &up, 0, dev, 4)?; sim.download(stream, dev, &down, 0, 4)? };
/// sim.synchronize(stream)?;
/// assert_eq!(unsafe { down.as_slice() }, b"WCS!");
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamId(pub u64);

/// Page-locked host memory allocated by a driver ([`Driver::alloc_host`]); freed with
/// [`Driver::free_host`].
///
/// ```
/// use reproject::gpu::driver::Driver;
/// use reproject::gpu::sim::{SimConfig, SimDriver};
/// let sim = SimDriver::new(SimConfig::default());
/// let mut buf = sim.alloc_host(16)?;
/// // SAFETY: no copy is queued on the buffer.
/// unsafe { buf.as_mut_slice() }.fill(7);
/// assert_eq!(unsafe { buf.as_slice() }[15], 7);
/// sim.free_host(buf);
/// # Ok::<(), reproject::gpu::driver::DriverFault>(())
/// ```
///
/// [`Driver::alloc_host`]: super::Driver::alloc_host
/// [`Driver::free_host`]: super::Driver::free_host
#[derive(Debug)]
pub struct HostBuffer {
    ptr: *mut u8,
    len: usize,
    /// Bytes allocated (`len` or more, for a buffer reused for a smaller request).
    capacity: usize,
}

// SAFETY: the buffer is plain memory owned by whoever holds the handle; the driver only
// reads or writes it through copies the holder queued.
unsafe impl Send for HostBuffer {}
unsafe impl Sync for HostBuffer {}

impl HostBuffer {
    /// A handle to `len` bytes at `ptr` (for driver implementations).
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes until the buffer is freed by
    /// the driver that made it.
    ///
    /// ```
    /// use reproject::gpu::driver::HostBuffer;
    /// let mut memory = vec![5u8; 32];
    /// // SAFETY: `memory` outlives the handle, and no driver is asked to free it.
    /// let buf = unsafe { HostBuffer::from_raw(memory.as_mut_ptr(), memory.len()) };
    /// assert_eq!((buf.len(), buf.capacity()), (32, 32));
    /// assert_eq!(unsafe { buf.as_slice() }, &[5u8; 32][..]);
    /// ```
    pub unsafe fn from_raw(ptr: *mut u8, len: usize) -> HostBuffer {
        HostBuffer {
            ptr,
            len,
            capacity: len,
        }
    }

    /// The same allocation seen as `len` bytes (at most its capacity).
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::{SimConfig, SimDriver};
    /// let sim = SimDriver::new(SimConfig::default());
    /// let buf = sim.alloc_host(64)?.with_len(16);
    /// assert_eq!((buf.len(), buf.capacity()), (16, 64));
    /// sim.free_host(buf);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn with_len(self, len: usize) -> HostBuffer {
        HostBuffer {
            len: len.min(self.capacity),
            ..self
        }
    }

    /// Bytes allocated.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let buf = sim.alloc_host(100)?;
    /// assert_eq!(buf.capacity(), 100);
    /// sim.free_host(buf);
    /// let again = sim.alloc_host(10)?; // the kept buffer, seen as 10 bytes
    /// assert_eq!((again.len(), again.capacity()), (10, 100));
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Size in bytes.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let buf = sim.alloc_host(24)?;
    /// assert_eq!(buf.len(), 24);
    /// assert_eq!(buf.with_len(1000).len(), 24); // at most its capacity
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no byte.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let buf = sim.alloc_host(16)?;
    /// assert!(!buf.is_empty());
    /// let buf = buf.with_len(0);
    /// assert!(buf.is_empty());
    /// sim.free_host(buf);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the first byte.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let buf = sim.alloc_host(16)?;
    /// let addr = buf.as_ptr();
    /// assert_eq!(unsafe { buf.as_slice() }.as_ptr(), addr);
    /// sim.free_host(buf);
    /// assert_eq!(sim.alloc_host(8)?.as_ptr(), addr); // the pool hands the same memory out again
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// The bytes.
    ///
    /// # Safety
    /// No copy into the buffer may be pending (synchronize the stream it was queued on).
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let (stream, dev, host) = (sim.create_stream()?, sim.alloc(4)?, sim.alloc_host(4)?);
    /// sim.upload_now(&[1, 2, 3, 4], dev)?;
    /// unsafe { sim.download(stream, dev, &host, 0, 4)? };
    /// sim.synchronize(stream)?;
    /// // SAFETY: the stream is synchronized: the copy is done.
    /// assert_eq!(unsafe { host.as_slice() }, &[1, 2, 3, 4]);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub unsafe fn as_slice(&self) -> &[u8] {
        // SAFETY: the caller's promises (# Safety above).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes, for writing.
    ///
    /// # Safety
    /// No copy from or into the buffer may be pending.
    ///
    /// ```
    /// use reproject::gpu::driver::Driver;
    /// use reproject::gpu::sim::SimDriver;
    /// let sim = SimDriver::new(Default::default());
    /// let mut buf = sim.alloc_host(8)?.with_len(4);
    /// // SAFETY: no copy is queued on the buffer.
    /// let bytes = unsafe { buf.as_mut_slice() };
    /// assert_eq!(bytes.len(), 4); // its length, not its capacity
    /// bytes.copy_from_slice(&[1, 2, 3, 4]);
    /// assert_eq!(unsafe { buf.as_slice() }, &[1, 2, 3, 4]);
    /// # Ok::<(), reproject::gpu::driver::DriverFault>(())
    /// ```
    pub unsafe fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the caller's promises (# Safety above).
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}
