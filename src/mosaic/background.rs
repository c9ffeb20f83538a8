//! Background matching: offsets (or planes) between overlapping reprojected images, then one
//! correction per image that best explains them all (least squares, the corrections summing
//! to zero), as reproject's `determine_offset_matrix` + `solve_corrections_sgd` define it.
//!
//! reproject solves the system by stochastic gradient descent; its fixed point (for each image
//! i, the sum over its overlaps j of `offset[i][j] - (c[i] - c[j])` is zero) is the least-squares
//! solution computed here directly.
//!
//! ```
//! use reproject::mosaic::background::solve_corrections;
//! // Image 1 is 2 above image 0, image 2 is 1 above image 1.
//! let nan = f64::NAN;
//! let offsets = vec![
//!     vec![nan, -2.0, nan],
//!     vec![2.0, nan, -1.0],
//!     vec![nan, 1.0, nan],
//! ];
//! let c = solve_corrections(&offsets);
//! assert!((c[1] - c[0] - 2.0).abs() < 1e-12 && (c[2] - c[1] - 1.0).abs() < 1e-12);
//! assert!(c.iter().sum::<f64>().abs() < 1e-12);
//! ```

/// The median of `values` as numpy computes it (the mean of the two middle values for an even
/// count); NaN for none. Reorders `values`.
///
/// ```
/// let mut v = vec![3.0, 1.0, 4.0, 2.0];
/// assert_eq!(reproject::mosaic::background::median(&mut v), 2.5);
/// ```
pub fn median(values: &mut [f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    let (_, upper, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    let upper = *upper;
    if n % 2 == 1 {
        return upper;
    }
    let lower = values[..n / 2]
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    // numpy's mean of the two middle values.
    (lower + upper) / 2.0
}

/// The corrections `c` (one per image) for a matrix of pairwise offsets (`offsets[i][j]`: how
/// much image i is above image j where they overlap; NaN where they do not), minimising
/// `Σ (offsets[i][j] - (c[i] - c[j]))²`. Within each group of images linked by overlaps the
/// corrections sum to zero; an image that overlaps no other gets 0. Finally the mean is
/// subtracted, as reproject does.
///
/// ```
/// use reproject::mosaic::background::solve_corrections;
/// // Image 1 is 2 above image 0, image 2 overlaps neither.
/// let nan = f64::NAN;
/// let offsets = vec![vec![0.0, -2.0, nan], vec![2.0, 0.0, nan], vec![nan, nan, 0.0]];
/// let c = solve_corrections(&offsets);
/// assert_eq!(c[1] - c[0], 2.0);
/// assert!(c.iter().sum::<f64>().abs() < 1e-12); // the mean subtracted
/// assert_eq!(c[2] - (c[0] + c[1]) / 2.0, 0.0); // the unlinked image: 0 before the mean
/// ```
pub fn solve_corrections(offsets: &[Vec<f64>]) -> Vec<f64> {
    let n = offsets.len();
    let linked =
        |i: usize, j: usize| i != j && offsets[i][j].is_finite() && offsets[j][i].is_finite();
    let mut corrections = vec![0.0; n];
    let mut group = vec![usize::MAX; n];
    for start in 0..n {
        if group[start] != usize::MAX {
            continue;
        }
        // The images linked to `start`.
        let mut members = vec![start];
        group[start] = start;
        let mut k = 0;
        while k < members.len() {
            let i = members[k];
            let new: Vec<usize> = (0..n)
                .filter(|&j| group[j] == usize::MAX && linked(i, j))
                .collect();
            for j in new {
                group[j] = start;
                members.push(j);
            }
            k += 1;
        }
        if members.len() < 2 {
            continue;
        }
        // Normal equations L c = r (L the graph Laplacian), plus the all-ones matrix so that
        // the solution is the one summing to zero.
        let m = members.len();
        let mut a = vec![vec![1.0; m + 1]; m];
        for (p, &i) in members.iter().enumerate() {
            let mut rhs = 0.0;
            let mut degree = 0.0;
            for (q, &j) in members.iter().enumerate() {
                if linked(i, j) {
                    degree += 1.0;
                    a[p][q] -= 1.0;
                    rhs += offsets[i][j];
                }
            }
            a[p][p] += degree;
            a[p][m] = rhs;
        }
        for (p, c) in gauss_solve(a).into_iter().enumerate() {
            corrections[members[p]] = c;
        }
    }
    let mean = corrections.iter().sum::<f64>() / n.max(1) as f64;
    corrections.iter_mut().for_each(|c| *c -= mean);
    corrections
}

/// Solves the square system whose augmented rows are `a` (Gaussian elimination with partial
/// pivoting; the systems here are small and non-singular).
fn gauss_solve(mut a: Vec<Vec<f64>>) -> Vec<f64> {
    let m = a.len();
    for col in 0..m {
        let pivot = (col..m)
            .max_by(|&p, &q| a[p][col].abs().total_cmp(&a[q][col].abs()))
            .unwrap_or(col);
        a.swap(col, pivot);
        let d = a[col][col];
        if d == 0.0 {
            continue;
        }
        for row in 0..m {
            if row != col {
                let f = a[row][col] / d;
                if f != 0.0 {
                    let pivot_row = a[col].clone();
                    for (x, p) in a[row][col..].iter_mut().zip(&pivot_row[col..]) {
                        *x -= f * p;
                    }
                }
            }
        }
    }
    (0..m)
        .map(|i| {
            if a[i][i] == 0.0 {
                0.0
            } else {
                a[i][m] / a[i][i]
            }
        })
        .collect()
}

/// A least-squares plane `a + b·x + c·y` through points (x, y, value), as (a, b, c); `None`
/// when the points do not determine one (fewer than three, or all on a line).
///
/// ```
/// use reproject::mosaic::background::fit_plane;
/// let pts: Vec<(f64, f64, f64)> = (0..20)
///     .map(|i| {
///         let (x, y) = ((i % 5) as f64, (i / 5) as f64);
///         (x, y, 1.0 + 0.5 * x - 2.0 * y)
///     })
///     .collect();
/// let (a, b, c) = fit_plane(&pts).unwrap();
/// assert!((a - 1.0).abs() < 1e-9 && (b - 0.5).abs() < 1e-9 && (c + 2.0).abs() < 1e-9);
/// ```
pub fn fit_plane(points: &[(f64, f64, f64)]) -> Option<(f64, f64, f64)> {
    let n = points.len().max(1) as f64;
    let (cx, cy) = points
        .iter()
        .fold((0.0, 0.0), |(sx, sy), &(x, y, _)| (sx + x / n, sy + y / n));
    let mut fit = PlaneFit::new(cx, cy);
    for &(x, y, v) in points {
        fit.add(x, y, v);
    }
    fit.solve()
}

/// A least-squares plane `a + b·x + c·y` accumulated point by point, without storing the
/// points (coordinates taken relative to a fixed centre for conditioning).
///
/// ```
/// use reproject::mosaic::background::PlaneFit;
/// let mut fit = PlaneFit::new(2.0, 2.0);
/// for (x, y) in [(0.0, 0.0), (4.0, 0.0), (0.0, 4.0), (4.0, 4.0)] {
///     fit.add(x, y, 3.0 - x + 0.25 * y);
/// }
/// let (a, b, c) = fit.solve().unwrap();
/// assert!((a - 3.0).abs() < 1e-12 && (b + 1.0).abs() < 1e-12 && (c - 0.25).abs() < 1e-12);
/// ```
pub struct PlaneFit {
    centre: (f64, f64),
    sums: [f64; 9],
}

impl PlaneFit {
    /// An empty fit whose coordinates are taken relative to (`cx`, `cy`).
    ///
    /// ```
    /// use reproject::mosaic::background::PlaneFit;
    /// let fit = PlaneFit::new(100.0, 100.0);
    /// assert_eq!(fit.solve(), None); // no points yet
    /// ```
    pub fn new(cx: f64, cy: f64) -> PlaneFit {
        PlaneFit {
            centre: (cx, cy),
            sums: [0.0; 9],
        }
    }

    /// Adds the point (`x`, `y`) with value `v`.
    ///
    /// ```
    /// use reproject::mosaic::background::PlaneFit;
    /// let mut fit = PlaneFit::new(0.0, 0.0);
    /// fit.add(0.0, 0.0, 1.0);
    /// fit.add(1.0, 0.0, 3.0);
    /// assert_eq!(fit.solve(), None); // two points fix no plane
    /// fit.add(0.0, 1.0, 0.0);
    /// let (a, b, c) = fit.solve().unwrap();
    /// assert!((a - 1.0).abs() < 1e-12 && (b - 2.0).abs() < 1e-12 && (c + 1.0).abs() < 1e-12);
    /// ```
    pub fn add(&mut self, x: f64, y: f64, v: f64) {
        let (x, y) = (x - self.centre.0, y - self.centre.1);
        let s = &mut self.sums;
        s[0] += 1.0;
        s[1] += x;
        s[2] += y;
        s[3] += x * x;
        s[4] += x * y;
        s[5] += y * y;
        s[6] += v;
        s[7] += x * v;
        s[8] += y * v;
    }

    /// (a, b, c) in the original coordinates; `None` when the points do not fix a plane.
    ///
    /// ```
    /// use reproject::mosaic::background::PlaneFit;
    /// let mut fit = PlaneFit::new(5.0, 5.0);
    /// for x in 0..3 {
    ///     fit.add(f64::from(x), 7.0, 4.0); // points on one line: no plane
    /// }
    /// assert_eq!(fit.solve(), None);
    /// fit.add(0.0, 0.0, 4.0);
    /// let (a, b, c) = fit.solve().unwrap();
    /// assert!((a - 4.0).abs() < 1e-12 && b.abs() < 1e-12 && c.abs() < 1e-12);
    /// ```
    pub fn solve(&self) -> Option<(f64, f64, f64)> {
        let [n, sx, sy, sxx, sxy, syy, sv, sxv, syv] = self.sums;
        if n < 3.0 {
            return None;
        }
        let m = [[n, sx, sy, sv], [sx, sxx, sxy, sxv], [sy, sxy, syy, syv]];
        let det3 = |a: [[f64; 3]; 3]| {
            a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1])
                - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
                + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
        };
        let column = |k: usize| {
            let mut a = [[0.0; 3]; 3];
            for r in 0..3 {
                for c in 0..3 {
                    a[r][c] = if c == k { m[r][3] } else { m[r][c] };
                }
            }
            a
        };
        let base = [
            [m[0][0], m[0][1], m[0][2]],
            [m[1][0], m[1][1], m[1][2]],
            [m[2][0], m[2][1], m[2][2]],
        ];
        let d = det3(base);
        let scale = (n * sxx * syy).abs().max(1e-300);
        if d.abs() <= 1e-12 * scale || d.is_nan() {
            return None;
        }
        let (a0, b, c) = (
            det3(column(0)) / d,
            det3(column(1)) / d,
            det3(column(2)) / d,
        );
        Some((a0 - b * self.centre.0 - c * self.centre.1, b, c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_follow_numpy() {
        assert!(median(&mut []).is_nan());
        assert_eq!(median(&mut [5.0]), 5.0);
        assert_eq!(median(&mut [5.0, 1.0]), 3.0);
        assert_eq!(median(&mut [5.0, 1.0, 3.0]), 3.0);
    }

    #[test]
    fn corrections_of_consistent_offsets_are_exact_and_groups_sum_to_zero() {
        let truth = [0.5, -1.0, 2.0, 0.25, 7.0];
        let nan = f64::NAN;
        let mut offsets = vec![vec![nan; 5]; 5];
        // Images 0-1-2 overlap in a chain, 3 overlaps 0; 4 overlaps nothing.
        for (i, j) in [(0, 1), (1, 2), (0, 3)] {
            offsets[i][j] = truth[i] - truth[j];
            offsets[j][i] = truth[j] - truth[i];
        }
        let c = solve_corrections(&offsets);
        for (i, j) in [(0, 1), (1, 2), (0, 3)] {
            assert!(((c[i] - c[j]) - (truth[i] - truth[j])).abs() < 1e-12);
        }
        assert!(c.iter().sum::<f64>().abs() < 1e-12);
    }
}
