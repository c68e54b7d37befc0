//! Descriptor sampling at the keypoints: bilinear interpolation of the dense channels-last
//! descriptor map with the SuperGlue / Hugging Face formula (DESIGN §2 step 7; align-corners on
//! the coarse grid, zero outside), then L2 normalisation of each sampled vector. The taps and the
//! normalisation are the reference's; each corner's channels are one contiguous read.

use superpoint_graph::reference::sample::{push_normalized, sample_taps};
use superpoint_graph::Keypoint;

use super::tensor::Hwc;

/// N×C row-major descriptors of `map` at `keypoints`.
pub(crate) fn sample_descriptors(map: &Hwc, keypoints: &[Keypoint], cell: usize) -> Vec<f32> {
    let (c, hc, wc) = (map.channels(), map.height(), map.width());
    let mut out = Vec::with_capacity(keypoints.len() * c);
    let mut row = vec![0.0f64; c];
    for kp in keypoints {
        row.fill(0.0);
        for (p, weight) in sample_taps(kp, hc, wc, cell) {
            for (r, &d) in row.iter_mut().zip(&map.data()[p * c..(p + 1) * c]) {
                *r += weight * f64::from(d);
            }
        }
        push_normalized(&row, &mut out);
    }
    out
}
