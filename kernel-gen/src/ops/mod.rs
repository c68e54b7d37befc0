//! Per-op planning and kernel-IR lowering of the ops beyond convolution and max-pool: each
//! module plans one op family (its cores, CBs and parameters) and builds its reader / compute /
//! writer calls, against the layouts of [`crate::layout::DeviceTensor`].

pub mod conv_pool;
pub mod frame_conv;
pub mod l2_normalize;
pub mod nms;
pub mod resize;
pub mod resize_filter;
pub mod sample;
pub mod select_keypoints;
pub mod softmax_fold;

use crate::device::{Fidelity, Precision};
use crate::plan::PlanParams;

/// The precision of a node whose multiplies scale by a broadcast factor (softmax, L2
/// normalisation): its override, else the default precision at HiFi4, because HiFi2 keeps only
/// 7 bits of the SrcB operand, which is the broadcast factor.
pub fn hifi4_unless_overridden(params: &PlanParams, node: &str) -> Precision {
    params.overrides.get(node).copied().unwrap_or(Precision {
        fidelity: Fidelity::HiFi4,
        ..params.precision
    })
}
