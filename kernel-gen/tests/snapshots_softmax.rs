//! insta snapshots of the fused softmax + fold and of the L2 normalisation: one per distinct
//! kernel text and the dispatch program's summary, for small graphs cut at the 1×1 conv before
//! them (its output is an external input), in the top-level `snapshots/` folder.

mod common;

use std::collections::BTreeSet;

use common::{chain, extend, snapshot, Layer};
use kernel_gen::{compile, PlanParams};
use superpoint_graph::Op;

fn snapshot_head(graph_name: &str, head: &'static str, out: usize, tail: &[(&str, Op)]) {
    let layers: &[Layer] = &[
        ("c1", 1, 16, 3, true),
        ("pool1", 0, 0, 0, false),
        ("pool2", 0, 0, 0, false),
        ("pool3", 0, 0, 0, false),
        (head, 16, out, 1, false),
    ];
    let params = PlanParams {
        external: BTreeSet::from([head.to_string()]),
        ..PlanParams::default()
    };
    let compiled = compile(&extend(chain(64, 32, layers), tail), &params).expect("compiles");
    snapshot(graph_name, &compiled);
}

#[test]
fn detector_softmax_fold() {
    snapshot_head(
        "detector",
        "convPb",
        65,
        &[
            ("softmax", Op::Softmax),
            ("scores", Op::DustbinFold { cell: 8 }),
        ],
    );
}

#[test]
fn descriptor_l2_normalize() {
    snapshot_head(
        "descriptors",
        "convDb",
        256,
        &[("descriptors_dense", Op::L2Normalize)],
    );
}
