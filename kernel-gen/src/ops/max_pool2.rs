//! Lowering of `max_pool2`: by row-selection matmuls on whole input tiles where the plan says
//! so ([`crate::plan::PoolPlan::select`]), else by the reader gathering the four taps of each
//! output tile through a small cache and the compute kernel taking their maximum. The selection
//! pieces are shared with the pool fused into a conv ([`super::conv_pool`]).

use crate::kir::{
    args, blocks, cb_format, cb_id, exact_fp32_copies, fill_copies, format_args, input, names,
    per_core, share_args, Arg, Call, CompileArg, Kernel, KirError, Lowering, Role, SfpuOp, Trips,
    ALL_FACES,
};
use crate::plan::{NodePlan, PoolPlan};

impl Lowering for PoolPlan {
    fn op(&self) -> &'static str {
        "max_pool2"
    }

    fn kernels(&self, node: &NodePlan) -> Result<Vec<Kernel>, KirError> {
        pool_kernels(node, self)
    }
}

fn pool_kernels(node: &NodePlan, p: &PoolPlan) -> Result<Vec<Kernel>, KirError> {
    if p.select {
        return pool_select_kernels(node, p);
    }
    let input = input(node, 0)?;
    let taps = cb_id(node, "cb_taps")?;
    let cache = cb_id(node, "cb_cache")?;
    let out = cb_id(node, "cb_out")?;
    let format = cb_format(node, "cb_taps")?;
    let tile = format.tile_bytes();
    let [tile_bytes, fp32] = format_args(format);
    let shape = args(&[
        ("height", p.height),
        ("width", p.width),
        ("in_tiles", p.in_tiles),
        ("cache_slots", p.cache_slots),
        tile_bytes,
        fp32,
    ]);
    let reader = Kernel {
        role: Role::Reader,
        template: "max_pool2/reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: names(&["input_addr", "block_start", "block_count"]),
        runtime_args: share_args(node, &[&input]),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: vec![
            Call::CbReserve {
                cb: cache,
                pages: p.cache_slots,
            },
            blocks(
                Trips::Blocks,
                vec![Call::Loop {
                    trips: Trips::Fixed(p.in_tiles),
                    body: vec![
                        Call::CbReserve { cb: taps, pages: 4 },
                        // Without cache hits every tap row reads its tile; the count is the worst case.
                        Call::DramRead {
                            buffer: input.clone(),
                            pages: 4,
                            page_bytes: tile,
                            cb: cache,
                        },
                        Call::L1Gather { bytes: 4 * tile },
                        Call::CbPush { cb: taps, pages: 4 },
                    ],
                }],
            ),
        ],
    };
    let compute = Kernel {
        role: Role::Compute,
        template: "max_pool2/compute.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: names(&["block_count"]),
        runtime_args: per_core(node, |_, count| vec![Arg::Const(count)]),
        precision: Some(node.precision),
        unpack_to_dest_fp32: exact_fp32_copies(node, &["cb_taps"]),
        body: vec![blocks(
            Trips::Blocks,
            vec![Call::Loop {
                trips: Trips::Fixed(p.in_tiles),
                body: vec![
                    Call::CbWait { cb: taps, pages: 4 },
                    Call::CbReserve { cb: out, pages: 1 },
                    Call::Dst {
                        tiles: 2,
                        body: vec![
                            Call::Copy { tiles: 4 },
                            Call::Sfpu {
                                op: SfpuOp::Max,
                                tiles: 3,
                                faces: ALL_FACES,
                            },
                            Call::Pack { cb: out, tiles: 1 },
                        ],
                    },
                    Call::CbPush { cb: out, pages: 1 },
                    Call::CbPop { cb: taps, pages: 4 },
                ],
            }],
        )],
    };
    let writer = pool_writer(node, p, shape)?;
    Ok(vec![reader, compute, writer])
}

/// The pool writer: output tile (block, channel tile) to page `block · in_tiles + channel tile`.
fn pool_writer(node: &NodePlan, p: &PoolPlan, shape: Vec<CompileArg>) -> Result<Kernel, KirError> {
    let out = cb_id(node, "cb_out")?;
    let tile = cb_format(node, "cb_out")?.tile_bytes();
    Ok(Kernel {
        role: Role::Writer,
        template: "max_pool2/writer.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape,
        runtime_arg_names: names(&["output_addr", "block_start", "block_count"]),
        runtime_args: share_args(node, &[&node.output]),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: vec![pooled_writes(node, out, tile, p.in_tiles, Trips::Blocks)],
    })
}

/// The pooled tiles' writes (`max_pool2/write_tiles.cpp.tera`): `trips` output blocks of
/// `in_tiles` tiles of CB `out`, one tile at a time.
pub(crate) fn pooled_writes(
    node: &NodePlan,
    out: u32,
    tile: u32,
    in_tiles: u32,
    trips: Trips,
) -> Call {
    blocks(
        trips,
        vec![Call::Loop {
            trips: Trips::Fixed(in_tiles),
            body: vec![
                Call::CbWait { cb: out, pages: 1 },
                Call::DramWrite {
                    buffer: node.output.clone(),
                    pages: 1,
                    page_bytes: tile,
                    cb: out,
                },
                Call::CbPop { cb: out, pages: 1 },
            ],
        }],
    )
}

/// The four 0/1 selection tiles of CB `select` (`max_pool2/selection.cpp.tera`).
pub(crate) fn selection_fill(select: u32) -> Vec<Call> {
    ones_fill(select, 4, 64)
}

/// `tiles` constant 0/1 tiles of CB `cb` with `ones` bf16 ones (`max_pool2/selection.cpp.tera`,
/// `common/identity.cpp.tera`): 64 zero bytes stored and doubled by local NoC copies, then the
/// ones stored.
pub(crate) fn ones_fill(cb: u32, tiles: u32, ones: u32) -> Vec<Call> {
    vec![
        Call::CbReserve { cb, pages: tiles },
        Call::L1Gather {
            bytes: 64 + ones * 2,
        },
        Call::L1Copy {
            from: cb,
            cb,
            tiles,
            row_bytes: 64,
            transfers: fill_copies(tiles * 2048),
        },
        Call::CbPush { cb, pages: tiles },
    ]
}

/// `tiles` output tiles pooled from `halves` (2, or 1: half an output block's pixels)
/// vertical-maximum blocks of `tiles` tiles (`max_pool2/select_tile.cpp.tera`): two selection
/// matmuls of a row of `tiles` a half, the SFPU maxima of the two taps, the pack to CB `out`.
pub(crate) fn select_tiles(out: u32, tiles: u32, halves: u32) -> Vec<Call> {
    vec![
        Call::CbReserve {
            cb: out,
            pages: tiles,
        },
        Call::Dst {
            tiles: 2 * tiles,
            body: vec![
                Call::Loop {
                    trips: Trips::Fixed(2 * halves),
                    body: vec![Call::Matmul {
                        ct: tiles,
                        rt: 1,
                        kt: 1,
                    }],
                },
                Call::Sfpu {
                    op: SfpuOp::Max,
                    tiles,
                    faces: ALL_FACES,
                },
                Call::Pack { cb: out, tiles },
            ],
        },
        Call::CbPush {
            cb: out,
            pages: tiles,
        },
    ]
}

/// Pooling by row-selection matmuls ([`PoolPlan::select`]): the reader writes the four 0/1
/// selection tiles and an identity tile once (zeroed by local NoC copies of 64 stored zero
/// bytes) and streams the four input tiles of each output tile; the compute kernel moves them
/// into DST as the identity times them, takes the SFPU maximum of the two input rows of each half
/// (through `cb_vmax`), forms each horizontal tap of it with two exact matmuls and takes the
/// maximum of the two: matmuls only, so one matmul init per kernel.
fn pool_select_kernels(node: &NodePlan, p: &PoolPlan) -> Result<Vec<Kernel>, KirError> {
    let input = input(node, 0)?;
    let src = cb_id(node, "cb_src")?;
    let select = cb_id(node, "cb_select")?;
    let identity = cb_id(node, "cb_identity")?;
    let vmax = cb_id(node, "cb_vmax")?;
    let out = cb_id(node, "cb_out")?;
    let [tile_bytes, fp32] = format_args(cb_format(node, "cb_src")?);
    let shape = args(&[
        ("height", p.height),
        ("width", p.width),
        ("in_tiles", p.in_tiles),
        tile_bytes,
        fp32,
    ]);
    let reader = Kernel {
        role: Role::Reader,
        template: "max_pool2/select_reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: names(&["input_addr", "block_start", "block_count"]),
        runtime_args: share_args(node, &[&input]),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: [
            selection_fill(select),
            ones_fill(identity, 1, 32),
            vec![blocks(
                Trips::Blocks,
                vec![Call::Loop {
                    trips: Trips::Fixed(p.in_tiles),
                    body: vec![
                        Call::CbReserve { cb: src, pages: 4 },
                        Call::DramRead {
                            buffer: input.clone(),
                            pages: 4,
                            page_bytes: 2048,
                            cb: src,
                        },
                        Call::CbPush { cb: src, pages: 4 },
                    ],
                }],
            )],
        ]
        .concat(),
    };
    let compute = Kernel {
        role: Role::Compute,
        template: "max_pool2/select_compute.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: names(&["block_count"]),
        runtime_args: per_core(node, |_, count| vec![Arg::Const(count)]),
        precision: Some(node.precision),
        unpack_to_dest_fp32: Vec::new(),
        body: vec![
            Call::CbWait {
                cb: select,
                pages: 4,
            },
            Call::CbWait {
                cb: identity,
                pages: 1,
            },
            blocks(
                Trips::Blocks,
                vec![Call::Loop {
                    trips: Trips::Fixed(p.in_tiles),
                    body: [
                        vec![
                            Call::CbWait { cb: src, pages: 4 },
                            Call::CbReserve { cb: vmax, pages: 2 },
                            Call::Dst {
                                tiles: 4,
                                body: vec![
                                    Call::Loop {
                                        trips: Trips::Fixed(4),
                                        body: vec![Call::Matmul {
                                            ct: 1,
                                            rt: 1,
                                            kt: 1,
                                        }],
                                    },
                                    Call::Sfpu {
                                        op: SfpuOp::Max,
                                        tiles: 2,
                                        faces: ALL_FACES,
                                    },
                                    Call::Pack { cb: vmax, tiles: 2 },
                                ],
                            },
                            Call::CbPush { cb: vmax, pages: 2 },
                            Call::CbPop { cb: src, pages: 4 },
                            Call::CbWait { cb: vmax, pages: 2 },
                        ],
                        select_tiles(out, 1, 2),
                        vec![Call::CbPop { cb: vmax, pages: 2 }],
                    ]
                    .concat(),
                }],
            ),
            Call::CbPop {
                cb: identity,
                pages: 1,
            },
            Call::CbPop {
                cb: select,
                pages: 4,
            },
        ],
    };
    let writer = pool_writer(node, p, shape)?;
    Ok(vec![reader, compute, writer])
}
