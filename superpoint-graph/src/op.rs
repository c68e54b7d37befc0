//! The typed operations of the IR. Each variant's meaning is defined by the function of the
//! same name in [`crate::reference`]; the doc comments here state the contract briefly.

use serde::{Deserialize, Serialize};

/// The channel of a decoded colour image that becomes the single input plane (DESIGN §2, step 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    /// The R plane (channel 0; channel 2 for BGR arrays): what the reference port uses.
    #[default]
    Red,
    /// Pillow's `convert("L")`: (19595·R + 38470·G + 7471·B + 32768) >> 16.
    Luma,
}

/// One operation. Inputs are named by the node that produces them, in the order listed here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// The graph input: one 8-bit plane of any size (the original image's chosen channel).
    InputPlane,
    /// Pillow's BILINEAR resize of the u8 plane to `width`×`height`, rounded to u8 like Pillow,
    /// then divided by 255 into f32. Input: a u8 plane.
    Resize { width: usize, height: usize },
    /// 2-D convolution, stride 1, zero padding `pad`, with bias and an optional fused ReLU.
    /// Its parameters are the weight entry named `weights` (shape `[out, in, k, k]` and `[out]`).
    Conv2d {
        weights: String,
        in_channels: usize,
        out_channels: usize,
        kernel: usize,
        pad: usize,
        relu: bool,
    },
    /// 2×2 max-pool, stride 2 (height and width must be even).
    MaxPool2,
    /// Softmax over the channel axis at every pixel.
    Softmax,
    /// Drop the last channel (the dustbin) of a (cell²+1)×Hc×Wc map and fold channel k of cell
    /// (cy, cx) to pixel (cell·cy + k / cell, cell·cx + k % cell): a 1×(cell·Hc)×(cell·Wc) map.
    DustbinFold { cell: usize },
    /// Single-pass non-maximum suppression: keep a pixel iff it equals the maximum of the
    /// (2r+1)² window around it clipped at the edges (ties all kept); radius 0 keeps everything.
    Nms { radius: usize },
    /// L2 normalisation over channels at every pixel.
    L2Normalize,
    /// Pixels with score > `threshold` (strict) at least `border` pixels from every edge, in
    /// descending score order with ties by ascending raster index, cut to `max_keypoints`
    /// (−1 keeps all).
    SelectKeypoints {
        threshold: f32,
        border: usize,
        max_keypoints: i64,
    },
    /// Bilinear sampling of a dense descriptor map (input 0, C×Hc×Wc, cell `cell` pixels) at the
    /// keypoints (input 1) with the SuperGlue/HF formula, each row L2-normalised again.
    SampleDescriptors { cell: usize },
}

impl Op {
    /// How many inputs the op takes.
    pub fn arity(&self) -> usize {
        match self {
            Op::InputPlane => 0,
            Op::SampleDescriptors { .. } => 2,
            _ => 1,
        }
    }

    /// A short lowercase name of the op kind, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Op::InputPlane => "input_plane",
            Op::Resize { .. } => "resize",
            Op::Conv2d { .. } => "conv2d",
            Op::MaxPool2 => "max_pool2",
            Op::Softmax => "softmax",
            Op::DustbinFold { .. } => "dustbin_fold",
            Op::Nms { .. } => "nms",
            Op::L2Normalize => "l2_normalize",
            Op::SelectKeypoints { .. } => "select_keypoints",
            Op::SampleDescriptors { .. } => "sample_descriptors",
        }
    }
}
