//! Softmax over the channel axis.

use crate::tensor::Tensor;

/// At every pixel, `out[c] = exp(x[c] − m) / Σ_j exp(x[j] − m)` with `m` the channel maximum,
/// computed in f64.
pub fn softmax_channels(x: &Tensor<f32>) -> Tensor<f32> {
    let n = x.height * x.width;
    let mut out = Tensor::zeros(x.channels, x.height, x.width);
    let mut e = vec![0.0f64; x.channels];
    for p in 0..n {
        let m = (0..x.channels)
            .map(|c| f64::from(x.data[c * n + p]))
            .fold(f64::NEG_INFINITY, f64::max);
        for (c, ec) in e.iter_mut().enumerate() {
            *ec = (f64::from(x.data[c * n + p]) - m).exp();
        }
        let sum: f64 = e.iter().sum();
        for (c, ec) in e.iter().enumerate() {
            out.data[c * n + p] = (ec / sum) as f32;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Pixel 0: exp of [0, ln 2, ln 3] is [1, 2, 3] -> [1/6, 1/3, 1/2]. Pixel 1: equal large
    // logits split evenly (no overflow thanks to the max subtraction).
    #[test]
    fn known_values() {
        let (l2, l3) = (2f32.ln(), 3f32.ln());
        let x = Tensor::from_vec(3, 1, 2, vec![0.0, 1000.0, l2, 1000.0, l3, -f32::INFINITY])
            .expect("shape");
        let out = softmax_channels(&x);
        let expected = [1.0 / 6.0, 0.5, 1.0 / 3.0, 0.5, 0.5, 0.0];
        for (got, want) in out.data.iter().zip(expected) {
            assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        }
    }
}
