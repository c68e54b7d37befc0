//! insta snapshots of the emitted kernels, one per distinct text, and of the dispatch program's
//! summary, for the shipped default program (640×480 on 12×10) and small test graphs: a conv
//! with odd channel counts and a pool (the other op families have their own snapshot files).
//! They live in the top-level `snapshots/` folder ([`common::snapshot`]).

mod common;

use common::{chain, snapshot, Layer};
use kernel_gen::{compile, variants, Grid, PlanParams};

fn snapshot_graph(graph_name: &str, layers: &[Layer]) {
    let compiled = compile(&chain(64, 32, layers), &PlanParams::default()).expect("compiles");
    snapshot(graph_name, &compiled);
}

#[test]
fn default_program() {
    let variant = variants::main_program(640, 480, None, Grid::ETH_DISPATCH);
    let compiled = compile(&variant.graph, &variant.params).expect("compiles");
    snapshot("superpoint_640x480", &compiled);
}

#[test]
fn odd_channel_conv() {
    snapshot_graph(
        "odd_conv",
        &[("conv_a", 1, 3, 3, true), ("conv_b", 3, 5, 3, true)],
    );
}

#[test]
fn max_pool() {
    snapshot_graph(
        "pool",
        &[("conv", 1, 40, 3, true), ("pool", 0, 0, 0, false)],
    );
}

#[test]
fn compilation_is_byte_for_byte_deterministic() {
    let layers: &[Layer] = &[
        ("conv_a", 1, 3, 3, true),
        ("conv_b", 3, 5, 3, true),
        ("pool", 0, 0, 0, false),
    ];
    let a = compile(&chain(64, 32, layers), &PlanParams::default()).expect("compiles");
    let b = compile(&chain(64, 32, layers), &PlanParams::default()).expect("compiles");
    assert_eq!(a, b);
    assert_eq!(
        a.program_files().expect("files"),
        b.program_files().expect("files")
    );
}
