//! The per-pixel post-processing of the two heads on channels-last tensors: softmax over
//! channels, dustbin drop + cell fold into the score map, and L2 normalisation over channels.
//! Each pixel's channels are contiguous; the sums are taken in f64 like the reference. The
//! loops are compiled for the CPU's instruction set ([`compiled_for`]) and written so that the
//! compiler vectorises them: the softmax's exponential is [`exp_nonpositive`], a branch-free
//! f64 exp, instead of a libm call per value.

use rayon::prelude::*;
use superpoint_graph::reference::l2norm::EPS;

use super::isa::Isa;
use super::simd::compiled_for;
use super::tensor::Hwc;

/// Pixels per parallel task of the per-pixel loops.
const PIXELS_PER_TASK: usize = 256;

/// eˣ for x ≤ 0 in f64, within a few units in the last place of the correctly rounded value
/// (Cody-Waite reduction x = k·ln 2 + r, |r| ≤ ln 2 / 2, a degree-13 Taylor polynomial, whose
/// truncation error is below 5e-18, and 2ᵏ made from its bits). Below −708, where eˣ is under
/// 3.4e-308, it returns e⁻⁷⁰⁸: every caller divides by a sum ≥ 1 and rounds to f32, where
/// both are 0.
#[inline(always)]
fn exp_nonpositive(x: f64) -> f64 {
    // ln 2 split so that k·LN2_HI is exact for |k| < 2¹¹ (fdlibm's constants).
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    // Adding 1.5·2⁵² rounds to an integer and leaves it in the low bits.
    const SHIFT: f64 = 6_755_399_441_055_744.0;
    let x = x.clamp(-708.0, 0.0);
    let t = x * std::f64::consts::LOG2_E + SHIFT;
    let k = t - SHIFT;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    // Horner on 1/n!, n = 13 down to 0.
    let mut p = 1.0 / 6_227_020_800.0;
    for factorial in [
        479_001_600.0,
        39_916_800.0,
        3_628_800.0,
        362_880.0,
        40_320.0,
        5_040.0,
        720.0,
        120.0,
        24.0,
        6.0,
        2.0,
        1.0,
        1.0,
    ] {
        p = p * r + 1.0 / factorial;
    }
    let k_int = t.to_bits().wrapping_sub(SHIFT.to_bits()) as i64;
    p * f64::from_bits(((k_int + 1023) as u64) << 52)
}

/// Softmax over the channels of every pixel.
pub(crate) fn softmax(isa: Isa, x: &Hwc) -> Hwc {
    let c = x.channels();
    let mut out = Hwc::for_overwrite(c, x.height(), x.width());
    if out.data().is_empty() {
        return out;
    }
    out.data_mut()
        .par_chunks_mut(PIXELS_PER_TASK * c)
        .zip(x.data().par_chunks(PIXELS_PER_TASK * c))
        .for_each_init(Vec::new, |e: &mut Vec<f64>, (o, i)| {
            compiled_for(
                isa,
                #[inline(always)]
                || {
                    e.resize(c, 0.0);
                    for (op, ip) in o.chunks_exact_mut(c).zip(i.chunks_exact(c)) {
                        let m = f64::from(ip.iter().copied().fold(f32::NEG_INFINITY, f32::max));
                        for (ec, &v) in e.iter_mut().zip(ip) {
                            *ec = exp_nonpositive(f64::from(v) - m);
                        }
                        let sum: f64 = e.iter().sum();
                        for (oc, ec) in op.iter_mut().zip(e.iter()) {
                            *oc = (ec / sum) as f32;
                        }
                    }
                },
            )
        });
    out
}

/// Drops the dustbin and folds channel k of cell (cy, cx) to pixel (cell·cy + k / cell,
/// cell·cx + k % cell) of a one-channel map.
pub(crate) fn dustbin_fold(isa: Isa, x: &Hwc, cell: usize) -> Hwc {
    let (c, hc, wc) = (x.channels(), x.height(), x.width());
    let (h, w) = (hc * cell, wc * cell);
    let mut out = Hwc::for_overwrite(1, h, w);
    if out.data().is_empty() {
        return out;
    }
    let used = (cell * cell).min(c);
    out.data_mut()
        .par_chunks_mut(cell * w)
        .enumerate()
        .for_each(|(cy, band)| {
            compiled_for(
                isa,
                #[inline(always)]
                || {
                    let src = x.row(cy);
                    for (k, row) in band.chunks_exact_mut(w).enumerate() {
                        // Row k of the band gets channels k·cell .. k·cell + cell of each cell,
                        // zeros past the last channel (every element is written: `out` may
                        // be a recycled buffer).
                        let first = (k * cell).min(used);
                        let n = cell.min(used - first);
                        for (dst, px) in row.chunks_exact_mut(cell).zip(src.chunks_exact(c)) {
                            dst[..n].copy_from_slice(&px[first..first + n]);
                            dst[n..].fill(0.0);
                        }
                    }
                },
            )
        });
    out
}

/// Every pixel's channel vector divided by its L2 norm (at least `EPS`).
pub(crate) fn l2_normalize(isa: Isa, x: &Hwc) -> Hwc {
    let c = x.channels();
    let mut out = Hwc::for_overwrite(c, x.height(), x.width());
    if out.data().is_empty() {
        return out;
    }
    out.data_mut()
        .par_chunks_mut(PIXELS_PER_TASK * c)
        .zip(x.data().par_chunks(PIXELS_PER_TASK * c))
        .for_each(|(o, i)| {
            compiled_for(
                isa,
                #[inline(always)]
                || {
                    for (op, ip) in o.chunks_exact_mut(c).zip(i.chunks_exact(c)) {
                        let norm = ip
                            .iter()
                            .map(|&v| f64::from(v) * f64::from(v))
                            .sum::<f64>()
                            .sqrt()
                            .max(EPS);
                        for (oc, &v) in op.iter_mut().zip(ip) {
                            *oc = (f64::from(v) / norm) as f32;
                        }
                    }
                },
            )
        });
    out
}

#[cfg(test)]
mod tests {
    use super::exp_nonpositive;

    /// Against libm's exp over the whole range the softmax uses, in units of the last place.
    #[test]
    fn exp_is_within_a_few_ulp_of_libm() {
        let mut worst = 0.0f64;
        for i in 0..=200_000 {
            let x = -708.0 * f64::from(i) / 200_000.0;
            let (got, want) = (exp_nonpositive(x), x.exp());
            let ulp = want * f64::EPSILON;
            worst = worst.max((got - want).abs() / ulp);
        }
        assert!(worst <= 4.0, "worst error {worst} ulp");
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert_eq!(exp_nonpositive(-1e300), exp_nonpositive(-708.0));
        assert!(exp_nonpositive(f64::NEG_INFINITY) < 4e-308);
    }
}
