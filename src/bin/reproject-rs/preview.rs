//! PNG previews: an asinh stretch between percentiles through the `inferno` colour map, with
//! pixels outside the footprint (or NaN) in neutral grey. Large images are reduced by an
//! integer factor (mean of the covered pixels of each box) so the longest side stays within
//! [`MAX_SIDE`] pixels.

use std::path::Path;

use image::{ExtendedColorType, ImageFormat};
use reproject::io::{MappedOutput, PendingFile};

use crate::CliResult;

/// The longest side of a preview, in pixels.
pub const MAX_SIDE: usize = 1600;
/// Percentiles of the covered pixels mapped to the ends of the colour map.
const LOW_PERCENTILE: f64 = 0.5;
const HIGH_PERCENTILE: f64 = 99.8;
/// Softening of the asinh stretch, as a fraction of the range: smaller shows fainter detail.
const ASINH_BETA: f64 = 0.05;
/// Colour of pixels outside the footprint.
pub const OUTSIDE: [u8; 3] = [128, 128, 128];

/// matplotlib's `inferno` at 0, 0.1, ..., 1.
const INFERNO: [[u8; 3]; 11] = [
    [0, 0, 4],
    [22, 11, 57],
    [66, 10, 104],
    [106, 23, 110],
    [147, 38, 103],
    [188, 55, 84],
    [221, 81, 58],
    [243, 120, 25],
    [252, 165, 10],
    [246, 215, 70],
    [252, 255, 164],
];

/// What a preview shows.
#[derive(Debug, Clone)]
pub struct PreviewInfo {
    /// Preview width and height in pixels.
    pub width: usize,
    pub height: usize,
    /// Values at the low and high percentiles (the ends of the colour map).
    pub low: f64,
    pub high: f64,
}

/// A colour-mapped RGB preview (rows top to bottom) of one image plane of `ny` rows and `nx`
/// columns stored FITS-style (row 0 at the bottom); `footprint` zero marks pixels outside.
pub fn render<T, U>(
    data: &[T],
    footprint: Option<&[U]>,
    ny: usize,
    nx: usize,
) -> (Vec<u8>, PreviewInfo)
where
    T: Copy + Into<f64>,
    U: Copy + Into<f64>,
{
    let k = ny.max(nx).div_ceil(MAX_SIDE).max(1);
    let (h, w) = (ny.div_ceil(k), nx.div_ceil(k));
    // Box means of the covered pixels (NaN where a box has none).
    let mut reduced = vec![f64::NAN; h * w];
    for (by, out_row) in reduced.chunks_mut(w).enumerate() {
        for (bx, out) in out_row.iter_mut().enumerate() {
            let (mut sum, mut n) = (0.0, 0usize);
            for y in by * k..((by + 1) * k).min(ny) {
                for x in bx * k..((bx + 1) * k).min(nx) {
                    let i = y * nx + x;
                    let v: f64 = data[i].into();
                    let inside = footprint.is_none_or(|f| f[i].into() > 0.0);
                    if inside && v.is_finite() {
                        sum += v;
                        n += 1;
                    }
                }
            }
            if n > 0 {
                *out = sum / n as f64;
            }
        }
    }
    let (low, high) = percentiles(&reduced, LOW_PERCENTILE, HIGH_PERCENTILE);
    let range = if high > low { high - low } else { 1.0 };
    let norm = (1.0 / ASINH_BETA).asinh();
    let mut rgb = Vec::with_capacity(h * w * 3);
    // FITS row 0 is the bottom of the picture.
    for row in reduced.chunks(w).rev() {
        for &v in row {
            let c = if v.is_nan() {
                OUTSIDE
            } else {
                let t = ((v - low) / range).clamp(0.0, 1.0);
                colour((t / ASINH_BETA).asinh() / norm)
            };
            rgb.extend_from_slice(&c);
        }
    }
    let info = PreviewInfo {
        width: w,
        height: h,
        low,
        high,
    };
    (rgb, info)
}

/// Renders a preview (see [`render`]) as PNG bytes.
pub fn encode_png<T, U>(
    data: &[T],
    footprint: Option<&[U]>,
    ny: usize,
    nx: usize,
) -> CliResult<(Vec<u8>, PreviewInfo)>
where
    T: Copy + Into<f64>,
    U: Copy + Into<f64>,
{
    let (rgb, info) = render(data, footprint, ny, nx);
    let mut png = std::io::Cursor::new(Vec::new());
    image::write_buffer_with_format(
        &mut png,
        &rgb,
        info.width as u32,
        info.height as u32,
        ExtendedColorType::Rgb8,
        ImageFormat::Png,
    )
    .map_err(|e| format!("cannot encode the preview: {e}"))?;
    Ok((png.into_inner(), info))
}

/// Renders and writes a preview PNG (see [`render`]), published atomically; refuses to
/// replace an existing file unless `overwrite`.
pub fn write_png<T, U>(
    path: &Path,
    data: &[T],
    footprint: Option<&[U]>,
    ny: usize,
    nx: usize,
    overwrite: bool,
) -> CliResult<PreviewInfo>
where
    T: Copy + Into<f64>,
    U: Copy + Into<f64>,
{
    let (bytes, info) = encode_png(data, footprint, ny, nx)?;
    let cannot = |e: reproject::Error| crate::job::output_error(path, e);
    let file = PendingFile::write(path, &bytes, overwrite).map_err(cannot)?;
    MappedOutput::finish_together(Vec::new(), vec![file]).map_err(cannot)?;
    Ok(info)
}

/// The `lo` and `hi` percentiles of the finite values (0, 1 when there are none).
fn percentiles(values: &[f64], lo: f64, hi: f64) -> (f64, f64) {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return (0.0, 1.0);
    }
    let mut at = |p: f64| {
        let i = ((p / 100.0) * (v.len() - 1) as f64).round() as usize;
        *v.select_nth_unstable_by(i, f64::total_cmp).1
    };
    (at(lo), at(hi))
}

/// The colour map at `t` in [0, 1].
fn colour(t: f64) -> [u8; 3] {
    let x = t.clamp(0.0, 1.0) * (INFERNO.len() - 1) as f64;
    let i = (x.floor() as usize).min(INFERNO.len() - 2);
    let f = x - i as f64;
    let (a, b) = (INFERNO[i], INFERNO[i + 1]);
    std::array::from_fn(|c| (a[c] as f64 + f * (b[c] as f64 - a[c] as f64)).round() as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretch_and_footprint() {
        // 2 rows: bottom row a ramp, top row outside the footprint.
        let data: Vec<f64> = vec![0.0, 1.0, 2.0, 3.0, 5.0, 5.0, 5.0, 5.0];
        let fp: Vec<f64> = vec![1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0];
        let (rgb, info) = render(&data, Some(&fp), 2, 4);
        assert_eq!((info.width, info.height), (4, 2));
        // Top row of the picture = FITS row 1 = outside.
        assert!(rgb[..12].chunks(3).all(|c| c == OUTSIDE));
        assert_eq!(&rgb[12..15], &INFERNO[0]);
        assert_eq!(&rgb[21..24], &INFERNO[10]);
        // NaN is outside too, and big images are reduced.
        let big = vec![f32::NAN; 4000 * 10];
        let (rgb, info) = render::<f32, f32>(&big, None, 10, 4000);
        assert_eq!((info.width, info.height), (1334, 4));
        assert!(rgb.chunks(3).all(|c| c == OUTSIDE));
    }
}
