"""The keyword options of ``reproject_interp`` (order, return_type, dask_method, nan_policy,
precision, device), checked and normalised with reproject's rules and messages."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from . import _core

__all__ = ["ORDER", "Options", "parse_options", "parse_order", "select_device"]

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
_DEVICES = ("auto", "cpu", "cuda")


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
    #: 'cpu', 'auto' or 'cuda' (checked usable).
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
    *, order, roundtrip_coords, nan_policy, precision, return_type, dask_method, device
):
    """:class:`Options` from ``reproject_interp``'s arguments, or the exception (and message)
    reproject_interp raises for the first bad one: device, return_type, dask_method,
    nan_policy, precision, order, in this order."""
    device = select_device(device)
    if device == "cuda" and return_type not in (None, "numpy"):
        raise _core.DeviceUnavailableError(
            f"device='cuda' computes return_type='numpy' only, not {return_type!r}"
        )
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
    return Options(
        order=parse_order(order),
        roundtrip_coords=bool(roundtrip_coords),
        nan_policy=nan_policy,
        precision=precision,
        return_type=return_type,
        dask_method=dask_method,
        device=device,
    )


def select_device(device):
    """The engine backend for ``device``: 'cpu'; 'auto' (the GPU when one is present and can
    do the job, else the CPU, with the same results); 'cuda' (the GPU, checked now:
    DeviceUnavailableError saying why when it cannot be used)."""
    if not isinstance(device, str) or device not in _DEVICES:
        raise ValueError(f"device should be one of {_DEVICES}, got {device!r}")
    if device == "cuda":
        try:
            _core.gpu_info()  # the driver, a device, libnvrtc and the compiled kernels
        except _core.DeviceUnavailableError as e:
            raise _core.DeviceUnavailableError(
                f"device='cuda' was requested, but no CUDA GPU can be used: {e}"
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
