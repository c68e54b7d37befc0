//! The device layouts the plan assigns, and the host-side packing into and out of them.
//!
//! Activations: channels-last, a (pixels padded to 32) × (channels padded to 32) matrix of bf16
//! or Float32 tiles (the [`Format`] of the precision of the node writing it), pixel (y, x) being
//! row y·W + x; tile (pixel tile p, channel tile c) is DRAM page
//! p·channel_tiles + c, each tile in the 4-face layout. Padding rows and columns are zero when the
//! host writes a tensor; kernels never read padding rows (they check the pixel index), and a
//! padding column of an output holds `relu?(0)` only if the weights there are zero (they are).
//!
//! Convolution weights: a K × out matrix of bf16 tiles (K = k²·in, row `(ky·k + kx)·in + c`,
//! padded to 32), page `kt·out_tiles + ot`. With Float32 activations ([`Precision::ACCURATE`])
//! the buffer holds two such matrices stacked along K, the bf16 high part `W_hi = bf16(W)` and
//! the low part `W_lo = bf16(W − W_hi)`: each product with a tf32 activation is exact at HiFi4,
//! so their sum carries 16 bits of every weight. Bias: one tile per output tile whose 32 rows all
//! hold the bias, so a copy into DST starts every row of the accumulation at the bias; bf16
//! tiles with bf16 activations, Float32 tiles (exact in an fp32 DST) with Float32 activations.
//! The copy is exact because the compute kernel unpacks a Float32 bias CB straight to DST
//! (`UnpackToDestFp32`, [`crate::kir::Kernel::unpack_to_dest_fp32`]); through SrcA it would be
//! cut to TF32 (10 mantissa bits).
//!
//! Pixel rows ([`DeviceTensor::PixelRows`], the dense descriptors): the same padded matrix
//! row-major, one page per 32 pixel rows, so a pixel's channels are one contiguous run.
//!
//! The other layouts (image plane, score maps, candidates, descriptor rows) and the rule giving
//! each op's output layout are in [`tensor`]; their host packing is in [`host`].

pub mod host;
pub mod tensor;

pub use tensor::{DeviceTensor, LayoutError, Part};

use superpoint_graph::{ConvWeights, Tensor};

use crate::device::Format;
#[cfg(doc)]
use crate::device::Precision;

/// The tile and bf16 helpers are tt-runtime's, so the host packing here and the runtime agree.
pub use tt_runtime::host::{bf16_to_f32, f32_to_bf16, face_index};

/// Tiles needed for `n` rows or columns.
pub fn tiles(n: usize) -> usize {
    n.div_ceil(32)
}

/// The shape and element format of a channels-last tiled activation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActivationShape {
    pub channels: usize,
    pub height: usize,
    pub width: usize,
    pub format: Format,
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

    /// Bytes of the whole tensor.
    pub fn bytes(&self) -> usize {
        self.pixel_tiles() * self.channel_tiles() * self.format.tile_bytes() as usize
    }
}

/// Bytes of one element of `format`.
fn element_bytes(format: Format) -> usize {
    format.tile_bytes() as usize / 1024
}

/// Byte offset of element (row, col) of a row-major grid of `format` tiles `col_tiles` wide.
fn offset(format: Format, col_tiles: usize, row: usize, col: usize) -> usize {
    let page = (row / 32) * col_tiles + col / 32;
    (page * 1024 + face_index(row % 32, col % 32)) * element_bytes(format)
}

/// Writes `value` in `format` at byte `at` (bf16 rounded to nearest even).
fn put_at(out: &mut [u8], format: Format, at: usize, value: f32) {
    match format {
        Format::Bf16 => out[at..at + 2].copy_from_slice(&f32_to_bf16(value).to_le_bytes()),
        Format::Fp32 => out[at..at + 4].copy_from_slice(&value.to_le_bytes()),
    }
}

/// The `format` value at byte `at`.
fn get_at(bytes: &[u8], format: Format, at: usize) -> f32 {
    match format {
        Format::Bf16 => bf16_to_f32(u16::from_le_bytes([bytes[at], bytes[at + 1]])),
        Format::Fp32 => {
            f32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        }
    }
}

/// Writes `value` at (row, col) of a row-major grid of `format` tiles `col_tiles` wide.
fn put(out: &mut [u8], format: Format, col_tiles: usize, row: usize, col: usize, value: f32) {
    put_at(out, format, offset(format, col_tiles, row, col), value);
}

/// The value at (row, col) of a row-major grid of `format` tiles `col_tiles` wide.
fn get(bytes: &[u8], format: Format, col_tiles: usize, row: usize, col: usize) -> f32 {
    get_at(bytes, format, offset(format, col_tiles, row, col))
}

/// Byte offset of channel `c` of pixel `p` in the pixel-rows layout of `shape`.
fn row_offset(shape: &ActivationShape, p: usize, c: usize) -> usize {
    (p * shape.channel_tiles() * 32 + c) * element_bytes(shape.format)
}

/// A planar tensor in the activation layout of `format`, as little-endian bytes.
pub fn pack_activation(t: &Tensor<f32>, format: Format) -> Vec<u8> {
    let shape = ActivationShape {
        channels: t.channels,
        height: t.height,
        width: t.width,
        format,
    };
    let mut out = vec![0u8; shape.bytes()];
    let pixels = t.height * t.width;
    for c in 0..t.channels {
        for (p, v) in t.plane(c).iter().enumerate().take(pixels) {
            put(&mut out, format, shape.channel_tiles(), p, c, *v);
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
            data.push(get(bytes, shape.format, shape.channel_tiles(), p, c));
        }
    }
    Tensor::from_vec(shape.channels, shape.height, shape.width, data)
}

/// Bytes of one [`DeviceTensor::FrameRows`] page: three copies of a `width`-value row.
pub fn frame_row_bytes(width: usize, format: Format) -> usize {
    3 * width * element_bytes(format)
}

/// A one-channel tensor (W a multiple of 32) in the [`DeviceTensor::FrameRows`] layout of
/// `format` (copies ±1 uncut: the matmul that reads them cuts them as the device's copies are
/// cut); `None` for other shapes.
pub fn pack_frame_rows(t: &Tensor<f32>, format: Format) -> Option<Vec<u8>> {
    if t.channels != 1 || t.width % 32 != 0 {
        return None;
    }
    let (w, size) = (t.width, element_bytes(format));
    let page = frame_row_bytes(w, format);
    let mut out = vec![0u8; page * t.height];
    for y in 0..t.height {
        let row = &t.data[y * w..(y + 1) * w];
        for (copy, dx) in [-1i64, 0, 1].into_iter().enumerate() {
            for x in 0..w {
                let source = x as i64 + dx;
                if source.div_euclid(32) == (x / 32) as i64 {
                    let at = y * page + (copy * w + x) * size;
                    put_at(&mut out, format, at, row[source as usize]);
                }
            }
        }
    }
    Some(out)
}

/// Copy `dx` (−1, 0 or +1) of the frame held in [`DeviceTensor::FrameRows`] bytes, as a
/// one-channel `height`×`width` tensor; `None` when the length does not match.
pub fn unpack_frame_rows(
    bytes: &[u8],
    height: usize,
    width: usize,
    format: Format,
    dx: i32,
) -> Option<Tensor<f32>> {
    let page = frame_row_bytes(width, format);
    let copy = usize::try_from(dx + 1).ok().filter(|c| *c < 3)?;
    if bytes.len() != page * height {
        return None;
    }
    let size = element_bytes(format);
    let data = (0..height)
        .flat_map(|y| (0..width).map(move |x| y * page + (copy * width + x) * size))
        .map(|at| get_at(bytes, format, at))
        .collect();
    Tensor::from_vec(1, height, width, data)
}

/// A planar tensor in the pixel-rows layout ([`DeviceTensor::PixelRows`]) of `format`.
pub fn pack_pixel_rows(t: &Tensor<f32>, format: Format) -> Vec<u8> {
    let shape = ActivationShape {
        channels: t.channels,
        height: t.height,
        width: t.width,
        format,
    };
    let mut out = vec![0u8; shape.bytes()];
    for c in 0..t.channels {
        for (p, v) in t.plane(c).iter().enumerate() {
            put_at(&mut out, format, row_offset(&shape, p, c), *v);
        }
    }
    out
}

/// The planar tensor held in pixel-rows bytes; `None` when the length does not match.
pub fn unpack_pixel_rows(bytes: &[u8], shape: ActivationShape) -> Option<Tensor<f32>> {
    if bytes.len() != shape.bytes() {
        return None;
    }
    let pixels = shape.height * shape.width;
    let data = (0..shape.channels)
        .flat_map(|c| (0..pixels).map(move |p| (p, c)))
        .map(|(p, c)| get_at(bytes, shape.format, row_offset(&shape, p, c)))
        .collect();
    Tensor::from_vec(shape.channels, shape.height, shape.width, data)
}

/// The planar tensor held in the bytes of a channels-last `tensor` (an activation or pixel
/// rows); `None` for other layouts or when the length does not match.
pub fn unpack_channels_last(bytes: &[u8], tensor: &DeviceTensor) -> Option<Tensor<f32>> {
    match (tensor.activation(), tensor.pixel_rows()) {
        (Some(shape), _) => unpack_activation(bytes, shape),
        (_, Some(shape)) => unpack_pixel_rows(bytes, shape),
        _ => None,
    }
}

/// K tiles of a convolution: k²·in rows padded to 32.
pub fn conv_k_tiles(w_in: usize, kernel: usize) -> usize {
    tiles(kernel * kernel * w_in)
}

/// Weight matrices stacked along K for a convolution whose activations are `format`: 1 (bf16
/// weights), or 2 (Float32: the bf16 high and low parts).
pub fn conv_weight_parts(format: Format) -> usize {
    match format {
        Format::Bf16 => 1,
        Format::Fp32 => 2,
    }
}

/// The weights for activations in `format` as bf16 bytes in page order: the K × out tile matrix,
/// followed for Float32 activations by the matrix of the low parts `bf16(w − bf16(w))`.
pub fn pack_conv_weights(w: &ConvWeights, format: Format) -> Vec<u8> {
    let kt = conv_k_tiles(w.in_channels, w.kernel);
    let ot = tiles(w.out_channels);
    let parts = conv_weight_parts(format);
    let mut out = vec![0u8; parts * kt * ot * 2048];
    for o in 0..w.out_channels {
        for c in 0..w.in_channels {
            for ky in 0..w.kernel {
                for kx in 0..w.kernel {
                    let row = (ky * w.kernel + kx) * w.in_channels + c;
                    let mut rest = w.at(o, c, ky, kx);
                    for part in 0..parts {
                        let value = bf16_to_f32(f32_to_bf16(rest));
                        put(&mut out, Format::Bf16, ot, part * kt * 32 + row, o, value);
                        rest -= value;
                    }
                }
            }
        }
    }
    out
}

/// The bias as one tile per output tile, every row holding the bias, in page order: bf16 tiles
/// for bf16 activations, Float32 tiles for Float32 activations.
pub fn pack_conv_bias(w: &ConvWeights, format: Format) -> Vec<u8> {
    let ot = tiles(w.out_channels);
    let mut out = vec![0u8; ot * format.tile_bytes() as usize];
    for (o, b) in w.bias.iter().enumerate() {
        for row in 0..32 {
            put(&mut out, format, ot, row, o, *b);
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
        let bytes = pack_activation(&t, Format::Bf16);
        let shape = ActivationShape {
            channels: 2,
            height: 1,
            width: 40,
            format: Format::Bf16,
        };
        assert_eq!(bytes.len(), 2 * 2048);
        let at = (1024 + face_index(1, 1)) * 2;
        assert_eq!(
            u16::from_le_bytes([bytes[at], bytes[at + 1]]),
            f32_to_bf16(73.0)
        );
        assert_eq!(unpack_activation(&bytes, shape), Some(t.clone()));
        // Float32: 4096-byte tiles, the value itself at twice the offset.
        let bytes = pack_activation(&t, Format::Fp32);
        let shape = ActivationShape {
            format: Format::Fp32,
            ..shape
        };
        assert_eq!(bytes.len(), 2 * 4096);
        let at = (1024 + face_index(1, 1)) * 4;
        assert_eq!(&bytes[at..at + 4], &73.0f32.to_le_bytes());
        assert_eq!(unpack_activation(&bytes, shape), Some(t));
    }

    #[test]
    fn pixel_rows_round_trip_and_place_by_hand() {
        // 40 channels (2 channel tiles: 64-value rows), 1×33 pixels: 2 pages of 32 rows.
        // Values below 256, exact in bf16.
        let data: Vec<f32> = (0..40 * 33).map(|v| (v % 200) as f32).collect();
        let t = Tensor::from_vec(40, 1, 33, data).expect("shape");
        for format in [Format::Bf16, Format::Fp32] {
            let bytes = pack_pixel_rows(&t, format);
            let size = if format == Format::Bf16 { 2 } else { 4 };
            assert_eq!(bytes.len(), 2 * 32 * 64 * size);
            // Channel 39 of pixel 32 (value (39·33 + 32) % 200 = 119): page 1, row 0, column 39.
            let at = (32 * 64 + 39) * size;
            assert_eq!(get_at(&bytes, format, at), 119.0);
            // Padding channel 40 of pixel 0 stays zero.
            assert_eq!(get_at(&bytes, format, 40 * size), 0.0);
            let shape = ActivationShape {
                channels: 40,
                height: 1,
                width: 33,
                format,
            };
            assert_eq!(unpack_pixel_rows(&bytes, shape), Some(t.clone()));
            let tensor = DeviceTensor::PixelRows {
                channels: 40,
                height: 1,
                width: 33,
                format,
            };
            assert_eq!(unpack_channels_last(&bytes, &tensor), Some(t.clone()));
            assert_eq!(unpack_pixel_rows(&bytes[1..], shape), None);
        }
        let tiled = DeviceTensor::Activation {
            channels: 40,
            height: 1,
            width: 33,
            format: Format::Bf16,
        };
        let bytes = pack_activation(&t, Format::Bf16);
        assert_eq!(unpack_channels_last(&bytes, &tiled), Some(t));
        let map = DeviceTensor::Map {
            height: 32,
            width: 32,
        };
        assert_eq!(unpack_channels_last(&bytes, &map), None);
    }

    #[test]
    fn frame_rows_hold_three_copies_shifted_inside_column_tiles() {
        // 1×64: values 1..=64. Copy −1 at x = 32 (a tile's first column) is 0, not x = 31's
        // value; copy +1 at x = 31 (a tile's last column) is 0, not x = 32's.
        let t = Tensor::from_vec(1, 2, 64, (1..=128).map(|v| v as f32).collect()).expect("shape");
        for format in [Format::Bf16, Format::Fp32] {
            let bytes = pack_frame_rows(&t, format).expect("packs");
            assert_eq!(bytes.len(), 2 * frame_row_bytes(64, format));
            let copy = |dx| unpack_frame_rows(&bytes, 2, 64, format, dx).expect("unpacks");
            assert_eq!(copy(0), t);
            let (left, right) = (copy(-1), copy(1));
            assert_eq!(&left.data[..3], &[0.0, 1.0, 2.0]);
            assert_eq!(&left.data[31..34], &[31.0, 0.0, 33.0]);
            assert_eq!(&right.data[30..33], &[32.0, 0.0, 34.0]);
            assert_eq!(right.data[127], 0.0);
            assert_eq!(right.data[64], 66.0);
            assert_eq!(unpack_frame_rows(&bytes, 2, 64, format, 2), None);
            assert_eq!(unpack_frame_rows(&bytes[1..], 2, 64, format, 0), None);
        }
        let odd = Tensor::from_vec(1, 1, 40, vec![0.0; 40]).expect("shape");
        assert_eq!(pack_frame_rows(&odd, Format::Bf16), None);
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
        let bytes = pack_conv_weights(&w, Format::Bf16);
        assert_eq!(bytes.len(), 2048);
        // c = 1, ky = 2, kx = 1 → row 15, value 121.
        let at = face_index(15, 0) * 2;
        assert_eq!(
            u16::from_le_bytes([bytes[at], bytes[at + 1]]),
            f32_to_bf16(121.0)
        );
        let bias = pack_conv_bias(&w, Format::Bf16);
        let at = face_index(31, 0) * 2;
        assert_eq!(
            u16::from_le_bytes([bias[at], bias[at + 1]]),
            f32_to_bf16(0.5)
        );
    }

    #[test]
    fn float32_activations_get_hi_lo_weights_and_a_float32_bias() {
        // 1 + 2^-7 + 2^-12 + 2^-20: bf16 (7 mantissa bits, RNE) keeps 1 + 2^-7; the rest
        // 2^-12·(1 + 2^-8) is a tie in bf16 and rounds to the even 2^-12.
        let w0 = 1.0 + 2f32.powi(-7) + 2f32.powi(-12) + 2f32.powi(-20);
        let w = ConvWeights {
            out_channels: 1,
            in_channels: 1,
            kernel: 1,
            weight: vec![w0],
            bias: vec![w0],
        };
        let bytes = pack_conv_weights(&w, Format::Fp32);
        // Two 1×1 tile matrices: row 0 of page 0 the high part, row 0 of page 1 the low part.
        assert_eq!(bytes.len(), 2 * 2048);
        let value = |at: usize| bf16_to_f32(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
        assert_eq!(value(0), 1.0 + 2f32.powi(-7));
        assert_eq!(value(2048), 2f32.powi(-12));
        let bias = pack_conv_bias(&w, Format::Fp32);
        assert_eq!(bias.len(), 4096);
        let at = face_index(31, 0) * 4;
        assert_eq!(&bias[at..at + 4], &w0.to_le_bytes());
    }
}
