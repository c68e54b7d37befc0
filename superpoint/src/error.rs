//! The library's error type: every failure a caller can cause or meet, with a message that says
//! what was wrong and what to do.

use std::path::PathBuf;

use thiserror::Error;

/// `e`'s message followed by those of its sources, `: `-separated (what `{:#}` prints in anyhow),
/// for callers that show one line: the server's JSON errors, the Python exceptions.
pub fn message_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        message = format!("{message}: {cause}");
        source = cause.source();
    }
    message
}

/// Errors of the `superpoint` library.
#[derive(Debug, Error)]
pub enum Error {
    /// The OS error is the source, not part of the message: `{:#}` (anyhow) prints it once.
    #[error("cannot read {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is {kind}, not a regular file: pass an image file")]
    NotAFile { path: PathBuf, kind: &'static str },
    #[error("{path} is {len} bytes, more than the limit of {limit} bytes for an image file")]
    FileTooLarge { path: PathBuf, len: u64, limit: u64 },
    #[error("the image data is empty")]
    EmptyImage,
    #[error("unsupported image format: {0} (use JPEG, PNG, BMP, GIF, TIFF, WebP or PNM)")]
    UnsupportedFormat(String),
    #[error("cannot decode the image: {0}")]
    Decode(String),
    #[error("the image is {width}x{height}: {why}")]
    ImageSize {
        width: u64,
        height: u64,
        why: &'static str,
    },
    #[error("raw plane of {len} bytes does not match {width}x{height} = {expected} bytes")]
    PlaneLength {
        len: usize,
        width: usize,
        height: usize,
        expected: usize,
    },
    #[error("invalid option {name} = {value}: {why}")]
    InvalidOption {
        name: &'static str,
        value: String,
        why: &'static str,
    },
    #[error("weights file {path}: {why}")]
    Weights { path: PathBuf, why: String },
    #[error("weights tensor `{name}` in {path}: {why}")]
    WeightTensor {
        path: PathBuf,
        name: String,
        why: String,
    },
    #[error("{0}")]
    WeightsUnavailable(String),
    #[error("not enough memory: {what} needs {mib} MiB, which cannot be allocated; {advice}")]
    OutOfMemory {
        what: String,
        mib: u64,
        advice: &'static str,
    },
    #[error("the {backend} backend is not available: {why}")]
    BackendUnavailable { backend: &'static str, why: String },
    #[error(transparent)]
    Tensix(#[from] crate::backend::tensix::TensixError),
    #[error(transparent)]
    Graph(#[from] superpoint_graph::GraphError),
    #[error(transparent)]
    Eval(#[from] superpoint_graph::EvalError),
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
