"""reproject_rs.mosaicking.reproject_and_coadd against astropy reproject 0.21's
reproject_and_coadd on the same inputs: values within 1e-6 relative, identical footprints."""

import warnings

import numpy as np
import pytest
from astropy.io import fits
from astropy.wcs import WCS

import reproject_rs
from reproject_rs.mosaicking import reproject_and_coadd

reproject = pytest.importorskip("reproject")
from reproject.mosaicking import reproject_and_coadd as theirs_coadd  # noqa: E402

RTOL = 1e-6
SHAPE_OUT = (70, 110)


def celestial(crval=(150.0, 30.0), crpix=(30.0, 25.0), cdelt=0.01, rot=0.0,
              ctype=("RA---TAN", "DEC--TAN")):
    """A 2-D celestial WCS (rotated by ``rot`` degrees)."""
    w = WCS(naxis=2)
    w.wcs.ctype = list(ctype)
    w.wcs.crval = crval
    w.wcs.crpix = crpix
    w.wcs.cdelt = -cdelt, cdelt
    c, s = np.cos(np.radians(rot)), np.sin(np.radians(rot))
    w.wcs.pc = [[c, -s], [s, c]]
    return w


def sky(shape, seed, offset=0.0):
    """A smooth image with noise, plus ``offset``."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[: shape[0], : shape[1]]
    return 10 + np.sin(x / 7.0) * np.cos(y / 5.0) + 0.1 * rng.normal(size=shape) + offset


def tiles(n=4, shape=(40, 50)):
    """``n`` overlapping rotated TAN tiles with different backgrounds, some NaN pixels."""
    out = []
    for k in range(n):
        data = sky(shape, k, offset=0.7 * k)
        data[3 + k, 5:9] = np.nan
        wcs = celestial(crpix=(25 - 22 * k, 20 - 6 * k), rot=4.0 * k)
        out.append((data, wcs))
    return out


def weights_for(inputs, seed=7, nan=True):
    rng = np.random.default_rng(seed)
    weights = [rng.uniform(0.2, 2.0, size=a.shape) for a, _ in inputs]
    if nan:
        weights[0][10, 10:14] = np.nan
    return weights


WCS_OUT = celestial(crpix=(15.0, 40.0))


def theirs(*args, **kwargs):
    kwargs.setdefault("reproject_function", reproject.reproject_interp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return theirs_coadd(*args, **kwargs)


def ours(*args, **kwargs):
    kwargs.setdefault("reproject_function", reproject_rs.reproject_interp)
    return reproject_and_coadd(*args, **kwargs)


def assert_same(a, b, exact_footprint=True):
    """Values within RTOL (relative to the image's scale), the same NaN pixels, footprints
    identical (or within 1e-9 relative where weights multiply them)."""
    (da, fa), (db, fb) = a, b
    assert da.shape == db.shape and fa.shape == fb.shape
    assert np.array_equal(np.isnan(da), np.isnan(db))
    finite = np.isfinite(db)
    scale = np.abs(db[finite]).max() if finite.any() else 1.0
    if finite.any():
        err = np.abs(da[finite] - db[finite]) / np.maximum(np.abs(db[finite]), 1e-3 * scale)
        assert err.max() <= RTOL, err.max()
    if exact_footprint:
        assert np.array_equal(fa, fb)
    else:
        np.testing.assert_allclose(fa, fb, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("combine", ["mean", "sum", "first", "last", "min", "max"])
@pytest.mark.parametrize("match_background", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_combine_functions_match_reproject(combine, match_background, weighted):
    inputs = tiles()
    kwargs = dict(shape_out=SHAPE_OUT, combine_function=combine,
                  match_background=match_background)
    if weighted:
        kwargs["input_weights"] = weights_for(inputs)
    assert_same(ours(inputs, WCS_OUT, **kwargs), theirs(inputs, WCS_OUT, **kwargs),
                exact_footprint=not weighted)


def test_reproject_interp_of_reproject_takes_the_fast_path(monkeypatch):
    inputs = tiles(3)
    calls = []
    original = reproject_rs._core.reproject_and_coadd
    monkeypatch.setattr(reproject_rs._core, "reproject_and_coadd",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    result = reproject_and_coadd(inputs, WCS_OUT, shape_out=SHAPE_OUT,
                                 reproject_function=reproject.reproject_interp)
    assert calls == [1]
    assert_same(result, theirs(inputs, WCS_OUT, shape_out=SHAPE_OUT))


def test_galactic_car_into_icrs_tan():
    """Non-TAN inputs in another frame (and interpolation orders)."""
    inputs = []
    for k in range(3):
        w = celestial(crval=(0.0, 0.0), crpix=(20 - 15 * k, 15.0), cdelt=0.02,
                      ctype=("GLON-CAR", "GLAT-CAR"))
        inputs.append((sky((30, 40), k, 0.5 * k), w))
    out = celestial(crval=(266.4, -28.94), crpix=(40.0, 30.0), cdelt=0.02, rot=30.0)
    for kwargs in ({}, {"order": "bicubic", "match_background": True},
                   {"order": "nearest-neighbor", "combine_function": "max"}):
        assert_same(ours(inputs, out, shape_out=(60, 80), **kwargs),
                    theirs(inputs, out, shape_out=(60, 80), **kwargs))


def test_cube_inputs():
    """Inputs with a leading dimension (a 2-D WCS broadcast over it), weights too."""
    inputs = [(np.stack([a, 2 * a, a + 1]), w) for a, w in tiles(3)]
    weights = weights_for(inputs, nan=False)
    for kwargs in ({}, {"input_weights": weights, "match_background": True},
                   {"combine_function": "last"}):
        assert_same(ours(inputs, WCS_OUT, shape_out=(3, *SHAPE_OUT), **kwargs),
                    theirs(inputs, WCS_OUT, shape_out=(3, *SHAPE_OUT), **kwargs),
                    exact_footprint="input_weights" not in kwargs)


def test_fits_files_hdus_and_hdulists(tmp_path):
    inputs = tiles(4)
    paths = []
    for k, (data, wcs) in enumerate(inputs):
        path = tmp_path / f"in{k}.fits"
        fits.PrimaryHDU(data.astype(np.float32), wcs.to_header()).writeto(path)
        paths.append(str(path))
    weights = weights_for(inputs, nan=False)
    weight_paths = []
    for k, w in enumerate(weights):
        path = tmp_path / f"w{k}.fits"
        fits.PrimaryHDU(w).writeto(path)  # no WCS: the dataset's is used
        weight_paths.append(str(path))
    header_out = WCS_OUT.to_header()
    header_out["NAXIS"], header_out["NAXIS2"], header_out["NAXIS1"] = 2, *SHAPE_OUT
    mixed = [
        paths[0],
        fits.open(paths[1]),
        fits.open(paths[2], memmap=False)[0],
        fits.ImageHDU(inputs[3][0], inputs[3][1].to_header()),
    ]
    mixed_weights = [weight_paths[0], fits.HDUList([fits.PrimaryHDU(weights[1])]),
                     fits.ImageHDU(weights[2]), weights[3]]
    try:
        for data, kwargs in ((paths, {}), (mixed, {"input_weights": mixed_weights}),
                             (paths, {"input_weights": weight_paths, "match_background": True})):
            assert_same(ours(data, header_out, **kwargs), theirs(data, header_out, **kwargs),
                        exact_footprint="input_weights" not in kwargs)
    finally:
        mixed[1].close()
        mixed[2]._file.close()


def test_weights_with_their_own_wcs():
    inputs = tiles(2)
    weights = []
    for (data, wcs), w in zip(inputs, weights_for(inputs)):
        wwcs = wcs.deepcopy()
        wwcs.wcs.cdelt = wwcs.wcs.cdelt * 1.1
        weights.append(fits.ImageHDU(w, wwcs.to_header()))
    assert_same(ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, input_weights=weights),
                theirs(inputs, WCS_OUT, shape_out=SHAPE_OUT, input_weights=weights),
                exact_footprint=False)


def test_nddata_and_header_tuples():
    from astropy.nddata import NDData

    inputs = tiles(3)
    mixed = [NDData(inputs[0][0], wcs=inputs[0][1]), (inputs[1][0], inputs[1][1].to_header()),
             inputs[2]]
    assert_same(ours(mixed, WCS_OUT, shape_out=SHAPE_OUT),
                theirs(mixed, WCS_OUT, shape_out=SHAPE_OUT))


def test_output_arrays_filled_in_place(tmp_path):
    inputs = tiles(3)
    want = theirs(inputs, WCS_OUT, shape_out=SHAPE_OUT)
    data = np.memmap(tmp_path / "d.np", mode="w+", dtype=float, shape=SHAPE_OUT)
    footprint = np.memmap(tmp_path / "f.np", mode="w+", dtype=float, shape=SHAPE_OUT)
    got = ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, output_array=data,
               output_footprint=footprint)
    assert got[0] is data and got[1] is footprint
    assert_same(got, want)
    # float32 and Fortran-ordered arrays: filled from the core's result.
    data32 = np.zeros(SHAPE_OUT, dtype=np.float32)
    fp_f = np.zeros(SHAPE_OUT, order="F")
    got = ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, output_array=data32, output_footprint=fp_f)
    assert got[0] is data32 and got[1] is fp_f
    np.testing.assert_allclose(data32, want[0], rtol=1e-6)
    assert np.array_equal(fp_f, want[1])


# reproject's 'mean' divides the values held where no input lands by a zero footprint.
@pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")
@pytest.mark.parametrize("combine", ["mean", "first", "min"])
def test_output_arrays_holding_values(combine):
    """reproject combines with what the given arrays hold ('mean' adds to them): the generic
    path reproduces it."""
    inputs = tiles(3)
    a0 = np.full(SHAPE_OUT, 2.0)
    f0 = np.zeros(SHAPE_OUT)
    f0[:, :20] = 1.0
    got = ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, combine_function=combine, output_array=a0.copy(),
               output_footprint=f0.copy())
    want = theirs(inputs, WCS_OUT, shape_out=SHAPE_OUT, combine_function=combine, output_array=a0.copy(),
                  output_footprint=f0.copy())
    assert_same(got, want)


def test_blank_pixel_value_nan():
    inputs = tiles(3)
    for combine in ("mean", "max"):
        got = ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, blank_pixel_value=np.nan,
                   combine_function=combine)
        assert np.isnan(got[0][got[1] == 0]).all() and (got[1] == 0).any()
        assert_same(got, theirs(inputs, WCS_OUT, shape_out=SHAPE_OUT, blank_pixel_value=np.nan,
                                combine_function=combine))


@pytest.mark.parametrize("combine", ["mean", "median"])
@pytest.mark.parametrize("match_background", [False, True, "plane"])
def test_dask_equals_numpy(match_background, combine, monkeypatch):
    """Each dask block is one core call on its window, bit-identical to the numpy result;
    with background matching the corrections are one task, computed once for every block."""
    da = pytest.importorskip("dask.array")
    import dask
    from reproject_rs import _core

    calls = []
    corrections = _core.background_corrections
    monkeypatch.setattr(_core, "background_corrections",
                        lambda *a, **k: calls.append(1) or corrections(*a, **k))
    inputs = tiles(4)
    kwargs = dict(shape_out=SHAPE_OUT, match_background=match_background,
                  input_weights=weights_for(inputs), blank_pixel_value=np.nan,
                  combine_function=combine)
    want = ours(inputs, WCS_OUT, **kwargs)
    data, footprint = ours(inputs, WCS_OUT, return_type="dask", block_size=(32, 48), **kwargs)
    assert isinstance(data, da.Array) and data.chunks == ((32, 32, 6), (48, 48, 14))
    blocks = [k for k in data.__dask_graph__() if "window_stacked" in str(k)]
    assert len(blocks) == 9, blocks
    data, footprint = dask.compute(data, footprint)
    assert len(calls) == (1 if match_background else 0)
    np.testing.assert_array_equal(data, want[0])
    np.testing.assert_array_equal(footprint, want[1])
    # Automatic chunks, a cube.
    cube = [(np.stack([a, a]), w) for a, w in inputs]
    want = ours(cube, WCS_OUT, shape_out=(2, *SHAPE_OUT), match_background=match_background)
    data, footprint = ours(cube, WCS_OUT, shape_out=(2, *SHAPE_OUT), return_type="dask",
                           match_background=match_background)
    np.testing.assert_array_equal(data.compute(), want[0])
    np.testing.assert_array_equal(footprint.compute(), want[1])


def test_generic_path_with_reproject_adaptive():
    inputs = tiles(3, shape=(30, 36))
    for kwargs in ({}, {"match_background": True, "combine_function": "sum"}):
        got = ours(inputs, WCS_OUT, shape_out=SHAPE_OUT,
                   reproject_function=reproject.reproject_adaptive, **kwargs)
        want = theirs(inputs, WCS_OUT, shape_out=SHAPE_OUT,
                      reproject_function=reproject.reproject_adaptive, **kwargs)
        assert_same(got, want)


def test_generic_path_for_wcs_the_engine_does_not_evaluate():
    """A generalized (APE-14, non-FITS) WCS: the generic path with reproject_rs's
    reproject_interp, whose positions astropy computes."""
    from astropy.wcs.wcsapi import HighLevelWCSWrapper, SlicedLowLevelWCS

    inputs = tiles(2)
    # A sliced WCS that cannot become a FITS WCS (a dropped spectral axis of a cube WCS,
    # coupled to RA by PC1_3; at the plane sliced, pixel 1 = CRPIX3, it moves nothing).
    wrapped = []
    for data, wcs in inputs:
        w3 = WCS(naxis=3)
        w3.wcs.ctype = [*wcs.wcs.ctype, "FREQ"]
        w3.wcs.crval = [*wcs.wcs.crval, 1e9]
        w3.wcs.crpix = [*wcs.wcs.crpix, 1]
        w3.wcs.cdelt = [*wcs.wcs.cdelt, 1e6]
        w3.wcs.pc = np.eye(3)
        w3.wcs.pc[:2, :2] = wcs.wcs.pc
        w3.wcs.pc[0, 2] = 0.3
        wrapped.append((data, HighLevelWCSWrapper(SlicedLowLevelWCS(w3, [0, slice(None),
                                                                          slice(None)]))))
    assert_same(ours(wrapped, WCS_OUT, shape_out=SHAPE_OUT),
                theirs(inputs, WCS_OUT, shape_out=SHAPE_OUT))


def test_median_clipped_and_plane():
    """Beyond reproject: 'median' and 'clipped' reject an outlying input where three
    overlap; 'plane' matching removes planar backgrounds; the fast and generic paths
    agree."""
    base = celestial(crpix=(30.0, 25.0))
    truth = sky((50, 60), 0)
    # 'median' needs a majority; 'clipped' (4 sigma) rejects one outlier among 16.
    for combine, n in (("median", 3), ("clipped", 16)):
        inputs = [(truth.copy(), base)] * (n - 1) + [(truth + 1000.0, base)]
        data, footprint = ours(inputs, base, shape_out=(50, 60), combine_function=combine)
        np.testing.assert_allclose(data, truth, rtol=1e-9)
        assert np.array_equal(footprint, np.full((50, 60), float(n)))
        mean, _ = ours(inputs, base, shape_out=(50, 60))
        assert np.abs(mean - truth).min() > 1000 / n - 1e-6

    # Planar backgrounds: after matching, the images agree with each other.
    y, x = np.mgrid[:50, :60]
    planes = [(truth + 1.0 + 0.02 * x - 0.01 * y, base),
              (truth - 2.0 - 0.01 * x + 0.03 * y, base),
              (truth + 0.5 * np.ones_like(truth), base)]
    def first_minus_last(match_background):
        first, _ = ours(planes, base, shape_out=(50, 60), match_background=match_background,
                        combine_function="first")
        last, _ = ours(planes, base, shape_out=(50, 60), match_background=match_background,
                       combine_function="last")
        return first - last

    assert np.abs(first_minus_last("plane")).max() < 1e-6  # image 0 corrected = image 2's
    assert np.ptp(first_minus_last(True)) > 1.0  # offsets alone leave the slopes

    # The generic path (a function that is not reproject_interp itself) agrees.
    def interp(*args, **kwargs):
        return reproject_rs.reproject_interp(*args, **kwargs)

    tiles4 = tiles(4)
    for kwargs in ({"combine_function": "median"}, {"combine_function": "clipped"},
                   {"match_background": "plane"},
                   {"combine_function": "clipped", "match_background": "plane",
                    "input_weights": weights_for(tiles4)}):
        fast = ours(tiles4, WCS_OUT, shape_out=SHAPE_OUT, **kwargs)
        generic = ours(tiles4, WCS_OUT, shape_out=SHAPE_OUT, reproject_function=interp,
                       **kwargs)
        np.testing.assert_allclose(fast[0], generic[0], rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(fast[1], generic[1], rtol=1e-9, atol=1e-10)


def test_clip_parameters():
    """SWarp's CLIP_SIGMA and CLIP_AMPFRAC of 'clipped': a tighter clip rejects an input the
    default keeps; the fast path, dask blocks and the generic path agree; bad values and
    clip parameters with another combine function are refused."""
    base = celestial(crpix=(30.0, 25.0))
    truth = sky((50, 60), 0)
    # Four inputs 0.0, 0.0, 0.0 and 3.0 above the truth: the default (4 sigma + 0.3 |median|)
    # keeps the last one; sigma 1 without the median term rejects it.
    inputs = [(truth.copy(), base)] * 3 + [(truth + 3.0, base)]
    kwargs = dict(shape_out=(50, 60), combine_function="clipped")
    kept, _ = ours(inputs, base, **kwargs)
    np.testing.assert_allclose(kept, truth + 0.75, rtol=1e-12)
    tight = dict(kwargs, clip_sigma=1.0, clip_ampfrac=0.0)
    rejected, _ = ours(inputs, base, **tight)
    np.testing.assert_allclose(rejected, truth, rtol=1e-12)

    def interp(*args, **kwargs):
        return reproject_rs.reproject_interp(*args, **kwargs)

    generic, _ = ours(inputs, base, reproject_function=interp, **tight)
    np.testing.assert_allclose(generic, rejected, rtol=1e-12)
    blocks, _ = ours(inputs, base, return_type="dask", block_size=(16, 20), **tight)
    np.testing.assert_array_equal(blocks.compute(), rejected)
    with pytest.raises(ValueError, match="non-negative"):
        ours(inputs, base, clip_sigma=-1.0, **kwargs)
    with pytest.raises(ValueError, match="apply to combine_function='clipped'"):
        ours(inputs, base, shape_out=(50, 60), clip_sigma=2.0)


def test_background_reference():
    inputs = tiles(4)
    kwargs = dict(shape_out=SHAPE_OUT, match_background=True)
    # reproject ignores 0 (``if background_reference:``): so does the drop-in.
    assert_same(ours(inputs, WCS_OUT, background_reference=0, **kwargs),
                theirs(inputs, WCS_OUT, background_reference=0, **kwargs))
    got = ours(inputs, WCS_OUT, background_reference=2, **kwargs)
    assert_same(got, theirs(inputs, WCS_OUT, background_reference=2, **kwargs))
    np.testing.assert_allclose(got[0][got[1] > 0].mean(),
                               ours(inputs, WCS_OUT, background_reference=-2, **kwargs)[0][
                                   got[1] > 0].mean())
    with pytest.raises(IndexError):
        ours(inputs, WCS_OUT, background_reference=7, **kwargs)


def test_nan_weights_count_as_zero():
    inputs = tiles(2)
    weights = weights_for(inputs)
    weights[1][:, :25] = np.nan
    weights[0][0, 0] = np.inf  # with NaN present reproject's nan_to_num makes it finite
    weights[1][5, 30] = np.inf
    got = ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, input_weights=weights)
    want = theirs(inputs, WCS_OUT, shape_out=SHAPE_OUT, input_weights=weights)
    assert_same(got, want, exact_footprint=False)


def test_reproject_errors():
    inputs = tiles(2)
    with pytest.raises(ValueError, match="combine_function should be one of mean/sum"):
        ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, combine_function="mode")
    with pytest.raises(ValueError, match="reprojection function should be specified"):
        reproject_and_coadd(inputs, WCS_OUT, shape_out=SHAPE_OUT)
    with pytest.raises(ValueError, match="Cannot specify block_sizes= and block_size="):
        ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, block_sizes=(10, 10), block_size=(5, 5))
    with pytest.raises(ValueError, match="If you specify an output array, it must have a shape"):
        ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, output_array=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="If you specify an output footprint array"):
        ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, output_footprint=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="Need to specify shape_out"):
        ours(inputs, WCS_OUT)
    with pytest.raises(ValueError, match="match_background should be"):
        ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, match_background="quadric")
    with pytest.raises(TypeError, match="input_weights should either be"):
        ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, input_weights=[1, 2])
    with pytest.raises(TypeError):  # reproject_interp's: no such keyword
        ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, colour="blue")
    # No input: reproject returns a blank mosaic.
    for combine in ("mean", "max"):
        got = ours([], WCS_OUT, shape_out=SHAPE_OUT, combine_function=combine,
                   blank_pixel_value=-1)
        assert_same(got, theirs([], WCS_OUT, shape_out=SHAPE_OUT, combine_function=combine,
                                blank_pixel_value=-1))


def test_weights_of_another_shape():
    """reproject reprojects weights of another shape through the dataset's WCS: so does
    the drop-in (on the generic path)."""
    inputs = tiles(2)
    weights = [w[:30, :40] for w in weights_for(inputs, nan=False)]
    assert_same(ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, input_weights=weights),
                theirs(inputs, WCS_OUT, shape_out=SHAPE_OUT, input_weights=weights),
                exact_footprint=False)


def test_progress_bar_and_parallel():
    inputs = tiles(4)
    seen = []

    def progress_bar(iterable):
        for i in iterable:
            seen.append(i)
            yield i

    got = ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, progress_bar=progress_bar, parallel=True,
               block_size=(16, 16))
    assert seen == [0, 1, 2, 3]
    assert_same(got, theirs(inputs, WCS_OUT, shape_out=SHAPE_OUT))


def test_inputs_missing_the_output_are_skipped():
    inputs = tiles(2) + [(np.ones((10, 10)), celestial(crval=(10.0, -40.0)))]
    for kwargs in ({}, {"match_background": True}, {"combine_function": "first"}):
        assert_same(ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, **kwargs),
                    theirs(inputs, WCS_OUT, shape_out=SHAPE_OUT, **kwargs))


def test_device_and_return_type_arguments():
    inputs = tiles(3)
    want = theirs(inputs, WCS_OUT, shape_out=SHAPE_OUT)
    for device in ("cpu", "auto"):
        assert_same(ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, device=device), want)
    try:
        reproject_rs._core.gpu_info()
    except reproject_rs.DeviceUnavailableError:
        with pytest.raises(reproject_rs.DeviceUnavailableError):
            ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, device="cuda")
    with pytest.raises(ValueError, match="device"):
        ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, device="tpu")
    with pytest.raises(ValueError, match="device= is for reproject_rs.reproject_interp"):
        ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, device="cpu",
             reproject_function=reproject.reproject_adaptive)
    with pytest.raises(ValueError, match="return_type"):
        ours(inputs, WCS_OUT, shape_out=SHAPE_OUT, return_type="lazy")
