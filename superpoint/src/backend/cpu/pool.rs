//! 2×2 max-pooling (stride 2) on channels-last tensors, in parallel over output rows. (The
//! network's pools are fused into the Winograd convolutions before them; this is the general
//! path.)

use rayon::prelude::*;

use super::isa::Isa;
use super::simd::{dispatch, Kernel, Simd};
use super::tensor::Hwc;

/// The 2×2 max-pool of `x` (an odd trailing row or column is dropped, as in the reference).
pub(crate) fn max_pool2(isa: Isa, x: &Hwc) -> Hwc {
    let (c, oh, ow) = (x.channels(), x.height() / 2, x.width() / 2);
    let mut out = Hwc::for_overwrite(c, oh, ow);
    if out.data().is_empty() {
        return out;
    }
    out.data_mut()
        .par_chunks_mut(ow * c)
        .enumerate()
        .for_each(|(y, out_row)| {
            dispatch(
                isa,
                Row {
                    top: x.row(2 * y),
                    bottom: x.row(2 * y + 1),
                    c,
                    out_row,
                },
            )
        });
    out
}

/// One output row from its two input rows.
struct Row<'a> {
    top: &'a [f32],
    bottom: &'a [f32],
    c: usize,
    out_row: &'a mut [f32],
}

impl Kernel for Row<'_> {
    type Output = ();

    #[inline(always)]
    fn run<S: Simd>(self, s: S) {
        let (c, l) = (self.c, S::LANES);
        for (ox, o) in self.out_row.chunks_exact_mut(c).enumerate() {
            let (left, right) = (2 * ox * c, (2 * ox + 1) * c);
            for first in (0..c).step_by(l) {
                let n = (c - first).min(l);
                let at = |row: &[f32], start: usize| {
                    let v = &row[start + first..start + first + n];
                    if n == l {
                        s.load(v)
                    } else {
                        s.load_partial(v)
                    }
                };
                let top = s.max(at(self.top, left), at(self.top, right));
                let bottom = s.max(at(self.bottom, left), at(self.bottom, right));
                let v = s.max(top, bottom);
                if n == l {
                    s.store(v, &mut o[first..]);
                } else {
                    s.store_partial(v, &mut o[first..first + n]);
                }
            }
        }
    }
}
