//! The graph: nodes in execution order, each naming its inputs, plus the named outputs.
//! `validate` checks the structure and infers every node's [`ValueType`]; the TOML form is the
//! serde representation of [`Graph`] and goes through the same validation when read.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::error::GraphError;
use crate::op::Op;
use crate::tensor::{DType, Dim, ValueType};

/// The largest NMS radius a graph may carry; the window is (2r+1)² pixels.
pub const MAX_NMS_RADIUS: usize = 64;

/// One node: a unique name, the op and the names of the nodes it reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    #[serde(flatten)]
    pub op: Op,
}

/// A dataflow graph whose nodes are listed in execution order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    /// Names of the nodes whose values are the graph's results.
    pub outputs: Vec<String>,
    #[serde(rename = "node")]
    pub nodes: Vec<Node>,
}

/// A validated graph's inferred types, one per node, in node order.
#[derive(Debug, Clone, PartialEq)]
pub struct Typed {
    pub types: Vec<ValueType>,
}

impl Graph {
    /// The node called `name`.
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// Checks the structure and every op's parameters and input types, and infers the type of
    /// every node's value.
    pub fn validate(&self) -> Result<Typed, GraphError> {
        let first = self.nodes.first().ok_or(GraphError::Empty)?;
        let inputs = self.nodes.iter().filter(|n| n.op == Op::InputPlane).count();
        if inputs != 1 {
            return Err(GraphError::InputCount {
                node: first.name.clone(),
                count: inputs,
            });
        }
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut types = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            if index.contains_key(node.name.as_str()) {
                return Err(GraphError::DuplicateName {
                    node: node.name.clone(),
                });
            }
            if node.inputs.len() != node.op.arity() {
                return Err(GraphError::WrongInputCount {
                    node: node.name.clone(),
                    op: node.op.kind(),
                    expected: node.op.arity(),
                    got: node.inputs.len(),
                });
            }
            let mut input_types = Vec::with_capacity(node.inputs.len());
            for input in &node.inputs {
                let i = index
                    .get(input.as_str())
                    .ok_or_else(|| GraphError::UnknownInput {
                        node: node.name.clone(),
                        input: input.clone(),
                    })?;
                input_types.push((input.as_str(), types[*i]));
            }
            let ty = infer(node, &input_types)?;
            index.insert(node.name.as_str(), types.len());
            types.push(ty);
        }
        for output in &self.outputs {
            if !index.contains_key(output.as_str()) {
                return Err(GraphError::UnknownOutput {
                    node: self
                        .nodes
                        .last()
                        .map(|n| n.name.clone())
                        .unwrap_or_default(),
                    output: output.clone(),
                });
            }
        }
        Ok(Typed { types })
    }

    /// The sub-graph that computes only `outputs`: nodes no output depends on are dropped.
    pub fn pruned(&self, outputs: &[&str]) -> Graph {
        let mut needed: Vec<&str> = outputs.to_vec();
        let mut keep = vec![false; self.nodes.len()];
        for (i, node) in self.nodes.iter().enumerate().rev() {
            if needed.contains(&node.name.as_str()) {
                keep[i] = true;
                needed.extend(node.inputs.iter().map(String::as_str));
            }
        }
        Graph {
            outputs: outputs.iter().map(|s| s.to_string()).collect(),
            nodes: self
                .nodes
                .iter()
                .zip(keep)
                .filter(|(_, k)| *k)
                .map(|(n, _)| n.clone())
                .collect(),
        }
    }

    /// The TOML form of the graph.
    pub fn to_toml(&self) -> Result<String, GraphError> {
        toml::to_string(self).map_err(|e| GraphError::Toml(e.to_string()))
    }

    /// Reads and validates a graph from its TOML form.
    pub fn from_toml(text: &str) -> Result<Self, GraphError> {
        let graph: Graph = toml::from_str(text).map_err(|e| GraphError::Toml(e.to_string()))?;
        graph.validate()?;
        Ok(graph)
    }
}

fn describe(ty: &ValueType) -> String {
    let dim = |d: &Dim| match d {
        Dim::Known(n) => n.to_string(),
        Dim::Dynamic => "?".to_string(),
    };
    match ty {
        ValueType::Dense {
            dtype,
            channels,
            height,
            width,
        } => format!("{dtype:?} {channels}x{}x{}", dim(height), dim(width)),
        ValueType::Keypoints => "keypoints".to_string(),
        ValueType::Descriptors { dim } => format!("descriptors of {dim}"),
    }
}

/// A dense f32 input with a known spatial size: (channels, height, width).
fn dense_f32(node: &Node, input: (&str, ValueType)) -> Result<(usize, usize, usize), GraphError> {
    match input.1 {
        ValueType::Dense {
            dtype: DType::F32,
            channels,
            height: Dim::Known(h),
            width: Dim::Known(w),
        } => Ok((channels, h, w)),
        ValueType::Dense {
            height: Dim::Dynamic,
            ..
        }
        | ValueType::Dense {
            width: Dim::Dynamic,
            ..
        } => Err(GraphError::DynamicSize {
            node: node.name.clone(),
        }),
        other => Err(mismatch(node, input.0, "a dense f32 tensor", &other)),
    }
}

fn mismatch(node: &Node, input: &str, expected: &str, got: &ValueType) -> GraphError {
    GraphError::TypeMismatch {
        node: node.name.clone(),
        op: node.op.kind(),
        input: input.to_string(),
        expected: expected.to_string(),
        got: describe(got),
    }
}

fn f32_map(channels: usize, height: usize, width: usize) -> ValueType {
    ValueType::Dense {
        dtype: DType::F32,
        channels,
        height: Dim::Known(height),
        width: Dim::Known(width),
    }
}

fn bad(node: &Node, what: &'static str, value: impl ToString, why: &'static str) -> GraphError {
    GraphError::BadParameter {
        node: node.name.clone(),
        what,
        value: value.to_string(),
        why,
    }
}

fn infer(node: &Node, inputs: &[(&str, ValueType)]) -> Result<ValueType, GraphError> {
    match &node.op {
        Op::InputPlane => Ok(ValueType::Dense {
            dtype: DType::U8,
            channels: 1,
            height: Dim::Dynamic,
            width: Dim::Dynamic,
        }),
        Op::Resize { width, height } => {
            let (name, ty) = inputs[0];
            match ty {
                ValueType::Dense {
                    dtype: DType::U8,
                    channels: 1,
                    ..
                } => {}
                other => return Err(mismatch(node, name, "a 1-channel u8 plane", &other)),
            }
            if *width == 0 || *height == 0 || width % 8 != 0 || height % 8 != 0 {
                return Err(GraphError::FrameNotMultiple {
                    node: node.name.clone(),
                    width: *width,
                    height: *height,
                    multiple: 8,
                });
            }
            Ok(f32_map(1, *height, *width))
        }
        Op::Conv2d {
            in_channels,
            out_channels,
            kernel,
            pad,
            ..
        } => {
            let (c, h, w) = dense_f32(node, inputs[0])?;
            if c != *in_channels {
                return Err(GraphError::ChannelMismatch {
                    node: node.name.clone(),
                    input: inputs[0].0.to_string(),
                    expected: *in_channels,
                    got: c,
                });
            }
            if *out_channels == 0 {
                return Err(bad(
                    node,
                    "out_channels",
                    0,
                    "a convolution needs at least one output channel",
                ));
            }
            if *kernel == 0 || kernel % 2 == 0 {
                return Err(bad(node, "kernel", kernel, "the kernel size must be odd"));
            }
            if 2 * pad + 1 != *kernel {
                return Err(bad(
                    node,
                    "pad",
                    pad,
                    "only 'same' padding (pad = kernel / 2) is supported",
                ));
            }
            Ok(f32_map(*out_channels, h, w))
        }
        Op::MaxPool2 => {
            let (c, h, w) = dense_f32(node, inputs[0])?;
            if h % 2 != 0 || w % 2 != 0 {
                return Err(GraphError::OddPoolInput {
                    node: node.name.clone(),
                    width: w,
                    height: h,
                });
            }
            Ok(f32_map(c, h / 2, w / 2))
        }
        Op::Softmax | Op::L2Normalize => {
            let (c, h, w) = dense_f32(node, inputs[0])?;
            Ok(f32_map(c, h, w))
        }
        Op::DustbinFold { cell } => {
            let (c, h, w) = dense_f32(node, inputs[0])?;
            if *cell == 0 {
                return Err(bad(node, "cell", cell, "the cell size must be positive"));
            }
            if c != cell * cell + 1 {
                return Err(GraphError::ChannelMismatch {
                    node: node.name.clone(),
                    input: inputs[0].0.to_string(),
                    expected: cell * cell + 1,
                    got: c,
                });
            }
            Ok(f32_map(1, h * cell, w * cell))
        }
        Op::Nms { radius } => {
            let (c, h, w) = dense_f32(node, inputs[0])?;
            if *radius > MAX_NMS_RADIUS {
                return Err(GraphError::RadiusOutOfRange {
                    node: node.name.clone(),
                    radius: *radius,
                    max: MAX_NMS_RADIUS,
                });
            }
            single_channel(node, inputs[0].0, c)?;
            Ok(f32_map(1, h, w))
        }
        Op::SelectKeypoints {
            threshold,
            max_keypoints,
            ..
        } => {
            let (c, _, _) = dense_f32(node, inputs[0])?;
            single_channel(node, inputs[0].0, c)?;
            if !threshold.is_finite() {
                return Err(bad(
                    node,
                    "threshold",
                    threshold,
                    "the threshold must be a finite number",
                ));
            }
            if *max_keypoints < -1 {
                return Err(bad(
                    node,
                    "max_keypoints",
                    max_keypoints,
                    "use -1 to keep all, or a count >= 0",
                ));
            }
            Ok(ValueType::Keypoints)
        }
        Op::SampleDescriptors { cell } => {
            let (c, _, _) = dense_f32(node, inputs[0])?;
            if *cell == 0 {
                return Err(bad(node, "cell", cell, "the cell size must be positive"));
            }
            match inputs[1].1 {
                ValueType::Keypoints => Ok(ValueType::Descriptors { dim: c }),
                other => Err(mismatch(node, inputs[1].0, "keypoints", &other)),
            }
        }
    }
}

fn single_channel(node: &Node, input: &str, channels: usize) -> Result<(), GraphError> {
    if channels == 1 {
        Ok(())
    } else {
        Err(GraphError::ChannelMismatch {
            node: node.name.clone(),
            input: input.to_string(),
            expected: 1,
            got: channels,
        })
    }
}
