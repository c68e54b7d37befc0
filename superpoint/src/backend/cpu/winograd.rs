//! 3×3 convolution (stride 1, + bias, optional ReLU, optionally followed by a 2×2 max-pool) by
//! Winograd F(4×4, 3×3) on channels-last tensors.
//!
//! The input is a [`Source`]: a tensor, or a one-channel convolution computed tile by tile
//! where it is read ([`super::direct::DirectSource`], conv1a into conv1b).
//!
//! Every 4×4 block of output pixels (a tile) is computed from the 6×6 input pixels under it:
//! V = Bᵀ d B (input transform), M = Σ over input channels of U ⊙ V, Y = Aᵀ M A (output
//! transform), with U = G g Gᵀ the transformed weights. The sum at each of the 36 tile
//! positions is a GEMM `tiles × C_in` by `C_in × C_out` ([`super::gemm`]), so the multiplies
//! drop from 144 to 36 per tile and channel pair (4×). The matrices are the Toom-Cook ones for
//! the interpolation points 0, 1, −1, 2, −½ and ∞ (below). Channels-last makes each transform a
//! set of passes over contiguous channel vectors. The tiles are split into chunks of at most
//! [`CHUNK_TILES`] processed in parallel; a chunk transforms its tiles into position-major
//! buffers (V[p] is a `tiles × C_in` matrix), runs the 36 GEMMs (each position's weights are
//! read once per chunk, the chunk's V[p] and M[p] stay in L2), and writes bias + ReLU, or
//! the 2×2 maximum then bias + ReLU (equal bit for bit: adding the bias and ReLU are monotonic),
//! straight into the output: tiles start at even pixels, so a tile is exactly four pooled
//! pixels and the full-size map is never written.
//!
//! # Accuracy
//!
//! Why these points: on random 64→64 layers in f32, the largest error of F(4×4) against an
//! f64 direct convolution is 1.6e-5 with the usual points 0, ±1, ±2 and 4.4e-6 with 0, 1, −1,
//! 2, −½ (1.3e-5 with 0, ±1, ±½; 6.4e-6 for the F(3×3) this replaces; 2.2e-5 for F(6×6)).
//! F(6×6) with the usual 0, ±1, ±½, ±2 (8×8 transforms built like these) takes a fifth off the
//! GEMMs and about 7 % off the network, but fails the end-to-end gate: on `astronaut_default`
//! two keypoints whose reference scores are 1.01e-6 apart trade places (our scores move by up to
//! 4e-6, against ~1e-6 with F(4×4)); no symmetric set of small dyadic points errs more than a
//! fifth less (0, ±⅝, ±1, ±³⁄₂ was the best of a search), and F(4×4) here errs 5–7× less.
//! Per layer, F(6×6) holds the gate on the 64-input-channel convs (conv1b, conv2a, conv2b,
//! conv3a) and fails once the 128-channel ones use it too; but only conv1b, whose input
//! transform also computes conv1a, gained (about 8 % of its time, 3 % of the network's on one
//! thread): too little for a second tiling.
//!
//! The bound the tests hold every output to ([`error_bound`]): the algorithm computes
//! y = aᵢᵀ [Σ_c (G g_c Gᵀ) ⊙ (Bᵀ d_c B)] aⱼ + bias exactly in real arithmetic, a sum of
//! products of matrix entries, weights and inputs. In floating point each term passes through
//! at most n roundings, each a relative error of at most u = 2⁻²⁴, so (Higham, *Accuracy and
//! Stability of Numerical Algorithms*, §3.1, with γₙ = n·u / (1 − n·u))
//!
//! |ŷ − y| ≤ γₙ · (Z + |bias|),  Z = |aᵢ|ᵀ [Σ_c (|G| |g_c| |Gᵀ|) ⊙ (|Bᵀ| |d_c| |B|)] |aⱼ|,
//!
//! where counting a multiply-add as two roundings (the portable level does not fuse them) the
//! rounding depth is: 6 per 1-D pass of the input transform (two passes), 1 for rounding U from
//! f64, 2·C_in for the GEMM's sequential sum, 6 per 1-D pass of the output transform (two
//! passes) and 1 for the bias, so n = 2·C_in + 26. ReLU and max-pooling are exact (a pooled
//! value is within the largest bound of its window). Z is larger than the direct sum Σ|w||x|
//! (the transforms add and subtract scaled copies), which is the price of the 4× fewer
//! multiplies; `cpu_vs_reference` checks every convolution shape against this bound and the
//! whole network against the end-to-end gates of DESIGN §5 on every fixture.

use std::cell::RefCell;

use rayon::prelude::*;
use superpoint_graph::{ConvWeights, Tensor};

use super::conv::{Epilogue, OutPtr};
use super::gemm::{gemm, PackedB};
use super::isa::Isa;
use super::recycle;
use super::simd::{dispatch, vectors, with_grid, Kernel, Simd};
use super::tensor::Hwc;

/// Output pixels per tile side.
const OUT: usize = 4;
/// Input pixels per tile side (OUT + 2).
pub(crate) const IN: usize = 6;
/// Positions of a transformed tile (IN × IN).
const POSITIONS: usize = IN * IN;
/// Tiles per parallel chunk at most: a multiple of the GEMM micro-kernel's rows (12 with
/// AVX-512, 6 with AVX2), so that no block is partial. Twelve (one AVX-512 block) measured
/// fastest on every layer against 24 and 36 on a 1 MB-L2 Zen 4 (`bench_cpu`, one thread, 5 %
/// over the network; 8–26 % on the 128- and 256-channel layers, whose V and M at 36 tiles
/// outgrow L2), although a chunk then reads each position's weights once per 12 tiles.
const CHUNK_TILES: usize = 12;
/// Chunks per worker thread at least, so that uneven chunk costs balance out.
const MIN_CHUNKS_PER_THREAD: usize = 4;

/// Bᵀ (6×6), by rows: the input transform. Toom-Cook for the points 0, 1, −1, 2, −½, ∞.
const BT: [[f64; IN]; IN] = [
    [1.0, 1.5, -2.0, -1.5, 1.0, 0.0],
    [0.0, -1.0, -2.5, -0.5, 1.0, 0.0],
    [0.0, 1.0, 0.5, -2.5, 1.0, 0.0],
    [0.0, -0.5, -1.0, 0.5, 1.0, 0.0],
    [0.0, 2.0, -1.0, -2.0, 1.0, 0.0],
    [0.0, 1.0, 1.5, -2.0, -1.5, 1.0],
];
/// G (6×3): the weight transform.
const G: [[f64; 3]; IN] = [
    [1.0, 0.0, 0.0],
    [-1.0 / 3.0, -1.0 / 3.0, -1.0 / 3.0],
    [1.0 / 3.0, -1.0 / 3.0, 1.0 / 3.0],
    [1.0 / 15.0, 2.0 / 15.0, 4.0 / 15.0],
    [-16.0 / 15.0, 8.0 / 15.0, -4.0 / 15.0],
    [0.0, 0.0, 1.0],
];
/// Aᵀ (4×6): the output transform.
const AT: [[f64; IN]; OUT] = [
    [1.0, 1.0, 1.0, 1.0, 1.0, 0.0],
    [0.0, 1.0, -1.0, 2.0, -0.5, 0.0],
    [0.0, 1.0, 1.0, 4.0, 0.25, 0.0],
    [0.0, 1.0, -1.0, 8.0, -0.125, 1.0],
];

/// The transformed weights of one 3×3 convolution: for each of the 36 tile positions the
/// `C_in × C_out` matrix U[p], packed for the GEMM.
#[derive(Debug)]
pub(crate) struct WinogradWeights {
    cin: usize,
    cout: usize,
    u: Vec<PackedB>,
}

/// G applied to three values, in f64 (the weights are transformed once).
fn g_rows(a: [f64; 3]) -> [f64; IN] {
    G.map(|row| row[0] * a[0] + row[1] * a[1] + row[2] * a[2])
}

impl WinogradWeights {
    /// U = G g Gᵀ for every (input, output) channel pair of a 3×3 `w`, over its first `cin`
    /// input channels, packed for vectors of `lanes` f32.
    pub(crate) fn new(w: &ConvWeights, cin: usize, lanes: usize) -> Self {
        let cout = w.out_channels;
        let mut u = vec![0.0f32; POSITIONS * cin * cout];
        for o in 0..cout {
            for i in 0..cin {
                // G g: each column of g through G.
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
        let u = u
            .chunks_exact((cin * cout).max(1))
            .take(POSITIONS)
            .map(|m| PackedB::new(cin, cout, lanes, |i, o| m[i * cout + o]))
            .collect();
        Self { cin, cout, u }
    }
}

/// The input of a Winograd convolution: a tensor ([`Hwc`]), or a convolution of another one
/// computed where it is read ([`super::direct::DirectSource`]).
pub(crate) trait Source: Sync {
    /// What one tile reads, gathered once for all its channel blocks.
    type Tile;
    /// The input's height and width.
    fn size(&self) -> (usize, usize);
    /// The tile whose pixel (i, j) is input pixel (y + i, x + j) (wrapping: `y` and `x` may
    /// be "negative" in the zero padding).
    fn tile(&self, y: usize, x: usize) -> Self::Tile;
    /// Channels `cb..cb + n` (n ≤ lanes; zero past n) of the pixels (i, j), i < [`IN`], of
    /// column `j` of `tile`, zero outside the input.
    fn column<S: Simd>(&self, s: S, tile: &Self::Tile, cb: usize, n: usize, j: usize)
        -> [S::V; IN];
}

/// A tile of a [`Hwc`] source: its top-left pixel, and whether all its pixels are inside.
pub(crate) struct HwcTile {
    y: usize,
    x: usize,
    inside: bool,
}

impl Source for Hwc {
    type Tile = HwcTile;

    fn size(&self) -> (usize, usize) {
        (self.height(), self.width())
    }
    #[inline(always)]
    fn tile(&self, y: usize, x: usize) -> HwcTile {
        let fits = |start: usize, size: usize| start.checked_add(IN).is_some_and(|e| e <= size);
        HwcTile {
            y,
            x,
            inside: fits(y, self.height()) && fits(x, self.width()),
        }
    }
    #[inline(always)]
    fn column<S: Simd>(&self, s: S, tile: &HwcTile, cb: usize, n: usize, j: usize) -> [S::V; IN] {
        let (y0, x) = (tile.y, tile.x.wrapping_add(j));
        let c = self.channels();
        if tile.inside && n == S::LANES {
            // The common case, without a check per pixel: element (y0 + i, x, cb + lane) is in
            // bounds for i < IN and lane < LANES (the tile is inside, cb + LANES ≤ c).
            let pitch = self.width() * c;
            let base = self.data()[(y0 * self.width() + x) * c + cb..].as_ptr();
            // SAFETY: in bounds, as above.
            return vectors(s, |i| unsafe { s.load_ptr(base.add(i * pitch)) });
        }
        vectors(s, |i| {
            let y = y0.wrapping_add(i);
            if y < self.height() && x < self.width() {
                let at = &self.row(y)[x * c + cb..];
                if n == S::LANES {
                    s.load(at)
                } else {
                    s.load_partial(&at[..n])
                }
            } else {
                s.zero()
            }
        })
    }
}

/// The 3×3 convolution of `x` (its first `w.cin` channels) with `pad` zero pixels on every
/// side, followed by the 2×2 max-pool when `pool` is set.
pub(crate) fn conv3x3<X: Source>(
    isa: Isa,
    x: &X,
    w: &WinogradWeights,
    pad: usize,
    epilogue: &Epilogue<'_>,
    pool: bool,
) -> Hwc {
    let (in_h, in_w) = x.size();
    let conv_h = (in_h + 2 * pad).saturating_sub(2);
    let conv_w = (in_w + 2 * pad).saturating_sub(2);
    let (out_h, out_w) = if pool {
        (conv_h / 2, conv_w / 2)
    } else {
        (conv_h, conv_w)
    };
    let mut out = Hwc::for_overwrite(w.cout, out_h, out_w);
    if out.data().is_empty() || w.u.len() != POSITIONS {
        return out;
    }
    // The conv pixels the output needs (pooling drops an odd last row or column).
    let (need_h, need_w) = if pool {
        (2 * out_h, 2 * out_w)
    } else {
        (out_h, out_w)
    };
    let tiles_x = need_w.div_ceil(OUT);
    let tiles = tiles_x * need_h.div_ceil(OUT);
    let chunk = tiles
        .div_ceil(MIN_CHUNKS_PER_THREAD * rayon::current_num_threads().max(1))
        .clamp(1, CHUNK_TILES);
    let layer = Layer {
        x,
        w,
        pad,
        tiles_x,
        out_h,
        out_w,
        pool,
        epilogue,
        out: OutPtr::new(out.data_mut()),
    };
    (0..tiles.div_ceil(chunk)).into_par_iter().for_each(|c| {
        let range = c * chunk..((c + 1) * chunk).min(tiles);
        // Nothing in a chunk calls into rayon, so the borrow is never taken twice.
        SCRATCH.with_borrow_mut(|scratch| {
            dispatch(
                isa,
                Chunk {
                    layer: &layer,
                    range,
                    scratch,
                },
            )
        });
    });
    out
}

thread_local! {
    /// Each worker thread's buffers, kept from chunk to chunk and layer to layer (rayon's
    /// `for_each_init` would make new ones, zeroed, for every split of the work).
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// What every chunk of one convolution shares.
struct Layer<'a, X> {
    x: &'a X,
    w: &'a WinogradWeights,
    pad: usize,
    tiles_x: usize,
    /// The output's size (pooled when `pool`).
    out_h: usize,
    out_w: usize,
    pool: bool,
    epilogue: &'a Epilogue<'a>,
    out: OutPtr,
}

/// Per-worker buffers.
#[derive(Default)]
struct Scratch {
    /// Transformed input tiles, position-major: position p, tile t at `(p * T + t) * C_in'`
    /// (C_in rounded up to whole vectors).
    v: Vec<f32>,
    /// GEMM results, position-major: position p, tile t at `(p * T + t) * C_out'` (whole panels).
    m: Vec<f32>,
}

/// One chunk of tiles (raster order) of one convolution.
struct Chunk<'a, X> {
    layer: &'a Layer<'a, X>,
    range: std::ops::Range<usize>,
    scratch: &'a mut Scratch,
}

impl<X: Source> Kernel for Chunk<'_, X> {
    type Output = ();

    #[inline(always)]
    fn run<S: Simd>(self, s: S) {
        let Chunk {
            layer,
            range,
            scratch,
        } = self;
        let w = layer.w;
        let tiles = range.len();
        let cin_pad = w.cin.div_ceil(S::LANES) * S::LANES;
        let cout_pad = w.u[0].padded_n();
        let v = recycle::scratch(&mut scratch.v, POSITIONS * tiles * cin_pad);
        let m = recycle::scratch(&mut scratch.m, POSITIONS * tiles * cout_pad);
        for (t, tile) in range.clone().enumerate() {
            layer.input_tile(s, tile, t, tiles, cin_pad, v);
        }
        for p in 0..POSITIONS {
            gemm(
                s,
                tiles,
                &v[p * tiles * cin_pad..],
                cin_pad,
                &w.u[p],
                &mut m[p * tiles * cout_pad..],
                cout_pad,
                false,
            );
        }
        for (t, tile) in range.enumerate() {
            layer.output_tile(s, tile, t, tiles, cout_pad, m);
        }
    }
}

impl<X: Source> Layer<'_, X> {
    /// Transforms tile `tile` (chunk-local index `t` of `tiles`) into V.
    #[inline(always)]
    fn input_tile<S: Simd>(
        &self,
        s: S,
        tile: usize,
        t: usize,
        tiles: usize,
        cin_pad: usize,
        v: &mut [f32],
    ) {
        let cin = self.w.cin;
        let (y0, x0) = (OUT * (tile / self.tiles_x), OUT * (tile % self.tiles_x));
        let input = self
            .x
            .tile(y0.wrapping_sub(self.pad), x0.wrapping_sub(self.pad));
        let stride = tiles * cin_pad;
        assert!(
            t < tiles
                && cin.div_ceil(S::LANES) * S::LANES <= cin_pad
                && v.len() >= (POSITIONS - 1) * stride + (t + 1) * cin_pad,
            "V too short for its tiles"
        );
        let dst = v.as_mut_ptr().wrapping_add(t * cin_pad);
        for cb in (0..cin).step_by(S::LANES) {
            let n = (cin - cb).min(S::LANES);
            // Bᵀ over the columns (column j into cols[j]), then B over the rows: row i
            // (cols[..][i]) into positions (i, ..) of V.
            let cols = |j| input_pass(s, self.x.column(s, &input, cb, n, j));
            with_grid(s, cols, |cols: &[[S::V; IN]; IN]| {
                (0..IN).for_each(|i| {
                    let row = input_pass(s, vectors(s, |j| cols[j][i]));
                    for (j, val) in row.into_iter().enumerate() {
                        // SAFETY: position p = i·IN + j of tile t, channels cb..cb + LANES ≤
                        // cin_pad, is in V (the assertion above).
                        unsafe { s.store_ptr(val, dst.add((i * IN + j) * stride + cb)) };
                    }
                });
            });
        }
    }

    /// Transforms tile `tile` (chunk-local `t`) back from M and writes its output pixels.
    #[inline(always)]
    fn output_tile<S: Simd>(
        &self,
        s: S,
        tile: usize,
        t: usize,
        tiles: usize,
        cout_pad: usize,
        m: &[f32],
    ) {
        let cout = self.w.cout;
        let (ty, tx) = (tile / self.tiles_x, tile % self.tiles_x);
        let stride = tiles * cout_pad;
        assert!(
            t < tiles
                && cout.div_ceil(S::LANES) * S::LANES <= cout_pad
                && m.len() >= (POSITIONS - 1) * stride + (t + 1) * cout_pad,
            "M too short for its tiles"
        );
        let src = m.as_ptr().wrapping_add(t * cout_pad);
        // The output pixels of the tile, all inside the output or not.
        let side = if self.pool { OUT / 2 } else { OUT };
        let inside = side * ty + side <= self.out_h && side * tx + side <= self.out_w;
        for cb in (0..cout).step_by(S::LANES) {
            let n = (cout - cb).min(S::LANES);
            // SAFETY: position p of tile t, channels cb..cb + LANES ≤ cout_pad, is in M (the
            // assertion above).
            let at = |p: usize| unsafe { s.load_ptr(src.add(p * stride + cb)) };
            // Aᵀ over the columns (column j of M into cols[j]), then A over the rows.
            let cols = |j| output_pass(s, vectors(s, |i| at(i * IN + j)));
            with_grid(s, cols, |cols: &[[S::V; OUT]; IN]| {
                let rows = |i| output_pass(s, vectors(s, |j| cols[j][i]));
                with_grid(s, rows, |y| self.write_tile(s, ty, tx, inside, cb, n, y));
            });
        }
    }

    /// Bias and activation of channels `cb..cb + n` of the tile's output pixels (pooled when
    /// `pool`) from its conv pixels `y`; `inside` when all of them are inside the output.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn write_tile<S: Simd>(
        &self,
        s: S,
        ty: usize,
        tx: usize,
        inside: bool,
        cb: usize,
        n: usize,
        y: &[[S::V; OUT]; OUT],
    ) {
        let side = if self.pool { OUT / 2 } else { OUT };
        if inside && n == S::LANES {
            self.write_inside(s, side * ty, side * tx, cb, y);
        } else if self.pool {
            for pi in 0..OUT / 2 {
                for pj in 0..OUT / 2 {
                    let (oy, ox) = (OUT / 2 * ty + pi, OUT / 2 * tx + pj);
                    if oy < self.out_h && ox < self.out_w {
                        let (r, c) = (2 * pi, 2 * pj);
                        let top = s.max(y[r][c], y[r][c + 1]);
                        let bottom = s.max(y[r + 1][c], y[r + 1][c + 1]);
                        self.write(s, oy, ox, cb, n, s.max(top, bottom));
                    }
                }
            }
        } else {
            for (i, row) in y.iter().enumerate() {
                for (j, &val) in row.iter().enumerate() {
                    let (oy, ox) = (OUT * ty + i, OUT * tx + j);
                    if oy < self.out_h && ox < self.out_w {
                        self.write(s, oy, ox, cb, n, val);
                    }
                }
            }
        }
    }

    /// Bias and activation of channels `cb..cb + LANES` of the tile's output pixels (pooled
    /// when `pool`) from its conv pixels `y`, the top-left one at (oy, ox), all of them inside
    /// the output.
    #[inline(always)]
    fn write_inside<S: Simd>(&self, s: S, oy: usize, ox: usize, cb: usize, y: &[[S::V; OUT]; OUT]) {
        let (cout, side) = (self.w.cout, if self.pool { OUT / 2 } else { OUT });
        let pitch = self.out_w * cout;
        let at = (oy * self.out_w + ox) * cout + cb;
        let dst = self
            .out
            .range(at, (side - 1) * pitch + (side - 1) * cout + S::LANES);
        let bias = self.epilogue.bias_vector(s, cb);
        for i in 0..side {
            for j in 0..side {
                let acc = if self.pool {
                    let (r, c) = (2 * i, 2 * j);
                    let top = s.max(y[r][c], y[r][c + 1]);
                    let bottom = s.max(y[r + 1][c], y[r + 1][c + 1]);
                    s.max(top, bottom)
                } else {
                    y[i][j]
                };
                // SAFETY: in the range `OutPtr::range` checked; each output pixel belongs to
                // exactly one tile and each tile to one chunk, so no two chunks write the same
                // elements.
                unsafe {
                    s.store_ptr(
                        self.epilogue.finish(s, bias, acc),
                        dst.add(i * pitch + j * cout),
                    )
                };
            }
        }
    }

    /// Bias and activation of channels `cb..cb + n` of output pixel (oy, ox), stored.
    #[inline(always)]
    fn write<S: Simd>(&self, s: S, oy: usize, ox: usize, cb: usize, n: usize, acc: S::V) {
        let value = self.epilogue.vector(s, cb, acc);
        let at = (oy * self.out_w + ox) * self.w.cout + cb;
        // SAFETY: each output pixel belongs to exactly one tile and each tile to one chunk, so
        // no two chunks write the same elements; `OutPtr::slice` checks the bounds.
        let dst = unsafe { self.out.slice(at, n) };
        if n == S::LANES {
            s.store(value, dst);
        } else {
            s.store_partial(value, dst);
        }
    }
}

/// One 1-D pass of the input transform, Bᵀ times six vectors (the rows of [`BT`]).
#[inline(always)]
fn input_pass<S: Simd>(s: S, d: [S::V; IN]) -> [S::V; IN] {
    let k = |x: f32| s.splat(x);
    let d31 = s.sub(d[3], d[1]);
    let d42 = s.sub(d[4], d[2]);
    [
        // d0 + 1.5 d1 − 2 d2 − 1.5 d3 + d4
        s.mul_add(k(-1.5), d31, s.mul_add(k(-2.0), d[2], s.add(d[0], d[4]))),
        // −d1 − 2.5 d2 − 0.5 d3 + d4
        s.mul_add(k(-2.5), d[2], s.mul_add(k(-0.5), d[3], s.sub(d[4], d[1]))),
        // d1 + 0.5 d2 − 2.5 d3 + d4
        s.mul_add(k(0.5), d[2], s.mul_add(k(-2.5), d[3], s.add(d[4], d[1]))),
        // −0.5 d1 − d2 + 0.5 d3 + d4
        s.mul_add(k(0.5), d31, d42),
        // 2 d1 − d2 − 2 d3 + d4
        s.mul_add(k(-2.0), d31, d42),
        // d1 + 1.5 d2 − 2 d3 − 1.5 d4 + d5
        s.mul_add(k(-1.5), d42, s.mul_add(k(-2.0), d[3], s.add(d[1], d[5]))),
    ]
}

/// One 1-D pass of the output transform, Aᵀ times six vectors (the rows of [`AT`]).
#[inline(always)]
fn output_pass<S: Simd>(s: S, m: [S::V; IN]) -> [S::V; OUT] {
    let k = |x: f32| s.splat(x);
    let sum = s.add(m[1], m[2]);
    let dif = s.sub(m[1], m[2]);
    [
        s.add(s.add(m[0], sum), s.add(m[3], m[4])),
        s.mul_add(k(-0.5), m[4], s.mul_add(k(2.0), m[3], dif)),
        s.mul_add(k(0.25), m[4], s.mul_add(k(4.0), m[3], sum)),
        s.add(
            s.mul_add(k(-0.125), m[4], s.mul_add(k(8.0), m[3], dif)),
            m[5],
        ),
    ]
}

/// Rounding steps any term of an output passes through (module doc): a C_in-term sum, the
/// four transform passes, the rounding of U and the bias.
pub(crate) fn rounding_depth(cin: usize) -> usize {
    2 * cin + 26
}

/// The largest error the Winograd convolution of `x` with the 3×3 `w` (`pad` zero pixels) may
/// have at each output (before ReLU and pooling), by the analysis of the module doc:
/// γₙ · (Z + |bias|), computed in f64.
pub(crate) fn error_bound(x: &Tensor<f32>, w: &ConvWeights, pad: usize) -> Tensor<f32> {
    let cin = w.in_channels.min(x.channels);
    let out_h = (x.height + 2 * pad).saturating_sub(2);
    let out_w = (x.width + 2 * pad).saturating_sub(2);
    let n = rounding_depth(cin) as f64;
    let u = f64::from(f32::EPSILON) / 2.0;
    let gamma = n * u / (1.0 - n * u);
    let abs = |m: &[[f64; IN]]| -> Vec<[f64; IN]> { m.iter().map(|r| r.map(f64::abs)).collect() };
    let (bt, at) = (abs(&BT), abs(&AT));
    let g = G.map(|r| r.map(f64::abs));
    let (tiles_y, tiles_x) = (out_h.div_ceil(OUT), out_w.div_ceil(OUT));
    let mut bound = vec![0.0f32; w.out_channels * out_h * out_w];
    let input = |c: usize, y: usize, xx: usize| -> f64 {
        let (y, xx) = (y.wrapping_sub(pad), xx.wrapping_sub(pad));
        if y < x.height && xx < x.width {
            f64::from(x.data[(c * x.height + y) * x.width + xx]).abs()
        } else {
            0.0
        }
    };
    // |G| |g| |Gᵀ| of every channel pair.
    let uw: Vec<[[f64; IN]; IN]> = (0..w.out_channels * cin)
        .map(|oi| {
            let (o, i) = (oi / cin, oi % cin);
            let gg: [[f64; 3]; IN] = std::array::from_fn(|r| {
                std::array::from_fn(|kx| {
                    (0..3)
                        .map(|ky| g[r][ky] * f64::from(w.at(o, i, ky, kx)).abs())
                        .sum()
                })
            });
            std::array::from_fn(|r| {
                std::array::from_fn(|c| (0..3).map(|kx| gg[r][kx] * g[c][kx]).sum())
            })
        })
        .collect();
    for ty in 0..tiles_y {
        for tx in 0..tiles_x {
            // |Bᵀ| |d| |B| of every input channel of the tile.
            let dv: Vec<[[f64; IN]; IN]> = (0..cin)
                .map(|c| {
                    let bd: [[f64; IN]; IN] = std::array::from_fn(|r| {
                        std::array::from_fn(|j| {
                            (0..IN)
                                .map(|i| bt[r][i] * input(c, OUT * ty + i, OUT * tx + j))
                                .sum()
                        })
                    });
                    std::array::from_fn(|r| {
                        std::array::from_fn(|q| (0..IN).map(|j| bd[r][j] * bt[q][j]).sum())
                    })
                })
                .collect();
            for o in 0..w.out_channels {
                let mut mm = [[0.0f64; IN]; IN];
                for (c, v) in dv.iter().enumerate() {
                    let uu = &uw[o * cin + c];
                    for r in 0..IN {
                        for q in 0..IN {
                            mm[r][q] += uu[r][q] * v[r][q];
                        }
                    }
                }
                for i in 0..OUT {
                    for j in 0..OUT {
                        let (oy, ox) = (OUT * ty + i, OUT * tx + j);
                        if oy >= out_h || ox >= out_w {
                            continue;
                        }
                        let z: f64 = (0..IN)
                            .flat_map(|r| (0..IN).map(move |q| (r, q)))
                            .map(|(r, q)| at[i][r] * mm[r][q] * at[j][q])
                            .sum();
                        let b = f64::from(w.bias[o]).abs();
                        bound[(o * out_h + oy) * out_w + ox] = (gamma * (z + b)) as f32;
                    }
                }
            }
        }
    }
    Tensor {
        channels: w.out_channels,
        height: out_h,
        width: out_w,
        data: bound,
    }
}

#[cfg(test)]
mod tests {
    use super::super::conv::testing::{check, Rng};
    use super::super::conv::Packed;
    use super::super::simd::lanes;
    use super::super::simd::testing::supported_levels;
    use super::{WinogradWeights, AT, BT, G, IN, OUT};

    /// The transforms compute a 1-D correlation exactly (in f64): y = Aᵀ[(G g) ⊙ (Bᵀ d)].
    #[test]
    fn matrices_compute_the_correlation() {
        let d = [0.3, -1.2, 2.5, 0.7, -0.4, 1.9];
        let g = [0.5, -0.25, 1.5];
        let gg: Vec<f64> = G
            .iter()
            .map(|r| r[0] * g[0] + r[1] * g[1] + r[2] * g[2])
            .collect();
        let bd: Vec<f64> = BT
            .iter()
            .map(|r| (0..IN).map(|i| r[i] * d[i]).sum())
            .collect();
        for (i, row) in AT.iter().enumerate() {
            let y: f64 = (0..IN).map(|p| row[p] * gg[p] * bd[p]).sum();
            let want: f64 = (0..3).map(|k| d[i + k] * g[k]).sum();
            assert!((y - want).abs() < 1e-12, "output {i}: {y} vs {want}");
        }
        assert_eq!(AT.len(), OUT);
    }

    #[test]
    fn matches_the_reference_on_odd_shapes() {
        let mut rng = Rng::new(7);
        // (channels of x, C_in, C_out, height, width, pad): odd sizes, channel counts not
        // multiples of the vector width, one-pixel and one-tile images, an input with more
        // channels than the weights use.
        for isa in supported_levels() {
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
                let packed =
                    Packed::Winograd(WinogradWeights::new(&wt, cin.min(channels), lanes(isa)));
                check(isa, &x, &wt, &packed, pad);
            }
        }
    }
}
