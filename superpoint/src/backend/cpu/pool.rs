//! 2×2 max-pooling (stride 2) on channels-last tensors, in parallel over output rows.

use rayon::prelude::*;

use super::tensor::Hwc;

/// The 2×2 max-pool of `x` (an odd trailing row or column is dropped, as in the reference).
pub(crate) fn max_pool2(x: &Hwc) -> Hwc {
    let (c, oh, ow) = (x.channels(), x.height() / 2, x.width() / 2);
    let mut out = Hwc::for_overwrite(c, oh, ow);
    if out.data().is_empty() {
        return out;
    }
    out.data_mut()
        .par_chunks_mut(ow * c)
        .enumerate()
        .for_each(|(y, out_row)| {
            let (top, bottom) = (x.row(2 * y), x.row(2 * y + 1));
            for (ox, o) in out_row.chunks_exact_mut(c).enumerate() {
                let (l, r) = (2 * ox * c, (2 * ox + 1) * c);
                let (a, b) = (&top[l..l + c], &top[r..r + c]);
                let (d, e) = (&bottom[l..l + c], &bottom[r..r + c]);
                for (((o, &a), &b), (&d, &e)) in o.iter_mut().zip(a).zip(b).zip(d.iter().zip(e)) {
                    *o = a.max(b).max(d).max(e);
                }
            }
        });
    out
}
