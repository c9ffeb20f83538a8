//! Which build of the block kernel a launch runs: the NVRTC defines a variant is compiled
//! with (`kernels/common.cuh` lists the gates). No define is the general kernel, which chooses
//! everything at run time; the engine picks a specialised build per plan and launch
//! (`src/engine/kernel_variant.rs`), the runtime compiles each once per process and the CUDA
//! simulator runs the host build of the same one (`kernels/variants.txt`).
//!
//! ```
//! use reproject::gpu::variant::KernelDefines;
//! let v = KernelDefines::new(["RP_V_HOMOGRAPHY", "RP_V_ORDER=1"])?;
//! assert_eq!(v.options(), ["-DRP_V_HOMOGRAPHY", "-DRP_V_ORDER=1"]);
//! assert_eq!(v.to_string(), "RP_V_HOMOGRAPHY RP_V_ORDER=1");
//! assert!(KernelDefines::general().is_general());
//! # Ok::<(), reproject::Error>(())
//! ```

use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result};

/// The preprocessor defines of one build of the block kernel (`NAME` or `NAME=VALUE`, in a
/// fixed order); empty for the general kernel. Cheap to clone.
///
/// ```
/// use reproject::gpu::variant::KernelDefines;
/// assert!(KernelDefines::new(["RP_V_ORDER=1; rm"]).is_err());
/// assert_eq!(KernelDefines::general().to_string(), "general");
/// assert_eq!(KernelDefines::default(), KernelDefines::general());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct KernelDefines(Arc<[String]>);

/// Whether `s` is a C identifier made of capitals, digits and underscores.
fn is_name(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

impl KernelDefines {
    /// The general kernel (no define).
    ///
    /// ```
    /// assert!(reproject::gpu::variant::KernelDefines::general().defines().is_empty());
    /// ```
    pub fn general() -> KernelDefines {
        KernelDefines::default()
    }

    /// The build with these defines, each `NAME` or `NAME=VALUE` (`NAME` of capitals, digits
    /// and underscores, `VALUE` of letters, digits and underscores).
    ///
    /// Errors: [`Error::InvalidArgument`] for anything else.
    ///
    /// ```
    /// use reproject::gpu::variant::KernelDefines;
    /// assert!(KernelDefines::new(["RP_V_ORDER=3"]).is_ok());
    /// assert!(KernelDefines::new(["rp_v_order"]).is_err());
    /// assert!(KernelDefines::new(["RP_V_ORDER="]).is_err());
    /// ```
    pub fn new<I, S>(defines: I) -> Result<KernelDefines>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let defines: Vec<String> = defines.into_iter().map(Into::into).collect();
        for d in &defines {
            let (name, value) = d.split_once('=').unwrap_or((d, "1"));
            let value_ok =
                !value.is_empty() && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !is_name(name) || !value_ok {
                return Err(Error::InvalidArgument(format!(
                    "'{d}' is not a kernel define (NAME or NAME=VALUE)"
                )));
            }
        }
        Ok(KernelDefines(defines.into()))
    }

    /// A build pattern of `kernels/variants.txt`: as [`KernelDefines::new`], but a value may
    /// also be `*`: the CUDA simulator's host build of the pattern takes that define at run
    /// time (an integer), so that one build serves every variant that differs from it only
    /// there ([`KernelDefines::instance_of`]). Patterns are never compiled with NVRTC.
    ///
    /// Errors: as [`KernelDefines::new`].
    ///
    /// ```
    /// use reproject::gpu::variant::KernelDefines;
    /// let p = KernelDefines::pattern(["RP_V_SKY", "RP_V_PRJ_OUT=*"])?;
    /// assert!(p.is_pattern());
    /// assert!(KernelDefines::new(["RP_V_PRJ_OUT=*"]).is_err());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn pattern<I, S>(defines: I) -> Result<KernelDefines>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let defines: Vec<String> = defines.into_iter().map(Into::into).collect();
        let concrete = defines.iter().map(|d| match d.strip_suffix("=*") {
            Some(name) => format!("{name}=0"),
            None => d.clone(),
        });
        KernelDefines::new(concrete)?;
        Ok(KernelDefines(defines.into()))
    }

    /// Whether some value is `*` ([`KernelDefines::pattern`]).
    ///
    /// ```
    /// use reproject::gpu::variant::KernelDefines;
    /// assert!(!KernelDefines::new(["RP_V_ORDER=1"])?.is_pattern());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn is_pattern(&self) -> bool {
        self.0.iter().any(|d| d.ends_with("=*"))
    }

    /// The values of `self` at `pattern`'s `*`s, in order, when `self` is an instance of
    /// `pattern` (the same names in the same order, the same values elsewhere, integers at the
    /// `*`s); `None` otherwise.
    ///
    /// ```
    /// use reproject::gpu::variant::KernelDefines;
    /// let p = KernelDefines::pattern(["RP_V_SKY", "RP_V_PRJ_OUT=*", "RP_V_ORDER=1"])?;
    /// let v = KernelDefines::new(["RP_V_SKY", "RP_V_PRJ_OUT=11", "RP_V_ORDER=1"])?;
    /// assert_eq!(v.instance_of(&p), Some(vec![11]));
    /// let w = KernelDefines::new(["RP_V_SKY", "RP_V_PRJ_OUT=11", "RP_V_ORDER=0"])?;
    /// assert_eq!(w.instance_of(&p), None);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn instance_of(&self, pattern: &KernelDefines) -> Option<Vec<i32>> {
        if self.0.len() != pattern.0.len() {
            return None;
        }
        let mut values = Vec::new();
        for (d, p) in self.0.iter().zip(pattern.0.iter()) {
            match p.strip_suffix("=*") {
                Some(name) => {
                    let value = d.strip_prefix(name)?.strip_prefix('=')?;
                    values.push(value.parse().ok()?);
                }
                None if d == p => {}
                None => return None,
            }
        }
        Some(values)
    }

    /// Whether this is the general kernel.
    ///
    /// ```
    /// use reproject::gpu::variant::KernelDefines;
    /// assert!(!KernelDefines::new(["RP_V_HOMOGRAPHY"])?.is_general());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn is_general(&self) -> bool {
        self.0.is_empty()
    }

    /// Output pixels each thread of this build of the block kernel computes
    /// (`RP_PIXELS_PER_THREAD` of `kernels/common.cuh`): four in a bilinear homography build,
    /// whose pixels are short, one in the others. A launch's grid has one thread block per
    /// `threads.0 * pixels_per_thread()` columns.
    ///
    /// ```
    /// use reproject::gpu::variant::KernelDefines;
    /// let bilinear = KernelDefines::new(["RP_V_HOMOGRAPHY", "RP_V_ORDER=1", "RP_V_INPUT=0"])?;
    /// assert_eq!(bilinear.pixels_per_thread(), 4);
    /// assert_eq!(KernelDefines::new(["RP_V_HOMOGRAPHY", "RP_V_ORDER=3"])?.pixels_per_thread(), 1);
    /// assert_eq!(KernelDefines::general().pixels_per_thread(), 1);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn pixels_per_thread(&self) -> u32 {
        let has = |d: &str| self.0.iter().any(|x| x == d);
        if has("RP_V_HOMOGRAPHY") && has("RP_V_ORDER=1") {
            4
        } else {
            1
        }
    }

    /// The defines, as given.
    ///
    /// ```
    /// use reproject::gpu::variant::KernelDefines;
    /// assert_eq!(KernelDefines::new(["RP_V_ORDER=0"])?.defines(), ["RP_V_ORDER=0"]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn defines(&self) -> &[String] {
        &self.0
    }

    /// The NVRTC (and C++ compiler) options: `-DNAME` or `-DNAME=VALUE` each.
    ///
    /// ```
    /// use reproject::gpu::variant::KernelDefines;
    /// assert_eq!(KernelDefines::new(["RP_V_INPUT=1"])?.options(), ["-DRP_V_INPUT=1"]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn options(&self) -> Vec<String> {
        self.0.iter().map(|d| format!("-D{d}")).collect()
    }
}

impl fmt::Display for KernelDefines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_general() {
            f.write_str("general")
        } else {
            f.write_str(&self.0.join(" "))
        }
    }
}

/// The specialised builds the CUDA simulator has (`kernels/variants.txt`: one line of defines
/// per build, [`KernelDefines::pattern`]s where a value is `*`), besides the general kernel.
///
/// ```
/// let listed = reproject::gpu::variant::listed_variants();
/// assert!(listed.iter().all(|v| !v.is_general()));
/// ```
pub fn listed_variants() -> Vec<KernelDefines> {
    include_str!("../../kernels/variants.txt")
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim())
        .filter(|l| !l.is_empty())
        .filter_map(|l| KernelDefines::pattern(l.split_whitespace()).ok())
        .collect()
}
