//! Typed errors of graph construction, validation and evaluation. Every variant names the node
//! it concerns so a message points at the place in the graph to fix.

use thiserror::Error;

/// What is wrong with a graph (found by [`crate::Graph::validate`]).
#[derive(Debug, Error, Clone, PartialEq)]
pub enum GraphError {
    #[error("the graph has no nodes")]
    Empty,
    #[error("node `{node}`: the name is used by an earlier node; node names must be unique")]
    DuplicateName { node: String },
    #[error("node `{node}`: op {op} takes {expected} input(s) but {got} are listed")]
    WrongInputCount {
        node: String,
        op: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("node `{node}`: input `{input}` is not produced by any earlier node (nodes must be listed in execution order)")]
    UnknownInput { node: String, input: String },
    #[error("node `{node}`: output `{output}` is not a node of the graph")]
    UnknownOutput { node: String, output: String },
    #[error("node `{node}`: the graph must have exactly one input_plane node, found {count}")]
    InputCount { node: String, count: usize },
    #[error("node `{node}`: op {op} expects {expected} but input `{input}` is {got}")]
    TypeMismatch {
        node: String,
        op: &'static str,
        input: String,
        expected: String,
        got: String,
    },
    #[error("node `{node}`: expects {expected} input channels but `{input}` has {got}")]
    ChannelMismatch {
        node: String,
        input: String,
        expected: usize,
        got: usize,
    },
    #[error(
        "node `{node}`: frame {width}x{height} is not a multiple of {multiple} in both dimensions"
    )]
    FrameNotMultiple {
        node: String,
        width: usize,
        height: usize,
        multiple: usize,
    },
    #[error("node `{node}`: spatial size {width}x{height} cannot be halved by a 2x2 max-pool (must be even)")]
    OddPoolInput {
        node: String,
        width: usize,
        height: usize,
    },
    #[error("node `{node}`: NMS radius {radius} is out of range (0..={max})")]
    RadiusOutOfRange {
        node: String,
        radius: usize,
        max: usize,
    },
    #[error("node `{node}`: {what} = {value} is invalid: {why}")]
    BadParameter {
        node: String,
        what: &'static str,
        value: String,
        why: &'static str,
    },
    #[error("node `{node}`: dynamic spatial size reaches an op that needs a known frame; put a resize first")]
    DynamicSize { node: String },
    #[error("the graph's TOML form could not be read: {0}")]
    Toml(String),
}

/// What went wrong while evaluating a valid graph on concrete inputs and weights.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum EvalError {
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error("node `{node}`: weight entry `{weights}` is missing")]
    MissingWeights { node: String, weights: String },
    #[error("node `{node}`: weight entry `{weights}` has shape {got:?}, expected {expected:?}")]
    WeightShape {
        node: String,
        weights: String,
        expected: Vec<usize>,
        got: Vec<usize>,
    },
    #[error("input plane of {width}x{height} is empty or too large; it must have between 1 and {max} pixels")]
    BadInput {
        width: usize,
        height: usize,
        max: usize,
    },
    #[error("node `{node}`: input `{input}` holds a value of the wrong kind at run time")]
    ValueKind { node: String, input: String },
}
