//! The CPU backend's dense tensor: f32 in channels-last (H×W×C) order, so that a pixel's
//! channels are contiguous and a block of pixels is the row-major left operand of a GEMM.

use superpoint_graph::Tensor;

use super::recycle::{self, Returned};

/// A dense C×H×W value stored channels-last: element (c, y, x) is at `(y * width + x) * channels + c`.
/// With one channel this is the same memory order as the planar [`Tensor`].
#[derive(Debug)]
pub struct Hwc {
    channels: usize,
    height: usize,
    width: usize,
    data: Vec<f32>,
    /// How the buffer goes back to [`recycle`] when dropped.
    returned: Returned,
}

impl Clone for Hwc {
    fn clone(&self) -> Self {
        Self {
            data: self.data.clone(),
            returned: Returned::Other,
            ..*self
        }
    }
}

impl PartialEq for Hwc {
    fn eq(&self, other: &Self) -> bool {
        (self.channels, self.height, self.width) == (other.channels, other.height, other.width)
            && self.data == other.data
    }
}

impl Hwc {
    /// A zero tensor of the given shape.
    pub fn zeros(channels: usize, height: usize, width: usize) -> Self {
        Self {
            channels,
            height,
            width,
            data: vec![0.0; channels * height * width],
            returned: Returned::Other,
        }
    }

    /// A tensor of the given shape whose elements are unspecified: for kernels that write
    /// every element. Its buffer may be a recycled one (see [`recycle`]).
    pub(crate) fn for_overwrite(channels: usize, height: usize, width: usize) -> Self {
        Self {
            channels,
            height,
            width,
            data: recycle::take(channels * height * width),
            returned: Returned::Whole,
        }
    }

    /// Wraps channels-last `data`; `None` when its length is not `channels * height * width`.
    pub fn from_vec(channels: usize, height: usize, width: usize, data: Vec<f32>) -> Option<Self> {
        let len = channels.checked_mul(height)?.checked_mul(width)?;
        (data.len() == len).then_some(Self {
            channels,
            height,
            width,
            data,
            returned: Returned::Other,
        })
    }

    /// The channels-last copy of a planar tensor.
    pub fn from_planar(t: &Tensor<f32>) -> Self {
        let (c, n) = (t.channels, t.height * t.width);
        if c == 1 {
            return Self::from_single_plane(t.clone());
        }
        let mut data = vec![0.0; c * n];
        for ch in 0..c {
            for (p, &v) in t.plane(ch).iter().enumerate() {
                data[p * c + ch] = v;
            }
        }
        Self {
            channels: c,
            height: t.height,
            width: t.width,
            data,
            returned: Returned::Other,
        }
    }

    /// A one-channel planar tensor taken over without copying (both layouts agree for C = 1).
    /// Tensors with more channels are transposed.
    pub fn from_single_plane(t: Tensor<f32>) -> Self {
        if t.channels != 1 {
            return Self::from_planar(&t);
        }
        Self {
            channels: 1,
            height: t.height,
            width: t.width,
            data: t.data,
            returned: Returned::Other,
        }
    }

    /// The planar (C×H×W) copy.
    pub fn to_planar(&self) -> Tensor<f32> {
        let (c, n) = (self.channels, self.height * self.width);
        let data = if c == 1 {
            self.data.clone()
        } else {
            let mut data = vec![0.0; c * n];
            for (p, px) in self.data.chunks_exact(c).enumerate() {
                for (ch, &v) in px.iter().enumerate() {
                    data[ch * n + p] = v;
                }
            }
            data
        };
        Tensor {
            channels: c,
            height: self.height,
            width: self.width,
            data,
        }
    }

    pub fn channels(&self) -> usize {
        self.channels
    }
    pub fn height(&self) -> usize {
        self.height
    }
    pub fn width(&self) -> usize {
        self.width
    }
    /// The channels-last elements.
    pub fn data(&self) -> &[f32] {
        &self.data
    }
    pub(crate) fn data_mut(&mut self) -> &mut [f32] {
        &mut self.data
    }
    /// The `width * channels` elements of row `y`.
    pub(crate) fn row(&self, y: usize) -> &[f32] {
        let n = self.width * self.channels;
        &self.data[y * n..(y + 1) * n]
    }
}

impl Drop for Hwc {
    fn drop(&mut self) {
        recycle::give_back(std::mem::take(&mut self.data), self.returned);
    }
}
