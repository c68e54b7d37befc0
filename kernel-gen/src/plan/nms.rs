//! The plan of NMS on a score map ([`crate::ops::nms`] has the method and its kernels): one
//! program over the map's tiles with an intermediate buffer of column maxima.

use serde::{Deserialize, Serialize};

use crate::device::{Grid, Precision};
use crate::layout::DeviceTensor;

use super::select_keypoints::SelectPlan;
use super::{
    cb_fp32, tensor_buffers, BufferPlan, CbKind, CbPlan, Content, NodePlan, OpPlan, PlanError,
    Split,
};

/// Bytes of one row of a 16×16 face of f32.
pub(crate) const FACE_ROW_BYTES: u32 = 64;

/// The largest radius the device lowers: the window must stay within the neighbouring tiles and
/// a shift must cut a 16-row face into at most two runs. Larger radii run on the host.
pub const MAX_DEVICE_RADIUS: usize = 8;

/// Bytes of the window of a tile's two strips of `32 + 2 radius` face rows (`cb_strips`, one
/// page per tile; `nms/strips.cpp.tera`).
fn window_bytes(radius: u32) -> u32 {
    2 * (32 + 2 * radius) * FACE_ROW_BYTES
}

/// NMS on a map, in tiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NmsPlan {
    pub radius: u32,
    pub tiles_x: u32,
    pub tiles_y: u32,
    /// The intermediate buffer of the first pass's column maxima (a scratch Map).
    pub vertical: String,
    /// The keypoint selection fused into the writer, if any.
    pub select: Option<SelectPlan>,
}

/// The intermediate buffer and the program of NMS node `name` on the `height`×`width` map
/// `scores`. The caller adds the output buffer (the node's Map).
pub fn plan(
    name: &str,
    scores: &str,
    (height, width): (u32, u32),
    radius: usize,
    precision: Precision,
    grid: Grid,
) -> Result<(Vec<BufferPlan>, NodePlan), PlanError> {
    if radius == 0 || radius > MAX_DEVICE_RADIUS {
        return Err(PlanError::NmsRadius {
            node: name.to_string(),
            radius,
            max: MAX_DEVICE_RADIUS,
        });
    }
    if !precision.fp32_dest {
        return Err(PlanError::NmsNeedsFp32Dst {
            node: name.to_string(),
        });
    }
    if height % 32 != 0 || width % 32 != 0 {
        return Err(PlanError::FrameNotMultiple32 {
            node: name.to_string(),
            width: width as usize,
            height: height as usize,
        });
    }
    let (tiles_x, tiles_y) = (width / 32, height / 32);
    let vertical = format!("{name}.vertical");
    let intermediate = DeviceTensor::Map { height, width };
    let buffers = tensor_buffers(&vertical, intermediate, |_| Content::Scratch {
        node: name.to_string(),
        tensor: intermediate,
    });
    let node = NodePlan {
        name: name.to_string(),
        inputs: vec![scores.to_string()],
        output: name.to_string(),
        precision,
        split: Split::new(grid, tiles_x * tiles_y),
        cbs: vec![
            cb_fp32(0, "cb_shift", 2, CbKind::Stream),
            cb_fp32(1, "cb_scores", 2, CbKind::Stream),
            cb_fp32(2, "cb_window", 3, CbKind::Scratch),
            cb_fp32(3, "cb_shift_y", 2, CbKind::Stream),
            CbPlan {
                page_bytes: window_bytes(radius as u32),
                ..cb_fp32(4, "cb_strips", 2, CbKind::Stream)
            },
            cb_fp32(16, "cb_out", 2, CbKind::Stream),
        ],
        op: OpPlan::Nms(NmsPlan {
            radius: radius as u32,
            tiles_x,
            tiles_y,
            vertical,
            select: None,
        }),
    };
    Ok((buffers, node))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Fidelity;

    #[test]
    fn one_program_over_the_map_tiles_with_an_intermediate_buffer() {
        let (buffers, node) = plan(
            "nms",
            "scores",
            (64, 96),
            4,
            Precision::PORT,
            Grid::ETH_DISPATCH,
        )
        .expect("plans");
        assert_eq!(buffers.len(), 1);
        assert_eq!(
            (buffers[0].name.as_str(), buffers[0].pages),
            ("nms.vertical", 6)
        );
        assert_eq!(node.name, "nms");
        assert_eq!(node.inputs, vec!["scores"]);
        assert_eq!(node.split.work.len(), 6);
        let OpPlan::Nms(p) = &node.op else {
            panic!("not NMS: {:?}", node.op);
        };
        assert_eq!(p.vertical, "nms.vertical");
    }

    #[test]
    fn radius_and_dst_mode_are_checked() {
        let bf16_dst = Precision {
            fp32_dest: false,
            fidelity: Fidelity::HiFi4,
            ..Precision::PORT
        };
        let err = plan("n", "s", (32, 32), 2, bf16_dst, Grid::ETH_DISPATCH).err();
        assert_eq!(
            err,
            Some(PlanError::NmsNeedsFp32Dst {
                node: "n".to_string()
            })
        );
        let err = plan("n", "s", (32, 32), 9, Precision::PORT, Grid::ETH_DISPATCH).err();
        assert_eq!(
            err,
            Some(PlanError::NmsRadius {
                node: "n".to_string(),
                radius: 9,
                max: MAX_DEVICE_RADIUS
            })
        );
    }
}
