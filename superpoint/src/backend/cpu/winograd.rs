//! 3×3 convolution (stride 1, + bias, optional ReLU) by Winograd F(2×2, 3×3) on channels-last
//! tensors.
//!
//! Every 2×2 block of output pixels (a tile) is computed from the 4×4 input pixels under it:
//! V = Bᵀ d B (input transform), M = V ⊙ U summed over input channels, Y = Aᵀ M A (output
//! transform), with U = G g Gᵀ the transformed weights. The sum over input channels at each of
//! the 16 tile positions is a GEMM `tiles × C_in` by `C_in × C_out`, so the multiplies drop from
//! 36 to 16 per tile and channel pair (2.25×). Channels-last makes every transform a set of
//! add/subtract passes over contiguous channel vectors. The output is split into bands of tile
//! rows processed in parallel with rayon; each band transforms its tiles into a worker-local
//! buffer, runs its 16 GEMMs single-threaded, and writes bias + ReLU into the output.

use rayon::prelude::*;
use superpoint_graph::ConvWeights;

use super::conv::{gemm_rows, Epilogue};
use super::simd::with_avx2;
use super::tensor::Hwc;

/// Positions of a transformed tile (4×4).
const POSITIONS: usize = 16;
/// Target tiles per band: enough rows for efficient GEMMs.
const BAND_TILES: usize = 320;
/// Bands per worker thread at least, so that uneven band costs balance out.
const MIN_BANDS_PER_THREAD: usize = 4;

/// The transformed weights of one 3×3 convolution: for each of the 16 tile positions a
/// `C_in × C_out` row-major matrix, position p at `p * C_in * C_out`.
#[derive(Debug)]
pub(crate) struct WinogradWeights {
    cin: usize,
    cout: usize,
    u: Vec<f32>,
}

impl WinogradWeights {
    /// U = G g Gᵀ for every (input, output) channel pair of a 3×3 `w`, over its first `cin`
    /// input channels. G = [[1, 0, 0], [½, ½, ½], [½, −½, ½], [0, 0, 1]].
    pub(crate) fn new(w: &ConvWeights, cin: usize) -> Self {
        let cout = w.out_channels;
        let mut u = vec![0.0; POSITIONS * cin * cout];
        let g_rows = |a: [f32; 3]| {
            [
                a[0],
                0.5 * (a[0] + a[1] + a[2]),
                0.5 * (a[0] - a[1] + a[2]),
                a[2],
            ]
        };
        for o in 0..cout {
            for i in 0..cin {
                // G g: each column of g through G (4×3).
                let cols: [[f32; 4]; 3] =
                    std::array::from_fn(|kx| g_rows(std::array::from_fn(|ky| w.at(o, i, ky, kx))));
                // (G g) Gᵀ: each row of G g through G.
                for r in 0..4 {
                    let row = g_rows([cols[0][r], cols[1][r], cols[2][r]]);
                    for (c, &v) in row.iter().enumerate() {
                        u[((r * 4 + c) * cin + i) * cout + o] = v;
                    }
                }
            }
        }
        Self { cin, cout, u }
    }
}

/// The 3×3 convolution of `x` (its first `w.cin` channels) with `pad` zero pixels on every side.
pub(crate) fn conv3x3(x: &Hwc, w: &WinogradWeights, pad: usize, epilogue: &Epilogue<'_>) -> Hwc {
    let cout = w.cout;
    let out_h = (x.height() + 2 * pad).saturating_sub(2);
    let out_w = (x.width() + 2 * pad).saturating_sub(2);
    let mut out = Hwc::for_overwrite(cout, out_h, out_w);
    if out.data().is_empty() {
        return out;
    }
    let tiles_x = out_w.div_ceil(2);
    let tile_rows = out_h.div_ceil(2);
    let by_size = BAND_TILES.div_ceil(tiles_x);
    let by_balance = tile_rows.div_ceil(MIN_BANDS_PER_THREAD * rayon::current_num_threads().max(1));
    let band_rows = by_size.min(by_balance).max(1);
    let band = Band {
        x,
        w,
        pad,
        out_w,
        tiles_x,
    };
    out.data_mut()
        .par_chunks_mut(2 * band_rows * out_w * cout)
        .enumerate()
        .for_each_init(Scratch::default, |s, (b, block)| {
            with_avx2(
                #[inline(always)]
                || band.run(b * band_rows, block, s, epilogue),
            );
        });
    out
}

/// What every band of one convolution shares.
struct Band<'a> {
    x: &'a Hwc,
    w: &'a WinogradWeights,
    pad: usize,
    out_w: usize,
    tiles_x: usize,
}

/// Per-worker buffers.
#[derive(Default)]
struct Scratch {
    /// Transformed input tiles, tile-major: tile t, position p at `(t * 16 + p) * C_in`.
    v: Vec<f32>,
    /// GEMM results, tile-major: tile t, position p at `(t * 16 + p) * C_out`.
    m: Vec<f32>,
    /// One tile's intermediate transform (16 channel vectors).
    t: Vec<f32>,
    /// Two output pixels before bias and activation.
    y: Vec<f32>,
    /// The zero input pixel that reads outside the image see.
    zero: Vec<f32>,
}

impl Band<'_> {
    /// Computes the output rows of tile rows `ty0..`, which `block` holds.
    #[inline(always)]
    fn run(&self, ty0: usize, block: &mut [f32], s: &mut Scratch, epilogue: &Epilogue<'_>) {
        let (cin, cout, c) = (self.w.cin, self.w.cout, self.x.channels());
        let rows = block.len() / (self.out_w * cout);
        let tiles = rows.div_ceil(2) * self.tiles_x;
        s.v.resize(tiles * POSITIONS * cin, 0.0);
        s.m.resize(tiles * POSITIONS * cout, 0.0);
        s.t.resize(POSITIONS * cin.max(cout), 0.0);
        s.y.resize(2 * cout, 0.0);
        s.zero.clear();
        s.zero.resize(cin, 0.0);

        let (in_h, in_w) = (self.x.height(), self.x.width());
        for (t, v) in s.v.chunks_exact_mut(POSITIONS * cin).enumerate() {
            let (ty, tx) = (ty0 + t / self.tiles_x, t % self.tiles_x);
            let pixel = |i: usize, j: usize| -> &[f32] {
                let (y, x) = (
                    (2 * ty + i).wrapping_sub(self.pad),
                    (2 * tx + j).wrapping_sub(self.pad),
                );
                if y < in_h && x < in_w {
                    &self.x.row(y)[x * c..x * c + cin]
                } else {
                    &s.zero[..cin]
                }
            };
            // Bᵀ over the rows of each column j, stored column-major: t[j][i'] at (j·4 + i')·C.
            for j in 0..4 {
                input_pass(
                    [pixel(0, j), pixel(1, j), pixel(2, j), pixel(3, j)],
                    split4(&mut s.t[j * 4 * cin..(j + 1) * 4 * cin]),
                );
            }
            // B over the columns of each row i' into V[i'][j'] at (i'·4 + j')·C.
            for i in 0..4 {
                let t = &s.t;
                input_pass(
                    std::array::from_fn(|j| &t[(j * 4 + i) * cin..][..cin]),
                    split4(&mut v[i * 4 * cin..(i + 1) * 4 * cin]),
                );
            }
        }

        for p in 0..POSITIONS {
            gemm_rows(
                tiles,
                cout,
                cin,
                &mut s.m[p * cout..],
                POSITIONS * cout,
                &s.v[p * cin..],
                POSITIONS * cin,
                &self.w.u[p * cin * cout..(p + 1) * cin * cout],
                false,
            );
        }

        let row_len = self.out_w * cout;
        for (t, m) in s.m.chunks_exact(POSITIONS * cout).enumerate() {
            let (ty, tx) = (t / self.tiles_x, t % self.tiles_x);
            // Aᵀ over the rows of each column j: t[j][i'] at (j·2 + i')·C_out.
            for j in 0..4 {
                let (a, b) = s.t[j * 2 * cout..(j + 1) * 2 * cout].split_at_mut(cout);
                output_pass(
                    std::array::from_fn(|i| &m[(i * 4 + j) * cout..][..cout]),
                    [a, b],
                );
            }
            // A over the columns of each row i', then bias + activation into the pixels that
            // exist (an odd last row or column of tiles computes one pixel too many).
            for i in 0..2 {
                let y = 2 * ty + i;
                if y >= rows {
                    break;
                }
                let t = &s.t;
                let (a, b) = s.y.split_at_mut(cout);
                output_pass(
                    std::array::from_fn(|j| &t[(j * 2 + i) * cout..][..cout]),
                    [a, b],
                );
                let out_row = &mut block[y * row_len..(y + 1) * row_len];
                for (j, px) in s.y.chunks_exact(cout).enumerate() {
                    let x = 2 * tx + j;
                    if x < self.out_w {
                        epilogue.apply(0, &mut out_row[x * cout..(x + 1) * cout], px);
                    }
                }
            }
        }
    }
}

/// One pass of the input transform Bᵀ = [[1, 0, −1, 0], [0, 1, 1, 0], [0, −1, 1, 0], [0, 1, 0, −1]]
/// over four channel vectors.
#[inline(always)]
fn input_pass(d: [&[f32]; 4], out: [&mut [f32]; 4]) {
    let [o0, o1, o2, o3] = out;
    let n = o0.len();
    let (o1, o2, o3) = (&mut o1[..n], &mut o2[..n], &mut o3[..n]);
    let (d0, d1, d2, d3) = (&d[0][..n], &d[1][..n], &d[2][..n], &d[3][..n]);
    for c in 0..n {
        let (a, b, e, f) = (d0[c], d1[c], d2[c], d3[c]);
        o0[c] = a - e;
        o1[c] = b + e;
        o2[c] = e - b;
        o3[c] = b - f;
    }
}

/// One pass of the output transform Aᵀ = [[1, 1, 1, 0], [0, 1, −1, −1]] over four channel vectors.
#[inline(always)]
fn output_pass(m: [&[f32]; 4], out: [&mut [f32]; 2]) {
    let [o0, o1] = out;
    let n = o0.len();
    let o1 = &mut o1[..n];
    let (m0, m1, m2, m3) = (&m[0][..n], &m[1][..n], &m[2][..n], &m[3][..n]);
    for c in 0..n {
        let (a, b, e, f) = (m0[c], m1[c], m2[c], m3[c]);
        o0[c] = a + b + e;
        o1[c] = b - e - f;
    }
}

/// Four equal consecutive parts of `s`.
fn split4(s: &mut [f32]) -> [&mut [f32]; 4] {
    let n = s.len() / 4;
    let (a, rest) = s.split_at_mut(n);
    let (b, rest) = rest.split_at_mut(n);
    let (c, d) = rest.split_at_mut(n);
    [a, b, c, d]
}

#[cfg(test)]
mod tests {
    use super::super::conv::testing::{check, Rng};
    use super::super::conv::Packed;
    use super::WinogradWeights;

    #[test]
    fn matches_the_reference_on_odd_shapes() {
        let mut rng = Rng::new(7);
        // (C_in, C_out, height, width, pad): odd sizes, channel counts not multiples of 8,
        // one-pixel and one-tile images, an input with more channels than the weights use.
        for (channels, cin, cout, h, w, pad) in [
            (17, 17, 19, 7, 9, 1),
            (67, 67, 70, 5, 11, 1),
            (16, 16, 3, 1, 1, 1),
            (33, 33, 9, 2, 3, 1),
            (20, 20, 13, 6, 7, 0),
            (24, 21, 5, 3, 4, 1),
            (64, 64, 64, 13, 15, 1),
        ] {
            let x = rng.tensor(channels, h, w);
            let wt = rng.conv(cin, cout, 3);
            let packed = Packed::Winograd(WinogradWeights::new(&wt, cin.min(channels)));
            check(&x, &wt, &packed, pad);
        }
    }
}
