"""The keyword options of ``reproject_interp`` (order, return_type, dask_method, nan_policy,
precision, device), checked and normalised with reproject's rules and messages."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from . import _core

__all__ = ["DEVICES", "ORDER", "Options", "parse_device", "parse_options", "parse_order",
           "select_device"]

#: reproject's order names (plus the engine's orders 4 and 5).
ORDER = {
    "nearest-neighbor": 0,
    "bilinear": 1,
    "biquadratic": 2,
    "bicubic": 3,
    "quartic": 4,
    "quintic": 5,
}

_NAN_POLICIES = ("propagate", "renormalize")
_PRECISIONS = ("reproject", "float64")
_RETURN_TYPES = ("numpy", "dask", "lazy")
#: The device names ``device=`` takes (N: a GPU number).
DEVICES = ("cpu", "auto", "cuda", "cuda:N", "cuda:all")


@dataclass(frozen=True)
class Options:
    """The checked options of one ``reproject_interp`` call."""

    #: Spline order 0-5.
    order: int
    roundtrip_coords: bool
    nan_policy: str
    precision: str
    #: 'numpy', 'dask' or 'lazy'.
    return_type: str
    #: 'memmap' or 'none': accepted for compatibility, dask inputs are computed to memory
    #: either way.
    dask_method: str
    #: 'cpu', 'auto', 'cuda', 'cuda:N' or 'cuda:all' (canonical; GPUs checked usable).
    device: str

    @property
    def engine(self) -> dict:
        """The keyword arguments every engine call takes."""
        return dict(
            order=self.order,
            roundtrip_coords=self.roundtrip_coords,
            nan_policy=self.nan_policy,
            precision=self.precision,
        )


def parse_options(
    *, order, roundtrip_coords, nan_policy, precision, return_type, dask_method, device,
    parallel=False,
):
    """:class:`Options` from ``reproject_interp``'s arguments, or the exception (and message)
    reproject_interp raises for the first bad one: device, return_type, dask_method,
    nan_policy, precision, order, in this order; then whether the GPUs of a 'cuda' device
    can be used here, when the blocks are computed in this process (not for
    ``return_type='dask'`` or ``parallel='current-scheduler'``, whose blocks may run on other
    machines: those check where they run)."""
    device = parse_device(device)
    if return_type is None:
        return_type = "numpy"
    elif not isinstance(return_type, str) or return_type not in _RETURN_TYPES:
        raise ValueError(
            "return_type should be set to 'numpy' or 'dask' (or 'lazy', a reproject_rs extension)"
        )
    if dask_method is None:
        dask_method = "none"
    elif dask_method not in ("memmap", "none"):
        raise ValueError("dask_method should be set to 'memmap' or 'none'")
    if nan_policy not in _NAN_POLICIES:
        raise _core.InvalidArgumentError(
            f"nan_policy should be one of {_NAN_POLICIES}, got {nan_policy!r}"
        )
    if precision not in _PRECISIONS:
        raise _core.InvalidArgumentError(
            f"precision should be one of {_PRECISIONS}, got {precision!r}"
        )
    order = parse_order(order)
    if return_type != "dask" and not isinstance(parallel, str):
        select_device(device)
    return Options(
        order=order,
        roundtrip_coords=bool(roundtrip_coords),
        nan_policy=nan_policy,
        precision=precision,
        return_type=return_type,
        dask_method=dask_method,
        device=device,
    )


def parse_device(device) -> str:
    """The canonical name of ``device`` ('cpu', 'auto', 'cuda', 'cuda:N', 'cuda:all'; the
    core's ``parse_device`` also takes 'gpu' for 'cuda', in any case), or a ValueError
    (``InvalidArgumentError``) naming the accepted values."""
    if not isinstance(device, str):
        raise _core.InvalidArgumentError(
            f"device should be one of 'cpu', 'auto', 'cuda', 'cuda:N' or 'cuda:all', "
            f"got {device!r}"
        )
    return _core.parse_device(device)


def select_device(device) -> str:
    """The engine device for ``device`` (canonical name), checked usable in this process:
    'cpu'; 'auto' (the GPU when the job is large enough for it to pay, one is present and it
    can do the job, else the CPU, with values within 1e-9 relative); 'cuda' (the first GPU), 'cuda:N' (GPU N) or 'cuda:all'
    (every GPU), opened now (kernels compiled): DeviceUnavailableError saying why when they
    cannot be used."""
    device = parse_device(device)
    if device.startswith("cuda"):
        try:
            _core.warmup(device)  # the driver, the devices, libnvrtc and the compiled kernels
        except _core.DeviceUnavailableError as e:
            raise _core.DeviceUnavailableError(
                f"device={device!r} was requested, but no CUDA GPU can be used: {e}"
            ) from None
    return device


def parse_order(order):
    """The spline order (0-5) of an order name or integer, with reproject's exceptions: a
    KeyError for unknown names, RuntimeError for unsupported integers."""
    if isinstance(order, str):
        return ORDER[order]  # KeyError for unknown names, as reproject
    if isinstance(order, numbers.Integral) and not isinstance(order, bool):
        if not 0 <= int(order) <= 5:
            raise RuntimeError("spline order not supported")
        return int(order)
    raise TypeError(f"order should be a string or an integer, got {order!r}")
