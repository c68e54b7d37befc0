//! insta snapshots of the NMS chain (`scores → nms → keypoints`, the score map uploaded by the
//! host) at 64×64 with radius 4: one per (step, kernel role) and the dispatch program, in the
//! top-level `snapshots/` folder.

use std::collections::BTreeSet;

use kernel_gen::{compile, PlanParams};
use superpoint_graph::{names, superpoint_with, SuperPointParams};

#[test]
fn nms_chain() {
    let graph = superpoint_with(&SuperPointParams {
        frame_width: 64,
        frame_height: 64,
        ..SuperPointParams::default()
    })
    .pruned(&[names::KEYPOINTS]);
    let params = PlanParams {
        external: BTreeSet::from([names::SCORES.to_string()]),
        ..PlanParams::default()
    };
    let compiled = compile(&graph, &params).expect("compiles");
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false, omit_expression => true}, {
        for (file, text) in &compiled.sources {
            let name = format!("nms_chain__{}", file.trim_end_matches(".cpp").replace('/', "__"));
            insta::assert_snapshot!(name, text);
        }
        let json = compiled.program.to_json().expect("json");
        insta::assert_snapshot!("nms_chain__program", json);
    });
}
