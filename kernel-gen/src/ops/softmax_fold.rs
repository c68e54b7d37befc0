//! `Softmax` over the 65 channels of the detector logits fused with `DustbinFold{cell: 8}`: one
//! program reads convPb's activation (channels-last bf16) and writes the score map in the Map
//! layout (Float32 32×32 spatial tiles). The probabilities are never stored channels-last.
//!
//! Work unit: one map tile = 4×4 cells = rows 0..15 of a tile row of cells (rows 16..31 hold no
//! cell: twice the FPU work per cell, for a finer split — 300 map tiles on 120 cores are at most
//! 3 per core where 150 pairs were 2 pairs = 4 tiles; the SFPU passes, the exp above all, work on
//! rows 0..15 only, [`ROWS_0_15`]); map tiles are split over
//! the cores like every other node. The reader gathers each map tile's
//! cells into a channels-last tile row (one cell row of a map tile is 4 consecutive cells of one
//! input block; a 4-slot cache keeps the block of each cell row), copying the rows of whole
//! channel tiles by local NoC reads and only the valid channels of a partial last one; both
//! halves of `cb_in` are filled once with the lowest finite value, which the padding channels of
//! the last channel tile keep (they drop out of the maximum and their exp is 0), as do the rows
//! without a cell.
//! The compute kernel runs a stable softmax in fp32 DST (row max, subtract with column
//! broadcast, exp, row sum, reciprocal, multiply) and packs the 64 kept channels as Float32. The
//! writer folds them: channel k of a cell is pixel row k/8, columns k%8 of the cell's 8×8 patch,
//! so every move is 8 consecutive values of one face row on both sides (32 bytes, a local NoC
//! copy); it assembles whole map tiles in L1 and writes each as one 4 KiB page.
//!
//! A `Softmax` lowers only as the first half of this pair: one that is a graph output or has
//! another consumer is rejected ([`crate::PlanError::SoftmaxWithoutFold`]), as is a fold whose input is
//! not such a softmax. Precision: unless a node override says otherwise, HiFi4, because the
//! final multiply puts the broadcast reciprocal in SrcB, which HiFi2 truncates to 7 bits (up to
//! 1.6 % per pixel).
use crate::kir::{
    args, blocks, cb_format, cb_id, fill_copies, format_args, input, names, per_core,
    reduce_scaler, share_args, Arg, BinaryOp, Call, Kernel, KirError, Lowering, ReduceOp, Role,
    SfpuOp, Trips,
};
use crate::layout::tensor::MAP_PAGE_BYTES;
use crate::plan::softmax_fold::{SoftmaxFoldPlan, CELLS_PER_TILE_SIDE};
use crate::plan::NodePlan;

/// The faces of a tile the compute's SFPU passes work on: 0 and 1, rows 0..15, the map tile's
/// cells (`VectorMode::R`, half of each tile's SFPU work).
const ROWS_0_15: u32 = 2;

impl Lowering for SoftmaxFoldPlan {
    fn op(&self) -> &'static str {
        "softmax_fold"
    }

    fn kernels(&self, node: &NodePlan) -> Result<Vec<Kernel>, KirError> {
        kernels(node, self)
    }
}

/// The reader, compute and writer kernels of a planned pair.
fn kernels(node: &NodePlan, p: &SoftmaxFoldPlan) -> Result<Vec<Kernel>, KirError> {
    let logits = input(node, 0)?;
    let cb_in = cb_id(node, "cb_in")?;
    let scaler = cb_id(node, "cb_scaler")?;
    let rows = cb_id(node, "cb_rows")?;
    let max = cb_id(node, "cb_max")?;
    let exp = cb_id(node, "cb_exp")?;
    let recip = cb_id(node, "cb_recip")?;
    let out = cb_id(node, "cb_out")?;
    let map = cb_id(node, "cb_map")?;
    let format = cb_format(node, "cb_in")?;
    let tile = format.tile_bytes();
    let [tile_bytes, fp32] = format_args(format);
    let shape = args(&[
        ("channels", p.channels),
        ("cell_width", p.cell_width),
        ("in_tiles", p.in_tiles),
        ("out_tiles", p.out_tiles),
        ("map_tiles_x", p.map_tiles_x),
        tile_bytes,
        fp32,
    ]);
    let (t, o) = (p.in_tiles, p.out_tiles);
    let cached = CELLS_PER_TILE_SIDE * t;
    // Per map tile the reader copies the 16 cells' rows of the whole channel tiles by local NoC
    // reads and stores the valid channels of a partial last one.
    let element = tile / 1024;
    let valid_last = p.channels - (t - 1) * 32;
    let (whole, partial) = if valid_last == 32 {
        (t, 0)
    } else {
        (t - 1, valid_last)
    };
    let reader = Kernel {
        role: Role::Reader,
        template: "softmax_fold/reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: names(&["input_addr", "tile_start", "tile_count"]),
        runtime_args: share_args(node, &[&logits]),
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
                    cb: cb_in,
                    pages: 2 * t,
                },
            ],
            // Both halves filled with the lowest value (`fill_words`: one 64-byte seed).
            vec![
                Call::L1Gather { bytes: 64 },
                Call::L1Copy {
                    from: cb_in,
                    cb: cb_in,
                    tiles: 2 * t,
                    row_bytes: 64,
                    transfers: fill_copies(2 * t * tile),
                },
            ],
            vec![
                Call::CbReserve {
                    cb: rows,
                    pages: cached,
                },
                blocks(
                    Trips::Blocks,
                    vec![
                        // Worst case: every cell row misses the cache.
                        Call::DramRead {
                            buffer: logits.clone(),
                            pages: cached,
                            page_bytes: tile,
                            cb: rows,
                        },
                        Call::CbReserve {
                            cb: cb_in,
                            pages: t,
                        },
                        Call::L1Copy {
                            from: rows,
                            cb: cb_in,
                            tiles: whole,
                            row_bytes: tile / 64,
                            // Two face rows for each of a cell row's 16 pixels.
                            transfers: 32 * whole,
                        },
                        Call::L1Gather {
                            bytes: 32 * partial * element,
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
    let compute = Kernel {
        role: Role::Compute,
        template: "softmax_fold/compute.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: names(&["tile_count"]),
        runtime_args: per_core(node, |_, count| vec![Arg::Const(count)]),
        precision: Some(node.precision),
        unpack_to_dest_fp32: Vec::new(),
        body: vec![
            Call::CbWait {
                cb: scaler,
                pages: 1,
            },
            blocks(
                Trips::Blocks,
                vec![
                    Call::CbWait {
                        cb: cb_in,
                        pages: t,
                    },
                    Call::CbReserve { cb: max, pages: 1 },
                    Call::Dst {
                        tiles: 1,
                        body: vec![
                            Call::Reduce {
                                op: ReduceOp::MaxRow,
                                tiles: t,
                            },
                            Call::Pack { cb: max, tiles: 1 },
                        ],
                    },
                    Call::CbPush { cb: max, pages: 1 },
                    Call::CbWait { cb: max, pages: 1 },
                    Call::CbReserve { cb: exp, pages: t },
                    Call::Dst {
                        tiles: t,
                        body: vec![
                            Call::Binary {
                                op: BinaryOp::SubBcastCols,
                                tiles: t,
                            },
                            Call::Sfpu {
                                op: SfpuOp::Exp,
                                tiles: t,
                                faces: ROWS_0_15,
                            },
                            Call::Pack { cb: exp, tiles: t },
                        ],
                    },
                    Call::CbPush { cb: exp, pages: t },
                    Call::CbPop { cb: max, pages: 1 },
                    Call::CbPop {
                        cb: cb_in,
                        pages: t,
                    },
                    Call::CbWait { cb: exp, pages: t },
                    Call::CbReserve {
                        cb: recip,
                        pages: 1,
                    },
                    Call::Dst {
                        tiles: 1,
                        body: vec![
                            Call::Reduce {
                                op: ReduceOp::SumRow,
                                tiles: t,
                            },
                            Call::Sfpu {
                                op: SfpuOp::Recip,
                                tiles: 1,
                                faces: ROWS_0_15,
                            },
                            Call::Pack {
                                cb: recip,
                                tiles: 1,
                            },
                        ],
                    },
                    Call::CbPush {
                        cb: recip,
                        pages: 1,
                    },
                    Call::CbWait {
                        cb: recip,
                        pages: 1,
                    },
                    Call::CbReserve { cb: out, pages: o },
                    Call::Dst {
                        tiles: o,
                        body: vec![
                            Call::Binary {
                                op: BinaryOp::MulBcastCols,
                                tiles: o,
                            },
                            Call::Pack { cb: out, tiles: o },
                        ],
                    },
                    Call::CbPush { cb: out, pages: o },
                    Call::CbPop {
                        cb: recip,
                        pages: 1,
                    },
                    Call::CbPop { cb: exp, pages: t },
                ],
            ),
            Call::CbPop {
                cb: scaler,
                pages: 1,
            },
        ],
    };
    let writer = Kernel {
        role: Role::Writer,
        template: "softmax_fold/writer.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape,
        runtime_arg_names: names(&["output_addr", "tile_start", "tile_count"]),
        runtime_args: share_args(node, &[&node.output]),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: vec![
            Call::CbReserve { cb: map, pages: 1 },
            blocks(
                Trips::Blocks,
                vec![
                    Call::CbWait { cb: out, pages: o },
                    // The fold: 32-byte runs of 8 values, by local NoC copies.
                    Call::L1Copy {
                        from: out,
                        cb: map,
                        tiles: 1,
                        row_bytes: 32,
                        // 8 runs for each of the 16 cells.
                        transfers: 128,
                    },
                    Call::DramWrite {
                        buffer: node.output.clone(),
                        pages: 1,
                        page_bytes: MAP_PAGE_BYTES,
                        cb: map,
                    },
                    Call::CbPop { cb: out, pages: o },
                ],
            ),
        ],
    };
    Ok(vec![reader, compute, writer])
}
