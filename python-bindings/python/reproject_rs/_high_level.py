"""``reproject_interp``: astropy reproject's API on top of the Rust engine.

As reproject's ``reproject_interp``, it parses its arguments (:mod:`reproject_rs._options`,
:mod:`reproject_rs._parse`) and hands them to the dispatcher
(:mod:`reproject_rs._dispatch`), which calls the engine (:mod:`reproject_rs._engine`).
"""

from __future__ import annotations

import contextlib

from ._dispatch import reproject_dispatcher
from ._options import ORDER, parse_options
from ._parse import parse_input_data, parse_output_projection

__all__ = ["reproject_interp", "ORDER"]


def reproject_interp(
    input_data,
    output_projection,
    shape_out=None,
    hdu_in=0,
    order="bilinear",
    roundtrip_coords=True,
    output_array=None,
    output_footprint=None,
    return_footprint=True,
    block_size=None,
    parallel=False,
    return_type=None,
    dask_method=None,
    *,
    nan_policy="propagate",
    precision="reproject",
    device="auto",
):
    """
    Reproject data to a new projection using interpolation (drop-in for
    ``reproject.reproject_interp`` 0.21, computed by the reproject-rs Rust engine).

    Parameters
    ----------
    input_data : object
        The input data to reproject: a FITS filename (``str`` or ``Path``), an
        `~astropy.io.fits.HDUList` (``hdu_in`` picks the HDU), a
        `~astropy.io.fits.PrimaryHDU`/`~astropy.io.fits.ImageHDU`/`~astropy.io.fits.CompImageHDU`,
        a tuple ``(array, wcs)`` where ``wcs`` is an `~astropy.wcs.WCS`, an APE-14 wrapper of
        one, an `~astropy.io.fits.Header` or FITS header text, an `~astropy.nddata.NDData`, or
        a PNG/JPEG file with AVM tags. ``array`` may be a numpy or dask array of any real
        dtype and byte order, with extra leading dimensions reprojected independently.
    output_projection : `~astropy.wcs.WCS` or `~astropy.io.fits.Header` or str
        The output projection: a WCS (or APE-14 wrapper of one), a Header, a FITS filename,
        or FITS header text.
    shape_out : tuple, optional
        The output shape, when ``output_projection`` does not give it.
    hdu_in : int or str, optional
        The HDU of a FITS file or HDUList to use (default 0).
    order : int or str, optional
        ``'nearest-neighbor'``, ``'bilinear'`` (default), ``'biquadratic'``, ``'bicubic'``,
        or an integer spline order 0-5.
    roundtrip_coords : bool
        Whether to verify that coordinate transformations are defined in both directions.
    output_array : `~numpy.ndarray`, optional
        An array in which to store the reprojected data (same dtype kind and size as the
        input, any byte order); it is returned.
    output_footprint : `~numpy.ndarray`, optional
        An array in which to store the footprint; it is returned.
    return_footprint : bool
        Whether to return the footprint in addition to the output array.
    block_size : tuple or 'auto', optional
        Output block shape. Blocks never change a value (the engine computes bit-identical
        results for any blocking); with ``return_type='dask'`` they are the dask chunks.
    parallel : bool or int or str, optional
        ``True``: every core; an integer: that many threads; ``'current-scheduler'``: the
        active dask scheduler (e.g. dask.distributed). Never changes a value.
    return_type : {'numpy', 'dask', 'lazy'}, optional
        Whether to return numpy arrays, lazy dask arrays (which need ``block_size`` or
        ``parallel``; each dask block is computed by the Rust engine and pickles, so it runs
        on dask.distributed with process workers; a process prepares the engine plan, spline
        coefficients included, once for all the blocks it computes), or a
        :class:`~reproject_rs.LazyReprojection`: the engine plan prepared (the input copied
        once), with ``.compute()`` for the whole result and ``.blocks()`` for block handles
        computable in any order, on any thread or, pickled, in any process.
    dask_method : {'memmap', 'none'}, optional
        Accepted for compatibility; dask inputs are computed to memory either way.
    nan_policy : {'propagate', 'renormalize'}, keyword-only
        ``'propagate'`` (reproject's behaviour): a NaN tap makes the output NaN;
        ``'renormalize'``: weights renormalised over the valid taps.
    precision : {'reproject', 'float64'}, keyword-only
        ``'reproject'`` reproduces reproject's float32 rounding for float32/integer inputs and
        its SIP inversion tolerance; ``'float64'`` keeps every value in float64.
    device : {'cpu', 'auto', 'cuda', 'cuda:N', 'cuda:all'}, keyword-only
        Where to compute. ``'auto'`` (default) uses the first GPU
        when the job is large enough for it to pay (a cost model of the bytes that must cross
        to the GPU against the CPU's time per pixel and thread: small jobs stay on the CPU)
        and one is present and can do the job (NVIDIA driver, libnvrtc, a transform the
        kernels cover), else the CPU (a GPU whose kernels were never compiled on this machine
        compiles them in the background for the next calls, about 20 s once); ``'cpu'`` the
        CPU engine; ``'cuda'`` the first GPU, ``'cuda:N'`` GPU N and
        ``'cuda:all'`` every visible GPU (the blocks spread over them), raising
        :class:`~reproject_rs.DeviceUnavailableError` (with the reason) when they cannot be
        used. Every return type computes on the device: numpy results, and the blocks of
        ``return_type='lazy'`` and ``'dask'`` (in worker processes too; see
        :func:`~reproject_rs.warmup` to prepare them). The blocks of ``return_type='dask'``
        and ``parallel='current-scheduler'`` check the device where they run (a dask worker
        may have a GPU that this process lacks): a missing GPU raises when they are
        computed. ``parallel`` sets the CPU's threads; a GPU keeps a thread per core
        (at most 8) busy with its host copies, unless ``parallel`` gives a larger number. Within one
        device, every return type
        and blocking gives the same bits; a GPU's values are within 1e-9 relative of the
        CPU's, with the same footprints. When CuPy is installed, the array of an ``(array,
        wcs)`` input may be a CuPy array (or any ``__cuda_array_interface__`` array): with
        ``'auto'``, ``'cuda'`` or ``'cuda:0'`` and the array on GPU 0 it is reprojected in
        GPU memory, on GPU 0 whatever GPU is current: ``return_type='numpy'`` returns CuPy
        arrays (``output_array``/``output_footprint`` may then be CuPy arrays too, on any
        GPU) and ``'dask'`` dask arrays of CuPy chunks. Otherwise it is copied to the host,
        computed on ``device``, and numpy results copied back (lazy results stay on the
        host). CI runs the GPU paths on a simulator; they were last run on a GPU (an H200)
        on 2026-11-28.

    Returns
    -------
    array_new : `~numpy.ndarray` or `dask.array.Array`
        The reprojected array (float64 unless ``output_array`` was given).
    footprint : `~numpy.ndarray` or `dask.array.Array`
        1 where the output is valid, 0 where it is not (only if ``return_footprint``).

    With ``return_type='lazy'``, a single :class:`~reproject_rs.LazyReprojection` instead.

    Examples
    --------
    An image shifted by one pixel, and astropy reproject's own result for the same call:

    >>> import numpy as np
    >>> from astropy.wcs import WCS
    >>> from reproject import reproject_interp as astropy_reproject_interp
    >>> from reproject_rs import reproject_interp
    >>> def tan(crpix1):
    ...     wcs = WCS(naxis=2)
    ...     wcs.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    ...     wcs.wcs.crval, wcs.wcs.crpix = [150, 30], [crpix1, 16]
    ...     wcs.wcs.cdelt = [-0.001, 0.001]
    ...     return wcs
    >>> image = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    >>> array, footprint = reproject_interp((image, tan(16)), tan(15), shape_out=(32, 32))
    >>> bool(np.allclose(array[:, :31], image[:, 1:])), float(footprint[:, 31].max())
    (True, 0.0)
    >>> theirs, their_footprint = astropy_reproject_interp((image, tan(16)), tan(15),
    ...                                                     shape_out=(32, 32))
    >>> bool(np.allclose(array, theirs, rtol=1e-9, atol=0, equal_nan=True))
    True
    >>> bool(np.array_equal(footprint, their_footprint))
    True
    """
    options = parse_options(
        order=order,
        roundtrip_coords=roundtrip_coords,
        nan_policy=nan_policy,
        precision=precision,
        return_type=return_type,
        dask_method=dask_method,
        device=device,
        parallel=parallel,
    )
    with contextlib.ExitStack() as stack:  # files opened while parsing stay open until done
        array_in, wcs_in = parse_input_data(input_data, hdu_in=hdu_in, stack=stack)
        wcs_out, shape_out = parse_output_projection(
            output_projection,
            shape_in=array_in.shape,
            shape_out=shape_out,
            output_array=output_array,
        )
        return reproject_dispatcher(
            array_in=array_in,
            wcs_in=wcs_in,
            wcs_out=wcs_out,
            shape_out=shape_out,
            options=options,
            output_array=output_array,
            output_footprint=output_footprint,
            return_footprint=return_footprint,
            block_size=block_size,
            parallel=parallel,
        )
