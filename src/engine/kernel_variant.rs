//! Which build of the block kernel a launch runs: the general kernel, which chooses the
//! transform, order and input type at run time (162 registers and a 496-byte stack frame on
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
//! | output float32 or float64, and (order 1) the NaN policy: homography orders 0 and 1 | their pixels are short, so the per-pixel branches count: with four pixels per thread the float32 bilinear build goes from 177.5 to 137 instructions per pixel at 40 registers on sm_90 (it needs both fixed for 40) |
//! | the celestial transform through native unit vectors, no TPV or E-terms: its projection pair, whether it has a frame change, whether it has SIP | two projections compiled, every step inlined, the parse out of line: 164 registers and a 528 B stack → 54 for bilinear TAN → TAN (12.5% → 50% occupancy); TAN-SIP → TAN 62 with `__launch_bounds__(256, 4)` and no spill (50%) |
//!
//! Not specialised: the output type and the NaN policy of the splines and sky variants (their
//! pixels are long; keyed, they would multiply the sky variants' compilations), and the FITS
//! decoding (no change in registers). The general kernel keeps TPV, FK4 frames, linear planes
//! and transforms given as tables.
//!
//! [`encode_transform`]: super::kernel_params
//! [`encode_sampling`]: super::kernel_params
//!
//! ```
//! use reproject::engine::kernel_variant::{
//!     KernelVariant, VariantInput, VariantNan, VariantOutput,
//! };
//! // A homography (version 1, length, no backward, kind 0, H) sampled bilinearly.
//! let mut transform = vec![1.0, 13.0, 0.0, 0.0];
//! transform.extend([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
//! let sampling = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
//! let v = KernelVariant::choose(&transform, &sampling, 0, false);
//! assert_eq!(
//!     v,
//!     KernelVariant::Homography {
//!         order: 1,
//!         input: VariantInput::F32,
//!         output: VariantOutput::F32,
//!         nan: VariantNan::Propagate,
//!     }
//! );
//! assert_eq!(
//!     v.defines().to_string(),
//!     "RP_V_HOMOGRAPHY RP_V_ORDER=1 RP_V_INPUT=0 RP_V_OUT=0 RP_V_NAN=0"
//! );
//! ```

use crate::gpu::variant::KernelDefines;

/// The input element types a variant may be built for.
///
/// ```
/// use reproject::engine::kernel_variant::{
///     KernelVariant, VariantInput, VariantNan, VariantOutput,
/// };
/// let v = KernelVariant::Homography {
///     order: 0,
///     input: VariantInput::Any,
///     output: VariantOutput::F32,
///     nan: VariantNan::Any,
/// };
/// assert_eq!(v.defines().to_string(), "RP_V_HOMOGRAPHY RP_V_ORDER=0 RP_V_OUT=0");
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

/// The output types a variant may be built for (`RP_V_OUT`).
///
/// ```
/// use reproject::engine::kernel_variant::VariantOutput;
/// assert_eq!(VariantOutput::of(true), VariantOutput::F64);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VariantOutput {
    /// float32 values and footprint.
    F32,
    /// float64 values and footprint.
    F64,
    /// Either, chosen per launch.
    Any,
}

impl VariantOutput {
    /// The output type of a launch writing float64 (`out_f64`) or float32.
    ///
    /// ```
    /// use reproject::engine::kernel_variant::VariantOutput;
    /// assert_eq!(VariantOutput::of(false), VariantOutput::F32);
    /// ```
    pub fn of(out_f64: bool) -> VariantOutput {
        if out_f64 {
            VariantOutput::F64
        } else {
            VariantOutput::F32
        }
    }
}

/// The NaN policies a variant may be built for (`RP_V_NAN`).
///
/// ```
/// use reproject::engine::kernel_variant::{KernelVariant, VariantNan};
/// let r = KernelVariant::representatives();
/// let renormalizing = |v: &KernelVariant| match v {
///     KernelVariant::Homography { nan, .. } => *nan == VariantNan::Renormalize,
///     _ => false,
/// };
/// assert_eq!(r.iter().filter(|v| renormalizing(v)).count(), 6);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VariantNan {
    /// NaN taps make the sample NaN.
    Propagate,
    /// NaN taps are left out and the other weights renormalised.
    Renormalize,
    /// Either, chosen by the parameters.
    Any,
}

/// A build of the block kernel (see the module documentation).
///
/// ```
/// use reproject::engine::kernel_variant::KernelVariant;
/// assert!(KernelVariant::General.defines().is_general());
/// assert_eq!(KernelVariant::representatives().len(), 33);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelVariant {
    /// Everything chosen at run time: any transform, order and input type.
    General,
    /// The forward transform is the homography and there is no backward one; interpolation
    /// of `order` (0 to 5) of inputs of type `input` (orders 2 to 5 read float64 spline
    /// coefficients) into outputs of type `output` (orders 0 and 1; else `Any`) with NaN
    /// policy `nan` (order 1; else `Any`).
    Homography {
        /// The interpolation order.
        order: u8,
        /// The input element type.
        input: VariantInput,
        /// The output type.
        output: VariantOutput,
        /// The NaN policy.
        nan: VariantNan,
    },
    /// The forward transform (and the backward one, if any) is celestial, through native unit
    /// vectors, without TPV distortions or FK4 E-terms, from projection `out_prj` to `in_prj`
    /// (`RP_PRJ_*` codes of `kernels/projections.cuh`); `frame`: a frame change is compiled
    /// (the path next to a pole takes it); `sip`: SIP distortions are. Order and input as for
    /// [`KernelVariant::Homography`].
    Sky {
        /// The output's projection code.
        out_prj: u8,
        /// The input's projection code.
        in_prj: u8,
        /// Whether the frame change is compiled.
        frame: bool,
        /// Whether SIP distortions are compiled.
        sip: bool,
        /// The interpolation order.
        order: u8,
        /// The input element type.
        input: VariantInput,
    },
}

/// What a sky variant is keyed by, read from a transform array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SkyKey {
    out_prj: u8,
    in_prj: u8,
    frame: bool,
    sip: bool,
}

/// Reads `encode_transform`'s array (the layout of `src/engine/kernel_params.rs`) as far as
/// the sky key needs; every `None` means "not a sky variant's transform".
struct Reader<'a> {
    t: &'a [f64],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self) -> Option<f64> {
        let v = *self.t.get(self.at)?;
        self.at += 1;
        Some(v)
    }

    fn skip(&mut self, n: usize) -> Option<()> {
        (self.at + n <= self.t.len()).then(|| self.at += n)
    }

    /// A 0/1 flag.
    fn flag(&mut self) -> Option<bool> {
        match self.take()? {
            0.0 => Some(false),
            1.0 => Some(true),
            _ => None,
        }
    }

    /// CEL without TPV: its projection code and whether it has a distortion (SIP).
    fn celestial(&mut self) -> Option<(u8, bool)> {
        // swapped, crpix (2), m (4), inv (4), unity, cdelt (2).
        self.skip(14)?;
        let code = self.take()?;
        self.skip(PROJECTION_PARAMS - 1 + 5)?; // the projection's other parameters, euler (5)
        let prj = (0u8..PROJECTIONS).find(|&c| f64::from(c) == code)?;
        let distorted = self.flag()?;
        if distorted {
            self.sip_only()?;
        }
        Some((prj, distorted))
    }

    /// DIS with no TPV: lat_first, has_sip, `[SIP]`, has_tpv (0).
    fn sip_only(&mut self) -> Option<()> {
        self.flag()?;
        if self.flag()? {
            // crpix (2), tolerance, max_iter, ap_bp_guess; A, B; [AP, BP].
            self.skip(5)?;
            self.polynomials()?;
            if self.flag()? {
                self.polynomials()?;
            }
        }
        (!self.flag()?).then_some(())
    }

    /// Two SIP polynomials, each its order m and (m + 1)² coefficients.
    fn polynomials(&mut self) -> Option<()> {
        for _ in 0..2 {
            let m = self.take()?;
            let m = (0u8..=SIP_MAX_ORDER).find(|&k| f64::from(k) == m)?;
            self.skip((usize::from(m) + 1).pow(2))?;
        }
        Some(())
    }

    /// PT of kind 1 (vector) without distortions or E-terms.
    fn vector(&mut self) -> Option<SkyKey> {
        (self.take()? == 1.0).then_some(())?;
        let (out_prj, out_sip) = self.celestial()?;
        let (in_prj, in_sip) = self.celestial()?;
        self.skip(9)?; // R
        let frame = self.flag()?;
        if frame {
            self.skip(9)?; // M
                           // No E-terms removed or added.
            (!self.flag()? && !self.flag()?).then_some(())?;
        }
        Some(SkyKey {
            out_prj,
            in_prj,
            frame,
            sip: out_sip || in_sip,
        })
    }

    /// The whole transform: version 1, its length, the forward PT and the backward one (the
    /// same two projections the other way).
    fn sky(t: &[f64]) -> Option<SkyKey> {
        let mut r = Reader { t, at: 0 };
        (r.take()? == 1.0 && r.take()? == t.len() as f64).then_some(())?;
        let has_backward = r.flag()?;
        let mut key = r.vector()?;
        if has_backward {
            let back = r.vector()?;
            (back.out_prj == key.in_prj && back.in_prj == key.out_prj).then_some(())?;
            key.frame |= back.frame;
            key.sip |= back.sip;
        }
        (r.at == t.len()).then_some(key)
    }
}

/// `RP_PRJ_PARAMS`: the doubles of one projection's parameters (`Projection::device_params`).
const PROJECTION_PARAMS: usize = crate::wcs::projection::Projection::DEVICE_PARAMS;
/// `RP_PRJ_COUNT`: the projection codes are `0..PROJECTIONS`, in `ProjectionCode::ALL`'s order.
const PROJECTIONS: u8 = crate::wcs::projection::ProjectionCode::ALL.len() as u8;
/// The highest SIP order a header may give (`A_ORDER` is at most 9).
const SIP_MAX_ORDER: u8 = 9;

/// What of a plan's kernel parameters chooses the variant (the input type is the launch's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PlanKernel {
    homography: bool,
    /// The sky key, when the transform is one a sky variant computes.
    sky: Option<SkyKey>,
    /// The order (0..=5), or `None` when the sampling parameters do not say one.
    order: Option<u8>,
    /// The NaN policy is Renormalize.
    renormalize: bool,
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
        let sky = Reader::sky(transform);
        PlanKernel {
            homography,
            sky,
            order,
            renormalize: sampling.get(1).is_some_and(|&p| p != 0.0),
        }
    }

    /// The variant of a launch reading inputs of kernel type code `input_type` and writing
    /// float64 outputs (`out_f64`) or float32.
    pub(crate) fn variant(&self, input_type: i32, out_f64: bool) -> KernelVariant {
        let Some(order) = self.order else {
            return KernelVariant::General;
        };
        let input = match (order, input_type) {
            (0 | 1, 0) => VariantInput::F32,
            (_, 1) => VariantInput::F64,
            (0 | 1, 2..=5) => VariantInput::Any,
            _ => return KernelVariant::General,
        };
        match (self.homography, self.sky) {
            (true, _) => KernelVariant::Homography {
                order,
                input,
                output: match order {
                    0 | 1 => VariantOutput::of(out_f64),
                    _ => VariantOutput::Any,
                },
                nan: match (order, self.renormalize) {
                    (1, false) => VariantNan::Propagate,
                    (1, true) => VariantNan::Renormalize,
                    _ => VariantNan::Any,
                },
            },
            (false, Some(k)) => KernelVariant::Sky {
                out_prj: k.out_prj,
                in_prj: k.in_prj,
                frame: k.frame,
                sip: k.sip,
                order,
                input,
            },
            (false, None) => KernelVariant::General,
        }
    }
}

impl KernelVariant {
    /// The variant a launch with these kernel parameters (`encode_transform`'s and
    /// `encode_sampling`'s arrays) reading inputs of kernel type code `input_type` and writing
    /// float64 outputs (`out_f64`) or float32 runs: a specialised one where the key covers the
    /// launch, else [`KernelVariant::General`].
    ///
    /// ```
    /// use reproject::engine::kernel_variant::KernelVariant;
    /// // Not a homography (forward kind 2): the general kernel.
    /// let transform = [1.0, 4.0, 0.0, 2.0];
    /// let sampling = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
    /// assert_eq!(KernelVariant::choose(&transform, &sampling, 0, true), KernelVariant::General);
    /// ```
    pub fn choose(
        transform: &[f64],
        sampling: &[f64],
        input_type: i32,
        out_f64: bool,
    ) -> KernelVariant {
        PlanKernel::from_params(transform, sampling).variant(input_type, out_f64)
    }

    /// Every build the encoder emits, the general kernel first: every homography variant
    /// and, per order and input type, the sky variant TAN → TAN without a frame change (the
    /// sky variants' projection pairs and frame are not enumerated: 28² pairs).
    ///
    /// ```
    /// use reproject::engine::kernel_variant::KernelVariant;
    /// let r = KernelVariant::representatives();
    /// assert_eq!(r[0], KernelVariant::General);
    /// assert_eq!(r.len(), 33);
    /// ```
    pub fn representatives() -> Vec<KernelVariant> {
        let mut all = vec![KernelVariant::General];
        for (order, input) in Self::orders_and_inputs() {
            let outputs: &[VariantOutput] = match order {
                0 | 1 => &[VariantOutput::F32, VariantOutput::F64],
                _ => &[VariantOutput::Any],
            };
            let nans: &[VariantNan] = match order {
                1 => &[VariantNan::Propagate, VariantNan::Renormalize],
                _ => &[VariantNan::Any],
            };
            for &output in outputs {
                for &nan in nans {
                    all.push(KernelVariant::Homography {
                        order,
                        input,
                        output,
                        nan,
                    });
                }
            }
        }
        for (order, input) in Self::orders_and_inputs() {
            all.push(KernelVariant::Sky {
                out_prj: TAN,
                in_prj: TAN,
                frame: false,
                sip: false,
                order,
                input,
            });
        }
        all
    }

    /// The (order, input) pairs a family has builds of: orders 0 and 1 for each input type,
    /// orders 2 to 5 for the spline coefficients (float64).
    fn orders_and_inputs() -> Vec<(u8, VariantInput)> {
        let mut v = Vec::new();
        for order in 0..=1 {
            for input in [VariantInput::F32, VariantInput::F64, VariantInput::Any] {
                v.push((order, input));
            }
        }
        v.extend((2..=5).map(|order| (order, VariantInput::F64)));
        v
    }

    /// Whether this variant belongs to the homography family.
    ///
    /// ```
    /// use reproject::engine::kernel_variant::KernelVariant;
    /// let r = KernelVariant::representatives();
    /// assert_eq!(r.iter().filter(|v| v.is_homography()).count(), 22);
    /// ```
    pub fn is_homography(&self) -> bool {
        matches!(self, KernelVariant::Homography { .. })
    }

    /// The NVRTC defines of this build (none for the general kernel).
    ///
    /// ```
    /// use reproject::engine::kernel_variant::{
    ///     KernelVariant, VariantInput, VariantNan, VariantOutput,
    /// };
    /// let v = KernelVariant::Homography {
    ///     order: 3,
    ///     input: VariantInput::F64,
    ///     output: VariantOutput::Any,
    ///     nan: VariantNan::Any,
    /// };
    /// assert_eq!(v.defines().to_string(), "RP_V_HOMOGRAPHY RP_V_ORDER=3 RP_V_INPUT=1");
    /// let v = KernelVariant::Sky {
    ///     out_prj: 11, in_prj: 2, frame: true, sip: false, order: 1, input: VariantInput::Any,
    /// };
    /// assert_eq!(
    ///     v.defines().to_string(),
    ///     "RP_V_SKY RP_V_PRJ_OUT=11 RP_V_PRJ_IN=2 RP_V_FRAME=1 RP_V_SIP=0 RP_V_ORDER=1"
    /// );
    /// ```
    pub fn defines(&self) -> KernelDefines {
        let d = self.define_list(|name, value| format!("{name}={value}"));
        KernelDefines::new(d).expect("the variants' defines are well formed")
    }

    /// The pattern of this variant's host build in the CUDA simulator (`kernels/variants.txt`):
    /// its defines, with a sky variant's projection pair, frame and SIP, and the output type
    /// and NaN policy, left open (`*`).
    ///
    /// ```
    /// use reproject::engine::kernel_variant::{KernelVariant, VariantInput};
    /// let v = KernelVariant::Sky {
    ///     out_prj: 11, in_prj: 2, frame: false, sip: true, order: 0, input: VariantInput::F32,
    /// };
    /// assert_eq!(
    ///     v.family().to_string(),
    ///     "RP_V_SKY RP_V_PRJ_OUT=* RP_V_PRJ_IN=* RP_V_FRAME=* RP_V_SIP=* \
    ///      RP_V_ORDER=0 RP_V_INPUT=0"
    /// );
    /// assert_eq!(v.defines().instance_of(&v.family()), Some(vec![11, 2, 0, 1]));
    /// ```
    pub fn family(&self) -> KernelDefines {
        let open = [
            "RP_V_PRJ_OUT",
            "RP_V_PRJ_IN",
            "RP_V_FRAME",
            "RP_V_SIP",
            "RP_V_OUT",
            "RP_V_NAN",
        ];
        let d = self.define_list(|name, value| match open.contains(&name) {
            true => format!("{name}=*"),
            false => format!("{name}={value}"),
        });
        KernelDefines::pattern(d).expect("the variants' patterns are well formed")
    }

    /// The defines in their fixed order, `NAME=VALUE` ones written by `valued`.
    fn define_list(&self, valued: impl Fn(&str, u32) -> String) -> Vec<String> {
        let (order, input, output, nan) = match *self {
            KernelVariant::General => return Vec::new(),
            KernelVariant::Homography {
                order,
                input,
                output,
                nan,
            } => (order, input, output, nan),
            KernelVariant::Sky { order, input, .. } => {
                (order, input, VariantOutput::Any, VariantNan::Any)
            }
        };
        let mut d = Vec::new();
        if let KernelVariant::Sky {
            out_prj,
            in_prj,
            frame,
            sip,
            ..
        } = *self
        {
            d.push("RP_V_SKY".to_string());
            d.push(valued("RP_V_PRJ_OUT", out_prj.into()));
            d.push(valued("RP_V_PRJ_IN", in_prj.into()));
            d.push(valued("RP_V_FRAME", frame.into()));
            d.push(valued("RP_V_SIP", sip.into()));
        } else {
            d.push("RP_V_HOMOGRAPHY".to_string());
        }
        d.push(valued("RP_V_ORDER", order.into()));
        match input {
            VariantInput::F32 => d.push(valued("RP_V_INPUT", 0)),
            VariantInput::F64 => d.push(valued("RP_V_INPUT", 1)),
            VariantInput::Any => {}
        }
        match output {
            VariantOutput::F32 => d.push(valued("RP_V_OUT", 0)),
            VariantOutput::F64 => d.push(valued("RP_V_OUT", 1)),
            VariantOutput::Any => {}
        }
        match nan {
            VariantNan::Propagate => d.push(valued("RP_V_NAN", 0)),
            VariantNan::Renormalize => d.push(valued("RP_V_NAN", 1)),
            VariantNan::Any => {}
        }
        d
    }
}

/// `RP_PRJ_TAN`.
const TAN: u8 = crate::wcs::projection::ProjectionCode::Tan as u8;

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

    /// The encoder's build families are exactly the ones kernels/variants.txt lists (which
    /// the simulator has), besides the general kernel.
    #[test]
    fn the_variants_are_the_listed_ones() {
        let mut emitted: Vec<_> = KernelVariant::representatives()[1..]
            .iter()
            .map(|v| v.family())
            .collect();
        let mut listed = crate::gpu::variant::listed_variants();
        emitted.sort();
        emitted.dedup();
        listed.sort();
        assert_eq!(emitted, listed);
        assert_eq!(KernelVariant::representatives()[0], KernelVariant::General);
    }

    /// A side's distortion in the test arrays.
    #[derive(Clone, Copy)]
    enum Dis {
        None,
        /// SIP of this order, with the reverse polynomials or not.
        Sip(u8, bool),
        /// TPV (its body is never read: the key stops at its flag).
        Tpv,
    }

    /// CEL with projection `code` and distortion `dis`.
    fn celestial(code: f64, dis: Dis) -> Vec<f64> {
        let mut c = vec![0.0; 14];
        c.push(code);
        c.extend([0.0; PROJECTION_PARAMS - 1 + 5]);
        let poly = |m: u8| {
            let mut p = vec![f64::from(m)];
            p.extend(vec![1e-5; (usize::from(m) + 1).pow(2)]);
            p
        };
        match dis {
            Dis::None => c.push(0.0),
            Dis::Sip(m, reverse) => {
                c.extend([1.0, 0.0, 1.0]); // distorted, lat_first, has_sip
                c.extend([64.5, 64.5, 1e-8, 20.0, 0.0]);
                c.extend(poly(m));
                c.extend(poly(m));
                c.push(f64::from(u8::from(reverse)));
                if reverse {
                    c.extend(poly(m));
                    c.extend(poly(m));
                }
                c.push(0.0); // has_tpv
            }
            Dis::Tpv => c.extend([1.0, 0.0, 0.0, 1.0]),
        }
        c
    }

    /// PT of kind 1 from `out` to `inp`; `frame`: None, or Some(E-terms removed, added).
    fn vector_pt(out: (f64, Dis), inp: (f64, Dis), frame: Option<(bool, bool)>) -> Vec<f64> {
        let mut v = vec![1.0];
        v.extend(celestial(out.0, out.1));
        v.extend(celestial(inp.0, inp.1));
        v.extend([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        match frame {
            None => v.push(0.0),
            Some((remove, add)) => {
                v.push(1.0);
                v.extend([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
                for on in [remove, add] {
                    v.push(f64::from(u8::from(on)));
                    if on {
                        v.extend([-1.6e-6, -3.4e-7, -1.5e-7]);
                    }
                }
            }
        }
        v
    }

    /// The transform array of `forward` and optionally `backward`.
    fn transform(forward: Vec<f64>, backward: Option<Vec<f64>>) -> Vec<f64> {
        let mut t = vec![1.0, 0.0, f64::from(u8::from(backward.is_some()))];
        t.extend(forward);
        t.extend(backward.unwrap_or_default());
        t[1] = t.len() as f64;
        t
    }

    #[test]
    fn sky_variants_are_keyed_by_their_projections_frame_and_sip() {
        let s = sampling(1.0);
        let sky = |out_prj, in_prj, frame, sip| KernelVariant::Sky {
            out_prj,
            in_prj,
            frame,
            sip,
            order: 1,
            input: VariantInput::F32,
        };
        let plain = |code| (code, Dis::None);
        let car_tan = transform(
            vector_pt(plain(11.0), plain(2.0), None),
            Some(vector_pt(plain(2.0), plain(11.0), Some((false, false)))),
        );
        assert_eq!(
            KernelVariant::choose(&car_tan, &s, 0, false),
            sky(11, 2, true, false)
        );
        let tan = transform(vector_pt(plain(2.0), plain(2.0), None), None);
        assert_eq!(
            KernelVariant::choose(&tan, &s, 0, false),
            sky(2, 2, false, false)
        );
        assert_eq!(
            KernelVariant::choose(&tan, &sampling(3.0), 1, true),
            KernelVariant::Sky {
                out_prj: 2,
                in_prj: 2,
                frame: false,
                sip: false,
                order: 3,
                input: VariantInput::F64
            }
        );
        // SIP on the input side, both ways; with or without its reverse polynomials.
        for reverse in [false, true] {
            let sip = (2.0, Dis::Sip(3, reverse));
            let t = transform(
                vector_pt(plain(2.0), sip, None),
                Some(vector_pt(sip, plain(2.0), None)),
            );
            assert_eq!(
                KernelVariant::choose(&t, &s, 0, false),
                sky(2, 2, false, true)
            );
        }
        // What the sky variants leave out: the general kernel.
        let general = |t: &[f64]| KernelVariant::choose(t, &s, 0, false) == KernelVariant::General;
        for eterms in [(true, false), (false, true)] {
            let t = transform(vector_pt(plain(2.0), plain(2.0), Some(eterms)), None);
            assert!(general(&t), "E-terms {eterms:?}");
        }
        let tpv = transform(vector_pt(plain(2.0), (2.0, Dis::Tpv), None), None);
        assert!(general(&tpv), "TPV");
        let big_sip = transform(
            vector_pt(plain(2.0), (2.0, Dis::Sip(10, false)), None),
            None,
        );
        assert!(general(&big_sip), "SIP order past 9");
        let mut kind2 = tan.clone();
        kind2[3] = 2.0;
        assert!(general(&kind2), "general kind");
        let mut unknown = tan.clone();
        unknown[3 + 1 + 14] = 28.0; // no such projection
        assert!(general(&unknown), "projection code");
        let crossed = transform(
            vector_pt(plain(11.0), plain(2.0), None),
            Some(vector_pt(plain(11.0), plain(2.0), None)),
        );
        assert!(
            general(&crossed),
            "backward not the forward's pair reversed"
        );
        assert!(general(&tan[..tan.len() - 1]), "truncated");
        let mut long = tan.clone();
        long.push(0.0);
        assert!(general(&long), "longer than it says");
        assert!(KernelVariant::choose(&tan, &s, 6, false) == KernelVariant::General);
    }

    #[test]
    fn choose_covers_what_the_key_says_and_nothing_else() {
        let h = homography(0.0);
        for order in 0..=5u8 {
            for input_type in -1..=6 {
                for out_f64 in [false, true] {
                    let v =
                        KernelVariant::choose(&h, &sampling(f64::from(order)), input_type, out_f64);
                    let want_specialised = match order {
                        0 | 1 => (0..=5).contains(&input_type),
                        _ => input_type == 1,
                    };
                    let what = format!("{order} {input_type} {out_f64}");
                    assert_eq!(v.is_homography(), want_specialised, "{what}");
                    assert!(KernelVariant::representatives().contains(&v), "{what}");
                    if let KernelVariant::Homography { output, .. } = v {
                        let keyed = if order <= 1 {
                            VariantOutput::of(out_f64)
                        } else {
                            VariantOutput::Any
                        };
                        assert_eq!(output, keyed, "{what}");
                    }
                }
            }
        }
        // The NaN policy is keyed for bilinear, whose build differs by it.
        let mut renormalize = sampling(1.0);
        renormalize[1] = 1.0;
        let nan = |s: &[f64]| match KernelVariant::choose(&h, s, 0, false) {
            KernelVariant::Homography { nan, .. } => nan,
            v => panic!("{v:?}"),
        };
        assert_eq!(nan(&renormalize), VariantNan::Renormalize);
        assert_eq!(nan(&sampling(1.0)), VariantNan::Propagate);
        assert_eq!(nan(&sampling(0.0)), VariantNan::Any);
        // A backward transform, another forward kind, a malformed array or order: general.
        let s = sampling(1.0);
        assert_eq!(
            KernelVariant::choose(&homography(1.0), &s, 0, false),
            KernelVariant::General
        );
        let mut vector = homography(0.0);
        vector[3] = 1.0;
        assert_eq!(
            KernelVariant::choose(&vector, &s, 0, false),
            KernelVariant::General
        );
        assert_eq!(
            KernelVariant::choose(&h[..5], &s, 0, false),
            KernelVariant::General
        );
        for bad in [1.5, 6.0, -1.0, f64::NAN] {
            let v = KernelVariant::choose(&h, &sampling(bad), 0, false);
            assert_eq!(v, KernelVariant::General, "order {bad}");
        }
    }
}
