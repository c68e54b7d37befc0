//! insta snapshots of the device resize of a small graph (a 100×70 plane to a 64×32 frame): one
//! per distinct kernel text and the dispatch program's summary, in the top-level `snapshots/`.

mod common;

use common::{chain, snapshot};
use kernel_gen::{compile, PlanParams};

#[test]
fn small_resize() {
    let params = PlanParams {
        input_size: Some((100, 70)),
        ..PlanParams::default()
    };
    let compiled = compile(&chain(64, 32, &[]), &params).expect("compiles");
    snapshot("resize_small", &compiled);
}
