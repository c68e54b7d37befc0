//! Descriptor sampling at the keypoints: bilinear interpolation of the dense channels-last
//! descriptor map with the SuperGlue / Hugging Face formula (DESIGN §2 step 7; align-corners on
//! the coarse grid, zero outside), then L2 normalisation of each sampled vector. The arithmetic
//! is the reference's, in f64; each corner's channels are one contiguous read.

use superpoint_graph::reference::l2norm::EPS;
use superpoint_graph::Keypoint;

use super::tensor::Hwc;

/// The coarse-grid coordinate of full-resolution pixel coordinate `p`.
fn coarse_coordinate(p: f64, coarse: usize, cell: usize) -> f64 {
    let half = cell as f64 / 2.0;
    let normalised = (p - half + 0.5) / (coarse as f64 * cell as f64 - half - 0.5) * 2.0 - 1.0;
    (normalised + 1.0) / 2.0 * (coarse as f64 - 1.0)
}

/// N×C row-major descriptors of `map` at `keypoints`.
pub(crate) fn sample_descriptors(map: &Hwc, keypoints: &[Keypoint], cell: usize) -> Vec<f32> {
    let (c, hc, wc) = (map.channels(), map.height(), map.width());
    let mut out = Vec::with_capacity(keypoints.len() * c);
    let mut row = vec![0.0f64; c];
    for kp in keypoints {
        let u = coarse_coordinate(f64::from(kp.x), wc, cell);
        let v = coarse_coordinate(f64::from(kp.y), hc, cell);
        let (x0, y0) = (u.floor(), v.floor());
        let (fx, fy) = (u - x0, v - y0);
        let corners = [
            (x0, y0, (1.0 - fx) * (1.0 - fy)),
            (x0 + 1.0, y0, fx * (1.0 - fy)),
            (x0, y0 + 1.0, (1.0 - fx) * fy),
            (x0 + 1.0, y0 + 1.0, fx * fy),
        ];
        row.fill(0.0);
        for (cx, cy, weight) in corners {
            if !(cx >= 0.0 && cy >= 0.0 && cx < wc as f64 && cy < hc as f64) {
                continue;
            }
            let p = cy as usize * wc + cx as usize;
            for (r, &d) in row.iter_mut().zip(&map.data()[p * c..(p + 1) * c]) {
                *r += weight * f64::from(d);
            }
        }
        let norm = row.iter().map(|r| r * r).sum::<f64>().sqrt().max(EPS);
        out.extend(row.iter().map(|r| (r / norm) as f32));
    }
    out
}
