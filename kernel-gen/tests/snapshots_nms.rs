//! insta snapshots of the NMS chain at 64×64 with radius 4, one per distinct kernel text and the
//! dispatch program's summary, in the top-level `snapshots/` folder ([`common::snapshot`]): `nms_chain` starts from an uploaded
//! score map (NMS with the selection fused into its writer), `select_from_map` from an uploaded
//! NMS map (the selection as a program of its own).

mod common;

use std::collections::BTreeSet;

use common::snapshot;
use kernel_gen::{compile, PlanParams};
use superpoint_graph::{names, superpoint_with, SuperPointParams};

fn snapshot_graph(graph_name: &str, external: &str) {
    let graph = superpoint_with(&SuperPointParams {
        frame_width: 64,
        frame_height: 64,
        ..SuperPointParams::default()
    })
    .pruned(&[names::KEYPOINTS]);
    let params = PlanParams {
        external: BTreeSet::from([external.to_string()]),
        ..PlanParams::default()
    };
    let compiled = compile(&graph, &params).expect("compiles");
    snapshot(graph_name, &compiled);
}

#[test]
fn nms_chain() {
    snapshot_graph("nms_chain", names::SCORES);
}

#[test]
fn select_from_map() {
    snapshot_graph("select_from_map", names::NMS);
}
