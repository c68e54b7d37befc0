//! The standard SuperPoint graph (DESIGN §2): resize, the shared encoder, the detector head
//! with softmax, dustbin drop, fold, NMS and keypoint selection, and the descriptor head with
//! L2 normalisation and sampling at the keypoints.

use crate::graph::{Graph, Node};
use crate::op::Op;

/// One convolution of the network: the name its `Conv2d` node and weight entry use, the
/// Hugging Face (`magic-leap-community/superpoint`) tensor prefix, and its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvLayer {
    pub name: &'static str,
    pub hf_prefix: &'static str,
    pub in_channels: usize,
    pub out_channels: usize,
    pub kernel: usize,
    pub relu: bool,
}

const fn layer(
    name: &'static str,
    hf_prefix: &'static str,
    in_channels: usize,
    out_channels: usize,
    kernel: usize,
    relu: bool,
) -> ConvLayer {
    ConvLayer {
        name,
        hf_prefix,
        in_channels,
        out_channels,
        kernel,
        relu,
    }
}

/// The 12 convolutions of SuperPoint. `name` is also the original `superpoint_v1.pth` name.
pub const CONV_LAYERS: [ConvLayer; 12] = [
    layer("conv1a", "encoder.conv_blocks.0.conv_a", 1, 64, 3, true),
    layer("conv1b", "encoder.conv_blocks.0.conv_b", 64, 64, 3, true),
    layer("conv2a", "encoder.conv_blocks.1.conv_a", 64, 64, 3, true),
    layer("conv2b", "encoder.conv_blocks.1.conv_b", 64, 64, 3, true),
    layer("conv3a", "encoder.conv_blocks.2.conv_a", 64, 128, 3, true),
    layer("conv3b", "encoder.conv_blocks.2.conv_b", 128, 128, 3, true),
    layer("conv4a", "encoder.conv_blocks.3.conv_a", 128, 128, 3, true),
    layer("conv4b", "encoder.conv_blocks.3.conv_b", 128, 128, 3, true),
    layer("convPa", "keypoint_decoder.conv_score_a", 128, 256, 3, true),
    layer("convPb", "keypoint_decoder.conv_score_b", 256, 65, 1, false),
    layer(
        "convDa",
        "descriptor_decoder.conv_descriptor_a",
        128,
        256,
        3,
        true,
    ),
    layer(
        "convDb",
        "descriptor_decoder.conv_descriptor_b",
        256,
        256,
        1,
        false,
    ),
];

/// Names of the nodes whose values the library returns or the tests compare.
pub mod names {
    pub const INPUT: &str = "input";
    pub const RESIZE: &str = "resize";
    pub const SOFTMAX: &str = "softmax";
    pub const SCORES: &str = "scores";
    pub const NMS: &str = "nms";
    pub const DESCRIPTORS_DENSE: &str = "descriptors_dense";
    pub const KEYPOINTS: &str = "keypoints";
    pub const DESCRIPTORS: &str = "descriptors";
}

/// Post-processing parameters that are part of the graph (DESIGN §2 defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SuperPointParams {
    pub frame_width: usize,
    pub frame_height: usize,
    pub nms_radius: usize,
    pub keypoint_threshold: f32,
    pub border: usize,
    pub max_keypoints: i64,
}

impl Default for SuperPointParams {
    fn default() -> Self {
        Self {
            frame_width: 640,
            frame_height: 480,
            nms_radius: 4,
            keypoint_threshold: 0.005,
            border: 4,
            max_keypoints: 1024,
        }
    }
}

/// The standard graph for a `frame_w`×`frame_h` network frame with default post-processing.
/// The result is not validated: call [`Graph::validate`] (a frame that is not a multiple of 8
/// is reported there, naming the resize node).
pub fn superpoint(frame_w: usize, frame_h: usize) -> Graph {
    superpoint_with(&SuperPointParams {
        frame_width: frame_w,
        frame_height: frame_h,
        ..SuperPointParams::default()
    })
}

/// The standard graph with the given parameters.
pub fn superpoint_with(p: &SuperPointParams) -> Graph {
    let mut nodes = Vec::new();
    let mut push = |name: &str, inputs: &[&str], op: Op| {
        nodes.push(Node {
            name: name.to_string(),
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            op,
        });
    };
    let conv = |l: &ConvLayer| Op::Conv2d {
        weights: l.name.to_string(),
        in_channels: l.in_channels,
        out_channels: l.out_channels,
        kernel: l.kernel,
        pad: l.kernel / 2,
        relu: l.relu,
    };
    push(names::INPUT, &[], Op::InputPlane);
    push(
        names::RESIZE,
        &[names::INPUT],
        Op::Resize {
            width: p.frame_width,
            height: p.frame_height,
        },
    );
    let mut prev = names::RESIZE;
    for (i, l) in CONV_LAYERS[..8].iter().enumerate() {
        push(l.name, &[prev], conv(l));
        prev = l.name;
        if i % 2 == 1 && i < 6 {
            let pool = ["pool1", "pool2", "pool3"][i / 2];
            push(pool, &[prev], Op::MaxPool2);
            prev = pool;
        }
    }
    let [pa, pb, da, db] = [
        &CONV_LAYERS[8],
        &CONV_LAYERS[9],
        &CONV_LAYERS[10],
        &CONV_LAYERS[11],
    ];
    push(pa.name, &[prev], conv(pa));
    push(pb.name, &[pa.name], conv(pb));
    push(names::SOFTMAX, &[pb.name], Op::Softmax);
    push(
        names::SCORES,
        &[names::SOFTMAX],
        Op::DustbinFold { cell: 8 },
    );
    push(
        names::NMS,
        &[names::SCORES],
        Op::Nms {
            radius: p.nms_radius,
        },
    );
    push(
        names::KEYPOINTS,
        &[names::NMS],
        Op::SelectKeypoints {
            threshold: p.keypoint_threshold,
            border: p.border,
            max_keypoints: p.max_keypoints,
        },
    );
    push(da.name, &[prev], conv(da));
    push(db.name, &[da.name], conv(db));
    push(names::DESCRIPTORS_DENSE, &[db.name], Op::L2Normalize);
    push(
        names::DESCRIPTORS,
        &[names::DESCRIPTORS_DENSE, names::KEYPOINTS],
        Op::SampleDescriptors { cell: 8 },
    );
    Graph {
        outputs: vec![names::KEYPOINTS.to_string(), names::DESCRIPTORS.to_string()],
        nodes,
    }
}
