//! The plan of an `L2Normalize` ([`crate::ops::l2_normalize`] has its kernels): blocks of 32
//! pixels split over the cores, channel tiles in DST groups, HiFi4 unless overridden.

use serde::{Deserialize, Serialize};

use crate::device::Grid;
use crate::layout::ActivationShape;

use super::{
    cb, cb_fp32, cb_of, hifi4_unless_overridden, largest_divisor_within, CbKind, NodePlan, OpPlan,
    PlanParams, Split,
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
    let precision = hifi4_unless_overridden(params, name);
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
