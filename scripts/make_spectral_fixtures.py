"""Golden outputs of astropy reproject 0.21 for cubes whose spectral axis differs between the
input and output WCS (reproject interpolates along it too). Writes
tests/fixtures/spectral/cases.json. Run with a Python that has numpy, astropy and reproject."""
import json
import pathlib

import numpy as np
from astropy.io import fits
from astropy.wcs import WCS
from reproject import reproject_interp

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "spectral"


def header(crpix3, cdelt3, crval3=1.42e9, rot=0.0, crpix1=6.5):
    h = fits.Header()
    h["NAXIS"] = 3
    h["NAXIS1"], h["NAXIS2"], h["NAXIS3"] = 12, 10, 5
    h["CTYPE1"], h["CTYPE2"], h["CTYPE3"] = "RA---TAN", "DEC--TAN", "FREQ"
    h["CRPIX1"], h["CRPIX2"], h["CRPIX3"] = crpix1, 5.5, crpix3
    h["CRVAL1"], h["CRVAL2"], h["CRVAL3"] = 150.0, 30.0, crval3
    h["CDELT1"], h["CDELT2"], h["CDELT3"] = -0.01, 0.01, cdelt3
    h["CUNIT3"] = "Hz"
    h["RADESYS"] = "ICRS"
    if rot:
        c, s = np.cos(np.radians(rot)), np.sin(np.radians(rot))
        h["PC1_1"], h["PC1_2"], h["PC2_1"], h["PC2_2"] = c, -s, s, c
    return h


def main():
    rng = np.random.default_rng(7)
    data = rng.normal(size=(5, 10, 12)) + np.arange(5)[:, None, None] * 10.0
    h_in = header(3.0, 1e6)
    cases = []
    for name, h_out, shape in [
        ("half_channel", header(2.5, 1e6), (5, 10, 12)),
        ("resampled", header(1.3, 0.7e6, rot=20.0, crpix1=7.1), (6, 9, 11)),
        ("outside", header(9.0, 1e6), (4, 10, 12)),
    ]:
        runs = {}
        for order in range(4):
            out, fp = reproject_interp((data, h_in), WCS(h_out), shape_out=shape, order=order)
            runs[str(order)] = {
                "data": [None if np.isnan(v) else float(v) for v in out.ravel()],
                "footprint": fp.ravel().tolist(),
            }
        cases.append({
            "name": name,
            "header_in": h_in.tostring(sep="\n"),
            "header_out": h_out.tostring(sep="\n"),
            "shape_out": list(shape),
            "runs": runs,
        })
    OUT.mkdir(parents=True, exist_ok=True)
    doc = {"shape_in": list(data.shape), "data": data.ravel().tolist(), "cases": cases}
    (OUT / "cases.json").write_text(json.dumps(doc))


if __name__ == "__main__":
    main()
