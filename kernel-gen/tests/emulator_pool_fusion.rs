//! A conv and its 2×2 max-pool in one step (`kernel_gen::ops::conv_pool`), on the emulator: the
//! pooled output is bit-identical to the two programs apart (the same graph with the conv's
//! output kept in DRAM, which keeps them apart), equals the reference max-pool of that unfused
//! conv output exactly, and meets the conv's PCC gate against the reference conv + pool. Shapes
//! cover one and two row pairs a core, one to four output-channel tiles (DST groups of one and
//! two, two groups a block), with and without ReLU (negative maxima), with the shifted views and
//! the row-run reader.

mod common;

use std::collections::BTreeSet;

use common::{bf16_rounded, chain, pcc, random_tensor, run, weight_inputs, weights, Layer};
use kernel_gen::layout::{pack_activation, unpack_activation, ActivationShape};
use kernel_gen::plan::{ConvPlan, OpPlan};
use kernel_gen::{compile, Format, Grid, PlanParams};
use superpoint_graph::reference::{conv::conv2d, pool::max_pool2};

const PCC_MIN: f64 = 0.9999;

/// The plan of conv `conv` under `params`.
fn conv_plan(graph: &superpoint_graph::Graph, params: &PlanParams, conv: &str) -> ConvPlan {
    let plan = kernel_gen::plan::plan(graph, params).expect("plans");
    plan.nodes
        .iter()
        .find(|n| n.name == conv)
        .and_then(|n| match &n.op {
            OpPlan::Conv2d(c) => Some(c.clone()),
            _ => None,
        })
        .expect("a conv step")
}

/// Whether the plan of `params` runs conv `conv` with its pool fused.
fn fused(graph: &superpoint_graph::Graph, params: &PlanParams, conv: &str) -> bool {
    conv_plan(graph, params, conv).pooled
}

/// Conv `c2` (`inp` → `out` channels, 3×3, `relu`) and a pool on a random `width`×`height`
/// input uploaded as `c1`'s output, on `grid`, fused and apart; `shifted`: whether the conv
/// reads shifted views (else row runs). Returns the fused step's pooled output.
fn conv_pool(
    (width, height): (usize, usize),
    (inp, out): (usize, usize),
    relu: bool,
    grid: Grid,
    shifted: bool,
) -> Vec<u8> {
    let layers: &[Layer] = &[
        ("c1", 1, inp, 3, true),
        ("c2", inp, out, 3, relu),
        ("pool", 0, 0, 0, false),
    ];
    let graph = chain(width, height, layers);
    let fused_params = PlanParams {
        grid,
        ..PlanParams::default()
    };
    let apart_params = PlanParams {
        keep_in_dram: BTreeSet::from(["c2".to_string()]),
        ..fused_params.clone()
    };
    assert!(fused(&graph, &fused_params, "c2"), "{width}x{height}");
    assert_eq!(conv_plan(&graph, &fused_params, "c2").shifted, shifted);
    assert!(!fused(&graph, &apart_params, "c2"), "{width}x{height}");

    let ws = weights(layers, 21);
    let x = bf16_rounded(&random_tensor(inp, height, width, 5));
    let outputs = |params: &PlanParams, steps: &[&str]| {
        let compiled = compile(&graph, params).expect("compiles");
        let mut inputs = weight_inputs(&compiled, &ws);
        inputs.insert("c1".to_string(), pack_activation(&x, Format::Bf16));
        let dev = common::open(&compiled);
        let (buffers, times) = run(&dev, &compiled, &inputs, steps);
        println!(
            "{width}x{height} {inp}->{out} relu={relu} on {}x{}: {times:?}",
            grid.x, grid.y
        );
        buffers
    };
    let together = outputs(&fused_params, &["c2"]);
    let apart = outputs(&apart_params, &["c2", "pool"]);
    assert!(
        !together.contains_key("c2"),
        "the fused conv writes no output of its own"
    );
    assert_eq!(together["pool"], apart["pool"], "fused and apart differ");

    let conv_shape = ActivationShape {
        channels: out,
        height,
        width,
        format: Format::Bf16,
    };
    let pool_shape = ActivationShape {
        height: height / 2,
        width: width / 2,
        ..conv_shape
    };
    let device_conv = unpack_activation(&apart["c2"], conv_shape).expect("conv output size");
    let got = unpack_activation(&together["pool"], pool_shape).expect("pool output size");
    assert_eq!(
        got,
        max_pool2(&device_conv),
        "not the max-pool of the conv's output"
    );
    if !relu {
        assert!(
            got.data.iter().any(|v| *v < 0.0),
            "no negative maximum tested"
        );
    }
    let expected = max_pool2(&conv2d(&x, &ws["c2"], 1, relu));
    let r = pcc(&got.data, &expected.data);
    assert!(r >= PCC_MIN, "PCC {r}");
    together["pool"].clone()
}

/// The output blocks of conv `conv` per core of its split under `params` (a fused step's: its
/// pooled output blocks), in split order (the first core is its weights' multicast sender).
fn block_counts(graph: &superpoint_graph::Graph, params: &PlanParams, conv: &str) -> Vec<u32> {
    let plan = kernel_gen::plan::plan(graph, params).expect("plans");
    plan.nodes
        .iter()
        .find(|n| n.name == conv)
        .map(|n| n.split.work.iter().map(|w| w.count).collect())
        .expect("a conv step")
}

/// Where the weights' sender computes no blocks its reader reads them and they come in rounds
/// (`kernel_gen::multicast`): the shifted-view reader pushes the later ones in its first block
/// and both computes (fused, and the conv apart) wait for them as their first block's K steps
/// need them. 128×64 on 11×3 and 128×96 on 5×5: the sender takes no blocks, the others one pair
/// (8 blocks) or two each. The first's pooled output is the bits of the same conv and pool on
/// 4×4, where the sender computes blocks and its writer sends the weights in one round.
#[test]
fn weights_in_rounds_while_the_first_blocks_run() {
    let layers: &[Layer] = &[
        ("c1", 1, 64, 3, true),
        ("c2", 64, 64, 3, true),
        ("pool", 0, 0, 0, false),
    ];
    let sender_idle = |(width, height), grid| {
        let params = PlanParams {
            grid,
            ..PlanParams::default()
        };
        block_counts(&chain(width, height, layers), &params, "c2").first() == Some(&0)
    };
    let (rounds, one_round) = (Grid { x: 11, y: 3 }, Grid { x: 4, y: 4 });
    assert!(sender_idle((128, 64), rounds) && !sender_idle((128, 64), one_round));
    let pooled = conv_pool((128, 64), (64, 64), true, rounds, true);
    assert_eq!(
        pooled,
        conv_pool((128, 64), (64, 64), true, one_round, true),
        "the rounds change the output"
    );
    assert!(sender_idle((128, 96), Grid { x: 5, y: 5 }));
    conv_pool((128, 96), (64, 64), true, Grid { x: 5, y: 5 }, true);
}

/// 128×32 on 4×4: 128 blocks, 8 a core, one pair of 4-block rows each; two output tiles in one
/// DST group of two (beside the upper row's two).
#[test]
fn one_row_pair_a_core() {
    conv_pool((128, 32), (64, 64), true, Grid { x: 4, y: 4 }, true);
}

/// 128×32 on 2×2: 16 blocks a core, two pairs each; four output tiles, two groups of two a block.
#[test]
fn two_row_pairs_a_core_and_two_groups_a_block() {
    conv_pool((128, 32), (32, 128), true, Grid { x: 2, y: 2 }, true);
}

/// 256×32 on 4×2, no ReLU: 8-block rows, two pairs a core; three output tiles in groups of one;
/// negative maxima.
#[test]
fn without_relu_and_three_output_tiles() {
    conv_pool((256, 32), (64, 96), false, Grid { x: 4, y: 2 }, true);
}

/// 16 input channels (not whole tiles): the row-run reader's im2col tiles instead of the shifted
/// views, on 4×4 (one pair a core).
#[test]
fn with_the_row_run_reader() {
    conv_pool((128, 32), (16, 64), true, Grid { x: 4, y: 4 }, false);
}

/// Runs that start and end mid-row: 128×32 on 3×1 (32 pooled blocks, two a pooled row: runs of
/// 11, 11 and 10, the second starting on a row's second unit) and 256×32 on 3×1 (four a row:
/// 22, 21, 21), so a core's span holds blocks of its neighbours' units, which its compute skips.
#[test]
fn runs_that_start_and_end_mid_row() {
    let grid = Grid { x: 3, y: 1 };
    for width in [128, 256] {
        let layers: &[Layer] = &[
            ("c1", 1, 64, 3, true),
            ("c2", 64, 64, 3, true),
            ("pool", 0, 0, 0, false),
        ];
        let params = PlanParams {
            grid,
            ..PlanParams::default()
        };
        let counts = block_counts(&chain(width, 32, layers), &params, "c2");
        assert!(
            counts.iter().any(|n| n % (width as u32 / 64) != 0),
            "{width}: {counts:?}"
        );
        conv_pool((width, 32), (64, 64), true, grid, true);
    }
}

/// W a multiple of 32 only: 96×32 on 4×4, half units (one conv block of each row, 16 pooled
/// columns, written as half tiles), three a pooled row, a row a core.
#[test]
fn half_units_where_the_width_is_not_a_multiple_of_64() {
    conv_pool((96, 32), (64, 64), true, Grid { x: 4, y: 4 }, true);
}

/// 160×32 on 8×4 (conv3b's rows of 5 blocks): 80 half units on 32 cores would give the busiest
/// 3 (6 blocks, the conv alone 5), so the step is planned in 2 output-channel slices, each group
/// of 16 cores a pooled row a core, each writing its slice's tiles of every unit.
#[test]
fn half_units_in_output_channel_slices() {
    let layers: &[Layer] = &[
        ("c1", 1, 64, 3, true),
        ("c2", 64, 64, 3, true),
        ("pool", 0, 0, 0, false),
    ];
    let params = PlanParams {
        grid: Grid { x: 8, y: 4 },
        ..PlanParams::default()
    };
    assert_eq!(conv_plan(&chain(160, 32, layers), &params, "c2").slices, 2);
    conv_pool((160, 32), (64, 64), false, Grid { x: 8, y: 4 }, true);
}

/// SuperPoint's conv1b → pool1 → conv2a → conv2b → pool2 at 640×480 on 12×10 (conv1b: 80
/// blocks a core, two pairs of 20-block rows; conv2b: one pair of 10-block rows).
#[test]
fn superpoint_pools_at_640x480_on_12x10_bit_for_bit() {
    superpoint_pools_bit_for_bit(Grid::ETH_DISPATCH);
}

/// The same on 11×10, where the runs start and end mid-row (conv1b: 21 or 22 pooled blocks a
/// core of the 10 a pooled row; conv2b: 5 or 6 of 5).
#[test]
fn superpoint_pools_at_640x480_on_11x10_bit_for_bit() {
    superpoint_pools_bit_for_bit(Grid::TENSIX_DISPATCH);
}

/// SuperPoint's conv1b → pool1 → conv2a → conv2b → pool2 at 640×480 on `grid`, from a random
/// conv1a output: pool1 and pool2 are bit-identical to the programs with the pools apart, and
/// pool1 is the exact max-pool of the unfused conv1b output.
fn superpoint_pools_bit_for_bit(grid: Grid) {
    let layers: &[Layer] = &[
        ("conv1b", 64, 64, 3, true),
        ("conv2a", 64, 64, 3, true),
        ("conv2b", 64, 64, 3, true),
    ];
    let graph = superpoint_graph::superpoint(640, 480).pruned(&["pool2"]);
    let fused_params = PlanParams {
        grid,
        external: BTreeSet::from(["conv1a".to_string()]),
        ..PlanParams::default()
    };
    let apart_params = PlanParams {
        keep_in_dram: BTreeSet::from(["conv1b".to_string(), "conv2b".to_string()]),
        ..fused_params.clone()
    };
    for conv in ["conv1b", "conv2b"] {
        assert!(fused(&graph, &fused_params, conv), "{conv}");
        assert!(!fused(&graph, &apart_params, conv), "{conv}");
    }
    let ws = weights(layers, 8);
    let x = bf16_rounded(&random_tensor(64, 480, 640, 12));
    let outputs = |params: &PlanParams, steps: &[&str]| {
        let compiled = compile(&graph, params).expect("compiles");
        let mut inputs = weight_inputs(&compiled, &ws);
        inputs.insert("conv1a".to_string(), pack_activation(&x, Format::Bf16));
        let dev = common::open(&compiled);
        let (buffers, times) = run(&dev, &compiled, &inputs, steps);
        println!("{times:?}");
        buffers
    };
    let together = outputs(&fused_params, &["conv1b", "conv2a", "conv2b"]);
    let apart = outputs(
        &apart_params,
        &["conv1b", "pool1", "conv2a", "conv2b", "pool2"],
    );
    assert!(together["pool1"] == apart["pool1"], "pool1 differs");
    assert!(together["pool2"] == apart["pool2"], "pool2 differs");
    let shape = ActivationShape {
        channels: 64,
        height: 480,
        width: 640,
        format: Format::Bf16,
    };
    let conv1b = unpack_activation(&apart["conv1b"], shape).expect("conv1b size");
    let pool1 = unpack_activation(
        &together["pool1"],
        ActivationShape {
            height: 240,
            width: 320,
            ..shape
        },
    )
    .expect("pool1 size");
    assert!(
        pool1 == max_pool2(&conv1b),
        "pool1 is not the max-pool of conv1b"
    );
}
