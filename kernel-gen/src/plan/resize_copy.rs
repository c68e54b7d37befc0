//! The plan of the identity resize ([`crate::ops::resize_copy`] has its kernels): an input plane
//! as large as the frame, which Pillow's resize returns unchanged, so the frame is each level's
//! value (level / 255 as the filtered path computes it, [`level_bytes`]) in the FrameRows
//! layout, built by the two data-movement cores of each core with no compute kernel.
//!
//! The unit of work is a pair of column tiles (32 pixels of an image row) in raster order: a
//! core's share of `n` pairs is a run of `2n` tiles, the first `n` the reader's, the last `n` the
//! writer's, so both RISC-V cores of every core convert the same number of pixels and each
//! walks its run a row segment at a time.

use serde::{Deserialize, Serialize};

use crate::device::{Fidelity, Format, Grid, Precision};
use crate::layout::DeviceTensor;

use super::resize::MAX_PLANE_SIDE;
use super::{output_buffers, BufferPlan, CbKind, CbPlan, Content, NodePlan, OpPlan, Split};

/// An identity resize's shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResizeCopyPlan {
    pub width: u32,
    pub height: u32,
    pub width_tiles: u32,
    /// Bytes of one plane row page (width padded to 64).
    pub row_bytes: u32,
    /// The level table ([`Content::FrameLevels`]).
    pub levels: String,
}

/// Whether a resize from `input` to `frame` at `precision` is the identity the copy plans: the
/// same size, one the filtered path takes (sides multiples of 32, up to [`MAX_PLANE_SIDE`]; it
/// reports the others), and a precision at which the filtered path's frame values are exactly
/// [`level_bytes`] (fp32 DST, whose SFPU product is the f32 one; HiFi2 or more, whose SrcA keeps
/// a bf16 value or an integer level whole when the copies ±1 pass it).
pub fn is_identity(input: (u32, u32), frame: (u32, u32), precision: Precision) -> bool {
    let (width, height) = frame;
    input == frame
        && width % 32 == 0
        && height % 32 == 0
        && (1..=MAX_PLANE_SIDE).contains(&width)
        && (1..=MAX_PLANE_SIDE).contains(&height)
        && precision.fp32_dest
        && precision.fidelity != Fidelity::LoFi
}

/// The f32 1/255 the filtered path scales the levels by (`resize/compute.cpp.tera`'s INV_255).
const INV_255: u32 = 0x3B80_8081;

/// The frame value of each level 0..=255 as the filtered path computes it, little-endian in
/// `format`: the f32 product level × fl(1/255) (the SFPU's, rounded to nearest), then for bf16
/// the packer's rounding to nearest with ties away from zero.
pub fn level_bytes(format: Format) -> Vec<u8> {
    (0..=255u8)
        .flat_map(|level| {
            let bits = (f32::from(level) * f32::from_bits(INV_255)).to_bits();
            match format {
                Format::Fp32 => bits.to_le_bytes().to_vec(),
                Format::Bf16 => (((bits + 0x8000) >> 16) as u16).to_le_bytes().to_vec(),
            }
        })
        .collect()
}

/// The most row segments a run of `tiles` column tiles of rows of `width_tiles` tiles
/// touches: a run starting at a row's last tile.
pub fn most_segments(tiles: u32, width_tiles: u32) -> u32 {
    if tiles == 0 {
        0
    } else {
        (tiles - 1).div_ceil(width_tiles.max(1)) + 1
    }
}

fn scratch(id: u32, name: &str, page_bytes: u32) -> CbPlan {
    CbPlan {
        id,
        name: name.to_string(),
        pages: 1,
        page_bytes,
        format: Format::Bf16,
        kind: CbKind::Scratch,
        buffer: None,
    }
}

/// Plans identity resize node `name` of the `width`×`height` plane `input` at `precision` (the
/// caller checked [`is_identity`]): its node and the buffers it writes or reads besides its
/// input.
pub fn plan_node(
    name: &str,
    input: &str,
    (width, height): (u32, u32),
    grid: Grid,
    precision: Precision,
) -> (NodePlan, Vec<BufferPlan>) {
    let format = precision.format;
    let element = format.tile_bytes() / 1024;
    let width_tiles = width / 32;
    let row_bytes = width.div_ceil(64) * 64;
    let levels = format!("{name}.levels");
    let mut buffers = output_buffers(
        name,
        DeviceTensor::FrameRows {
            height,
            width,
            format,
        },
    );
    buffers.push(BufferPlan {
        name: levels.clone(),
        pages: 1,
        page_bytes: 256 * element,
        content: Content::FrameLevels { format },
        l1_offset: None,
        resident: false,
        staged_by: None,
    });
    // A RISC-V core's stage: a plane row's bytes, then a row segment's three copies.
    let stage = row_bytes + 3 * width * element;
    let node = NodePlan {
        name: name.to_string(),
        inputs: vec![input.to_string()],
        output: name.to_string(),
        precision,
        split: Split::new(grid, height * width_tiles / 2),
        cbs: vec![
            scratch(0, "cb_levels_0", 256 * element),
            scratch(1, "cb_levels_1", 256 * element),
            scratch(2, "cb_stage_0", stage),
            scratch(3, "cb_stage_1", stage),
        ],
        op: OpPlan::ResizeCopy(ResizeCopyPlan {
            width,
            height,
            width_tiles,
            row_bytes,
            levels,
        }),
    };
    (node, buffers)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Rows of 20 tiles: a run of 40 tiles touches 3 rows when it starts at a row's last tile
    // (1 + 20 + 19), 4 for 44 (1 + 20 + 20 + 3), 2 for 20 (1 + 19); one tile one row.
    #[test]
    fn runs_touch_at_most_these_row_segments() {
        assert_eq!(most_segments(40, 20), 3);
        assert_eq!(most_segments(44, 20), 4);
        assert_eq!(most_segments(20, 20), 2);
        assert_eq!(most_segments(1, 20), 1);
        assert_eq!(most_segments(0, 20), 0);
    }

    // Hand-computed: level 255 is 255 x fl(1/255) = 1 + 5.9e-8, under half an f32 ulp of 1.0
    // (6.0e-8), so 1.0;
    // 1 is fl(1/255) = 0x3B808081, in bf16 0x3B81 (0x8081 > 0x8000 rounds up); 0 stays +0.
    #[test]
    fn levels_are_the_filtered_paths_values() {
        let f32s = level_bytes(Format::Fp32);
        let at = |i: usize| {
            u32::from_le_bytes([
                f32s[4 * i],
                f32s[4 * i + 1],
                f32s[4 * i + 2],
                f32s[4 * i + 3],
            ])
        };
        assert_eq!(f32s.len(), 1024);
        assert_eq!(at(0), 0);
        assert_eq!(at(1), 0x3B80_8081);
        assert_eq!(at(255), 0x3F80_0000);
        let bf16s = level_bytes(Format::Bf16);
        assert_eq!(bf16s.len(), 512);
        assert_eq!(&bf16s[2..4], &0x3B81u16.to_le_bytes());
        assert_eq!(&bf16s[510..512], &0x3F80u16.to_le_bytes());
    }

    #[test]
    fn only_same_sizes_at_exact_precisions_are_identities() {
        assert!(is_identity((640, 480), (640, 480), Precision::PORT));
        assert!(is_identity((640, 480), (640, 480), Precision::ACCURATE));
        assert!(!is_identity((1600, 900), (640, 480), Precision::PORT));
        assert!(!is_identity((100, 70), (100, 70), Precision::PORT));
        assert!(!is_identity((4128, 32), (4128, 32), Precision::PORT));
        let lofi = Precision {
            fidelity: Fidelity::LoFi,
            ..Precision::PORT
        };
        assert!(!is_identity((640, 480), (640, 480), lofi));
        let bf16_dst = Precision {
            fp32_dest: false,
            ..Precision::PORT
        };
        assert!(!is_identity((640, 480), (640, 480), bf16_dst));
    }
}
