//! Non-maximum suppression as two running maxima: the maximum over a clipped (2r+1)×(2r+1)
//! window is the column maximum (over the clipped rows) of the row maxima (over the clipped
//! columns). `max` is exact, so the result is bit-identical to the reference's direct window
//! scan: a value is kept iff it equals its window maximum, every tie is kept, the rest is 0.

use rayon::prelude::*;

use super::tensor::Hwc;

/// Rows per parallel task.
const ROWS_PER_TASK: usize = 8;

/// NMS with `radius` over every channel of `x`.
pub(crate) fn nms(x: &Hwc, radius: usize) -> Hwc {
    let (c, h, w) = (x.channels(), x.height(), x.width());
    let mut out = Hwc::zeros(c, h, w);
    if out.data().is_empty() {
        return out;
    }
    let pitch = w * c;
    // Pass 1: the maximum over the clipped columns x - r ..= x + r of each row.
    let mut row_max = vec![0.0f32; h * pitch];
    row_max
        .par_chunks_mut(ROWS_PER_TASK * pitch)
        .enumerate()
        .for_each(|(b, rows)| {
            for (j, dst) in rows.chunks_exact_mut(pitch).enumerate() {
                let src = x.row(b * ROWS_PER_TASK + j);
                for xx in 0..w {
                    let (lo, hi) = (xx.saturating_sub(radius), (xx + radius + 1).min(w));
                    let d = &mut dst[xx * c..(xx + 1) * c];
                    d.fill(f32::NEG_INFINITY);
                    for px in src[lo * c..hi * c].chunks_exact(c) {
                        for (m, &v) in d.iter_mut().zip(px) {
                            *m = m.max(v);
                        }
                    }
                }
            }
        });
    // Pass 2: the maximum of those over the clipped rows y - r ..= y + r, then the comparison.
    out.data_mut()
        .par_chunks_mut(ROWS_PER_TASK * pitch)
        .enumerate()
        .for_each(|(b, rows)| {
            let mut window = vec![0.0f32; pitch];
            for (j, dst) in rows.chunks_exact_mut(pitch).enumerate() {
                let y = b * ROWS_PER_TASK + j;
                let (lo, hi) = (y.saturating_sub(radius), (y + radius + 1).min(h));
                window.fill(f32::NEG_INFINITY);
                for r in lo..hi {
                    for (m, &v) in window.iter_mut().zip(&row_max[r * pitch..(r + 1) * pitch]) {
                        *m = m.max(v);
                    }
                }
                for ((o, &v), &m) in dst.iter_mut().zip(x.row(y)).zip(&window) {
                    if v == m {
                        *o = v;
                    }
                }
            }
        });
    out
}
