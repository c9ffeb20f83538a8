//! Mosaics: many overlapping images reprojected onto one output grid and combined
//! (reproject's `reproject.mosaicking`), block by block on the engine's executors.

pub mod background;
pub mod coadd;
mod device;
pub mod optimal_wcs;
mod pair_median;
pub mod plan;
