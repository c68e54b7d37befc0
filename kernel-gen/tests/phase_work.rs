//! The timeline model (v2) takes each kernel's work from the emulator's counters and splits it
//! into a prologue, first blocks and later blocks by the kernel IR's calls
//! (`kernel_gen::phases`). That split is only as good as the IR's description of what the
//! kernel does: this runs chains of convs on the emulator whose readers build shifted views, at
//! widths of 2, 5 and 10 blocks a row (about a row a core at 160 wide, as conv3a/conv3b at
//! 640×480; the runs of the readers' first blocks differ with the width), or im2col tap rows by
//! runs of rows, at 2.5 (after a pool, as conv4a/conv4b and convPa), and checks, core by
//! core, that their readers' and computes' IR work comes within 10 % of what the model charges
//! their counters, less the NoC flight it charges their barriers (the IR has no call for it: 5
//! to 15 % of these readers' work, the more the fewer blocks a row); and that a reader IR which
//! leaves out the views' row fixes (about a third of its work) fails.

mod common;

use common::{bf16_rounded, chain, random_tensor, weight_inputs, weights, Layer};
use kernel_gen::kir::{Call, Kir, Role};
use kernel_gen::model::{self, Counts, NodeTimeline};
use kernel_gen::runner::{Loaded, StepCounters};
use kernel_gen::{compile, lower, plan, Format, PlanParams};
use tt_runtime::{KernelRole, TimelineModel};

const LAYERS: &[Layer] = &[
    ("c1", 1, 64, 3, true),
    ("c2", 64, 64, 3, true),
    ("c3", 64, 128, 3, true),
    ("c4", 128, 128, 3, true),
];
/// The same convs after a pool: at half the frame's width, which for a 160-wide frame is 2.5
/// blocks a row, where the planner takes tap rows by runs over half-block shifted views (as on
/// conv4a/conv4b and convPa at 640×480).
const POOLED: &[Layer] = &[
    ("c1", 1, 64, 3, true),
    ("pool", 0, 0, 0, false),
    ("c2", 64, 64, 3, true),
    ("c3", 64, 128, 3, true),
    ("c4", 128, 128, 3, true),
];
/// One chain: its frame and its layers.
struct Case {
    frame: (usize, usize),
    layers: &'static [Layer],
}

impl Case {
    /// The width and height the convs after the first run at: the frame's, halved by the pool.
    fn conv(&self) -> (usize, usize) {
        let pooled = self
            .layers
            .iter()
            .any(|(name, ..)| name.starts_with("pool"));
        let (width, height) = self.frame;
        if pooled {
            (width / 2, height / 2)
        } else {
            (width, height)
        }
    }
}

/// 2, 5 and 10 blocks a row, and 2.5.
const CASES: [Case; 4] = [
    Case {
        frame: (64, 128),
        layers: LAYERS,
    },
    Case {
        frame: (160, 128),
        layers: LAYERS,
    },
    Case {
        frame: (320, 128),
        layers: LAYERS,
    },
    Case {
        frame: (160, 256),
        layers: POOLED,
    },
];
/// The convs whose readers copy rows inside L1 (whole channel tiles in): shifted views, or tap
/// rows by runs.
const CONVS: [&str; 3] = ["c2", "c3", "c4"];
const TOLERANCE: f64 = 0.10;

/// The chain's kernel IR and the counters of one run of it on the emulator.
fn run(case: &Case) -> (Kir, Vec<StepCounters>) {
    let (width, height) = case.frame;
    let graph = chain(width, height, case.layers);
    let params = PlanParams::default();
    let compiled = compile(&graph, &params).expect("compiles");
    let kir = lower::lower(&plan::plan(&graph, &params).expect("plans")).expect("lowers");
    let dev = common::open(&compiled);
    let loaded = Loaded::load(&dev, &compiled).expect("loads");
    for (name, bytes) in weight_inputs(&compiled, &weights(case.layers, 3)) {
        loaded.write(&name, &bytes).expect("weights");
    }
    let frame = bf16_rounded(&random_tensor(1, height, width, 11));
    loaded
        .write("frame", &common::pack_input("frame", &frame, Format::Bf16))
        .expect("frame");
    for (name, ..) in case.layers {
        loaded.run_nodes(&dev, &[name]).expect("runs");
    }
    (kir, loaded.counters().expect("counters"))
}

/// Per conv of [`CONVS`], its `role` kernels' IR work over their counted work, lowest and highest, on the
/// cores whose blocks have a row of blocks above and below them in the image. (The IR counts
/// the reads and views of the rows outside the image too, which the edge cores skip, and the
/// cores without blocks only send weights.)
fn ratios(
    kir: &Kir,
    steps: &[StepCounters],
    case: &Case,
    role: KernelRole,
) -> Vec<(String, f64, f64)> {
    let (width, height) = case.conv();
    let row_blocks = width.div_ceil(32) as u32;
    let all_blocks = (width * height / 32) as u32;
    let timed: Vec<NodeTimeline> =
        model::timeline(kir, steps, Counts::Bound, &TimelineModel::BLACKHOLE).expect("models");
    timed
        .iter()
        .filter(|t| CONVS.contains(&t.node.as_str()))
        .map(|t| {
            let node = kir.nodes.iter().find(|n| n.node == t.node).expect("its IR");
            let mut start = 0;
            let interior: Vec<_> = node
                .blocks
                .iter()
                .filter_map(|&(core, count)| {
                    let inside = count > 0
                        && start >= row_blocks
                        && start + count + row_blocks <= all_blocks;
                    start += count;
                    inside.then_some(core)
                })
                .collect();
            assert!(!interior.is_empty(), "{}: no interior core", t.node);
            let ratios = t
                .phase_work
                .iter()
                .filter(|w| w.role == role && interior.contains(&w.core))
                .map(|w| w.ir_cycles / (w.counted_cycles - w.flight_cycles));
            let (low, high) = ratios.fold((f64::MAX, 0.0f64), |(l, h), r| (l.min(r), h.max(r)));
            (t.node.clone(), low, high)
        })
        .collect()
}

/// `calls` with the transfers of every row fix (an [`Call::L1Copy`] of no whole page) removed.
fn without_row_fixes(calls: &mut [Call]) -> usize {
    let mut removed = 0;
    for call in calls {
        match call {
            Call::L1Copy {
                tiles: 0,
                transfers,
                ..
            } => {
                *transfers = 0;
                removed += 1;
            }
            Call::Loop { body, .. } | Call::Dst { body, .. } => removed += without_row_fixes(body),
            _ => {}
        }
    }
    removed
}

#[test]
fn the_conv_readers_and_computes_ir_describes_their_counted_work() {
    for case in &CASES {
        let (kir, steps) = run(case);
        let width = case.conv().0;
        for role in [KernelRole::Reader, KernelRole::Compute] {
            let ratios = ratios(&kir, &steps, case, role);
            println!("{width} wide, IR work / counted work of the {role:?}s, lowest and highest core: {ratios:?}");
            assert_eq!(ratios.len(), CONVS.len(), "every conv modeled");
            for (node, low, high) in &ratios {
                assert!(
                    *low >= 1.0 - TOLERANCE && *high <= 1.0 + TOLERANCE,
                    "{node} at {width} wide: the {role:?}'s IR work is {low:.3}..{high:.3} of its counted work"
                );
            }
        }
    }
    let case = &CASES[1];
    let (kir, steps) = run(case);

    // The same counters against an IR without the views' row fixes: the check catches it.
    let mut blind = kir.clone();
    let mut removed = 0;
    for node in blind
        .nodes
        .iter_mut()
        .filter(|n| CONVS.contains(&n.node.as_str()))
    {
        for kernel in node.kernels.iter_mut().filter(|k| k.role == Role::Reader) {
            removed += without_row_fixes(&mut kernel.body);
        }
    }
    assert!(removed >= CONVS.len(), "each reader fixes rows");
    for (node, low, _) in ratios(&blind, &steps, case, KernelRole::Reader) {
        assert!(
            low < 1.0 - TOLERANCE,
            "{node}: without its row fixes the IR should fall short, at {low:.3}"
        );
    }
}
