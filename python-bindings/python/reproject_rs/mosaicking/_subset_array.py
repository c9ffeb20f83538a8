"""A reprojected input over the output rectangle it covers (a port of reproject 0.21's
``reproject.mosaicking._subset_array``, BSD-3-Clause, for the generic path of
:func:`~reproject_rs.mosaicking.reproject_and_coadd`)."""

from __future__ import annotations

import operator

__all__ = ["ReprojectedArraySubset"]


class ReprojectedArraySubset:
    """An array and its footprint covering ``bounds`` (one ``(imin, imax)`` per dimension,
    ``imax`` exclusive) of a larger output array. Arithmetic between two subsets works on
    their overlap: the result's footprint is where both footprints are positive."""

    def __init__(self, array, footprint, bounds):
        self.array = array
        self.footprint = footprint
        self.bounds = bounds

    def __repr__(self):
        bounds_str = "[" + ",".join(f"{imin}:{imax}" for (imin, imax) in self.bounds) + "]"
        return f"<ReprojectedArraySubset at {bounds_str}>"

    @property
    def view_in_original_array(self):
        """The slices of the output array this subset covers."""
        return tuple([slice(imin, imax) for (imin, imax) in self.bounds])

    @property
    def shape(self):
        """The shape of the covered rectangle."""
        return tuple((imax - imin) for (imin, imax) in self.bounds)

    def overlaps(self, other):
        """Whether the two rectangles share at least one pixel."""
        self._check_dimensions(other)
        for (imin, imax), (imin_other, imax_other) in zip(self.bounds, other.bounds):
            if imax <= imin_other or imax_other <= imin:
                return False
        return True

    def __add__(self, other):
        return self._operation(other, operator.add)

    def __sub__(self, other):
        return self._operation(other, operator.sub)

    def __mul__(self, other):
        return self._operation(other, operator.mul)

    def __truediv__(self, other):
        return self._operation(other, operator.truediv)

    def _check_dimensions(self, other):
        if len(self.bounds) != len(other.bounds):
            raise ValueError(
                f"Mismatch in number of dimensions, expected "
                f"{len(self.bounds)} dimensions and got {len(other.bounds)}"
            )

    def _operation(self, other, op):
        self._check_dimensions(other)
        overlap_bounds = []
        self_slices = []
        other_slices = []
        for (imin, imax), (imin_other, imax_other) in zip(self.bounds, other.bounds):
            imin_overlap = max(imin, imin_other)
            imax_overlap = min(imax, imax_other)
            if imax_overlap < imin_overlap:
                imax_overlap = imin_overlap
            overlap_bounds.append((imin_overlap, imax_overlap))
            self_slices.append(slice(imin_overlap - imin, imax_overlap - imin))
            other_slices.append(slice(imin_overlap - imin_other, imax_overlap - imin_other))
        self_slices, other_slices = tuple(self_slices), tuple(other_slices)
        array = op(self.array[self_slices], other.array[other_slices])
        footprint = (self.footprint[self_slices] > 0) & (other.footprint[other_slices] > 0)
        return ReprojectedArraySubset(array, footprint, overlap_bounds)
