//! 2-D convolution, stride 1, explicit zero padding, bias and optional ReLU, accumulated in f64.
//!
//! The loops are the textbook ones; their order (per output channel, a whole f64 output plane
//! is accumulated over input channels, and for each output row over the kernel taps) only
//! keeps the working rows in cache, it does not change what is computed.

use crate::tensor::Tensor;
use crate::weights::ConvWeights;

/// Channel `c` of `x` surrounded by `pad` zero rows and columns:
/// `(x.height + 2 pad) × (x.width + 2 pad)`.
fn padded_plane(x: &Tensor<f32>, c: usize, pad: usize) -> Vec<f32> {
    let pw = x.width + 2 * pad;
    let mut out = vec![0.0; (x.height + 2 * pad) * pw];
    for (y, row) in x.plane(c).chunks_exact(x.width.max(1)).enumerate() {
        let start = (y + pad) * pw + pad;
        out[start..start + x.width].copy_from_slice(row);
    }
    out
}

/// `out[o, y, x] = relu?(bias[o] + Σ_i Σ_ky Σ_kx w[o, i, ky, kx] · x[i, y + ky − pad, x + kx − pad])`
/// with `x` zero outside the input. The output is `(H + 2 pad − k + 1) × (W + 2 pad − k + 1)`.
pub fn conv2d(x: &Tensor<f32>, w: &ConvWeights, pad: usize, relu: bool) -> Tensor<f32> {
    let k = w.kernel;
    let (ph, pw) = (x.height + 2 * pad, x.width + 2 * pad);
    let (oh, ow) = ((ph + 1).saturating_sub(k), (pw + 1).saturating_sub(k));
    let inputs: Vec<Vec<f32>> = (0..w.in_channels.min(x.channels))
        .map(|c| padded_plane(x, c, pad))
        .collect();
    let mut out = Tensor::zeros(w.out_channels, oh, ow);
    let mut acc = vec![0.0f64; oh * ow];
    for (o, out_plane) in out.data.chunks_exact_mut((oh * ow).max(1)).enumerate() {
        acc.fill(f64::from(w.bias[o]));
        for (i, input) in inputs.iter().enumerate() {
            for (y, acc_row) in acc.chunks_exact_mut(ow.max(1)).enumerate() {
                for ky in 0..k {
                    let in_row = &input[(y + ky) * pw..(y + ky + 1) * pw];
                    for kx in 0..k {
                        let wv = f64::from(w.at(o, i, ky, kx));
                        for (a, &v) in acc_row.iter_mut().zip(&in_row[kx..kx + ow]) {
                            *a += wv * f64::from(v);
                        }
                    }
                }
            }
        }
        for (dst, &a) in out_plane.iter_mut().zip(&acc) {
            let v = a as f32;
            *dst = if relu { v.max(0.0) } else { v };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights(
        out: usize,
        inp: usize,
        kernel: usize,
        weight: Vec<f32>,
        bias: Vec<f32>,
    ) -> ConvWeights {
        ConvWeights {
            out_channels: out,
            in_channels: inp,
            kernel,
            weight,
            bias,
        }
    }

    /// 1..=16 in a 4×4 plane.
    fn ramp() -> Tensor<f32> {
        Tensor::from_vec(1, 4, 4, (1..=16).map(|v| v as f32).collect()).expect("shape")
    }

    // Kernel [[1, 2, 0], [0, 0, 0], [0, 0, -1]], bias 0.5, pad 1: out[y][x] = x[y-1][x-1]
    // + 2·x[y-1][x] − x[y+1][x+1] + 0.5 with zeros outside (cross-correlation, as in PyTorch).
    const EXPECTED: [f32; 16] = [
        -5.5, -6.5, -7.5, 0.5, //
        -7.5, -5.5, -3.5, 11.5, //
        -3.5, 2.5, 4.5, 23.5, //
        18.5, 29.5, 32.5, 35.5,
    ];

    #[test]
    fn conv3x3_by_hand() {
        let w = weights(
            1,
            1,
            3,
            vec![1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0],
            vec![0.5],
        );
        let out = conv2d(&ramp(), &w, 1, false);
        assert_eq!((out.channels, out.height, out.width), (1, 4, 4));
        assert_eq!(out.data, EXPECTED);
        let relu = conv2d(&ramp(), &w, 1, true);
        assert_eq!(relu.data, EXPECTED.map(|v| v.max(0.0)));
    }

    // Two inputs, two outputs, 1×1: out0 = x0 + 0.5·x1, out1 = −x0 + 1.
    #[test]
    fn conv1x1_mixes_channels() {
        let x = Tensor::from_vec(2, 2, 2, vec![1.0, 2.0, 3.0, 4.0, 10.0, 20.0, 30.0, 40.0])
            .expect("shape");
        let w = weights(2, 2, 1, vec![1.0, 0.5, -1.0, 0.0], vec![0.0, 1.0]);
        let out = conv2d(&x, &w, 0, false);
        assert_eq!(out.data, vec![6.0, 12.0, 18.0, 24.0, 0.0, -1.0, -2.0, -3.0]);
    }
}
