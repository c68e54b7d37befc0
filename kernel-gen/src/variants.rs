//! The programs the project ships: the default SuperPoint program (frame, grid, input size) and
//! one NMS-variant program per device radius, which starts from the default program's score map
//! and dense descriptors (kept in DRAM; the main program's other activations live in L1) and redoes NMS, candidates and sampling. The checked-in
//! artifacts are these at 640×480 on the 12×10 grid; the runtime compiles the same definitions
//! for other sizes.

use std::collections::BTreeSet;

use superpoint_graph::{names, superpoint_with, Graph, SuperPointParams};

use crate::device::Grid;
use crate::ops::nms::MAX_DEVICE_RADIUS;
use crate::plan::PlanParams;

/// A graph and the parameters to compile it with, under an artifact directory name.
#[derive(Debug, Clone)]
pub struct Variant {
    pub name: String,
    pub graph: Graph,
    pub params: PlanParams,
}

fn graph(width: u32, height: u32, radius: usize) -> Graph {
    superpoint_with(&SuperPointParams {
        frame_width: width as usize,
        frame_height: height as usize,
        nms_radius: radius,
        ..SuperPointParams::default()
    })
}

/// The main program's outputs an NMS-variant program starts from (they stay in DRAM).
fn nms_inputs() -> BTreeSet<String> {
    BTreeSet::from([
        names::SCORES.to_string(),
        names::DESCRIPTORS_DENSE.to_string(),
    ])
}

/// The whole network on the device for a `width`×`height` frame from an `input`-sized plane
/// (the frame size when `None`), with the default NMS radius.
pub fn main_program(width: u32, height: u32, input: Option<(u32, u32)>, grid: Grid) -> Variant {
    let default = SuperPointParams::default();
    Variant {
        name: format!("superpoint_{width}x{height}_{}x{}", grid.x, grid.y),
        graph: graph(width, height, default.nms_radius),
        params: PlanParams {
            grid,
            input_size: input,
            l1_activations: true,
            // What the NMS variants start from, and the post-NMS map the host reads when it
            // selects the keypoints itself.
            keep_in_dram: nms_inputs()
                .into_iter()
                .chain([names::NMS.to_string()])
                .collect(),
            ..PlanParams::default()
        },
    }
}

/// NMS with `radius`, candidates and sampling, from the main program's score map and dense
/// descriptors.
pub fn nms_program(width: u32, height: u32, radius: usize, grid: Grid) -> Variant {
    Variant {
        name: format!(
            "superpoint_{width}x{height}_{}x{}_nms{radius}",
            grid.x, grid.y
        ),
        graph: graph(width, height, radius),
        params: PlanParams {
            grid,
            external: nms_inputs(),
            ..PlanParams::default()
        },
    }
}

/// The checked-in artifact sets: the 640×480 main program on 12×10 and its NMS variants r = 1..=8.
pub fn checked_in() -> Vec<Variant> {
    let grid = Grid::ETH_DISPATCH;
    let mut out = vec![main_program(640, 480, None, grid)];
    out.extend((1..=MAX_DEVICE_RADIUS).map(|r| nms_program(640, 480, r, grid)));
    out
}
