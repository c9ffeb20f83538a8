//! Spline coefficients made once for a job's worker processes.
//!
//! A job of spline order (≥ 2) run by worker processes on the CPU needs the coefficients of
//! every input plane in every worker. Without sharing, the owner and each of its workers
//! prefilter the whole input again: N + 1 prefilters, and N copies of the coefficients in
//! memory at once. Instead the owner opens the job once with `SplinePrep::Export`: each
//! plan prefilters into a file other processes can map (in memory where the coefficients fit
//! there, see [`super::coefficients`]), and the owner keeps the files open. Its workers
//! inherit the descriptors, learn them from [`INHERITED_SPLINES_VAR`], and open the job with
//! `SplinePrep::Import`: each plan maps the next file, copy-on-write, in the order the
//! owner's plans were made (the same job opened by the same program makes its plans in the
//! same order; each file's layout is checked against the plan that takes it).
//!
//! A 6144² bicubic job with 4 processes on the 2-core development machine took 5.3-5.8 s
//! and 1.32-1.47 GB of memory before, 3.0-3.4 s and 0.49-0.54 GB with the coefficients
//! shared (`scripts/bench_process_splines.sh`).

use std::collections::VecDeque;
use std::fs::File;

use super::coefficients::PlaneStore;
use super::{Coefficients, Parallel};
use crate::error::{Error, Result};

/// The environment variable through which a worker learns the spline coefficients it
/// inherited from its owner: one entry per plan, separated by `;`, each
/// `<fd>[+<masks fd>]:<planes>x<rows>x<columns>:<masked>`, where `<masked>` is `-` without
/// masks, else a `0` or `1` per plane (whether it is sampled through its mask).
///
/// ```
/// use reproject::engine::spline_share::INHERITED_SPLINES_VAR;
/// // Set by an owner for the workers it starts; a process started otherwise has none.
/// assert_eq!(INHERITED_SPLINES_VAR, "REPROJECT_RS_INHERITED_SPLINES");
/// assert!(std::env::var_os(INHERITED_SPLINES_VAR).is_none());
/// ```
pub const INHERITED_SPLINES_VAR: &str = "REPROJECT_RS_INHERITED_SPLINES";

/// How a plan being made gets the CPU's spline coefficients (orders ≥ 2; nothing is done for
/// other orders).
pub(crate) enum SplinePrep<'s> {
    /// Now for a plan the CPU computes, on first use for one a GPU may compute.
    Usual,
    /// On first use only: a plan opened to list its blocks or make its choices.
    Deferred,
    /// Now, on the CPU, into files other processes can map, recorded in the export.
    Export(&'s mut SplineExport),
    /// Taken from the next of the files another process exported.
    Import(&'s mut SplineImport),
}

impl SplinePrep<'_> {
    /// The same preparation, for the next plan of several (a mosaic's inputs).
    pub(crate) fn reborrow(&mut self) -> SplinePrep<'_> {
        match self {
            SplinePrep::Usual => SplinePrep::Usual,
            SplinePrep::Deferred => SplinePrep::Deferred,
            SplinePrep::Export(e) => SplinePrep::Export(e),
            SplinePrep::Import(i) => SplinePrep::Import(i),
        }
    }
}

/// The layout of one plan's coefficients.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Layout {
    planes: usize,
    shape: (usize, usize),
    /// With `NanPolicy::Renormalize`: whether each plane is sampled through its mask.
    masked: Option<Vec<bool>>,
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let masked: String = match &self.masked {
            None => "-".into(),
            Some(m) => m.iter().map(|&b| if b { '1' } else { '0' }).collect(),
        };
        let (ny, nx) = self.shape;
        write!(f, "{}x{ny}x{nx}:{masked}", self.planes)
    }
}

impl std::str::FromStr for Layout {
    type Err = ();
    fn from_str(s: &str) -> std::result::Result<Layout, ()> {
        let (dims, masked) = s.split_once(':').ok_or(())?;
        let dims: Vec<usize> = dims
            .split('x')
            .map(str::parse)
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| ())?;
        let &[planes, ny, nx] = &dims[..] else {
            return Err(());
        };
        let masked = match masked {
            "-" => None,
            bits => Some(
                bits.chars()
                    .map(|c| match c {
                        '0' => Ok(false),
                        '1' => Ok(true),
                        _ => Err(()),
                    })
                    .collect::<std::result::Result<Vec<_>, _>>()?,
            ),
        };
        if masked.as_ref().is_some_and(|m| m.len() != planes) {
            return Err(());
        }
        Ok(Layout {
            planes,
            shape: (ny, nx),
            masked,
        })
    }
}

/// One plan's coefficients in files: the planes, and the masks with `Renormalize`.
#[derive(Debug)]
struct Shared {
    layout: Layout,
    planes: File,
    masks: Option<File>,
}

/// The coefficients the owner of worker processes made for them, one entry per plan, in the
/// order its plans were made; their files stay open (and their memory held) while this lives.
#[derive(Debug)]
pub(crate) struct SplineExport {
    shared: Vec<Shared>,
    /// The threads that prefilter: the owner's, before any worker starts.
    threads: usize,
}

impl SplineExport {
    /// An export whose plans prefilter on `threads` threads (whatever their options say:
    /// each worker's plan may be serial, its processes being the job's parallelism).
    pub(crate) fn new(threads: usize) -> SplineExport {
        SplineExport {
            shared: Vec::new(),
            threads: threads.max(1),
        }
    }

    /// How the plans prefilter.
    pub(super) fn parallel(&self) -> Parallel {
        Parallel::Threads(self.threads)
    }

    /// Records the files of `made` (prefiltered into shareable stores).
    pub(super) fn push(&mut self, made: &Coefficients) -> Result<()> {
        let file = |store: &PlaneStore| -> Result<File> {
            store
                .shared_file()
                .ok_or_else(|| Error::InvalidArgument("spline coefficients not shareable".into()))?
                .try_clone()
                .map_err(|e| Error::Io(format!("shared spline coefficients: {e}")))
        };
        self.shared.push(Shared {
            layout: Layout {
                planes: made.planes.len(),
                shape: made.planes.shape(),
                masked: made.masks.as_ref().map(|_| made.masked.clone()),
            },
            planes: file(&made.planes)?,
            masks: made.masks.as_ref().map(file).transpose()?,
        });
        Ok(())
    }

    /// The value of [`INHERITED_SPLINES_VAR`] for processes that inherit the files as they
    /// are numbered here, and those descriptors.
    #[cfg(unix)]
    fn describe(&self) -> (String, Vec<i32>) {
        use std::os::fd::AsRawFd;
        let mut fds = Vec::new();
        let entries: Vec<String> = self
            .shared
            .iter()
            .map(|s| {
                let planes = s.planes.as_raw_fd();
                fds.push(planes);
                let masks = s.masks.as_ref().map(|m| {
                    fds.push(m.as_raw_fd());
                    format!("+{}", m.as_raw_fd())
                });
                format!("{planes}{}:{}", masks.unwrap_or_default(), s.layout)
            })
            .collect();
        (entries.join(";"), fds)
    }

    /// Whether no plan needed coefficients.
    pub(crate) fn is_empty(&self) -> bool {
        self.shared.is_empty()
    }

    /// Makes the processes `command` starts inherit the files and learn them from
    /// [`INHERITED_SPLINES_VAR`].
    #[cfg(unix)]
    pub(crate) fn share_with(&self, command: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        let (list, fds) = self.describe();
        command.env(INHERITED_SPLINES_VAR, list);
        // SAFETY: the closure runs in the child between fork and exec and calls only fcntl,
        // which is async-signal-safe, on plain integers.
        unsafe {
            command.pre_exec(move || crate::io::lock::keep_open_across_exec(&fds));
        }
    }
}

/// The coefficients a worker inherited from its owner ([`SplineExport::share_with`]), taken
/// by its plans in order.
pub(crate) struct SplineImport(VecDeque<Shared>);

impl SplineImport {
    /// What this process inherited, from [`INHERITED_SPLINES_VAR`] (`None` when it is not
    /// set). Fails on an entry that is not well formed or names no open file.
    pub(crate) fn from_env() -> Result<Option<SplineImport>> {
        match std::env::var(INHERITED_SPLINES_VAR) {
            #[cfg(unix)]
            Ok(list) => Self::parse(&list).map(Some),
            _ => Ok(None),
        }
    }

    #[cfg(unix)]
    fn parse(list: &str) -> Result<SplineImport> {
        let bad = |entry: &str, why: &str| {
            Error::InvalidArgument(format!("{INHERITED_SPLINES_VAR}: '{entry}': {why}"))
        };
        let mut shared = VecDeque::new();
        for entry in list.split(';').filter(|e| !e.is_empty()) {
            let (fds, layout) = entry
                .split_once(':')
                .ok_or_else(|| bad(entry, "expected <fd>:<layout>"))?;
            let layout: Layout = layout
                .parse()
                .map_err(|()| bad(entry, "expected <planes>x<rows>x<columns>:<masked>"))?;
            let (planes, masks) = match fds.split_once('+') {
                Some((p, m)) => (p, Some(m)),
                None => (fds, None),
            };
            if masks.is_some() != layout.masked.is_some() {
                return Err(bad(entry, "masks and their flags go together"));
            }
            let open = |fd: &str| {
                let fd: i32 = fd.parse().map_err(|_| bad(entry, "bad descriptor"))?;
                own_copy(fd).map_err(|e| bad(entry, &format!("descriptor {fd}: {e}")))
            };
            shared.push_back(Shared {
                planes: open(planes)?,
                masks: masks.map(open).transpose()?,
                layout,
            });
        }
        Ok(SplineImport(shared))
    }

    /// The coefficients of the next plan, which has `planes` input planes of `shape` and
    /// masks with `Renormalize` (`renormalize`).
    pub(super) fn next_for(
        &mut self,
        planes: usize,
        shape: (usize, usize),
        renormalize: bool,
    ) -> Result<Coefficients> {
        let Some(next) = self.0.pop_front() else {
            return Err(mismatch("none is left", planes, shape));
        };
        let fits = next.layout.planes == planes
            && next.layout.shape == shape
            && next.layout.masked.is_some() == renormalize;
        if !fits {
            return Err(mismatch(&next.layout.to_string(), planes, shape));
        }
        let masks = next
            .masks
            .map(|m| PlaneStore::from_shared_file(m, planes, shape))
            .transpose()?;
        Ok(Coefficients {
            planes: PlaneStore::from_shared_file(next.planes, planes, shape)?,
            masks,
            masked: next.layout.masked.unwrap_or_else(|| vec![false; planes]),
        })
    }

    /// Checks that every plan took its coefficients: as many plans as the owner's.
    pub(crate) fn finish(self) -> Result<()> {
        match self.0.len() {
            0 => Ok(()),
            n => Err(Error::InvalidArgument(format!(
                "{n} of the spline coefficients inherited from the job's owner were not used: \
                 the worker opened the job otherwise than its owner (the same program must \
                 run both)"
            ))),
        }
    }
}

fn mismatch(found: &str, planes: usize, (ny, nx): (usize, usize)) -> Error {
    Error::InvalidArgument(format!(
        "the spline coefficients inherited from the job's owner ({found}) do not fit the plan \
         ({planes} planes of {ny}x{nx}): the same program must run the owner and its workers"
    ))
}

/// A descriptor of this process's own, duplicated from the inherited `fd` (which stays as it
/// is): fails if `fd` is not open.
#[cfg(unix)]
fn own_copy(fd: i32) -> std::io::Result<File> {
    use std::os::fd::FromRawFd;
    // SAFETY: a plain system call on an integer; it fails on a descriptor that is not open.
    let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if copy < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor, owned by nothing else.
    Ok(unsafe { File::from_raw_fd(copy) })
}

#[cfg(all(test, unix))]
mod tests {
    use ndarray::{Array3, ArrayD};

    use super::*;
    use crate::engine::{Geometry, Options, Plan, SourceRef};
    use crate::interp::{NanPolicy, Order};
    use crate::io::{ArraySource, ImageSource};
    use crate::wcs::Wcs;

    fn wcs(lon: f64) -> Wcs {
        Wcs::from_header_str(&format!(
            "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRPIX1 = 20\nCRPIX2 = 15\n\
             CRVAL1 = {lon}\nCRVAL2 = 30\nCDELT1 = -0.01\nCDELT2 = 0.01\n"
        ))
        .unwrap()
    }

    /// A plan of `source` from `wcs_in` to `wcs_out`, its coefficients prepared as `splines`
    /// says.
    fn plan<'a>(
        source: &'a dyn ImageSource,
        (wcs_in, wcs_out): (&Wcs, &Wcs),
        shape: &[usize],
        options: &Options,
        splines: SplinePrep<'_>,
    ) -> Result<Plan<'a>> {
        let geometry = Geometry::Wcs { wcs_in, wcs_out };
        Plan::build_with(
            SourceRef::Borrowed(source),
            geometry,
            shape,
            options,
            splines,
        )
    }

    /// Two planes, the second with a NaN (sampled through its mask with `Renormalize`).
    fn image() -> Array3<f64> {
        Array3::from_shape_fn((2, 30, 40), |(p, y, x)| {
            if (p, y, x) == (1, 12, 17) {
                f64::NAN
            } else {
                ((x * 7 + y * 3 + p) % 11) as f64 * 0.5
            }
        })
    }

    /// The bits of a plan's coefficients: planes, masks and which planes are masked.
    fn bits(plan: &Plan) -> (Vec<u64>, Option<Vec<u64>>, Vec<bool>) {
        let c = plan.coefficients().unwrap().unwrap();
        let of = |s: &PlaneStore| s.values().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        (of(&c.planes), c.masks.as_ref().map(of), c.masked.clone())
    }

    fn result(plan: &Plan) -> Vec<u64> {
        let shape = plan.shape_out().to_vec();
        let (mut data, mut footprint) = (ArrayD::<f64>::zeros(shape.clone()), ArrayD::zeros(shape));
        plan.compute_into(data.view_mut(), footprint.view_mut())
            .unwrap();
        data.iter().chain(&footprint).map(|v| v.to_bits()).collect()
    }

    /// A plan made with coefficients exported by another (here described and inherited
    /// within this process) holds the very coefficients a plan makes for itself, and
    /// computes the same bits; with and without masks.
    #[test]
    fn imported_coefficients_are_the_ones_a_plan_makes() {
        let image = image();
        let source = ArraySource::new(image.view().into_dyn()).unwrap();
        let (wcs_in, wcs_out) = (wcs(150.0), wcs(150.03));
        for nan_policy in [NanPolicy::Propagate, NanPolicy::Renormalize] {
            let options = Options {
                order: Order::Bicubic,
                nan_policy,
                ..Options::default()
            };
            let make = |splines: SplinePrep<'_>| {
                plan(&source, (&wcs_in, &wcs_out), &[25, 35], &options, splines).unwrap()
            };
            let mut export = SplineExport::new(2);
            let exporter = make(SplinePrep::Export(&mut export));
            assert!(exporter
                .coefficients()
                .unwrap()
                .unwrap()
                .planes
                .shared_file()
                .is_some());
            drop(exporter);
            let (list, fds) = export.describe();
            assert_eq!(
                fds.len(),
                if nan_policy == NanPolicy::Renormalize {
                    2
                } else {
                    1
                }
            );
            let mut import = SplineImport::parse(&list).unwrap();
            let imported = make(SplinePrep::Import(&mut import));
            import.finish().unwrap();
            let own = make(SplinePrep::Usual);
            assert_eq!(bits(&imported), bits(&own), "{list}");
            assert_eq!(result(&imported), result(&own), "{list}");
            if nan_policy == NanPolicy::Renormalize {
                assert_eq!(bits(&own).2, [false, true]);
                assert!(list.ends_with(":2x30x40:01"), "{list}");
            }
        }
    }

    #[test]
    fn coefficients_for_another_plan_are_refused() {
        let image = image();
        let source = ArraySource::new(image.view().into_dyn()).unwrap();
        let wcs = wcs(150.0);
        let options = Options {
            order: Order::Biquadratic,
            ..Options::default()
        };
        let smaller = image.slice(ndarray::s![.., ..20, ..]);
        let smaller = ArraySource::new(smaller.into_dyn()).unwrap();
        let make = |source: &dyn ImageSource, splines: SplinePrep<'_>| {
            plan(source, (&wcs, &wcs), &[10, 10], &options, splines).map(|_| ())
        };
        let mut export = SplineExport::new(2);
        make(&source, SplinePrep::Export(&mut export)).unwrap();
        let (list, _) = export.describe();
        // A plan of other planes.
        let mut import = SplineImport::parse(&list).unwrap();
        let err = make(&smaller, SplinePrep::Import(&mut import)).unwrap_err();
        assert!(
            err.to_string()
                .contains("do not fit the plan (2 planes of 20x40)"),
            "{err}"
        );
        // One plan more than the owner made.
        let mut import = SplineImport::parse(&list).unwrap();
        make(&source, SplinePrep::Import(&mut import)).unwrap();
        let err = make(&source, SplinePrep::Import(&mut import)).unwrap_err();
        assert!(err.to_string().contains("none is left"), "{err}");
        // One fewer.
        let import = SplineImport::parse(&format!("{list};{list}")).unwrap();
        let err = import.finish().unwrap_err();
        assert!(
            err.to_string().contains("2 of the spline coefficients"),
            "{err}"
        );
    }

    #[test]
    fn malformed_or_closed_inheritances_are_errors() {
        let open = std::fs::File::open("/dev/null").unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&open);
        for (list, why) in [
            ("7", "expected <fd>:<layout>"),
            (&format!("{fd}:2x3:-"), "expected <planes>x<rows>x<columns>"),
            (
                &format!("{fd}:1x2x3:01"),
                "expected <planes>x<rows>x<columns>",
            ),
            (
                &format!("{fd}:1x2x3:1"),
                "masks and their flags go together",
            ),
            (
                &format!("{fd}+{fd}:1x2x3:-"),
                "masks and their flags go together",
            ),
            ("x:1x2x3:-", "bad descriptor"),
            ("999999:1x2x3:-", "descriptor 999999"),
        ] {
            let err = SplineImport::parse(list).err().unwrap().to_string();
            assert!(err.contains(why), "{list}: {err}");
        }
        // /dev/null is open but holds no coefficients.
        let mut import = SplineImport::parse(&format!("{fd}:1x2x3:-")).unwrap();
        let err = import.next_for(1, (2, 3), false).err().unwrap().to_string();
        assert!(err.contains("hold 0 bytes, not the 48"), "{err}");
    }
}
