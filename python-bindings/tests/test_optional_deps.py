"""reproject_rs imports and works with numpy alone (astropy and dask blocked)."""

import subprocess
import sys
import textwrap


def test_numpy_only():
    code = textwrap.dedent(
        """
        import sys
        for name in ("astropy", "dask", "reproject"):
            sys.modules[name] = None  # makes 'import name' fail
        import numpy as np
        import reproject_rs

        def header(crpix):
            cards = dict(CTYPE1="'RA---TAN'", CTYPE2="'DEC--TAN'", CRPIX1=crpix, CRPIX2=8.0,
                         CRVAL1=150.0, CRVAL2=30.0, CDELT1=-0.001, CDELT2=0.001)
            return "\\n".join(f"{k:<8}= {v}" for k, v in cards.items())

        image = np.arange(256, dtype=">f4").reshape(16, 16)
        data, footprint = reproject_rs.reproject_interp((image, header(8.0)), header(7.0), shape_out=(16, 16))
        assert data.dtype == np.float64
        # output pixel x shows input pixel x + 1
        assert abs(data[5, 5] - image[5, 6]) < 1e-4, data[5, 5]
        assert footprint[5, 15] == 0.0
        try:
            reproject_rs.reproject_interp((image, header(8.0)), header(7.0))
        except ValueError as e:
            assert "Need to specify shape" in str(e)
        else:
            raise AssertionError("no error")
        try:
            reproject_rs.reproject_interp((image, header(8.0)), header(7.0), shape_out=(4, 4), return_type="dask", block_size=(2, 2))
        except ImportError:
            pass
        else:
            raise AssertionError("dask output without dask")
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
