//! The modeled device time of each program of a frame, as `superpoint bench --write-model`
//! writes it on an emulator build (the model needs the emulator's work counters), for `superpoint
//! doctor --model` to print beside tt-metal's profiler measurements on a card, where there are no
//! counters. Both builds come from the same source tree, so the model is that of the programs the
//! card runs.

use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// One frame's modeled programs on one grid at one precision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeledRun {
    /// "12x10" or "11x10".
    pub grid: String,
    /// "port" or "accurate".
    pub precision: String,
    /// Width, height.
    pub frame: [usize; 2],
    /// The main program's steps in launch order.
    pub programs: Vec<ModeledProgram>,
}

/// One program's modeled device time by both cost models (dispatch or launch overhead and scalar
/// RISC-V work included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeledProgram {
    pub node: String,
    /// v1, the roofline: the floor.
    pub modeled_us: f64,
    /// v2, the timeline at measured rates: the estimate.
    pub timeline_us: f64,
}

/// Writes `runs` as JSON to `path`.
pub fn write(path: &Path, runs: &[ModeledRun]) -> anyhow::Result<()> {
    let json = serde_json::to_string_pretty(runs)?;
    std::fs::write(path, json + "\n")
        .with_context(|| format!("cannot write the model to {}", path.display()))
}

/// The runs `write` wrote to `path`.
pub fn read(path: &Path) -> anyhow::Result<Vec<ModeledRun>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the model {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a model written by `superpoint bench --write-model`",
            path.display()
        )
    })
}
