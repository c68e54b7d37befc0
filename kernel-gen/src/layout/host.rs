//! Host-side packing into and out of the non-activation layouts of [`super::DeviceTensor`]:
//! score maps (Float32 spatial tiles), candidate records with their counts, and sampled
//! descriptor rows. The runtime and the tests use these to upload inputs and read results.

use superpoint_graph::{Keypoint, Tensor};

use super::face_index;
use super::tensor::{CANDIDATE_BYTES, COUNT_STRIDE, MAP_PAGE_BYTES};

fn map_offset(width: usize, y: usize, x: usize) -> usize {
    let page = (y / 32) * width.div_ceil(32) + x / 32;
    page * MAP_PAGE_BYTES as usize + face_index(y % 32, x % 32) * 4
}

/// A one-channel tensor (H and W multiples of 32) as Map-layout bytes; `None` otherwise.
pub fn pack_map(t: &Tensor<f32>) -> Option<Vec<u8>> {
    if t.channels != 1 || t.height % 32 != 0 || t.width % 32 != 0 {
        return None;
    }
    let mut out = vec![0u8; t.height * t.width * 4];
    for y in 0..t.height {
        for x in 0..t.width {
            let at = map_offset(t.width, y, x);
            out[at..at + 4].copy_from_slice(&t.data[y * t.width + x].to_le_bytes());
        }
    }
    Some(out)
}

/// The one-channel tensor held in Map-layout bytes; `None` when the length does not match.
pub fn unpack_map(bytes: &[u8], height: usize, width: usize) -> Option<Tensor<f32>> {
    if height % 32 != 0 || width % 32 != 0 || bytes.len() != height * width * 4 {
        return None;
    }
    let mut data = Vec::with_capacity(height * width);
    for y in 0..height {
        for x in 0..width {
            let at = map_offset(width, y, x);
            data.push(f32::from_le_bytes([
                bytes[at],
                bytes[at + 1],
                bytes[at + 2],
                bytes[at + 3],
            ]));
        }
    }
    Tensor::from_vec(1, height, width, data)
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The candidates of every region, in region order then record order, as (slot, keypoint) where
/// slot = `region·capacity + record` indexes the descriptor rows. `None` when a count exceeds
/// the capacity, a buffer is short, or a raster index is outside the `width`-wide map.
pub fn decode_candidates(
    records: &[u8],
    counts: &[u8],
    regions: u32,
    capacity: u32,
    width: u32,
    height: u32,
) -> Option<Vec<(u32, Keypoint)>> {
    let mut out = Vec::new();
    for region in 0..regions {
        let count = read_u32(counts, (region * COUNT_STRIDE) as usize)?;
        if count > capacity {
            return None;
        }
        for j in 0..count {
            let slot = region * capacity + j;
            let at = (slot * CANDIDATE_BYTES) as usize;
            let index = read_u32(records, at)?;
            let score = f32::from_bits(read_u32(records, at + 4)?);
            let (x, y) = (index % width, index / width);
            if y >= height {
                return None;
            }
            out.push((slot, Keypoint { x, y, score }));
        }
    }
    Some(out)
}

/// The records and counts buffers holding `regions` lists of keypoints (each at most `capacity`
/// long) of a `width`-wide map; `None` when a list is too long.
pub fn encode_candidates(
    lists: &[Vec<Keypoint>],
    capacity: u32,
    width: u32,
) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut records = vec![0u8; lists.len() * (capacity * CANDIDATE_BYTES) as usize];
    let mut counts = vec![0u8; lists.len() * COUNT_STRIDE as usize];
    for (region, list) in lists.iter().enumerate() {
        let count = u32::try_from(list.len()).ok().filter(|&n| n <= capacity)?;
        let at = region * COUNT_STRIDE as usize;
        counts[at..at + 4].copy_from_slice(&count.to_le_bytes());
        for (j, k) in list.iter().enumerate() {
            let at = (region * capacity as usize + j) * CANDIDATE_BYTES as usize;
            records[at..at + 4].copy_from_slice(&(k.y * width + k.x).to_le_bytes());
            records[at + 4..at + 8].copy_from_slice(&k.score.to_bits().to_le_bytes());
        }
    }
    Some((records, counts))
}

/// Row `slot` of a row-major f32 descriptor buffer of `dim`-value rows; `None` when out of range.
pub fn descriptor_row(bytes: &[u8], dim: u32, slot: u32) -> Option<Vec<f32>> {
    let row = (dim * 4) as usize;
    let start = slot as usize * row;
    let b = bytes.get(start..start + row)?;
    Some(
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_places_pixels_in_spatial_tiles_by_hand() {
        // 32×64: pixel (17, 40) is in tile 1, face 2 (rows 16..32, cols 0..16), row 1, col 8.
        let data: Vec<f32> = (0..32 * 64).map(|v| v as f32).collect();
        let t = Tensor::from_vec(1, 32, 64, data).expect("shape");
        let bytes = pack_map(&t).expect("packs");
        let at = 4096 + (2 * 256 + 16 + 8) * 4;
        assert_eq!(
            f32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]),
            (17 * 64 + 40) as f32
        );
        assert_eq!(unpack_map(&bytes, 32, 64), Some(t));
        assert_eq!(unpack_map(&bytes, 32, 32), None);
    }

    #[test]
    fn candidates_round_trip_with_slots() {
        let k = |x, y, score| Keypoint { x, y, score };
        let lists = vec![
            vec![k(5, 1, 0.5), k(6, 1, 0.25)],
            vec![],
            vec![k(0, 2, 1.0)],
        ];
        let (records, counts) = encode_candidates(&lists, 8, 10).expect("fits");
        assert_eq!(records.len(), 3 * 8 * 8);
        assert_eq!(counts.len(), 3 * 64);
        let decoded = decode_candidates(&records, &counts, 3, 8, 10, 3).expect("decodes");
        assert_eq!(
            decoded,
            vec![(0, k(5, 1, 0.5)), (1, k(6, 1, 0.25)), (16, k(0, 2, 1.0))]
        );
        assert_eq!(decode_candidates(&records, &counts, 3, 8, 10, 2), None);
        assert_eq!(encode_candidates(&lists, 1, 10), None);
    }

    #[test]
    fn descriptor_rows_are_row_major() {
        let bytes: Vec<u8> = (0..8u32).flat_map(|v| (v as f32).to_le_bytes()).collect();
        assert_eq!(descriptor_row(&bytes, 4, 1), Some(vec![4.0, 5.0, 6.0, 7.0]));
        assert_eq!(descriptor_row(&bytes, 4, 2), None);
    }
}
