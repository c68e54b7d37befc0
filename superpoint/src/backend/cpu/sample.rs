//! Descriptor sampling at the keypoints: bilinear interpolation of the dense channels-last
//! descriptor map with the SuperGlue / Hugging Face formula (DESIGN §2 step 7; align-corners on
//! the coarse grid, zero outside), then L2 normalisation of each sampled vector. The taps and the
//! normalisation are the reference's; each corner's channels are one contiguous read, and the
//! keypoints are split over the cores, their channel loops compiled for the CPU's instruction
//! set.

use rayon::prelude::*;
use superpoint_graph::reference::sample::{push_normalized, sample_taps};
use superpoint_graph::Keypoint;

use super::isa::Isa;
use super::simd::compiled_for;
use super::tensor::Hwc;

/// Keypoints per parallel task.
const KEYPOINTS_PER_TASK: usize = 64;

/// N×C row-major descriptors of `map` at `keypoints`.
pub(crate) fn sample_descriptors(
    isa: Isa,
    map: &Hwc,
    keypoints: &[Keypoint],
    cell: usize,
) -> Vec<f32> {
    let (c, hc, wc) = (map.channels(), map.height(), map.width());
    let mut out = vec![0.0f32; keypoints.len() * c];
    if out.is_empty() {
        return out;
    }
    out.par_chunks_mut(KEYPOINTS_PER_TASK * c)
        .zip(keypoints.par_chunks(KEYPOINTS_PER_TASK))
        .for_each(|(rows, kps)| {
            compiled_for(
                isa,
                #[inline(always)]
                || {
                    let mut row = vec![0.0f64; c];
                    let mut normalized = Vec::with_capacity(c);
                    for (dst, kp) in rows.chunks_exact_mut(c).zip(kps) {
                        row.fill(0.0);
                        for (p, weight) in sample_taps(kp, hc, wc, cell) {
                            for (r, &d) in row.iter_mut().zip(&map.data()[p * c..(p + 1) * c]) {
                                *r += weight * f64::from(d);
                            }
                        }
                        normalized.clear();
                        push_normalized(&row, &mut normalized);
                        dst.copy_from_slice(&normalized);
                    }
                },
            )
        });
    out
}
