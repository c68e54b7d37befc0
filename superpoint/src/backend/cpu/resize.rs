//! Pillow's BILINEAR resize of an 8-bit plane and the conversion to [0, 1], bit-identical to
//! the reference ([`superpoint_graph::reference::resize`], which defines it and computes the
//! filter taps both use) and fast: the taps flattened once per pass, both passes split over
//! the cores by output rows, the vertical pass (and the /255) in loops the compiler vectorises
//! for the CPU's instruction set. The fixed-point sums are the reference's, term for term
//! (integer sums do not depend on their order), so the result is the same bit for bit.

use rayon::prelude::*;
use superpoint_graph::reference::resize::{taps, vertical_first, PRECISION_BITS};
use superpoint_graph::Tensor;

use super::isa::Isa;
use super::simd::compiled_for;
use super::tensor::Hwc;

/// Output rows per parallel task.
const ROWS_PER_TASK: usize = 16;

/// The filter of one pass: output i reads `len[i]` inputs from `first[i]` with the weights at
/// `i * stride`.
struct Filter {
    first: Vec<usize>,
    len: Vec<usize>,
    stride: usize,
    weights: Vec<i32>,
}

impl Filter {
    fn new(in_size: usize, out_size: usize) -> Self {
        let taps = taps(in_size, out_size);
        let stride = taps.iter().map(|t| t.weights.len()).max().unwrap_or(0);
        let mut weights = vec![0; stride * taps.len()];
        for (i, t) in taps.iter().enumerate() {
            weights[i * stride..i * stride + t.weights.len()].copy_from_slice(&t.weights);
        }
        Self {
            first: taps.iter().map(|t| t.first).collect(),
            len: taps.iter().map(|t| t.weights.len()).collect(),
            stride,
            weights,
        }
    }

    fn taps(&self, i: usize) -> (usize, &[i32]) {
        (
            self.first[i],
            &self.weights[i * self.stride..][..self.len[i]],
        )
    }
}

/// Pillow's rounding bias and `clip8` of a fixed-point sum.
#[inline(always)]
fn clip8(acc: i32) -> u8 {
    (acc >> PRECISION_BITS).clamp(0, 255) as u8
}

/// The rounding bias every sum starts from.
const BIAS: i32 = 1 << (PRECISION_BITS - 1);

/// Every row of an `in_w`-wide plane resized to `out_w` samples.
fn horizontal(isa: Isa, data: &[u8], in_w: usize, out_w: usize) -> Vec<u8> {
    let filter = Filter::new(in_w, out_w);
    let mut out = vec![0u8; data.len() / in_w.max(1) * out_w];
    out.par_chunks_mut(ROWS_PER_TASK * out_w)
        .zip(data.par_chunks(ROWS_PER_TASK * in_w))
        .for_each(|(dst, src)| {
            compiled_for(
                isa,
                #[inline(always)]
                || {
                    for (d, s) in dst.chunks_exact_mut(out_w).zip(src.chunks_exact(in_w)) {
                        for (i, o) in d.iter_mut().enumerate() {
                            let (first, weights) = filter.taps(i);
                            let mut acc = BIAS;
                            for (&v, &k) in s[first..].iter().zip(weights) {
                                acc += i32::from(v) * k;
                            }
                            *o = clip8(acc);
                        }
                    }
                },
            )
        });
    out
}

/// Every column of a `width`-wide plane of `in_h` rows resized to `out_h` samples.
fn vertical(isa: Isa, data: &[u8], width: usize, in_h: usize, out_h: usize) -> Vec<u8> {
    let filter = Filter::new(in_h, out_h);
    let mut out = vec![0u8; out_h * width];
    out.par_chunks_mut(ROWS_PER_TASK * width)
        .enumerate()
        .for_each_init(Vec::new, |acc: &mut Vec<i32>, (b, dst)| {
            compiled_for(
                isa,
                #[inline(always)]
                || {
                    for (j, d) in dst.chunks_exact_mut(width).enumerate() {
                        let (first, weights) = filter.taps(b * ROWS_PER_TASK + j);
                        acc.clear();
                        acc.resize(width, BIAS);
                        for (r, &k) in weights.iter().enumerate() {
                            let row = &data[(first + r) * width..][..width];
                            for (a, &v) in acc.iter_mut().zip(row) {
                                *a += i32::from(v) * k;
                            }
                        }
                        for (o, &a) in d.iter_mut().zip(acc.iter()) {
                            *o = clip8(a);
                        }
                    }
                },
            )
        });
    out
}

/// Pillow's (13) `Image.resize((width, height), Image.BILINEAR)` of the one-channel `input`,
/// then `v / 255` as f32: the reference's `to_unit_range(pillow_bilinear(..))`.
pub(crate) fn resize_to_unit(isa: Isa, input: &Tensor<u8>, width: usize, height: usize) -> Hwc {
    let (in_w, in_h) = (input.width, input.height);
    let mut data = std::borrow::Cow::Borrowed(input.plane(0));
    if vertical_first(in_w, in_h, width, height) {
        if height != in_h {
            data = vertical(isa, &data, in_w, in_h, height).into();
        }
        if width != in_w {
            data = horizontal(isa, &data, in_w, width).into();
        }
    } else {
        if width != in_w {
            data = horizontal(isa, &data, in_w, width).into();
        }
        if height != in_h {
            data = vertical(isa, &data, width, in_h, height).into();
        }
    }
    let mut out = Hwc::for_overwrite(1, height, width);
    out.data_mut()
        .par_chunks_mut(ROWS_PER_TASK * width.max(1))
        .zip(data.par_chunks(ROWS_PER_TASK * width.max(1)))
        .for_each(|(o, v)| {
            compiled_for(
                isa,
                #[inline(always)]
                || {
                    for (o, &v) in o.iter_mut().zip(v) {
                        *o = f32::from(v) / 255.0;
                    }
                },
            )
        });
    out
}

#[cfg(test)]
mod tests {
    use superpoint_graph::reference::resize::{pillow_bilinear, to_unit_range};
    use superpoint_graph::Tensor;

    use super::super::simd::testing::supported_levels;
    use super::resize_to_unit;

    /// Random planes through up- and downscales, both pass orders, one-pixel sides and
    /// identity sizes: every level is bit-identical to the reference.
    #[test]
    fn bit_identical_to_the_reference() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut byte = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 56) as u8
        };
        for (in_w, in_h, w, h) in [
            (1600, 900, 640, 480),
            (37, 23, 16, 8),
            (7, 40, 9, 5),
            (5, 3, 11, 2),
            (1, 9, 4, 1),
            (33, 17, 33, 17),
            (64, 48, 640, 480),
        ] {
            let plane = Tensor::from_vec(1, in_h, in_w, (0..in_w * in_h).map(|_| byte()).collect())
                .expect("shape");
            let want = to_unit_range(&pillow_bilinear(&plane, w, h));
            for isa in supported_levels() {
                let got = resize_to_unit(isa, &plane, w, h).to_planar();
                assert!(
                    got.data
                        .iter()
                        .map(|v| v.to_bits())
                        .eq(want.data.iter().map(|v| v.to_bits())),
                    "{isa}: {in_w}x{in_h} -> {w}x{h}"
                );
            }
        }
    }
}
