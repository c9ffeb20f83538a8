//! Device-resident jobs (CuPy inputs) of spline orders 2-5 on the CUDA simulator: the input
//! stays on the device. The first block prefilters the values the CPU's prefilter starts from,
//! read from the device input as the CPU reads them (the sample type, the float32 rounding of
//! integer input): the column pass reads float32, float64 and int64 samples itself, and
//! `rp_spline_values` first makes the values of int16 and uint8 ones. Every block then
//! samples those coefficients. The plan's
//! source has no pixels on the host (reading it is an error, as for the Python bindings'
//! device inputs), so nothing but the device input can give the CPU engine's bits, which every
//! order and sample type gets, whole and block by block; no byte goes to the host but the
//! outputs the test reads back, and only the parameters go up.
//!
//! One test in its own binary: it turns the simulator on (`REPROJECT_RS_CUDA_SIM=1`) for the
//! process and reads the simulated device's counters, which no other test shares.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use ndarray::Array3;
use reproject::engine::blocks::Block;
use reproject::engine::{reproject_interp, Backend, Options, Plan};
use reproject::gpu::{DeviceBuffer, DeviceImage};
use reproject::interp::Order;
use reproject::io::{ArrayElement, ArraySource, ImageSource, SampleType, StoredType};
use reproject::wcs::Wcs;

const IN: (usize, usize) = (40, 48);
const OUT: (usize, usize) = (36, 44);
const PLANES: usize = 2;

const HEADER_IN: &str = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 150.0\n\
    CRVAL2 = 30.0\nCRPIX1 = 24.5\nCRPIX2 = 20.5\nCDELT1 = -0.01\nCDELT2 = 0.01\n";
const HEADER_OUT: &str = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = 150.02\n\
    CRVAL2 = 30.01\nCRPIX1 = 22.5\nCRPIX2 = 18.5\nCDELT1 = -0.011\nCDELT2 = 0.011\n\
    PC1_1 = 0.98\nPC1_2 = -0.17\nPC2_1 = 0.17\nPC2_2 = 0.98\n";

/// A source with the input's shape and type but no pixels on the host (as the Python
/// bindings' device inputs): reading it is an error, and counted.
struct NoHostPixels {
    shape: Vec<usize>,
    sample: SampleType,
    reads: AtomicUsize,
}

impl ImageSource for NoHostPixels {
    fn shape(&self) -> &[usize] {
        &self.shape
    }

    fn stored_type(&self) -> StoredType {
        StoredType {
            sample: self.sample,
            big_endian: false,
            scaled: false,
        }
    }

    fn read_window(
        &self,
        _plane: usize,
        _rows: Range<usize>,
        _cols: Range<usize>,
        _out: &mut [f64],
    ) -> reproject::Result<()> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        Err(reproject::Error::GpuUnavailable(
            "a device input has no pixels on the host".into(),
        ))
    }
}

fn pixels(p: usize, y: usize, x: usize) -> f64 {
    let (fy, fx) = (y as f64 / IN.0 as f64, x as f64 / IN.1 as f64);
    (p + 1) as f64 * (100.0 + 40.0 * (6.0 * fx).sin() * (4.0 * fy).cos())
        + 3.7 * (37.0 * fx * fy).sin()
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter()
        .map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() })
        .collect()
}

fn f64s(b: &DeviceBuffer) -> Vec<f64> {
    b.to_host()
        .unwrap()
        .chunks_exact(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// Panics, with how many differ, unless `got` has the bits of `want` (NaNs alike).
fn assert_same_bits(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let differ = bits(got)
        .iter()
        .zip(bits(want))
        .filter(|(a, b)| **a != *b)
        .count();
    assert_eq!(differ, 0, "{what}: {differ} of {} values differ", got.len());
}

/// (uploaded, downloaded) bytes of the simulated device so far.
fn moved() -> (u64, u64) {
    let stats = reproject::gpu::simulated_device(0).unwrap().stats();
    (stats.uploaded, stats.downloaded)
}

/// Every order 2-5 for an input of `T` samples (`sample`; `bytes` gives a sample's native
/// bytes): the CPU engine's bits from the device input, whole and by blocks.
fn check<T: ArrayElement + Copy>(sample: SampleType, to_t: fn(f64) -> T, bytes: fn(T) -> Vec<u8>) {
    let input = Array3::from_shape_fn((PLANES, IN.0, IN.1), |(p, y, x)| to_t(pixels(p, y, x)));
    let host = ArraySource::new(input.view().into_dyn()).unwrap();
    let d_input =
        DeviceBuffer::from_host(&input.iter().flat_map(|&v| bytes(v)).collect::<Vec<_>>()).unwrap();
    let image = DeviceImage {
        ptr: d_input.device_ptr(),
        sample,
        big_endian: false,
        pitch: IN.1,
    };
    let (wcs_in, wcs_out) = (
        Wcs::from_header_str(HEADER_IN).unwrap(),
        Wcs::from_header_str(HEADER_OUT).unwrap(),
    );
    let shape = [PLANES, OUT.0, OUT.1];
    let n = PLANES * OUT.0 * OUT.1;
    for order in [
        Order::Biquadratic,
        Order::Bicubic,
        Order::Quartic,
        Order::Quintic,
    ] {
        let what = format!("{sample:?} {order:?}");
        let cpu_options = Options {
            order,
            ..Options::default()
        };
        let cpu = reproject_interp(&host, &wcs_in, &wcs_out, &shape, &cpu_options).unwrap();
        assert!(cpu.1.iter().any(|&f| f == 1.0), "{what}: no coverage");
        let source = NoHostPixels {
            shape: vec![PLANES, IN.0, IN.1],
            sample,
            reads: AtomicUsize::new(0),
        };
        let options = Options {
            backend: Backend::Cuda,
            ..cpu_options
        };
        let plan = Plan::new(&source, &wcs_in, &wcs_out, &shape, &options).unwrap();
        plan.prepare_on_device().unwrap();
        let (data, footprint) = (
            DeviceBuffer::zeros(n * 8).unwrap(),
            DeviceBuffer::zeros(n * 8).unwrap(),
        );
        let before = moved();
        // SAFETY: device buffers of the sizes described, the input of the plan's shape.
        unsafe {
            plan.compute_on_device(&image, data.device_ptr(), footprint.device_ptr(), true)
                .unwrap()
        };
        let (up, down) = (moved().0 - before.0, moved().1 - before.1);
        assert_eq!(down, 0, "{what}: bytes to the host");
        // Pitches the kernels cannot read (narrower than a row; 2^31 elements or more, past
        // their 32-bit offsets) are refused before anything runs, not sampled as NaN.
        for pitch in [IN.1 - 1, 1 << 31] {
            let bad = DeviceImage { pitch, ..image };
            // SAFETY: refused before any launch.
            let e = unsafe {
                plan.compute_on_device(&bad, data.device_ptr(), footprint.device_ptr(), true)
            }
            .unwrap_err();
            assert!(
                matches!(e, reproject::Error::InvalidArgument(_)),
                "{what}: pitch {pitch}: {e}"
            );
        }
        // Addresses the GPU would fault on (null, or off their elements' alignment) are
        // refused before anything runs: a fault would take the context, and the caller's
        // CuPy work with it.
        let size = std::mem::size_of::<T>() as u64;
        let (d, f) = (data.device_ptr(), footprint.device_ptr());
        let mut bad = vec![
            (0, d, f),
            (image.ptr, 0, f),
            (image.ptr, d + 4, f),
            (image.ptr, d, f + 2),
        ];
        if size > 1 {
            bad.push((image.ptr + size / 2, d, f));
        }
        // So is memory the kernels cannot reach: an allocation that ends before the job's last
        // byte (the input's, from its start or from an address inside it; an output's), host
        // memory, a buffer given back. The GPU would fault there or write past the caller's
        // array.
        let elements = PLANES * IN.0 * IN.1;
        let short_input = DeviceBuffer::zeros((elements - 1) * size as usize).unwrap();
        let short_output = DeviceBuffer::zeros(n * 8 - 8).unwrap();
        let host_memory = vec![0u64; n];
        let host = host_memory.as_ptr() as u64;
        let freed = DeviceBuffer::zeros(n * 8).unwrap().device_ptr(); // dropped here
        let short = short_output.device_ptr();
        bad.extend([
            (short_input.device_ptr(), d, f),
            (image.ptr + size, d, f),
            (image.ptr, short, f),
            (image.ptr, d, short),
            (host, d, f),
            (image.ptr, host, f),
            (image.ptr, d, freed),
        ]);
        for (input, d, f) in bad {
            let at = DeviceImage {
                ptr: input,
                ..image
            };
            // SAFETY: refused before any launch.
            let e = unsafe { plan.compute_on_device(&at, d, f, true) }.unwrap_err();
            assert!(
                matches!(e, reproject::Error::InvalidArgument(_)),
                "{what}: input {input:#x}, outputs {d:#x} and {f:#x}: {e}"
            );
        }
        // An input at a wider pitch needs its last row only to its last column: the allocation
        // ends there, and the CPU's bits come out (a fresh plan, which reads this input for its
        // coefficients).
        let pitch = IN.1 + 3;
        let mut padded = Vec::new();
        for (i, &v) in input.iter().enumerate() {
            padded.extend(bytes(v));
            if i % IN.1 == IN.1 - 1 && i + 1 < elements {
                padded.extend((0..3).flat_map(|_| bytes(to_t(1.0e6))));
            }
        }
        assert_eq!(
            padded.len(),
            ((elements / IN.1 - 1) * pitch + IN.1) * size as usize
        );
        let d_padded = DeviceBuffer::from_host(&padded).unwrap();
        let pitched = DeviceImage {
            ptr: d_padded.device_ptr(),
            pitch,
            ..image
        };
        let fresh = Plan::new(&source, &wcs_in, &wcs_out, &shape, &options).unwrap();
        let (pd, pf) = (
            DeviceBuffer::zeros(n * 8).unwrap(),
            DeviceBuffer::zeros(n * 8).unwrap(),
        );
        // SAFETY: the padded input's allocation holds every row the plan reads.
        unsafe { fresh.compute_on_device(&pitched, pd.device_ptr(), pf.device_ptr(), true) }
            .unwrap();
        assert_same_bits(
            &format!("{what}, pitch {pitch}"),
            &f64s(&pd),
            cpu.0.as_slice().unwrap(),
        );
        assert!(
            up < 4096,
            "{what}: {up} bytes up (the input's planes are {} bytes)",
            n * 8
        );
        let whole = (f64s(&data), f64s(&footprint));
        assert_same_bits(&what, &whole.0, cpu.0.as_slice().unwrap());
        assert_same_bits(&what, &whole.1, cpu.1.as_slice().unwrap());
        // Block by block (as dask's chunks): the coefficients made once are reused.
        let before = moved();
        for rows in [0..17, 17..OUT.0] {
            for cols in [0..20, 20..OUT.1] {
                let block = Block {
                    rows: rows.clone(),
                    cols: cols.clone(),
                };
                let m = PLANES * block.len();
                let (d, f) = (
                    DeviceBuffer::zeros(m * 8).unwrap(),
                    DeviceBuffer::zeros(m * 8).unwrap(),
                );
                // SAFETY: as above, sized for the block.
                unsafe {
                    plan.compute_block_on_device(
                        &block,
                        &image,
                        d.device_ptr(),
                        f.device_ptr(),
                        true,
                    )
                    .unwrap()
                };
                let got = f64s(&d);
                for p in 0..PLANES {
                    for (r, y) in rows.clone().enumerate() {
                        for (c, x) in cols.clone().enumerate() {
                            let g = got[(p * rows.len() + r) * cols.len() + c];
                            let at = format!("{what}: block pixel ({p}, {y}, {x})");
                            assert_same_bits(&at, &[g], &[cpu.0[[p, y, x]]]);
                        }
                    }
                }
            }
        }
        // Only the blocks' outputs read back by the test came down.
        assert_eq!(
            moved().1 - before.1,
            (n * 8) as u64,
            "{what}: bytes to the host"
        );
        assert_eq!(
            source.reads.load(Ordering::Relaxed),
            0,
            "{what}: the host source was read"
        );
        assert!(!plan.cpu_spline_coefficients_made(), "{what}");
    }
}

#[test]
fn device_inputs_of_spline_orders_never_leave_the_device() {
    // SAFETY: set before this process starts any thread of its own (the binary's only test).
    unsafe { std::env::set_var("REPROJECT_RS_CUDA_SIM", "1") };
    assert!(reproject::gpu::sim::SimDriver::has_kernels());
    check(
        SampleType::F32,
        |v| v as f32,
        |v: f32| v.to_ne_bytes().to_vec(),
    );
    check(SampleType::F64, |v| v, |v: f64| v.to_ne_bytes().to_vec());
    // Integer input: its values are rounded to float32 before the prefilter, as on the CPU.
    check(
        SampleType::I16,
        |v| (v * 97.0) as i16,
        |v: i16| v.to_ne_bytes().to_vec(),
    );
    check(
        SampleType::I64,
        |v| (v * 1.0e15) as i64,
        |v: i64| v.to_ne_bytes().to_vec(),
    );
    check(
        SampleType::U8,
        |v| v as u8,
        |v: u8| v.to_ne_bytes().to_vec(),
    );
}
