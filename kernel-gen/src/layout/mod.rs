//! The device layouts the plan assigns, and the host-side packing into and out of them.
//!
//! Activations: channels-last, a (pixels padded to 32) × (channels padded to 32) matrix of bf16
//! tiles, pixel (y, x) being row y·W + x; tile (pixel tile p, channel tile c) is DRAM page
//! p·channel_tiles + c, each tile in the 4-face layout. Padding rows and columns are zero when the
//! host writes a tensor; kernels never read padding rows (they check the pixel index), and a
//! padding column of an output holds `relu?(0)` only if the weights there are zero (they are).
//!
//! Convolution weights: a K × out matrix of tiles (K = k²·in, row `(ky·k + kx)·in + c`, padded
//! to 32), page `kt·out_tiles + ot`. Bias: one tile per output tile whose 32 rows all hold the
//! bias, so a copy into DST starts every row of the accumulation at the bias.
//!
//! The other layouts (image plane, score maps, candidates, descriptor rows) and the rule giving
//! each op's output layout are in [`tensor`]; their host packing is in [`host`].

pub mod host;
pub mod tensor;

pub use tensor::{DeviceTensor, LayoutError, Part};

use superpoint_graph::{ConvWeights, Tensor};

/// The tile and bf16 helpers are tt-runtime's, so the host packing here and the runtime agree.
pub use tt_runtime::host::{bf16_to_f32, f32_to_bf16, face_index};

/// Tiles needed for `n` rows or columns.
pub fn tiles(n: usize) -> usize {
    n.div_ceil(32)
}

/// The shape of a channels-last tiled activation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActivationShape {
    pub channels: usize,
    pub height: usize,
    pub width: usize,
}

impl ActivationShape {
    /// Pixel tiles (rows of tiles).
    pub fn pixel_tiles(&self) -> usize {
        tiles(self.height * self.width)
    }

    /// Channel tiles (columns of tiles).
    pub fn channel_tiles(&self) -> usize {
        tiles(self.channels)
    }

    /// Bytes of the whole bf16 tensor.
    pub fn bytes(&self) -> usize {
        self.pixel_tiles() * self.channel_tiles() * 2048
    }

    /// Byte offset of element (pixel, channel).
    fn offset(&self, pixel: usize, channel: usize) -> usize {
        let page = (pixel / 32) * self.channel_tiles() + channel / 32;
        (page * 1024 + face_index(pixel % 32, channel % 32)) * 2
    }
}

/// A planar tensor in the activation layout, as little-endian bf16 bytes.
pub fn pack_activation(t: &Tensor<f32>) -> Vec<u8> {
    let shape = ActivationShape {
        channels: t.channels,
        height: t.height,
        width: t.width,
    };
    let mut out = vec![0u8; shape.bytes()];
    let pixels = t.height * t.width;
    for c in 0..t.channels {
        for (p, v) in t.plane(c).iter().enumerate().take(pixels) {
            let at = shape.offset(p, c);
            out[at..at + 2].copy_from_slice(&f32_to_bf16(*v).to_le_bytes());
        }
    }
    out
}

/// The planar tensor held in activation-layout bytes; `None` when the length does not match.
pub fn unpack_activation(bytes: &[u8], shape: ActivationShape) -> Option<Tensor<f32>> {
    if bytes.len() != shape.bytes() {
        return None;
    }
    let pixels = shape.height * shape.width;
    let mut data = Vec::with_capacity(shape.channels * pixels);
    for c in 0..shape.channels {
        for p in 0..pixels {
            let at = shape.offset(p, c);
            data.push(bf16_to_f32(u16::from_le_bytes([bytes[at], bytes[at + 1]])));
        }
    }
    Tensor::from_vec(shape.channels, shape.height, shape.width, data)
}

/// Writes `value` at (row, col) of a row-major grid of tiles `col_tiles` wide.
fn put(out: &mut [u8], col_tiles: usize, row: usize, col: usize, value: f32) {
    let page = (row / 32) * col_tiles + col / 32;
    let at = (page * 1024 + face_index(row % 32, col % 32)) * 2;
    out[at..at + 2].copy_from_slice(&f32_to_bf16(value).to_le_bytes());
}

/// K tiles of a convolution: k²·in rows padded to 32.
pub fn conv_k_tiles(w_in: usize, kernel: usize) -> usize {
    tiles(kernel * kernel * w_in)
}

/// The weights as the K × out tile matrix, bf16 bytes in page order.
pub fn pack_conv_weights(w: &ConvWeights) -> Vec<u8> {
    let kt = conv_k_tiles(w.in_channels, w.kernel);
    let ot = tiles(w.out_channels);
    let mut out = vec![0u8; kt * ot * 2048];
    for o in 0..w.out_channels {
        for c in 0..w.in_channels {
            for ky in 0..w.kernel {
                for kx in 0..w.kernel {
                    let row = (ky * w.kernel + kx) * w.in_channels + c;
                    put(&mut out, ot, row, o, w.at(o, c, ky, kx));
                }
            }
        }
    }
    out
}

/// The bias as one tile per output tile, every row holding the bias, bf16 bytes in page order.
pub fn pack_conv_bias(w: &ConvWeights) -> Vec<u8> {
    let ot = tiles(w.out_channels);
    let mut out = vec![0u8; ot * 2048];
    for (o, b) in w.bias.iter().enumerate() {
        for row in 0..32 {
            put(&mut out, ot, row, o, *b);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activation_round_trips_and_places_by_hand() {
        // 2 channels, 1×40 pixels: pixel 33 of channel 1 is in pixel tile 1, row 1, column 1.
        let data: Vec<f32> = (0..80).map(|v| v as f32).collect();
        let t = Tensor::from_vec(2, 1, 40, data).expect("shape");
        let bytes = pack_activation(&t);
        let shape = ActivationShape {
            channels: 2,
            height: 1,
            width: 40,
        };
        assert_eq!(bytes.len(), 2 * 2048);
        let at = (1024 + face_index(1, 1)) * 2;
        assert_eq!(
            u16::from_le_bytes([bytes[at], bytes[at + 1]]),
            f32_to_bf16(73.0)
        );
        assert_eq!(unpack_activation(&bytes, shape), Some(t));
    }

    #[test]
    fn weights_rows_are_tap_major() {
        // out 1, in 2, 3×3: w[0, c, ky, kx] = 100 c + 10 ky + kx; row (ky·3 + kx)·2 + c.
        let weight: Vec<f32> = (0..2)
            .flat_map(|c| {
                (0..3).flat_map(move |ky| (0..3).map(move |kx| (100 * c + 10 * ky + kx) as f32))
            })
            .collect();
        let w = ConvWeights {
            out_channels: 1,
            in_channels: 2,
            kernel: 3,
            weight,
            bias: vec![0.5],
        };
        let bytes = pack_conv_weights(&w);
        assert_eq!(bytes.len(), 2048);
        // c = 1, ky = 2, kx = 1 → row 15, value 121.
        let at = face_index(15, 0) * 2;
        assert_eq!(
            u16::from_le_bytes([bytes[at], bytes[at + 1]]),
            f32_to_bf16(121.0)
        );
        let bias = pack_conv_bias(&w);
        let at = face_index(31, 0) * 2;
        assert_eq!(
            u16::from_le_bytes([bias[at], bias[at + 1]]),
            f32_to_bf16(0.5)
        );
    }
}
