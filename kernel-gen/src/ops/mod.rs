//! Per-op lowering: each module builds one op family's reader / compute / writer calls from its
//! plan ([`crate::plan`] has the per-op planning) and implements [`crate::kir::Lowering`] for
//! that plan, which the lowering stage ([`crate::lower`]) dispatches on.

pub mod conv2d;
pub mod conv_pool;
pub mod frame_conv;
pub mod l2_normalize;
pub mod max_pool2;
pub mod nms;
pub mod resize;
pub mod resize_copy;
pub mod sample;
pub mod select_keypoints;
pub mod softmax_fold;
pub mod stage;
pub mod views_above;
