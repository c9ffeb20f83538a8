//! Flat `f64` parameter arrays describing a plan's pixel transform and sampling, as the CUDA
//! kernels in `kernels/` read them.
