//! Which build of the block kernel a launch runs: the general kernel, which chooses the
//! transform, order and input type at run time (164 registers and a 528-byte stack frame on
//! sm_90), or a variant specialised for the plan and the launch, compiled with NVRTC defines
//! that leave out everything the launch does not need (`kernels/common.cuh` lists the gates).
//!
//! The key is read from the kernel parameters themselves ([`encode_transform`] and
//! [`encode_sampling`]'s arrays) and the launch's input type, so a variant never sees
//! parameters it was not built for. What is specialised is what measurably pays on sm_90 (see
//! `tests/gpu_kernels_compile.rs`):
//!
//! | key | why |
//! |---|---|
//! | forward transform the homography (no backward) | no projection, distortion, frame or general transform code: 164 → 32-80 registers, no stack frame, 232 B of shared memory |
//! | order 0, 1 (and 2-5 for the splines) | no spline code for 0 and 1; the splines' loops unroll (no stack frame) |
//! | input float32 or float64 (orders 0 and 1) | one load path: 47 → 40 registers for bilinear (62.5% → 75% occupancy) |
//!
//! Not specialised (measured, no occupancy gained): the NaN policy (47 → 44 registers), the
//! output type and the FITS decoding (no change), orders 0/1 of the celestial transforms (the
//! WCS code keeps 162 registers).
//!
//! [`encode_transform`]: super::kernel_params
//! [`encode_sampling`]: super::kernel_params
//!
//! ```
//! use reproject::engine::kernel_variant::{KernelVariant, VariantInput};
//! // A homography (version 1, length, no backward, kind 0, H) sampled bilinearly.
//! let mut transform = vec![1.0, 13.0, 0.0, 0.0];
//! transform.extend([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
//! let sampling = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
//! let v = KernelVariant::choose(&transform, &sampling, 0);
//! assert_eq!(v, KernelVariant::Homography { order: 1, input: VariantInput::F32 });
//! assert_eq!(v.defines().to_string(), "RP_V_HOMOGRAPHY RP_V_ORDER=1 RP_V_INPUT=0");
//! ```

use crate::gpu::variant::KernelDefines;

/// The input element types a variant may be built for.
///
/// ```
/// use reproject::engine::kernel_variant::{KernelVariant, VariantInput};
/// let v = KernelVariant::Homography { order: 0, input: VariantInput::Any };
/// assert!(!v.defines().to_string().contains("RP_V_INPUT"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VariantInput {
    /// float32 samples (kernel type code 0).
    F32,
    /// float64 samples, or spline coefficients (kernel type code 1).
    F64,
    /// Any type, chosen at run time (the integer types).
    Any,
}

/// A build of the block kernel (see the module documentation).
///
/// ```
/// use reproject::engine::kernel_variant::KernelVariant;
/// assert!(KernelVariant::General.defines().is_general());
/// assert_eq!(KernelVariant::all().len(), 11);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelVariant {
    /// Everything chosen at run time: any transform, order and input type.
    General,
    /// The forward transform is the homography and there is no backward one; interpolation
    /// of `order` (0 to 5) of inputs of type `input` (orders 2 to 5 read float64 spline
    /// coefficients).
    Homography {
        /// The interpolation order.
        order: u8,
        /// The input element type.
        input: VariantInput,
    },
}

/// What of a plan's kernel parameters chooses the variant (the input type is the launch's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PlanKernel {
    homography: bool,
    /// The order (0..=5), or `None` when the sampling parameters do not say one.
    order: Option<u8>,
}

impl PlanKernel {
    /// The plan part of the key, from the two parameter arrays.
    pub(crate) fn from_params(transform: &[f64], sampling: &[f64]) -> PlanKernel {
        // version (1), length, has_backward, forward kind (0: the homography), H (9).
        let homography = transform.len() >= 13
            && transform[0] == 1.0
            && transform[2] == 0.0
            && transform[3] == 0.0;
        let order = sampling
            .first()
            .copied()
            .and_then(|o| (0u8..=5).find(|&k| f64::from(k) == o));
        PlanKernel { homography, order }
    }

    /// The variant of a launch reading inputs of kernel type code `input_type`.
    pub(crate) fn variant(&self, input_type: i32) -> KernelVariant {
        let (true, Some(order)) = (self.homography, self.order) else {
            return KernelVariant::General;
        };
        let input = match (order, input_type) {
            (0 | 1, 0) => VariantInput::F32,
            (_, 1) => VariantInput::F64,
            (0 | 1, 2..=5) => VariantInput::Any,
            _ => return KernelVariant::General,
        };
        KernelVariant::Homography { order, input }
    }
}

impl KernelVariant {
    /// The variant a launch with these kernel parameters (`encode_transform`'s and
    /// `encode_sampling`'s arrays) reading inputs of kernel type code `input_type` runs: a
    /// specialised one where the key covers the launch, else [`KernelVariant::General`].
    ///
    /// ```
    /// use reproject::engine::kernel_variant::KernelVariant;
    /// // Not a homography (forward kind 2): the general kernel.
    /// let transform = [1.0, 4.0, 0.0, 2.0];
    /// let sampling = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
    /// assert_eq!(KernelVariant::choose(&transform, &sampling, 0), KernelVariant::General);
    /// ```
    pub fn choose(transform: &[f64], sampling: &[f64], input_type: i32) -> KernelVariant {
        PlanKernel::from_params(transform, sampling).variant(input_type)
    }

    /// Every variant [`KernelVariant::choose`] can give, the general kernel first.
    ///
    /// ```
    /// use reproject::engine::kernel_variant::KernelVariant;
    /// assert_eq!(KernelVariant::all()[0], KernelVariant::General);
    /// ```
    pub fn all() -> Vec<KernelVariant> {
        let mut all = vec![KernelVariant::General];
        for order in 0..=1 {
            for input in [VariantInput::F32, VariantInput::F64, VariantInput::Any] {
                all.push(KernelVariant::Homography { order, input });
            }
        }
        for order in 2..=5 {
            all.push(KernelVariant::Homography {
                order,
                input: VariantInput::F64,
            });
        }
        all
    }

    /// Whether this variant belongs to the homography family.
    ///
    /// ```
    /// use reproject::engine::kernel_variant::KernelVariant;
    /// assert_eq!(KernelVariant::all().iter().filter(|v| v.is_homography()).count(), 10);
    /// ```
    pub fn is_homography(&self) -> bool {
        matches!(self, KernelVariant::Homography { .. })
    }

    /// The NVRTC defines of this build (none for the general kernel).
    ///
    /// ```
    /// use reproject::engine::kernel_variant::{KernelVariant, VariantInput};
    /// let v = KernelVariant::Homography { order: 3, input: VariantInput::F64 };
    /// assert_eq!(v.defines().to_string(), "RP_V_HOMOGRAPHY RP_V_ORDER=3 RP_V_INPUT=1");
    /// ```
    pub fn defines(&self) -> KernelDefines {
        let KernelVariant::Homography { order, input } = self else {
            return KernelDefines::general();
        };
        let mut d = vec!["RP_V_HOMOGRAPHY".to_string(), format!("RP_V_ORDER={order}")];
        match input {
            VariantInput::F32 => d.push("RP_V_INPUT=0".into()),
            VariantInput::F64 => d.push("RP_V_INPUT=1".into()),
            VariantInput::Any => {}
        }
        KernelDefines::new(d).expect("the variants' defines are well formed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn homography(has_backward: f64) -> Vec<f64> {
        let mut t = vec![1.0, 13.0, has_backward, 0.0];
        t.extend([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        t
    }

    fn sampling(order: f64) -> Vec<f64> {
        vec![order, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    }

    /// The encoder emits exactly the builds kernels/variants.txt lists (which the simulator
    /// has), besides the general kernel.
    #[test]
    fn the_variants_are_the_listed_ones() {
        let mut emitted: Vec<_> = KernelVariant::all()
            .iter()
            .filter(|v| v.is_homography())
            .map(|v| v.defines())
            .collect();
        let mut listed = crate::gpu::variant::listed_variants();
        emitted.sort();
        listed.sort();
        assert_eq!(emitted, listed);
        assert_eq!(KernelVariant::all()[0], KernelVariant::General);
    }

    #[test]
    fn choose_covers_what_the_key_says_and_nothing_else() {
        let h = homography(0.0);
        for order in 0..=5u8 {
            for input_type in -1..=6 {
                let v = KernelVariant::choose(&h, &sampling(f64::from(order)), input_type);
                let want_specialised = match order {
                    0 | 1 => (0..=5).contains(&input_type),
                    _ => input_type == 1,
                };
                assert_eq!(v.is_homography(), want_specialised, "{order} {input_type}");
                assert!(KernelVariant::all().contains(&v));
            }
        }
        // A backward transform, another forward kind, a malformed array or order: general.
        let s = sampling(1.0);
        assert_eq!(
            KernelVariant::choose(&homography(1.0), &s, 0),
            KernelVariant::General
        );
        let mut vector = homography(0.0);
        vector[3] = 1.0;
        assert_eq!(
            KernelVariant::choose(&vector, &s, 0),
            KernelVariant::General
        );
        assert_eq!(
            KernelVariant::choose(&h[..5], &s, 0),
            KernelVariant::General
        );
        for bad in [1.5, 6.0, -1.0, f64::NAN] {
            let v = KernelVariant::choose(&h, &sampling(bad), 0);
            assert_eq!(v, KernelVariant::General, "order {bad}");
        }
    }
}
