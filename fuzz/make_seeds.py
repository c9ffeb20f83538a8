#!/usr/bin/env python3
"""Writes the seed inputs of the fuzz targets into fuzz/seeds/<target>/ (not committed: the
committed corpus under fuzz/corpus/ is what `cargo fuzz cmin` keeps of the seeds plus what the
fuzzers found). Needs numpy and astropy; the headers come from ../shared/wcs-vectors (or
$WCS_VECTORS).

    python fuzz/make_seeds.py
"""
import gzip
import io
import os
import random
import shutil
import struct
import sys
from pathlib import Path

import warnings

import numpy as np
from astropy.io import fits
from astropy.utils.exceptions import AstropyWarning

warnings.simplefilter("ignore", AstropyWarning)

HERE = Path(__file__).resolve().parent
VECTORS = Path(os.environ.get("WCS_VECTORS", HERE.parent.parent / "shared" / "wcs-vectors"))
OUT = HERE / "seeds"


def target_dir(name):
    d = OUT / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    return d


def headers():
    return sorted(VECTORS.glob("*.hdr"))


def read_header(path):
    """A vector header (80-character cards, with or without newlines)."""
    text = Path(path).read_text()
    return fits.Header.fromstring(text, sep="\n" if "\n" in text else "")


def header_text():
    d = target_dir("header_text")
    for h in headers():
        (d / h.name).write_bytes(h.read_bytes())
        # The same header as newline-separated cards without comments.
        lines = []
        for card in read_header(h).cards:
            if card.keyword in ("COMMENT", "HISTORY", ""):
                continue
            lines.append(str(card).rstrip())
        (d / (h.stem + ".lines")).write_text("\n".join(lines) + "\nEND\n")
    # A header with extra points after a NUL.
    tan = (VECTORS / "1904-66_TAN.hdr").read_bytes()
    pts = struct.pack("<6d", 0.0, 0.0, 1e300, -5.0, float("nan"), 96.0)
    (d / "tan_with_points").write_bytes(tan + b"\0" + pts)


def fits_bytes(hdul):
    buf = io.BytesIO()
    hdul.writeto(buf, output_verify="silentfix")
    return buf.getvalue()


def small_header(name):
    """The WCS cards of a vector header (no NAXISn, no COMMENT)."""
    h = read_header(VECTORS / name)
    out = fits.Header()
    for card in h.cards:
        if card.keyword in ("SIMPLE", "BITPIX", "EXTEND", "COMMENT", "HISTORY", "") or card.keyword.startswith("NAXIS"):
            continue
        out.append(card)
    return out


def fits_open():
    d = target_dir("fits_open")
    rng = np.random.default_rng(1)
    data = rng.normal(size=(4, 5))
    wcs_names = ["1904-66_TAN.hdr", "1904-66_HPX.hdr", "sip.hdr", "tpvonly.hdr", "1904-66_ZPN.hdr"]
    for bitpix, dtype in [(8, np.uint8), (16, np.int16), (32, np.int32), (64, np.int64),
                          (-32, np.float32), (-64, np.float64)]:
        arr = (data * 10).astype(dtype)
        hdu = fits.PrimaryHDU(arr, header=small_header(wcs_names[abs(bitpix) % len(wcs_names)]))
        (d / f"bitpix{bitpix}.fits").write_bytes(fits_bytes(fits.HDUList([hdu])))
    # Scaled with BLANK.
    arr = (data * 100).astype(np.int16)
    arr[0, 0] = -999
    hdu = fits.PrimaryHDU(arr, header=small_header("1904-66_CAR.hdr"))
    hdu.header["BSCALE"] = 0.5
    hdu.header["BZERO"] = 10.0
    hdu.header["BLANK"] = -999
    (d / "scaled_blank.fits").write_bytes(fits_bytes(fits.HDUList([hdu])))
    # Unsigned conventions.
    for dtype in (np.uint16, np.uint32, np.uint64, np.int8):
        hdu = fits.PrimaryHDU((np.abs(data) * 10).astype(dtype))
        (d / f"unsigned_{np.dtype(dtype).name}.fits").write_bytes(fits_bytes(fits.HDUList([hdu])))
    # A cube, NAXIS = 1, an empty primary with an image extension, a table.
    cube = fits.PrimaryHDU(rng.normal(size=(3, 2, 4)).astype(np.float32), header=small_header("1904-66_SIN.hdr"))
    cube.header["CTYPE3"] = "FREQ"
    cube.header["CRVAL3"] = 1.4e9
    cube.header["CDELT3"] = 1e6
    (d / "cube.fits").write_bytes(fits_bytes(fits.HDUList([cube])))
    (d / "naxis1.fits").write_bytes(fits_bytes(fits.HDUList([fits.PrimaryHDU(np.arange(7, dtype=np.float32))])))
    ext = fits.ImageHDU(data.astype(np.float32), header=small_header("1904-66_AIT.hdr"))
    (d / "extension.fits").write_bytes(fits_bytes(fits.HDUList([fits.PrimaryHDU(), ext])))
    table = fits.BinTableHDU.from_columns([fits.Column(name="a", format="E", array=np.arange(3.0))])
    (d / "table.fits").write_bytes(fits_bytes(fits.HDUList([fits.PrimaryHDU(), table])))
    # Tile-compressed images.
    for comp in ("RICE_1", "GZIP_1", "HCOMPRESS_1", "PLIO_1"):
        arr = (np.abs(data) * 100).astype(np.int16) if comp == "PLIO_1" else data.astype(np.float32)
        if comp == "HCOMPRESS_1":
            arr = rng.normal(size=(8, 8)).astype(np.float32)
        c = fits.CompImageHDU(arr, header=small_header("1904-66_TAN.hdr"), compression_type=comp)
        (d / f"compressed_{comp}.fits").write_bytes(fits_bytes(fits.HDUList([fits.PrimaryHDU(), c])))
    # A gzipped file.
    plain = fits_bytes(fits.HDUList([fits.PrimaryHDU(data.astype(np.float32))]))
    (d / "gzipped.fits").write_bytes(gzip.compress(plain, mtime=0))
    # A truncated file and a header-only file.
    (d / "truncated.fits").write_bytes(plain[: 2880 + 10])
    (d / "header_only.fits").write_bytes(plain[:2880])


def npy_header():
    d = target_dir("npy_header")
    rng = np.random.default_rng(2)
    base = rng.normal(size=(3, 4))
    for dt in ("<f4", ">f8", "<i2", ">u2", "|i1", "|u1", "<i4", ">u4", "<i8", ">u8", "|b1", "<f8"):
        arr = (base * 10).astype(dt)
        buf = io.BytesIO()
        np.save(buf, arr)
        (d / f"dtype_{dt.replace('<', 'le_').replace('>', 'be_').replace('|', 'na_')}.npy").write_bytes(buf.getvalue())
    for name, arr in [("fortran", np.asfortranarray(base.astype("<f4"))),
                      ("cube", rng.normal(size=(2, 3, 2)).astype(">f4")),
                      ("empty", np.zeros((0, 3), dtype="<f8")),
                      ("one_dim", np.arange(5, dtype="<f4"))]:
        buf = io.BytesIO()
        np.save(buf, arr)
        (d / f"{name}.npy").write_bytes(buf.getvalue())
    for version in ((2, 0), (3, 0)):
        buf = io.BytesIO()
        np.lib.format.write_array(buf, base.astype("<f4"), version=version)
        (d / f"version{version[0]}.npy").write_bytes(buf.getvalue())
    # Hand-written headers.
    def raw(header, data=b"", version=1):
        h = header.encode("latin-1")
        if version == 1:
            return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data
        return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(h)) + h + data
    (d / "structured.npy").write_bytes(raw("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1, 1), }\n", b"\0" * 4))
    (d / "long_suffix.npy").write_bytes(raw("{'descr': '<f4', 'fortran_order': False, 'shape': (1L, 2L), }\n", b"\0" * 8))
    (d / "nested.npy").write_bytes(raw("{'descr': '<f4', 'fortran_order': False, 'shape': ((1,), [2]), 'x': {'y': None}}\n"))
    (d / "dict_only.txt").write_bytes(b"{'descr': '>i8', 'fortran_order': True, 'shape': (2, 2, 1), }")


def put_values(out, values):
    for v in values:
        # value(): a byte >= 8 (finite), then f64() tag 3 = i16 / 100.
        iv = max(-32768, min(32767, int(round(v * 100))))
        out += bytes([200, 3]) + struct.pack("<h", iv) + bytes([random.randrange(4)])


def wcs_transform():
    """Structured seeds decoded by fuzz/bodies/wcs_transform.rs (build_header)."""
    d = target_dir("wcs_transform")
    random.seed(3)
    for code in range(28):
        for variant in range(3):
            out = bytearray()
            flags = [0, 16 | 1, 2 | 8 | 4][variant]
            out += bytes([flags, variant % 3, code])
            if flags & 2:
                out += bytes([0])  # third axis FREQ
                put_values(out, [1.4e2, 1.0, 1.0])
            out += bytes([0x3F])  # CRPIX1..CDELT2
            put_values(out, [50.5, 25.5, random.uniform(0, 360), random.uniform(-80, 80), -0.1, 0.1])
            out += bytes([1, 0, 0x0F])  # PC, all four
            put_values(out, [0.9, 0.1, -0.1, 0.9])
            out += bytes([2])  # two PV
            for m, v in [(1, 0.5), (2, 45.0)]:
                out += bytes([m])
                put_values(out, [v])
            out += bytes([0, 0x1F])  # no lng PV; LONPOLE LATPOLE RADESYS EQUINOX MJD-OBS
            put_values(out, [180.0, 30.0])
            out += bytes([1, 0])  # FK5, EQUINOX 2000
            out += bytes([0])
            put_values(out, [51544.0])
            if flags & 8:
                out += bytes([1, 3, 3, 4])  # A/B order 3, 4 coefficients
                for _ in range(4):
                    out += bytes([random.randrange(2), random.randrange(4), random.randrange(4), random.randrange(256), 5, 200, random.randrange(4)])
                out += bytes([0])
            out += bytes([3])  # points
            for _ in range(8):
                out += bytes([3]) + struct.pack("<h", random.randrange(-20000, 20000))
            out += bytes([2, 1, 9, 2, 255])  # perturb rounds
            (d / f"code{code:02}_{variant}").write_bytes(bytes(out))


if __name__ == "__main__":
    header_text()
    fits_open()
    npy_header()
    wcs_transform()
    for t in sorted(OUT.iterdir()):
        files = list(t.iterdir())
        print(f"{t.name}: {len(files)} files, {sum(f.stat().st_size for f in files)} bytes")
