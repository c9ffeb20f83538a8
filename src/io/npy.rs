//! Memory-mapped `.npy` files ([`NpySource`]).
//!
//! The header is parsed here (format versions 1.0, 2.0 and 3.0); the data are memory-mapped
//! and only the windows the engine asks for are touched and converted (byte swapping on the
//! fly). The file length is checked against the header before any mapped byte is read, so a
//! truncated file is an error, not a crash.

use std::fs::File;
use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use crate::error::{Error, Result};
use crate::io::decode::{ByteImage, Decoder, Layout};
use crate::io::sample::{parse_numpy_dtype, sample_size, ByteOrder, StoredType};
use crate::io::ImageSource;

/// The `.npy` magic string.
pub(crate) const NPY_MAGIC: &[u8; 6] = b"\x93NUMPY";
/// Longest header accepted (numpy itself refuses more than 10 000 bytes by default).
const MAX_HEADER: usize = 1 << 20;
/// Deepest nesting of tuples, lists and dictionaries accepted in a header.
const MAX_DEPTH: usize = 32;

/// A parsed `.npy` header.
///
/// ```
/// use reproject::io::NpyHeader;
/// let h = NpyHeader::parse_dict("{'descr': '>f4', 'fortran_order': False, 'shape': (3, 4), }")?;
/// assert_eq!(h.descr, ">f4");
/// assert_eq!(h.shape, vec![3, 4]);
/// assert!(!h.fortran_order);
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyHeader {
    /// The dtype string, e.g. `'<f4'`.
    pub descr: String,
    /// Whether the data are stored column-major.
    pub fortran_order: bool,
    /// The shape.
    pub shape: Vec<usize>,
}

impl NpyHeader {
    /// Parses the header dictionary (the Python literal after the magic and length fields).
    ///
    /// ```
    /// use reproject::io::NpyHeader;
    /// assert!(NpyHeader::parse_dict(
    ///     "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}"
    /// )
    /// .is_err());
    /// ```
    pub fn parse_dict(text: &str) -> Result<NpyHeader> {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
            depth: 0,
        };
        let value = p.value()?;
        p.skip_ws();
        if p.i != p.s.len() {
            return Err(p.err("trailing characters after the dictionary"));
        }
        let PyVal::Dict(items) = value else {
            return Err(malformed("the header is not a dictionary"));
        };
        let get = |key: &str| {
            items
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v)
                .ok_or_else(|| malformed(&format!("the header has no '{key}' key")))
        };
        let descr = match get("descr")? {
            PyVal::Str(s) => s.clone(),
            PyVal::List(fields) => {
                return Err(Error::InvalidValue {
                    keyword: "descr".into(),
                    reason: format!(
                        "structured (record) arrays are not supported ({} fields)",
                        fields.len()
                    ),
                })
            }
            _ => return Err(malformed("'descr' is not a string")),
        };
        let fortran_order = match get("fortran_order")? {
            PyVal::Bool(b) => *b,
            _ => return Err(malformed("'fortran_order' is not True or False")),
        };
        let shape = match get("shape")? {
            PyVal::Tuple(v) => v
                .iter()
                .map(|x| match x {
                    PyVal::Int(n) => usize::try_from(*n)
                        .map_err(|_| malformed(&format!("shape entry {n} is too large"))),
                    _ => Err(malformed("'shape' holds something other than integers")),
                })
                .collect::<Result<Vec<_>>>()?,
            _ => return Err(malformed("'shape' is not a tuple")),
        };
        Ok(NpyHeader {
            descr,
            fortran_order,
            shape,
        })
    }
}

fn malformed(reason: &str) -> Error {
    Error::Io(format!("malformed .npy header: {reason}"))
}

/// A Python literal as found in `.npy` headers.
#[derive(Debug)]
enum PyVal {
    Str(String),
    Bool(bool),
    Int(u64),
    None,
    Tuple(Vec<PyVal>),
    List(Vec<PyVal>),
    Dict(Vec<(String, PyVal)>),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn err(&self, what: &str) -> Error {
        malformed(&format!("{what} at character {}", self.i))
    }

    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8) -> Result<()> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.err(&format!("expected '{}'", c as char)))
        }
    }

    /// Items up to `close`, separated by commas, trailing comma allowed.
    fn seq(&mut self, close: u8) -> Result<Vec<PyVal>> {
        let mut v = Vec::new();
        loop {
            if self.peek() == Some(close) {
                self.i += 1;
                return Ok(v);
            }
            v.push(self.value()?);
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == close => {}
                _ => return Err(self.err(&format!("expected ',' or '{}'", close as char))),
            }
        }
    }

    fn value(&mut self) -> Result<PyVal> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("too deeply nested"));
        }
        let v = self.value_inner();
        self.depth -= 1;
        v
    }

    fn value_inner(&mut self) -> Result<PyVal> {
        match self.peek() {
            Some(b'{') => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    if self.peek() == Some(b'}') {
                        self.i += 1;
                        return Ok(PyVal::Dict(items));
                    }
                    let PyVal::Str(key) = self.value()? else {
                        return Err(self.err("dictionary key is not a string"));
                    };
                    self.expect(b':')?;
                    items.push((key, self.value()?));
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {}
                        _ => return Err(self.err("expected ',' or '}'")),
                    }
                }
            }
            Some(b'(') => {
                self.i += 1;
                Ok(PyVal::Tuple(self.seq(b')')?))
            }
            Some(b'[') => {
                self.i += 1;
                Ok(PyVal::List(self.seq(b']')?))
            }
            Some(q @ (b'\'' | b'"')) => {
                self.i += 1;
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i] != q {
                    if self.s[self.i] == b'\\' {
                        self.i += 1;
                    }
                    self.i += 1;
                }
                if self.i >= self.s.len() {
                    return Err(self.err("unterminated string"));
                }
                let text = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                self.i += 1;
                Ok(PyVal::Str(text))
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
                    self.i += 1;
                }
                let digits = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                let n: u64 = digits
                    .parse()
                    .map_err(|_| self.err("integer out of range"))?;
                // Python 2 long suffix, as in files written by old numpy versions.
                if matches!(self.s.get(self.i), Some(b'L') | Some(b'l')) {
                    self.i += 1;
                }
                Ok(PyVal::Int(n))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i].is_ascii_alphanumeric() {
                    self.i += 1;
                }
                match &self.s[start..self.i] {
                    b"True" => Ok(PyVal::Bool(true)),
                    b"False" => Ok(PyVal::Bool(false)),
                    b"None" => Ok(PyVal::None),
                    _ => Err(self.err("unknown name")),
                }
            }
            Some(_) => Err(self.err("unexpected character")),
            None => Err(self.err("unexpected end of header")),
        }
    }
}

/// A `.npy` file, memory-mapped: an [`ImageSource`] that never reads the whole file.
///
/// Supports format versions 1.0, 2.0 and 3.0, dtypes `f4 f8 i1 u1 b1 i2 u2 i4 u4 i8 u8` in
/// either byte order (`b1` is served as `U8`), C and Fortran order, and at least 2 dimensions.
/// Big-endian data are swapped on the fly; `stored_type().big_endian` is true for non-native
/// multi-byte data.
///
/// The file must not be truncated or modified by another process while the source is alive
/// (the length is checked at open; a file shrunk afterwards could raise SIGBUS, as with any
/// memory map).
///
/// ```
/// use ndarray::Array2;
/// use reproject::io::{ImageSource, NpySource};
/// let path = std::env::temp_dir().join(format!("npy_doc_{}.npy", std::process::id()));
/// ndarray_npy::write_npy(
///     &path,
///     &Array2::from_shape_fn((3, 4), |(y, x)| (10 * y + x) as f32),
/// )
/// .unwrap();
/// let src = NpySource::open(&path)?;
/// assert_eq!(src.shape(), &[3, 4]);
/// let mut out = [0.0; 2];
/// src.read_window(0, 2..3, 2..4, &mut out)?;
/// assert_eq!(out, [22.0, 23.0]);
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug)]
pub struct NpySource {
    path: PathBuf,
    header: NpyHeader,
    version: (u8, u8),
    data_offset: usize,
    image: ByteImage<Mmap>,
}

impl NpySource {
    /// Opens and maps a `.npy` file, validating the header and the file length.
    ///
    /// Errors: [`Error::Io`] for a missing, garbage (bad magic, malformed header) or truncated
    /// file; [`Error::InvalidValue`] for unsupported dtypes; [`Error::ShapeMismatch`] for fewer
    /// than 2 dimensions.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("npy_doc_bad_{}.npy", std::process::id()));
    /// std::fs::write(&path, b"not a numpy file").unwrap();
    /// assert!(reproject::io::NpySource::open(&path).is_err());
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<NpySource> {
        let path = path.as_ref();
        let ctx = |e: std::io::Error| Error::Io(format!("{}: {e}", path.display()));
        let mut file = File::open(path).map_err(ctx)?;
        let file_len = file.metadata().map_err(ctx)?.len();
        let with_path = |e: Error| match e {
            Error::Io(m) => Error::Io(format!("{}: {m}", path.display())),
            Error::InvalidValue { keyword, reason } => Error::InvalidValue {
                keyword,
                reason: format!("{}: {reason}", path.display()),
            },
            Error::ShapeMismatch(m) => Error::ShapeMismatch(format!("{}: {m}", path.display())),
            other => other,
        };

        let mut pre = [0u8; 12];
        let n = read_up_to(&mut file, &mut pre).map_err(ctx)?;
        if n < 10 || &pre[..6] != NPY_MAGIC {
            return Err(with_path(Error::Io(
                "not a .npy file (missing the \\x93NUMPY magic string)".into(),
            )));
        }
        let version = (pre[6], pre[7]);
        let (hlen, hstart) = match version.0 {
            1 => (u16::from_le_bytes([pre[8], pre[9]]) as usize, 10usize),
            2 | 3 => {
                if n < 12 {
                    return Err(with_path(Error::Io("truncated .npy header".into())));
                }
                (
                    u32::from_le_bytes([pre[8], pre[9], pre[10], pre[11]]) as usize,
                    12usize,
                )
            }
            _ => {
                return Err(with_path(Error::Io(format!(
                    "unsupported .npy format version {}.{}",
                    version.0, version.1
                ))))
            }
        };
        if hlen > MAX_HEADER {
            return Err(with_path(Error::Io(format!(
                "malformed .npy header: {hlen} bytes long, more than {MAX_HEADER}"
            ))));
        }
        let data_offset = hstart + hlen;
        if (data_offset as u64) > file_len {
            return Err(with_path(Error::Io(format!(
                "truncated .npy file: the header needs {data_offset} bytes, the file has {file_len}"
            ))));
        }
        let map = {
            // SAFETY: the map is read-only; the file must not be truncated by another process
            // while mapped (documented). All reads are bounds-checked against the length.
            unsafe { Mmap::map(&file) }.map_err(ctx)?
        };
        if (map.len() as u64) < file_len {
            return Err(with_path(Error::Io(
                "the file shrank while being opened".into(),
            )));
        }
        let text = &map[hstart..data_offset];
        let text = if version.0 == 3 {
            std::str::from_utf8(text)
                .map_err(|_| with_path(malformed("the header is not UTF-8")))?
                .to_owned()
        } else {
            // Latin-1.
            text.iter().map(|&b| b as char).collect()
        };
        let header = NpyHeader::parse_dict(text.trim_end()).map_err(with_path)?;
        let (sample, order) = parse_numpy_dtype(&header.descr).map_err(with_path)?;
        if header.shape.len() < 2 {
            return Err(with_path(Error::ShapeMismatch(format!(
                "an image needs at least 2 dimensions, the file holds shape {:?}",
                header.shape
            ))));
        }
        let elem = sample_size(sample);
        let count = header
            .shape
            .iter()
            .try_fold(1usize, |a, &b| a.checked_mul(b))
            .and_then(|c| c.checked_mul(elem))
            .ok_or_else(|| with_path(Error::Io("the header's shape overflows".into())))?;
        let needed = data_offset as u64 + count as u64;
        if needed > file_len {
            return Err(with_path(Error::Io(format!(
                "truncated .npy file: shape {:?} of '{}' needs {count} data bytes after the \
                 {data_offset}-byte header ({needed} bytes in all), the file has {file_len}",
                header.shape, header.descr
            ))));
        }
        let layout = if header.fortran_order {
            Layout::f_contiguous(&header.shape, elem, data_offset)
        } else {
            Layout::c_contiguous(&header.shape, elem, data_offset)
        };
        layout.check_fits(elem, map.len()).map_err(with_path)?;
        Ok(NpySource {
            path: path.to_path_buf(),
            header,
            version,
            data_offset,
            image: ByteImage {
                bytes: map,
                layout,
                decoder: Decoder::plain(sample, order == ByteOrder::Big),
            },
        })
    }

    /// The parsed header.
    ///
    /// ```
    /// # let name = format!("npy_header_{}.npy", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// # ndarray_npy::write_npy(&path, &ndarray::Array2::<f32>::zeros((3, 4))).unwrap();
    /// let src = reproject::io::NpySource::open(&path)?;
    /// let header = src.header();
    /// assert_eq!((header.descr.as_str(), header.shape.as_slice()), ("<f4", &[3, 4][..]));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn header(&self) -> &NpyHeader {
        &self.header
    }

    /// The format version `(major, minor)`.
    ///
    /// ```
    /// # let name = format!("npy_version_{}.npy", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// # ndarray_npy::write_npy(&path, &ndarray::Array2::<f32>::zeros((3, 4))).unwrap();
    /// assert_eq!(reproject::io::NpySource::open(&path)?.version().0, 1);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn version(&self) -> (u8, u8) {
        self.version
    }

    /// Byte offset of the data in the file.
    ///
    /// ```
    /// # let name = format!("npy_offset_{}.npy", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// # ndarray_npy::write_npy(&path, &ndarray::Array2::<f32>::zeros((3, 4))).unwrap();
    /// let offset = reproject::io::NpySource::open(&path)?.data_offset();
    /// assert_eq!(offset % 16, 0);
    /// assert_eq!(std::fs::metadata(&path)?.len() as usize, offset + 3 * 4 * 4); // then the data
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn data_offset(&self) -> usize {
        self.data_offset
    }

    /// The byte order of the samples.
    ///
    /// ```
    /// use reproject::io::ByteOrder;
    /// # let name = format!("npy_order_{}.npy", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// # ndarray_npy::write_npy(&path, &ndarray::Array2::<f32>::zeros((3, 4))).unwrap();
    /// assert_eq!(reproject::io::NpySource::open(&path)?.byte_order(), ByteOrder::NATIVE);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn byte_order(&self) -> ByteOrder {
        self.image.byte_order()
    }

    /// The file's path.
    ///
    /// ```
    /// # let name = format!("npy_path_{}.npy", std::process::id());
    /// # let path = std::env::temp_dir().join(name);
    /// # ndarray_npy::write_npy(&path, &ndarray::Array2::<f32>::zeros((3, 4))).unwrap();
    /// let src = reproject::io::NpySource::open(&path)?;
    /// assert_eq!(src.path(), path.as_path());
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl ImageSource for NpySource {
    fn shape(&self) -> &[usize] {
        &self.header.shape
    }

    fn raw_plane(&self, plane: usize) -> Option<crate::io::RawPlane<'_>> {
        self.image.raw_plane(plane)
    }

    fn stored_type(&self) -> StoredType {
        self.image.plain_stored_type()
    }

    fn read_window(
        &self,
        plane: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        out: &mut [f64],
    ) -> Result<()> {
        self.image.read_window(plane, rows, cols, out)
    }
}

/// Reads as many bytes as available up to `buf.len()`.
fn read_up_to(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
