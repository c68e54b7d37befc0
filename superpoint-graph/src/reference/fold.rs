//! Dustbin drop and depth-to-space fold of the detector's cell map.

use crate::tensor::Tensor;

/// Drops the last channel of a (cell² + 1)×Hc×Wc map and moves channel `k` of cell (cy, cx) to
/// pixel (cell·cy + k / cell, cell·cx + k % cell) of a 1×(cell·Hc)×(cell·Wc) map.
pub fn dustbin_fold(x: &Tensor<f32>, cell: usize) -> Tensor<f32> {
    let (h, w) = (x.height * cell, x.width * cell);
    let mut out = Tensor::zeros(1, h, w);
    for k in 0..(cell * cell).min(x.channels) {
        let src = x.plane(k);
        for cy in 0..x.height {
            for cx in 0..x.width {
                let (y, xx) = (cell * cy + k / cell, cell * cx + k % cell);
                out.data[y * w + xx] = src[cy * x.width + cx];
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // cell 2, Hc = 1, Wc = 2; channel k of cell cx holds 10k + cx. Channel 4 is the dustbin.
    #[test]
    fn index_mapping() {
        let data = (0..5)
            .flat_map(|k| (0..2).map(move |cx| (10 * k + cx) as f32))
            .collect();
        let x = Tensor::from_vec(5, 1, 2, data).expect("shape");
        let out = dustbin_fold(&x, 2);
        assert_eq!((out.channels, out.height, out.width), (1, 2, 4));
        assert_eq!(out.data, vec![0.0, 10.0, 1.0, 11.0, 20.0, 30.0, 21.0, 31.0]);
    }
}
