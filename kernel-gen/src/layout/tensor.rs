//! The layout of every tensor the device holds, and the one rule ([`DeviceTensor::of`]) saying
//! which layout each graph op's output has.
//!
//! Every program of the plan reads and writes DRAM-interleaved buffers in these layouts, so
//! programs compiled separately (the main trace and an NMS-variant program that starts from the
//! main trace's score map) agree on them by construction.

use serde::{Deserialize, Serialize};
use superpoint_graph::{Dim, Op, ValueType};

use super::{tiles, ActivationShape};
use crate::device::{Format, Grid};

/// Bytes of one Float32 32×32 tile, the page of a [`DeviceTensor::Map`].
pub const MAP_PAGE_BYTES: u32 = 4096;
/// Bytes of one candidate record: u32 raster index, f32 score.
pub const CANDIDATE_BYTES: u32 = 8;
/// Stride of one region's count in the counts buffer (one DRAM read unit).
pub const COUNT_STRIDE: u32 = 64;
/// Channels of a sampled descriptor row.
pub const DESCRIPTOR_DIM: u32 = 256;

/// A tensor as the device holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "layout", rename_all = "snake_case")]
pub enum DeviceTensor {
    /// The u8 image plane: one page per image row, `width` bytes padded to 64.
    Plane { height: u32, width: u32 },
    /// Channels-last tile matrix ([`super::ActivationShape`]) of `format` tiles: 2048 B pages
    /// (bf16) or 4096 B (Float32). The format is left out of the JSON when bf16.
    Activation {
        channels: u32,
        height: u32,
        width: u32,
        #[serde(default, skip_serializing_if = "Format::is_bf16")]
        format: Format,
    },
    /// Pixel-major rows of a channels-last tensor (the dense descriptors, written by
    /// `L2Normalize` for the sampler): pixel p's `channels` values (padded to 32) contiguous, in
    /// `format`, at byte `(p % 32)·row` of page `p / 32`; a page is 32 rows, the bytes of one
    /// [`Activation`](DeviceTensor::Activation) tile row, so one NoC read fetches a pixel.
    PixelRows {
        channels: u32,
        height: u32,
        width: u32,
        #[serde(default, skip_serializing_if = "Format::is_bf16")]
        format: Format,
    },
    /// The network frame as row-major image rows (the resize writes it, conv1a reads it; W a
    /// multiple of 32): page y holds three copies of image row y, each W values of `format`,
    /// for dx = −1, 0, +1 in that order. Copy dx holds frame(y, x + dx) at x when x + dx lies in
    /// x's 32-pixel column tile and 0 otherwise, so every 32-value stretch of copy ±1 misses
    /// one value at a tile edge, which its reader takes from copy 0. Copies ±1 hold their
    /// values as the writer's matrix unit sees them in SrcA (cut to 10 significant bits, 5 at
    /// LoFi: a bf16 value is unchanged from HiFi2 up), since they are made by a matmul; only a
    /// matmul reads them, which cuts the same way.
    FrameRows {
        height: u32,
        width: u32,
        #[serde(default, skip_serializing_if = "Format::is_bf16")]
        format: Format,
    },
    /// One channel H×W as Float32 32×32 tiles (4-face), page `(y/32)·(W/32) + x/32`.
    Map { height: u32, width: u32 },
    /// Keypoint candidates of a `height`×`width` map: `regions` × `capacity` records
    /// ([`CANDIDATE_BYTES`]) plus one count per region at [`COUNT_STRIDE`] (a second buffer).
    Candidates {
        height: u32,
        width: u32,
        regions: u32,
        capacity: u32,
    },
    /// Row-major f32 descriptors of `dim` values, one row per candidate slot.
    Descriptors {
        regions: u32,
        capacity: u32,
        dim: u32,
    },
}

/// Which DRAM buffer of a tensor: every tensor has a main buffer, candidates also a counts buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    Main,
    Counts,
}

impl Part {
    /// The buffer name of this part of node `node`'s output.
    pub fn buffer_name(self, node: &str) -> String {
        match self {
            Part::Main => node.to_string(),
            Part::Counts => format!("{node}.counts"),
        }
    }
}

/// Why a node's output has no device layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutError {
    /// The op's output size is only known per input (the image plane without an input size).
    DynamicSize,
    /// The op's inputs are not in the layouts the op reads.
    Inputs,
}

/// The regions and per-region capacity of the candidates of an H×W map on `grid`: the map's
/// tiles split over cores like every other node (`Split`), `ceil(tiles / regions)·1024` records each.
pub fn candidate_regions(grid: Grid, height: u32, width: u32) -> (u32, u32) {
    let map_tiles = (height / 32) * (width / 32);
    let regions = grid.cores().min(map_tiles).max(1);
    (regions, map_tiles.div_ceil(regions) * 1024)
}

/// The [`ActivationShape`] of a tensor's fields.
fn shape(channels: u32, height: u32, width: u32, format: Format) -> ActivationShape {
    ActivationShape {
        channels: channels as usize,
        height: height as usize,
        width: width as usize,
        format,
    }
}

impl DeviceTensor {
    /// The layout of `op`'s output given its inferred type `ty` and its inputs' layouts.
    /// `plane` is the uploaded plane's (width, height) when known; an activation output has
    /// `format`, the activation format of the node's precision.
    pub fn of(
        op: &Op,
        ty: &ValueType,
        inputs: &[DeviceTensor],
        grid: Grid,
        plane: Option<(u32, u32)>,
        format: Format,
    ) -> Result<DeviceTensor, LayoutError> {
        let dims = |ty: &ValueType| match ty {
            ValueType::Dense {
                channels,
                height: Dim::Known(h),
                width: Dim::Known(w),
                ..
            } => Ok((*channels as u32, *h as u32, *w as u32)),
            _ => Err(LayoutError::DynamicSize),
        };
        match op {
            Op::InputPlane => plane
                .map(|(width, height)| DeviceTensor::Plane { height, width })
                .ok_or(LayoutError::DynamicSize),
            Op::Resize { .. } => {
                let (_, height, width) = dims(ty)?;
                Ok(DeviceTensor::FrameRows {
                    height,
                    width,
                    format,
                })
            }
            Op::Conv2d { .. } | Op::MaxPool2 | Op::Softmax => {
                let (channels, height, width) = dims(ty)?;
                Ok(DeviceTensor::Activation {
                    channels,
                    height,
                    width,
                    format,
                })
            }
            Op::L2Normalize => {
                let (channels, height, width) = dims(ty)?;
                Ok(DeviceTensor::PixelRows {
                    channels,
                    height,
                    width,
                    format,
                })
            }
            Op::DustbinFold { .. } | Op::Nms { .. } => {
                let (_, height, width) = dims(ty)?;
                Ok(DeviceTensor::Map { height, width })
            }
            Op::SelectKeypoints { .. } => match inputs {
                [DeviceTensor::Map { height, width }] => {
                    let (regions, capacity) = candidate_regions(grid, *height, *width);
                    Ok(DeviceTensor::Candidates {
                        height: *height,
                        width: *width,
                        regions,
                        capacity,
                    })
                }
                _ => Err(LayoutError::Inputs),
            },
            Op::SampleDescriptors { .. } => match inputs {
                [DeviceTensor::PixelRows { channels, .. }, DeviceTensor::Candidates {
                    regions, capacity, ..
                }] => Ok(DeviceTensor::Descriptors {
                    regions: *regions,
                    capacity: *capacity,
                    dim: *channels,
                }),
                _ => Err(LayoutError::Inputs),
            },
        }
    }

    /// The activation shape, when this is an activation.
    pub fn activation(&self) -> Option<ActivationShape> {
        match *self {
            DeviceTensor::Activation {
                channels,
                height,
                width,
                format,
            } => Some(shape(channels, height, width, format)),
            _ => None,
        }
    }

    /// The shape of a [`DeviceTensor::PixelRows`] tensor (same padding and bytes as the
    /// activation of that shape).
    pub fn pixel_rows(&self) -> Option<ActivationShape> {
        match *self {
            DeviceTensor::PixelRows {
                channels,
                height,
                width,
                format,
            } => Some(shape(channels, height, width, format)),
            _ => None,
        }
    }

    /// The DRAM buffers holding this tensor: (part, pages, page bytes).
    pub fn parts(&self) -> Vec<(Part, u32, u32)> {
        match *self {
            DeviceTensor::Plane { height, width } => {
                vec![(Part::Main, height, width.div_ceil(64) * 64)]
            }
            DeviceTensor::Activation {
                channels,
                height,
                width,
                format,
            } => vec![(
                Part::Main,
                (tiles((height * width) as usize) * tiles(channels as usize)) as u32,
                format.tile_bytes(),
            )],
            DeviceTensor::PixelRows {
                channels,
                height,
                width,
                format,
            } => vec![(
                Part::Main,
                tiles((height * width) as usize) as u32,
                tiles(channels as usize) as u32 * format.tile_bytes(),
            )],
            DeviceTensor::FrameRows {
                height,
                width,
                format,
            } => vec![(Part::Main, height, 3 * width * format.tile_bytes() / 1024)],
            DeviceTensor::Map { height, width } => vec![(
                Part::Main,
                (tiles(height as usize) * tiles(width as usize)) as u32,
                MAP_PAGE_BYTES,
            )],
            DeviceTensor::Candidates {
                regions, capacity, ..
            } => vec![
                (Part::Main, regions * capacity, CANDIDATE_BYTES),
                (Part::Counts, regions, COUNT_STRIDE),
            ],
            DeviceTensor::Descriptors {
                regions,
                capacity,
                dim,
            } => vec![(Part::Main, regions * capacity, dim * 4)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use superpoint_graph::DType;

    #[test]
    fn candidates_split_the_map_tiles_over_the_grid() {
        // 640×480: 20×15 = 300 tiles over 120 cores → 3 tiles (3072 records) per region.
        assert_eq!(candidate_regions(Grid::ETH_DISPATCH, 480, 640), (120, 3072));
        // 64×32: 2 tiles → 2 regions of one tile.
        assert_eq!(candidate_regions(Grid::ETH_DISPATCH, 32, 64), (2, 1024));
    }

    #[test]
    fn layouts_follow_the_ops() {
        let map = ValueType::Dense {
            dtype: DType::F32,
            channels: 1,
            height: Dim::Known(64),
            width: Dim::Known(96),
        };
        let grid = Grid::ETH_DISPATCH;
        let scores = DeviceTensor::of(
            &Op::DustbinFold { cell: 8 },
            &map,
            &[],
            grid,
            None,
            Format::Bf16,
        );
        assert_eq!(
            scores,
            Ok(DeviceTensor::Map {
                height: 64,
                width: 96
            })
        );
        let select = Op::SelectKeypoints {
            threshold: 0.005,
            border: 4,
            max_keypoints: -1,
        };
        let scores = scores.expect("a map");
        let candidates = DeviceTensor::of(
            &select,
            &ValueType::Keypoints,
            &[scores],
            grid,
            None,
            Format::Bf16,
        );
        assert_eq!(
            candidates,
            Ok(DeviceTensor::Candidates {
                height: 64,
                width: 96,
                regions: 6,
                capacity: 1024
            })
        );
        assert_eq!(
            DeviceTensor::of(&Op::InputPlane, &map, &[], grid, None, Format::Bf16),
            Err(LayoutError::DynamicSize)
        );
        let parts = DeviceTensor::Plane {
            height: 3,
            width: 100,
        }
        .parts();
        assert_eq!(parts, vec![(Part::Main, 3, 128)]);
        let dense = ValueType::Dense {
            dtype: DType::F32,
            channels: 256,
            height: Dim::Known(60),
            width: Dim::Known(80),
        };
        let rows = DeviceTensor::of(&Op::L2Normalize, &dense, &[], grid, None, Format::Fp32);
        let expected = DeviceTensor::PixelRows {
            channels: 256,
            height: 60,
            width: 80,
            format: Format::Fp32,
        };
        assert_eq!(rows, Ok(expected));
        // 4800 pixels = 150 pages of 32 rows of 256 Float32 values (1 KiB).
        assert_eq!(expected.parts(), vec![(Part::Main, 150, 32 * 1024)]);
        assert_eq!(expected.activation(), None);
        assert_eq!(
            expected.pixel_rows().map(|s| s.bytes()),
            Some(150 * 32 * 1024)
        );
    }
}
