//! insta snapshots of the NMS chain at 64×64 with radius 4, one per (step, kernel role) and the
//! dispatch program, in the top-level `snapshots/` folder: `nms_chain` starts from an uploaded
//! score map (NMS with the selection fused into its writer), `select_from_map` from an uploaded
//! NMS map (the selection as a program of its own).

use std::collections::BTreeSet;

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
fn nms_chain() {
    snapshot_graph("nms_chain", names::SCORES);
}

#[test]
fn select_from_map() {
    snapshot_graph("select_from_map", names::NMS);
}
