//! The programs the project ships: the default SuperPoint program (frame, grid, input size) and
//! one NMS-variant program per device radius, which starts from the default program's score map
//! and dense descriptors and redoes NMS, candidates and sampling. The main program's activations
//! live in its L1 arena; the score map and dense descriptors outlive it there (where they fit),
//! and a variant, loaded in the same arena, reads them in place ([`shared_l1`]). The checked-in
//! artifacts are these at 640×480 on the 12×10 grid; the runtime compiles the same definitions
//! for other sizes.

use std::collections::{BTreeMap, BTreeSet};

use superpoint_graph::{names, superpoint_with, Graph, SuperPointParams};

use crate::device::Grid;
use crate::plan::nms::MAX_DEVICE_RADIUS;
use crate::plan::PlanParams;
use crate::program::DeviceProgram;

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

/// The main program's outputs an NMS-variant program starts from.
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
            // The convs without a resident copy take their weights from arena slots an earlier
            // step fills (`plan::staged`), not from a multicast their own start-up waits for.
            stage_weights: true,
            // What the NMS variants start from, and what the host reads: the post-NMS map (when
            // it selects the keypoints itself) and the keypoint candidates. The descriptor rows
            // (a row for every candidate slot, hundreds of MB) stay in DRAM.
            outlive: nms_inputs()
                .into_iter()
                .chain([names::NMS, names::KEYPOINTS].map(String::from))
                .collect(),
            ..PlanParams::default()
        },
    }
}

/// Where the main program `main` leaves what the NMS variants start from in its L1 arena: the
/// offset of each such buffer that lives there (the others are in DRAM).
pub fn shared_l1(main: &DeviceProgram) -> BTreeMap<String, u32> {
    let inputs = nms_inputs();
    main.buffers
        .iter()
        .filter(|b| b.output_of().is_some_and(|n| inputs.contains(n)))
        .filter_map(|b| b.l1_offset.map(|o| (b.name.clone(), o)))
        .collect()
}

/// NMS with `radius`, candidates and sampling, from the main program's score map and dense
/// descriptors, which are in the main program's L1 arena at `shared` ([`shared_l1`]) or in DRAM.
pub fn nms_program(
    width: u32,
    height: u32,
    radius: usize,
    grid: Grid,
    shared: BTreeMap<String, u32>,
) -> Variant {
    Variant {
        name: format!(
            "superpoint_{width}x{height}_{}x{}_nms{radius}",
            grid.x, grid.y
        ),
        graph: graph(width, height, radius),
        params: PlanParams {
            grid,
            external: nms_inputs(),
            external_l1: shared,
            ..PlanParams::default()
        },
    }
}

/// The checked-in artifact sets: the 640×480 main program on 12×10 and, once it is compiled
/// (`main` is where it left the variants' inputs, [`shared_l1`]), its NMS variants r = 1..=8.
pub fn checked_in() -> (Variant, impl Fn(&DeviceProgram) -> Vec<Variant>) {
    let grid = Grid::ETH_DISPATCH;
    (main_program(640, 480, None, grid), move |main| {
        (1..=MAX_DEVICE_RADIUS)
            .map(|r| nms_program(640, 480, r, grid, shared_l1(main)))
            .collect()
    })
}
