//! Single-pass non-maximum suppression on a score map.

use crate::tensor::Tensor;

/// Keeps `x[c, y, x]` iff it equals the maximum of the (2r+1)×(2r+1) window centred on it,
/// the window clipped at the edges; every pixel tied with the maximum is kept. Suppressed
/// pixels become 0. Radius 0 returns the map unchanged.
pub fn nms(x: &Tensor<f32>, radius: usize) -> Tensor<f32> {
    let (h, w) = (x.height, x.width);
    let mut out = Tensor::zeros(x.channels, h, w);
    for c in 0..x.channels {
        let src = x.plane(c);
        for y in 0..h {
            let rows = y.saturating_sub(radius)..(y + radius + 1).min(h);
            for xx in 0..w {
                let cols = xx.saturating_sub(radius)..(xx + radius + 1).min(w);
                let window_max = rows
                    .clone()
                    .flat_map(|wy| src[wy * w + cols.start..wy * w + cols.end].iter().copied())
                    .fold(f32::NEG_INFINITY, f32::max);
                let v = src[y * w + xx];
                if v == window_max {
                    out.data[(c * h + y) * w + xx] = v;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[rustfmt::skip]
    fn map() -> Tensor<f32> {
        Tensor::from_vec(1, 3, 4, vec![
            0.1, 0.5, 0.5, 0.2,
            0.3, 0.1, 0.0, 0.4,
            0.9, 0.2, 0.3, 0.45,
        ]).expect("shape")
    }

    #[test]
    fn radius_zero_is_identity() {
        assert_eq!(nms(&map(), 0), map());
    }

    // Radius 1: the tied 0.5s both survive; 0.9 and 0.45 are maxima of windows clipped at the
    // corner; 0.4 sees 0.5 diagonally above-left and is suppressed.
    #[test]
    fn ties_and_edges() {
        #[rustfmt::skip]
        let expected = vec![
            0.0, 0.5, 0.5, 0.0,
            0.0, 0.0, 0.0, 0.0,
            0.9, 0.0, 0.0, 0.45,
        ];
        assert_eq!(nms(&map(), 1).data, expected);
    }

    // A window larger than the map keeps only the global maximum.
    #[test]
    fn large_radius() {
        let mut expected = vec![0.0; 12];
        expected[8] = 0.9;
        assert_eq!(nms(&map(), 10).data, expected);
    }
}
