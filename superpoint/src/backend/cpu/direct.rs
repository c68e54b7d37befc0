//! The direct convolution of a one-channel input (conv1a): every output pixel is bias +
//! Σ_taps w·x over its C_out contiguous channels, computed [`GROUP`] vectors of channels at a
//! time (64 channels with AVX-512): independent vector accumulators (enough to hide the FMA
//! latency) that stay in registers.

use rayon::prelude::*;
use superpoint_graph::ConvWeights;

use super::conv::{Epilogue, Geometry};
use super::isa::Isa;
use super::simd::{dispatch, Kernel, Simd};
use super::tensor::Hwc;

/// Vectors of output channels per pass.
const GROUP: usize = 4;

/// The weights of a one-input-channel convolution by groups of `GROUP · lanes` output
/// channels: group g, tap t = ky·k + kx holds its channels at `(g · k² + t) · GROUP · lanes`,
/// channels past C_out zero.
#[derive(Debug)]
pub(crate) struct DirectWeights {
    k: usize,
    cout: usize,
    /// Channels per group.
    width: usize,
    lanes: Vec<f32>,
}

impl DirectWeights {
    /// Packs `w` for vectors of `lanes` f32.
    pub(crate) fn new(w: &ConvWeights, lanes: usize) -> Self {
        let (k, cout) = (w.kernel, w.out_channels);
        let width = GROUP * lanes;
        let groups = cout.div_ceil(width);
        let mut packed = vec![0.0; groups * k * k * width];
        for o in 0..cout {
            for ky in 0..k {
                for kx in 0..k {
                    packed[((o / width) * k * k + ky * k + kx) * width + o % width] =
                        w.at(o, 0, ky, kx);
                }
            }
        }
        Self {
            k,
            cout,
            width,
            lanes: packed,
        }
    }
}

/// The convolution of the one-channel `x` with `w` (`pad` zero pixels on every side).
pub(crate) fn conv2d(
    isa: Isa,
    x: &Hwc,
    w: &DirectWeights,
    pad: usize,
    epilogue: &Epilogue<'_>,
) -> Hwc {
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
            dispatch(
                isa,
                Rows {
                    g: &geometry,
                    input,
                    w,
                    epilogue,
                    block,
                },
            );
        });
    out
}

/// One block of output rows from its padded input rows.
struct Rows<'a> {
    g: &'a Geometry,
    input: &'a [f32],
    w: &'a DirectWeights,
    epilogue: &'a Epilogue<'a>,
    block: &'a mut [f32],
}

impl Kernel for Rows<'_> {
    type Output = ();

    #[inline(always)]
    fn run<S: Simd>(self, s: S) {
        let Rows {
            g,
            input,
            w,
            epilogue,
            block,
        } = self;
        let (k, cout, l) = (w.k, w.cout, S::LANES);
        if w.width != GROUP * l {
            unreachable!("direct weights packed for another vector width");
        }
        for (yy, out_row) in block.chunks_exact_mut(g.out_w * cout).enumerate() {
            for (xx, out_px) in out_row.chunks_exact_mut(cout).enumerate() {
                for (group, taps) in w.lanes.chunks_exact(k * k * w.width).enumerate() {
                    let mut acc = [s.zero(); GROUP];
                    for ky in 0..k {
                        let src = &input[(yy + ky) * g.pw + xx..][..k];
                        for (kx, &v) in src.iter().enumerate() {
                            let v = s.splat(v);
                            let wt = &taps[(ky * k + kx) * w.width..][..w.width];
                            for (q, a) in acc.iter_mut().enumerate() {
                                *a = s.mul_add(s.load(&wt[q * l..]), v, *a);
                            }
                        }
                    }
                    let c0 = group * w.width;
                    for (q, &a) in acc.iter().enumerate() {
                        let first = c0 + q * l;
                        if first >= cout {
                            break;
                        }
                        let v = epilogue.vector(s, first, a);
                        let dst = &mut out_px[first..];
                        if dst.len() >= l {
                            s.store(v, dst);
                        } else {
                            s.store_partial(v, dst);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::conv::testing::{check, Rng};
    use super::super::conv::Packed;
    use super::super::simd::lanes;
    use super::super::simd::testing::supported_levels;
    use super::DirectWeights;

    #[test]
    fn matches_the_reference_on_odd_shapes() {
        let mut rng = Rng::new(8);
        // (C_out, k, height, width, pad): a partial last group, few channels, odd sizes, 1×1
        // and 5×5 kernels.
        for isa in supported_levels() {
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
                let packed = Packed::Direct(DirectWeights::new(&wt, lanes(isa)));
                check(isa, &x, &wt, &packed, pad);
            }
        }
    }
}
