//! Pillow's BILINEAR resize of an 8-bit plane, bit for bit (`ImagingResample` in Pillow's
//! `libImaging/Resample.c`), and the conversion of the result to [0, 1] f32.
//!
//! Pillow builds, for every output pixel along one axis, a triangle filter whose support grows
//! with the downscale factor (so downscaling is antialiased), normalises its weights to sum 1 in
//! f64, turns them into 22-bit fixed point and accumulates integer products. It runs one pass
//! per axis whose size changes, rounding to u8 after each, so the order of the passes matters:
//! horizontal first, except (since Pillow 13) when the height shrinks by more than twice as many
//! pixels as the width does, when the vertical pass runs first.

use crate::tensor::Tensor;

/// Fractional bits of Pillow's fixed-point filter weights for 8-bit images.
pub const PRECISION_BITS: u32 = 22;

/// The filter taps of one output pixel along one axis: the first input index and one
/// fixed-point weight per input sample from there on (the weight is `weights[k] / 2^PRECISION_BITS`).
/// Public so the device resize uses the same coefficients (kernel-gen passes them as data).
pub struct Taps {
    pub first: usize,
    pub weights: Vec<i32>,
}

/// Pillow's triangle filter, support 1.
fn bilinear(x: f64) -> f64 {
    let x = x.abs();
    if x < 1.0 {
        1.0 - x
    } else {
        0.0
    }
}

/// Pillow's `precompute_coeffs` followed by `normalize_coeffs_8bpc`, for the whole input range.
pub fn taps(in_size: usize, out_size: usize) -> Vec<Taps> {
    let scale = in_size as f64 / out_size as f64;
    let filterscale = scale.max(1.0);
    let support = filterscale;
    // Pillow multiplies by the reciprocal rather than dividing; the last bit can differ.
    let ss = 1.0 / filterscale;
    (0..out_size)
        .map(|xx| {
            let center = (xx as f64 + 0.5) * scale;
            // C's `(int)` truncates toward zero; negative values are clamped to 0 just after.
            let xmin = ((center - support + 0.5) as i64).max(0) as usize;
            let xmax = ((center + support + 0.5) as i64).clamp(0, in_size as i64) as usize;
            let raw: Vec<f64> = (xmin..xmax.max(xmin))
                .map(|x| bilinear((x as f64 - center + 0.5) * ss))
                .collect();
            let sum: f64 = raw.iter().sum();
            let weights = raw
                .iter()
                .map(|&k| {
                    let k = if sum != 0.0 { k / sum } else { k };
                    let fixed = k * f64::from(1u32 << PRECISION_BITS);
                    // Round half away from zero, then truncate like C's `(int)`.
                    if k < 0.0 {
                        (fixed - 0.5) as i32
                    } else {
                        (fixed + 0.5) as i32
                    }
                })
                .collect();
            Taps {
                first: xmin,
                weights,
            }
        })
        .collect()
}

/// One filtered sample: the rounding bias, the fixed-point products, then Pillow's `clip8`.
/// The weights are non-negative and sum to about 2^22, so 255 · 2^22 + 2^21 fits an i32.
fn filter(samples: impl Iterator<Item = u8>, weights: &[i32]) -> u8 {
    let mut acc: i32 = 1 << (PRECISION_BITS - 1);
    for (v, &k) in samples.zip(weights) {
        acc += i32::from(v) * k;
    }
    (acc >> PRECISION_BITS).clamp(0, 255) as u8
}

/// Resizes every row of an `in_w`-wide u8 plane to `out_w` samples.
fn horizontal(data: &[u8], in_w: usize, rows: usize, out_w: usize) -> Vec<u8> {
    let taps = taps(in_w, out_w);
    let mut out = Vec::with_capacity(rows * out_w);
    for y in 0..rows {
        let row = &data[y * in_w..(y + 1) * in_w];
        for t in &taps {
            out.push(filter(row[t.first..].iter().copied(), &t.weights));
        }
    }
    out
}

/// Resizes every column of a `width`-wide plane of `in_h` rows to `out_h` samples.
fn vertical(data: &[u8], width: usize, in_h: usize, out_h: usize) -> Vec<u8> {
    let taps = taps(in_h, out_h);
    let mut out = Vec::with_capacity(out_h * width);
    for t in &taps {
        for x in 0..width {
            let column = (t.first..in_h).map(|y| data[y * width + x]);
            out.push(filter(column, &t.weights));
        }
    }
    out
}

/// Whether Pillow (13) resizes `in_w`×`in_h` to `width`×`height` with the vertical pass first:
/// when the height shrinks by more than twice as many pixels as the width does. Public so the
/// device resize rounds its intermediate after the same pass.
pub fn vertical_first(in_w: usize, in_h: usize, width: usize, height: usize) -> bool {
    let shrink_h = in_h as i64 - height as i64;
    let shrink_w = in_w as i64 - width as i64;
    shrink_h > 0 && shrink_h > 2 * shrink_w
}

/// Pillow's (13) `Image.resize((width, height), Image.BILINEAR)` of channel 0 of `input`,
/// exactly. A plane already `width`×`height` is returned unchanged (Pillow returns a copy).
pub fn pillow_bilinear(input: &Tensor<u8>, width: usize, height: usize) -> Tensor<u8> {
    let (in_w, in_h) = (input.width, input.height);
    let mut data = input.plane(0).to_vec();
    if vertical_first(in_w, in_h, width, height) {
        if height != in_h {
            data = vertical(&data, in_w, in_h, height);
        }
        if width != in_w {
            data = horizontal(&data, in_w, height, width);
        }
    } else {
        if width != in_w {
            data = horizontal(&data, in_w, in_h, width);
        }
        if height != in_h {
            data = vertical(&data, width, in_h, height);
        }
    }
    Tensor {
        channels: 1,
        height,
        width,
        data,
    }
}

/// The 8-bit plane as f32 in [0, 1]: `v / 255`.
pub fn to_unit_range(plane: &Tensor<u8>) -> Tensor<f32> {
    Tensor {
        channels: plane.channels,
        height: plane.height,
        width: plane.width,
        data: plane.data.iter().map(|&v| f32::from(v) / 255.0).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plane(width: usize, height: usize, data: Vec<u8>) -> Tensor<u8> {
        Tensor::from_vec(1, height, width, data).expect("plane shape")
    }

    #[test]
    fn same_size_is_identity() {
        let p = plane(3, 2, vec![0, 7, 255, 1, 128, 254]);
        assert_eq!(pillow_bilinear(&p, 3, 2), p);
    }

    // 4 -> 2: scale 2, support 2. Output 0: centre 1, inputs 0..3 with triangle weights
    // 0.75, 0.75, 0.25 (sum 1.75) -> 3/7, 3/7, 1/7 -> 1797559, 1797559, 599186 in 22-bit fixed
    // point. Output 1: centre 3, inputs 1..4 -> 1/7, 3/7, 3/7.
    #[test]
    fn downscale_coefficients() {
        let t = taps(4, 2);
        assert_eq!(
            (t[0].first, t[0].weights.as_slice()),
            (0, &[1797559, 1797559, 599186][..])
        );
        assert_eq!(
            (t[1].first, t[1].weights.as_slice()),
            (1, &[599186, 1797559, 1797559][..])
        );
    }

    // 2 -> 4: scale 0.5, support 1. Centres 0.25, 0.75, 1.25, 1.75 give the taps
    // [1] at 0, [0.75, 0.25] at 0, [0.25, 0.75] at 0, [1] at 1.
    #[test]
    fn upscale_coefficients() {
        let t = taps(2, 4);
        let got: Vec<(usize, Vec<i32>)> = t.into_iter().map(|t| (t.first, t.weights)).collect();
        assert_eq!(
            got,
            vec![
                (0, vec![4194304]),
                (0, vec![3145728, 1048576]),
                (0, vec![1048576, 3145728]),
                (1, vec![4194304]),
            ]
        );
    }

    // Row [10, 20, 30, 40]: (3·10 + 3·20 + 30) / 7 = 17.14 -> 17 and (20 + 3·30 + 3·40) / 7 =
    // 32.86 -> 33 (the fixed-point sums are 73999502 and 139909972, >> 22).
    #[test]
    fn downscale_4_to_2() {
        let p = plane(4, 1, vec![10, 20, 30, 40]);
        assert_eq!(pillow_bilinear(&p, 2, 1).data, vec![17, 33]);
        // The same along columns; in 2-D the vertical pass reads the horizontal result.
        let col = plane(1, 4, vec![10, 20, 30, 40]);
        assert_eq!(pillow_bilinear(&col, 1, 2).data, vec![17, 33]);
        let square = plane(4, 4, [10, 20, 30, 40].repeat(4));
        assert_eq!(pillow_bilinear(&square, 2, 2).data, vec![17, 33, 17, 33]);
    }

    // Row [0, 101]: 0, 0.75·0 + 0.25·101 = 25.25 -> 25, 0.25·0 + 0.75·101 = 75.75 -> 76, 101.
    #[test]
    fn upscale_2_to_4() {
        let p = plane(2, 1, vec![0, 101]);
        assert_eq!(pillow_bilinear(&p, 4, 1).data, vec![0, 25, 76, 101]);
        let p = plane(2, 2, vec![0, 101, 0, 101]);
        let out = pillow_bilinear(&p, 4, 4);
        assert_eq!((out.width, out.height), (4, 4));
        assert_eq!(out.data, [0, 25, 76, 101].repeat(4));
    }

    // 2×4 -> 4×2: the height shrinks by 2 pixels, the width by −2, so the vertical pass runs
    // first. Column 1 is [0, 0, 0, 4]: vertically, row 1 gets 3/7·4 = 1.71 -> 2 (fixed point
    // 9287388 >> 22); horizontally [0, 2] becomes [0, 0.5, 1.5, 2] -> [0, 1, 2, 2]. Horizontal
    // first would give [0, 0, 1, 2].
    #[test]
    fn vertical_pass_first_when_height_shrinks_most() {
        let p = plane(2, 4, vec![0, 0, 0, 0, 0, 0, 0, 4]);
        assert_eq!(pillow_bilinear(&p, 4, 2).data, vec![0, 0, 0, 0, 0, 1, 2, 2]);
        // The transposed problem grows the height, so it runs horizontally first, and gives the
        // transposed result.
        let p = plane(4, 2, vec![0, 0, 0, 0, 0, 0, 0, 4]);
        assert_eq!(pillow_bilinear(&p, 2, 4).data, vec![0, 0, 0, 1, 0, 2, 0, 2]);
    }

    #[test]
    fn saturated_input_stays_in_range() {
        let p = plane(5, 3, vec![255; 15]);
        let out = pillow_bilinear(&p, 2, 7);
        assert!(out.data.iter().all(|&v| v == 255));
    }

    #[test]
    fn unit_range() {
        let p = plane(3, 1, vec![0, 51, 255]);
        assert_eq!(to_unit_range(&p).data, vec![0.0, 0.2, 1.0]);
    }
}
