//! Execution backends of the network graph and the choice between them.

pub mod cpu;

use serde::Serialize;

use crate::error::{Error, Result};

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
    /// The backend actually used for this request.
    pub fn resolve(self) -> Result<Backend> {
        match self {
            Backend::Auto | Backend::Cpu => Ok(Backend::Cpu),
            Backend::Tensix => Err(Error::BackendUnavailable {
                backend: "tensix",
                why: "this build has no Tensix backend yet; use --backend cpu".to_string(),
            }),
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
        &["cpu"]
    }
}
