//! The plan of `SampleDescriptors` ([`crate::ops::sample`] has the method and its kernels):
//! region `i` of the candidates on core `i`, its CBs and the checks of its inputs.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::device::{Fidelity, Format, Grid, Precision};
use crate::layout::tensor::COUNT_STRIDE;
use crate::layout::{DeviceTensor, Part};

use super::{largest_divisor_within, CbKind, CbPlan, CoreWork, NodePlan, OpPlan, PlanError, Split};

/// Why a sampling node cannot be planned.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SampleError {
    #[error("node `{node}`: the candidates come from a {width}x{height} map but the descriptor map is {coarse_width}x{coarse_height} cells of {cell} pixels; sample the descriptors of the same frame")]
    MapMismatch {
        node: String,
        width: u32,
        height: u32,
        coarse_width: u32,
        coarse_height: u32,
        cell: u32,
    },
    #[error("node `{node}`: the descriptor map has {channels} channels; device sampling needs a positive multiple of 32")]
    Channels { node: String, channels: u32 },
    #[error("node `{node}`: the integer tap arithmetic of a {width}x{height} frame does not fit 31 bits (denominators {dx}·{dy}); sample a smaller frame")]
    TooLarge {
        node: String,
        width: u32,
        height: u32,
        dx: u64,
        dy: u64,
    },
    #[error("node `{node}`: inputs must be the dense descriptor map (an activation) and the keypoint candidates, in that order")]
    Inputs { node: String },
}

/// The sampling node's shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplePlan {
    pub cell: u32,
    pub channel_tiles: u32,
    pub coarse_width: u32,
    pub coarse_height: u32,
    /// The candidates' map (the network frame).
    pub width: u32,
    pub height: u32,
    pub regions: u32,
    pub capacity: u32,
    /// Channel tiles per DST acquire in the squaring and scaling steps.
    pub group: u32,
    pub map: String,
    pub candidates: String,
    pub counts: String,
}

/// DST tiles of the weighted sum: one per corner.
pub(crate) const CORNERS: u32 = 4;
/// Record slot stride in L1 (NoC L1 alignment).
const RECORD_SLOT: u32 = 16;
/// Candidates per tile: one per row.
pub(crate) const PER_TILE: u32 = 32;

fn cb(id: u32, name: &str, pages: u32, page_bytes: u32, format: Format, kind: CbKind) -> CbPlan {
    CbPlan {
        id,
        name: name.to_string(),
        pages,
        page_bytes,
        format,
        kind,
        buffer: None,
    }
}

/// Plans node `name` (`SampleDescriptors{cell}`) reading `map` (input 0) and `candidates`
/// (input 1), whose layouts are `map_tensor` and `candidate_tensor`.
pub fn plan_node(
    name: &str,
    cell: u32,
    inputs: &[String],
    tensors: &[DeviceTensor],
    grid: Grid,
    precision: Option<Precision>,
    default: Precision,
) -> Result<NodePlan, PlanError> {
    let inputs_error = || SampleError::Inputs {
        node: name.to_string(),
    };
    let (
        [map, candidates],
        [DeviceTensor::PixelRows {
            channels,
            height: coarse_height,
            width: coarse_width,
            format: map_format,
        }, DeviceTensor::Candidates {
            height,
            width,
            regions,
            capacity,
        }],
    ) = (inputs, tensors)
    else {
        return Err(inputs_error().into());
    };
    if *width != coarse_width * cell || *height != coarse_height * cell {
        return Err(SampleError::MapMismatch {
            node: name.to_string(),
            width: *width,
            height: *height,
            coarse_width: *coarse_width,
            coarse_height: *coarse_height,
            cell,
        }
        .into());
    }
    if *channels == 0 || channels % 32 != 0 {
        return Err(SampleError::Channels {
            node: name.to_string(),
            channels: *channels,
        }
        .into());
    }
    let dx = 2 * u64::from(cell) * u64::from(*coarse_width) - u64::from(cell) - 1;
    let dy = 2 * u64::from(cell) * u64::from(*coarse_height) - u64::from(cell) - 1;
    // The reader's products: dx·dy, and nx = (2x − cell + 1)(Wc − 1) with x < W (and y likewise).
    let numerator =
        |size: u32, coarse: u32| (2 * u64::from(size) + u64::from(cell)) * u64::from(coarse);
    let limit = 1u64 << 31;
    if dx * dy >= limit
        || numerator(*width, *coarse_width) >= limit
        || numerator(*height, *coarse_height) >= limit
    {
        return Err(SampleError::TooLarge {
            node: name.to_string(),
            width: *width,
            height: *height,
            dx,
            dy,
        }
        .into());
    }
    let precision = precision.unwrap_or(Precision {
        fidelity: Fidelity::HiFi4,
        ..default
    });
    let channel_tiles = channels / 32;
    let group = largest_divisor_within(channel_tiles, precision.dst_tiles());
    let blocks = capacity / PER_TILE;
    let work = (0..*regions)
        .map(|i| CoreWork {
            core: grid.core(i),
            start: i * blocks,
            count: blocks,
            slice: 0,
        })
        .collect();
    let bf16 = Format::Bf16;
    let fp32 = Format::Fp32;
    Ok(NodePlan {
        name: name.to_string(),
        inputs: inputs.to_vec(),
        output: name.to_string(),
        precision,
        split: Split {
            blocks: regions * blocks,
            ranges: grid.first_cores(*regions),
            work,
            slices: Vec::new(),
        },
        cbs: vec![
            cb(
                0,
                "cb_rows",
                2 * CORNERS * channel_tiles,
                map_format.tile_bytes(),
                *map_format,
                CbKind::Stream,
            ),
            cb(1, "cb_weights", 2 * CORNERS, 4096, fp32, CbKind::Stream),
            cb(2, "cb_scaler", 1, 2048, bf16, CbKind::Resident),
            cb(3, "cb_count", 1, COUNT_STRIDE, bf16, CbKind::Stream),
            cb(
                4,
                "cb_records",
                1,
                PER_TILE * RECORD_SLOT,
                bf16,
                CbKind::Scratch,
            ),
            cb(5, "cb_writer_count", 1, COUNT_STRIDE, bf16, CbKind::Scratch),
            cb(16, "cb_out", 2 * channel_tiles, 4096, fp32, CbKind::Stream),
            cb(24, "cb_sum", channel_tiles, 4096, fp32, CbKind::Stream),
            cb(25, "cb_sq", 1, 4096, fp32, CbKind::Stream),
            cb(26, "cb_inv", 1, 4096, fp32, CbKind::Stream),
            cb(
                27,
                "cb_neighbours",
                CORNERS * channel_tiles,
                map_format.tile_bytes(),
                *map_format,
                CbKind::Stream,
            ),
        ],
        op: OpPlan::SampleDescriptors(SamplePlan {
            cell,
            channel_tiles,
            coarse_width: *coarse_width,
            coarse_height: *coarse_height,
            width: *width,
            height: *height,
            regions: *regions,
            capacity: *capacity,
            group,
            map: map.clone(),
            candidates: candidates.clone(),
            counts: Part::Counts.buffer_name(candidates),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Grid;
    use superpoint_graph::{Op, ValueType};

    fn tensors(channels: u32, wc: u32, hc: u32, width: u32, height: u32) -> Vec<DeviceTensor> {
        let (regions, capacity) =
            crate::layout::tensor::candidate_regions(Grid::ETH_DISPATCH, height, width);
        vec![
            DeviceTensor::PixelRows {
                channels,
                height: hc,
                width: wc,
                format: Format::Bf16,
            },
            DeviceTensor::Candidates {
                height,
                width,
                regions,
                capacity,
            },
        ]
    }

    fn plan(t: &[DeviceTensor], precision: Option<Precision>) -> Result<NodePlan, PlanError> {
        let inputs = ["dense".to_string(), "kp".to_string()];
        plan_node(
            "s",
            8,
            &inputs,
            t,
            Grid::ETH_DISPATCH,
            precision,
            Precision::PORT,
        )
    }

    #[test]
    fn one_region_per_core_with_a_bound_of_capacity_over_32_tiles() {
        // 640×480: 300 map tiles over 120 cores, 3072 records per region → at most 96 tiles.
        let p = plan(&tensors(256, 80, 60, 640, 480), None).expect("plans");
        assert_eq!(p.split.work.len(), 120);
        assert_eq!(p.split.work[7].start, 7 * 96);
        assert!(p.split.work.iter().all(|w| w.count == 96));
        assert_eq!(p.precision.fidelity, Fidelity::HiFi4);
        let OpPlan::SampleDescriptors(s) = &p.op else {
            panic!("a sampling plan");
        };
        assert_eq!(
            (s.channel_tiles, s.group, s.counts.as_str()),
            (8, 4, "kp.counts")
        );
        let lofi = Precision {
            fidelity: Fidelity::LoFi,
            ..Precision::PORT
        };
        assert_eq!(
            plan(&tensors(256, 80, 60, 640, 480), Some(lofi))
                .expect("plans")
                .precision,
            lofi
        );
    }

    #[test]
    fn rejects_mismatched_maps_channels_size_and_inputs() {
        assert_eq!(
            plan(&tensors(256, 8, 4, 64, 64), None),
            Err(PlanError::Sample(SampleError::MapMismatch {
                node: "s".into(),
                width: 64,
                height: 64,
                coarse_width: 8,
                coarse_height: 4,
                cell: 8
            }))
        );
        assert_eq!(
            plan(&tensors(65, 8, 8, 64, 64), None),
            Err(PlanError::Sample(SampleError::Channels {
                node: "s".into(),
                channels: 65
            }))
        );
        // A 32768×65536 frame: dx = 65527, dy = 131063, dx·dy ≥ 2³¹.
        assert_eq!(
            plan(&tensors(256, 4096, 8192, 32768, 65536), None),
            Err(PlanError::Sample(SampleError::TooLarge {
                node: "s".into(),
                width: 32768,
                height: 65536,
                dx: 65527,
                dy: 131063
            }))
        );
        let mut swapped = tensors(256, 8, 8, 64, 64);
        swapped.reverse();
        assert_eq!(
            plan(&swapped, None),
            Err(PlanError::Sample(SampleError::Inputs { node: "s".into() }))
        );
    }

    #[test]
    fn the_output_layout_is_one_row_per_candidate_slot() {
        let t = tensors(256, 8, 8, 64, 64);
        let out = DeviceTensor::of(
            &Op::SampleDescriptors { cell: 8 },
            &ValueType::Descriptors { dim: 256 },
            &t,
            Grid::ETH_DISPATCH,
            None,
            Format::Bf16,
        );
        assert_eq!(
            out,
            Ok(DeviceTensor::Descriptors {
                regions: 4,
                capacity: 1024,
                dim: 256
            })
        );
    }
}
