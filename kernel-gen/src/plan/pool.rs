//! The plan of a standalone `max_pool2` ([`crate::ops::max_pool2`] has its kernels; a pool the
//! conv before it takes into its step is [`super::conv_pool`]'s): by row-selection matmuls on
//! whole input tiles where the format, fidelity and width allow, else by gathered taps.

use serde::{Deserialize, Serialize};
use superpoint_graph::Node;

use crate::device::{Fidelity, Format, Grid, Precision};
use crate::layout::ActivationShape;

use super::{cb, cb_of, CbKind, NodePlan, OpPlan, Split};

/// A 2×2 max-pool's shape in tiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolPlan {
    pub channels: u32,
    pub height: u32,
    pub width: u32,
    pub in_tiles: u32,
    pub cache_slots: u32,
    /// Pool by 0/1 row-selection matmuls on whole input tiles (bf16 activations and an output
    /// width that is a multiple of 16, so each half block of 16 output pixels pools two whole
    /// input tiles; HiFi2 or more, so SrcA keeps the whole bf16 activation); otherwise the reader
    /// gathers the tap rows.
    pub select: bool,
}

/// Input tiles the max-pool reader caches.
const POOL_CACHE_SLOTS: u32 = 8;

/// Plans max-pool `node` of an activation of shape `input` at `precision` on `grid`.
pub(super) fn plan_node(
    node: &Node,
    input: ActivationShape,
    precision: Precision,
    grid: Grid,
) -> NodePlan {
    let shape = ActivationShape {
        height: input.height / 2,
        width: input.width / 2,
        ..input
    };
    let in_tiles = input.channel_tiles() as u32;
    let select = input.format == Format::Bf16
        && precision.fidelity >= Fidelity::HiFi2
        && shape.width % 16 == 0;
    let cbs = if select {
        vec![
            cb(0, "cb_src", 8, CbKind::Stream),
            cb(1, "cb_select", 4, CbKind::Resident),
            cb(2, "cb_vmax", 2, CbKind::Stream),
            cb(3, "cb_identity", 1, CbKind::Resident),
            cb(16, "cb_out", 2, CbKind::Stream),
        ]
    } else {
        vec![
            cb_of(input.format, 0, "cb_taps", 8, CbKind::Stream),
            cb_of(
                input.format,
                1,
                "cb_cache",
                POOL_CACHE_SLOTS,
                CbKind::Scratch,
            ),
            cb_of(input.format, 16, "cb_out", 2, CbKind::Stream),
        ]
    };
    NodePlan {
        name: node.name.clone(),
        inputs: node.inputs.clone(),
        output: node.name.clone(),
        precision,
        split: Split::new(grid, shape.pixel_tiles() as u32),
        cbs,
        op: OpPlan::MaxPool2(PoolPlan {
            channels: input.channels as u32,
            height: input.height as u32,
            width: input.width as u32,
            in_tiles,
            cache_slots: POOL_CACHE_SLOTS,
            select,
        }),
    }
}
