"""``reproject_interp``: astropy reproject's API on top of the Rust engine."""

from __future__ import annotations

import contextlib
import logging
import numbers

import numpy as np

from . import _core
from ._arrays import is_cuda_array, is_dask, normalise_dtype
from ._lazy import LazyReprojection, SharedPlan, _user_axes, dask_block
from ._options import ORDER, parse_options, parse_order
from ._parse import ParsedWCS, parse_input_data, parse_output_projection, wcs_to_header

__all__ = ["reproject_interp", "ORDER"]

# reproject's dispatcher logs its blocking decisions to this logger; the same messages go
# to the same logger here, so logging configured for reproject keeps working.
logger = logging.getLogger("reproject._common")


def _cuda_input(input_data):
    """The GPU array of an ``(array, wcs)`` input, if it is one."""
    if isinstance(input_data, tuple) and len(input_data) == 2 and is_cuda_array(input_data[0]):
        return input_data[0]
    return None


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
    device="cpu",
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
    device : {'cpu', 'auto', 'cuda'}, keyword-only
        Where to compute. ``'cpu'`` (default) uses the CPU engine; ``'auto'`` the GPU when
        one is present and can do the job (NVIDIA driver, libnvrtc, a transform the kernels
        cover), else the CPU with the same results; ``'cuda'`` the GPU, raising
        :class:`~reproject_rs.DeviceUnavailableError` (with the reason) when it cannot be
        used. The GPU computes ``return_type='numpy'`` only. When CuPy is installed, the
        array of an ``(array, wcs)`` input may be a CuPy array (or any
        ``__cuda_array_interface__`` array): with ``'auto'`` or ``'cuda'`` it is reprojected
        in GPU memory and CuPy arrays are returned (``output_array``/``output_footprint`` may
        then be CuPy arrays too); with ``'cpu'`` it is copied to the host and the results
        copied back. The GPU paths are untested on hardware in this build's CI.

    Returns
    -------
    array_new : `~numpy.ndarray` or `dask.array.Array`
        The reprojected array (float64 unless ``output_array`` was given).
    footprint : `~numpy.ndarray` or `dask.array.Array`
        1 where the output is valid, 0 where it is not (only if ``return_footprint``).

    With ``return_type='lazy'``, a single :class:`~reproject_rs.LazyReprojection` instead.
    """
    options = parse_options(
        order=order,
        roundtrip_coords=roundtrip_coords,
        nan_policy=nan_policy,
        precision=precision,
        return_type=return_type,
        dask_method=dask_method,
        device=device,
    )
    gpu_in = _cuda_input(input_data)
    if gpu_in is not None or is_cuda_array(output_array) or is_cuda_array(output_footprint):
        return _reproject_cuda_arrays(
            gpu_in, input_data, output_projection, shape_out, hdu_in, order, roundtrip_coords,
            output_array, output_footprint, return_footprint, block_size, parallel,
            return_type, dask_method, nan_policy, precision, options.device,
        )

    with contextlib.ExitStack() as stack:
        array_in, wcs_in = parse_input_data(input_data, hdu_in=hdu_in, stack=stack)
        wcs_out, shape_out = parse_output_projection(
            output_projection,
            shape_in=array_in.shape,
            shape_out=shape_out,
            output_array=output_array,
        )
        job = _Job(
            array_in=array_in,
            wcs_in=wcs_in,
            wcs_out=wcs_out,
            shape_out=shape_out,
            order=options.order,
            roundtrip_coords=options.roundtrip_coords,
            nan_policy=options.nan_policy,
            precision=options.precision,
        )
        job.device = options.device
        return job.run(
            output_array=output_array,
            output_footprint=output_footprint,
            return_footprint=return_footprint,
            block_size=block_size,
            parallel=parallel,
            return_type=options.return_type,
        )


def _reproject_cuda_arrays(
    gpu_in, input_data, output_projection, shape_out, hdu_in, order, roundtrip_coords,
    output_array, output_footprint, return_footprint, block_size, parallel, return_type,
    dask_method, nan_policy, precision, device,
):
    """``reproject_interp`` with CuPy (``__cuda_array_interface__``) input or output arrays:
    in GPU memory when the GPU can do it, else through host copies (untested on hardware
    here)."""
    import cupy  # a CUDA array without CuPy: ImportError says what is missing

    rest = dict(
        hdu_in=hdu_in, order=order, roundtrip_coords=roundtrip_coords, nan_policy=nan_policy,
        precision=precision,
    )
    if gpu_in is not None and device != "cpu" and return_type in (None, "numpy"):
        try:
            return _reproject_on_device(
                cupy, gpu_in, input_data[1], output_projection, shape_out, output_array,
                output_footprint, return_footprint, **rest,
            )
        except _core.DeviceUnavailableError as e:
            if device == "cuda":
                raise
            logger.info("reproject_rs: CuPy input computed on the CPU: %s", e)
    # Through the host: the same call on numpy copies, the results copied back.
    if gpu_in is not None:
        input_data = (cupy.asnumpy(gpu_in), input_data[1])
    host_out = cupy.asnumpy(output_array) if is_cuda_array(output_array) else output_array
    host_fp = cupy.asnumpy(output_footprint) if is_cuda_array(output_footprint) else output_footprint
    result = reproject_interp(
        input_data, output_projection, shape_out=shape_out, output_array=host_out,
        output_footprint=host_fp, return_footprint=return_footprint, block_size=block_size,
        parallel=parallel, return_type=return_type, dask_method=dask_method,
        device="cpu" if device == "cpu" else "auto", **rest,
    )
    if return_type not in (None, "numpy"):
        return result
    data, footprint = result if return_footprint else (result, None)
    if is_cuda_array(output_array):
        output_array[...] = cupy.asarray(data)
        data = output_array
    elif gpu_in is not None and output_array is None:
        data = cupy.asarray(data)
    if footprint is not None:
        if is_cuda_array(output_footprint):
            output_footprint[...] = cupy.asarray(footprint)
            footprint = output_footprint
        elif gpu_in is not None and output_footprint is None:
            footprint = cupy.asarray(footprint)
    return (data, footprint) if return_footprint else data


def _reproject_on_device(
    cupy, gpu_in, wcs_in_arg, output_projection, shape_out, output_array, output_footprint,
    return_footprint, hdu_in, order, roundtrip_coords, nan_policy, precision,
):
    """Reprojection of a CuPy array into CuPy arrays by the GPU backend, without host copies
    (the spline coefficients of orders >= 2 are computed on the host)."""
    array = cupy.ascontiguousarray(gpu_in)
    # Parsing needs the shape and dtype only: a zero-stride stand-in of the right shape.
    stand_in = np.lib.stride_tricks.as_strided(
        np.zeros(1, dtype=array.dtype), shape=array.shape, strides=(0,) * array.ndim
    )
    with contextlib.ExitStack() as stack:
        array_in, wcs_in = parse_input_data((stand_in, wcs_in_arg), hdu_in=hdu_in, stack=stack)
        wcs_out, shape_out = parse_output_projection(
            output_projection, shape_in=array_in.shape, shape_out=shape_out,
            output_array=output_array,
        )
        job = _Job(
            array_in=array_in, wcs_in=wcs_in, wcs_out=wcs_out, shape_out=shape_out,
            order=parse_order(order), roundtrip_coords=bool(roundtrip_coords),
            nan_policy=nan_policy, precision=precision,
        )
    if job.in_axes is not None or job.out_axes is not None:
        raise _core.DeviceUnavailableError("WCS axes in another order than the array's")
    shape = tuple(job.engine_shape)
    out_dtype = cupy.float32 if output_array is not None and output_array.dtype == np.float32 else cupy.float64

    def target(given):
        ok = (
            is_cuda_array(given) and given.dtype == out_dtype and given.shape == shape
            and given.flags.c_contiguous
        )
        return given if ok else cupy.empty(shape, dtype=out_dtype)

    data, footprint = target(output_array), target(output_footprint)
    host = cupy.asnumpy(array) if job.kwargs["order"] >= 2 else None
    cupy.cuda.runtime.deviceSynchronize()  # the input is complete before the kernels read it
    _core.reproject_device(
        array.data.ptr, array.dtype.str, list(array.shape), job.header_in, job.header_out,
        list(shape), data.data.ptr, footprint.data.ptr, out_dtype == cupy.float64,
        host_array=host, **job.kwargs,
    )
    for given, got in ((output_array, data), (output_footprint, footprint)):
        if given is not None and given is not got:
            given[...] = got if is_cuda_array(given) else cupy.asnumpy(got)
    data = output_array if output_array is not None else data
    footprint = output_footprint if output_footprint is not None else footprint
    return (data, footprint) if return_footprint else data


def _validate_wcs(wcs_in: ParsedWCS, wcs_out: ParsedWCS, shape_in, shape_out):
    """reproject's ``_validate_wcs`` checks, with its messages."""
    n_in, n_out = wcs_in.pixel_n_dim, wcs_out.pixel_n_dim
    if n_in != n_out:
        raise _core.ShapeError("Number of dimensions in input and output WCS should match")
    elif len(shape_out) < n_out:
        raise _core.ShapeError("Too few dimensions in shape_out")
    elif len(shape_in) < n_in:
        raise _core.ShapeError("Too few dimensions in input data")
    elif len(shape_in) != len(shape_out):
        raise _core.ShapeError("Number of dimensions in input and output data should match")
    if tuple(shape_in[:-n_in]) != tuple(shape_out[:-n_out]):
        raise _core.ShapeError("Dimensions to be looped over must match exactly")
    a, b = wcs_in.wcs, wcs_out.wcs
    if a is None or b is None:
        return  # no astropy: the engine checks
    if a.has_celestial and not b.has_celestial:
        raise _core.WcsError("Input WCS has celestial components but output WCS does not")
    elif b.has_celestial and not a.has_celestial:
        raise _core.WcsError("Output WCS has celestial components but input WCS does not")
    if wcs_in.is_fits and wcs_out.is_fits:
        if a.wcs.spec >= 0 and b.wcs.spec >= 0:
            if a.wcs.ctype[a.wcs.spec][:4] != b.wcs.ctype[b.wcs.spec][:4]:
                raise _core.WcsError(
                    f"The input ({a.wcs.ctype[a.wcs.spec]}) and output "
                    f"({b.wcs.ctype[b.wcs.spec]}) spectral "
                    "coordinate types are not equivalent."
                )
        elif a.wcs.spec >= 0:
            raise _core.WcsError("Input WCS has a spectral component but output WCS does not")
        elif b.wcs.spec >= 0:
            raise _core.WcsError("Output WCS has a spectral component but input WCS does not")


def _celestial_first(parsed: ParsedWCS) -> ParsedWCS:
    """The engine wants the celestial axes as WCS axes 1 and 2; for a cube whose celestial
    axes are elsewhere, reorder the WCS (``WCS.sub``) and remember the permutation, so the
    data can be transposed the same way (a view, no copy)."""
    w = parsed.wcs
    if w is None or w.pixel_n_dim <= 2 or not w.has_celestial:
        return parsed
    lng, lat = w.wcs.lng, w.wcs.lat
    if max(lng, lat) <= 1:
        return parsed
    if w.pixel_n_dim != w.world_n_dim:
        return parsed  # let the engine report it
    celestial = sorted((lng, lat))
    wcs_order = celestial + [i for i in range(w.pixel_n_dim) if i not in celestial]
    sub = w.sub([i + 1 for i in wcs_order])
    return ParsedWCS(wcs_to_header(sub), sub, parsed.is_fits, perm=tuple(wcs_order))


def _numpy_axes(perm, ndim):
    """numpy axis order realising a WCS axis permutation (WCS axis i is numpy axis ndim-1-i;
    leading broadcast axes stay first)."""
    n = len(perm)
    lead = list(range(ndim - n))
    return lead + [ndim - 1 - perm[j] for j in reversed(range(n))]


def _parallel_threads(parallel):
    """Engine threads for reproject's ``parallel``: 1 serial, 0 every core."""
    if parallel is False or parallel is None:
        return 1
    if parallel is True:
        return 0
    if isinstance(parallel, numbers.Integral):
        if parallel < 0:
            raise ValueError("The number of processors to use must be strictly positive")
        return max(int(parallel), 1)  # parallel=0 is reproject's synchronous blocked path
    raise ValueError(f"parallel should be a bool, an integer or 'current-scheduler', got {parallel!r}")


def _normalise_block_size(block_size, shape_out, n_wcs):
    """reproject's block_size rules: a tuple of len(shape_out) entries (-1: whole axis), or
    None for automatic. Also returns whether the blocks run along broadcast dimensions."""
    if block_size is None or (isinstance(block_size, str) and block_size == "auto"):
        return None, False
    if isinstance(block_size, str):
        raise ValueError(f"block_size should be a tuple or 'auto', got {block_size!r}")
    block_size = tuple(int(b) for b in block_size)
    broadcasting = n_wcs < len(shape_out)
    along_broadcast = False
    if len(block_size) > len(shape_out):
        raise ValueError(
            f"block_size {len(block_size)} cannot have more elements "
            f"than the dimensionality of the output ({len(shape_out)})"
        )
    if len(block_size) < len(shape_out):
        block_size = (-1,) * (len(shape_out) - len(block_size)) + block_size
    elif broadcasting:
        if block_size[-n_wcs:] == tuple(shape_out[-n_wcs:]):
            along_broadcast = True
            block_size = block_size[:-n_wcs] + (-1,) * n_wcs
        else:
            for i in range(len(shape_out) - n_wcs):
                if block_size[i] != -1 and block_size[i] != shape_out[i]:
                    raise ValueError(
                        "block shape should either match output data shape along "
                        "broadcasted dimension or non-broadcasted dimensions"
                    )
    full = tuple(n if b == -1 else b for b, n in zip(block_size, shape_out))
    if any(b <= 0 for b in full):
        raise _core.InvalidArgumentError(f"block_size must be positive, got {block_size}")
    return full, along_broadcast


class _Job:
    """One reprojection: the data, both WCS and the engine options, checked."""

    def __init__(self, array_in, wcs_in, wcs_out, shape_out, order, roundtrip_coords, nan_policy, precision):
        self.is_dask = is_dask(array_in)
        if not self.is_dask:
            array_in = np.asarray(array_in)
        self.dtype_in = array_in.dtype
        _validate_wcs(wcs_in, wcs_out, array_in.shape, shape_out)
        self.n_wcs = wcs_in.pixel_n_dim
        self.shape_out = tuple(shape_out)
        wcs_in, wcs_out = _celestial_first(wcs_in), _celestial_first(wcs_out)
        self.in_axes = _numpy_axes(wcs_in.perm, array_in.ndim) if wcs_in.perm else None
        self.out_axes = _numpy_axes(wcs_out.perm, len(shape_out)) if wcs_out.perm else None
        if self.in_axes is not None:
            array_in = array_in.transpose(self.in_axes)
        # The shape the engine computes (output axes in the engine's order).
        self.engine_shape = (
            tuple(self.shape_out[a] for a in self.out_axes) if self.out_axes else self.shape_out
        )
        self.array_in = array_in
        self.header_in, self.header_out = wcs_in.header, wcs_out.header
        self.kwargs = dict(
            order=order,
            roundtrip_coords=roundtrip_coords,
            nan_policy=nan_policy,
            precision=precision,
        )

    # -- helpers ------------------------------------------------------------------------

    def _numpy_input(self):
        array = self.array_in
        if self.is_dask:
            array = np.asarray(array.compute())
        return normalise_dtype(array)

    def _to_user_axes(self, array):
        """An engine-order output back in the caller's axis order."""
        return _user_axes(array, self.out_axes)

    def _check_output_array(self, output_array):
        if output_array.shape != self.shape_out:
            raise _core.ShapeError(
                f"Output array shape {output_array.shape} should match shape_out={self.shape_out}"
            )
        if (output_array.dtype.kind, output_array.dtype.itemsize) != (
            self.dtype_in.kind,
            self.dtype_in.itemsize,
        ):
            raise _core.InvalidArgumentError(
                f"Output array dtype {output_array.dtype} should match "
                f"input array dtype ({self.dtype_in})"
            )
        if output_array.dtype.kind != "f":
            # reproject writes NaN into the output before anything else.
            raise _core.InvalidArgumentError("cannot convert float NaN to integer")
        if not output_array.flags.writeable:
            # reproject's check and message; refused before anything is computed.
            raise ValueError("output array is read-only.")

    def _blocks(self, block_size):
        """Checked block shape (reproject's rules and log messages)."""
        blocks, along_broadcast = _normalise_block_size(block_size, self.shape_out, self.n_wcs)
        broadcasting = self.n_wcs < len(self.shape_out)
        logger.info(f"Broadcasting is {'' if broadcasting else 'not '}being used")
        logger.info(
            f"{'P' if along_broadcast else 'Not p'}arallelizing along "
            f"broadcasted dimension ({block_size=}, shape_out={self.shape_out})"
        )
        return blocks, along_broadcast

    # -- dispatch -------------------------------------------------------------------------

    def run(self, output_array, output_footprint, return_footprint, block_size, parallel, return_type):
        if output_array is not None:
            self._check_output_array(output_array)
        if output_footprint is not None and output_footprint.shape != self.shape_out:
            raise _core.ShapeError(
                f"Output footprint shape {output_footprint.shape} should match "
                f"shape_out={self.shape_out}"
            )
        if output_footprint is not None and not output_footprint.flags.writeable:
            raise ValueError("output footprint is read-only.")
        if return_type == "lazy":
            if output_array is not None or output_footprint is not None:
                raise ValueError(
                    "output_array and output_footprint cannot be used with return_type='lazy' "
                    "(compute the blocks into your arrays: array[h.window] = h.compute()[0])"
                )
            if isinstance(parallel, str):
                raise ValueError(
                    "parallel='current-scheduler' needs return_type='dask' or 'numpy'; "
                    "with return_type='lazy', parallel is the number of threads of .compute()"
                )
            return self._lazy(self._engine_block(block_size, parallel), _parallel_threads(parallel),
                              return_footprint)
        if return_type == "dask" or parallel == "current-scheduler":
            if block_size is None and parallel is False:
                raise ValueError(
                    "Output cannot be returned as dask arrays "
                    "when parallel=False and no block size has "
                    "been specified"
                )
            if self._empty_plane():
                return self._empty(output_array, output_footprint, return_footprint, return_type)
            data, footprint = self._dask(block_size)
            if return_type == "dask":
                return (data, footprint) if return_footprint else data
            import dask

            data, footprint = dask.compute(data, footprint)
            return self._deliver(data, footprint, output_array, output_footprint, return_footprint)
        threads = _parallel_threads(parallel)
        engine_block = self._engine_block(block_size, parallel)
        if self._empty_plane():
            return self._empty(output_array, output_footprint, return_footprint, return_type)
        return self._numpy(engine_block, threads, output_array, output_footprint, return_footprint)

    def _empty_plane(self):
        """Whether the input's celestial plane has no pixel (reproject then returns NaN)."""
        shape = self.array_in.shape
        return 0 in shape[-2:] and 0 not in shape[:-2] and 0 not in self.shape_out

    def _empty(self, output_array, output_footprint, return_footprint, return_type):
        """reproject's result for an input with no pixel: NaN data, zero footprint."""
        if return_type == "dask":
            import dask.array as da

            data = da.full(self.shape_out, np.nan)
            footprint = da.zeros(self.shape_out)
            return (data, footprint) if return_footprint else data
        data = np.full(self.engine_shape, np.nan)
        footprint = np.zeros(self.engine_shape)
        return self._deliver(data, footprint, output_array, output_footprint, return_footprint)

    def _engine_block(self, block_size, parallel):
        """The engine's (rows, columns) block shape, or None for its automatic choice."""
        if block_size is None and parallel is False:
            return None
        blocks, _ = self._blocks(block_size)
        if blocks is None:
            return None
        if self.out_axes is not None:
            return tuple(blocks[a] for a in self.out_axes[-2:])
        return tuple(blocks[-2:])

    def _lazy(self, engine_block, threads, return_footprint):
        # A private, read-only copy: the result must not change if the caller's array does.
        array = np.array(self._numpy_input(), order="C", copy=True)
        array.flags.writeable = False
        plan = SharedPlan.new(
            (self.header_in, self.header_out, list(self.engine_shape)),
            dict(block_size=engine_block, threads=threads, **self.kwargs),
        )
        plan.get(array)  # prepare now: errors surface here, not in the first block
        return LazyReprojection(plan, array, self.shape_out, self.out_axes, return_footprint)

    def _numpy(self, engine_block, threads, output_array, output_footprint, return_footprint):
        array = self._numpy_input()
        # Arrays the engine can write in place: native, C-contiguous, aligned, writeable floats
        # of the engine's layout, the data and footprint of the same dtype.
        out_direct = (
            output_array is not None
            and self.out_axes is None
            and _writable_native(output_array)
            and not np.may_share_memory(array, output_array)
        )
        out_dtype = output_array.dtype.newbyteorder("=") if output_array is not None else np.dtype(float)
        if out_dtype.itemsize == 2:
            out_dtype = np.dtype(np.float32)
        fp_direct = (
            output_footprint is not None
            and self.out_axes is None
            and _writable_native(output_footprint)
            and output_footprint.dtype == out_dtype
            and not np.may_share_memory(array, output_footprint)
            and (output_array is None or out_direct)
        )
        if output_array is not None and not out_direct:
            target = np.empty(self.engine_shape, dtype=out_dtype)
        else:
            target = output_array
        fp_target = output_footprint if fp_direct else None
        if fp_target is not None and target is None and out_dtype != np.float64:
            fp_target = None
        data, footprint = _core.reproject_interp(
            array,
            self.header_in,
            self.header_out,
            list(self.engine_shape),
            block_size=None if engine_block is None else tuple(engine_block),
            threads=threads,
            output_array=target,
            output_footprint=fp_target,
            device=getattr(self, "device", "cpu"),
            **self.kwargs,
        )
        return self._deliver(data, footprint, output_array, output_footprint, return_footprint)

    def _deliver(self, data, footprint, output_array, output_footprint, return_footprint):
        """Puts engine results (engine axis order) into the caller's arrays, if any."""
        if data is not output_array:
            data = self._to_user_axes(data)
            if output_array is not None:
                output_array[...] = data
                data = output_array
        if return_footprint:
            if footprint is not output_footprint:
                footprint = self._to_user_axes(footprint)
                if output_footprint is not None:
                    output_footprint[...] = footprint
                    footprint = output_footprint
                elif footprint.dtype != np.float64:
                    footprint = footprint.astype(np.float64)
            return data, footprint
        return data

    def _dask(self, block_size):
        """Lazy (data, footprint) dask arrays, one Rust engine call per output block."""
        import dask
        import dask.array as da

        shape = self.engine_shape
        blocks, _ = self._blocks(block_size)
        if blocks is not None:
            if self.out_axes is not None:
                blocks = tuple(blocks[a] for a in self.out_axes)
            template = da.empty(shape, chunks=blocks)
        else:
            lead = len(shape) - self.n_wcs
            chunks = (-1,) * lead + ("auto",) * self.n_wcs
            template = da.empty(shape).rechunk(block_size_limit=64 * 1024**2, chunks=chunks)
        if self.is_dask:
            source = self.array_in.rechunk(self.array_in.shape).to_delayed().ravel()[0]
            source = dask.delayed(normalise_dtype)(source)
        else:
            source = dask.delayed(normalise_dtype(self.array_in), pure=True)
        lead_chunks = template.chunks[: len(shape) - 2]
        if all(len(c) == 1 for c in lead_chunks):
            # Blocks of the celestial plane, each covering every leading plane: one engine plan
            # per process (spline coefficients computed once), shared by its blocks.
            plan = SharedPlan.new((self.header_in, self.header_out, list(shape)), self.kwargs)
            result = _map_engine_blocks(dask_block, template, source, plan=plan)
        else:
            # Blocks along the leading dimensions: each prepares only its own planes.
            result = self._dask_planes(template, source)
        data, footprint = result[0], result[1]
        if self.out_axes is not None:
            inverse = tuple(np.argsort(self.out_axes))
            data, footprint = data.transpose(inverse), footprint.transpose(inverse)
        return data, footprint

    def _dask_planes(self, template, source):
        shape = self.engine_shape
        return _map_engine_blocks(
            _dask_block,
            template,
            source,
            header_in=self.header_in,
            header_out=self.header_out,
            plane_shape=tuple(shape[-2:]),
            **self.kwargs,
        )


def _map_engine_blocks(block_function, template, source, **kwargs):
    """``dask.array.map_blocks`` of an engine block function over the chunks of ``template``
    (engine axis order): each block a float64 array of shape ``(2, *chunk)``, ``[0]`` the data
    and ``[1]`` the footprint; ``kwargs`` go to every call of ``block_function``."""
    import dask.array as da

    return da.map_blocks(
        block_function,
        template,
        source,
        dtype=np.float64,
        new_axis=0,
        chunks=((2,),) + template.chunks,
        meta=np.empty((0,) * (template.ndim + 1), dtype=np.float64),
        **kwargs,
    )


def _writable_native(a) -> bool:
    return (
        isinstance(a, np.ndarray)
        and a.dtype.kind == "f"
        and a.dtype.itemsize in (4, 8)
        and a.dtype.isnative
        and a.flags.c_contiguous
        and a.flags.aligned
        and a.flags.writeable
    )


def _dask_block(template, array, block_info=None, *, header_in, header_out, plane_shape, **kwargs):
    """One dask block: slices the leading dimensions of the input (planes are independent)
    and has the engine compute the block's rows and columns. Module-level, so it pickles."""
    if block_info is None or not block_info or 0 not in block_info:
        return np.empty((2,) + (0,) * template.ndim)
    location = block_info[0]["array-location"]
    lead = tuple(slice(a, b) for a, b in location[:-2])
    (r0, r1), (c0, c1) = location[-2], location[-1]
    return _core.reproject_block(
        array[lead],
        header_in,
        header_out,
        list(plane_shape),
        (r0, r1),
        (c0, c1),
        **kwargs,
    )
