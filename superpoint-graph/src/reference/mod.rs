//! The naive reference evaluator: the definition of every op (DESIGN §2).
//!
//! Each op is a plain loop over planar (C×H×W) f32 tensors with f64 accumulation, written to be
//! read and checked against the contract, not to be fast. Every other evaluator (the CPU
//! backend, the Tensix program) is tested against these functions.

pub mod conv;
pub mod fold;
pub mod l2norm;
pub mod nms;
pub mod pool;
pub mod resize;
pub mod sample;
pub mod select;
pub mod softmax;

use crate::error::EvalError;
use crate::exec::{run, Kernels, Values};
use crate::graph::Graph;
use crate::tensor::{Keypoint, Tensor};
use crate::weights::{ConvWeights, WeightSet};

/// The reference kernels.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reference;

impl Kernels for Reference {
    type Dense = Tensor<f32>;

    fn resize(&self, input: &Tensor<u8>, width: usize, height: usize) -> Tensor<f32> {
        resize::to_unit_range(&resize::pillow_bilinear(input, width, height))
    }
    fn conv2d(&self, x: &Tensor<f32>, w: &ConvWeights, pad: usize, relu: bool) -> Tensor<f32> {
        conv::conv2d(x, w, pad, relu)
    }
    fn max_pool2(&self, x: &Tensor<f32>) -> Tensor<f32> {
        pool::max_pool2(x)
    }
    fn softmax(&self, x: &Tensor<f32>) -> Tensor<f32> {
        softmax::softmax_channels(x)
    }
    fn dustbin_fold(&self, x: &Tensor<f32>, cell: usize) -> Tensor<f32> {
        fold::dustbin_fold(x, cell)
    }
    fn nms(&self, x: &Tensor<f32>, radius: usize) -> Tensor<f32> {
        nms::nms(x, radius)
    }
    fn l2_normalize(&self, x: &Tensor<f32>) -> Tensor<f32> {
        l2norm::l2_normalize_channels(x)
    }
    fn select_keypoints(
        &self,
        x: &Tensor<f32>,
        threshold: f32,
        border: usize,
        max_keypoints: i64,
    ) -> Vec<Keypoint> {
        select::select_keypoints(x, threshold, border, max_keypoints)
    }
    fn sample_descriptors(&self, x: &Tensor<f32>, keypoints: &[Keypoint], cell: usize) -> Vec<f32> {
        sample::sample_descriptors(x, keypoints, cell)
    }
    fn channels(&self, x: &Tensor<f32>) -> usize {
        x.channels
    }
    fn to_planar(&self, x: &Tensor<f32>) -> Tensor<f32> {
        x.clone()
    }
}

/// Evaluates `graph` with the reference kernels, keeping the outputs and the nodes in `keep`.
pub fn evaluate(
    graph: &Graph,
    weights: &WeightSet,
    input: &Tensor<u8>,
    keep: &[&str],
) -> Result<Values<Tensor<f32>>, EvalError> {
    run(&Reference, graph, weights, input, keep)
}
