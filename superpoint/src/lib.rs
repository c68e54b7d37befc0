//! SuperPoint keypoints, scores and descriptors for images.
//!
//! ```no_run
//! use superpoint::{Options, SuperPoint};
//! let model = SuperPoint::from_pretrained()?;
//! let out = model.detect("photo.jpg", &Options::default())?;
//! println!("{} keypoints, best at {:?}", out.len(), out.keypoints.first());
//! # Ok::<(), superpoint::Error>(())
//! ```
//!
//! The pipeline is the graph of `superpoint-graph` (DESIGN §2): the input's R plane (or luma) is
//! resized to the network frame with Pillow's exact BILINEAR filter, run through the network,
//! and post-processed (softmax, fold, NMS, selection, descriptor sampling); keypoints are
//! returned in original image pixels.

mod alloc;
pub mod backend;
pub mod decode;
pub mod error;
pub mod hub;
pub mod input;
mod jpeg;
pub mod metrics;
pub mod model;
pub mod options;
pub mod output;
pub mod server;
pub mod stream;
pub mod weights;
mod ycc;

pub use backend::tensix::{DeviceSet, Warmup, WarmupStep, WarmupVariant};
pub use backend::Backend;
pub use error::{Error, Result};
pub use input::Input;
pub use model::{Builder, SuperPoint};
pub use options::Options;
pub use output::{Detection, Timing};
pub use superpoint_graph::Channel;
