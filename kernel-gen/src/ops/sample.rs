//! `SampleDescriptors` on the device: bilinear sampling of the L2-normalised dense descriptor map
//! (pixel rows, C channels at Hc×Wc) at every keypoint candidate (the Candidates layout
//! written by `SelectKeypoints`), with the SuperGlue/HF formula and a second L2 normalisation,
//! into the Descriptors layout (row-major f32, row `region·capacity + record`).
//!
//! Design (the crate docs have the summary):
//! * **Work split**: region `i` of the candidates on core `i` of the grid (the same cores the
//!   candidates were split over). A core's output blocks are its tiles of 32 candidates; their
//!   number is only known at run time, at most `capacity / 32`, so the loops over them are
//!   [`Trips::Counted`] (bounded by the data, the bound is what the checks and the report use).
//! * **Count**: the reader reads the region's count (one 64-byte page of the counts buffer),
//!   clamps it to the capacity and pushes that page through `cb_count`; the compute kernel waits
//!   for it and reads it with `read_tile_value` (the one value all three compute threads see); the
//!   writer reads the count page itself.
//! * **Taps on the reader** (a data-movement RISC-V, no FPU): in integers, u = nx / dx with
//!   nx = (2x − cell + 1)(Wc − 1), dx = 2·cell·Wc − cell − 1 (the formula times 2), x0 =
//!   floor(nx / dx), remainder rx; each corner's weight is a ratio of integer products converted
//!   to f32 by long division (exact up to the 24-bit truncation). Needs dx·dy and |nx|, |ny|
//!   below 2³¹ (checked: frames up to thousands of pixels a side). The M extension (integer
//!   multiply and divide) is assumed; without it the compiler's libgcc calls are slower. Corners
//!   outside the map get weight 0 and a clamped row.
//! * **Gather**: 32 candidates per tile, candidate `c` on tile row `c`. The map is in the
//!   [`PixelRows`](crate::DeviceTensor::PixelRows) layout `L2Normalize` writes, so each corner
//!   of a candidate is one NoC read of the pixel's `32·channel_tiles` contiguous values (512 B
//!   bf16, 1 KiB Float32) into row `c` of that corner's row-major block of `cb_rows`. The
//!   weights go into column 0 of four fp32 tiles (zero on the rows beyond the count).
//! * **Compute** (fp32 DST): `tilize_block` of each corner's block into `channel_tiles` tiles
//!   (a datacopy through SrcA: a Float32 map is cut to TF32 there, as the multiply after it would
//!   cut it anyway); `mul_tiles_bcast_cols` per corner, the four products summed by
//!   packing with L1 accumulation into fp32 tiles; squares summed the same way; `reduce_tile`
//!   row sum; + 1e-24 (so a zero vector stays zero, as `max(‖v‖, 1e-12)` does); `rsqrt_tile`; a
//!   last `mul_tiles_bcast_cols` packed with `pack_untilize_dest`, so the tile leaves as 32
//!   row-major descriptor rows. The weights and the sampled values pass SrcB / SrcA as tf32, so
//!   the node runs at HiFi4 unless overridden (HiFi2 would cut the weights to 7 bits).
//! * **Writer**: one NoC write of a whole descriptor row (1 KiB) per candidate; rows beyond
//!   the count are left untouched.
//!
//! Per candidate: 4 NoC reads of one pixel row and one 8-byte record read, one 1 KiB write;
//! per tile of 32, 4·channel_tiles tilizes and 49 FPU tile operations at HiFi4, 2 SFPU and 49
//! packs. Next steps: read the two corners of a row (pixels p, p + 1 of one page) with one
//! read of two rows into a block two corners wide (halves the reads), and fetch each region's
//! neighbourhood of map rows once when its count is large (cuts the DRAM bytes).

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::device::{Fidelity, Format, Grid, Precision};
use crate::kir::{self, Arg, Call, CoreArgs, Kernel, KirError, ReduceOp, Role, SfpuOp, Trips};
use crate::layout::tensor::{CANDIDATE_BYTES, COUNT_STRIDE};
use crate::layout::{DeviceTensor, Part};
use crate::plan::{CbKind, CbPlan, CoreWork, NodePlan, OpPlan, PlanError, Split};

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
const CORNERS: u32 = 4;
/// Record slot stride in L1 (NoC L1 alignment).
const RECORD_SLOT: u32 = 16;
/// Candidates per tile: one per row.
const PER_TILE: u32 = 32;

fn cb(id: u32, name: &str, pages: u32, page_bytes: u32, format: Format, kind: CbKind) -> CbPlan {
    CbPlan {
        id,
        name: name.to_string(),
        pages,
        page_bytes,
        format,
        kind,
    }
}

/// The largest divisor of `n` that is at most `cap`.
fn largest_divisor_within(n: u32, cap: u32) -> u32 {
    (1..=cap.min(n)).rev().find(|d| n % d == 0).unwrap_or(1)
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

/// Where the counted loops get their trips: region `i`'s count page, one trip per tile of 16.
pub fn count_source(s: &SamplePlan) -> kir::CountSource {
    kir::CountSource {
        buffer: s.counts.clone(),
        page_bytes: COUNT_STRIDE,
        per_trip: PER_TILE,
        per_block: 1,
    }
}

/// The runtime args of every core: `f(region)`.
fn per_region(node: &NodePlan, f: impl Fn(u32) -> Vec<Arg>) -> Vec<CoreArgs> {
    node.split
        .work
        .iter()
        .enumerate()
        .map(|(region, w)| CoreArgs {
            core: w.core,
            args: f(region as u32),
        })
        .collect()
}

/// The reader, compute and writer kernels of a sampling node.
pub fn kernels(node: &NodePlan, s: &SamplePlan) -> Result<Vec<Kernel>, KirError> {
    let id = |name: &'static str| kir::cb_id(node, name);
    let (rows, neighbours, weights, scaler, count) = (
        id("cb_rows")?,
        id("cb_neighbours")?,
        id("cb_weights")?,
        id("cb_scaler")?,
        id("cb_count")?,
    );
    let (records, writer_count, out) = (id("cb_records")?, id("cb_writer_count")?, id("cb_out")?);
    let (sum, sq, inv) = (id("cb_sum")?, id("cb_sq")?, id("cb_inv")?);
    let ct = s.channel_tiles;
    let map_format = kir::cb_format(node, "cb_rows")?;
    let [tile_bytes, fp32] = kir::format_args(map_format);
    let row_bytes = ct * map_format.tile_bytes() / 32;
    let shape = kir::args(&[
        ("width", s.width),
        ("height", s.height),
        ("cell", s.cell),
        ("coarse_width", s.coarse_width),
        ("coarse_height", s.coarse_height),
        ("channel_tiles", ct),
        ("capacity", s.capacity),
        ("group", s.group),
        ("record_bytes", CANDIDATE_BYTES),
        ("count_bytes", COUNT_STRIDE),
        tile_bytes,
        fp32,
    ]);
    let counted = |body: Vec<Call>| Call::Loop {
        trips: Trips::Counted,
        body,
    };
    let reserve = |cb, pages| Call::CbReserve { cb, pages };
    let push = |cb, pages| Call::CbPush { cb, pages };
    let wait = |cb, pages| Call::CbWait { cb, pages };
    let pop = |cb, pages| Call::CbPop { cb, pages };
    let read_count = |cb| Call::DramPart {
        buffer: s.counts.clone(),
        write: false,
        transfers: 1,
        bytes: COUNT_STRIDE,
        offset_step: 0,
        cb,
    };
    let reader = Kernel {
        role: Role::Reader,
        template: "sample_descriptors/reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: kir::names(&["map_addr", "candidates_addr", "counts_addr", "region"]),
        runtime_args: per_region(node, |region| {
            vec![
                Arg::BufferAddress(s.map.clone()),
                Arg::BufferAddress(s.candidates.clone()),
                Arg::BufferAddress(s.counts.clone()),
                Arg::Const(region),
            ]
        }),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: [
            vec![
                reserve(count, 1),
                read_count(count),
                push(count, 1),
                reserve(scaler, 1),
            ],
            kir::reduce_scaler(scaler),
            vec![
                push(scaler, 1),
                reserve(records, 1),
                counted(vec![
                    Call::DramPart {
                        buffer: s.candidates.clone(),
                        write: false,
                        transfers: PER_TILE,
                        bytes: CANDIDATE_BYTES,
                        offset_step: 0,
                        cb: records,
                    },
                    reserve(rows, CORNERS * ct),
                    reserve(weights, CORNERS),
                    Call::DramPart {
                        buffer: s.map.clone(),
                        write: false,
                        transfers: PER_TILE * CORNERS,
                        bytes: row_bytes,
                        offset_step: row_bytes,
                        cb: rows,
                    },
                    // Per candidate and corner: the zeroed weight and the weight.
                    Call::L1Gather {
                        bytes: 2 * PER_TILE * CORNERS * 4,
                    },
                    push(rows, CORNERS * ct),
                    push(weights, CORNERS),
                ]),
            ],
        ]
        .concat(),
    };
    let groups = ct / s.group;
    let compute = Kernel {
        role: Role::Compute,
        template: "sample_descriptors/compute.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: Vec::new(),
        runtime_args: per_region(node, |_| Vec::new()),
        precision: Some(node.precision),
        unpack_to_dest_fp32: Vec::new(),
        body: vec![
            wait(count, 1),
            pop(count, 1),
            wait(scaler, 1),
            counted(vec![
                reserve(neighbours, CORNERS * ct),
                Call::Loop {
                    trips: Trips::Fixed(CORNERS),
                    body: vec![
                        wait(rows, ct),
                        Call::Loop {
                            trips: Trips::Fixed(ct),
                            body: vec![Call::Dst {
                                tiles: 1,
                                body: vec![
                                    Call::Copy { tiles: 1 },
                                    Call::Pack {
                                        cb: neighbours,
                                        tiles: 1,
                                    },
                                ],
                            }],
                        },
                        pop(rows, ct),
                    ],
                },
                push(neighbours, CORNERS * ct),
                wait(neighbours, CORNERS * ct),
                wait(weights, CORNERS),
                reserve(sum, ct),
                Call::Loop {
                    trips: Trips::Fixed(ct),
                    body: vec![Call::Dst {
                        tiles: CORNERS,
                        body: vec![
                            Call::Binary {
                                op: kir::BinaryOp::MulBcastCols,
                                tiles: CORNERS,
                            },
                            Call::Pack {
                                cb: sum,
                                tiles: CORNERS,
                            },
                        ],
                    }],
                },
                push(sum, ct),
                pop(weights, CORNERS),
                pop(neighbours, CORNERS * ct),
                wait(sum, ct),
                reserve(sq, 1),
                Call::Loop {
                    trips: Trips::Fixed(groups),
                    body: vec![Call::Dst {
                        tiles: s.group,
                        body: vec![
                            Call::Binary {
                                op: kir::BinaryOp::Mul,
                                tiles: s.group,
                            },
                            Call::Pack {
                                cb: sq,
                                tiles: s.group,
                            },
                        ],
                    }],
                },
                push(sq, 1),
                wait(sq, 1),
                reserve(inv, 1),
                Call::Dst {
                    tiles: 1,
                    body: vec![
                        Call::Reduce {
                            op: ReduceOp::SumRow,
                            tiles: 1,
                        },
                        Call::Sfpu {
                            op: SfpuOp::AddScalar,
                            tiles: 1,
                        },
                        Call::Sfpu {
                            op: SfpuOp::Rsqrt,
                            tiles: 1,
                        },
                        Call::Pack { cb: inv, tiles: 1 },
                    ],
                },
                push(inv, 1),
                pop(sq, 1),
                wait(inv, 1),
                reserve(out, ct),
                Call::Loop {
                    trips: Trips::Fixed(groups),
                    body: vec![Call::Dst {
                        tiles: s.group,
                        body: vec![
                            Call::Binary {
                                op: kir::BinaryOp::MulBcastCols,
                                tiles: s.group,
                            },
                            Call::Pack {
                                cb: out,
                                tiles: s.group,
                            },
                        ],
                    }],
                },
                push(out, ct),
                pop(inv, 1),
                pop(sum, ct),
            ]),
            pop(scaler, 1),
        ],
    };
    let writer = Kernel {
        role: Role::Writer,
        template: "sample_descriptors/writer.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape,
        runtime_arg_names: kir::names(&["output_addr", "counts_addr", "region"]),
        runtime_args: per_region(node, |region| {
            vec![
                Arg::BufferAddress(node.output.clone()),
                Arg::BufferAddress(s.counts.clone()),
                Arg::Const(region),
            ]
        }),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: vec![
            reserve(writer_count, 1),
            read_count(writer_count),
            counted(vec![
                wait(out, ct),
                Call::DramPart {
                    buffer: node.output.clone(),
                    write: true,
                    transfers: PER_TILE,
                    bytes: ct * 32 * 4,
                    offset_step: 0,
                    cb: out,
                },
                pop(out, ct),
            ]),
        ],
    };
    Ok(vec![reader, compute, writer])
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
