"""``reproject_rs.warmup``: the GPUs of a ``device`` opened and their kernels compiled
before the first job, e.g. once per dask worker process."""

from __future__ import annotations

import logging
import os
import sys

from . import _core
from ._engine import warmup_devices
from ._options import parse_device

__all__ = ["warmup", "release_gpu_memory"]

logger = logging.getLogger("reproject_rs")


def warmup(device="cuda", *, arch=None, verbose=False) -> list[str]:
    """Prepares this process for ``device`` ahead of its first job: opens the GPUs it names
    and compiles (or loads from the on-disk cache) their kernels, so that no block pays for
    it. Each process does this once whatever the number of calls; later calls are cheap.
    With ``arch``, compiles instead the kernels of GPUs of that architecture into the
    on-disk cache, without opening (or needing) a GPU: once per machine, e.g. while a
    container image is built, so that its first job does not compile them (about 20 s).

    Parameters
    ----------
    device : str
        ``'cuda'`` (default: the first GPU), ``'cuda:N'`` (GPU N), ``'cuda:all'`` (every
        visible GPU), ``'auto'`` (the first GPU if one can be used, else nothing to do) or
        ``'cpu'`` (nothing to do).
    arch : str, optional
        A GPU architecture, ``'sm_80'``, ``'sm_90'``, ... (``nvidia-smi --query-gpu=compute_cap
        --format=csv`` gives ``9.0`` for ``'sm_90'``); ``device`` is then not used. Needs
        only libnvrtc (``pip install nvidia-cuda-nvrtc-cu12``).
    verbose : bool
        Also print the lines (they are always logged, at INFO level, to the
        ``reproject_rs`` logger).

    Returns
    -------
    list of str
        One line per device, e.g. ``'GPU 0: NVIDIA H100 ...'``; for ``'cpu'``, or
        ``'auto'`` without a usable GPU, one line saying the CPU computes.

    Raises
    ------
    DeviceUnavailableError
        For ``'cuda'``, ``'cuda:N'`` and ``'cuda:all'`` when no GPU (or not GPU N) can be
        used, with the reason (no NVIDIA driver, no such device, no libnvrtc, kernels that
        do not build).
    ValueError
        (``InvalidArgumentError``) for a device name that is none of the above, or an
        ``arch`` that is not ``'sm_'`` and digits.

    Examples
    --------
    On every worker of a dask.distributed cluster, now and as workers join::

        import functools
        client.register_worker_callbacks(
            setup=functools.partial(reproject_rs.warmup, device="cuda")
        )
        lines = client.run(reproject_rs.warmup, device="cuda")  # {worker: [lines]}

    For the CPU there is nothing to prepare; a device name that means nothing is refused:

    >>> import reproject_rs
    >>> reproject_rs.warmup("cpu")
    ['cpu: nothing to prepare']
    >>> reproject_rs.warmup("tpu")
    Traceback (most recent call last):
    ...
    reproject_rs.InvalidArgumentError: ...
    """
    if arch is not None:
        lines = [_core.compile_kernels(arch)]
        device = arch
    else:
        device = parse_device(device)
        lines = _device_lines(device)
    for line in lines:
        logger.info("reproject_rs.warmup(%r): %s", device, line)
        if verbose:
            print(line)
    return lines


def _device_lines(device) -> list[str]:
    """The lines of :func:`warmup` for the canonical device name ``device``."""
    if device == "cpu":
        lines = ["cpu: nothing to prepare"]
    elif device.startswith("auto"):
        try:
            lines = warmup_devices(device)
        except _core.DeviceUnavailableError as e:
            lines = [f"cpu: no GPU can be used ({e})"]
    else:
        try:
            lines = warmup_devices(device)
        except _core.DeviceUnavailableError as e:
            raise _core.DeviceUnavailableError(
                f"device={device!r} was requested, but no CUDA GPU can be used: {e}"
            ) from None
    return lines


def release_gpu_memory() -> None:
    """Frees the GPU memory (and the page-locked host memory and CUDA streams) that the GPUs
    this process has used keep for its next jobs. A GPU job keeps its device buffers, at most
    an eighth of the GPU's memory, so that the next job of its size allocates nothing; call
    this when the process is done reprojecting and wants that memory for something else, as
    CuPy's ``free_all_blocks`` does for CuPy's pool. The next job allocates again. Nothing
    happens without a GPU.

    Examples
    --------
    ::

        data, footprint = reproject_rs.reproject_interp(hdu, header, device="cuda")
        reproject_rs.release_gpu_memory()

    In a process that never used a GPU it does nothing, and returns nothing:

    >>> import reproject_rs
    >>> reproject_rs.release_gpu_memory() is None
    True
    """
    _core.release_gpu_memory()


def compile_helper_command():
    """The process that compiles this package's GPU kernels in the background, as
    ``(program, args, env)``: this interpreter running ``reproject_rs._compile_helper``, with
    this package's folder on its ``PYTHONPATH``. ``None`` when the interpreter's path is
    unknown (Python embedded in another program)."""
    if not sys.executable or not os.path.isfile(sys.executable):
        return None
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p)
    return sys.executable, ["-m", "reproject_rs._compile_helper"], [("PYTHONPATH", path)]


def register_compile_helper() -> None:
    """Makes :func:`compile_helper_command` the process that compiles the GPU kernels this
    process would compile in the background (the core's ``gpu::set_compile_helper``), so
    that an interpreter that exits neither waits for a kernel variant nor loses it. Without
    one, the kernels are compiled on threads of this process."""
    command = compile_helper_command()
    if command is not None:
        _core.set_compile_helper(*command)
