//! The SuperPoint graph IR.
//!
//! A [`Graph`] is a list of typed [`Op`] nodes in execution order. [`Graph::validate`] checks it
//! and infers every value's shape; [`superpoint()`] builds the standard network of DESIGN §2;
//! the TOML form round-trips through serde. [`reference`](mod@reference) is the naive evaluator: plain loops
//! with wide (f64) accumulation, written to be obviously correct. It *is* the definition of
//! each op; every backend is tested against it.

pub mod error;
pub mod exec;
pub mod graph;
pub mod op;
pub mod reference;
pub mod superpoint;
pub mod tensor;
pub mod weights;

pub use error::{EvalError, GraphError};
pub use exec::{run, ConvStep, Kernels, Slot, Values, MAX_INPUT_PIXELS};
pub use graph::{Graph, Node, Typed, MAX_NMS_RADIUS};
pub use op::{Channel, Op};
pub use superpoint::{
    names, superpoint, superpoint_with, ConvLayer, SuperPointParams, CONV_LAYERS,
};
pub use tensor::{DType, Dim, Keypoint, Tensor, ValueType};
pub use weights::{ConvWeights, WeightSet};
