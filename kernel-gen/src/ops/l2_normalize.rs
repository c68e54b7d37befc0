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

use crate::kir::{
    args, blocks, cb_format, cb_id, exact_fp32_copies, filled_pages, format_args, input, names,
    per_core, reduce_scaler, share_args, Arg, BinaryOp, Call, Kernel, KirError, Lowering, ReduceOp,
    Role, SfpuOp, Trips, ALL_FACES,
};
use crate::plan::l2_normalize::L2NormalizePlan;
use crate::plan::NodePlan;

impl Lowering for L2NormalizePlan {
    fn op(&self) -> &'static str {
        "l2_normalize"
    }

    fn kernels(&self, node: &NodePlan) -> Result<Vec<Kernel>, KirError> {
        kernels(node, self)
    }
}

/// The reader, compute and writer kernels of a planned normalisation.
fn kernels(node: &NodePlan, p: &L2NormalizePlan) -> Result<Vec<Kernel>, KirError> {
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
        runtime_args: share_args(node, &[&source]),
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
            filled_pages(floor, 1, 4096).to_vec(),
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
                                faces: ALL_FACES,
                            },
                            Call::Sfpu {
                                op: SfpuOp::Rsqrt,
                                tiles: 1,
                                faces: ALL_FACES,
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
        runtime_args: share_args(node, &[&node.output]),
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
