//! insta snapshots of the emitted kernels, one per (node, kernel role), and of the dispatch
//! program, for small test graphs: a conv with odd channel counts and a pool. They live in the
//! top-level `snapshots/` folder.

mod common;

use common::{chain, Layer};
use kernel_gen::{compile, PlanParams};

fn snapshot_graph(graph_name: &str, layers: &[Layer]) {
    let compiled = compile(&chain(64, 32, layers), &PlanParams::default()).expect("compiles");
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false, omit_expression => true}, {
        for (file, text) in &compiled.sources {
            let name = format!("{graph_name}__{}", file.trim_end_matches(".cpp").replace('/', "__"));
            insta::assert_snapshot!(name, text);
        }
        let json = compiled.program.to_json().expect("json");
        insta::assert_snapshot!(format!("{graph_name}__program"), json);
    });
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
    assert_eq!(a.files().expect("files"), b.files().expect("files"));
}
