//! The conv that reads the frame ([`crate::ops::frame_conv`] has its kernels): its input shape,
//! its split by image rows and its CBs.

use superpoint_graph::Node;

use crate::device::{Format, Grid, Precision};
use crate::layout::{ActivationShape, DeviceTensor};

use super::conv::{identity_bias_exact, BIAS_CB_NAME, WEIGHTS_CB_NAME};
use super::{
    cb, cb_of, largest_divisor_within, CbKind, ConvPlan, NodePlan, OpPlan, PlanError, Split,
};

/// Output block stages of the output stream.
const STAGES: u32 = 2;

/// The CB of the odd output blocks' tiles, which the reader writes ([`plan_node`]).
pub const OUT_ODD_CB_NAME: &str = "cb_out_odd";

/// The activation shape of a conv's input when it is the frame: `Some` for a frame of
/// `format` read by a one-channel 3×3 pad-1 conv, `None` for an input in another layout, and an
/// error for a frame any other conv would read (it reads only that conv's layout).
pub fn input_shape(
    node: &str,
    input: &str,
    tensor: DeviceTensor,
    format: Format,
    (in_channels, kernel, pad): (usize, usize, usize),
) -> Result<Option<ActivationShape>, PlanError> {
    let DeviceTensor::FrameRows {
        height,
        width,
        format: frame_format,
    } = tensor
    else {
        return Ok(None);
    };
    if frame_format != format {
        return Err(PlanError::FormatMismatch {
            node: node.to_string(),
            input: input.to_string(),
            input_format: frame_format,
            format,
        });
    }
    if (in_channels, kernel, pad) != (1, 3, 1) || width % 32 != 0 {
        return Err(PlanError::NotOnDevice {
            node: node.to_string(),
            input: input.to_string(),
        });
    }
    Ok(Some(ActivationShape {
        channels: 1,
        height: height as usize,
        width: width as usize,
        format,
    }))
}

/// The DST acquires of transposes a batch of the frame conv's output blocks may take: 640-wide
/// frames (20 blocks a row) get batches of 10 at 4 fp32 DST tiles, two per row instead of five.
pub const BATCH_ACQUIRES: u32 = 3;

/// The frame conv's node: split by image rows, its CBs. `cb_im2col` holds one batch of output
/// blocks' im2col tiles: the most that divide an image row's blocks within
/// [`BATCH_ACQUIRES`] DST acquires of transposes (the compute's per-batch inits and ReLU switches
/// are paid once per batch, the transposes share one init across the acquires); with bf16
/// activations at HiFi2 or above the bias enters DST by the identity tile of `cb_identity`
/// ([`ConvPlan::identity_bias`]). With an even count of blocks a row and a batch (W a multiple of
/// 64), the odd blocks' output tiles go through `cb_out_odd` to the reader, which writes them on
/// its NoC while the writer writes the even blocks' on the other: the output's pages, spread
/// over every core's L1, travel on both NoCs' links instead of on one NoC's.
pub fn plan_node(node: &Node, precision: Precision, grid: Grid, conv: ConvPlan) -> NodePlan {
    let format = precision.format;
    let row_tiles = conv.width / 32;
    let weight_pages = conv.weight_parts * conv.k_tiles * conv.out_tiles;
    let identity_bias = identity_bias_exact(precision);
    let batch = largest_divisor_within(row_tiles, BATCH_ACQUIRES * precision.dst_tiles());
    let mut cbs = vec![
        cb_of(format, 0, "cb_im2col", batch, CbKind::Stream),
        cb(1, WEIGHTS_CB_NAME, weight_pages, CbKind::Resident),
        cb_of(format, 2, BIAS_CB_NAME, conv.out_tiles, CbKind::Resident),
        cb_of(format, 3, "cb_rows", 2 * row_tiles, CbKind::Stream),
        cb_of(format, 4, "cb_taps", row_tiles, CbKind::Stream),
    ];
    if identity_bias {
        cbs.push(cb(5, "cb_identity", 1, CbKind::Resident));
    }
    cbs.push(cb_of(
        format,
        16,
        "cb_out",
        STAGES * conv.group,
        CbKind::Stream,
    ));
    if row_tiles % 2 == 0 && batch % 2 == 0 {
        cbs.push(cb_of(
            format,
            17,
            OUT_ODD_CB_NAME,
            STAGES * conv.group,
            CbKind::Stream,
        ));
    }
    NodePlan {
        name: node.name.clone(),
        inputs: node.inputs.clone(),
        output: node.name.clone(),
        precision,
        split: Split::new(grid, conv.height),
        cbs,
        op: OpPlan::Conv2d(ConvPlan {
            identity_bias,
            ..conv
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{plan, PlanParams};
    use superpoint_graph::{superpoint, Graph, Op};

    fn frame_then(op: Op) -> Graph {
        let mut graph = superpoint(64, 32).pruned(&["conv1a"]);
        if let Some(conv) = graph.nodes.iter_mut().find(|n| n.name == "conv1a") {
            conv.op = op;
        }
        graph
    }

    /// Only a one-channel 3×3 pad-1 conv reads the frame's layout; a 1×1 conv or a max-pool
    /// on it is refused by name.
    #[test]
    fn other_readers_of_the_frame_are_refused() {
        let refused = Err(PlanError::NotOnDevice {
            node: "conv1a".to_string(),
            input: superpoint_graph::superpoint::names::RESIZE.to_string(),
        });
        let one_by_one = Op::Conv2d {
            weights: "conv1a".to_string(),
            in_channels: 1,
            out_channels: 64,
            kernel: 1,
            pad: 0,
            relu: true,
        };
        let params = PlanParams::default();
        assert_eq!(plan(&frame_then(one_by_one), &params).map(|_| ()), refused);
        assert_eq!(
            plan(&frame_then(Op::MaxPool2), &params).map(|_| ()),
            refused
        );
    }
}
