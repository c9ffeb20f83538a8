//! World → pixel through a distortion: astropy's fixed-point iteration
//! (`WCS._all_world2pix`, `detect_divergence=True`), for SIP and lookup tables alike.
//!
//! `x_{k+1} = x_k − (focal(x_k) − x')`, from the undistorted solution `x'` (astropy's
//! `wcs_world2pix`), where `focal` is the pixel → focal-plane map (astropy's `pix2foc`).
//!
//! Two sets of rules:
//!
//! * **one point by itself** ([`invert`]): stop when `|Δ|² < tolerance²`, after `max_iter`
//!   steps, or when `|Δ|²` stops decreasing (the point before is kept);
//! * **one point of an astropy call** ([`invert_on_grid`], [`GridSchedule`]): astropy iterates
//!   every point of a call until its slowest has converged, and at the first divergence
//!   applies that step to the converging points only and goes on point by point. A call's
//!   points are computed alone, each on the call's schedule, found by computing them with a
//!   guess and checking what they saw.
//!
//! Each point is a small state machine advanced one `focal` evaluation at a time,
//! so several points can advance in lockstep ([`invert_lanes`]): their chains of dependent
//! operations overlap in the CPU, and each makes the same operations, in the same order, as
//! alone (the same bits).
//!
//! ```
//! use reproject::wcs::distortion::fixed_point::{invert, invert_lanes};
//! use reproject::wcs::distortion::SipInversion;
//! // focal(x, y) = (x + 0.01 x², y): solve focal = (1.01, 0) from the focal point itself.
//! let focal = |x: f64, y: f64| (x + 0.01 * x * x, y);
//! let s = invert(focal, 1.01, 0.0, (1.01, 0.0), &SipInversion::default());
//! assert!(s.converged && (s.x - 1.0).abs() < 1e-12 && s.y == 0.0);
//! let (xs, _) = invert_lanes(focal, [1.01, 2.04], [0.0, 0.0], &SipInversion::default(), None);
//! assert_eq!(xs[0], s.x);
//! assert!((xs[1] - 2.0).abs() < 1e-12);
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};

use super::sip::{SipInversion, SipSolution};

/// astropy's fixed-point inversion of one point by itself: solves `focal(x, y) = (fx, fy)`
/// (0-based) from `start` (see the module documentation). [`super::Sip::invert`] is this for
/// SIP alone.
pub fn invert(
    focal: impl Fn(f64, f64) -> (f64, f64),
    fx: f64,
    fy: f64,
    start: (f64, f64),
    how: &SipInversion,
) -> SipSolution {
    run(&focal, Point::new(fx, fy, start), how, None)
}

/// [`invert`] for one point of the astropy call `grid` describes ([`GridSchedule`]): before
/// the switch every step applies its correction and the point goes on while `k < iterations`
/// or it has not converged; at the switch the correction is applied only if it shrank, and
/// the point goes on alone only if it has not converged and is converging.
pub fn invert_on_grid(
    focal: impl Fn(f64, f64) -> (f64, f64),
    fx: f64,
    fy: f64,
    start: (f64, f64),
    how: &SipInversion,
    grid: &GridSchedule,
) -> SipSolution {
    run(&focal, Point::new(fx, fy, start), how, Some(grid))
}

/// [`invert`] (or [`invert_on_grid`] with `grid`) of `L` points at once, each from its focal
/// point; the same bits as `L` calls. Returns the solutions' `(x, y)`. A lane whose focal
/// point is not finite has no point: it is not iterated (nor seen by `grid`) and keeps it.
pub fn invert_lanes<const L: usize>(
    focal: impl Fn(f64, f64) -> (f64, f64),
    fx: [f64; L],
    fy: [f64; L],
    how: &SipInversion,
    grid: Option<&GridSchedule>,
) -> ([f64; L], [f64; L]) {
    let mut points: [Point; L] = std::array::from_fn(|l| {
        let mut p = Point::new(fx[l], fy[l], (fx[l], fy[l]));
        if !(fx[l].is_finite() && fy[l].is_finite()) {
            p.phase = Phase::Done;
        }
        p
    });
    let mut running = true;
    while running {
        running = false;
        for p in points.iter_mut().filter(|p| p.phase != Phase::Done) {
            let (f0, f1) = focal(p.x, p.y);
            p.step(f0, f1, how, grid);
            running |= p.phase != Phase::Done;
        }
    }
    (points.map(|p| p.x), points.map(|p| p.y))
}

/// Drives one point to its end.
fn run(
    focal: &impl Fn(f64, f64) -> (f64, f64),
    mut p: Point,
    how: &SipInversion,
    grid: Option<&GridSchedule>,
) -> SipSolution {
    while p.phase != Phase::Done {
        let (f0, f1) = focal(p.x, p.y);
        p.step(f0, f1, how, grid);
    }
    SipSolution {
        x: p.x,
        y: p.y,
        converged: p.dn < how.tolerance * how.tolerance,
        diverged: p.diverged,
        iterations: p.k,
    }
}

/// Where a point is in astropy's loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The first correction (before astropy's loop; `k` becomes 1).
    Start,
    /// astropy's loop over the whole call (or the point's own loop, without a call).
    Iterating,
    /// The call's step at which it switches to point-by-point iterations.
    Switching,
    /// astropy's "adaptive" iterations, point by point.
    Alone,
    Done,
}

/// One point of the iteration: the solution so far and astropy's bookkeeping.
#[derive(Debug, Clone, Copy)]
struct Point {
    /// The focal-plane point to reach.
    fx: f64,
    fy: f64,
    x: f64,
    y: f64,
    /// `|Δ|²` of the last step and of the one before.
    dn: f64,
    dn_prev: f64,
    /// astropy's iteration counter.
    k: usize,
    phase: Phase,
    diverged: bool,
}

impl Point {
    fn new(fx: f64, fy: f64, (x, y): (f64, f64)) -> Point {
        Point {
            fx,
            fy,
            x,
            y,
            dn: 0.0,
            dn_prev: 0.0,
            k: 0,
            phase: Phase::Start,
            diverged: false,
        }
    }

    /// One step, `(f0, f1)` being `focal(x, y)`.
    #[inline(always)]
    fn step(&mut self, f0: f64, f1: f64, how: &SipInversion, grid: Option<&GridSchedule>) {
        let tol2 = how.tolerance * how.tolerance;
        let (dx, dy) = (f0 - self.fx, f1 - self.fy);
        let dn = dx * dx + dy * dy;
        let apply = |p: &mut Point| {
            p.x -= dx;
            p.y -= dy;
        };
        match (self.phase, grid) {
            (Phase::Start, _) => {
                apply(self);
                (self.dn, self.dn_prev, self.k) = (dn, dn, 1);
            }
            (Phase::Iterating, None) => {
                self.dn = dn;
                self.k += 1;
                if dn >= self.dn_prev && dn >= tol2 {
                    self.diverged = true;
                    self.phase = Phase::Done;
                    return;
                }
                self.dn_prev = dn;
                apply(self);
            }
            (Phase::Iterating, Some(grid)) => {
                if dn >= self.dn_prev && dn >= tol2 {
                    grid.saw_divergence(self.k);
                }
                (self.dn, self.dn_prev) = (dn, dn);
                apply(self);
                self.k += 1;
            }
            (Phase::Switching, grid) => {
                if dn >= self.dn_prev && dn >= tol2 {
                    grid.expect("a switch belongs to a call")
                        .saw_divergence(self.k);
                }
                self.dn = dn;
                self.step_alone(dx, dy, how);
                return;
            }
            (Phase::Alone, _) => {
                (self.dn_prev, self.dn) = (self.dn, dn);
                self.diverged = dn >= self.dn_prev && dn >= tol2;
                self.step_alone(dx, dy, how);
                return;
            }
            (Phase::Done, _) => return,
        }
        self.phase = self.after_step(how, grid);
    }

    /// The rest of a step of astropy's point-by-point iterations (the switch's step too):
    /// the correction `(dx, dy)` is applied only if it shrank (`dn < dn_prev`), and the point
    /// goes on only if it shrank and has not converged.
    fn step_alone(&mut self, dx: f64, dy: f64, how: &SipInversion) {
        let converging = self.dn < self.dn_prev;
        if converging {
            self.x -= dx;
            self.y -= dy;
        }
        self.k += 1;
        let more = converging && self.dn >= how.tolerance * how.tolerance && self.k < how.max_iter;
        self.phase = if more { Phase::Alone } else { Phase::Done };
    }

    /// Whether the point takes another step of the loop, switches, or ends (after the first
    /// correction or a step of the loop).
    fn after_step(&self, how: &SipInversion, grid: Option<&GridSchedule>) -> Phase {
        let tol2 = how.tolerance * how.tolerance;
        let Some(grid) = grid else {
            let more = self.dn >= tol2 && self.k < how.max_iter;
            return if more { Phase::Iterating } else { Phase::Done };
        };
        let before_switch = match grid.switch_at {
            Some(switch) => self.k < switch,
            None => self.k < grid.iterations || self.dn >= tol2,
        };
        if self.k < how.max_iter && before_switch {
            Phase::Iterating
        } else if grid.switch_at == Some(self.k) && self.k < how.max_iter {
            Phase::Switching
        } else {
            if self.x.is_finite() && self.y.is_finite() {
                grid.saw_end(self.k);
            }
            Phase::Done
        }
    }
}

/// astropy's iteration over every point of one `all_world2pix` call, as a schedule each point
/// follows by itself ([`invert_on_grid`]), with what the points saw while following it.
///
/// astropy does not stop a point when it converges: the whole call iterates until its slowest
/// point has (`iterations`), and when a point diverges at some iteration (`switch_at`), the
/// call applies that iteration's correction to the converging points only and goes on point
/// by point (its "adaptive" iterations). A point's result therefore depends on the other
/// points of the call. Given the call's schedule, each point can be computed alone to
/// astropy's bits; the schedule itself is found by computing the points with a guess and
/// checking what they saw ([`GridSchedule::next`]), a few passes at most.
///
/// ```
/// use reproject::wcs::distortion::fixed_point::{invert_on_grid, GridSchedule};
/// use reproject::wcs::distortion::SipInversion;
/// let focal = |x: f64, y: f64| (x + 1e-3 * x * x, y);
/// let targets = [(1.0, 0.0), (300.0, 0.0)]; // the second needs more iterations
/// let how = SipInversion::astropy();
/// let mut grid = GridSchedule::first();
/// let solutions = loop {
///     let s: Vec<_> = targets.iter()
///         .map(|&(fx, fy)| invert_on_grid(focal, fx, fy, (fx, fy), &how, &grid))
///         .collect();
///     match grid.next() {
///         None => break s,
///         Some(next) => grid = next,
///     }
/// };
/// // astropy's call iterates the first point as long as the second.
/// assert_eq!(solutions[0].iterations, solutions[1].iterations);
/// ```
#[derive(Debug)]
pub struct GridSchedule {
    /// Every point iterates until `k` reaches this (astropy's `k` after the first correction
    /// is 1), whether it has converged or not, then by its own rule.
    iterations: usize,
    /// The iteration (`k`) at which the call switches to point-by-point iterations.
    switch_at: Option<usize>,
    /// Seen: the smallest and largest `k` a point ended with, without a switch.
    seen_end: (AtomicUsize, AtomicUsize),
    /// Seen: the first `k` at which a point diverged before the switch (`usize::MAX`: none).
    seen_switch: AtomicUsize,
}

impl GridSchedule {
    /// The first guess: no point iterates longer than it needs.
    pub fn first() -> GridSchedule {
        GridSchedule::new(1, None)
    }

    fn new(iterations: usize, switch_at: Option<usize>) -> GridSchedule {
        GridSchedule {
            iterations,
            switch_at,
            seen_end: (AtomicUsize::new(usize::MAX), AtomicUsize::new(0)),
            seen_switch: AtomicUsize::new(usize::MAX),
        }
    }

    /// `None` when every point of the call followed this schedule as astropy's call would
    /// have (the points' results are then astropy's); else the schedule to compute them with
    /// next. Each next schedule switches earlier or iterates longer, so this ends.
    pub fn next(&self) -> Option<GridSchedule> {
        let seen_switch = self.seen_switch.load(Ordering::Relaxed);
        let (low, high) = (
            self.seen_end.0.load(Ordering::Relaxed),
            self.seen_end.1.load(Ordering::Relaxed),
        );
        if seen_switch != usize::MAX {
            let switch = Some(seen_switch);
            return (switch != self.switch_at).then(|| GridSchedule::new(self.iterations, switch));
        }
        if self.switch_at.is_some() {
            // The point that diverged at the switch no longer does: start again. (Counts only
            // ever come from what points saw, so the call's count is never overestimated.)
            return Some(GridSchedule::first());
        }
        let consistent = high == 0 || (low == high && high >= self.iterations);
        (!consistent).then(|| GridSchedule::new(high, None))
    }

    /// A schedule of `iterations` steps that switches at `switch_at`, for tests.
    #[cfg(test)]
    pub(crate) fn fixed(iterations: usize, switch_at: Option<usize>) -> GridSchedule {
        GridSchedule::new(iterations, switch_at)
    }

    fn saw_end(&self, k: usize) {
        if k < self.seen_end.0.load(Ordering::Relaxed) {
            self.seen_end.0.fetch_min(k, Ordering::Relaxed);
        }
        if k > self.seen_end.1.load(Ordering::Relaxed) {
            self.seen_end.1.fetch_max(k, Ordering::Relaxed);
        }
    }

    fn saw_divergence(&self, k: usize) {
        if k < self.seen_switch.load(Ordering::Relaxed) {
            self.seen_switch.fetch_min(k, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// astropy's `WCS._all_world2pix` over one call's points, as numpy computes it: the
    /// whole call iterates until its slowest point converges, switches to point-by-point
    /// iterations at the first divergence. `focal` maps a pixel to the focal plane.
    fn astropy_call(
        focal: &dyn Fn((f64, f64)) -> (f64, f64),
        targets: &[(f64, f64)],
        how: &SipInversion,
    ) -> Vec<(f64, f64)> {
        let n = targets.len();
        let correction = |p: (f64, f64), t: (f64, f64)| {
            let f = focal(p);
            (f.0 - t.0, f.1 - t.1)
        };
        let norm = |d: (f64, f64)| d.0 * d.0 + d.1 * d.1;
        let mut pix = targets.to_vec();
        let mut dn = vec![0.0; n];
        for i in 0..n {
            let d = correction(pix[i], targets[i]);
            pix[i] = (pix[i].0 - d.0, pix[i].1 - d.1);
            dn[i] = norm(d);
        }
        let mut dn_prev = dn.clone();
        let tol2 = how.tolerance * how.tolerance;
        let nanmax = |v: &[f64]| {
            v.iter()
                .filter(|x| !x.is_nan())
                .fold(f64::NEG_INFINITY, |a, &b| a.max(b))
        };
        let mut k = 1;
        let mut alone = None;
        while nanmax(&dn) >= tol2 && k < how.max_iter {
            let d: Vec<_> = (0..n).map(|i| correction(pix[i], targets[i])).collect();
            dn = d.iter().map(|&d| norm(d)).collect();
            if (0..n).any(|i| dn[i] >= dn_prev[i] && dn[i] >= tol2) {
                let mut ind = vec![];
                for i in 0..n {
                    if dn[i] < dn_prev[i] {
                        pix[i] = (pix[i].0 - d[i].0, pix[i].1 - d[i].1);
                        if dn[i] >= tol2 {
                            ind.push(i);
                        }
                    }
                }
                k += 1;
                alone = Some(ind);
                break;
            }
            dn_prev = dn.clone();
            for i in 0..n {
                pix[i] = (pix[i].0 - d[i].0, pix[i].1 - d[i].1);
            }
            k += 1;
        }
        if let Some(mut ind) = alone {
            while !ind.is_empty() && k < how.max_iter {
                let mut next = vec![];
                for &i in &ind {
                    let d = correction(pix[i], targets[i]);
                    let dn_new = norm(d);
                    dn_prev[i] = dn[i];
                    dn[i] = dn_new;
                    let converging = dn_new < dn_prev[i];
                    if converging {
                        pix[i] = (pix[i].0 - d.0, pix[i].1 - d.1);
                        if dn_new >= tol2 {
                            next.push(i);
                        }
                    }
                }
                ind = next;
                k += 1;
            }
        }
        pix
    }

    /// Each point computed alone on the schedule `GridSchedule::next` settles on gives the
    /// bits of astropy's whole call: calls that converge together, calls whose points need
    /// different counts, calls with diverging points (the switch to point-by-point
    /// iterations), calls that hit the iteration limit, and NaN points among them.
    #[test]
    fn points_on_the_grid_schedule_are_astropys_call() {
        // x' = x + c x², y' = y + c y² (0-based focal plane): the fixed point diverges where
        // |2 c x| > 1, beyond 500 px.
        let focal = |(x, y): (f64, f64)| (x + 1e-3 * x * x, y + 1e-3 * y * y - 2e-4 * x * y);
        let how = SipInversion::astropy();
        let mut next = crate::wcs::distortion::test_sequence(99);
        let mut switched = 0;
        for (case, spread) in [5.0, 50.0, 150.0, 300.0, 420.0, 600.0, 900.0, 1200.0, 2000.0]
            .into_iter()
            .enumerate()
        {
            for round in 0..6 {
                let n = 1 + (case * 7 + round * 13) % 60;
                let mut targets: Vec<(f64, f64)> = (0..n)
                    .map(|_| (spread * (next() - 0.3), spread * (next() - 0.3)))
                    .collect();
                if round == 5 {
                    targets.push((f64::NAN, 1.0));
                }
                let theirs = astropy_call(&focal, &targets, &how);
                let mut grid = GridSchedule::first();
                let ours = loop {
                    let ours: Vec<(f64, f64)> = targets
                        .iter()
                        .map(|&(fx, fy)| {
                            let s =
                                invert_on_grid(|x, y| focal((x, y)), fx, fy, (fx, fy), &how, &grid);
                            (s.x, s.y)
                        })
                        .collect();
                    match grid.next() {
                        None => break ours,
                        Some(g) => grid = g,
                    }
                };
                switched += usize::from(grid.switch_at.is_some());
                for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
                    assert_eq!(
                        (a.0.to_bits(), a.1.to_bits()),
                        (b.0.to_bits(), b.1.to_bits()),
                        "spread {spread}, round {round}, point {i} of {n}: {a:?} {b:?}"
                    );
                }
            }
        }
        assert!(
            switched >= 5,
            "only {switched} calls switched to point-by-point iterations"
        );
    }

    /// [`invert_lanes`] gives each lane the bits of [`invert`] (or [`invert_on_grid`] on the
    /// same schedule), for lanes that stop at different steps, diverge or hit the limit.
    #[test]
    fn lanes_give_each_points_bits() {
        // Piecewise (like a bilinear lookup table) and strong enough to diverge far out.
        let focal = |x: f64, y: f64| {
            let kink = 0.3 * (x / 37.0).floor() * 0.01;
            (x + 1e-3 * x * x + kink, y + 1e-3 * y * y - 2e-4 * x * y)
        };
        let how = SipInversion::astropy();
        let mut next = crate::wcs::distortion::test_sequence(7);
        for spread in [3.0, 80.0, 400.0, 900.0] {
            let fx: [f64; 8] = std::array::from_fn(|_| spread * (next() - 0.3));
            let fy: [f64; 8] = std::array::from_fn(|_| spread * (next() - 0.3));
            let (x, y) = invert_lanes(focal, fx, fy, &how, None);
            for l in 0..8 {
                let s = invert(focal, fx[l], fy[l], (fx[l], fy[l]), &how);
                assert_eq!(
                    (x[l].to_bits(), y[l].to_bits()),
                    (s.x.to_bits(), s.y.to_bits())
                );
            }
            for schedule in [GridSchedule::new(6, None), GridSchedule::new(9, Some(3))] {
                let (x, y) = invert_lanes(focal, fx, fy, &how, Some(&schedule));
                for l in 0..8 {
                    let s = invert_on_grid(focal, fx[l], fy[l], (fx[l], fy[l]), &how, &schedule);
                    assert_eq!(
                        (x[l].to_bits(), y[l].to_bits()),
                        (s.x.to_bits(), s.y.to_bits())
                    );
                }
            }
        }
    }
}
