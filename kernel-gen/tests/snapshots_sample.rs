//! insta snapshots of the sampling kernels and dispatch program summary for a small graph (64×32 frame:
//! 2 regions of 1024 candidates, an 8×4 descriptor map), and the default 640×480 sampling node
//! checked on both grids.

mod common;

use std::collections::BTreeSet;

use common::snapshot;
use kernel_gen::report::{report, table};
use kernel_gen::{compile, lower, plan, Compiled, Grid, Limits, PlanParams};
use superpoint_graph::{names, superpoint};

fn params(grid: Grid) -> PlanParams {
    PlanParams {
        grid,
        external: BTreeSet::from([
            names::DESCRIPTORS_DENSE.to_string(),
            names::KEYPOINTS.to_string(),
        ]),
        ..PlanParams::default()
    }
}

fn sampling(width: usize, height: usize, grid: Grid) -> Compiled {
    let graph = superpoint(width, height).pruned(&[names::DESCRIPTORS]);
    compile(&graph, &params(grid)).expect("compiles")
}

#[test]
fn sampling_64x32() {
    let compiled = sampling(64, 32, Grid::ETH_DISPATCH);
    snapshot("sample_64x32", &compiled);
}

#[test]
fn default_frame_sampling_is_valid_on_both_grids() {
    for grid in [Grid::ETH_DISPATCH, Grid::TENSIX_DISPATCH] {
        let compiled = sampling(640, 480, grid);
        let step = compiled.program.step(names::DESCRIPTORS).expect("step");
        let cores: u32 = step.ranges.iter().map(|r| r.len()).sum();
        // 300 map tiles: one region per core.
        assert_eq!(cores, grid.cores());
        let graph = superpoint(640, 480).pruned(&[names::DESCRIPTORS]);
        let planned = plan::plan(&graph, &params(grid)).expect("plans");
        let lowered = lower::lower(&planned).expect("lowers");
        kernel_gen::check::check(&lowered, &Limits::BLACKHOLE, grid).expect("checks");
        println!(
            "grid {}x{} (worst case: full regions)\n{}",
            grid.x,
            grid.y,
            table(&report(&lowered))
        );
    }
}
