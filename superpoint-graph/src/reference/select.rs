//! Keypoint selection from the post-NMS score map.

use std::cmp::Ordering;

use crate::tensor::{Keypoint, Tensor};

/// The pixels of channel 0 with score `> threshold` (strictly) and `border ≤ y < H − border`,
/// `border ≤ x < W − border`, in descending score order, ties by ascending raster index
/// `y·W + x`, cut to the first `max_keypoints` (any negative value keeps all).
pub fn select_keypoints(
    map: &Tensor<f32>,
    threshold: f32,
    border: usize,
    max_keypoints: i64,
) -> Vec<Keypoint> {
    let (h, w) = (map.height, map.width);
    let scores = map.plane(0);
    let mut keypoints = Vec::new();
    for y in border..h.saturating_sub(border) {
        for x in border..w.saturating_sub(border) {
            let score = scores[y * w + x];
            if score > threshold {
                keypoints.push(Keypoint {
                    x: x as u32,
                    y: y as u32,
                    score,
                });
            }
        }
    }
    order_and_cut(&mut keypoints, |k| k, max_keypoints);
    keypoints
}

/// Step 5 of DESIGN §2 on candidates in any order (items carrying a keypoint, e.g. with the
/// device slot it came from): descending score, ties by ascending raster index (for pixels of
/// one frame, `(y, x)` order is raster order), then the first `max_keypoints` (any negative
/// value keeps all). No candidate is NaN (NaN > threshold is false).
pub fn order_and_cut<T>(
    items: &mut Vec<T>,
    keypoint: impl Fn(&T) -> &Keypoint,
    max_keypoints: i64,
) {
    items.sort_by(|a, b| {
        let (a, b) = (keypoint(a), keypoint(b));
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(Ordering::Equal)
            .then((a.y, a.x).cmp(&(b.y, b.x)))
    });
    if let Ok(n) = usize::try_from(max_keypoints) {
        items.truncate(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An 8×8 map; with border 2 the candidates are 2 ≤ x, y < 6.
    fn map() -> Tensor<f32> {
        let mut m = Tensor::zeros(1, 8, 8);
        for (x, y, s) in [
            (2, 2, 0.5),
            (5, 5, 0.5),
            (2, 5, 0.5),
            (3, 4, 0.9),
            (1, 3, 0.99),   // x < border
            (6, 3, 0.8),    // x ≥ W − border
            (3, 6, 0.95),   // y ≥ H − border
            (4, 2, 0.1),    // equal to the threshold
            (4, 3, 0.1001), // just above it
        ] {
            m.data[y * 8 + x] = s;
        }
        m
    }

    fn xys(k: &[Keypoint]) -> Vec<(u32, u32)> {
        k.iter().map(|k| (k.x, k.y)).collect()
    }

    #[test]
    fn order_ties_border_threshold() {
        let all = select_keypoints(&map(), 0.1, 2, -1);
        // Ties of 0.5 in raster order: (2,2) = 18, (2,5) = 42, (5,5) = 45.
        assert_eq!(xys(&all), vec![(3, 4), (2, 2), (2, 5), (5, 5), (4, 3)]);
        assert_eq!(all[0].score, 0.9);
        assert_eq!(
            xys(&select_keypoints(&map(), 0.1, 2, 2)),
            vec![(3, 4), (2, 2)]
        );
        assert!(select_keypoints(&map(), 0.1, 2, 0).is_empty());
        assert_eq!(select_keypoints(&map(), 0.1, 2, 100).len(), 5);
    }

    #[test]
    fn order_and_cut_breaks_ties_by_raster_index_in_any_input_order() {
        let k = |x, y, score| Keypoint { x, y, score };
        let mut shuffled = vec![
            k(5, 5, 0.5),
            k(3, 4, 0.9),
            k(2, 5, 0.5),
            k(2, 2, 0.5),
            k(4, 3, 0.1001),
        ];
        order_and_cut(&mut shuffled, |k| k, 4);
        assert_eq!(xys(&shuffled), vec![(3, 4), (2, 2), (2, 5), (5, 5)]);
    }

    #[test]
    fn border_zero_and_too_wide() {
        let all = select_keypoints(&map(), 0.1, 0, -1);
        assert_eq!(xys(&all)[..3], [(1, 3), (3, 6), (3, 4)]);
        assert_eq!(all.len(), 8);
        assert!(select_keypoints(&map(), 0.1, 4, -1).is_empty());
        assert!(select_keypoints(&map(), 0.1, 9, -1).is_empty());
    }
}
