//! The writer builds the views of the row above (issue 18): a shifted-view conv core's first W/32
//! output blocks each need three rows of views (above, beside and below them) where the later
//! blocks need one, so its reader, which built them all, held the compute back over those
//! blocks. Where the writer has nothing to do before its first output (no weights multicast,
//! no staging), it runs the pipeline of the row above instead (`conv2d/views_above.cpp.tera`),
//! on the other RISC-V and its NoC, as tt-metal's convs split their reader over both
//! data-movement cores.
//!
//! Two data-less CBs order them: [`RING_READY_CB`] (reader → writer: the zero tile and the two
//! blocks the pipelines share are in) and [`ABOVE_CB`] (writer → reader: a page per finished view
//! of the row above, W/32 pages, so the writer never waits for the reader to take them).

use super::conv::TOKEN_BYTES;
use super::staged::STAGE_WEIGHTS_CB;
use super::{CbKind, CbPlan, NodePlan, OpPlan};
use crate::device::Format;

/// The id and name of the reader's signal that the writer may start ([`RING_READY_CB`]).
pub const RING_READY_CB: (u32, &str) = (9, "cb_ring_ready");
/// The id and name of the writer's signals, one per finished view of the row above.
pub const ABOVE_CB: (u32, &str) = (10, "cb_above");

/// Whether the writer of conv step `node` builds the views of the row above: shifted views with
/// whole blocks a row (with half rows the reader builds every view before its first block),
/// weights kept in L1 (no multicast on any writer), no fused convs, and no staging but with the
/// pool fused (whose writer has no output before its first unit's lower row: it stages after
/// the views).
fn writer_may_build_views(node: &NodePlan) -> bool {
    let OpPlan::Conv2d(c) = &node.op else {
        return false;
    };
    let stages = node.cbs.iter().any(|cb| cb.id == STAGE_WEIGHTS_CB.0);
    c.shifted
        && !c.half_rows()
        && c.weights_in_l1
        && c.fused.is_empty()
        && !c.frame_rows
        && (c.pooled || !stages)
}

/// Gives the writers of `nodes` that may build the views of the row above
/// ([`writer_may_build_views`]) that work and its two CBs (after staging is planned: a stager's
/// writer stages instead).
pub fn assign(nodes: &mut [NodePlan]) {
    for node in nodes.iter_mut().filter(|n| writer_may_build_views(n)) {
        let OpPlan::Conv2d(c) = &mut node.op else {
            continue;
        };
        c.writer_views = true;
        let signals = |(id, name): (u32, &str), pages| CbPlan {
            id,
            name: name.to_string(),
            pages,
            page_bytes: TOKEN_BYTES,
            format: Format::Bf16,
            kind: CbKind::Stream,
            buffer: None,
        };
        let above = c.width / 32;
        node.cbs
            .extend([signals(RING_READY_CB, 1), signals(ABOVE_CB, above)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Grid;
    use crate::variants::main_program;

    /// The shipped 640×480 programs on both grids: the writers of conv1b, conv2a, conv2b (which
    /// stages conv3a's weights after its views: its pool is fused) and conv3a build the views
    /// above (weights in L1, whole blocks a row; W/32 signals each); conv3b's weights are
    /// multicast from DRAM, conv4a/b have half rows (W 80), the heads' convs are fused, sliced
    /// or 1×1. Without a resident copy or a slot (the weights multicast on the writers), none.
    #[test]
    fn writers_build_the_views_above_where_they_have_nothing_else_first() {
        let with_views = |planned: &super::super::Plan| -> Vec<(String, u32)> {
            planned
                .nodes
                .iter()
                .filter_map(|n| match &n.op {
                    OpPlan::Conv2d(c) if c.writer_views => Some((
                        n.name.clone(),
                        n.cbs.iter().find(|cb| cb.name == ABOVE_CB.1)?.pages,
                    )),
                    _ => None,
                })
                .collect()
        };
        for grid in [Grid::ETH_DISPATCH, Grid { x: 11, y: 10 }] {
            let variant = main_program(640, 480, None, grid);
            let planned = crate::staging::plan(&variant.graph, &variant.params).expect("plans");
            let expected = [
                ("conv1b", 20),
                ("conv2a", 10),
                ("conv2b", 10),
                ("conv3a", 5),
            ]
            .map(|(n, p)| (n.to_string(), p))
            .to_vec();
            assert_eq!(with_views(&planned), expected);
            let in_dram = crate::plan::PlanParams {
                l1_activations: false,
                ..variant.params
            };
            let planned = crate::staging::plan(&variant.graph, &in_dram).expect("plans");
            assert_eq!(with_views(&planned), Vec::new());
        }
    }
}
