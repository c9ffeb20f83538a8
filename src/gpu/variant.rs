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
/// per build), besides the general kernel.
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
        .filter_map(|l| KernelDefines::new(l.split_whitespace()).ok())
        .collect()
}
