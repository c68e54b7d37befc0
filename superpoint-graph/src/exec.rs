//! One executor for every host-side evaluator: it walks a validated graph in order and calls
//! the [`Kernels`] implementation for each op. The reference evaluator and the CPU backend
//! differ only in their kernels (and in the layout of their dense tensors), never in how the
//! graph is interpreted.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::error::EvalError;
use crate::graph::{Graph, Node};
use crate::op::Op;
use crate::tensor::{Keypoint, Tensor};
use crate::weights::{ConvWeights, WeightSet};

/// The largest input plane accepted (pixels): 2^28, i.e. 16384×16384.
pub const MAX_INPUT_PIXELS: usize = 1 << 28;

/// The op implementations of one evaluator. `Dense` is its dense-tensor representation
/// (the reference uses planar [`Tensor<f32>`]; a fast backend may use another layout).
pub trait Kernels: Sync {
    type Dense: Send + Sync;

    fn resize(&self, input: &Tensor<u8>, width: usize, height: usize) -> Self::Dense;
    fn conv2d(&self, x: &Self::Dense, w: &ConvWeights, pad: usize, relu: bool) -> Self::Dense;
    fn max_pool2(&self, x: &Self::Dense) -> Self::Dense;
    /// `max_pool2(conv2d(..))`, which the executor calls when nothing else reads the
    /// convolution's output; an evaluator that can fuse the two overrides it.
    fn conv2d_pool(&self, x: &Self::Dense, w: &ConvWeights, pad: usize, relu: bool) -> Self::Dense {
        self.max_pool2(&self.conv2d(x, w, pad, relu))
    }
    /// `second(first(x))`, then the 2×2 max-pool when `pool`, as one step, which the executor
    /// asks for when nothing else reads the first convolution's output (nor, with `pool`, the
    /// second's); `None` (the default) when the evaluator has no fused kernel for the pair,
    /// and the executor runs them one by one.
    fn conv2d_chain(
        &self,
        _x: &Self::Dense,
        _first: ConvStep<'_>,
        _second: ConvStep<'_>,
        _pool: bool,
    ) -> Option<Self::Dense> {
        None
    }
    fn softmax(&self, x: &Self::Dense) -> Self::Dense;
    fn dustbin_fold(&self, x: &Self::Dense, cell: usize) -> Self::Dense;
    fn nms(&self, x: &Self::Dense, radius: usize) -> Self::Dense;
    fn l2_normalize(&self, x: &Self::Dense) -> Self::Dense;
    fn select_keypoints(
        &self,
        x: &Self::Dense,
        threshold: f32,
        border: usize,
        max_keypoints: i64,
    ) -> Vec<Keypoint>;
    /// N×C row-major descriptors sampled from the dense map at `keypoints`.
    fn sample_descriptors(&self, x: &Self::Dense, keypoints: &[Keypoint], cell: usize) -> Vec<f32>;
    /// The number of channels of a dense value.
    fn channels(&self, x: &Self::Dense) -> usize;
    /// The planar (C×H×W) form of a dense value, for callers and tests.
    fn to_planar(&self, x: &Self::Dense) -> Tensor<f32>;
}

/// One convolution of a [`Kernels::conv2d_chain`]: its weights, zero padding and ReLU.
#[derive(Debug, Clone, Copy)]
pub struct ConvStep<'a> {
    pub weights: &'a ConvWeights,
    pub pad: usize,
    pub relu: bool,
}

/// The convolution step of `node` (a `Conv2d`) with its weights from `weights`, checked
/// against the node's shape; `None` for other ops.
fn conv_step<'w>(node: &Node, weights: &'w WeightSet) -> Result<Option<ConvStep<'w>>, EvalError> {
    let Op::Conv2d {
        weights: entry,
        in_channels,
        out_channels,
        kernel,
        pad,
        relu,
    } = &node.op
    else {
        return Ok(None);
    };
    let w = weights
        .get(entry)
        .ok_or_else(|| EvalError::MissingWeights {
            node: node.name.clone(),
            weights: entry.clone(),
        })?;
    let expected = [*out_channels, *in_channels, *kernel, *kernel];
    if w.shape() != expected || w.bias.len() != *out_channels {
        return Err(EvalError::WeightShape {
            node: node.name.clone(),
            weights: entry.clone(),
            expected: expected.to_vec(),
            got: w.shape().to_vec(),
        });
    }
    Ok(Some(ConvStep {
        weights: w,
        pad: *pad,
        relu: *relu,
    }))
}

/// A node's value during and after execution.
pub enum Slot<D> {
    Plane(Tensor<u8>),
    Dense(D),
    Keypoints(Vec<Keypoint>),
    Descriptors { dim: usize, data: Vec<f32> },
}

/// Every node's value after a run, by node name.
pub struct Values<D> {
    slots: HashMap<String, Slot<D>>,
    /// How long each node took, in execution order.
    pub timings: Vec<(String, Duration)>,
}

impl<D> Values<D> {
    /// The value of node `name`.
    pub fn get(&self, name: &str) -> Option<&Slot<D>> {
        self.slots.get(name)
    }

    /// The dense value of node `name`.
    pub fn dense(&self, name: &str) -> Option<&D> {
        match self.slots.get(name)? {
            Slot::Dense(d) => Some(d),
            _ => None,
        }
    }

    /// The keypoints produced by node `name`.
    pub fn keypoints(&self, name: &str) -> Option<&[Keypoint]> {
        match self.slots.get(name)? {
            Slot::Keypoints(k) => Some(k),
            _ => None,
        }
    }

    /// The N×dim descriptors produced by node `name`, with `dim`.
    pub fn descriptors(&self, name: &str) -> Option<(usize, &[f32])> {
        match self.slots.get(name)? {
            Slot::Descriptors { dim, data } => Some((*dim, data)),
            _ => None,
        }
    }
}

/// Runs `graph` on one input plane with `kernels`. The result holds the graph's outputs and
/// the nodes named in `keep`; every other value is dropped as soon as its last reader has run.
/// A convolution whose only reader is the 2×2 max-pool right after it runs with it as one
/// [`Kernels::conv2d_pool`] step (timed under `conv+pool`), its own value never stored; one
/// whose only reader is the convolution right after it (and that one's pool, likewise) is
/// offered to [`Kernels::conv2d_chain`] first (timed under `conv+conv[+pool]`).
pub fn run<K: Kernels>(
    kernels: &K,
    graph: &Graph,
    weights: &WeightSet,
    input: &Tensor<u8>,
    keep: &[&str],
) -> Result<Values<K::Dense>, EvalError> {
    graph.validate()?;
    let mut last_use: HashMap<&str, usize> = HashMap::new();
    let mut readers: HashMap<&str, usize> = HashMap::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        for input in &node.inputs {
            last_use.insert(input.as_str(), i);
            *readers.entry(input.as_str()).or_default() += 1;
        }
    }
    let kept = |name: &str| keep.contains(&name) || graph.outputs.iter().any(|o| o == name);
    // The node after node `step` when it is the only reader of `step`'s unkept value.
    let sole_reader = |step: usize| -> Option<&Node> {
        let (node, next) = (&graph.nodes[step], graph.nodes.get(step + 1)?);
        (readers.get(node.name.as_str()) == Some(&1)
            && next.inputs.len() == 1
            && next.inputs[0] == node.name
            && !kept(&node.name))
        .then_some(next)
    };
    // The max-pool that follows the convolution `step` and is its only reader, if any.
    let pool_after = |step: usize| -> Option<&Node> {
        sole_reader(step).filter(|next| matches!(next.op, Op::MaxPool2))
    };
    let pixels = input.height.saturating_mul(input.width);
    if input.channels != 1 || pixels == 0 || pixels > MAX_INPUT_PIXELS {
        return Err(EvalError::BadInput {
            width: input.width,
            height: input.height,
            max: MAX_INPUT_PIXELS,
        });
    }
    let mut slots: HashMap<String, Slot<K::Dense>> = HashMap::new();
    let mut timings = Vec::with_capacity(graph.nodes.len());
    // The nodes the current step ran with it, and how many of the next ones to skip.
    let mut fused: Vec<&Node> = Vec::new();
    let mut skip = 0;
    for (step, node) in graph.nodes.iter().enumerate() {
        if skip > 0 {
            skip -= 1;
            continue;
        }
        fused.clear();
        let start = Instant::now();
        let arg = |i: usize| -> Result<&Slot<K::Dense>, EvalError> {
            let name = &node.inputs[i];
            slots.get(name).ok_or_else(|| EvalError::ValueKind {
                node: node.name.clone(),
                input: name.clone(),
            })
        };
        let wrong = |i: usize| EvalError::ValueKind {
            node: node.name.clone(),
            input: node.inputs[i].clone(),
        };
        let dense = |i: usize| -> Result<&K::Dense, EvalError> {
            match arg(i)? {
                Slot::Dense(d) => Ok(d),
                _ => Err(wrong(i)),
            }
        };
        let value = match &node.op {
            Op::InputPlane => Slot::Plane(input.clone()),
            Op::Resize { width, height } => match arg(0)? {
                Slot::Plane(p) => Slot::Dense(kernels.resize(p, *width, *height)),
                _ => return Err(wrong(0)),
            },
            Op::Conv2d { .. } => {
                let Some(first) = conv_step(node, weights)? else {
                    unreachable!("a Conv2d node has a convolution step");
                };
                let x = dense(0)?;
                let second = match sole_reader(step) {
                    Some(next) => conv_step(next, weights)?.map(|c| (next, c)),
                    None => None,
                };
                let chained = second.and_then(|(next, second)| {
                    let pool = pool_after(step + 1);
                    let value = kernels.conv2d_chain(x, first, second, pool.is_some())?;
                    fused.push(next);
                    fused.extend(pool);
                    Some(value)
                });
                Slot::Dense(match chained {
                    Some(value) => value,
                    None => {
                        let (w, pad, relu) = (first.weights, first.pad, first.relu);
                        match pool_after(step) {
                            Some(pool) => {
                                fused.push(pool);
                                kernels.conv2d_pool(x, w, pad, relu)
                            }
                            None => kernels.conv2d(x, w, pad, relu),
                        }
                    }
                })
            }
            Op::MaxPool2 => Slot::Dense(kernels.max_pool2(dense(0)?)),
            Op::Softmax => Slot::Dense(kernels.softmax(dense(0)?)),
            Op::DustbinFold { cell } => Slot::Dense(kernels.dustbin_fold(dense(0)?, *cell)),
            Op::Nms { radius } => Slot::Dense(kernels.nms(dense(0)?, *radius)),
            Op::L2Normalize => Slot::Dense(kernels.l2_normalize(dense(0)?)),
            Op::SelectKeypoints {
                threshold,
                border,
                max_keypoints,
            } => Slot::Keypoints(kernels.select_keypoints(
                dense(0)?,
                *threshold,
                *border,
                *max_keypoints,
            )),
            Op::SampleDescriptors { cell } => {
                let map = dense(0)?;
                let keypoints = match arg(1)? {
                    Slot::Keypoints(k) => k,
                    _ => return Err(wrong(1)),
                };
                let data = kernels.sample_descriptors(map, keypoints, *cell);
                Slot::Descriptors {
                    dim: kernels.channels(map),
                    data,
                }
            }
        };
        let mut label = node.name.clone();
        for other in &fused {
            label = format!("{label}+{}", other.name);
        }
        skip = fused.len();
        let name = fused.last().map_or(&node.name, |last| &last.name);
        timings.push((label, start.elapsed()));
        slots.insert(name.clone(), value);
        for input in &node.inputs {
            if last_use.get(input.as_str()) == Some(&step) && !kept(input) {
                slots.remove(input);
            }
        }
    }
    Ok(Values { slots, timings })
}
