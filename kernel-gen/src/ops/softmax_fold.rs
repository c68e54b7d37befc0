//! `Softmax` over the 65 channels of the detector logits fused with `DustbinFold{cell: 8}`: one
//! program reads convPb's activation (channels-last bf16) and writes the score map in the Map
//! layout (Float32 32×32 spatial tiles). The probabilities are never stored channels-last.
//!
//! Work unit: one map tile = 4×4 cells = rows 0..15 of a tile row of cells (rows 16..31 hold no
//! cell: twice the compute per cell, which is small, for a finer split — 300 map tiles on 120
//! cores are at most 3 per core where 150 pairs were 2 pairs = 4 tiles); map tiles are split over
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
//! another consumer is rejected ([`PlanError::SoftmaxWithoutFold`]), as is a fold whose input is
//! not such a softmax. Precision: unless a node override says otherwise, HiFi4, because the
//! final multiply puts the broadcast reciprocal in SrcB, which HiFi2 truncates to 7 bits (up to
//! 1.6 % per pixel).

use serde::{Deserialize, Serialize};
use superpoint_graph::{Graph, Node, Op};

use crate::device::Grid;
use crate::kir::{
    args, blocks, cb_format, cb_id, format_args, input, names, per_core, reduce_scaler, Arg,
    BinaryOp, Call, Kernel, KirError, ReduceOp, Role, SfpuOp, Trips,
};
use crate::layout::tensor::MAP_PAGE_BYTES;
use crate::layout::{tiles, ActivationShape};
use crate::plan::{cb, cb_fp32, cb_of, CbKind, NodePlan, OpPlan, PlanError, PlanParams, Split};

/// The only cell size the device fold handles: a 32×32 map tile is 4×4 cells.
pub const CELL: usize = 8;
/// Cells per side of a map tile.
const CELLS_PER_TILE_SIDE: u32 = 32 / CELL as u32;

/// The shape of a fused softmax + fold in tiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoftmaxFoldPlan {
    /// Channels of the logits (cell² + 1).
    pub channels: u32,
    /// Cells per row of the logits (W / 8).
    pub cell_width: u32,
    /// Channel tiles of the logits.
    pub in_tiles: u32,
    /// Channel tiles of the kept probabilities (cell² / 32).
    pub out_tiles: u32,
    /// Map tiles per map row (W / 32) and in all.
    pub map_tiles_x: u32,
    pub map_tiles: u32,
}

/// Accepts a `Softmax` node only when a `DustbinFold` is its single consumer and it is not a
/// graph output; that fold plans the pair.
pub fn defer(graph: &Graph, node: &Node) -> Result<(), PlanError> {
    let consumers: Vec<&Node> = graph
        .nodes
        .iter()
        .filter(|n| n.inputs.contains(&node.name))
        .collect();
    let fused = matches!(consumers.as_slice(), [n] if matches!(n.op, Op::DustbinFold { .. }));
    if !fused || graph.outputs.contains(&node.name) {
        return Err(PlanError::SoftmaxWithoutFold {
            node: node.name.clone(),
        });
    }
    Ok(())
}

/// The logits a `DustbinFold` node folds: the input of the softmax feeding it.
pub fn logits<'g>(
    graph: &'g Graph,
    node: &Node,
    params: &PlanParams,
) -> Result<&'g str, PlanError> {
    let source = node.inputs.first().and_then(|i| graph.node(i));
    match source {
        Some(s) if matches!(s.op, Op::Softmax) && !params.external.contains(&s.name) => s
            .inputs
            .first()
            .map(String::as_str)
            .ok_or_else(|| PlanError::FoldWithoutSoftmax {
                node: node.name.clone(),
                input: s.name.clone(),
            }),
        _ => Err(PlanError::FoldWithoutSoftmax {
            node: node.name.clone(),
            input: node.inputs.first().cloned().unwrap_or_default(),
        }),
    }
}

/// Plans the fused pair for the fold `node` reading the logits `logits` of shape `input`.
pub fn node_plan(
    node: &Node,
    cell: usize,
    logits: &str,
    input: ActivationShape,
    params: &PlanParams,
    grid: Grid,
) -> Result<NodePlan, PlanError> {
    if cell != CELL {
        return Err(PlanError::UnsupportedCell {
            node: node.name.clone(),
            cell,
        });
    }
    let (height, width) = (input.height * cell, input.width * cell);
    if height % 32 != 0 || width % 32 != 0 {
        return Err(PlanError::FrameNotMultiple32 {
            node: node.name.clone(),
            width,
            height,
        });
    }
    let in_tiles = input.channel_tiles() as u32;
    let out_tiles = tiles(cell * cell) as u32;
    let map_tiles_x = (width / 32) as u32;
    let map_tiles = map_tiles_x * (height / 32) as u32;
    Ok(NodePlan {
        name: node.name.clone(),
        inputs: vec![logits.to_string()],
        output: node.name.clone(),
        precision: super::hifi4_unless_overridden(params, &node.name),
        split: Split::new(grid, map_tiles),
        cbs: vec![
            cb_of(input.format, 0, "cb_in", 2 * in_tiles, CbKind::Stream),
            cb(1, "cb_scaler", 1, CbKind::Resident),
            cb_of(
                input.format,
                2,
                "cb_rows",
                CELLS_PER_TILE_SIDE * in_tiles,
                CbKind::Scratch,
            ),
            cb_fp32(3, "cb_max", 1, CbKind::Stream),
            cb_fp32(4, "cb_exp", in_tiles, CbKind::Stream),
            cb_fp32(5, "cb_recip", 1, CbKind::Stream),
            cb_fp32(16, "cb_out", 2 * out_tiles, CbKind::Stream),
            cb_fp32(17, "cb_map", 1, CbKind::Scratch),
        ],
        op: OpPlan::SoftmaxFold(SoftmaxFoldPlan {
            channels: input.channels as u32,
            cell_width: input.width as u32,
            in_tiles,
            out_tiles,
            map_tiles_x,
            map_tiles,
        }),
    })
}

/// The reader, compute and writer kernels of a planned pair.
pub fn kernels(node: &NodePlan, p: &SoftmaxFoldPlan) -> Result<Vec<Kernel>, KirError> {
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
        runtime_args: per_core(node, |start, count| {
            vec![
                Arg::BufferAddress(logits.clone()),
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
        runtime_args: per_core(node, |start, count| {
            vec![
                Arg::BufferAddress(node.output.clone()),
                Arg::Const(start),
                Arg::Const(count),
            ]
        }),
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

#[cfg(test)]
mod tests {
    use crate::device::{Fidelity, Precision};
    use std::collections::BTreeSet;

    use superpoint_graph::{superpoint, Graph, Node, Op};

    use super::*;
    use crate::plan::{plan, Content};

    fn cut_at(external: &[&str]) -> PlanParams {
        PlanParams {
            external: external
                .iter()
                .map(|s| s.to_string())
                .collect::<BTreeSet<_>>(),
            ..PlanParams::default()
        }
    }

    #[test]
    fn the_640x480_pair_is_one_node_writing_the_map() {
        let graph = superpoint(640, 480).pruned(&["scores"]);
        let planned = plan(&graph, &cut_at(&["convPb"])).expect("plans");
        assert_eq!(planned.nodes.len(), 1);
        let node = &planned.nodes[0];
        assert_eq!(
            (node.name.as_str(), node.inputs.as_slice()),
            ("scores", &["convPb".to_string()][..])
        );
        // 20×15 map tiles over 120 cores: the first 60 take three.
        assert_eq!(node.split.blocks, 300);
        assert_eq!(node.split.work[59].count, 3);
        assert_eq!(node.split.work[60].count, 2);
        assert_eq!(node.precision.fidelity, Fidelity::HiFi4);
        match &node.op {
            OpPlan::SoftmaxFold(p) => {
                assert_eq!(
                    (p.channels, p.cell_width, p.in_tiles, p.out_tiles),
                    (65, 80, 3, 2)
                );
                assert_eq!((p.map_tiles_x, p.map_tiles), (20, 300));
            }
            other => panic!("expected the fused pair, got {other:?}"),
        }
        let map = planned
            .buffers
            .iter()
            .find(|b| b.name == "scores")
            .expect("map buffer");
        assert_eq!((map.pages, map.page_bytes), (300, 4096));
        assert!(matches!(map.content, Content::Output { .. }));
    }

    #[test]
    fn an_override_sets_the_precision() {
        let graph = superpoint(64, 32).pruned(&["scores"]);
        let mut params = cut_at(&["convPb"]);
        params.overrides.insert("scores".into(), Precision::PORT);
        let planned = plan(&graph, &params).expect("plans");
        assert_eq!(planned.nodes[0].precision, Precision::PORT);
    }

    #[test]
    fn a_softmax_without_its_fold_is_rejected() {
        let graph = superpoint(64, 32).pruned(&["softmax"]);
        assert_eq!(
            plan(&graph, &cut_at(&["convPb"])).err(),
            Some(PlanError::SoftmaxWithoutFold {
                node: "softmax".into()
            })
        );
    }

    #[test]
    fn a_fold_of_an_external_softmax_is_rejected() {
        let graph = superpoint(64, 32).pruned(&["scores"]);
        assert_eq!(
            plan(&graph, &cut_at(&["softmax"])).err(),
            Some(PlanError::FoldWithoutSoftmax {
                node: "scores".into(),
                input: "softmax".into()
            })
        );
    }

    #[test]
    fn only_cell_8_folds_on_the_device() {
        let node = |name: &str, input: &str, op| Node {
            name: name.into(),
            inputs: vec![input.into()],
            op,
        };
        let graph = Graph {
            outputs: vec!["scores".into()],
            nodes: vec![
                Node {
                    name: "logits".into(),
                    inputs: vec![],
                    op: Op::InputPlane,
                },
                node(
                    "frame",
                    "logits",
                    Op::Resize {
                        width: 64,
                        height: 32,
                    },
                ),
                node(
                    "conv",
                    "frame",
                    Op::Conv2d {
                        weights: "conv".into(),
                        in_channels: 1,
                        out_channels: 17,
                        kernel: 1,
                        pad: 0,
                        relu: false,
                    },
                ),
                node("softmax", "conv", Op::Softmax),
                node("scores", "softmax", Op::DustbinFold { cell: 4 }),
            ],
        };
        assert_eq!(
            plan(&graph, &cut_at(&["conv"])).err(),
            Some(PlanError::UnsupportedCell {
                node: "scores".into(),
                cell: 4
            })
        );
    }
}
