//! Counts of the CUDA driver API calls a driver made, and the calls made between two
//! readings of them.

use std::fmt;

/// How many times a driver called one function of the CUDA driver API, and how long those
/// calls took in all (see [`Driver::call_counts`]): for reading on hardware where a job's
/// host threads wait.
///
/// ```
/// use reproject::gpu::driver::CallCount;
/// use std::time::Duration;
/// let c = CallCount { name: "cuMemAlloc", calls: 2, time: Duration::from_millis(3) };
/// assert_eq!(c.to_string(), "cuMemAlloc 2 (3.0 ms)");
/// ```
///
/// [`Driver::call_counts`]: super::Driver::call_counts
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallCount {
    /// The driver API function.
    pub name: &'static str,
    /// How many times it was called.
    pub calls: u64,
    /// The calls' time, summed over threads.
    pub time: std::time::Duration,
}

impl fmt::Display for CallCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} ({:.1} ms)",
            self.name,
            self.calls,
            self.time.as_secs_f64() * 1e3
        )
    }
}

/// The calls made between two readings of [`Driver::call_counts`], `before` and `after`:
/// the functions called meanwhile, with their counts and times in that span.
///
/// ```
/// use reproject::gpu::driver::{calls_between, CallCount};
/// use std::time::Duration;
/// let at = |calls, ms| CallCount { name: "cuMemAlloc", calls, time: Duration::from_millis(ms) };
/// let span = calls_between(&[at(1, 2)], &[at(3, 5)]);
/// assert_eq!(span, vec![at(2, 3)]);
/// assert!(calls_between(&[at(1, 2)], &[at(1, 2)]).is_empty());
/// ```
///
/// [`Driver::call_counts`]: super::Driver::call_counts
pub fn calls_between(before: &[CallCount], after: &[CallCount]) -> Vec<CallCount> {
    after
        .iter()
        .filter_map(|a| {
            let b = before.iter().find(|b| b.name == a.name);
            let calls = a.calls - b.map_or(0, |b| b.calls);
            (calls > 0).then(|| CallCount {
                name: a.name,
                calls,
                time: a
                    .time
                    .saturating_sub(b.map_or(Default::default(), |b| b.time)),
            })
        })
        .collect()
}
