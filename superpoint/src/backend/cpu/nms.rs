//! Non-maximum suppression as two running maxima: the maximum over a clipped (2r+1)×(2r+1)
//! window is the column maximum (over the clipped rows) of the row maxima (over the clipped
//! columns). `max` is exact, so the result is bit-identical to the reference's direct window
//! scan: a value is kept iff it equals its window maximum, every tie is kept, the rest is +0.
//! Both passes are vectorised along the row (pixels × channels), with the row padded by −∞
//! where the window is clipped.

use rayon::prelude::*;

use super::isa::Isa;
use super::simd::{dispatch, Kernel, Simd};
use super::tensor::Hwc;

/// Rows per parallel task.
const ROWS_PER_TASK: usize = 8;

/// NMS with `radius` over every channel of `x`.
pub(crate) fn nms(isa: Isa, x: &Hwc, radius: usize) -> Hwc {
    let (c, h, w) = (x.channels(), x.height(), x.width());
    // Both buffers are recycled ones: the passes write every element.
    let mut out = Hwc::for_overwrite(c, h, w);
    if out.data().is_empty() {
        return out;
    }
    // A window wider than the image is clipped to it.
    let r = radius.min(h.max(w));
    let pitch = w * c;
    // Pass 1: the maximum over the clipped columns x - r ..= x + r of each row.
    let mut row_max = Hwc::for_overwrite(c, h, w);
    row_max
        .data_mut()
        .par_chunks_mut(ROWS_PER_TASK * pitch)
        .enumerate()
        .for_each_init(Vec::new, |padded, (b, rows)| {
            for (j, dst) in rows.chunks_exact_mut(pitch).enumerate() {
                padded.clear();
                padded.resize((w + 2 * r) * c, f32::NEG_INFINITY);
                padded[r * c..(r + w) * c].copy_from_slice(x.row(b * ROWS_PER_TASK + j));
                dispatch(
                    isa,
                    WindowMax {
                        sources: (0..=2 * r).map(|dx| &padded[dx * c..dx * c + pitch]),
                        dst,
                    },
                );
            }
        });
    // Pass 2: the maximum of those over the clipped rows y - r ..= y + r, then the comparison.
    out.data_mut()
        .par_chunks_mut(ROWS_PER_TASK * pitch)
        .enumerate()
        .for_each_init(Vec::new, |window, (b, rows)| {
            for (j, dst) in rows.chunks_exact_mut(pitch).enumerate() {
                let y = b * ROWS_PER_TASK + j;
                let (lo, hi) = (y.saturating_sub(r), (y + r + 1).min(h));
                window.clear();
                window.resize(pitch, 0.0);
                dispatch(
                    isa,
                    WindowMax {
                        sources: (lo..hi).map(|wy| row_max.row(wy)),
                        dst: window,
                    },
                );
                dispatch(
                    isa,
                    KeepMaxima {
                        x: x.row(y),
                        max: window,
                        dst,
                    },
                );
            }
        });
    out
}

/// `dst` = the element-wise maximum of the `sources` (at least one, each as long as `dst`).
struct WindowMax<'a, I: Iterator<Item = &'a [f32]>> {
    sources: I,
    dst: &'a mut [f32],
}

impl<'a, I: Iterator<Item = &'a [f32]>> Kernel for WindowMax<'a, I> {
    type Output = ();

    #[inline(always)]
    fn run<S: Simd>(self, s: S) {
        let WindowMax { mut sources, dst } = self;
        let Some(first) = sources.next() else {
            return;
        };
        dst.copy_from_slice(first);
        let l = S::LANES;
        let whole = dst.len() / l * l;
        for src in sources {
            for i in (0..whole).step_by(l) {
                let m = s.max(s.load(&dst[i..]), s.load(&src[i..]));
                s.store(m, &mut dst[i..]);
            }
            for (d, &v) in dst[whole..].iter_mut().zip(&src[whole..]) {
                *d = d.max(v);
            }
        }
    }
}

/// `dst` = `x` where it equals the window maximum `max`, +0 elsewhere.
struct KeepMaxima<'a> {
    x: &'a [f32],
    max: &'a [f32],
    dst: &'a mut [f32],
}

impl Kernel for KeepMaxima<'_> {
    type Output = ();

    #[inline(always)]
    fn run<S: Simd>(self, s: S) {
        let l = S::LANES;
        let whole = self.dst.len() / l * l;
        for i in (0..whole).step_by(l) {
            let v = s.keep_equal(s.load(&self.x[i..]), s.load(&self.max[i..]));
            s.store(v, &mut self.dst[i..]);
        }
        for i in whole..self.dst.len() {
            self.dst[i] = if self.x[i] == self.max[i] {
                self.x[i]
            } else {
                0.0
            };
        }
    }
}
