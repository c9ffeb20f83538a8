//! Input rows staged in page-locked memory as the kernels read them, on host threads, and
//! uploaded chunk by chunk.

use std::ops::Range;
use std::sync::Arc;

use super::input::Input;
use super::owned::HostAlloc;
use super::Failure;
use crate::engine::crew::{Crew, Job, RawPart};
use crate::engine::streaming;
use crate::engine::{in_row_bands, Plan};
use crate::error::{Error, Result};
use crate::gpu::driver::{DevicePtr, Driver, StreamId};

/// Fewest bytes one crew thread stages of a band ([`fill_rows_on`]).
const MIN_STAGING_SHARE: usize = 1 << 20;

/// Fills `out` with rows × cols of input plane `plane` as the kernel reads it
/// (`input.elem()` bytes per sample, row-major), on several threads of the current rayon pool.
fn fill_rows(
    plan: &Plan,
    plane: usize,
    input: Input,
    rows: Range<usize>,
    cols: Range<usize>,
    out: &mut [u8],
) -> Result<()> {
    let row_bytes = cols.len() * input.elem();
    if row_bytes == 0 || rows.is_empty() {
        return Ok(());
    }
    // The CPU's coefficients made (once per plan) before the threads fan out.
    if matches!(input, Input::Coefficients) {
        plan.coefficients()?;
    }
    in_row_bands(
        &mut out[..rows.len() * row_bytes],
        row_bytes,
        rows.start,
        |r0, chunk| fill_band(plan, plane, input, r0, cols.clone(), chunk),
    )
}

/// [`fill_rows`] on `crew`, never on a rayon pool: for the thread that uploads the resident
/// planes while block threads of the pool wait for its rows (a rayon wait could run one of
/// those blocks on this thread, which would then wait for itself; see [`crate::engine::crew`]).
pub(super) fn fill_rows_on<'env>(
    crew: &Crew<'env>,
    plan: &'env Plan<'env>,
    plane: usize,
    input: Input<'env>,
    rows: Range<usize>,
    cols: Range<usize>,
    out: &mut [u8],
) -> Result<()> {
    let row_bytes = cols.len() * input.elem();
    if row_bytes == 0 || rows.is_empty() {
        return Ok(());
    }
    let band = staging_share(rows.len(), row_bytes, crew.threads());
    let out = &mut out[..rows.len() * row_bytes];
    if band >= rows.len() {
        return fill_band(plan, plane, input, rows.start, cols, out);
    }
    let jobs = out
        .chunks_mut(band * row_bytes)
        .enumerate()
        .map(|(i, chunk)| {
            let part = RawPart::new(chunk);
            let cols = cols.clone();
            let r0 = rows.start + i * band;
            Box::new(move || {
                // SAFETY: `crew.run` returns once every job is done; the chunks are disjoint
                // parts of `out`, which nothing else touches meanwhile.
                let chunk = unsafe { part.bytes() };
                fill_band(plan, plane, input, r0, cols, chunk)
            }) as Job<'env>
        })
        .collect();
    crew.run(jobs)
}

/// The rows each of `threads` crew threads stages of a band of `rows` rows of `row_bytes`:
/// an equal share for every thread, of [`MIN_STAGING_SHARE`] at least (a job's dispatch costs
/// microseconds). A minimum of 64 rows left half of an 8-thread crew idle on a 16 MB band of
/// 64 KB rows: staging ran at 7.8 GB/s on the H100 machine (session 14).
fn staging_share(rows: usize, row_bytes: usize, threads: usize) -> usize {
    rows.div_ceil(threads.max(1))
        .max(MIN_STAGING_SHARE.div_ceil(row_bytes.max(1)))
}

/// Fills `chunk` (whole rows of `cols`) with input rows from `r0` of plane `plane`.
fn fill_band(
    plan: &Plan,
    plane: usize,
    input: Input,
    r0: usize,
    cols: Range<usize>,
    chunk: &mut [u8],
) -> Result<()> {
    let elem = input.elem();
    let row_bytes = cols.len() * elem;
    let r1 = r0 + chunk.len() / row_bytes;
    let (_, nx) = plan.plane_shape_in;
    match input {
        Input::Raw(raw, _) => {
            for (r, row) in (r0..r1).zip(chunk.chunks_exact_mut(row_bytes)) {
                let at = (r * nx + cols.start) * elem;
                // Streamed: the copy engine alone reads the staging.
                streaming::copy(row, &raw.bytes[at..at + row_bytes]);
            }
            streaming::finish();
            Ok(())
        }
        Input::Coefficients => {
            let Some(c) = plan.coefficients()? else {
                return Err(Error::InvalidArgument(
                    "spline coefficients of an order without a prefilter".into(),
                ));
            };
            let values = as_f64(chunk);
            let src = c.planes.plane(plane);
            for (r, row) in (r0..r1).zip(values.chunks_exact_mut(cols.len())) {
                match src.row(r).as_slice() {
                    Some(s) => row.copy_from_slice(&s[cols.clone()]),
                    None => {
                        for (o, x) in row.iter_mut().zip(cols.clone()) {
                            *o = src[[r, x]];
                        }
                    }
                }
            }
            Ok(())
        }
        Input::Values => plan.read_values(plane, r0..r1, cols, as_f64(chunk)),
    }
}

/// A staging chunk seen as f64 (host buffers are 8-byte aligned, chunks start at multiples
/// of 8 bytes).
fn as_f64(bytes: &mut [u8]) -> &mut [f64] {
    assert_eq!(bytes.as_ptr() as usize % 8, 0, "staging is 8-byte aligned");
    // SAFETY: aligned (checked), any bit pattern is a valid f64, length in whole f64s.
    unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr() as *mut f64, bytes.len() / 8) }
}

/// Uploads rows × cols of input plane `plane` into `dst`, chunk by chunk, through the lanes
/// (a page-locked staging buffer and the stream its copies go on) in turn: with two lanes the
/// next chunk is read and converted on the host while the previous one crosses the bus. A
/// lane's buffer is filled again only once its copy is done; every copy is done on return.
/// The buffers must have no copy pending on entry.
#[allow(clippy::too_many_arguments)]
pub(super) fn upload_rows(
    driver: &Arc<dyn Driver>,
    lanes: &mut [(StreamId, &mut HostAlloc)],
    plan: &Plan,
    plane: usize,
    input: Input,
    rows: Range<usize>,
    cols: Range<usize>,
    dst: DevicePtr,
) -> std::result::Result<(), Failure> {
    let row_bytes = (cols.len() * input.elem()).max(1);
    let capacity = lanes
        .iter()
        .map(|(_, s)| s.buffer().len())
        .min()
        .unwrap_or(0);
    if row_bytes > capacity {
        return Err(Failure::Engine(Error::InvalidArgument(format!(
            "input rows of {row_bytes} bytes exceed the GPU staging buffer"
        ))));
    }
    let chunk_rows = capacity / row_bytes;
    let mut offset = 0usize;
    let mut used = vec![false; lanes.len()];
    for (k, r0) in rows.clone().step_by(chunk_rows).enumerate() {
        let r1 = (r0 + chunk_rows).min(rows.end);
        let bytes = (r1 - r0) * row_bytes;
        let lane = k % lanes.len();
        let (stream, staging) = &mut lanes[lane];
        if used[lane] {
            // Its previous chunk must be on the device before the buffer is refilled.
            driver.synchronize(*stream)?;
        }
        used[lane] = true;
        // SAFETY: no copy from this buffer is pending (synchronized above, or none queued).
        let host = unsafe { staging.bytes_mut() };
        fill_rows(plan, plane, input, r0..r1, cols.clone(), &mut host[..bytes])?;
        // SAFETY: dst holds the rows (the caller sized it); the buffer is not touched until
        // its stream is synchronized.
        unsafe { driver.upload(*stream, staging.buffer(), 0, dst.offset(offset), bytes)? };
        offset += bytes;
    }
    for ((stream, _), used) in lanes.iter().zip(used) {
        if used {
            driver.synchronize(*stream)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each crew thread stages its share of a band, a megabyte at least.
    #[test]
    fn every_crew_thread_stages_a_share_of_a_band() {
        // A 16 MB band of a 16384-wide float32 plane on 8 threads: 32 rows (2 MB) each.
        assert_eq!(staging_share(256, 65536, 8), 32);
        assert_eq!(256usize.div_ceil(staging_share(256, 65536, 8)), 8);
        // Narrow rows: a megabyte a thread at least.
        assert_eq!(staging_share(4096, 1024, 8), 1024);
        assert_eq!(staging_share(10, 4, 0), 1 << 18);
        // Rows wider than the minimum: one row at least.
        assert_eq!(staging_share(3, 4 << 20, 8), 1);
    }
}
