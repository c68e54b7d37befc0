//! L2 normalisation over the channel axis.

use crate::tensor::Tensor;

/// The smallest norm divided by, as in `torch.nn.functional.normalize`.
pub const EPS: f64 = 1e-12;

/// At every pixel, `out[c] = x[c] / max(‖x[·]‖₂, 1e-12)`, the norm summed in f64.
pub fn l2_normalize_channels(x: &Tensor<f32>) -> Tensor<f32> {
    let n = x.height * x.width;
    let mut out = Tensor::zeros(x.channels, x.height, x.width);
    for p in 0..n {
        let norm = (0..x.channels)
            .map(|c| f64::from(x.data[c * n + p]).powi(2))
            .sum::<f64>()
            .sqrt()
            .max(EPS);
        for c in 0..x.channels {
            out.data[c * n + p] = (f64::from(x.data[c * n + p]) / norm) as f32;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Pixel 0 is (3, 4) -> (0.6, 0.8); pixel 1 is zero and stays zero (the 1e-12 floor).
    #[test]
    fn unit_norm_and_zero() {
        let x = Tensor::from_vec(2, 1, 2, vec![3.0, 0.0, 4.0, 0.0]).expect("shape");
        assert_eq!(l2_normalize_channels(&x).data, vec![0.6, 0.0, 0.8, 0.0]);
    }
}
