//! Helpers shared by the fuzz bodies: temporary input files, a byte reader for structured
//! inputs, and the checks run on every WCS that builds.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use reproject::io::ImageSource;
use reproject::pixel_transform::PixelTransform;
use reproject::wcs::Wcs;

/// One fuzz input written to a file (the readers under test take paths), removed on drop.
///
/// The directory is `$REPROJECT_FUZZ_TMPDIR`, else `/dev/shm` when it exists (no disk
/// traffic), else the system temp directory. Names hold only `[a-z0-9-.]`, so CFITSIO's
/// extended filename syntax (`file.fits[1]`, `file.gz`, ...) never applies.
pub struct TempInput {
    path: PathBuf,
}

impl TempInput {
    pub fn new(extension: &str, bytes: &[u8]) -> TempInput {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::var_os("REPROJECT_FUZZ_TMPDIR")
            .map(PathBuf::from)
            .or_else(|| {
                let shm = Path::new("/dev/shm");
                shm.is_dir().then(|| shm.to_path_buf())
            })
            .unwrap_or_else(std::env::temp_dir);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(
            "reproject-fuzz-{}-{n}.{extension}",
            std::process::id()
        ));
        std::fs::write(&path, bytes).expect("cannot write the fuzz input to a temporary file");
        TempInput { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempInput {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Reads structured values from the fuzz bytes; past the end every read gives zeros, so any
/// input decodes to something.
pub struct Reader<'a> {
    data: &'a [u8],
}

/// Values that exercise special cases of the transforms.
const SPECIAL: [f64; 32] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2.0,
    45.0,
    -45.0,
    90.0,
    -90.0,
    180.0,
    -180.0,
    270.0,
    360.0,
    -360.0,
    720.0,
    1e-300,
    1e-13,
    1e-7,
    1e7,
    1e15,
    1e300,
    -1e300,
    f64::MAX,
    f64::MIN,
    f64::MIN_POSITIVE,
    f64::EPSILON,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    89.99999999999,
    57.29577951308232,
];

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Reader<'a> {
        Reader { data }
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub fn bool(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    /// An index below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.byte() as usize % n
    }

    pub fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        for b in &mut out {
            *b = self.byte();
        }
        out
    }

    /// Any f64, NaN and infinities included, biased towards the values that matter.
    pub fn f64(&mut self) -> f64 {
        match self.byte() % 8 {
            0 | 1 => SPECIAL[self.below(SPECIAL.len())],
            2 => self.byte() as i8 as f64,
            3 => i16::from_le_bytes(self.bytes()) as f64 / 100.0,
            4 => i32::from_le_bytes(self.bytes()) as f64 * 1e-6,
            5 => {
                // A value near a special one.
                let base = SPECIAL[self.below(SPECIAL.len())];
                let ulps = self.byte() as i8 as i64;
                if base.is_finite() {
                    f64::from_bits((base.to_bits() as i64).wrapping_add(ulps) as u64)
                } else {
                    base
                }
            }
            _ => f64::from_le_bytes(self.bytes()),
        }
    }

    /// A finite f64 in a "reasonable" range (for values that must parse as FITS numbers most
    /// of the time to get anywhere).
    pub fn finite(&mut self) -> f64 {
        let v = self.f64();
        if v.is_finite() {
            v
        } else {
            self.byte() as f64
        }
    }

    /// A pixel or world coordinate pair.
    pub fn point(&mut self) -> (f64, f64) {
        (self.f64(), self.f64())
    }
}

/// Pixel positions tried on every WCS, besides the fuzzed ones.
pub const PIXELS: [(f64, f64); 8] = [
    (0.0, 0.0),
    (-0.5, -0.5),
    (99.5, 49.5),
    (-1e6, 1e6),
    (1e300, -1e300),
    (f64::NAN, 0.0),
    (0.0, f64::INFINITY),
    (f64::NEG_INFINITY, f64::NAN),
];

/// World positions (lon, lat) tried on every WCS, besides the fuzzed ones.
pub const WORLDS: [(f64, f64); 10] = [
    (0.0, 0.0),
    (180.0, 90.0),
    (359.999, -90.0),
    (-720.0, 45.0),
    (45.0, 90.000000001),
    (1e300, 0.0),
    (0.0, -1e300),
    (f64::NAN, 0.0),
    (0.0, f64::INFINITY),
    (266.4, -28.9),
];

fn finite(p: (f64, f64)) -> bool {
    p.0.is_finite() && p.1.is_finite()
}

/// The checks run on every WCS that builds: no panic anywhere, and every transform that
/// claims a result (`Some`) gives finite numbers. `points` are extra pixel/world positions.
pub fn check_wcs(wcs: &Wcs, points: &[(f64, f64)]) {
    let pixels = PIXELS.iter().chain(points);
    let worlds = WORLDS.iter().chain(points);
    for &(x, y) in pixels {
        if let Some(w) = wcs.pixel_to_world(x, y) {
            assert!(finite(w), "pixel_to_world({x:?}, {y:?}) = {w:?}");
            if let Some(p) = wcs.world_to_pixel(w.0, w.1) {
                assert!(
                    finite(p),
                    "world_to_pixel{w:?} = {p:?} (from pixel {x:?}, {y:?})"
                );
            }
        }
        let _ = wcs.pixel_to_focal(x, y);
    }
    for &(lon, lat) in worlds {
        if let Some(p) = wcs.world_to_pixel(lon, lat) {
            assert!(finite(p), "world_to_pixel({lon:?}, {lat:?}) = {p:?}");
        }
    }
    // The N-dimensional forms (may be errors for unsupported axes; NaN is allowed there).
    let n = wcs.naxis();
    if n <= 8 {
        let pixel: Vec<f64> = (0..n).map(|i| i as f64 * 3.5 - 1.0).collect();
        if let Ok(world) = wcs.pixel_to_world_nd(&pixel) {
            let _ = wcs.world_to_pixel_nd(&world);
        }
        let _ = wcs.pixel_to_world_nd(&pixel[..n.saturating_sub(1)]);
    }
    if let Ok(cel) = wcs.celestial() {
        for &(x, y) in PIXELS.iter().chain(points).take(12) {
            if let Some(v) = cel.pixel_to_native_vector(x, y) {
                assert!(
                    v.iter().all(|c| c.is_finite()),
                    "pixel_to_native_vector = {v:?}"
                );
                if let Some(p) = cel.native_vector_to_pixel(v) {
                    assert!(finite(p), "native_vector_to_pixel({v:?}) = {p:?}");
                }
            }
        }
    }
    // Serialisation is part of the API (plans are shipped to processes and devices); what it
    // produces must read back or fail cleanly.
    if let Ok(json) = serde_json::to_string(wcs) {
        let _ = serde_json::from_str::<Wcs>(&json);
    }
}

/// `PixelTransform::new` and `general` between two WCS, mapping the given output pixels:
/// every `Some` must be finite.
pub fn check_pixel_transform(wcs_out: &Wcs, wcs_in: &Wcs, points: &[(f64, f64)]) {
    for t in [
        PixelTransform::new(wcs_out, wcs_in),
        PixelTransform::general(wcs_out, wcs_in),
    ]
    .into_iter()
    .flatten()
    {
        let _ = t.homography();
        for &(x, y) in PIXELS.iter().chain(points) {
            if let Some(p) = t.map(x, y) {
                assert!(finite(p), "PixelTransform::map({x:?}, {y:?}) = {p:?}");
            }
        }
    }
}

/// Reads a few windows of every plane-shape corner of a source: in-range windows must read,
/// out-of-range ones must be errors; nothing may panic.
pub fn check_source(src: &dyn ImageSource) {
    let shape = src.shape().to_vec();
    let _ = src.stored_type();
    let planes = src.planes();
    let (ny, nx) = src.plane_shape();
    let total: u128 = shape.iter().map(|&n| n as u128).product();
    assert_eq!(
        total,
        planes as u128 * ny as u128 * nx as u128,
        "shape {shape:?} vs planes {planes} x {ny} x {nx}"
    );
    let mut small = [0.0; 4];
    if planes == 0 || ny == 0 || nx == 0 {
        assert!(
            src.read_window(0, 0..1, 0..1, &mut small[..1]).is_err(),
            "a window of an empty image read"
        );
        return;
    }
    let (h, w) = (ny.min(3), nx.min(3));
    let mut out = vec![0.0; h * w];
    for plane in [0, planes - 1] {
        for (r, c) in [(0, 0), (ny - h, nx - w)] {
            if let Err(e) = src.read_window(plane, r..r + h, c..c + w, &mut out) {
                panic!("in-range window plane {plane} rows {r}.. cols {c}.. of {shape:?}: {e}");
            }
        }
    }
    // Out of range, and a wrong output length: errors, not panics.
    assert!(src
        .read_window(planes, 0..1, 0..1, &mut small[..1])
        .is_err());
    assert!(src
        .read_window(0, ny..ny + 1, 0..1, &mut small[..1])
        .is_err());
    assert!(src
        .read_window(0, 0..1, nx - 1..nx + 1, &mut small[..2])
        .is_err());
    assert!(src.read_window(0, 0..1, 0..1, &mut small[..2]).is_err());
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = src.read_window(0, 1..0, 0..1, &mut small[..0]);
    assert!(reversed.is_err(), "reversed row range accepted");
}
