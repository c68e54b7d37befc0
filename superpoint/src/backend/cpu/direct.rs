//! The direct convolution of a one-channel input (conv1a): every output pixel is bias +
//! Σ_taps w·x over its C_out contiguous channels, computed 64 channels at a time: eight
//! independent vector accumulators (enough to hide the FMA latency) that stay in registers.

use rayon::prelude::*;
use superpoint_graph::ConvWeights;

use super::conv::{Epilogue, Geometry};
use super::simd::with_avx2;
use super::tensor::Hwc;

/// Output channels per pass (eight AVX registers of f32).
const LANES: usize = 64;

/// The weights of a one-input-channel convolution by groups of [`LANES`] output channels: group
/// g, tap (ky, kx) at `g * k² + ky * k + kx`, channels past C_out zero.
#[derive(Debug)]
pub(crate) struct DirectWeights {
    k: usize,
    cout: usize,
    lanes: Vec<[f32; LANES]>,
}

impl DirectWeights {
    pub(crate) fn new(w: &ConvWeights) -> Self {
        let (k, cout) = (w.kernel, w.out_channels);
        let groups = cout.div_ceil(LANES);
        let mut lanes = vec![[0.0; LANES]; groups * k * k];
        for o in 0..cout {
            for ky in 0..k {
                for kx in 0..k {
                    lanes[(o / LANES) * k * k + ky * k + kx][o % LANES] = w.at(o, 0, ky, kx);
                }
            }
        }
        Self { k, cout, lanes }
    }
}

/// The convolution of the one-channel `x` with `w` (`pad` zero pixels on every side).
pub(crate) fn conv2d(x: &Hwc, w: &DirectWeights, pad: usize, epilogue: &Epilogue<'_>) -> Hwc {
    let geometry = Geometry::new(x, w.k, pad);
    let cout = w.cout;
    if w.k == 0 {
        return Hwc::zeros(cout, geometry.out_h, geometry.out_w);
    }
    let mut out = Hwc::for_overwrite(cout, geometry.out_h, geometry.out_w);
    if out.data().is_empty() {
        return out;
    }
    let rows = geometry.rows_per_block();
    out.data_mut()
        .par_chunks_mut(rows * geometry.out_w * cout)
        .enumerate()
        .for_each_init(Vec::new, |input, (b, block)| {
            let r = block.len() / (geometry.out_w * cout);
            geometry.padded_rows(x, b * rows, r, input);
            with_avx2(
                #[inline(always)]
                || output_rows(&geometry, input, w, epilogue, block),
            );
        });
    out
}

/// The output rows in `block` from the padded input rows in `input`.
#[inline(always)]
fn output_rows(
    g: &Geometry,
    input: &[f32],
    w: &DirectWeights,
    e: &Epilogue<'_>,
    block: &mut [f32],
) {
    let (k, cout) = (w.k, w.cout);
    for (yy, out_row) in block.chunks_exact_mut(g.out_w * cout).enumerate() {
        for xx in 0..g.out_w {
            for (group, taps) in w.lanes.chunks_exact(k * k).enumerate() {
                let mut acc = [0.0f32; LANES];
                for ky in 0..k {
                    let src = &input[(yy + ky) * g.pw + xx..][..k];
                    for (&v, wt) in src.iter().zip(&taps[ky * k..(ky + 1) * k]) {
                        for (a, &wv) in acc.iter_mut().zip(wt) {
                            *a = wv.mul_add(v, *a);
                        }
                    }
                }
                let c0 = group * LANES;
                let n = LANES.min(cout - c0);
                let out = &mut out_row[xx * cout + c0..];
                if n == LANES {
                    // Whole registers: plain stores (a variable length makes slow masked ones).
                    let mut full = [0.0f32; LANES];
                    e.apply(c0, &mut full, &acc);
                    out[..LANES].copy_from_slice(&full);
                } else {
                    e.apply(c0, &mut out[..n], &acc);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::conv::testing::{check, Rng};
    use super::super::conv::Packed;
    use super::DirectWeights;

    #[test]
    fn matches_the_reference_on_odd_shapes() {
        let mut rng = Rng::new(8);
        // (C_out, k, height, width, pad): a partial last group of 64 channels, few channels,
        // odd sizes, 1×1 and 5×5 kernels.
        for (cout, k, h, w, pad) in [
            (64, 3, 7, 9, 1),
            (70, 3, 5, 3, 1),
            (5, 3, 4, 4, 1),
            (130, 5, 6, 5, 2),
            (9, 1, 3, 7, 0),
            (64, 3, 1, 1, 1),
        ] {
            let x = rng.tensor(1, h, w);
            let wt = rng.conv(1, cout, k);
            check(&x, &wt, &Packed::Direct(DirectWeights::new(&wt)), pad);
        }
    }
}
