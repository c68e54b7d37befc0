//! Values that flow along the graph's edges: dense planes (channels × height × width) and
//! keypoint lists, plus their static types used by shape inference.

use serde::{Deserialize, Serialize};

/// Element type of a dense tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    U8,
    F32,
}

/// A dimension that is either known when the graph is built or only when an input arrives
/// (the original image size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    Known(usize),
    Dynamic,
}

/// The static type of a value, as inferred for every node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    /// A dense C×H×W tensor.
    Dense {
        dtype: DType,
        channels: usize,
        height: Dim,
        width: Dim,
    },
    /// Keypoints in network-frame pixels with their scores, best first.
    Keypoints,
    /// One descriptor row of `dim` f32 per keypoint.
    Descriptors { dim: usize },
}

/// A dense C×H×W tensor in channel-major (planar) order: element (c, y, x) is at
/// `(c * height + y) * width + x`.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor<T> {
    pub channels: usize,
    pub height: usize,
    pub width: usize,
    pub data: Vec<T>,
}

impl<T: Copy + Default> Tensor<T> {
    /// A tensor of the given shape filled with `T::default()`.
    pub fn zeros(channels: usize, height: usize, width: usize) -> Self {
        Self {
            channels,
            height,
            width,
            data: vec![T::default(); channels * height * width],
        }
    }
}

impl<T> Tensor<T> {
    /// Wraps `data`; `None` when its length is not `channels * height * width`.
    pub fn from_vec(channels: usize, height: usize, width: usize, data: Vec<T>) -> Option<Self> {
        let len = channels.checked_mul(height)?.checked_mul(width)?;
        (data.len() == len).then_some(Self {
            channels,
            height,
            width,
            data,
        })
    }

    /// The H×W plane of channel `c`.
    pub fn plane(&self, c: usize) -> &[T] {
        let n = self.height * self.width;
        &self.data[c * n..(c + 1) * n]
    }
}

/// One keypoint in the network frame: integer pixel position and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Keypoint {
    pub x: u32,
    pub y: u32,
    pub score: f32,
}
