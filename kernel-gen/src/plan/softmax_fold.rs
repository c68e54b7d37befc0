//! The plan of a softmax fused with its dustbin fold ([`crate::ops::softmax_fold`] has the
//! method and its kernels): the pair is accepted only as such, split by map tiles, HiFi4 unless
//! overridden.

use serde::{Deserialize, Serialize};
use superpoint_graph::{Graph, Node, Op};

use crate::device::Grid;
use crate::layout::{tiles, ActivationShape};

use super::{
    cb, cb_fp32, cb_of, hifi4_unless_overridden, CbKind, NodePlan, OpPlan, PlanError, PlanParams,
    Split,
};

/// The only cell size the device fold handles: a 32×32 map tile is 4×4 cells.
pub const CELL: usize = 8;
/// Cells per side of a map tile.
pub(crate) const CELLS_PER_TILE_SIDE: u32 = 32 / CELL as u32;

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
        precision: hifi4_unless_overridden(params, &node.name),
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
