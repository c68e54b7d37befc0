//! Execution backends of the network graph and the choice between them.

pub mod cpu;
pub mod tensix;

use serde::Serialize;
use superpoint_graph::{Keypoint, Tensor};

use crate::error::Result;

/// Which hardware runs the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// A Tenstorrent device when one is available, else the CPU.
    Auto,
    /// The CPU, on all cores.
    Cpu,
    /// The generated Tensix program on a Tenstorrent device or its emulator.
    Tensix,
}

impl Backend {
    /// The backend actually used: `Auto` takes Tensix only when a card is present (the runtime
    /// is built on tt-metal), never the emulator; `Tensix` without a card runs the emulator.
    pub fn resolve(self) -> Result<Backend> {
        match self {
            Backend::Auto if tensix::card_present() => Ok(Backend::Tensix),
            Backend::Auto | Backend::Cpu => Ok(Backend::Cpu),
            Backend::Tensix => Ok(Backend::Tensix),
        }
    }

    /// The backend's name in outputs.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Cpu => "cpu",
            Backend::Tensix => "tensix",
        }
    }

    /// Every backend this build can run, by name.
    pub fn available() -> &'static [&'static str] {
        &["cpu", "tensix"]
    }
}

/// One frame's keypoints (network-frame pixels, best first) and descriptors, with the time the
/// backend spent resizing and selecting (ms), which the model reports apart from the network,
/// and on a device pool the device that ran it, the time it waited for a device and the time it
/// spent compiling and loading programs (ms).
#[derive(Debug, Clone)]
pub(crate) struct FrameResult {
    pub keypoints: Vec<Keypoint>,
    /// (dim, N × dim values) when descriptors were requested.
    pub descriptors: Option<(usize, Vec<f32>)>,
    pub resize_ms: f64,
    pub select_ms: f64,
    /// Non-maximum suppression ran on the device.
    pub device_nms: bool,
    pub device: Option<u32>,
    pub queue_ms: f64,
    pub compile_ms: f64,
}

/// The dense maps of one frame, planar f32, as a backend computed them.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseMaps {
    /// 1×H×W scores after softmax and fold, before NMS.
    pub scores: Tensor<f32>,
    /// 1×H×W scores after NMS (the score where kept, 0 elsewhere).
    pub nms: Tensor<f32>,
    /// 256×(H/8)×(W/8) descriptors, L2-normalised over channels.
    pub descriptors: Tensor<f32>,
}
