//! The headers of every HDU walked before CFITSIO reads a file, to refuse the table headers
//! CFITSIO 3.49 mishandles.

use std::fs::File;
use std::io::{Read, Seek};
use std::path::Path;

use crate::error::{Error, Result};

/// FITS block size.
const BLOCK: usize = 2880;

/// Sources the header walk reads: a plain file (data skipped by seeking) or a gzip stream
/// (data skipped by decompressing).
trait HeaderStream: Read {
    fn skip(&mut self, n: u64) -> std::io::Result<()>;
}

impl HeaderStream for std::io::BufReader<File> {
    fn skip(&mut self, n: u64) -> std::io::Result<()> {
        let n = i64::try_from(n).map_err(|_| std::io::ErrorKind::InvalidInput)?;
        self.seek_relative(n)
    }
}

impl<R: Read> HeaderStream for flate2::read::MultiGzDecoder<R> {
    fn skip(&mut self, n: u64) -> std::io::Result<()> {
        std::io::copy(&mut self.by_ref().take(n), &mut std::io::sink()).map(|_| ())
    }
}

/// Checks every HDU header of a FITS file (plain or gzipped) for what CFITSIO 3.49, the
/// version `fitsio-src` builds, mishandles, before CFITSIO reads the file. A table header
/// must start with BITPIX, NAXIS, NAXIS1, NAXIS2, PCOUNT, GCOUNT and TFIELDS (cards 2 to 8).
/// CFITSIO's `ffgttb` (getkey.c) checks them one by one but, through three typos
/// (`return(*status == BAD_NAXES)`, twice, and `return(*status == BAD_TFIELDS)`) and an error
/// status it does not test (an illegal character in one of those cards), can report success
/// with the column count unset or above 999; `ffbinit`/`ffainit` then allocate and initialise
/// that many column descriptors: a few kB of hostile header cost gigabytes or crash. Such
/// headers are refused here, as CFITSIO means to refuse them. Found by fuzzing (`fuzz/`,
/// target `fits_open`).
///
/// Only headers are read (data are skipped); a structure this walk cannot follow (no `END`,
/// unreadable `NAXISn`, end of file) is left to CFITSIO to report.
pub(super) fn check_hdu_headers(path: &Path) -> Result<()> {
    let p = path.display();
    let io_err = |e: std::io::Error| Error::Io(format!("{p}: {e}"));
    let mut file = File::open(path).map_err(io_err)?;
    let mut magic = [0u8; 2];
    let gzipped = file.read_exact(&mut magic).is_ok() && magic == [0x1f, 0x8b];
    file.rewind().map_err(io_err)?;
    let outcome = if gzipped {
        walk_headers(&mut flate2::read::MultiGzDecoder::new(
            std::io::BufReader::new(file),
        ))
    } else {
        walk_headers(&mut std::io::BufReader::with_capacity(BLOCK, file))
    };
    outcome.map_err(|reason| Error::Fits(format!("{p}: {reason}")))
}

/// The header keywords the walk needs, as integers (`None`: absent or not an integer).
#[derive(Default)]
struct HduKeys {
    bitpix: Option<i64>,
    naxis: Option<i64>,
    naxisn: Vec<(usize, Option<i64>)>,
    pcount: Option<i64>,
    gcount: Option<i64>,
    groups: bool,
    /// ZIMAGE = T (a tile-compressed image in a binary table).
    zimage: bool,
    znaxis: Option<i64>,
    /// ZNAXISn and ZTILEn value fields (first occurrence).
    zaxes: Vec<(usize, String)>,
    ztiles: Vec<(usize, String)>,
}

/// Cards 2 to 8 of a table header and their allowed values.
const TABLE_CARDS: [(&str, std::ops::RangeInclusive<i64>); 7] = [
    ("BITPIX", 8..=8),
    ("NAXIS", 2..=2),
    ("NAXIS1", 0..=i64::MAX),
    ("NAXIS2", 0..=i64::MAX),
    ("PCOUNT", 0..=i64::MAX),
    ("GCOUNT", 1..=1),
    ("TFIELDS", 0..=999),
];

/// A card's keyword as CFITSIO's `ffgknm` reads it: up to the first blank or `=`.
fn cfitsio_keyword(card: &[u8]) -> &[u8] {
    let end = card[..74]
        .iter()
        .position(|&b| b == b' ' || b == b'=' || b == 0)
        .unwrap_or(74);
    &card[..end]
}

/// The value field of a card (after the first `=`, before a `/`), trimmed; a NUL ends the
/// card, as in CFITSIO's C strings.
fn card_value(card: &[u8]) -> String {
    let card = &card[..card.iter().position(|&b| b == 0).unwrap_or(card.len())];
    let Some(eq) = card.iter().position(|&b| b == b'=') else {
        return String::new();
    };
    let text: String = card[eq + 1..].iter().map(|&b| b as char).collect();
    text.split('/').next().unwrap_or("").trim().to_string()
}

/// A string value as CFITSIO's `ffc2s` reads it: between the quotes, blanks trimmed.
fn string_value(value: &str) -> &str {
    match value.strip_prefix('\'') {
        Some(rest) => rest.split('\'').next().unwrap_or(rest).trim(),
        None => value.trim(),
    }
}

/// The tile sizes of a tile-compressed image as CFITSIO's `imcomp_get_compressed_image_par`
/// reads them when it opens the HDU: ZTILEn (default ZNAXIS1 for the first axis, 1 for the
/// others) divides `ZNAXISn - 1` unchecked, so a zero or -1 tile size is SIGFPE (found by
/// fuzzing). Such tile sizes, and ones that are not plain integers, are refused here.
fn check_tiles(hdu: usize, keys: &HduKeys) -> std::result::Result<(), String> {
    let Some(znaxis) = keys.znaxis.filter(|n| (1..=6).contains(n)) else {
        return Ok(()); // CFITSIO refuses the image before dividing
    };
    for n in 1..=znaxis as usize {
        let field =
            |list: &Vec<(usize, String)>| list.iter().find(|k| k.0 == n).map(|k| k.1.clone());
        let (key, text) = match (field(&keys.ztiles), n) {
            (Some(t), _) => (format!("ZTILE{n}"), t),
            (None, 1) => (
                "ZNAXIS1".to_string(),
                field(&keys.zaxes).unwrap_or_default(),
            ),
            (None, _) => continue,
        };
        if !text.parse::<i64>().is_ok_and(|t| t >= 1) {
            return Err(format!(
                "HDU {hdu}: tile-compressed image with tile size {key} = '{text}' (must be a \
                 positive integer)"
            ));
        }
    }
    Ok(())
}

/// An integer value, also written as a float with no fraction (`1.0E3`).
fn parse_int(value: &str) -> Option<i64> {
    value.parse::<i64>().ok().or_else(|| {
        let v = value.replace(['D', 'd'], "E").parse::<f64>().ok()?;
        (v.fract() == 0.0 && v.abs() < 9.2e18).then_some(v as i64)
    })
}

/// Reads up to `buf.len()` bytes (fewer only at the end of the stream or on an error).
fn read_full(stream: &mut dyn HeaderStream, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match stream.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    n
}

/// Walks the HDUs; `Err` only for a header CFITSIO must not see.
///
/// Headers are followed by skipping their data. Where the data size cannot be worked out (a
/// mandatory value this walk cannot read, which CFITSIO may still read its own way), every
/// following 2880-byte block that starts with `XTENSION` is checked as a header instead, so
/// that no table CFITSIO could reach goes unchecked.
fn walk_headers(stream: &mut dyn HeaderStream) -> std::result::Result<(), String> {
    let mut block = vec![0u8; BLOCK];
    let mut scanning = false;
    for hdu in 0usize.. {
        let mut n = read_full(stream, &mut block);
        if scanning {
            while n > 0 && cfitsio_keyword(&pad_card(&block[..n.min(80)])) != b"XTENSION" {
                n = read_full(stream, &mut block);
            }
        }
        if n == 0 {
            return Ok(());
        }
        let Some(keys) = read_header(stream, &mut block, n, hdu)? else {
            return Ok(()); // the file ends inside this header
        };
        match data_size(&keys) {
            Some(bytes) => {
                let padded = bytes.div_ceil(BLOCK as u64).saturating_mul(BLOCK as u64);
                if padded >= i64::MAX as u64 || stream.skip(padded).is_err() {
                    return Ok(());
                }
                scanning = false;
            }
            None => scanning = true,
        }
    }
    Ok(())
}

/// A card of up to 80 bytes, NUL-padded to 80.
fn pad_card(card: &[u8]) -> [u8; 80] {
    let mut out = [0u8; 80];
    out[..card.len()].copy_from_slice(card);
    out
}

/// Reads (and checks) one header whose first `n` bytes are in `block`; `None` when the file
/// ends before its END card.
fn read_header(
    stream: &mut dyn HeaderStream,
    block: &mut [u8],
    mut n: usize,
    hdu: usize,
) -> std::result::Result<Option<HduKeys>, String> {
    let mut keys = HduKeys::default();
    let mut number = 0usize;
    let mut table = false;
    loop {
        // A short last block is checked too: CFITSIO reads the cards it holds.
        block[n..].fill(0);
        for card in block.chunks_exact(80).take(n.div_ceil(80)) {
            number += 1;
            let keyword = cfitsio_keyword(card);
            if number == 1 {
                let value = card_value(card);
                let xtension = string_value(&value);
                table = keyword == b"XTENSION"
                    && matches!(xtension, "TABLE" | "BINTABLE" | "A3DTABLE" | "3DTABLE");
            }
            // The table cards CFITSIO reads by position (see above).
            if table && (2..=8).contains(&number) {
                let (want, range) = &TABLE_CARDS[number - 2];
                let value = card_value(card);
                let printable = card.iter().all(|&b| (32..127).contains(&b));
                let ok = printable
                    && keyword == want.as_bytes()
                    && value.parse::<i64>().is_ok_and(|v| range.contains(&v));
                if !ok {
                    return Err(format!(
                        "HDU {hdu}: malformed table header: card {number} must be {want} \
                         with an integer in {range:?}, found '{}'",
                        String::from_utf8_lossy(card).trim_end()
                    ));
                }
            }
            // CFITSIO ends a header at the first card whose keyword is END.
            if keyword == b"END" {
                if table && keys.zimage {
                    check_tiles(hdu, &keys)?;
                }
                return Ok(Some(keys));
            }
            let name = std::str::from_utf8(keyword).unwrap_or("");
            let value = card_value(card);
            let int = value.parse::<i64>().ok();
            // The first occurrence counts (CFITSIO reads the mandatory cards by position).
            match name {
                "BITPIX" => keys.bitpix = keys.bitpix.or(int),
                "NAXIS" => keys.naxis = keys.naxis.or(int),
                "PCOUNT" => keys.pcount = keys.pcount.or(int),
                "GCOUNT" => keys.gcount = keys.gcount.or(int),
                "GROUPS" => keys.groups = value == "T",
                "ZIMAGE" => keys.zimage |= value.starts_with('T'),
                "ZNAXIS" => keys.znaxis = keys.znaxis.or(parse_int(&value)),
                _ if name.starts_with("ZNAXIS") || name.starts_with("ZTILE") => {
                    let (list, digits) = match name.strip_prefix("ZNAXIS") {
                        Some(d) => (&mut keys.zaxes, d),
                        None => (&mut keys.ztiles, &name[5..]),
                    };
                    if let Ok(n) = digits.parse::<usize>()
                        && !list.iter().any(|k| k.0 == n)
                    {
                        list.push((n, value));
                    }
                }
                _ => {
                    let axis = name.strip_prefix("NAXIS").and_then(|s| s.parse().ok());
                    if let Some(n) = axis.filter(|n| !keys.naxisn.iter().any(|k| k.0 == *n)) {
                        keys.naxisn.push((n, int));
                    }
                }
            }
        }
        n = read_full(stream, block);
        if n == 0 {
            // CFITSIO reads a table's first 8 cards whether or not they are in the file.
            if table && number < 8 {
                return Err(format!(
                    "HDU {hdu}: malformed table header: the file ends after {number} card(s)"
                ));
            }
            if table && keys.zimage {
                check_tiles(hdu, &keys)?;
            }
            return Ok(None);
        }
    }
}

/// The size in bytes of an HDU's data (FITS standard 4.4.1.1), `None` when a value it needs
/// is missing or not a plain non-negative integer.
fn data_size(keys: &HduKeys) -> Option<u64> {
    let bitpix = keys.bitpix?;
    let naxis = usize::try_from(keys.naxis?).ok()?;
    if naxis == 0 {
        return Some(0);
    }
    let mut count: u64 = 1;
    for axis in 1..=naxis {
        let len = keys.naxisn.iter().find(|(n, _)| *n == axis)?.1?;
        let len = u64::try_from(len).ok()?;
        if axis == 1 && len == 0 && keys.groups {
            continue;
        }
        count = count.saturating_mul(len);
    }
    let pcount = u64::try_from(keys.pcount.unwrap_or(0)).ok()?;
    let gcount = u64::try_from(keys.gcount.unwrap_or(1)).ok()?;
    Some(
        (bitpix.unsigned_abs() / 8)
            .saturating_mul(gcount)
            .saturating_mul(pcount.saturating_add(count)),
    )
}
