//! Emitted programs executed on the tt-runtime emulator against the reference evaluator of
//! superpoint-graph: conv2d (+bias, +ReLU) per layer at PCC ≥ 0.9999 in bf16 / HiFi2 / fp32 DST
//! and bit-identical to the outputs of the previous (element-gather) reader, over the shapes the
//! input ring and the row-run copies must handle (blocks crossing image rows, partial last
//! blocks, 1×1 and 3×3, 1 to 256 input channels, runs starting mid-row, several grids),
//! max-pool bit-identical, and a conv/pool chain; the conv weights' single DRAM read and
//! multicast, counted by the emulator. Shapes are small so the whole file runs in
//! seconds.

mod common;

use std::collections::BTreeMap;

use common::{bf16_rounded, chain, pcc, random_tensor, run, weight_inputs, weights, Layer};
use kernel_gen::kir::Role;
use kernel_gen::layout::{pack_activation, unpack_activation, ActivationShape};
use kernel_gen::runner::Loaded;
use kernel_gen::{compile, Core, Format, Grid, PlanParams, Precision};
use superpoint_graph::reference::{conv::conv2d, pool::max_pool2};
use superpoint_graph::Tensor;

const PCC_MIN: f64 = 0.9999;

fn shape_of(t: &Tensor<f32>) -> ActivationShape {
    ActivationShape {
        channels: t.channels,
        height: t.height,
        width: t.width,
        format: Format::Bf16,
    }
}

/// Runs conv layer `layers[index]` alone on a random `width`×`height` input (the frame is twice
/// as large per pool before the layer); returns its PCC against the reference on the same (bf16)
/// input and the FNV-1a hash of the whole output buffer (padding rows included).
fn conv_layer(
    width: usize,
    height: usize,
    layers: &[Layer],
    index: usize,
    grid: Grid,
) -> (f64, u64) {
    conv_layer_at(width, height, layers, index, grid, Precision::PORT)
}

/// [`conv_layer`] at `precision` (the input is the same bf16-rounded tensor, uploaded in the
/// precision's activation format).
fn conv_layer_at(
    width: usize,
    height: usize,
    layers: &[Layer],
    index: usize,
    grid: Grid,
    precision: Precision,
) -> (f64, u64) {
    let pools = layers[..index]
        .iter()
        .filter(|l| l.0.starts_with("pool"))
        .count();
    let graph = chain(width << pools, height << pools, layers);
    let params = PlanParams {
        grid,
        precision,
        ..PlanParams::default()
    };
    let compiled = compile(&graph, &params).expect("compiles");
    let ws = weights(layers, 7 + index as u64);
    let (name, inp, out, kernel, relu) = layers[index];
    let input_name = if index == 0 {
        "frame"
    } else {
        layers[index - 1].0
    };
    let x = bf16_rounded(&random_tensor(inp, height, width, 11));
    let mut inputs = weight_inputs(&compiled, &ws);
    inputs.insert(
        input_name.to_string(),
        common::pack_input(input_name, &x, precision.format),
    );
    let dev = common::open(&compiled);
    let (buffers, times) = run(&dev, &compiled, &inputs, &[name]);
    let expected = conv2d(&x, &ws[name], kernel / 2, relu);
    let shape = ActivationShape {
        format: precision.format,
        ..shape_of(&expected)
    };
    let got = unpack_activation(&buffers[name], shape).expect("output size");
    let r = pcc(&got.data, &expected.data);
    let hash = fnv1a(&buffers[name]);
    println!(
        "{name}: {inp}->{out} {kernel}x{kernel} relu={relu} {width}x{height} grid {}x{}: PCC {r:.7}, output hash {hash:#018x}, emulator {:?}",
        grid.x, grid.y, times[0].1
    );
    assert_eq!((got.channels, got.height, got.width), (out, height, width));
    (r, hash)
}

/// FNV-1a (64-bit) of `bytes`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Asserts the layer meets the PCC gate and its output is bit-identical to the output of the
/// reader that gathered every im2col element from re-read DRAM windows (the hash was recorded
/// from that kernel, commit 0acbc59, on the same inputs): the data movement changed, the
/// matmul operands must not.
fn assert_conv(
    width: usize,
    height: usize,
    layers: &[Layer],
    index: usize,
    grid: Grid,
    old_hash: u64,
) {
    let (r, hash) = conv_layer(width, height, layers, index, grid);
    assert!(r >= PCC_MIN, "{}: PCC {r}", layers[index].0);
    assert_eq!(
        hash, old_hash,
        "{}: output differs from the old reader's",
        layers[index].0
    );
}

/// 80×60 (the network's conv4 size): 150 blocks of 32 pixels cross image rows; on 12×10 the
/// first 30 cores take two blocks, so runs start and end mid-row (row runs: too few blocks a
/// core for half-block shifted views).
#[test]
fn conv_32_to_64_at_80x60_blocks_cross_rows() {
    let layers: &[Layer] = &[
        ("c0", 1, 32, 3, true),
        ("pool1", 0, 0, 0, false),
        ("pool2", 0, 0, 0, false),
        ("pool3", 0, 0, 0, false),
        ("conv", 32, 64, 3, true),
    ];
    assert_eq!(
        half_rows(&chain(640, 480, layers), Grid::ETH_DISPATCH),
        Some(false)
    );
    assert_conv(80, 60, layers, 4, Grid::ETH_DISPATCH, 0x4cc2_cf24_7ae9_5a33);
}

/// 40×30 (the network's head size) with 128 input channels: 37.5 blocks, the last one half
/// padding; one block per core on 11×10.
#[test]
fn conv_128_to_32_at_40x30_partial_last_block_on_the_11x10_grid() {
    let layers: &[Layer] = &[
        ("c0", 1, 128, 3, true),
        ("pool1", 0, 0, 0, false),
        ("pool2", 0, 0, 0, false),
        ("pool3", 0, 0, 0, false),
        ("pool4", 0, 0, 0, false),
        ("conv", 128, 32, 3, false),
    ];
    assert_conv(
        40,
        30,
        layers,
        5,
        Grid::TENSIX_DISPATCH,
        0x806c_9e35_ff06_5d1b,
    );
}

/// A 1×1 conv (pad 0) at 40×30 from 64 channels: a one-slot ring.
#[test]
fn conv_1x1_64_to_48_at_40x30() {
    let layers: &[Layer] = &[
        ("c0", 1, 64, 3, true),
        ("pool1", 0, 0, 0, false),
        ("pool2", 0, 0, 0, false),
        ("pool3", 0, 0, 0, false),
        ("pool4", 0, 0, 0, false),
        ("conv", 64, 48, 1, false),
    ];
    assert_conv(40, 30, layers, 5, Grid::ETH_DISPATCH, 0xe560_744a_586c_f63f);
}

/// Long runs (about 21 blocks a core on a 7×1 grid) at 80×60: the ring wraps many times and
/// every run starts and ends mid-row. With that many blocks a core the planner gives the
/// reader half-block shifted views (W = 2 · 32 + 16: the tap rows above and below start half
/// a block in), whose output is bit-identical to the old reader's.
#[test]
fn conv_64_to_32_at_80x60_long_runs_on_a_7x1_grid() {
    let layers: &[Layer] = &[
        ("c0", 1, 64, 3, true),
        ("pool1", 0, 0, 0, false),
        ("pool2", 0, 0, 0, false),
        ("pool3", 0, 0, 0, false),
        ("conv", 64, 32, 3, true),
    ];
    let grid = Grid { x: 7, y: 1 };
    assert_eq!(half_rows(&chain(640, 480, layers), grid), Some(true));
    assert_conv(80, 60, layers, 4, grid, 0xf2e6_ef37_dd06_beb4);
}

/// Whether the planner gives the graph's node `conv` half-block shifted views
/// (`ConvPlan::half_rows`) on `grid`; `None` if it is not a conv.
fn half_rows(graph: &superpoint_graph::Graph, grid: Grid) -> Option<bool> {
    let params = PlanParams {
        grid,
        ..PlanParams::default()
    };
    let plan = kernel_gen::plan::plan(graph, &params).expect("plans");
    plan.nodes.iter().find_map(|n| match &n.op {
        kernel_gen::plan::OpPlan::Conv2d(c) if n.name == "conv" => Some(c.half_rows()),
        _ => None,
    })
}

/// A 1-channel input at 40×30 (conv1a's element gather, from the ring) on a 5×1 grid.
#[test]
fn conv_1_to_16_at_40x30_element_gather_on_a_5x1_grid() {
    let layers: &[Layer] = &[
        ("c0", 1, 1, 3, true),
        ("pool1", 0, 0, 0, false),
        ("pool2", 0, 0, 0, false),
        ("pool3", 0, 0, 0, false),
        ("pool4", 0, 0, 0, false),
        ("conv", 1, 16, 3, true),
    ];
    assert_conv(
        40,
        30,
        layers,
        5,
        Grid { x: 5, y: 1 },
        0xfa6c_4e62_75a8_b6d4,
    );
}

/// A 1-channel input at 64×32 on 12×10 (conv1a's shape class: W a multiple of 32).
#[test]
fn conv_1_to_64_at_64x32_on_the_12x10_grid() {
    let layers: &[Layer] = &[("conv1a", 1, 64, 3, true)];
    assert_conv(64, 32, layers, 0, Grid::ETH_DISPATCH, 0xdc95_fd7c_6460_721b);
}

/// 64×32 with 64 channels on a 3×1 grid: W a multiple of 32, so the centre column of taps is
/// whole-tile copies.
#[test]
fn conv_64_to_64_at_64x32_on_a_3x1_grid() {
    let layers: &[Layer] = &[("conv1a", 1, 64, 3, true), ("conv1b", 64, 64, 3, true)];
    assert_conv(
        64,
        32,
        layers,
        1,
        Grid { x: 3, y: 1 },
        0x91a3_bbc2_eec1_bf0e,
    );
}

/// Shifted block views (W a multiple of 32, whole channel tiles), 64→32 channels at both
/// precisions: 128×32 (4 blocks an image row, 128 blocks) on a 5×1 grid, 25 or 26 blocks a core,
/// so runs start and end inside image rows and the ring wraps; and 64×32 on 12×10 (64 cores of
/// one or two blocks: every run begins next to the image border or mid-row). The first and last
/// image rows' taps read zeros. The hashes were recorded from the row-run reader (commit
/// 9dacce9) on the same inputs.
#[test]
fn conv_64_to_32_with_w_a_multiple_of_32_at_both_precisions() {
    let layers: &[Layer] = &[("c0", 1, 64, 3, true), ("conv", 64, 32, 3, true)];
    for (width, grid, precision, old_hash) in [
        (
            128,
            Grid { x: 5, y: 1 },
            Precision::PORT,
            0xcf11_9365_df7f_2a66,
        ),
        (
            128,
            Grid { x: 5, y: 1 },
            Precision::ACCURATE,
            0xc3f5_a3db_b860_ec9f,
        ),
        (
            64,
            Grid::ETH_DISPATCH,
            Precision::PORT,
            0xd3de_d828_2504_20e4,
        ),
        (
            64,
            Grid::ETH_DISPATCH,
            Precision::ACCURATE,
            0x2559_c28f_fce0_bac0,
        ),
    ] {
        let params = PlanParams {
            grid,
            precision,
            ..PlanParams::default()
        };
        let plan = kernel_gen::plan::plan(&chain(width, 32, layers), &params).expect("plans");
        assert!(plan.nodes.iter().any(
            |n| matches!(&n.op, kernel_gen::plan::OpPlan::Conv2d(c) if n.name == "conv" && c.shifted)
        ));
        let (r, hash) = conv_layer_at(width, 32, layers, 1, grid, precision);
        assert!(r >= PCC_MIN, "{width}x32 {:?}: PCC {r}", precision.format);
        assert_eq!(
            hash, old_hash,
            "{width}x32 {:?}: output differs from the row-run reader's",
            precision.format
        );
    }
}

#[test]
fn conv_3_to_5_odd_channels_non_square() {
    let layers: &[Layer] = &[("conv_a", 1, 3, 3, true), ("conv_b", 3, 5, 3, true)];
    assert_conv(64, 32, layers, 1, Grid::ETH_DISPATCH, 0x5004_9ebd_f509_26a3);
}

#[test]
fn conv_1_to_64_then_64_to_64() {
    let layers: &[Layer] = &[("conv1a", 1, 64, 3, true), ("conv1b", 64, 64, 3, true)];
    assert_conv(32, 32, layers, 0, Grid::ETH_DISPATCH, 0xeae4_42dd_60e5_5144);
    assert_conv(32, 32, layers, 1, Grid::ETH_DISPATCH, 0x1cce_be90_e518_757b);
}

#[test]
fn conv_1x1_256_to_65_without_relu_on_the_11x10_grid() {
    let layers: &[Layer] = &[("convPa", 1, 256, 3, true), ("convPb", 256, 65, 1, false)];
    assert_conv(
        32,
        32,
        layers,
        1,
        Grid::TENSIX_DISPATCH,
        0xefe6_8d5a_aeb8_e7a1,
    );
}

#[test]
fn max_pool_is_exact_with_two_channel_tiles() {
    let layers: &[Layer] = &[("conv", 1, 40, 3, true), ("pool", 0, 0, 0, false)];
    let graph = chain(64, 32, layers);
    let compiled = compile(&graph, &PlanParams::default()).expect("compiles");
    let x = bf16_rounded(&random_tensor(40, 32, 64, 5));
    let mut inputs = BTreeMap::new();
    inputs.insert("conv".to_string(), pack_activation(&x, Format::Bf16));
    let dev = common::open(&compiled);
    let (buffers, times) = run(&dev, &compiled, &inputs, &["pool"]);
    let expected = max_pool2(&x);
    let got = unpack_activation(&buffers["pool"], shape_of(&expected)).expect("output size");
    println!("pool 40x32x64: emulator {:?}", times[0].1);
    assert_eq!(got, expected);
}

/// Whether the planner pooled `node` by row-selection matmuls.
fn pools_by_selection(graph: &superpoint_graph::Graph, params: &PlanParams, node: &str) -> bool {
    let plan = kernel_gen::plan::plan(graph, params).expect("plans");
    plan.nodes.iter().any(|n| {
        n.name == node && matches!(&n.op, kernel_gen::plan::OpPlan::MaxPool2(p) if p.select)
    })
}

/// The row-selection pool (output width a multiple of 16) with three channel tiles and negative
/// values, on the 11×10 grid (single-block runs that start mid-row): an output two blocks wide,
/// one 2.5 blocks wide (blocks spanning output rows, like SuperPoint's pool3), and five pools in a
/// row down to a 16×1 output (half a block of padding): bit-identical to the reference at every
/// level; 8-wide outputs take the gather path.
#[test]
fn max_pool_by_row_selection_is_exact() {
    let params = PlanParams {
        grid: Grid::TENSIX_DISPATCH,
        ..PlanParams::default()
    };
    let one: &[Layer] = &[("conv", 1, 96, 3, true), ("pool", 0, 0, 0, false)];
    let five: &[Layer] = &[
        ("conv", 1, 96, 3, true),
        ("pool1", 0, 0, 0, false),
        ("pool2", 0, 0, 0, false),
        ("pool3", 0, 0, 0, false),
        ("pool4", 0, 0, 0, false),
        ("pool5", 0, 0, 0, false),
    ];
    assert!(!pools_by_selection(&chain(32, 32, five), &params, "pool2"));
    for (width, height, layers) in [(128, 32, one), (160, 32, one), (512, 32, five)] {
        let graph = chain(width, height, layers);
        let pools: Vec<&str> = layers[1..].iter().map(|l| l.0).collect();
        for pool in &pools {
            assert!(
                pools_by_selection(&graph, &params, pool),
                "{width}x{height} {pool}"
            );
        }
        let compiled = compile(&graph, &params).expect("compiles");
        let mut x = bf16_rounded(&random_tensor(96, height, width, 11));
        assert!(x.data.iter().any(|v| *v < 0.0));
        let mut inputs = BTreeMap::new();
        inputs.insert("conv".to_string(), pack_activation(&x, Format::Bf16));
        let dev = common::open(&compiled);
        let (buffers, _) = run(&dev, &compiled, &inputs, &pools);
        for pool in &pools {
            let expected = max_pool2(&x);
            let got = unpack_activation(&buffers[*pool], shape_of(&expected)).expect("output size");
            assert_eq!(got, expected, "{width}x{height} {pool}");
            x = got;
        }
    }
}

/// conv → pool three times down to 4×4 (16 pixels: half a block of padding rows), then a conv:
/// each layer is compared with the reference applied to the device's own input.
#[test]
fn conv_pool_chain_down_to_a_partial_block() {
    let layers: &[Layer] = &[
        ("c1", 1, 8, 3, true),
        ("pool1", 0, 0, 0, false),
        ("c2", 8, 16, 3, true),
        ("pool2", 0, 0, 0, false),
        ("c3", 16, 24, 3, true),
        ("pool3", 0, 0, 0, false),
        ("c4", 24, 33, 3, false),
    ];
    let graph = chain(32, 32, layers);
    let compiled = compile(&graph, &PlanParams::default()).expect("compiles");
    let ws = weights(layers, 3);
    let frame = bf16_rounded(&random_tensor(1, 32, 32, 9));
    let mut inputs = weight_inputs(&compiled, &ws);
    inputs.insert(
        "frame".to_string(),
        common::pack_input("frame", &frame, Format::Bf16),
    );
    let dev = common::open(&compiled);
    let names: Vec<&str> = layers.iter().map(|l| l.0).collect();
    let (buffers, times) = run(&dev, &compiled, &inputs, &names);
    let mut input = frame;
    let mut side = 32;
    for (name, _, out, kernel, relu) in layers {
        let (expected, channels) = if name.starts_with("pool") {
            side /= 2;
            (max_pool2(&input), input.channels)
        } else {
            (conv2d(&input, &ws[*name], kernel / 2, *relu), *out)
        };
        let shape = ActivationShape {
            channels,
            height: side,
            width: side,
            format: Format::Bf16,
        };
        let got = unpack_activation(&buffers[*name], shape).expect("output size");
        if name.starts_with("pool") {
            assert_eq!(got, expected, "{name}");
        } else {
            let r = pcc(&got.data, &expected.data);
            println!("{name}: PCC {r:.7}");
            assert!(r >= PCC_MIN, "{name}: PCC {r}");
        }
        input = got;
    }
    println!("chain step times: {times:?}");
}

/// The reader reads every input block its run's taps touch from DRAM exactly once: on a 7×1
/// grid at 72×60 (135 blocks; W not a multiple of 16, so row runs; 3×3 taps reach 73 pixels,
/// ⌈73/32⌉ = 3 blocks either side) core i has blocks [start, start + count) and reads blocks
/// [start − 3, start + count + 2] ∩ [0, 134], 2 channel tiles each; core 0, the weights'
/// multicast sender, also computes blocks, so its writer reads the 18 weight tiles and the
/// bias tile. The emulator counts what the kernels read; the static report (kernel IR) is the
/// bound without the skipped blocks.
#[test]
fn conv_reader_reads_each_input_block_once_per_core() {
    let layers: &[Layer] = &[
        ("c0", 1, 64, 3, true),
        ("pool1", 0, 0, 0, false),
        ("pool2", 0, 0, 0, false),
        ("pool3", 0, 0, 0, false),
        ("conv", 64, 32, 3, true),
    ];
    // 135 blocks on 7 cores: at most 20 a core (7 × 19 < 135), so the weights' sender takes
    // 135 − 6 × 20 = 15 and the others 20 each.
    assert_reads_each_block_once(
        layers,
        (576, 480),
        (72, 60),
        3,
        false,
        [15, 20, 20, 20, 20, 20, 20],
    );
}

/// The same with half-block shifted views at 80×60 (W = 2 · 32 + 16): the tap rows of a run
/// reach the half parts of the blocks 3 either side, built from the views of the blocks 3 either
/// side, built from the blocks 4 either side, so core i reads blocks
/// [start − 4, start + count + 3] ∩ [0, 149], once each.
#[test]
fn conv_reader_with_half_block_rows_reads_each_input_block_once_per_core() {
    let layers: &[Layer] = &[
        ("c0", 1, 64, 3, true),
        ("pool1", 0, 0, 0, false),
        ("pool2", 0, 0, 0, false),
        ("pool3", 0, 0, 0, false),
        ("conv", 64, 32, 3, true),
    ];
    // 150 blocks on 7 cores: at most 22 a core (7 × 21 < 150), so the weights' sender takes
    // 150 − 6 × 22 = 18 and the others 22 each.
    assert_reads_each_block_once(
        layers,
        (640, 480),
        (80, 60),
        4,
        true,
        [18, 22, 22, 22, 22, 22, 22],
    );
}

/// The same with shifted views (W 128, 4 blocks an image row): the views of the blocks 4 either
/// side of a run are built from the blocks one further, so core i reads blocks
/// [start − 5, start + count + 4] ∩ [0, 127], once each.
#[test]
fn conv_reader_with_shifted_views_reads_each_input_block_once_per_core() {
    let layers: &[Layer] = &[("c0", 1, 64, 3, true), ("conv", 64, 32, 3, true)];
    // 128 blocks on 7 cores: at most 19 a core, the sender 128 − 6 × 19 = 14.
    assert_reads_each_block_once(
        layers,
        (128, 32),
        (128, 32),
        5,
        true,
        [14, 19, 19, 19, 19, 19, 19],
    );
}

/// Runs the last layer of `layers` (3×3, 64→32) of a `frame`-sized chain on a 7×1 grid on an
/// `input` (W, H) activation and checks each core's DRAM reads: its reader's, blocks `reach`
/// either side of its run, inside the image, 2 tiles each; its writer's, the 19 weight and bias
/// tiles on core 0 (the sender computes blocks: `Multicast::reads_on_writer`), none elsewhere;
/// and the static report's bound. `shifted`: which reader the planner must have chosen (a
/// half-block one when W is not a multiple of 32); `counts`: the output blocks of each core.
fn assert_reads_each_block_once(
    layers: &[Layer],
    frame: (usize, usize),
    input: (usize, usize),
    reach: u64,
    shifted: bool,
    counts: [u64; 7],
) {
    let graph = chain(frame.0, frame.1, layers);
    let grid = Grid { x: 7, y: 1 };
    let params = PlanParams {
        grid,
        ..PlanParams::default()
    };
    let p = kernel_gen::plan::plan(&graph, &params).expect("plans");
    assert!(p.nodes.iter().any(|n| matches!(&n.op,
        kernel_gen::plan::OpPlan::Conv2d(c) if n.name == "conv" && c.shifted == shifted
            && c.half_rows() == (shifted && input.0 % 32 != 0))));
    let compiled = compile(&graph, &params).expect("compiles");
    let ws = weights(layers, 1);
    let x = bf16_rounded(&random_tensor(64, input.1, input.0, 2));
    let dev = common::open(&compiled);
    let loaded = Loaded::load(&dev, &compiled).expect("loads");
    for (name, bytes) in weight_inputs(&compiled, &ws) {
        loaded.write(&name, &bytes).expect("weights");
    }
    let previous = layers[layers.len() - 2].0;
    loaded
        .write(previous, &pack_activation(&x, Format::Bf16))
        .expect("input");
    loaded.run_nodes(&dev, &["conv"]).expect("runs");
    let counters = loaded.counters().expect("counters");
    let step = counters.iter().find(|s| s.node == "conv").expect("step");
    let role = |role: Role| {
        step.kernels
            .iter()
            .find(|k| k.role == role)
            .expect("kernel")
    };
    let (reader, writer) = (role(Role::Reader), role(Role::Writer));
    let blocks = (input.0 * input.1 / 32) as u64;
    let tile = 2048u64;
    let mut start = 0u64;
    let mut total = 0;
    let mut bound = 0;
    assert_eq!(counts.iter().sum::<u64>(), blocks);
    for i in 0..7u64 {
        let count = counts[i as usize];
        let first = start.saturating_sub(reach);
        let last = (start + count - 1 + reach).min(blocks - 1);
        let weights = if i == 0 { 19 * tile } else { 0 };
        let expected = (last - first + 1) * 2 * tile;
        let (core, got) = &reader.cores[i as usize];
        assert_eq!(core.x as u64, i);
        assert_eq!(got.dram_read_bytes, expected, "core {i}");
        let (core, wrote) = &writer.cores[i as usize];
        assert_eq!(core.x as u64, i);
        assert_eq!(wrote.dram_read_bytes, weights, "core {i}'s writer");
        total += expected + weights;
        bound += (2 * reach + count) * 2 * tile + weights;
        start += count;
    }
    let kir = kernel_gen::lower::lower(&p).expect("lowers");
    let report = kernel_gen::report::report(&kir);
    let conv = report.iter().find(|r| r.node == "conv").expect("report");
    // The first and last cores skip `reach` blocks each before the image start and past its end.
    assert_eq!(bound - total, 2 * reach * 2 * tile);
    assert_eq!(conv.dram_read_bytes, bound);
}

/// Runs layer 1 of `layers` (1×1, `inp` channels) alone on a `width`×`height` frame, checks its
/// PCC, and returns the reader's and the writer's counters per core in split order (the sender
/// first).
fn kernel_counters(
    width: usize,
    height: usize,
    layers: &[Layer],
    grid: Grid,
) -> (
    kernel_gen::program::Step,
    Vec<(tt_runtime::Counters, tt_runtime::Counters)>,
) {
    let graph = chain(width, height, layers);
    let params = PlanParams {
        grid,
        ..PlanParams::default()
    };
    let compiled = compile(&graph, &params).expect("compiles");
    let ws = weights(layers, 21);
    let (name, inp, _, kernel, relu) = layers[1];
    let x = bf16_rounded(&random_tensor(inp, height, width, 23));
    let dev = common::open(&compiled);
    let loaded = Loaded::load(&dev, &compiled).expect("program loads");
    for (buffer, bytes) in weight_inputs(&compiled, &ws) {
        loaded.write(&buffer, &bytes).expect("weights");
    }
    loaded
        .write(layers[0].0, &pack_activation(&x, Format::Bf16))
        .expect("input");
    loaded
        .run_nodes(&dev, &[name])
        .expect("runs on the emulator");
    let expected = conv2d(&x, &ws[name], kernel / 2, relu);
    let got = unpack_activation(&loaded.read(name).expect("read"), shape_of(&expected))
        .expect("output size");
    let r = pcc(&got.data, &expected.data);
    println!("{name} on {}x{}: PCC {r:.7}", grid.x, grid.y);
    assert!(r >= PCC_MIN, "{name}: PCC {r}");
    let step = compiled.program.step(name).expect("step").clone();
    let counters = loaded.counters().expect("counters");
    let kernel = |role: Role| {
        counters
            .iter()
            .find(|s| s.node == name)
            .and_then(|s| s.kernels.iter().find(|k| k.role == role))
            .expect("kernel counters")
    };
    let (reader, writer) = (kernel(Role::Reader), kernel(Role::Writer));
    let on = |k: &kernel_gen::runner::KernelCounters, c: &Core| {
        k.cores
            .iter()
            .find(|(core, _)| core == c)
            .map(|(_, n)| *n)
            .expect("core counters")
    };
    let per_core = step.kernels[0]
        .core_args()
        .expect("the rules expand")
        .iter()
        .map(|a| (on(reader, &a.core), on(writer, &a.core)))
        .collect();
    (step, per_core)
}

/// The first core reads the 1×1 64→32 conv's weights (2 tiles) and bias (1 tile) from DRAM
/// and its writer multicasts them once per rectangle of the split: the full rows (with the
/// sender, by loopback) and the partial last row on 64 cores of either grid, one rectangle on
/// the whole 12×10 grid. Every other core reads only its own input tile rows (2 tiles per
/// block). 64 blocks on 64 cores: one each, so the sender computes a block and its writer also
/// does the DRAM reads; 128 on 120: at most 2 a core, so the sender takes none and its reader
/// reads them, and cores 1 to 9 two each.
#[test]
fn conv_weights_are_read_once_and_multicast_per_rectangle_on_both_grids() {
    let layers: &[Layer] = &[("conv_a", 1, 64, 3, true), ("conv_b", 64, 32, 1, true)];
    let tile = 2048u64;
    for (width, height, grid, cores, rects) in [
        (64, 32, Grid::ETH_DISPATCH, 64u64, 2u64),
        (64, 32, Grid::TENSIX_DISPATCH, 64, 2),
        (64, 64, Grid::ETH_DISPATCH, 120, 1),
    ] {
        let (step, counters) = kernel_counters(width, height, layers, grid);
        assert_eq!(counters.len() as u64, cores);
        assert_eq!(step.semaphores, 3);
        let blocks = (width * height / 32) as u64;
        for (i, (r, w)) in counters.iter().enumerate() {
            let own = match (blocks, i) {
                (64, _) => 1,
                (_, 0) => 0,
                (_, 1..=9) => 2,
                _ => 1,
            };
            if i == 0 {
                // The reads on the writer when the sender computes a block, else on the reader.
                let (loads, on_reader) = if own > 0 { (w, 0) } else { (r, 2 + 1) };
                assert_eq!(r.dram_read_bytes, (on_reader + 2 * own) * tile);
                assert_eq!(w.dram_read_bytes, (2 + 1 - on_reader) * tile);
                // The two weight tiles are one 4 KiB DRAM page (size class 6: 2049..=4096 B).
                assert_eq!(loads.noc_reads[6], 1);
                assert_eq!((r.noc_mcasts, r.noc_mcast_bytes), (0, 0));
                assert_eq!(w.noc_mcasts, 2 * rects);
                assert_eq!(w.noc_mcast_bytes, rects * (2 + 1) * tile);
                // Destinations reached per CB: every core, the sender by loopback.
                assert_eq!(w.noc_mcast_dests, 2 * cores);
                assert_eq!(w.noc_sem_ops, rects);
            } else {
                assert_eq!(r.dram_read_bytes, 2 * own * tile, "core {i}");
                assert_eq!((r.noc_mcasts, r.noc_sem_ops), (0, 1), "core {i}");
                assert_eq!((w.dram_read_bytes, w.noc_mcasts), (0, 0), "core {i}");
            }
        }
    }
}

/// On a one-core grid the conv's only core reads its weights itself: 2 weight tiles, 1 bias
/// tile and the 2 input tiles of each of its 32 blocks (32×32 pixels), no semaphores, no
/// multicast.
#[test]
fn conv_on_a_single_core_reads_its_weights_without_multicast() {
    let layers: &[Layer] = &[("conv_a", 1, 64, 3, true), ("conv_b", 64, 32, 1, false)];
    let (step, cores) = kernel_counters(32, 32, layers, Grid { x: 1, y: 1 });
    assert_eq!(cores.len(), 1);
    assert_eq!(step.semaphores, 0);
    let (reader, writer) = &cores[0];
    assert_eq!(reader.dram_read_bytes, (2 + 1 + 32 * 2) * 2048);
    assert_eq!((reader.noc_mcasts, reader.noc_sem_ops), (0, 0));
    assert_eq!(
        (
            writer.dram_read_bytes,
            writer.noc_mcasts,
            writer.noc_sem_ops
        ),
        (0, 0, 0)
    );
}

/// The slices of output channels `conv` gets on `grid` at `precision`
/// ([`kernel_gen::plan::Split::sliced`]), and the most rectangles a slice's group of cores takes.
fn conv_slices(graph: &superpoint_graph::Graph, grid: Grid, precision: Precision) -> (u32, usize) {
    let params = PlanParams {
        grid,
        precision,
        ..PlanParams::default()
    };
    let plan = kernel_gen::plan::plan(graph, &params).expect("plans");
    plan.nodes
        .iter()
        .find_map(|n| match &n.op {
            kernel_gen::plan::OpPlan::Conv2d(c) if n.name == "conv" => Some((
                c.slices,
                n.split.slices.iter().map(Vec::len).max().unwrap_or(0),
            )),
            _ => None,
        })
        .expect("the conv is planned")
}

/// Output channels split over groups of cores: at 80×60 (150 blocks) 128→256 3×3 (convPa's
/// shape) in 2 slices of 4 output tiles on both full grids (rows 0–4 and 5–9, each group's
/// weights from its own sender), 128→192 in 3 of 2 at the accurate precision (hi + lo weights,
/// Float32 activations; 4 columns of 10 cores a group; the unsliced 128→256 would not fit one
/// core's 1427 KiB), and 256→256 1×1
/// (convDb's) in 2, also on a 7×3 grid (groups of 10 cores as
/// two rectangles each: a row and 3 cores, 4 cores and a row of 6; two multicasts per CB: 3×3
/// squares would take 17 blocks a core, not 15); at 40×16 (20 blocks) 64→128 3×3 in 2 slices
/// of two output tiles on an 8×8 grid, on 4×5 rectangles of 20 cores (`Split::tiled`: 20
/// consecutive cores would be two rows and 4; in 4 slices of 16, two rows each, the cores took
/// 2 blocks each). Each meets the PCC gate and
/// is bit-identical to the same conv unsliced on a 7×1 grid (same products, same K order),
/// whose slices the planner leaves at 1.
#[test]
fn convs_sliced_over_output_channels_equal_the_unsliced_conv() {
    let wide: &[Layer] = &[
        ("c0", 1, 128, 3, true),
        ("pool1", 0, 0, 0, false),
        ("pool2", 0, 0, 0, false),
        ("pool3", 0, 0, 0, false),
        ("conv", 128, 256, 3, true),
    ];
    let pointwise: &[Layer] = &[
        ("c0", 1, 256, 3, true),
        ("pool1", 0, 0, 0, false),
        ("pool2", 0, 0, 0, false),
        ("pool3", 0, 0, 0, false),
        ("conv", 256, 256, 1, false),
    ];
    let accurate: &[Layer] = &[
        ("c0", 1, 128, 3, true),
        ("pool1", 0, 0, 0, false),
        ("pool2", 0, 0, 0, false),
        ("pool3", 0, 0, 0, false),
        ("conv", 128, 192, 3, true),
    ];
    let narrow: &[Layer] = &[
        ("c0", 1, 64, 3, true),
        ("pool1", 0, 0, 0, false),
        ("pool2", 0, 0, 0, false),
        ("pool3", 0, 0, 0, false),
        ("conv", 64, 128, 3, true),
    ];
    let unsliced = Grid { x: 7, y: 1 };
    for (layers, (width, height), grid, precision, slices) in [
        (wide, (80, 60), Grid::ETH_DISPATCH, Precision::PORT, (2, 1)),
        (
            wide,
            (80, 60),
            Grid::TENSIX_DISPATCH,
            Precision::PORT,
            (2, 1),
        ),
        (
            accurate,
            (80, 60),
            Grid::ETH_DISPATCH,
            Precision::ACCURATE,
            (3, 1),
        ),
        (
            pointwise,
            (80, 60),
            Grid::ETH_DISPATCH,
            Precision::PORT,
            (2, 1),
        ),
        (
            pointwise,
            (80, 60),
            Grid { x: 7, y: 3 },
            Precision::PORT,
            (2, 2),
        ),
        (
            narrow,
            (40, 16),
            Grid { x: 8, y: 8 },
            Precision::PORT,
            (2, 1),
        ),
    ] {
        let graph = chain(width * 8, height * 8, layers);
        assert_eq!(conv_slices(&graph, grid, precision), slices);
        assert_eq!(conv_slices(&graph, unsliced, precision), (1, 0));
        let (r, hash) = conv_layer_at(width, height, layers, 4, grid, precision);
        let (r1, hash1) = conv_layer_at(width, height, layers, 4, unsliced, precision);
        assert!(
            r >= PCC_MIN && r1 >= PCC_MIN,
            "PCC {r} sliced, {r1} unsliced"
        );
        assert_eq!(hash, hash1, "{grid:?} {precision:?}: sliced output differs");
    }
}

/// Runs the step named `step` of `graph` (its convs' input `pool3` written with `x`, weights
/// from `ws`) on `grid` and returns the output buffers `outputs`.
fn run_step(
    graph: &superpoint_graph::Graph,
    grid: Grid,
    ws: &superpoint_graph::WeightSet,
    x: &Tensor<f32>,
    step: &str,
    outputs: &[&str],
) -> Vec<Vec<u8>> {
    let params = PlanParams {
        grid,
        ..PlanParams::default()
    };
    let compiled = compile(graph, &params).expect("compiles");
    assert!(compiled.program.step(step).is_some(), "{step}");
    let mut inputs = weight_inputs(&compiled, ws);
    inputs.insert(
        "pool3".to_string(),
        common::pack_input("pool3", x, Format::Bf16),
    );
    let dev = common::open(&compiled);
    let (buffers, _) = run(&dev, &compiled, &inputs, &[step]);
    outputs.iter().map(|o| buffers[*o].clone()).collect()
}

/// Two 128 → 256 3×3 ReLU convs of one 80×60 input (convPa's and convDa's shape) run as one
/// step (`plan::conv::FusedConv`: 4 slices, slices 0–1 the first conv's output tiles from its
/// weights, 2–3 the second's) on both full grids: each output bit-identical to the conv run
/// alone (same products in the same K order), and at the PCC gate against the reference.
#[test]
fn fused_convs_equal_each_conv_alone() {
    let head: &[Layer] = &[
        ("c0", 1, 128, 3, true),
        ("pool1", 0, 0, 0, false),
        ("pool2", 0, 0, 0, false),
        ("pool3", 0, 0, 0, false),
    ];
    let with = |last: &'static str| [head, &[(last, 128, 256, 3, true)]].concat();
    let both = [with("pa"), vec![("da", 128, 256, 3, true)]].concat();
    let ws = weights(&both, 23);
    let x = bf16_rounded(&random_tensor(128, 60, 80, 29));
    let mut fused = chain(640, 480, &with("pa"));
    fused.nodes.push(superpoint_graph::Node {
        name: "da".into(),
        inputs: vec!["pool3".into()],
        op: superpoint_graph::Op::Conv2d {
            weights: "da".into(),
            in_channels: 128,
            out_channels: 256,
            kernel: 3,
            pad: 1,
            relu: true,
        },
    });
    fused.outputs = vec!["pa".into(), "da".into()];
    for grid in [Grid::ETH_DISPATCH, Grid::TENSIX_DISPATCH] {
        let together = run_step(&fused, grid, &ws, &x, "pa+da", &["pa", "da"]);
        for (i, name) in ["pa", "da"].into_iter().enumerate() {
            let alone = run_step(&chain(640, 480, &with(name)), grid, &ws, &x, name, &[name]);
            assert!(
                together[i] == alone[0],
                "{grid:?} {name}: fused output differs"
            );
            let expected = conv2d(&x, &ws[name], 1, true);
            let got = unpack_activation(&together[i], shape_of(&expected)).expect("output size");
            let r = pcc(&got.data, &expected.data);
            assert!(r >= PCC_MIN, "{grid:?} {name}: PCC {r}");
        }
    }
}
