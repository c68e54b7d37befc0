//! `L2Normalize` of a channels-last activation (the dense descriptors: 256 channels = 8 channel
//! tiles per 32-pixel block), Activation layout in, [`PixelRows`](crate::DeviceTensor::PixelRows)
//! out (so the sampler fetches a pixel's channels with one NoC read), bf16 or Float32 (the input's
//! format, which the planner requires to be the node's).
//!
//! Blocks of 32 pixels are split over the cores like a convolution. Per block the compute kernel
//! squares every channel tile (`mul_tiles`, exact at HiFi4, packed Float32), sums the squares of
//! each row over all channel tiles (reduce SUM into one DST tile), floors the sum at 1e-24 with
//! `binary_max_tile` against a constant tile (the reference's `max(norm, 1e-12)`, so an all-zero
//! pixel stays zero instead of 0 · ∞), takes `rsqrt`, and multiplies every channel tile by it
//! (column broadcast), packing in the activation format with `pack_untilize_dest` (each DST
//! group at its column offset of the block's 32 pixel rows), and the writer stores the block as
//! one page. Padding channels are zero and add nothing to the sums.
//! Precision: unless a node override says otherwise, HiFi4 (HiFi2 truncates SrcB to 7 bits,
//! i.e. both the squares and the broadcast factor, up to 2–4 bf16 ulps).

use serde::{Deserialize, Serialize};

use crate::device::Grid;
use crate::kir::{
    args, blocks, cb_format, cb_id, exact_fp32_copies, filled_pages, format_args, input, names,
    per_core, reduce_scaler, Arg, BinaryOp, Call, Kernel, KirError, ReduceOp, Role, SfpuOp, Trips,
};
use crate::layout::ActivationShape;
use crate::plan::{
    cb, cb_fp32, cb_of, largest_divisor_within, CbKind, NodePlan, OpPlan, PlanParams, Split,
};

/// The floor of the squared norm: the reference divides by `max(‖x‖, 1e-12)`.
pub const SQUARED_NORM_FLOOR: f32 = 1e-24;

/// The shape of an L2 normalisation in tiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct L2NormalizePlan {
    pub channels: u32,
    pub height: u32,
    pub width: u32,
    /// Channel tiles per block.
    pub in_tiles: u32,
    /// Channel tiles per DST acquire (a divisor of `in_tiles` within the DST capacity).
    pub group: u32,
    /// f32 bits of [`SQUARED_NORM_FLOOR`].
    pub floor_bits: u32,
}

/// Plans the normalisation of `input` by node `name` reading buffer `source`.
pub fn node_plan(
    name: &str,
    source: &str,
    input: ActivationShape,
    params: &PlanParams,
    grid: Grid,
) -> NodePlan {
    let precision = super::hifi4_unless_overridden(params, name);
    let in_tiles = input.channel_tiles() as u32;
    let group = largest_divisor_within(in_tiles, precision.dst_tiles());
    NodePlan {
        name: name.to_string(),
        inputs: vec![source.to_string()],
        output: name.to_string(),
        precision,
        split: Split::new(grid, input.pixel_tiles() as u32),
        cbs: vec![
            cb_of(input.format, 0, "cb_in", 2 * in_tiles, CbKind::Stream),
            cb(1, "cb_scaler", 1, CbKind::Resident),
            cb_fp32(2, "cb_floor", 1, CbKind::Resident),
            cb_fp32(3, "cb_squares", in_tiles, CbKind::Stream),
            cb_fp32(4, "cb_factor", 1, CbKind::Stream),
            cb_of(input.format, 16, "cb_out", 2 * in_tiles, CbKind::Stream),
        ],
        op: OpPlan::L2Normalize(L2NormalizePlan {
            channels: input.channels as u32,
            height: input.height as u32,
            width: input.width as u32,
            in_tiles,
            group,
            floor_bits: SQUARED_NORM_FLOOR.to_bits(),
        }),
    }
}

/// The reader, compute and writer kernels of a planned normalisation.
pub fn kernels(node: &NodePlan, p: &L2NormalizePlan) -> Result<Vec<Kernel>, KirError> {
    let source = input(node, 0)?;
    let cb_in = cb_id(node, "cb_in")?;
    let scaler = cb_id(node, "cb_scaler")?;
    let floor = cb_id(node, "cb_floor")?;
    let squares = cb_id(node, "cb_squares")?;
    let factor = cb_id(node, "cb_factor")?;
    let out = cb_id(node, "cb_out")?;
    let format = cb_format(node, "cb_in")?;
    let tile = format.tile_bytes();
    let [tile_bytes, fp32] = format_args(format);
    let shape = args(&[
        ("in_tiles", p.in_tiles),
        ("group", p.group),
        ("floor_bits", p.floor_bits),
        tile_bytes,
        fp32,
    ]);
    let (t, g) = (p.in_tiles, p.group);
    let groups = t / g;
    let reader = Kernel {
        role: Role::Reader,
        template: "l2_normalize/reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: names(&["input_addr", "block_start", "block_count"]),
        runtime_args: per_core(node, |start, count| {
            vec![
                Arg::BufferAddress(source.clone()),
                Arg::Const(start),
                Arg::Const(count),
            ]
        }),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: [
            vec![Call::CbReserve {
                cb: scaler,
                pages: 1,
            }],
            reduce_scaler(scaler),
            vec![
                Call::CbPush {
                    cb: scaler,
                    pages: 1,
                },
                Call::CbReserve {
                    cb: floor,
                    pages: 1,
                },
            ],
            filled_pages(floor, 1).to_vec(),
            vec![
                Call::CbPush {
                    cb: floor,
                    pages: 1,
                },
                blocks(
                    Trips::Blocks,
                    vec![
                        Call::CbReserve {
                            cb: cb_in,
                            pages: t,
                        },
                        Call::DramRead {
                            buffer: source.clone(),
                            pages: t,
                            page_bytes: tile,
                            cb: cb_in,
                        },
                        Call::CbPush {
                            cb: cb_in,
                            pages: t,
                        },
                    ],
                ),
            ],
        ]
        .concat(),
    };
    let grouped = |body: Vec<Call>| Call::Loop {
        trips: Trips::Fixed(groups),
        body,
    };
    let compute = Kernel {
        role: Role::Compute,
        template: "l2_normalize/compute.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: names(&["block_count"]),
        runtime_args: per_core(node, |_, count| vec![Arg::Const(count)]),
        precision: Some(node.precision),
        unpack_to_dest_fp32: exact_fp32_copies(node, &["cb_floor"]),
        body: vec![
            Call::CbWait {
                cb: scaler,
                pages: 1,
            },
            Call::CbWait {
                cb: floor,
                pages: 1,
            },
            blocks(
                Trips::Blocks,
                vec![
                    Call::CbWait {
                        cb: cb_in,
                        pages: t,
                    },
                    grouped(vec![
                        Call::CbReserve {
                            cb: squares,
                            pages: g,
                        },
                        Call::Dst {
                            tiles: g,
                            body: vec![
                                Call::Binary {
                                    op: BinaryOp::Mul,
                                    tiles: g,
                                },
                                Call::Pack {
                                    cb: squares,
                                    tiles: g,
                                },
                            ],
                        },
                        Call::CbPush {
                            cb: squares,
                            pages: g,
                        },
                    ]),
                    Call::CbWait {
                        cb: squares,
                        pages: t,
                    },
                    Call::CbReserve {
                        cb: factor,
                        pages: 1,
                    },
                    Call::Dst {
                        tiles: 2,
                        body: vec![
                            Call::Reduce {
                                op: ReduceOp::SumRow,
                                tiles: t,
                            },
                            Call::Copy { tiles: 1 },
                            Call::Sfpu {
                                op: SfpuOp::Max,
                                tiles: 1,
                            },
                            Call::Sfpu {
                                op: SfpuOp::Rsqrt,
                                tiles: 1,
                            },
                            Call::Pack {
                                cb: factor,
                                tiles: 1,
                            },
                        ],
                    },
                    Call::CbPush {
                        cb: factor,
                        pages: 1,
                    },
                    Call::CbPop {
                        cb: squares,
                        pages: t,
                    },
                    Call::CbWait {
                        cb: factor,
                        pages: 1,
                    },
                    Call::CbReserve { cb: out, pages: t },
                    grouped(vec![Call::Dst {
                        tiles: g,
                        body: vec![
                            Call::Binary {
                                op: BinaryOp::MulBcastCols,
                                tiles: g,
                            },
                            Call::Pack { cb: out, tiles: g },
                        ],
                    }]),
                    Call::CbPush { cb: out, pages: t },
                    Call::CbPop {
                        cb: factor,
                        pages: 1,
                    },
                    Call::CbPop {
                        cb: cb_in,
                        pages: t,
                    },
                ],
            ),
            Call::CbPop {
                cb: floor,
                pages: 1,
            },
            Call::CbPop {
                cb: scaler,
                pages: 1,
            },
        ],
    };
    let writer = Kernel {
        role: Role::Writer,
        template: "l2_normalize/writer.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape,
        runtime_arg_names: names(&["output_addr", "block_start", "block_count"]),
        runtime_args: per_core(node, |start, count| {
            vec![
                Arg::BufferAddress(node.output.clone()),
                Arg::Const(start),
                Arg::Const(count),
            ]
        }),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: vec![blocks(
            Trips::Blocks,
            vec![
                Call::CbWait { cb: out, pages: t },
                Call::DramWrite {
                    buffer: node.output.clone(),
                    pages: 1,
                    page_bytes: t * tile,
                    cb: out,
                },
                Call::CbPop { cb: out, pages: t },
            ],
        )],
    };
    Ok(vec![reader, compute, writer])
}

#[cfg(test)]
mod tests {
    use crate::device::{Fidelity, Precision};
    use superpoint_graph::superpoint;

    use super::*;
    use crate::plan::plan;

    #[test]
    fn the_640x480_descriptors_in_groups_of_four_fp32_tiles() {
        let graph = superpoint(640, 480).pruned(&["descriptors_dense"]);
        let mut params = PlanParams {
            external: ["convDb".to_string()].into(),
            ..PlanParams::default()
        };
        let planned = plan(&graph, &params).expect("plans");
        let node = &planned.nodes[0];
        // 60×80 pixels = 150 blocks of 32; 256 channels = 8 tiles in two fp32 DST groups.
        assert_eq!(
            (node.name.as_str(), node.split.blocks),
            ("descriptors_dense", 150)
        );
        assert_eq!(node.precision.fidelity, Fidelity::HiFi4);
        match &node.op {
            OpPlan::L2Normalize(p) => {
                assert_eq!((p.channels, p.in_tiles, p.group), (256, 8, 4));
                assert_eq!(f32::from_bits(p.floor_bits), 1e-24);
            }
            other => panic!("expected an L2 normalisation, got {other:?}"),
        }
        let bf16_dst = Precision {
            fp32_dest: false,
            ..Precision::PORT
        };
        params
            .overrides
            .insert("descriptors_dense".into(), bf16_dst);
        let planned = plan(&graph, &params).expect("plans");
        assert_eq!(planned.nodes[0].precision, bf16_dst);
        assert!(matches!(&planned.nodes[0].op, OpPlan::L2Normalize(p) if p.group == 8));
    }
}
