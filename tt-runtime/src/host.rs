//! Host-side data helpers: bf16 conversion and the tiled (4-face) layout, for preparing buffers
//! and reading results.

/// bf16 bits of an f32, round to nearest, ties to even (how hosts and frameworks convert).
pub fn f32_to_bf16(x: f32) -> u16 {
    let u = x.to_bits();
    if x.is_nan() {
        return ((u >> 16) as u16) | 0x0040;
    }
    let lsb = (u >> 16) & 1;
    (u.wrapping_add(0x7FFF + lsb) >> 16) as u16
}

/// The f32 value of bf16 bits.
pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// Position of element (i, j) of a 32x32 tile in the 4-face layout.
pub const fn face_index(i: usize, j: usize) -> usize {
    (i / 16 * 2 + j / 16) * 256 + (i % 16) * 16 + j % 16
}

/// Reorders a row-major `rows` x `cols` matrix (both multiples of 32) into tiles, row-major
/// tile order, each tile in the 4-face layout.
pub fn tilize(data: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0.0; rows * cols];
    let tiles_per_row = cols / 32;
    for i in 0..rows {
        for j in 0..cols {
            let tile = (i / 32) * tiles_per_row + j / 32;
            out[tile * 1024 + face_index(i % 32, j % 32)] = data[i * cols + j];
        }
    }
    out
}

/// Inverse of [`tilize`].
pub fn untilize(tiles: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0.0; rows * cols];
    let tiles_per_row = cols / 32;
    for i in 0..rows {
        for j in 0..cols {
            let tile = (i / 32) * tiles_per_row + j / 32;
            out[i * cols + j] = tiles[tile * 1024 + face_index(i % 32, j % 32)];
        }
    }
    out
}

/// Little-endian bf16 bytes of f32 values.
pub fn to_bf16_bytes(values: &[f32]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| f32_to_bf16(*v).to_le_bytes())
        .collect()
}

/// f32 values of little-endian bf16 bytes (an odd trailing byte is ignored).
pub fn from_bf16_bytes(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(2)
        .map(|b| bf16_to_f32(u16::from_le_bytes([b[0], b[1]])))
        .collect()
}

/// Little-endian bytes of f32 values.
pub fn to_f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// f32 values of little-endian bytes.
pub fn from_f32_bytes(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Little-endian bytes of u32 words.
pub fn to_u32_bytes(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// u32 words of little-endian bytes.
pub fn from_u32_bytes(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounds_ties_to_even() {
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even gives 1.
        assert_eq!(f32_to_bf16(1.0 + 1.0 / 256.0), 0x3F80);
        // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: even is 1 + 2^-6.
        assert_eq!(f32_to_bf16(1.0 + 3.0 / 256.0), 0x3F82);
        assert_eq!(bf16_to_f32(0x4040), 3.0);
    }

    #[test]
    fn face_layout() {
        assert_eq!(face_index(0, 0), 0);
        assert_eq!(face_index(0, 16), 256);
        assert_eq!(face_index(16, 0), 512);
        assert_eq!(face_index(17, 18), 768 + 16 + 2);
    }

    #[test]
    fn tilize_places_second_tile_row() {
        let rows = 64;
        let cols = 32;
        let data: Vec<f32> = (0..rows * cols).map(|v| v as f32).collect();
        let t = tilize(&data, rows, cols);
        // Element (32, 1) = 32 * 32 + 1 is the second tile's (0, 1).
        assert_eq!(t[1024 + 1], 1025.0);
        assert_eq!(untilize(&t, rows, cols), data);
    }
}
