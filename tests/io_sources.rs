//! Image sources: ArraySource, RawSource, NpySource (every dtype and byte order, versions,
//! Fortran order, broken files, memory use) and FitsSource (BITPIX, scaling, BLANK, unsigned
//! conventions, extensions, compression, broken files).

use std::fs;
use std::io::{Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::PathBuf;

use ndarray::{s, ArrayD, ArrayViewD, IxDyn};
use reproject::io::{
    ArraySource, ByteOrder, ImageSource, NpySource, RawSource, SampleType, StoredType,
};
use reproject::Error;

// ---------------------------------------------------------------------------------------------
// Helpers

/// A fresh path under the cargo test temp dir.
fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("io_sources");
    fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    let _ = fs::remove_file(&p);
    p
}

/// Test values of a sample type, including the extremes and (floats) NaN and infinities.
trait TestNum: Copy + Send + Sync + 'static {
    const KIND: &'static str;
    const SAMPLE: SampleType;
    fn make(i: usize) -> Self;
    fn f64(self) -> f64;
    fn be(self) -> Vec<u8>;
    fn le(self) -> Vec<u8>;
}

macro_rules! test_int {
    ($t:ty, $kind:expr, $s:ident) => {
        impl TestNum for $t {
            const KIND: &'static str = $kind;
            const SAMPLE: SampleType = SampleType::$s;
            fn make(i: usize) -> Self {
                match i % 11 {
                    0 => <$t>::MIN,
                    1 => <$t>::MAX,
                    _ => ((i as i64).wrapping_mul(2654435761) >> 5) as $t,
                }
            }
            fn f64(self) -> f64 {
                self as f64
            }
            fn be(self) -> Vec<u8> {
                self.to_be_bytes().to_vec()
            }
            fn le(self) -> Vec<u8> {
                self.to_le_bytes().to_vec()
            }
        }
    };
}

test_int!(u8, "u1", U8);
test_int!(i8, "i1", I8);
test_int!(u16, "u2", U16);
test_int!(i16, "i2", I16);
test_int!(u32, "u4", U32);
test_int!(i32, "i4", I32);
test_int!(u64, "u8", U64);
test_int!(i64, "i8", I64);

macro_rules! test_float {
    ($t:ty, $kind:expr, $s:ident) => {
        impl TestNum for $t {
            const KIND: &'static str = $kind;
            const SAMPLE: SampleType = SampleType::$s;
            fn make(i: usize) -> Self {
                match i % 13 {
                    0 => <$t>::NAN,
                    1 => <$t>::INFINITY,
                    2 => <$t>::NEG_INFINITY,
                    3 => <$t>::MAX,
                    4 => -0.0,
                    _ => (i as $t) * 0.37 - 11.5,
                }
            }
            fn f64(self) -> f64 {
                self as f64
            }
            fn be(self) -> Vec<u8> {
                self.to_be_bytes().to_vec()
            }
            fn le(self) -> Vec<u8> {
                self.to_le_bytes().to_vec()
            }
        }
    };
}

test_float!(f32, "f4", F32);
test_float!(f64, "f8", F64);

fn make_array<T: TestNum>(shape: &[usize]) -> ArrayD<T> {
    let n: usize = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(T::make).collect()).unwrap()
}

/// Equal as f64 bit patterns, except that any NaN equals any NaN.
fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

fn assert_same(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(same(*g, *w), "{what}: element {i}: got {g}, want {w}");
    }
}

/// The window of `plane` of `a` (any number of leading dims), flattened.
fn expected<T: TestNum>(
    a: &ArrayViewD<T>,
    plane: usize,
    rows: Range<usize>,
    cols: Range<usize>,
) -> Vec<f64> {
    let nd = a.ndim();
    let lead = &a.shape()[..nd - 2];
    let mut idx = vec![0usize; nd];
    let mut p = plane;
    for k in (0..lead.len()).rev() {
        idx[k] = p % lead[k];
        p /= lead[k];
    }
    let mut out = Vec::new();
    for r in rows {
        for c in cols.clone() {
            idx[nd - 2] = r;
            idx[nd - 1] = c;
            out.push(a[IxDyn(&idx)].f64());
        }
    }
    out
}

/// Checks whole planes, edge windows, empty windows and window errors.
fn check_source<T: TestNum>(src: &dyn ImageSource, a: &ArrayViewD<T>, what: &str) {
    assert_eq!(src.shape(), a.shape(), "{what}: shape");
    let (ny, nx) = src.plane_shape();
    let planes = src.planes();
    let windows = [
        (0..ny, 0..nx),
        (ny - 1..ny, 0..nx),
        (0..ny, nx - 1..nx),
        (ny - 1..ny, nx - 1..nx),
        (0..1, 0..1),
        (1..ny.min(3), 2.min(nx - 1)..nx),
        (2..2, 0..3),
        (0..ny, nx..nx),
    ];
    for plane in 0..planes {
        for (rows, cols) in windows.clone() {
            let mut out = vec![-1.0; rows.len() * cols.len()];
            src.read_window(plane, rows.clone(), cols.clone(), &mut out)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let want = expected(a, plane, rows.clone(), cols.clone());
            assert_same(
                &out,
                &want,
                &format!("{what} plane {plane} {rows:?} {cols:?}"),
            );
        }
    }
    // Errors, never panics.
    let mut one = [0.0];
    assert!(matches!(
        src.read_window(planes, 0..1, 0..1, &mut one),
        Err(Error::InvalidArgument(_))
    ));
    let mut buf = vec![0.0; (ny + 1) * nx];
    assert!(matches!(
        src.read_window(0, 0..ny + 1, 0..nx, &mut buf),
        Err(Error::InvalidArgument(_))
    ));
    let mut buf = vec![0.0; nx + 1];
    assert!(matches!(
        src.read_window(0, 0..1, 0..nx + 1, &mut buf),
        Err(Error::InvalidArgument(_))
    ));
    #[allow(clippy::reversed_empty_ranges)]
    let bad_rows = 2..1;
    assert!(src.read_window(0, bad_rows, 0..1, &mut one).is_err());
    let mut short = vec![0.0; 3];
    assert!(matches!(
        src.read_window(0, 0..2, 0..2, &mut short),
        Err(Error::ShapeMismatch(_))
    ));
}

/// A `.npy` file written by hand: any version, descr, order and data bytes.
fn write_npy_raw(
    path: &std::path::Path,
    version: u8,
    descr: &str,
    fortran: bool,
    shape: &[usize],
    data: &[u8],
) {
    let dims: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
    let shape_txt = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let dict = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape_txt}, }}",
        if fortran { "True" } else { "False" }
    );
    let prefix = if version == 1 { 10 } else { 12 };
    let total = (prefix + dict.len() + 1).div_ceil(64) * 64;
    let hlen = total - prefix;
    let mut bytes = b"\x93NUMPY".to_vec();
    bytes.push(version);
    bytes.push(0);
    if version == 1 {
        bytes.extend_from_slice(&(hlen as u16).to_le_bytes());
    } else {
        bytes.extend_from_slice(&(hlen as u32).to_le_bytes());
    }
    bytes.extend_from_slice(dict.as_bytes());
    bytes.resize(total - 1, b' ');
    bytes.push(b'\n');
    bytes.extend_from_slice(data);
    fs::write(path, bytes).unwrap();
}

fn bytes_of<T: TestNum>(a: &ArrayD<T>, big: bool, fortran: bool) -> Vec<u8> {
    let enc = |v: &T| if big { v.be() } else { v.le() };
    if fortran {
        a.t().iter().flat_map(enc).collect()
    } else {
        a.iter().flat_map(enc).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// ArraySource

fn array_source_cases<T: TestNum + reproject::io::ArrayElement>() {
    let a = make_array::<T>(&[2, 5, 7]);
    let src = ArraySource::new(a.view()).unwrap();
    assert_eq!(
        src.stored_type(),
        StoredType {
            sample: <T as TestNum>::SAMPLE,
            big_endian: false,
            scaled: false
        }
    );
    check_source(&src, &a.view(), "contiguous");

    // Transposed planes, reversed and stepped axes, 4-D, 2-D.
    let t = a.view().permuted_axes(IxDyn(&[0, 2, 1]));
    check_source(&ArraySource::new(t.clone()).unwrap(), &t, "transposed");
    let r = a.slice(s![..;-1, ..;-2, 1..;-1]).into_dyn();
    check_source(&ArraySource::new(r.clone()).unwrap(), &r, "reversed");
    let b = make_array::<T>(&[2, 3, 4, 6]);
    check_source(&ArraySource::new(b.view()).unwrap(), &b.view(), "4-D");
    let c = make_array::<T>(&[4, 3]);
    check_source(&ArraySource::new(c.view()).unwrap(), &c.view(), "2-D");
}

#[test]
fn array_source_every_type_and_layout() {
    array_source_cases::<f32>();
    array_source_cases::<f64>();
    array_source_cases::<u8>();
    array_source_cases::<i8>();
    array_source_cases::<u16>();
    array_source_cases::<i16>();
    array_source_cases::<u32>();
    array_source_cases::<i32>();
    array_source_cases::<u64>();
    array_source_cases::<i64>();
}

#[test]
fn array_source_bool_and_dimension_checks() {
    let a = ndarray::Array2::from_shape_fn((2, 3), |(y, x)| (x + y) % 2 == 0).into_dyn();
    let src = ArraySource::new(a.view()).unwrap();
    assert_eq!(src.stored_type().sample, SampleType::U8);
    let mut out = [0.0; 6];
    src.read_window(0, 0..2, 0..3, &mut out).unwrap();
    assert_eq!(out, [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]);

    let one = ndarray::Array1::<f32>::zeros(4).into_dyn();
    assert!(matches!(
        ArraySource::new(one.view()),
        Err(Error::ShapeMismatch(_))
    ));
    // Zero-sized planes are fine, and so are empty windows of them.
    let z = ArrayD::<f64>::zeros(IxDyn(&[0, 3]));
    let src = ArraySource::new(z.view()).unwrap();
    src.read_window(0, 0..0, 0..3, &mut []).unwrap();
}

// ---------------------------------------------------------------------------------------------
// RawSource

fn raw_source_cases<T: TestNum>() {
    let a = make_array::<T>(&[2, 4, 5]);
    let size = std::mem::size_of::<T>();
    for big in [false, true] {
        let order = if big {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        };
        let bytes = bytes_of(&a, big, false);
        let src = RawSource::new(&bytes, T::SAMPLE, order, &[2, 4, 5]).unwrap();
        let st = src.stored_type();
        assert_eq!(st.sample, T::SAMPLE);
        assert_eq!(st.big_endian, size > 1 && !order.is_native());
        check_source(&src, &a.view(), "raw C order");

        // numpy strides of a transposed view: shape (2, 5, 4), strides (80/4.., s, 5s) etc.
        let t = a.view().permuted_axes(IxDyn(&[0, 2, 1]));
        let st = [(20 * size) as isize, size as isize, (5 * size) as isize];
        let src = RawSource::with_strides(&bytes, T::SAMPLE, order, &[2, 5, 4], &st, 0).unwrap();
        check_source(&src, &t, "raw transposed");

        // a[::-1, :, ::-1]: negative strides from an offset.
        let r = a.slice(s![..;-1, .., ..;-1]).into_dyn();
        let st = [-(20 * size as isize), (5 * size) as isize, -(size as isize)];
        let off = 20 * size + 4 * size;
        let dtype = format!("{}{}", if big { '>' } else { '<' }, T::KIND);
        let src = RawSource::from_numpy(&bytes, &dtype, &[2, 4, 5], &st, off).unwrap();
        check_source(&src, &r, "raw reversed");

        // Strides that leave the buffer are refused.
        assert!(matches!(
            RawSource::with_strides(&bytes, T::SAMPLE, order, &[2, 4, 5], &st, 0),
            Err(Error::ShapeMismatch(_))
        ));
        assert!(RawSource::new(&bytes[1..], T::SAMPLE, order, &[2, 4, 5]).is_err());
    }
}

#[test]
fn raw_source_every_type_both_orders_any_strides() {
    raw_source_cases::<f32>();
    raw_source_cases::<f64>();
    raw_source_cases::<u8>();
    raw_source_cases::<i8>();
    raw_source_cases::<u16>();
    raw_source_cases::<i16>();
    raw_source_cases::<u32>();
    raw_source_cases::<i32>();
    raw_source_cases::<u64>();
    raw_source_cases::<i64>();
}

#[test]
fn raw_source_rejects_bad_dtypes_and_shapes() {
    let bytes = [0u8; 64];
    for bad in [
        "<c8", "|O", "<U4", "|S3", "<f2", "<M8[s]", "|V8", "|i2", "xyz",
    ] {
        assert!(
            matches!(
                RawSource::from_numpy(&bytes, bad, &[2, 2], &[2, 1], 0),
                Err(Error::InvalidValue { .. })
            ),
            "{bad}"
        );
    }
    assert!(RawSource::new(&bytes, SampleType::F32, ByteOrder::Big, &[16]).is_err());
    assert!(
        RawSource::with_strides(&bytes, SampleType::F32, ByteOrder::Big, &[2, 2], &[8], 0).is_err()
    );
    let bool_src = RawSource::from_numpy(&[1, 0, 0, 1], "|b1", &[2, 2], &[2, 1], 0).unwrap();
    let mut out = [0.0; 4];
    bool_src.read_window(0, 0..2, 0..2, &mut out).unwrap();
    assert_eq!(out, [1.0, 0.0, 0.0, 1.0]);
}

// ---------------------------------------------------------------------------------------------
// NpySource

fn npy_cases<T: TestNum + ndarray_npy::WritableElement>() {
    let shape = [2, 5, 7];
    let a = make_array::<T>(&shape);
    let what = |s: &str| format!("{}: {s}", T::KIND);

    // Native, written by ndarray-npy.
    let p = tmp(&format!("native_{}.npy", T::KIND));
    ndarray_npy::write_npy(&p, &a).unwrap();
    let src = NpySource::open(&p).unwrap();
    assert_eq!(src.byte_order(), ByteOrder::NATIVE);
    assert_eq!(
        src.stored_type(),
        StoredType {
            sample: T::SAMPLE,
            big_endian: false,
            scaled: false
        }
    );
    check_source(&src, &a.view(), &what("ndarray-npy"));

    // Both byte orders, versions 1, 2, 3, C and Fortran order, by hand.
    for big in [false, true] {
        for version in [1u8, 2, 3] {
            for fortran in [false, true] {
                let descr = format!("{}{}", if big { '>' } else { '<' }, T::KIND);
                let p = tmp(&format!(
                    "{}_{}_v{version}_{}.npy",
                    T::KIND,
                    if big { "be" } else { "le" },
                    if fortran { "f" } else { "c" }
                ));
                write_npy_raw(
                    &p,
                    version,
                    &descr,
                    fortran,
                    &shape,
                    &bytes_of(&a, big, fortran),
                );
                let src = NpySource::open(&p).unwrap();
                assert_eq!(src.version(), (version, 0));
                assert_eq!(src.header().fortran_order, fortran);
                let st = src.stored_type();
                assert_eq!(st.sample, T::SAMPLE);
                assert_eq!(
                    st.big_endian,
                    big && std::mem::size_of::<T>() > 1 && cfg!(target_endian = "little")
                );
                check_source(&src, &a.view(), &what(&descr));
                fs::remove_file(&p).unwrap();
            }
        }
    }
    fs::remove_file(&p).ok();
}

#[test]
fn npy_every_dtype_byte_order_version_and_order() {
    npy_cases::<f32>();
    npy_cases::<f64>();
    npy_cases::<u8>();
    npy_cases::<i8>();
    npy_cases::<u16>();
    npy_cases::<i16>();
    npy_cases::<u32>();
    npy_cases::<i32>();
    npy_cases::<u64>();
    npy_cases::<i64>();
}

#[test]
fn npy_one_byte_and_bool_descrs() {
    let a = make_array::<u8>(&[3, 4]);
    for descr in ["|u1", "<u1", ">u1", "=u1", "|b1"] {
        let p = tmp("onebyte.npy");
        let data: Vec<u8> = if descr == "|b1" {
            a.iter().map(|v| v % 2).collect()
        } else {
            a.iter().copied().collect()
        };
        write_npy_raw(&p, 1, descr, false, &[3, 4], &data);
        let src = NpySource::open(&p).unwrap();
        assert_eq!(src.stored_type().sample, SampleType::U8);
        assert!(!src.stored_type().big_endian, "{descr}");
        let mut out = vec![0.0; 12];
        src.read_window(0, 0..3, 0..4, &mut out).unwrap();
        let want: Vec<f64> = data.iter().map(|&v| v as f64).collect();
        assert_eq!(out, want, "{descr}");
    }
}

fn open_err(bytes: &[u8], name: &str) -> Error {
    let p = tmp(name);
    fs::write(&p, bytes).unwrap();
    let e = NpySource::open(&p).expect_err(name);
    fs::remove_file(&p).unwrap();
    e
}

#[test]
fn npy_truncated_and_garbage_files_are_clear_errors() {
    let a = make_array::<f32>(&[3, 16, 16]);
    let p = tmp("full.npy");
    ndarray_npy::write_npy(&p, &a).unwrap();
    let good = fs::read(&p).unwrap();
    fs::remove_file(&p).unwrap();
    let hlen = good.len() - 3 * 16 * 16 * 4;

    // Cut anywhere: inside the data, at the end of the header, inside the header, the magic.
    for cut in [good.len() - 1, good.len() - 1000, hlen, hlen - 5, 9, 5, 0] {
        let e = open_err(&good[..cut], "cut.npy");
        match &e {
            Error::Io(m) => assert!(
                m.contains("truncated") || m.contains("magic") || m.contains("malformed"),
                "cut {cut}: {m}"
            ),
            other => panic!("cut {cut}: unexpected {other:?}"),
        }
        if cut > hlen {
            assert!(e.to_string().contains("truncated"), "{e}");
            assert!(e.to_string().contains("cut.npy"), "{e}");
        }
    }
    // Trailing bytes after the data are harmless.
    let mut longer = good.clone();
    longer.extend_from_slice(&[0; 100]);
    let p = tmp("longer.npy");
    fs::write(&p, &longer).unwrap();
    check_source(&NpySource::open(&p).unwrap(), &a.view(), "longer");

    // Garbage.
    assert!(matches!(
        open_err(b"hello world, not numpy", "g1.npy"),
        Error::Io(_)
    ));
    assert!(matches!(open_err(&[0u8; 4096], "g2.npy"), Error::Io(_)));
    let mut bad_version = good.clone();
    bad_version[6] = 9;
    assert!(open_err(&bad_version, "g3.npy")
        .to_string()
        .contains("version"));
    // A header length pointing past the end of the file.
    let mut huge_hlen = good.clone();
    huge_hlen[8] = 0xff;
    huge_hlen[9] = 0xff;
    let mut huge = huge_hlen.clone();
    huge.truncate(2000);
    assert!(open_err(&huge, "g4.npy").to_string().contains("truncated"));
    // Garbage inside the header dictionary.
    let mut broken = good.clone();
    broken[12] = b'#';
    assert!(matches!(open_err(&broken, "g5.npy"), Error::Io(_)));
    let p = tmp("g6.npy");
    write_npy_raw(&p, 1, "<f4", false, &[2, 2], &[0; 16]);
    let mut b = fs::read(&p).unwrap();
    let pos = b.windows(5).position(|w| w == b"shape").unwrap();
    b[pos] = b'x';
    assert!(open_err(&b, "g6.npy").to_string().contains("'shape'"));
    // Deeply nested garbage and an absurd header length.
    let dict = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': {}2{}}}",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend_from_slice(&((dict.len() + 1) as u16).to_le_bytes());
    v.extend_from_slice(dict.as_bytes());
    v.push(b'\n');
    assert!(open_err(&v, "g7.npy").to_string().contains("nested"));
    let mut v = b"\x93NUMPY\x02\x00".to_vec();
    v.extend_from_slice(&(3u32 << 30).to_le_bytes());
    v.extend_from_slice(&[b' '; 64]);
    assert!(open_err(&v, "g8.npy").to_string().contains("malformed"));
    // A shape whose byte size overflows.
    let p = tmp("overflow.npy");
    write_npy_raw(&p, 1, "<f8", false, &[1 << 40, 1 << 40], &[]);
    assert!(NpySource::open(&p).is_err());
    fs::remove_file(&p).unwrap();
    // A missing file.
    assert!(matches!(
        NpySource::open(tmp("does_not_exist.npy")),
        Err(Error::Io(_))
    ));
}

#[test]
fn npy_unsupported_dtypes_and_shapes() {
    for descr in ["<c8", "<c16", "|O", "<U5", "|S4", "<f2", "<M8[ns]", "|V4"] {
        let p = tmp("unsupported.npy");
        write_npy_raw(&p, 1, descr, false, &[2, 2], &[0; 128]);
        let e = NpySource::open(&p).expect_err(descr);
        assert!(matches!(e, Error::InvalidValue { .. }), "{descr}: {e:?}");
        assert!(
            e.to_string().contains(descr.trim_start_matches(['<', '|'])),
            "{e}"
        );
    }
    // Structured dtype: descr is a list.
    let p = tmp("structured.npy");
    fs::write(&p, {
        let dict =
            "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (2, 2), }";
        let mut v = b"\x93NUMPY\x01\x00".to_vec();
        let total = (10 + dict.len() + 1).div_ceil(64) * 64;
        v.extend_from_slice(&((total - 10) as u16).to_le_bytes());
        v.extend_from_slice(dict.as_bytes());
        v.resize(total - 1, b' ');
        v.push(b'\n');
        v.extend_from_slice(&[0; 32]);
        v
    })
    .unwrap();
    let e = NpySource::open(&p).unwrap_err();
    assert!(e.to_string().contains("structured"), "{e}");
    // Fewer than 2 dimensions.
    for shape in [&[][..], &[5][..]] {
        let p = tmp("small.npy");
        write_npy_raw(&p, 1, "<f4", false, shape, &[0; 20]);
        assert!(matches!(NpySource::open(&p), Err(Error::ShapeMismatch(_))));
    }
    // Python 2 style long integers in the shape are accepted.
    let p = tmp("long.npy");
    let dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L)}";
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend_from_slice(&((dict.len() + 1) as u16).to_le_bytes());
    v.extend_from_slice(dict.as_bytes());
    v.push(b'\n');
    v.extend_from_slice(&[0; 24]);
    fs::write(&p, v).unwrap();
    assert_eq!(NpySource::open(&p).unwrap().shape(), &[2, 3]);
}

/// Resident anonymous memory of this process, in bytes.
fn rss_anon() -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .expect("RssAnon in /proc/self/status")
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    kb * 1024
}

#[test]
#[cfg(target_os = "linux")]
fn npy_memory_map_of_1gib_stays_out_of_anonymous_memory() {
    let n = 16384usize;
    let p = tmp("big_sparse.npy");
    write_npy_raw(&p, 1, "<f4", false, &[n, n], &[]);
    let hlen = fs::metadata(&p).unwrap().len();
    let mut f = fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(hlen + (n * n * 4) as u64).unwrap();
    // A few known values: (8000, 8001), the last pixel, a pixel in the first row.
    for (y, x, v) in [
        (8000usize, 8001usize, 1.5f32),
        (n - 1, n - 1, -2.0),
        (0, 77, 3.25),
    ] {
        f.seek(SeekFrom::Start(hlen + ((y * n + x) * 4) as u64))
            .unwrap();
        f.write_all(&v.to_le_bytes()).unwrap();
    }
    drop(f);

    let before = rss_anon();
    let src = NpySource::open(&p).unwrap();
    assert_eq!(src.shape(), &[n, n]);
    let mut win = vec![0.0; 512 * 512];
    for (y, x) in [(0, 0), (7900, 7900), (n - 512, n - 512), (3000, 12000)] {
        src.read_window(0, y..y + 512, x..x + 512, &mut win)
            .unwrap();
    }
    src.read_window(0, 7900..8412, 7900..8412, &mut win)
        .unwrap();
    assert_eq!(win[100 * 512 + 101], 1.5);
    let mut row = vec![0.0; n];
    src.read_window(0, 0..1, 0..n, &mut row).unwrap();
    assert_eq!(row[77], 3.25);
    let mut col = vec![0.0; n];
    src.read_window(0, 0..n, n - 1..n, &mut col).unwrap();
    assert_eq!(col[n - 1], -2.0);
    let grown = rss_anon().saturating_sub(before);
    assert!(
        grown < 64 << 20,
        "RssAnon grew by {} MiB reading windows of a 1 GiB memory map",
        grown >> 20
    );
    drop(src);
    fs::remove_file(&p).unwrap();
}

// ---------------------------------------------------------------------------------------------
// FitsSource

#[cfg(feature = "fits")]
mod fits {
    use super::*;
    use fitsio::images::{ImageDescription, ImageType, WriteImage};
    use fitsio::FitsFile;
    use reproject::io::FitsSource;
    use std::ffi::CString;

    /// Appends a verbatim header card through CFITSIO.
    fn card(f: &mut FitsFile, text: &str) {
        let c = CString::new(text).unwrap();
        let mut status = 0;
        unsafe { fitsio::sys::ffprec(f.as_raw(), c.as_ptr(), &mut status) };
        assert_eq!(status, 0, "ffprec {text}");
    }

    /// A FITS file whose primary HDU holds `data` (written raw by fitsio), then extra cards.
    fn primary<T: WriteImage>(
        name: &str,
        ty: ImageType,
        shape: &[usize],
        data: &[T],
        cards: &[&str],
    ) -> PathBuf {
        let p = tmp(name);
        let desc = ImageDescription {
            data_type: ty,
            dimensions: shape,
        };
        let mut f = FitsFile::create(&p)
            .with_custom_primary(&desc)
            .open()
            .unwrap();
        let hdu = f.primary_hdu().unwrap();
        hdu.write_image(&mut f, data).unwrap();
        for c in cards {
            card(&mut f, c);
        }
        p
    }

    fn read_plane(src: &FitsSource, plane: usize) -> Vec<f64> {
        let (ny, nx) = src.plane_shape();
        let mut out = vec![0.0; ny * nx];
        src.read_window(plane, 0..ny, 0..nx, &mut out).unwrap();
        out
    }

    /// What fitsio (CFITSIO with its scaling, no null checks) reads, as f64.
    fn fitsio_values(p: &std::path::Path, hdu: usize) -> Vec<f64> {
        let mut f = FitsFile::open(p).unwrap();
        let h = f.hdu(hdu).unwrap();
        h.read_image::<Vec<f64>>(&mut f).unwrap()
    }

    impl TestNum for f64x {
        const KIND: &'static str = "";
        const SAMPLE: SampleType = SampleType::F64;
        fn make(_: usize) -> Self {
            f64x(0.0)
        }
        fn f64(self) -> f64 {
            self.0
        }
        fn be(self) -> Vec<u8> {
            vec![]
        }
        fn le(self) -> Vec<u8> {
            vec![]
        }
    }
    /// Expected values as f64 wrapped to fit `check_source`.
    #[derive(Clone, Copy)]
    #[allow(non_camel_case_types)]
    struct f64x(f64);

    fn check_all(src: &FitsSource, want: &[f64]) {
        let shape = src.shape().to_vec();
        let a =
            ArrayD::from_shape_vec(IxDyn(&shape), want.iter().map(|&v| f64x(v)).collect()).unwrap();
        check_source(src, &a.view(), &format!("{}", src.path().display()));
    }

    #[test]
    fn fits_float_images_bitpix_minus32_minus64() {
        let shape = [3, 10, 12];
        let d32: Vec<f32> = (0..360).map(f32::make).collect();
        let p = primary("f32.fits", ImageType::Float, &shape, &d32, &[]);
        let src = FitsSource::open(&p, 0).unwrap();
        assert!(src.is_memory_mapped() && !src.is_compressed());
        assert_eq!(src.bitpix(), -32);
        assert_eq!(
            src.stored_type(),
            StoredType {
                sample: SampleType::F32,
                big_endian: true,
                scaled: false
            }
        );
        let want: Vec<f64> = d32.iter().map(|&v| v as f64).collect();
        check_all(&src, &want);
        assert_same(&read_plane(&src, 2), &want[240..], "plane 2");

        let d64: Vec<f64> = (0..360).map(f64::make).collect();
        let p = primary("f64.fits", ImageType::Double, &shape, &d64, &[]);
        let src = FitsSource::open(&p, 0).unwrap();
        assert_eq!(src.stored_type().sample, SampleType::F64);
        check_all(&src, &d64);

        // Scaled floats: value = BZERO + BSCALE * stored.
        let p = primary(
            "f32_scaled.fits",
            ImageType::Float,
            &shape,
            &d32,
            &[
                "BSCALE  =                  2.0",
                "BZERO   =                  1.0",
            ],
        );
        let src = FitsSource::open(&p, 0).unwrap();
        assert_eq!(src.scaling(), (2.0, 1.0));
        assert_eq!(
            src.stored_type(),
            StoredType {
                sample: SampleType::F32,
                big_endian: false,
                scaled: true
            }
        );
        let want: Vec<f64> = d32.iter().map(|&v| 1.0 + 2.0 * v as f64).collect();
        check_all(&src, &want);
        // CFITSIO agrees on the finite values.
        for (a, b) in fitsio_values(&p, 0).iter().zip(&want) {
            if b.is_finite() {
                assert_eq!(a, b);
            }
        }
    }

    #[test]
    fn fits_integer_images_with_bscale_bzero_blank() {
        let shape = [6, 9];
        // BITPIX 16, BSCALE 0.5, BZERO 10, BLANK -999.
        let mut d16: Vec<i16> = (0..54).map(i16::make).collect();
        d16[5] = -999;
        d16[53] = -999;
        let p = primary(
            "i16_scaled.fits",
            ImageType::Short,
            &shape,
            &d16,
            &[
                "BSCALE  =                  0.5",
                "BZERO   =                 10.0",
                "BLANK   =                 -999",
            ],
        );
        let src = FitsSource::open(&p, 0).unwrap();
        assert_eq!(src.blank(), Some(-999));
        assert_eq!(
            src.stored_type(),
            StoredType {
                sample: SampleType::I16,
                big_endian: false,
                scaled: true
            }
        );
        let want: Vec<f64> = d16
            .iter()
            .map(|&v| {
                if v == -999 {
                    f64::NAN
                } else {
                    10.0 + 0.5 * v as f64
                }
            })
            .collect();
        check_all(&src, &want);
        for (i, (a, b)) in fitsio_values(&p, 0).iter().zip(&want).enumerate() {
            if !b.is_nan() {
                assert_eq!(a, b, "pixel {i}");
            }
        }

        // BITPIX 8 unsigned with BLANK, unscaled: 1-byte data are not "big-endian".
        let d8: Vec<u8> = (0..54).map(|i| (i * 5) as u8).collect();
        let p = primary(
            "u8_blank.fits",
            ImageType::UnsignedByte,
            &shape,
            &d8,
            &["BLANK   =                   10"],
        );
        let src = FitsSource::open(&p, 0).unwrap();
        assert_eq!(
            src.stored_type(),
            StoredType {
                sample: SampleType::U8,
                big_endian: false,
                scaled: false
            }
        );
        let want: Vec<f64> = d8
            .iter()
            .map(|&v| if v == 10 { f64::NAN } else { v as f64 })
            .collect();
        check_all(&src, &want);

        // BITPIX 32 with BLANK, unscaled: big-endian I32.
        let mut d32: Vec<i32> = (0..54).map(i32::make).collect();
        d32[7] = i32::MIN;
        let p = primary(
            "i32_blank.fits",
            ImageType::Long,
            &shape,
            &d32,
            &["BLANK   =          -2147483648"],
        );
        let src = FitsSource::open(&p, 0).unwrap();
        assert_eq!(
            src.stored_type(),
            StoredType {
                sample: SampleType::I32,
                big_endian: true,
                scaled: false
            }
        );
        let want: Vec<f64> = d32
            .iter()
            .map(|&v| if v == i32::MIN { f64::NAN } else { v as f64 })
            .collect();
        check_all(&src, &want);

        // BITPIX 32 scaled with a non-trivial BSCALE.
        let p = primary(
            "i32_scaled.fits",
            ImageType::Long,
            &shape,
            &d32,
            &[
                "BSCALE  =                 1E-3",
                "BZERO   =               -250.5",
            ],
        );
        let src = FitsSource::open(&p, 0).unwrap();
        let want: Vec<f64> = d32.iter().map(|&v| -250.5 + 1e-3 * v as f64).collect();
        check_all(&src, &want);
        assert_eq!(fitsio_values(&p, 0), want);

        // BITPIX 64 plain.
        let d64: Vec<i64> = (0..54).map(i64::make).collect();
        let p = primary("i64.fits", ImageType::LongLong, &shape, &d64, &[]);
        let src = FitsSource::open(&p, 0).unwrap();
        assert_eq!(src.stored_type().sample, SampleType::I64);
        let want: Vec<f64> = d64.iter().map(|&v| v as f64).collect();
        check_all(&src, &want);
    }

    #[test]
    fn fits_unsigned_and_signed_byte_conventions_are_exact() {
        let shape = [5, 8];
        // BITPIX 16 + BZERO 32768 (written by fitsio from u16 data).
        let du16: Vec<u16> = (0..40).map(u16::make).collect();
        let p = primary("u16.fits", ImageType::UnsignedShort, &shape, &du16, &[]);
        let src = FitsSource::open(&p, 0).unwrap();
        assert_eq!(src.bitpix(), 16);
        assert_eq!(src.scaling(), (1.0, 32768.0));
        assert_eq!(
            src.stored_type(),
            StoredType {
                sample: SampleType::U16,
                big_endian: false,
                scaled: false
            }
        );
        let want: Vec<f64> = du16.iter().map(|&v| v as f64).collect();
        check_all(&src, &want);
        assert_eq!(fitsio_values(&p, 0), want);

        // BITPIX 32 + BZERO 2^31.
        let du32: Vec<u32> = (0..40).map(u32::make).collect();
        let p = primary("u32.fits", ImageType::UnsignedLong, &shape, &du32, &[]);
        let src = FitsSource::open(&p, 0).unwrap();
        assert_eq!(src.stored_type().sample, SampleType::U32);
        let want: Vec<f64> = du32.iter().map(|&v| v as f64).collect();
        check_all(&src, &want);

        // BITPIX 8 + BZERO -128 (signed bytes), with a BLANK (raw stored value 0 = -128).
        let di8: Vec<i8> = (0..40).map(i8::make).collect();
        let p = primary(
            "i8.fits",
            ImageType::Byte,
            &shape,
            &di8,
            &["BLANK   =                    0"],
        );
        let src = FitsSource::open(&p, 0).unwrap();
        assert_eq!(src.bitpix(), 8);
        assert_eq!(src.stored_type().sample, SampleType::I8);
        let want: Vec<f64> = di8
            .iter()
            .map(|&v| if v == i8::MIN { f64::NAN } else { v as f64 })
            .collect();
        check_all(&src, &want);

        // BITPIX 64 + BZERO 2^63: exact u64 decoding of raw i64 data.
        let raw: Vec<i64> = (0..40).map(i64::make).collect();
        let p = primary(
            "u64.fits",
            ImageType::LongLong,
            &shape,
            &raw,
            &[
                "BZERO   =  9223372036854775808",
                "BSCALE  =                    1",
            ],
        );
        let src = FitsSource::open(&p, 0).unwrap();
        assert_eq!(src.stored_type().sample, SampleType::U64);
        let want: Vec<f64> = raw
            .iter()
            .map(|&v| ((v as u64) ^ (1 << 63)) as f64)
            .collect();
        check_all(&src, &want);
    }

    #[test]
    fn fits_extensions_header_and_wcs() {
        let p = tmp("ext.fits");
        let mut f = FitsFile::create(&p).open().unwrap(); // empty primary
        let data: Vec<f32> = (0..20 * 30).map(|i| i as f32 * 0.25).collect();
        let hdu = f
            .create_image(
                "SCI",
                &ImageDescription {
                    data_type: ImageType::Float,
                    dimensions: &[20, 30],
                },
            )
            .unwrap();
        hdu.write_image(&mut f, &data).unwrap();
        for c in [
            "CTYPE1  = 'RA---TAN'",
            "CTYPE2  = 'DEC--TAN'",
            "CRPIX1  =                 15.5",
            "CRPIX2  =                 10.5",
            "CRVAL1  =                 83.6",
            "CRVAL2  =                 22.0",
            "CDELT1  =               -0.001",
            "CDELT2  =                0.001",
        ] {
            card(&mut f, c);
        }
        // A 1-D image and a table after it.
        let hdu = f
            .create_image(
                "ONED",
                &ImageDescription {
                    data_type: ImageType::Double,
                    dimensions: &[7],
                },
            )
            .unwrap();
        hdu.write_image(&mut f, &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
            .unwrap();
        let col = fitsio::tables::ColumnDescription::new("A")
            .with_type(fitsio::tables::ColumnDataType::Int)
            .create()
            .unwrap();
        f.create_table("TAB", &[col]).unwrap();
        drop(f);

        let src = FitsSource::open(&p, 1).unwrap();
        assert_eq!(src.hdu(), 1);
        assert_eq!(src.shape(), &[20, 30]);
        assert_eq!(src.header_text().len() % 80, 0);
        assert!(src.header_text().starts_with("XTENSION= 'IMAGE   '"));
        assert!(
            src.header_cards().any(|c| c.starts_with("EXTNAME = 'SCI ")),
            "{:?}",
            src.header_cards().collect::<Vec<_>>()
        );
        let wcs = src.wcs().unwrap();
        let (ra, dec) = wcs.pixel_to_world(14.5, 9.5).unwrap();
        assert!((ra - 83.6).abs() < 1e-9 && (dec - 22.0).abs() < 1e-9);
        let want: Vec<f64> = data.iter().map(|&v| v as f64).collect();
        check_all(&src, &want);

        let one = FitsSource::open(&p, 2).unwrap();
        assert_eq!(one.shape(), &[1, 7]);
        assert_eq!(one.planes(), 1);
        let mut out = [0.0; 3];
        one.read_window(0, 0..1, 4..7, &mut out).unwrap();
        assert_eq!(out, [5.0, 6.0, 7.0]);

        let e = FitsSource::open(&p, 0).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument(m) if m.contains("NAXIS = 0") && m.contains("extension")),
            "{e}"
        );
        let e = FitsSource::open(&p, 3).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument(m) if m.contains("binary table")),
            "{e}"
        );
        let e = FitsSource::open(&p, 4).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument(m) if m.contains("does not exist") && m.contains("4 HDU")),
            "{e}"
        );
        let e = FitsSource::open(&p, 100).unwrap_err();
        assert!(matches!(&e, Error::InvalidArgument(_)), "{e}");
        assert!(matches!(
            FitsSource::open(tmp("missing.fits"), 0),
            Err(Error::Io(_))
        ));
    }

    #[test]
    fn fits_truncated_and_garbage_files_are_clear_errors() {
        let shape = [40, 50];
        let data: Vec<f32> = (0..2000).map(|i| i as f32).collect();
        let p = primary("trunc_src.fits", ImageType::Float, &shape, &data, &[]);
        let good = fs::read(&p).unwrap();
        assert_eq!(good.len(), 2880 * 4);
        for cut in [
            2880 + 8000,
            good.len() - 2880 + 100,
            2880 + 4000,
            2880 + 1,
            2880,
            2000,
            80,
            3,
        ] {
            let q = tmp("trunc.fits");
            fs::write(&q, &good[..cut]).unwrap();
            let r = FitsSource::open(&q, 0);
            if cut >= 2880 + 8000 {
                // The data area is complete (only the padding is cut).
                let src = r.unwrap();
                check_all(&src, &data.iter().map(|&v| v as f64).collect::<Vec<_>>());
            } else {
                let e = r.expect_err(&format!("cut {cut}"));
                assert!(matches!(e, Error::Fits(_)), "cut {cut}: {e:?}");
                if cut >= 2880 {
                    assert!(e.to_string().contains("truncated"), "cut {cut}: {e}");
                }
            }
        }
        let q = tmp("garbage.fits");
        fs::write(&q, vec![b'x'; 5760]).unwrap();
        assert!(matches!(FitsSource::open(&q, 0), Err(Error::Fits(_))));
        fs::write(&q, b"").unwrap();
        assert!(FitsSource::open(&q, 0).is_err());
    }

    #[test]
    fn fits_tile_compressed_images_are_read_through_cfitsio() {
        let p = tmp("compressed.fits");
        let mut f = FitsFile::create(&p).open().unwrap();
        let mut status = 0;
        unsafe {
            fitsio::sys::fits_set_compression_type(
                f.as_raw(),
                fitsio::sys::RICE_1 as i32,
                &mut status,
            )
        };
        assert_eq!(status, 0);
        let shape = [2, 33, 47];
        let d16: Vec<i16> = (0..2 * 33 * 47).map(i16::make).collect();
        let hdu = f
            .create_image(
                "ICOMP",
                &ImageDescription {
                    data_type: ImageType::Short,
                    dimensions: &shape,
                },
            )
            .unwrap();
        hdu.write_image(&mut f, &d16).unwrap();
        card(&mut f, "CTYPE1  = 'GLON-CAR'");
        let df: Vec<f32> = (0..33 * 47)
            .map(|i| (i as f32 * 0.731).sin() * 100.0)
            .collect();
        let hdu = f
            .create_image(
                "FCOMP",
                &ImageDescription {
                    data_type: ImageType::Float,
                    dimensions: &[33, 47],
                },
            )
            .unwrap();
        hdu.write_image(&mut f, &df).unwrap();
        drop(f);

        // Really compressed: the HDUs are binary tables on disk.
        let bytes = fs::read(&p).unwrap();
        assert!(bytes.windows(6).any(|w| w == b"ZIMAGE"));

        let src = FitsSource::open(&p, 1).unwrap();
        assert!(src.is_compressed() && !src.is_memory_mapped());
        assert_eq!(src.shape(), &shape);
        assert_eq!(src.bitpix(), 16);
        assert_eq!(
            src.stored_type(),
            StoredType {
                sample: SampleType::I16,
                big_endian: false,
                scaled: false
            }
        );
        assert!(!src.header_text().contains("ZIMAGE"));
        assert!(src
            .header_cards()
            .any(|c| c.starts_with("CTYPE1  = 'GLON-CAR'")));
        assert!(src.header_cards().any(|c| c.starts_with("NAXIS3  =")));
        check_all(&src, &d16.iter().map(|&v| v as f64).collect::<Vec<_>>());

        // Lossy float compression: identical to what CFITSIO itself decompresses.
        let src = FitsSource::open(&p, 2).unwrap();
        assert!(src.is_compressed());
        assert_eq!(src.stored_type().sample, SampleType::F32);
        let mut f = FitsFile::open(&p).unwrap();
        let h = f.hdu(2).unwrap();
        let cf: Vec<f32> = h.read_image(&mut f).unwrap();
        let want: Vec<f64> = cf.iter().map(|&v| v as f64).collect();
        check_all(&src, &want);
        // Quantisation steps follow the noise estimate of this rough test image: coarse.
        let worst = want
            .iter()
            .zip(&df)
            .map(|(a, b)| (a - *b as f64).abs())
            .fold(0.0, f64::max);
        assert!(worst < 50.0, "{worst}");
    }

    #[test]
    fn fits_gzipped_file_is_read_into_memory() {
        let p = tmp("gz.fits.gz");
        let shape = [12, 10];
        let data: Vec<i16> = (0..120).map(|i| i as i16 - 60).collect();
        let desc = ImageDescription {
            data_type: ImageType::Short,
            dimensions: &shape,
        };
        let mut f = FitsFile::create(&p)
            .with_custom_primary(&desc)
            .open()
            .unwrap();
        f.primary_hdu().unwrap().write_image(&mut f, &data).unwrap();
        drop(f);
        let head = fs::read(&p).unwrap();
        assert!(
            head.starts_with(&[0x1f, 0x8b]),
            "CFITSIO writes .gz names gzipped"
        );
        let src = FitsSource::open(&p, 0).unwrap();
        assert!(!src.is_memory_mapped() && !src.is_compressed());
        assert_eq!(src.stored_type().sample, SampleType::I16);
        assert!(!src.stored_type().big_endian);
        check_all(&src, &data.iter().map(|&v| v as f64).collect::<Vec<_>>());
    }

    #[test]
    fn fits_source_is_send_and_sync_and_reads_in_parallel() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<FitsSource>();
        assert_send_sync::<NpySource>();
        let data: Vec<f64> = (0..64 * 64).map(|i| i as f64).collect();
        let p = primary("par.fits", ImageType::Double, &[64, 64], &data, &[]);
        let src = FitsSource::open(&p, 0).unwrap();
        std::thread::scope(|s| {
            for t in 0..4 {
                let src = &src;
                s.spawn(move || {
                    let mut out = vec![0.0; 16 * 64];
                    src.read_window(0, t * 16..t * 16 + 16, 0..64, &mut out)
                        .unwrap();
                    assert_eq!(out[0], (t * 16 * 64) as f64);
                });
            }
        });
    }
}
