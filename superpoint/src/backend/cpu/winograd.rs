//! 3×3 convolution (stride 1, + bias, optional ReLU) by Winograd F(3×3, 3×3) on channels-last
//! tensors.
//!
//! Every 3×3 block of output pixels (a tile) is computed from the 5×5 input pixels under it:
//! V = Bᵀ d B (input transform), M = V ⊙ U summed over input channels, Y = Aᵀ M A (output
//! transform), with U = G g Gᵀ the transformed weights (Toom-Cook matrices for the
//! interpolation points 0, 1, −1, ½, ∞). The sum over input channels at each of the 25 tile
//! positions is a GEMM `tiles × C_in` by `C_in × C_out`, so the multiplies drop from 81 to 25 per
//! tile and channel pair (3.24×). Channels-last makes every transform a set of passes over
//! contiguous channel vectors. The output is split into bands of tile rows processed in parallel
//! with rayon; each band transforms its tiles into a worker-local buffer, runs its 25 GEMMs
//! single-threaded, and writes bias + ReLU into the output.
//!
//! Why F(3×3): in f32 the larger F(4×4, 3×3) (points 0, ±1, ±2 or 0, ±1, ±½) misses the
//! backend's 1e-5 per-convolution tolerance (1.1e-5 on 64→64 layers); F(2×2, 3×3) needs 44 %
//! more multiplies per output pixel (4 instead of 2.78) and more transform work.

use rayon::prelude::*;
use superpoint_graph::ConvWeights;

use super::conv::{gemm_rows, Epilogue};
use super::simd::with_avx2;
use super::tensor::Hwc;

/// Output pixels per tile side.
const OUT: usize = 3;
/// Input pixels per tile side (OUT + 2).
const IN: usize = 5;
/// Positions of a transformed tile (IN × IN).
const POSITIONS: usize = IN * IN;
/// Target tiles per band: enough rows for efficient GEMMs.
const BAND_TILES: usize = 160;
/// Bands per worker thread at least, so that uneven band costs balance out.
const MIN_BANDS_PER_THREAD: usize = 4;

/// The transformed weights of one 3×3 convolution: for each of the 25 tile positions a
/// `C_in × C_out` row-major matrix, position p at `p * C_in * C_out`.
#[derive(Debug)]
pub(crate) struct WinogradWeights {
    cin: usize,
    cout: usize,
    u: Vec<f32>,
}

/// G (5×3) applied to three values; computed in f64 (the weights are transformed once).
/// G = [[2, 0, 0], [1, 1, 1], [−⅓, ⅓, −⅓], [−⁸⁄₃, −⁴⁄₃, −⅔], [0, 0, 1]].
fn g_rows(a: [f64; 3]) -> [f64; IN] {
    [
        2.0 * a[0],
        a[0] + a[1] + a[2],
        -(a[0] - a[1] + a[2]) / 3.0,
        -(8.0 * a[0] + 4.0 * a[1] + 2.0 * a[2]) / 3.0,
        a[2],
    ]
}

impl WinogradWeights {
    /// U = G g Gᵀ for every (input, output) channel pair of a 3×3 `w`, over its first `cin`
    /// input channels.
    pub(crate) fn new(w: &ConvWeights, cin: usize) -> Self {
        let cout = w.out_channels;
        let mut u = vec![0.0; POSITIONS * cin * cout];
        for o in 0..cout {
            for i in 0..cin {
                // G g: each column of g through G (5×3).
                let cols: [[f64; IN]; 3] = std::array::from_fn(|kx| {
                    g_rows(std::array::from_fn(|ky| f64::from(w.at(o, i, ky, kx))))
                });
                // (G g) Gᵀ: each row of G g through G.
                for r in 0..IN {
                    let row = g_rows([cols[0][r], cols[1][r], cols[2][r]]);
                    for (c, &v) in row.iter().enumerate() {
                        u[((r * IN + c) * cin + i) * cout + o] = v as f32;
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
    let tiles_x = out_w.div_ceil(OUT);
    let tile_rows = out_h.div_ceil(OUT);
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
        .par_chunks_mut(OUT * band_rows * out_w * cout)
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
    /// Transformed input tiles, tile-major: tile t, position p at `(t * 25 + p) * C_in`.
    v: Vec<f32>,
    /// GEMM results, tile-major: tile t, position p at `(t * 25 + p) * C_out`.
    m: Vec<f32>,
    /// One tile's intermediate transform (25 channel vectors).
    t: Vec<f32>,
    /// One row of a tile's output pixels before bias and activation.
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
        let tiles = rows.div_ceil(OUT) * self.tiles_x;
        s.v.resize(tiles * POSITIONS * cin, 0.0);
        s.m.resize(tiles * POSITIONS * cout, 0.0);
        s.t.resize(POSITIONS * cin.max(cout), 0.0);
        s.y.resize(OUT * cout, 0.0);
        s.zero.clear();
        s.zero.resize(cin, 0.0);

        let (in_h, in_w) = (self.x.height(), self.x.width());
        for (t, v) in s.v.chunks_exact_mut(POSITIONS * cin).enumerate() {
            let (ty, tx) = (ty0 + t / self.tiles_x, t % self.tiles_x);
            let pixel = |i: usize, j: usize| -> &[f32] {
                let (y, x) = (
                    (OUT * ty + i).wrapping_sub(self.pad),
                    (OUT * tx + j).wrapping_sub(self.pad),
                );
                if y < in_h && x < in_w {
                    &self.x.row(y)[x * c..x * c + cin]
                } else {
                    &s.zero[..cin]
                }
            };
            // Bᵀ over the rows of each column j, stored column-major: t[j][i'] at (j·5 + i')·C.
            for j in 0..IN {
                input_pass(
                    std::array::from_fn(|i| pixel(i, j)),
                    split(&mut s.t[j * IN * cin..(j + 1) * IN * cin]),
                );
            }
            // B over the columns of each row i' into V[i'][j'] at (i'·5 + j')·C.
            for i in 0..IN {
                let t = &s.t;
                input_pass(
                    std::array::from_fn(|j| &t[(j * IN + i) * cin..][..cin]),
                    split(&mut v[i * IN * cin..(i + 1) * IN * cin]),
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
            // Aᵀ over the rows of each column j: t[j][i'] at (j·3 + i')·C_out.
            for j in 0..IN {
                output_pass(
                    std::array::from_fn(|i| &m[(i * IN + j) * cout..][..cout]),
                    split(&mut s.t[j * OUT * cout..(j + 1) * OUT * cout]),
                );
            }
            // A over the columns of each row i', then bias + activation into the pixels that
            // exist (the last row or column of tiles may compute pixels past the edge).
            for i in 0..OUT {
                let y = OUT * ty + i;
                if y >= rows {
                    break;
                }
                let t = &s.t;
                output_pass(
                    std::array::from_fn(|j| &t[(j * OUT + i) * cout..][..cout]),
                    split(&mut s.y),
                );
                let out_row = &mut block[y * row_len..(y + 1) * row_len];
                for (j, px) in s.y.chunks_exact(cout).enumerate() {
                    let x = OUT * tx + j;
                    if x < self.out_w {
                        epilogue.apply(0, &mut out_row[x * cout..(x + 1) * cout], px);
                    }
                }
            }
        }
    }
}

/// One pass of the input transform Bᵀ over five channel vectors:
/// Bᵀ = [[½, −1, −½, 1, 0], [0, −½, ½, 1, 0], [0, ½, −³⁄₂, 1, 0], [0, −1, 0, 1, 0],
///       [0, ½, −1, −½, 1]].
#[inline(always)]
fn input_pass(d: [&[f32]; IN], out: [&mut [f32]; IN]) {
    let [o0, o1, o2, o3, o4] = out;
    let n = o0.len();
    let (o1, o2, o3, o4) = (&mut o1[..n], &mut o2[..n], &mut o3[..n], &mut o4[..n]);
    let d: [&[f32]; IN] = d.map(|s| &s[..n]);
    for c in 0..n {
        let (d0, d1, d2, d3, d4) = (d[0][c], d[1][c], d[2][c], d[3][c], d[4][c]);
        o0[c] = 0.5 * (d0 - d2) + (d3 - d1);
        o1[c] = 0.5 * (d2 - d1) + d3;
        o2[c] = 0.5 * (d1 - d2) + (d3 - d2);
        o3[c] = d3 - d1;
        o4[c] = 0.5 * (d1 - d3) + (d4 - d2);
    }
}

/// One pass of the output transform Aᵀ over five channel vectors:
/// Aᵀ = [[1, 1, 1, 1, 0], [0, 1, −1, ½, 0], [0, 1, 1, ¼, 1]].
#[inline(always)]
fn output_pass(m: [&[f32]; IN], out: [&mut [f32]; OUT]) {
    let [o0, o1, o2] = out;
    let n = o0.len();
    let (o1, o2) = (&mut o1[..n], &mut o2[..n]);
    let m: [&[f32]; IN] = m.map(|s| &s[..n]);
    for c in 0..n {
        let (m3, m4) = (m[3][c], m[4][c]);
        let (sum12, dif12) = (m[1][c] + m[2][c], m[1][c] - m[2][c]);
        o0[c] = m[0][c] + sum12 + m3;
        o1[c] = dif12 + 0.5 * m3;
        o2[c] = sum12 + 0.25 * m3 + m4;
    }
}

/// `N` equal consecutive parts of `s`.
fn split<const N: usize>(s: &mut [f32]) -> [&mut [f32]; N] {
    let n = s.len() / N;
    let mut parts = s.chunks_exact_mut(n.max(1));
    std::array::from_fn(|_| parts.next().unwrap_or_default())
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
