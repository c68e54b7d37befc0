//! Whether a convolution takes the 2×2 max-pool after it into its own step (the kernels are
//! [`crate::ops::conv_pool`]'s): the pool must be the conv's only consumer, nothing else may
//! read the conv's output, and every core of the conv's split must compute whole pairs of image
//! rows.

use std::collections::BTreeSet;

use superpoint_graph::{Graph, Node, Op};

use crate::device::{Fidelity, Format, Limits};

use super::conv::IDENTITY_CB;
use super::{
    cb, cbs_l1_bytes, largest_divisor_within, CbKind, ConvPlan, CoreWork, NodePlan, OpPlan,
    PlanParams,
};

/// The max-pool that `conv` may be fused with: its only consumer, with neither the conv's output
/// nor the pool's input wanted elsewhere (a graph output, kept in DRAM, outliving the program,
/// or the pool an external input).
pub(crate) fn consumer<'g>(
    graph: &'g Graph,
    conv: &Node,
    keep_in_dram: &BTreeSet<String>,
    params: &PlanParams,
) -> Option<&'g Node> {
    let mut consumers = graph.nodes.iter().filter(|n| n.inputs.contains(&conv.name));
    let pool = consumers.next()?;
    let wanted = keep_in_dram.contains(&conv.name)
        || params.outlive.contains(&conv.name)
        || graph.outputs.contains(&conv.name)
        || params.external.contains(&pool.name);
    (consumers.next().is_none() && matches!(pool.op, Op::MaxPool2) && !wanted).then_some(pool)
}

/// Whether `w`'s run of output blocks is whole pairs of image rows of `row_blocks` blocks.
fn whole_pairs(w: &CoreWork, row_blocks: u32) -> bool {
    w.start % (2 * row_blocks) == 0 && w.count % (2 * row_blocks) == 0
}

/// `conv` (planned alone) with the max-pool `pool` fused ([`ConvPlan::pooled`]), or `None` where
/// the fused kernels do not apply or their CBs would not fit in `limits` beside the arena's
/// `reserve`: the conv's output is the pool's, its group leaves half of DST for the upper row's
/// tiles, and its CBs trade the conv's output stream for the kept row (`cb_row`), the vertical
/// maxima of one output block (`cb_vmax`), the selection tiles, the identity tile and the pooled
/// tiles (`cb_out`).
pub(crate) fn fuse(
    conv: &NodePlan,
    pool: &Node,
    pool_format: Format,
    limits: &Limits,
    reserve: u32,
) -> Option<NodePlan> {
    let OpPlan::Conv2d(c) = &conv.op else {
        return None;
    };
    let precision = conv.precision;
    let row_blocks = c.width / 32;
    let applies = !c.frame_rows
        && c.slices == 1
        && conv.split.slices.is_empty()
        && precision.format == Format::Bf16
        && pool_format == Format::Bf16
        && precision.fidelity >= Fidelity::HiFi2
        && precision.dst_tiles() >= 2
        && c.width % 64 == 0
        && c.height % 2 == 0
        && conv.split.work.iter().all(|w| whole_pairs(w, row_blocks));
    if !applies {
        return None;
    }
    let group = largest_divisor_within(c.slice_tiles(), precision.dst_tiles() / 2);
    let slice_tiles = c.slice_tiles();
    let mut cbs: Vec<_> = conv
        .cbs
        .iter()
        .filter(|b| b.name != "cb_out" && b.name != "cb_identity")
        .cloned()
        .collect();
    cbs.extend([
        cb(5, "cb_row", row_blocks * slice_tiles, CbKind::Stream),
        cb(6, "cb_select", 4, CbKind::Resident),
        cb(7, "cb_vmax", 2 * slice_tiles, CbKind::Stream),
        cb(IDENTITY_CB, "cb_identity", 1, CbKind::Resident),
        cb(16, "cb_out", 2, CbKind::Stream),
    ]);
    if cbs_l1_bytes(&cbs, limits.l1_alignment) + u64::from(reserve) > u64::from(limits.l1_usable())
    {
        return None;
    }
    Some(NodePlan {
        output: pool.name.clone(),
        cbs,
        op: OpPlan::Conv2d(ConvPlan {
            group,
            pooled: true,
            identity_bias: true,
            ..c.clone()
        }),
        ..conv.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Grid;
    use crate::plan::plan;
    use superpoint_graph::superpoint;

    /// (step name, output, pooled) of every conv step, and the pool steps, of SuperPoint at
    /// 640×480 on `grid`.
    fn steps(grid: Grid) -> Vec<(String, String, bool)> {
        let params = PlanParams {
            grid,
            ..PlanParams::default()
        };
        let planned = plan(&superpoint(640, 480), &params).expect("plans");
        planned
            .nodes
            .iter()
            .filter_map(|n| match &n.op {
                OpPlan::Conv2d(c) => Some((n.name.clone(), n.output.clone(), c.pooled)),
                OpPlan::MaxPool2(_) => Some((n.name.clone(), n.output.clone(), false)),
                _ => None,
            })
            .collect()
    }

    fn step(steps: &[(String, String, bool)], name: &str) -> Option<(String, bool)> {
        steps
            .iter()
            .find(|s| s.0 == name)
            .map(|s| (s.1.clone(), s.2))
    }

    /// On 12×10, conv1b (80 blocks a core: 4 of its 640-pixel rows) and conv2b (20: 2 of its
    /// 320-pixel rows) take their pools; conv3b (5 blocks: one 160-pixel row) does not, nor do
    /// the convs followed by a conv. On 11×10 (⌈9600/110⌉ = 88 blocks, runs starting mid-row)
    /// every pool keeps its program (and each step's output is its first conv's: the fused
    /// `convPa+convDa` writes convPa's, and convDa's).
    #[test]
    fn pools_fuse_where_every_core_holds_whole_row_pairs() {
        let on_12x10 = steps(Grid::ETH_DISPATCH);
        assert_eq!(step(&on_12x10, "conv1b"), Some(("pool1".into(), true)));
        assert_eq!(step(&on_12x10, "conv2b"), Some(("pool2".into(), true)));
        assert_eq!(step(&on_12x10, "conv3b"), Some(("conv3b".into(), false)));
        assert_eq!(step(&on_12x10, "pool3"), Some(("pool3".into(), false)));
        assert_eq!(step(&on_12x10, "conv1a"), Some(("conv1a".into(), false)));
        assert_eq!(step(&on_12x10, "pool1"), None);
        assert_eq!(step(&on_12x10, "pool2"), None);
        let on_11x10 = steps(Grid::TENSIX_DISPATCH);
        assert!(on_11x10
            .iter()
            .all(|s| !s.2 && s.0.split('+').next() == Some(s.1.as_str())));
        for pool in ["pool1", "pool2", "pool3"] {
            assert_eq!(step(&on_11x10, pool), Some((pool.into(), false)));
        }
    }

    /// The conv's output stays a buffer (and the pool a program) when something else reads it:
    /// kept in DRAM, a graph output, or read after the program.
    #[test]
    fn a_conv_output_read_elsewhere_is_not_fused() {
        let graph = superpoint(640, 480);
        let unfused = |params: PlanParams| {
            let planned = plan(&graph, &params).expect("plans");
            planned.nodes.iter().any(|n| n.name == "pool1")
                && planned.buffers.iter().any(|b| b.name == "conv1b")
        };
        assert!(unfused(PlanParams {
            keep_in_dram: BTreeSet::from(["conv1b".to_string()]),
            ..PlanParams::default()
        }));
        assert!(unfused(PlanParams {
            outlive: BTreeSet::from(["conv1b".to_string()]),
            ..PlanParams::default()
        }));
        let mut with_output = graph.clone();
        with_output.outputs.push("conv1b".into());
        let planned = plan(&with_output, &PlanParams::default()).expect("plans");
        assert!(planned.nodes.iter().any(|n| n.name == "pool1"));
        // LoFi would round the activations the selection matmuls pass through.
        let lofi = PlanParams {
            precision: crate::device::Precision {
                fidelity: Fidelity::LoFi,
                ..crate::device::Precision::PORT
            },
            ..PlanParams::default()
        };
        assert!(unfused(lofi));
    }
}
