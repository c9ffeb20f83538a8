//! Device-resident jobs: the input and the outputs already in GPU memory (CuPy arrays, dask
//! chunks of them), the caller's addresses checked before any launch.

use std::sync::Arc;

use super::input::input_type;
use super::resident::{KernelInput, Resident};
use super::{gpu_error, CudaExecutor};
use crate::engine::blocks::Block;
use crate::engine::kernel_params::InputDecoding;
use crate::engine::Plan;
use crate::error::{Error, Result};
use crate::gpu::driver::{DevicePtr, Driver, DriverFault, FaultKind, MemoryAt};

impl Plan<'_> {
    /// The plan's executor for device-resident jobs: made once (the parameters and, for
    /// orders ≥ 2, the prefilter's constants uploaded to the first device), reused by every
    /// call.
    fn device_resident(&self) -> Result<&(CudaExecutor, Resident)> {
        let made = self.device_resident.get_or_init(|| {
            // The device the options name (the first of them for `cuda:all`).
            let mut drivers = crate::gpu::drivers(self.options.devices)?;
            drivers.truncate(1);
            // The caller's device inputs are values: nothing to decode.
            let executor = CudaExecutor::with_decoding(self, drivers, InputDecoding::default())?;
            let driver = executor.devices[0].driver.clone();
            // Nothing of the input goes up: every order reads the caller's device input
            // (orders >= 2 through coefficients made from it on the device).
            let resident = executor
                .make_resident(&driver, self, false)
                .map_err(|f| gpu_error("(device-resident job)", &f))?;
            Ok(Arc::new((executor, resident)))
        });
        match made {
            Ok(made) => Ok(made),
            Err(e) => Err(e.clone()),
        }
    }

    /// Makes the device-resident state now ([`Plan::compute_block_on_device`] makes it on
    /// first use otherwise): the GPU opened, the kernels compiled, the parameters uploaded. A
    /// GPU that cannot do the plan fails here. (For orders ≥ 2 the spline coefficients are
    /// made on the device from the device input, at the first block.)
    ///
    /// Errors: [`Error::GpuUnavailable`] without a usable GPU or for a job the kernels do not
    /// cover; [`Error::Gpu`] when the GPU fails.
    ///
    /// ```
    /// # unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") }; // SAFETY: no other thread yet
    /// # use ndarray::Array2;
    /// # use reproject::engine::{Backend, Options, Plan};
    /// # use reproject::io::ArraySource;
    /// # use reproject::wcs::Wcs;
    /// let wcs = Wcs::from_header_str("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 0\n\
    ///                                 CRVAL2 = 0\nCDELT1 = -0.01\nCDELT2 = 0.01\n")?;
    /// let image = Array2::<f32>::zeros((64, 64));
    /// let source = ArraySource::new(image.view().into_dyn())?;
    /// let options = Options { backend: Backend::Cuda, ..Options::default() };
    /// let plan = Plan::new(&source, &wcs, &wcs, &[64, 64], &options)?;
    /// let gpu = reproject::gpu::simulated_device(0).unwrap();
    /// let in_use = gpu.stats().device_bytes_in_use;
    /// plan.prepare_on_device()?;
    /// assert!(gpu.stats().device_bytes_in_use > in_use); // the parameters are on the device
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn prepare_on_device(&self) -> Result<()> {
        self.device_resident().map(|_| ())
    }

    /// Computes the whole output on the GPU with the input and the outputs in GPU memory
    /// (device-resident: no host copies of the input or outputs):
    /// [`Plan::compute_block_on_device`] for one block covering the output plane. `data` and
    /// `footprint` are device addresses of the full output (planes × rows × columns, C order)
    /// of float64 (`out_f64`) or float32.
    ///
    /// # Safety
    /// As for [`Plan::compute_block_on_device`].
    ///
    /// ```
    /// # unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") }; // SAFETY: no other thread yet
    /// # use ndarray::{Array2, ArrayD};
    /// # use reproject::engine::{Backend, Options, Plan};
    /// # use reproject::gpu::{DeviceBuffer, DeviceImage};
    /// # use reproject::io::{ArraySource, SampleType};
    /// # use reproject::wcs::Wcs;
    /// # let h = |cdelt: f64| format!("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\n\
    /// #     CRPIX1 = 32.5\nCRPIX2 = 32.5\nCRVAL1 = 10\nCRVAL2 = 20\n\
    /// #     CDELT1 = -{cdelt}\nCDELT2 = {cdelt}\n");
    /// # let wcs_in = Wcs::from_header_str(&h(0.01))?;
    /// # let wcs_out = Wcs::from_header_str(&h(0.005))?; // a zoom on the input's centre
    /// # let image = Array2::from_shape_fn((64, 64), |(y, x)| (y * x) as f32);
    /// # let source = ArraySource::new(image.view().into_dyn())?;
    /// # let options = Options { backend: Backend::Cpu, ..Options::default() };
    /// # let bytes_of = |a: &ArrayD<f64>| -> Vec<u8> {
    /// #     a.iter().flat_map(|v| v.to_ne_bytes()).collect()
    /// # };
    /// let plan = Plan::new(&source, &wcs_in, &wcs_out, &[64, 64], &options)?;
    /// let bytes: Vec<u8> = image.iter().flat_map(|v| v.to_ne_bytes()).collect();
    /// let input = DeviceBuffer::from_host(&bytes)?;
    /// let image = DeviceImage { ptr: input.device_ptr(), sample: SampleType::F32,
    ///                           big_endian: false, pitch: 64 };
    /// let data = DeviceBuffer::zeros(64 * 64 * 8)?; // float64 values
    /// let footprint = DeviceBuffer::zeros(64 * 64 * 8)?;
    /// unsafe { plan.compute_on_device(&image, data.device_ptr(), footprint.device_ptr(), true)? };
    /// # let mut cpu = ArrayD::<f64>::zeros(vec![64, 64]);
    /// # let mut cpu_footprint = cpu.clone();
    /// plan.compute_into(cpu.view_mut(), cpu_footprint.view_mut())?; // the same plan on the CPU
    /// # assert!(cpu_footprint.iter().all(|&f| f == 1.0)); // every pixel covered: no NaN
    /// assert_eq!(data.to_host()?, bytes_of(&cpu)); // the CPU's bits
    /// assert_eq!(footprint.to_host()?, bytes_of(&cpu_footprint));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub unsafe fn compute_on_device(
        &self,
        input: &crate::gpu::DeviceImage,
        data: u64,
        footprint: u64,
        out_f64: bool,
    ) -> Result<()> {
        let (ny, nx) = self.plane_shape_out();
        let whole = Block {
            rows: 0..ny,
            cols: 0..nx,
        };
        // SAFETY: the caller's promises (# Safety above), for the whole output.
        unsafe { self.compute_block_on_device(&whole, input, data, footprint, out_f64) }
    }

    /// Computes one block on the GPU with the input and the block's outputs in GPU memory
    /// (e.g. one chunk of a dask array of CuPy arrays). The plan's source describes the input
    /// (shape, sample type; its pixels are not read); `input` holds the pixels on the device.
    /// For orders ≥ 2 the first call makes the spline coefficients of every input plane from
    /// `input` on the device (its values as the CPU reads them, then the prefilter, so they
    /// are the CPU's bits) and later calls reuse them: `input` must hold the same pixels at
    /// every call of a plan. No byte of the input crosses to the host. `data` and `footprint` are
    /// device addresses of the block's outputs (planes × block rows × block columns, C order)
    /// of float64 (`out_f64`) or float32.
    ///
    /// Errors: [`Error::GpuUnavailable`] without a usable GPU or for a job the kernels do not
    /// cover; [`Error::Gpu`] when the GPU fails; [`Error::InvalidArgument`], before anything
    /// runs, for a pitch the kernels cannot read, an address that is null or not a multiple
    /// of its elements' size, or an address the driver says the kernels cannot reach: not
    /// GPU memory it knows (host memory, memory freed), another GPU's memory, or an
    /// allocation that ends before the job's last byte (the GPU would fault on each, and its
    /// context with the caller's work be lost, or write past the caller's array).
    ///
    /// # Safety
    /// `input`, `data` and `footprint` must be valid memory of the primary context of the
    /// device the plan's [`Options::devices`](crate::engine::Options::devices) names (the
    /// first of them for all devices; the simulator's under `REPROJECT_RS_CUDA_SIM`), of at
    /// least the sizes described, not written by anything else until this returns. (The checks
    /// above catch the usual mistakes where the driver answers; they cannot see memory that
    /// another stream still writes, nor one allocation's bytes the caller meant for another
    /// array.)
    ///
    /// ```
    /// # unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") }; // SAFETY: no other thread yet
    /// # use ndarray::{Array2, Array3};
    /// # use reproject::engine::blocks::Block;
    /// # use reproject::engine::{Backend, Options, Plan};
    /// # use reproject::gpu::{DeviceBuffer, DeviceImage};
    /// # use reproject::io::{ArraySource, SampleType};
    /// # use reproject::wcs::Wcs;
    /// # let h = |cdelt: f64| format!("CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\n\
    /// #     CRPIX1 = 32.5\nCRPIX2 = 32.5\nCRVAL1 = 10\nCRVAL2 = 20\n\
    /// #     CDELT1 = -{cdelt}\nCDELT2 = {cdelt}\n");
    /// # let wcs_in = Wcs::from_header_str(&h(0.01))?;
    /// # let wcs_out = Wcs::from_header_str(&h(0.005))?; // a zoom on the input's centre
    /// # let image = Array2::from_shape_fn((64, 64), |(y, x)| (y * x) as f32);
    /// # let source = ArraySource::new(image.view().into_dyn())?;
    /// # let options = Options { backend: Backend::Cpu, ..Options::default() };
    /// # let bytes_of = |a: &Array3<f32>| -> Vec<u8> {
    /// #     a.iter().flat_map(|v| v.to_ne_bytes()).collect()
    /// # };
    /// let plan = Plan::new(&source, &wcs_in, &wcs_out, &[64, 64], &options)?;
    /// let bytes: Vec<u8> = image.iter().flat_map(|v| v.to_ne_bytes()).collect();
    /// let input = DeviceBuffer::from_host(&bytes)?;
    /// let image = DeviceImage { ptr: input.device_ptr(), sample: SampleType::F32,
    ///                           big_endian: false, pitch: 64 };
    /// let block = Block { rows: 32..64, cols: 0..16 };
    /// let data = DeviceBuffer::zeros(32 * 16 * 4)?; // float32 values
    /// let footprint = DeviceBuffer::zeros(32 * 16 * 4)?;
    /// let (d, f) = (data.device_ptr(), footprint.device_ptr());
    /// unsafe { plan.compute_block_on_device(&block, &image, d, f, false)? };
    /// # let mut cpu = Array3::<f32>::zeros((1, 32, 16)); // planes × block rows × block columns
    /// # let mut cpu_footprint = cpu.clone();
    /// plan.compute_block(&block, cpu.view_mut(), cpu_footprint.view_mut())?; // on the CPU
    /// # assert!(cpu_footprint.iter().all(|&f| f == 1.0)); // every pixel covered: no NaN
    /// assert_eq!(data.to_host()?, bytes_of(&cpu)); // the CPU's bits
    /// assert_eq!(footprint.to_host()?, bytes_of(&cpu_footprint));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub unsafe fn compute_block_on_device(
        &self,
        block: &Block,
        input: &crate::gpu::DeviceImage,
        data: u64,
        footprint: u64,
        out_f64: bool,
    ) -> Result<()> {
        let (in_ny, in_nx) = self.plane_shape_in;
        if input.pitch < in_nx {
            return Err(Error::InvalidArgument(format!(
                "device input pitch {} is narrower than the input's {in_nx} columns",
                input.pitch
            )));
        }
        if i32::try_from(input.pitch).is_err() {
            return Err(Error::InvalidArgument(format!(
                "device input pitch {} exceeds the kernels' {} elements",
                input.pitch,
                i32::MAX
            )));
        }
        self.check_block(block, None)?;
        if block.is_empty() {
            return Ok(());
        }
        let out_elem = if out_f64 { 8 } else { 4 };
        let elem = crate::io::sample_size(input.sample);
        check_device_addresses(&[
            ("input", input.ptr, elem),
            ("data output", data, out_elem),
            ("footprint output", footprint, out_elem),
        ])?;
        let Some(input_type) = input_type(input.sample) else {
            return Err(Error::GpuUnavailable(format!(
                "device inputs of {:?} samples are not supported",
                input.sample
            )));
        };
        let (executor, resident) = self.device_resident()?;
        let driver = executor.devices[0].driver.clone();
        let (blk_ny, blk_nx) = (block.rows.len(), block.cols.len());
        // The bytes the kernels reach from each address: every plane's rows at the pitch (the
        // last row to its last column), and the block's outputs.
        let input_bytes = (self.planes * in_ny)
            .saturating_sub(1)
            .saturating_mul(input.pitch)
            .saturating_add(in_nx)
            .saturating_mul(elem);
        let out_bytes = self.planes * blk_ny * blk_nx * out_elem;
        for (what, address, bytes) in [
            ("input", input.ptr, input_bytes),
            ("data output", data, out_bytes),
            ("footprint output", footprint, out_bytes),
        ] {
            check_device_memory(driver.as_ref(), what, DevicePtr(address), bytes)?;
        }
        let coefficients = resident
            .coefficients_from_device(&driver, self, input, input_type)
            .map_err(|f| gpu_error("(device-resident job: the spline prefilter)", &f))?;
        let stream = driver
            .create_stream()
            .map_err(|f| gpu_error("(device-resident job)", &f))?;
        let launched = || -> std::result::Result<(), DriverFault> {
            for plane in 0..self.planes {
                // Orders >= 2 sample the coefficients made on the device.
                let (ptr, (t, big), pitch) = match &coefficients {
                    Some(planes) => (planes[plane], (1, 0), in_nx),
                    None => (
                        DevicePtr(input.ptr).offset(plane * in_ny * input.pitch * elem),
                        (input_type, i32::from(input.big_endian)),
                        input.pitch,
                    ),
                };
                let offset = plane * blk_ny * blk_nx * out_elem;
                let source = KernelInput {
                    ptr,
                    input_type: t,
                    big_endian: big,
                    pitch,
                    window: (0, 0, in_ny, in_nx),
                };
                let outputs = (
                    DevicePtr(data).offset(offset),
                    DevicePtr(footprint).offset(offset),
                );
                for launch in resident.launches(&driver, self, block, &source, outputs, out_f64)? {
                    // SAFETY: the caller vouches for the device memory (see the function's
                    // safety section); the parameters and coefficients are the plan's.
                    unsafe { driver.launch(stream, &launch)? };
                }
            }
            driver.synchronize(stream)
        };
        let r = launched().map_err(|f| {
            let at = format!("rows {:?}, columns {:?}", block.rows, block.cols);
            gpu_error(&at, &f)
        });
        if r.is_err() {
            let _ = driver.synchronize(stream);
        }
        driver.destroy_stream(stream);
        r
    }
}

/// Refuses device addresses a kernel cannot read or write: null, or not a multiple of the
/// size of their elements (`(what, address, element bytes)`). The GPU would fault on either,
/// and its faults (illegal or misaligned address) leave the context, the caller's CuPy work
/// included, unusable for the rest of the process.
fn check_device_addresses(addresses: &[(&str, u64, usize)]) -> Result<()> {
    for &(what, address, size) in addresses {
        if address == 0 {
            return Err(Error::InvalidArgument(format!(
                "the device {what} address is null"
            )));
        }
        if address % size as u64 != 0 {
            return Err(Error::InvalidArgument(format!(
                "the device {what} address {address:#x} is not a multiple of its {size}-byte \
                 elements"
            )));
        }
    }
    Ok(())
}

/// Refuses a caller's device address whose `bytes` the kernels could not reach on the plan's
/// device (see [`judge_device_memory`]). A query the driver refuses checks nothing (the
/// launch then reports a broken context) unless the context is already broken.
fn check_device_memory(
    driver: &dyn Driver,
    what: &str,
    ptr: DevicePtr,
    bytes: usize,
) -> Result<()> {
    match driver.memory_at(ptr) {
        Ok(memory) => judge_device_memory(memory, driver.ordinal(), what, ptr, bytes),
        Err(fault) if fault.kind == FaultKind::Sticky => {
            Err(gpu_error("(device-resident job)", &fault))
        }
        Err(_) => Ok(()),
    }
}

/// Whether `bytes` from `ptr` in `memory` are reachable by the kernels of GPU `ordinal`: not
/// memory the driver does not know (host memory, memory given back), nor memory of another
/// GPU, nor past the end of the allocation. The GPU would fault there (ending its context,
/// and the caller's work with it) or write into the caller's other arrays.
fn judge_device_memory(
    memory: MemoryAt,
    ordinal: usize,
    what: &str,
    ptr: DevicePtr,
    bytes: usize,
) -> Result<()> {
    let refused = |why: String| {
        Err(Error::InvalidArgument(format!(
            "the device {what} address {:#x} {why}",
            ptr.0
        )))
    };
    if let MemoryAt::Device {
        ordinal: Some(owner),
        ..
    } = memory
        && owner != ordinal
    {
        return refused(format!(
            "is memory of GPU {owner}, not of the plan's GPU {ordinal}"
        ));
    }
    match memory.room_from(ptr) {
        Some(0) => refused("is not in GPU memory the driver knows (host memory, or freed?)".into()),
        Some(room) if room < bytes => refused(format!(
            "has {room} bytes to the end of its allocation, where the job reaches {bytes}"
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Null addresses and addresses off their elements' alignment are refused, each named.
    #[test]
    fn device_addresses_must_be_aligned_to_their_elements() {
        assert!(check_device_addresses(&[("input", 0x1001, 1), ("data", 0x1008, 8)]).is_ok());
        for (bad, named) in [
            (
                [("input", 0x1002, 4), ("data", 0x1008, 8)],
                "input address 0x1002",
            ),
            (
                [("input", 0x1004, 4), ("data", 0x1004, 8)],
                "data address 0x1004",
            ),
            (
                [("input", 0, 1), ("data", 0x1008, 8)],
                "input address is null",
            ),
        ] {
            let e = check_device_addresses(&bad).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
            assert!(e.to_string().contains(named), "{e}");
        }
    }

    /// Caller's device memory the kernels cannot reach is refused, each case named: memory
    /// the driver does not know, another GPU's, or an allocation that ends before the job's
    /// last byte. Memory every GPU addresses, or whose extent the driver does not tell, is
    /// taken.
    #[test]
    fn device_memory_must_be_the_plans_gpu_s_and_hold_the_job() {
        let (start, at) = (DevicePtr(0x10_0000), DevicePtr(0x10_0100));
        let device = |ordinal| MemoryAt::Device {
            ordinal: Some(ordinal),
            allocation: Some((start, 0x1000)),
        };
        let judge = |memory, bytes| judge_device_memory(memory, 1, "input", at, bytes);
        assert!(judge(device(1), 0xf00).is_ok()); // to the allocation's last byte
        let shared = MemoryAt::Shared {
            allocation: Some((start, 0x1000)),
        };
        assert!(judge(shared, 0xf00).is_ok());
        let untold = MemoryAt::Device {
            ordinal: None,
            allocation: None,
        };
        assert!(judge(untold, usize::MAX).is_ok());
        for (memory, bytes, named) in [
            (
                device(1),
                0xf01,
                "has 3840 bytes to the end of its allocation",
            ),
            (shared, 0xf01, "has 3840 bytes"),
            (device(0), 8, "memory of GPU 0, not of the plan's GPU 1"),
            (MemoryAt::Unknown, 8, "not in GPU memory the driver knows"),
        ] {
            let e = judge(memory, bytes).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
            assert!(e.to_string().contains(named), "{named}: {e}");
            assert!(e.to_string().contains("input address 0x100100"), "{e}");
        }
    }
}
