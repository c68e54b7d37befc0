//! The accuracy metrics of DESIGN §5, which every backend is held to against the f32 reference
//! evaluator: the Pearson correlation (PCC) of two dense maps, and the keypoint F1 of two
//! post-NMS score maps (their top-500 pixels, no threshold and no border, a point matched when
//! the other list has one within 2 px Chebyshev). With the §5 gates, so that the tests, the
//! examples and anyone comparing a backend use one definition.

use superpoint_graph::Tensor;
use thiserror::Error;

/// §5 gate on the PCC of the pre-NMS H×W score maps.
pub const SCORE_PCC_GATE: f64 = 0.9986;
/// §5 gate on the PCC of the dense L2-normalised descriptor maps.
pub const DESCRIPTOR_PCC_GATE: f64 = 0.9993;
/// §5 gate on the keypoint F1.
pub const F1_GATE: f64 = 0.989;
/// Pixels of each post-NMS map the keypoint F1 compares.
pub const F1_TOP: usize = 500;
/// Chebyshev distance in pixels within which two keypoints match.
pub const F1_RADIUS: i64 = 2;

/// Why a metric is undefined for its arguments.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MetricsError {
    #[error("the compared arrays have {a} and {b} values: compare maps of the same shape")]
    Lengths { a: usize, b: usize },
    #[error("the PCC is undefined when an array is empty or constant (array {which} is); compare non-constant maps")]
    Constant { which: &'static str },
    #[error(
        "the keypoint F1 is undefined for an empty point list ({which}); compare non-empty maps"
    )]
    NoPoints { which: &'static str },
}

/// Pearson correlation of two equally long arrays, computed in f64.
pub fn pcc(a: &[f32], b: &[f32]) -> Result<f64, MetricsError> {
    if a.len() != b.len() {
        return Err(MetricsError::Lengths {
            a: a.len(),
            b: b.len(),
        });
    }
    let n = a.len() as f64;
    let mean = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>() / n;
    let (ma, mb) = (mean(a), mean(b));
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (&x, &y) in a.iter().zip(b) {
        let (dx, dy) = (f64::from(x) - ma, f64::from(y) - mb);
        sab += dx * dy;
        saa += dx * dx;
        sbb += dy * dy;
    }
    // An empty array's sums are NaN, a constant one's 0.
    for (s, which) in [(saa, "a"), (sbb, "b")] {
        if s.is_nan() || s <= 0.0 {
            return Err(MetricsError::Constant { which });
        }
    }
    Ok(sab / (saa.sqrt() * sbb.sqrt()))
}

/// The `(x, y)` of the first `n` pixels of a one-channel map by descending value, ties broken
/// by raster index (lower first).
pub fn top(map: &Tensor<f32>, n: usize) -> Vec<(i64, i64)> {
    let mut order: Vec<usize> = (0..map.data.len()).collect();
    order.sort_by(|&a, &b| map.data[b].total_cmp(&map.data[a]).then(a.cmp(&b)));
    let width = map.width.max(1);
    order
        .into_iter()
        .take(n)
        .map(|i| ((i % width) as i64, (i / width) as i64))
        .collect()
}

/// The F1 of a point list against a reference list: a point is matched when the other list has
/// one within [`F1_RADIUS`] px Chebyshev; precision is over `points`, recall over `reference`,
/// F1 = 2PR / (P + R) (0 when neither matches anything).
pub fn f1_of(points: &[(i64, i64)], reference: &[(i64, i64)]) -> Result<f64, MetricsError> {
    for (list, which) in [(points, "points"), (reference, "reference")] {
        if list.is_empty() {
            return Err(MetricsError::NoPoints { which });
        }
    }
    let near = |p: &(i64, i64), list: &[(i64, i64)]| {
        list.iter()
            .any(|q| (p.0 - q.0).abs().max((p.1 - q.1).abs()) <= F1_RADIUS)
    };
    let matched = |a: &[(i64, i64)], b: &[(i64, i64)]| {
        a.iter().filter(|p| near(p, b)).count() as f64 / a.len() as f64
    };
    let (precision, recall) = (matched(points, reference), matched(reference, points));
    if precision + recall == 0.0 {
        return Ok(0.0);
    }
    Ok(2.0 * precision * recall / (precision + recall))
}

/// §5 keypoint F1 of a post-NMS map against the reference's: their top-[`F1_TOP`] pixels.
pub fn keypoint_f1(map: &Tensor<f32>, reference: &Tensor<f32>) -> Result<f64, MetricsError> {
    if map.data.len() != reference.data.len() {
        return Err(MetricsError::Lengths {
            a: map.data.len(),
            b: reference.data.len(),
        });
    }
    f1_of(&top(map, F1_TOP), &top(reference, F1_TOP))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcc_matches_hand_computed_values() {
        let close = |a: &[f32], b: &[f32], want: f64| {
            let got = pcc(a, b).expect("defined");
            assert!(
                (got - want).abs() < 1e-12,
                "pcc({a:?}, {b:?}) = {got}, want {want}"
            );
        };
        close(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0], 1.0);
        close(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0], -1.0);
        // Deviations (-1, 0, 1) and (1/3, 1/3, -2/3): Σdxdy = -1, Σdx² = 2, Σdy² = 2/3
        // → -1 / √(4/3) = -√3/2.
        close(&[1.0, 2.0, 3.0], &[1.0, 1.0, 0.0], -(3f64.sqrt()) / 2.0);
        assert_eq!(
            pcc(&[1.0, 2.0], &[1.0]),
            Err(MetricsError::Lengths { a: 2, b: 1 })
        );
        assert_eq!(
            pcc(&[1.0, 2.0], &[5.0, 5.0]),
            Err(MetricsError::Constant { which: "b" })
        );
        assert_eq!(pcc(&[], &[]), Err(MetricsError::Constant { which: "a" }));
    }

    #[test]
    fn f1_matches_hand_computed_values() {
        // Points (0,0) (10,0) (20,5); reference (1,1) (14,0) (20,5): (0,0)~(1,1) and (20,5)
        // match, (10,0) and (14,0) are 4 apart and far from the rest → P = R = 2/3, F1 = 2/3.
        let d = [(0, 0), (10, 0), (20, 5)];
        let r = [(1, 1), (14, 0), (20, 5)];
        assert!((f1_of(&d, &r).expect("defined") - 2.0 / 3.0).abs() < 1e-12);
        // P = 1 (both points near (2,2)), R = 1/2 ((9,9) unmatched) → F1 = 2/3.
        let f1 = f1_of(&[(0, 0), (4, 4)], &[(2, 2), (9, 9)]).expect("defined");
        assert!((f1 - 2.0 / 3.0).abs() < 1e-12);
        // Exactly 2 px apart matches, 3 px does not.
        assert_eq!(f1_of(&[(0, 0)], &[(2, -2)]), Ok(1.0));
        assert_eq!(f1_of(&[(0, 0)], &[(3, 0)]), Ok(0.0));
        assert_eq!(
            f1_of(&[], &[(0, 0)]),
            Err(MetricsError::NoPoints { which: "points" })
        );
    }

    #[test]
    fn top_orders_by_value_then_raster_index() {
        let mut m = Tensor::zeros(1, 4, 8);
        for (x, y, v) in [(7, 3, 0.9), (3, 0, 0.5), (0, 1, 0.5), (5, 2, 0.1)] {
            m.data[y * 8 + x] = v;
        }
        assert_eq!(top(&m, 3), vec![(7, 3), (3, 0), (0, 1)]);
        assert_eq!(keypoint_f1(&m, &m), Ok(1.0));
        assert_eq!(
            keypoint_f1(&m, &Tensor::zeros(1, 4, 4)),
            Err(MetricsError::Lengths { a: 32, b: 16 })
        );
    }
}
