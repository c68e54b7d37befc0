//! The direct convolution of a one-channel input (conv1a): every output pixel is bias +
//! Σ_taps w·x over its C_out contiguous channels, computed [`GROUP`] vectors of channels (64
//! channels with AVX-512) for several neighbouring pixels at a time: independent vector
//! accumulators (enough to hide the FMA latency) that stay in registers, each tap's weight
//! vectors loaded once for all of those pixels.

use rayon::prelude::*;
use superpoint_graph::ConvWeights;

use super::conv::{Epilogue, Geometry};
use super::isa::Isa;
use super::simd::{dispatch, vectors, Kernel, Simd};
use super::tensor::Hwc;
use super::winograd::{Source, IN};

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

/// Input pixels per side of the patch a Winograd tile of [`DirectSource`] reads: the tile's
/// [`IN`] plus the 3×3 kernel's two.
const PATCH: usize = IN + 2;

/// A 3×3 convolution of a one-channel tensor (conv1a) as the input of the Winograd convolution
/// that reads it (conv1b): each tile computes the pixels it reads from the 8×8 input patch under
/// it, with the sums, order and epilogue of [`conv2d`], so the result is bit-identical to
/// running the two convolutions one after the other, without writing the full-resolution
/// 64-channel map and reading it back. Its channels past C_out are zero.
pub(crate) struct DirectSource<'a> {
    x: &'a Hwc,
    w: &'a DirectWeights,
    pad: usize,
    epilogue: Epilogue<'a>,
    out_h: usize,
    out_w: usize,
}

/// The input patch of one tile, and which of its 6×6 pixels are inside the convolution's output
/// (the others are the next convolution's zero padding).
pub(crate) struct Patch {
    values: [f32; PATCH * PATCH],
    rows: [bool; IN],
    cols: [bool; IN],
}

impl<'a> DirectSource<'a> {
    /// The convolution of `x` with `w` and `epilogue` (`pad` zero pixels on every side); `None`
    /// unless `w` is 3×3 and `x` has one channel.
    pub(crate) fn new(
        x: &'a Hwc,
        w: &'a DirectWeights,
        pad: usize,
        epilogue: Epilogue<'a>,
    ) -> Option<Self> {
        let g = Geometry::new(x, w.k, pad);
        (w.k == 3 && x.channels() == 1).then_some(Self {
            x,
            w,
            pad,
            epilogue,
            out_h: g.out_h,
            out_w: g.out_w,
        })
    }
}

impl Source for DirectSource<'_> {
    type Tile = Patch;

    fn size(&self) -> (usize, usize) {
        (self.out_h, self.out_w)
    }

    #[inline(always)]
    fn tile(&self, y: usize, x: usize) -> Patch {
        // Patch pixel (r, c) is input pixel (y + r − pad, x + c − pad), zero outside.
        let (py, px) = (y.wrapping_sub(self.pad), x.wrapping_sub(self.pad));
        let mut values = [0.0; PATCH * PATCH];
        for (r, dst) in values.chunks_exact_mut(PATCH).enumerate() {
            let iy = py.wrapping_add(r);
            if iy < self.x.height() {
                let row = self.x.row(iy);
                for (c, d) in dst.iter_mut().enumerate() {
                    let ix = px.wrapping_add(c);
                    if ix < row.len() {
                        *d = row[ix];
                    }
                }
            }
        }
        let mut rows = [false; IN];
        let mut cols = [false; IN];
        for (i, (r, c)) in rows.iter_mut().zip(&mut cols).enumerate() {
            *r = y.wrapping_add(i) < self.out_h;
            *c = x.wrapping_add(i) < self.out_w;
        }
        Patch { values, rows, cols }
    }

    #[inline(always)]
    fn column<S: Simd>(&self, s: S, tile: &Patch, cb: usize, _n: usize, j: usize) -> [S::V; IN] {
        let width = self.w.width;
        let taps = &self.w.lanes[(cb / width) * 9 * width + cb % width..];
        let w: [S::V; 9] = vectors(s, |t| s.load(&taps[t * width..]));
        vectors(s, |i| {
            if !(tile.rows[i] && tile.cols[j]) {
                return s.zero();
            }
            let mut acc = s.zero();
            for ky in 0..3 {
                for kx in 0..3 {
                    let x = s.splat(tile.values[(i + ky) * PATCH + j + kx]);
                    acc = s.mul_add(w[ky * 3 + kx], x, acc);
                }
            }
            self.epilogue.vector(s, cb, acc)
        })
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
        if self.w.width != GROUP * S::LANES {
            unreachable!("direct weights packed for another vector width");
        }
        // Pixels per pass: GROUP·P accumulators and GROUP weights fill the register file
        // (21 of 32 with AVX-512, 13 of 16 with AVX2), and each weight load serves P pixels.
        match S::LANES {
            16 => self.rows::<S, 4>(s),
            8 => self.rows::<S, 2>(s),
            _ => self.rows::<S, 1>(s),
        }
    }
}

impl Rows<'_> {
    /// Every output row of the block, `P` pixels at a time (then one at a time at the end).
    #[inline(always)]
    fn rows<S: Simd, const P: usize>(mut self, s: S) {
        let (cout, out_w) = (self.w.cout, self.g.out_w);
        let block = std::mem::take(&mut self.block);
        for (yy, out_row) in block.chunks_exact_mut(out_w * cout).enumerate() {
            let whole = out_w / P * P;
            for xx in (0..whole).step_by(P) {
                self.pixels::<S, P>(s, yy, xx, &mut out_row[xx * cout..(xx + P) * cout]);
            }
            for xx in whole..out_w {
                self.pixels::<S, 1>(s, yy, xx, &mut out_row[xx * cout..(xx + 1) * cout]);
            }
        }
    }

    /// Output pixels xx..xx + P of block row yy into `out` (their P·C_out values).
    #[inline(always)]
    fn pixels<S: Simd, const P: usize>(&self, s: S, yy: usize, xx: usize, out: &mut [f32]) {
        let (k, cout, width, l) = (self.w.k, self.w.cout, self.w.width, S::LANES);
        for (group, taps) in self.w.lanes.chunks_exact(k * k * width).enumerate() {
            let mut acc = [[s.zero(); GROUP]; P];
            for ky in 0..k {
                let src = &self.input[(yy + ky) * self.g.pw + xx..][..P + k - 1];
                for kx in 0..k {
                    let wt = &taps[(ky * k + kx) * width..][..width];
                    let wv: [S::V; GROUP] = vectors(s, |q| s.load(&wt[q * l..]));
                    for (p, acc) in acc.iter_mut().enumerate() {
                        let v = s.splat(src[p + kx]);
                        for (a, &w) in acc.iter_mut().zip(&wv) {
                            *a = s.mul_add(w, v, *a);
                        }
                    }
                }
            }
            let c0 = group * width;
            for (p, acc) in acc.iter().enumerate() {
                let px = &mut out[p * cout..(p + 1) * cout];
                for (q, &a) in acc.iter().enumerate() {
                    let first = c0 + q * l;
                    if first >= cout {
                        break;
                    }
                    let v = self.epilogue.vector(s, first, a);
                    let dst = &mut px[first..];
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
