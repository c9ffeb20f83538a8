//! The GPU backend's host side, testable without a GPU: backend selection, library probing
//! without panics, raw input planes for the upload, and errors (not crashes) where no GPU is.

use ndarray::{s, Array2, Array3};
use reproject::engine::{reproject_interp, Options};
use reproject::gpu::{gpu_info, kernel_source, Backend, KERNEL_FILES};
use reproject::io::{ArraySource, ByteOrder, ImageSource, RawSource, SampleType};
use reproject::wcs::Wcs;
use reproject::Error;

#[test]
fn backend_parses_prints_and_defaults_to_auto() {
    for (text, b) in [
        ("auto", Backend::Auto),
        ("CPU", Backend::Cpu),
        ("cuda", Backend::Cuda),
    ] {
        assert_eq!(text.parse::<Backend>().unwrap(), b);
        assert_eq!(b.to_string().parse::<Backend>().unwrap(), b);
    }
    assert!(matches!(
        "opencl".parse::<Backend>(),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(Options::default().backend, Backend::Auto);
    assert_eq!(Backend::default(), Backend::Auto);
    // Options serialised before the backend existed (a job file left to resume) still read,
    // as the CPU they were computed on.
    let mut json = serde_json::to_value(Options::default()).unwrap();
    json.as_object_mut().unwrap().remove("backend");
    let back: Options = serde_json::from_value(json).unwrap();
    assert_eq!(back.backend, Backend::Cpu);
}

#[test]
fn the_kernel_source_is_every_file_in_order_with_line_markers() {
    let src = kernel_source();
    let mut at = 0;
    for (name, text) in KERNEL_FILES {
        let marker = format!("#line 1 \"{name}\"\n");
        let pos = src[at..].find(&marker).expect("marker in order") + at;
        assert!(src[pos + marker.len()..].starts_with(text));
        at = pos + marker.len();
    }
    let names: Vec<_> = KERNEL_FILES.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "common.cuh",
            "projections.cuh",
            "wcs.cuh",
            "interp.cuh",
            "reproject.cu",
            "accumulate.cu",
            "spline.cu",
            "spline_values.cu"
        ]
    );
}

#[test]
fn raw_planes_are_the_stored_bytes_of_contiguous_plain_inputs() {
    let cube = Array3::from_shape_fn((2, 3, 4), |(p, y, x)| (100 * p + 10 * y + x) as f32);
    let src = ArraySource::new(cube.view().into_dyn()).unwrap();
    let raw = src.raw_plane(1).unwrap();
    assert_eq!((raw.sample, raw.big_endian), (SampleType::F32, false));
    let values: Vec<f32> = raw
        .bytes
        .chunks_exact(4)
        .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(
        values,
        cube.slice(s![1, .., ..])
            .iter()
            .copied()
            .collect::<Vec<_>>()
    );
    // A strided view has no contiguous plane: the upload then reads converted windows.
    let wide = Array2::<f64>::zeros((4, 8));
    let strided = wide.slice(s![.., ..;2]);
    assert!(ArraySource::new(strided.into_dyn())
        .unwrap()
        .raw_plane(0)
        .is_none());
    // Big-endian bytes (FITS, '>f4' arrays) keep their byte order: the kernel swaps them.
    let bytes: Vec<u8> = (0..6u16).flat_map(|v| (v as i16).to_be_bytes()).collect();
    let be = RawSource::new(&bytes, SampleType::I16, ByteOrder::Big, &[2, 3]).unwrap();
    let raw = be.raw_plane(0).unwrap();
    assert_eq!(
        (raw.sample, raw.big_endian, raw.bytes),
        (SampleType::I16, true, &bytes[..])
    );
    assert!(be.raw_plane(1).is_none());
}

#[test]
fn without_a_gpu_everything_is_an_error_value_never_a_panic() {
    if let Ok(info) = gpu_info() {
        eprintln!("SKIPPED: a GPU is present ({info})");
        return;
    }
    assert!(matches!(gpu_info(), Err(Error::GpuUnavailable(_))));
    assert!(reproject::gpu::describe().starts_with("GPU: none"));
    assert!(matches!(
        reproject::gpu::readiness(reproject::gpu::Devices::First),
        Err(Error::GpuUnavailable(_))
    ));
    #[cfg(feature = "cuda")]
    {
        assert!(matches!(
            reproject::gpu::DeviceBuffer::zeros(16),
            Err(Error::GpuUnavailable(_))
        ));
        assert!(matches!(
            reproject::gpu::copy_times(16, 1),
            Err(Error::GpuUnavailable(_))
        ));
        assert!(matches!(
            reproject::gpu::registered_copy_times(16, 1),
            Err(Error::GpuUnavailable(_))
        ));
    }
    let h = "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 8\nCRPIX2 = 8\nCRVAL1 = 10\n\
             CRVAL2 = 20\nCDELT1 = -0.01\nCDELT2 = 0.01\n";
    let wcs = Wcs::from_header_str(h).unwrap();
    let image = Array2::from_shape_fn((16, 16), |(y, x)| (y * 16 + x) as f64);
    let source = ArraySource::new(image.view().into_dyn()).unwrap();
    let options = |backend| Options {
        backend,
        ..Options::default()
    };
    let cpu = reproject_interp(&source, &wcs, &wcs, &[16, 16], &options(Backend::Cpu)).unwrap();
    let auto = reproject_interp(&source, &wcs, &wcs, &[16, 16], &options(Backend::Auto)).unwrap();
    assert_eq!(cpu.1, auto.1);
    assert!(cpu
        .0
        .iter()
        .zip(auto.0.iter())
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    let err =
        reproject_interp(&source, &wcs, &wcs, &[16, 16], &options(Backend::Cuda)).unwrap_err();
    assert!(matches!(err, Error::GpuUnavailable(_)), "{err:?}");
}

/// The simulator (`REPROJECT_RS_CUDA_SIM`, as scripts/test.sh runs this file a second time)
/// is a GPU whose kernels are always there: `auto` counts no start for it.
#[test]
fn the_simulator_is_always_ready() {
    if reproject::gpu::simulated_devices().is_none() {
        eprintln!("SKIPPED: not on the CUDA simulator");
        return;
    }
    for devices in [reproject::gpu::Devices::First, reproject::gpu::Devices::All] {
        assert_eq!(
            reproject::gpu::readiness(devices).unwrap(),
            reproject::gpu::Readiness::Open
        );
    }
}
