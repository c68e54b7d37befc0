//! The input plane of a YCbCr JPEG from libjpeg-turbo's raw component planes (after the IDCT,
//! before upsampling and colour conversion), bit-identical to the plane of its RGB decode.
//!
//! A plain decode upsamples both chroma planes and converts every pixel to R, G and B; the
//! network needs one plane. So [`crate::jpeg`] asks libjpeg-turbo for the raw planes and this
//! module does, for the channel asked for only, what libjpeg-turbo would have done:
//! * "fancy" upsampling (its default, and Pillow's), `jdsample.c`: a triangle filter, 3/4 of
//!   the nearer chroma sample and 1/4 of the further one along each subsampled axis, with the
//!   edge samples repeated and its exact rounding biases — for h2v2 (4:2:0) the column sums
//!   `3·near + far` are weighted `(3·this + other + 8) >> 4` on the left output and
//!   `(3·this + other + 7) >> 4` on the right one; for h2v1 (4:2:2) `(3·this + other + 1) >> 2`
//!   and `+ 2`; for h1v2 (4:4:0) `(3·near + far + 1) >> 2` above and `+ 2` below;
//! * the colour conversion `jdcolor.c` (`ycc_rgb_convert`; its SIMD versions give the same
//!   values): R = Y + ⌊(91881·(Cr − 128) + 2¹⁵) / 2¹⁶⌋, G = Y + ⌊(−22554·(Cb − 128)
//!   − 46802·(Cr − 128) + 2¹⁵) / 2¹⁶⌋, B = Y + ⌊(116130·(Cb − 128) + 2¹⁵) / 2¹⁶⌋, each clamped
//!   to 0..=255 (the constants are round(k · 2¹⁶) for 1.402, 0.34414, 0.71414 and 1.772).
//!
//! The red plane needs Y and Cr only; Pillow's luma needs all three. The rows are computed in
//! parallel bands, in loops the compiler vectorises for the CPU's instruction set.

use rayon::prelude::*;
use superpoint_graph::Channel;

use crate::backend::cpu::Isa;
use crate::decode::{luma, PlaneSpec};

/// Output rows per parallel task.
const ROWS_PER_TASK: usize = 32;

/// How the chroma planes are subsampled (libjpeg-turbo's name for the upsampling it needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sampling {
    /// 4:4:4: no upsampling.
    H1V1,
    /// 4:2:2: half width.
    H2V1,
    /// 4:4:0: half height.
    H1V2,
    /// 4:2:0: half width and height.
    H2V2,
}

impl Sampling {
    fn halves_width(self) -> bool {
        matches!(self, Sampling::H2V1 | Sampling::H2V2)
    }
    fn halves_height(self) -> bool {
        matches!(self, Sampling::H1V2 | Sampling::H2V2)
    }
}

/// The raw planes of a YCbCr image: Y at full size, Cb and Cr subsampled.
pub(crate) struct Planes<'a> {
    pub width: usize,
    pub height: usize,
    pub sampling: Sampling,
    pub y: &'a [u8],
    pub y_stride: usize,
    pub cb: &'a [u8],
    pub cr: &'a [u8],
    pub chroma_stride: usize,
}

impl Planes<'_> {
    /// Chroma samples per row and rows (libjpeg's `downsampled_width` and `_height`).
    fn chroma_size(&self) -> (usize, usize) {
        let w = if self.sampling.halves_width() {
            self.width.div_ceil(2)
        } else {
            self.width
        };
        let h = if self.sampling.halves_height() {
            self.height.div_ceil(2)
        } else {
            self.height
        };
        (w, h)
    }

    /// Whether libjpeg-turbo would upsample these planes the way this module does: fancy
    /// upsampling of a halved width needs more than two chroma columns (`jdsample.c`), and the
    /// planes must hold their rows.
    pub(crate) fn supported(&self) -> bool {
        let (cw, ch) = self.chroma_size();
        (!self.sampling.halves_width() || cw > 2)
            && self.y_stride >= self.width
            && self.chroma_stride >= cw
            && self.y.len() >= self.y_stride * self.height
            && self.cb.len() >= self.chroma_stride * ch
            && self.cr.len() >= self.chroma_stride * ch
    }
}

/// The plane `spec` asks for (`width × height`, row-major).
///
/// # Panics
/// When the planes are not [`Planes::supported`].
pub(crate) fn plane(p: &Planes<'_>, spec: PlaneSpec, isa: Isa) -> Vec<u8> {
    assert!(p.supported(), "YCbCr planes too small for their size");
    let mut out = vec![0u8; p.width * p.height];
    if out.is_empty() {
        return out;
    }
    out.par_chunks_mut(ROWS_PER_TASK * p.width)
        .enumerate()
        .for_each_init(Rows::default, |rows, (b, band)| {
            crate::backend::cpu::compiled_for(
                isa,
                #[inline(always)]
                || {
                    for (j, dst) in band.chunks_exact_mut(p.width).enumerate() {
                        rows.convert(p, b * ROWS_PER_TASK + j, spec, dst);
                    }
                },
            )
        });
    out
}

/// Per-worker rows of upsampled chroma.
#[derive(Default)]
struct Rows {
    cb: Vec<u8>,
    cr: Vec<u8>,
    sums: Vec<u16>,
}

impl Rows {
    /// Output row `y` into `dst`.
    #[inline(always)]
    fn convert(&mut self, p: &Planes<'_>, y: usize, spec: PlaneSpec, dst: &mut [u8]) {
        let luma_row = &p.y[y * p.y_stride..][..p.width];
        // The channel taken as red: R, or B for BGR-ordered input (DESIGN §2).
        let red_from_cb = spec.bgr;
        match spec.channel {
            // Indexed loops over slices of one length: the compiler vectorises them.
            Channel::Red if !red_from_cb => {
                upsample_row(p, p.cr, y, &mut self.sums, &mut self.cr);
                let (dst, cr) = (&mut dst[..p.width], &self.cr[..p.width]);
                for i in 0..p.width {
                    dst[i] = red(luma_row[i], cr[i]);
                }
            }
            Channel::Red => {
                upsample_row(p, p.cb, y, &mut self.sums, &mut self.cb);
                let (dst, cb) = (&mut dst[..p.width], &self.cb[..p.width]);
                for i in 0..p.width {
                    dst[i] = blue(luma_row[i], cb[i]);
                }
            }
            Channel::Luma => {
                upsample_row(p, p.cb, y, &mut self.sums, &mut self.cb);
                upsample_row(p, p.cr, y, &mut self.sums, &mut self.cr);
                let chroma = self.cb[..p.width].iter().zip(&self.cr[..p.width]);
                for ((d, &l), (&cb, &cr)) in dst.iter_mut().zip(luma_row).zip(chroma) {
                    let (r, g, b) = (red(l, cr), green(l, cb, cr), blue(l, cb));
                    *d = if red_from_cb {
                        luma(b, g, r)
                    } else {
                        luma(r, g, b)
                    };
                }
            }
        }
    }
}

/// Row `y` of chroma plane `c` upsampled to at least `p.width` samples into `out`.
#[inline(always)]
fn upsample_row(p: &Planes<'_>, c: &[u8], y: usize, sums: &mut Vec<u16>, out: &mut Vec<u8>) {
    let (cw, ch) = p.chroma_size();
    let row = |r: usize| &c[r * p.chroma_stride..][..cw];
    out.resize(2 * cw, 0);
    match p.sampling {
        Sampling::H1V1 => out[..cw].copy_from_slice(row(y)),
        Sampling::H2V1 => {
            sums.clear();
            sums.extend(row(y).iter().map(|&v| u16::from(v)));
            // this = 3·c[i]; left (c[i−1]) and right (c[i+1]) repeat the edge samples.
            spread(sums, out, 2, 1, 2);
        }
        Sampling::H1V2 => {
            let (near, far, bias) = vertical_neighbours(y, ch);
            let (near, far) = (row(near), row(far));
            for ((o, &n), &f) in out[..cw].iter_mut().zip(near).zip(far) {
                *o = ((3 * u16::from(n) + u16::from(f) + bias) >> 2) as u8;
            }
        }
        Sampling::H2V2 => {
            let (near, far, _) = vertical_neighbours(y, ch);
            let (near, far) = (row(near), row(far));
            sums.clear();
            sums.extend(
                near.iter()
                    .zip(far)
                    .map(|(&n, &f)| 3 * u16::from(n) + u16::from(f)),
            );
            spread(sums, out, 4, 8, 7);
        }
    }
}

/// Horizontal 2× fancy upsampling of `sums` into `out`: output 2i is
/// (3·sums[i] + sums[i − 1] + `left_bias`) >> `shift`, output 2i + 1 is
/// (3·sums[i] + sums[i + 1] + `right_bias`) >> `shift`, the edge samples repeated. The
/// interior is one loop over equal-length slices, which the compiler vectorises.
#[inline(always)]
fn spread(sums: &[u16], out: &mut [u8], shift: u32, left_bias: u16, right_bias: u16) {
    let n = sums.len();
    let pair = |this: u16, left: u16, right: u16| {
        (
            ((3 * this + left + left_bias) >> shift) as u8,
            ((3 * this + right + right_bias) >> shift) as u8,
        )
    };
    if n == 0 {
        return;
    }
    let last = n - 1;
    (out[0], out[1]) = pair(sums[0], sums[0], sums[1.min(last)]);
    if n > 1 {
        (out[2 * last], out[2 * last + 1]) = pair(sums[last], sums[last - 1], sums[last]);
    }
    if n > 2 {
        let (left, this, right) = (&sums[..n - 2], &sums[1..n - 1], &sums[2..]);
        let inner = &mut out[2..2 * last];
        for i in 0..n - 2 {
            let (a, b) = pair(this[i], left[i], right[i]);
            inner[2 * i] = a;
            inner[2 * i + 1] = b;
        }
    }
}

/// For output row `y` of an image whose chroma has `ch` rows at half height: the nearer chroma
/// row, the further one (the edge rows repeated) and h1v2's rounding bias (1 above, 2 below).
fn vertical_neighbours(y: usize, ch: usize) -> (usize, usize, u16) {
    let near = y / 2;
    if y.is_multiple_of(2) {
        (near, near.saturating_sub(1), 1)
    } else {
        (near, (near + 1).min(ch - 1), 2)
    }
}

/// ⌊(k · (v − 128) + 2¹⁵) / 2¹⁶⌋.
#[inline(always)]
fn scaled(k: i32, v: u8) -> i32 {
    (k * (i32::from(v) - 128) + (1 << 15)) >> 16
}

#[inline(always)]
fn clamp(v: i32) -> u8 {
    v.clamp(0, 255) as u8
}

#[inline(always)]
fn red(y: u8, cr: u8) -> u8 {
    clamp(i32::from(y) + scaled(91881, cr))
}

#[inline(always)]
fn green(y: u8, cb: u8, cr: u8) -> u8 {
    let cb = -22554 * (i32::from(cb) - 128);
    let cr = -46802 * (i32::from(cr) - 128);
    clamp(i32::from(y) + ((cb + cr + (1 << 15)) >> 16))
}

#[inline(always)]
fn blue(y: u8, cb: u8) -> u8 {
    clamp(i32::from(y) + scaled(116130, cb))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables of `jdcolor.c` (`build_ycc_rgb_table`), computed as it does: FIX(x) =
    /// (x · 2¹⁶ + 0.5) truncated, Cr_r = (FIX(1.402)·x + ONE_HALF) >> 16, and so on.
    #[test]
    fn conversion_matches_libjpeg_tables() {
        let fix = |x: f64| (x * 65536.0 + 0.5) as i32;
        for v in 0..=255u8 {
            let x = i32::from(v) - 128;
            assert_eq!(scaled(91881, v), (fix(1.40200) * x + 32768) >> 16);
            assert_eq!(scaled(116130, v), (fix(1.77200) * x + 32768) >> 16);
            for w in [0u8, 17, 128, 200, 255] {
                let xb = i32::from(w) - 128;
                let g = (-fix(0.34414) * xb - fix(0.71414) * x + 32768) >> 16;
                assert_eq!(i32::from(green(100, w, v)), (100 + g).clamp(0, 255));
            }
        }
        assert_eq!((red(250, 255), red(3, 0), blue(0, 0)), (255, 0, 0));
    }

    /// 4:2:0 upsampling of a hand-computed 6×2 image (chroma 3×1): with one chroma row the
    /// column sums are 4·c; left outputs (12c + 4c_left + 8) >> 4, right ones (+ 7).
    #[test]
    fn h2v2_upsampling_by_hand() {
        let y = [0u8; 12];
        let cr = [16u8, 32, 200];
        let p = Planes {
            width: 6,
            height: 2,
            sampling: Sampling::H2V2,
            y: &y,
            y_stride: 6,
            cb: &cr,
            cr: &cr,
            chroma_stride: 3,
        };
        let (mut sums, mut out) = (Vec::new(), Vec::new());
        upsample_row(&p, &cr, 1, &mut sums, &mut out);
        // Sums 64, 128, 800. Out 0: (192 + 64 + 8) >> 4 = 16; 1: (192 + 128 + 7) >> 4 = 20;
        // 2: (384 + 64 + 8) >> 4 = 28; 3: (384 + 800 + 7) >> 4 = 74; 4: (2400 + 128 + 8) >> 4
        // = 158; 5: (2400 + 800 + 7) >> 4 = 200.
        assert_eq!(out, [16, 20, 28, 74, 158, 200]);
    }
}
