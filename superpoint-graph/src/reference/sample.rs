//! Descriptor sampling at keypoints: the SuperGlue / Hugging Face `_sample_descriptors`
//! formula, i.e. `grid_sample(mode="bilinear", align_corners=True, padding_mode="zeros")` on
//! the coarse map, followed by L2 normalisation of each sampled vector.

use crate::reference::l2norm::EPS;
use crate::tensor::{Keypoint, Tensor};

/// The coarse-grid coordinate of network-frame pixel `p` along an axis of `coarse` cells of
/// `cell` pixels: HF shifts by `cell/2 − 0.5`, divides by `coarse·cell − cell/2 − 0.5`, maps to
/// [−1, 1], and `align_corners=True` maps [−1, 1] back onto 0..=coarse−1.
fn coarse_coordinate(p: f64, coarse: usize, cell: usize) -> f64 {
    let half = cell as f64 / 2.0;
    let normalised = (p - half + 0.5) / (coarse as f64 * cell as f64 - half - 0.5) * 2.0 - 1.0;
    (normalised + 1.0) / 2.0 * (coarse as f64 - 1.0)
}

/// The coarse pixels (index `y·Wc + x`) that keypoint `kp` samples on an `hc`×`wc` map, with
/// their bilinear weights; corners outside the map are left out (they contribute zero).
pub fn sample_taps(
    kp: &Keypoint,
    hc: usize,
    wc: usize,
    cell: usize,
) -> impl Iterator<Item = (usize, f64)> {
    let u = coarse_coordinate(f64::from(kp.x), wc, cell);
    let v = coarse_coordinate(f64::from(kp.y), hc, cell);
    let (x0, y0) = (u.floor(), v.floor());
    let (fx, fy) = (u - x0, v - y0);
    [
        (x0, y0, (1.0 - fx) * (1.0 - fy)),
        (x0 + 1.0, y0, fx * (1.0 - fy)),
        (x0, y0 + 1.0, (1.0 - fx) * fy),
        (x0 + 1.0, y0 + 1.0, fx * fy),
    ]
    .into_iter()
    .filter(move |&(cx, cy, _)| cx >= 0.0 && cy >= 0.0 && cx < wc as f64 && cy < hc as f64)
    .map(move |(cx, cy, weight)| (cy as usize * wc + cx as usize, weight))
}

/// Appends `row / max(‖row‖₂, 1e-12)` to `out` as f32.
pub fn push_normalized(row: &[f64], out: &mut Vec<f32>) {
    let norm = row.iter().map(|r| r * r).sum::<f64>().sqrt().max(EPS);
    out.extend(row.iter().map(|r| (r / norm) as f32));
}

/// N×C row-major descriptors: `map` (C×Hc×Wc, one cell per `cell`×`cell` pixels) sampled
/// bilinearly at each keypoint (corners outside the map contribute zero), each row divided by
/// `max(‖row‖₂, 1e-12)`. Computed in f64.
pub fn sample_descriptors(map: &Tensor<f32>, keypoints: &[Keypoint], cell: usize) -> Vec<f32> {
    let (c_n, hc, wc) = (map.channels, map.height, map.width);
    let mut out = Vec::with_capacity(keypoints.len() * c_n);
    let mut row = vec![0.0f64; c_n];
    for kp in keypoints {
        row.fill(0.0);
        for (p, weight) in sample_taps(kp, hc, wc, cell) {
            for (c, r) in row.iter_mut().enumerate() {
                *r += weight * f64::from(map.data[c * hc * wc + p]);
            }
        }
        push_normalized(&row, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// C = 3, Hc = Wc = 2 (a 16×16 frame with cell 8). The vectors at (y, x) are
    /// (0,1,0) at (0,0), (0,0,1) at (0,1), (1,0,0) at (1,0) and (1,2,2) at (1,1).
    fn map() -> Tensor<f32> {
        #[rustfmt::skip]
        let data = vec![
            0.0, 0.0, 1.0, 1.0, // c0
            1.0, 0.0, 0.0, 2.0, // c1
            0.0, 1.0, 0.0, 2.0, // c2
        ];
        Tensor::from_vec(3, 2, 2, data).expect("shape")
    }

    fn kp(x: u32, y: u32) -> Keypoint {
        Keypoint { x, y, score: 1.0 }
    }

    // u = (x − 3.5)·(Wc − 1)/(8·Wc − 4.5) = (x − 3.5)/11.5, so pixel 15 lands exactly on coarse
    // pixel 1 and pixel 9 at 11/23 between coarse pixels 0 and 1.
    #[test]
    fn on_a_coarse_pixel_centre() {
        let d = sample_descriptors(&map(), &[kp(15, 15)], 8);
        // (1, 2, 2) / 3
        let expected = [1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0];
        for (g, e) in d.iter().zip(expected) {
            assert!((g - e).abs() < 1e-7, "{d:?}");
        }
    }

    #[test]
    fn between_coarse_pixels() {
        // Row y = 1 (v = 1): 12/23 of (1, 0, 0) plus 11/23 of (1, 2, 2), normalised.
        let d = sample_descriptors(&map(), &[kp(9, 15)], 8);
        let raw = [23.0f64, 22.0, 22.0];
        let norm = raw.iter().map(|v| v * v).sum::<f64>().sqrt();
        for (g, r) in d.iter().zip(raw) {
            assert!((f64::from(*g) - r / norm).abs() < 1e-7, "{d:?}");
        }
    }

    #[test]
    fn rows_are_unit_or_zero() {
        let keypoints = [kp(0, 0), kp(3, 12), kp(15, 0), kp(7, 7)];
        let d = sample_descriptors(&map(), &keypoints, 8);
        assert_eq!(d.len(), 4 * 3);
        for row in d.chunks(3) {
            let n: f32 = row.iter().map(|v| v * v).sum::<f32>().sqrt();
            assert!((n - 1.0).abs() < 1e-6, "{row:?}");
        }
        let zero = Tensor::zeros(3, 2, 2);
        assert_eq!(sample_descriptors(&zero, &[kp(9, 9)], 8), vec![0.0; 3]);
    }
}
