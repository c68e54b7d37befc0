//! insta snapshots of the device resize of a small graph (a 100×70 plane to a 64×32 frame): one
//! per kernel role and the dispatch program, in the top-level `snapshots/`.

mod common;

use common::chain;
use kernel_gen::{compile, PlanParams};

#[test]
fn small_resize() {
    let params = PlanParams {
        input_size: Some((100, 70)),
        ..PlanParams::default()
    };
    let compiled = compile(&chain(64, 32, &[]), &params).expect("compiles");
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false, omit_expression => true}, {
        for (file, text) in &compiled.sources {
            let name = format!("resize_small__{}", file.trim_end_matches(".cpp").replace('/', "__"));
            insta::assert_snapshot!(name, text);
        }
        let json = compiled.program.to_json().expect("json");
        insta::assert_snapshot!("resize_small__program", json);
    });
}
