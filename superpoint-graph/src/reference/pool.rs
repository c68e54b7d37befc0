//! 2×2 max-pool with stride 2.

use crate::tensor::Tensor;

/// `out[c, y, x] = max(x[c, 2y + dy, 2x + dx])` over dy, dx ∈ {0, 1}. An odd last row or column
/// is dropped (validation rejects odd sizes).
pub fn max_pool2(x: &Tensor<f32>) -> Tensor<f32> {
    let (oh, ow) = (x.height / 2, x.width / 2);
    let mut out = Tensor::zeros(x.channels, oh, ow);
    for c in 0..x.channels {
        let src = x.plane(c);
        for y in 0..oh {
            for xx in 0..ow {
                let at = |dy: usize, dx: usize| src[(2 * y + dy) * x.width + 2 * xx + dx];
                out.data[(c * oh + y) * ow + xx] =
                    at(0, 0).max(at(0, 1)).max(at(1, 0)).max(at(1, 1));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_of_each_2x2_block() {
        #[rustfmt::skip]
        let x = Tensor::from_vec(2, 2, 4, vec![
            1.0, -2.0, -5.0, -6.0,
            3.0, 0.5, -7.0, -4.0,
            // channel 1
            9.0, 9.0, 0.0, 1.0,
            9.0, 9.0, 2.0, 0.0,
        ]).expect("shape");
        let out = max_pool2(&x);
        assert_eq!((out.channels, out.height, out.width), (2, 1, 2));
        assert_eq!(out.data, vec![3.0, -4.0, 9.0, 2.0]);
    }
}
