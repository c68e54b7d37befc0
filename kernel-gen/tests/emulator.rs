//! Emitted programs executed on the tt-runtime emulator against the reference evaluator of
//! superpoint-graph: conv2d (+bias, +ReLU) per layer at PCC ≥ 0.9999 in bf16 / HiFi2 / fp32 DST,
//! max-pool bit-identical, and a conv/pool chain; the conv weights' single DRAM read and
//! multicast, counted by the emulator. Shapes are small so the whole file runs in
//! seconds.

mod common;

use std::collections::BTreeMap;

use common::{bf16_rounded, chain, pcc, random_tensor, run, weight_inputs, weights, Layer};
use kernel_gen::kir::Role;
use kernel_gen::layout::{pack_activation, unpack_activation, ActivationShape};
use kernel_gen::runner::Loaded;
use kernel_gen::{compile, Core, Grid, PlanParams};
use superpoint_graph::reference::{conv::conv2d, pool::max_pool2};
use superpoint_graph::Tensor;

const PCC_MIN: f64 = 0.9999;

fn shape_of(t: &Tensor<f32>) -> ActivationShape {
    ActivationShape {
        channels: t.channels,
        height: t.height,
        width: t.width,
    }
}

/// Runs conv layer `layers[index]` alone on a random input; returns its PCC against the
/// reference on the same (bf16) input.
fn conv_layer_pcc(width: usize, height: usize, layers: &[Layer], index: usize, grid: Grid) -> f64 {
    let graph = chain(width, height, layers);
    let params = PlanParams {
        grid,
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
    inputs.insert(input_name.to_string(), pack_activation(&x));
    let dev = common::open(&compiled);
    let (buffers, times) = run(&dev, &compiled, &inputs, &[name]);
    let expected = conv2d(&x, &ws[name], kernel / 2, relu);
    let got = unpack_activation(&buffers[name], shape_of(&expected)).expect("output size");
    let r = pcc(&got.data, &expected.data);
    println!(
        "{name}: {inp}->{out} {kernel}x{kernel} relu={relu} {width}x{height} grid {}x{}: PCC {r:.7}, emulator {:?}",
        grid.x, grid.y, times[0].1
    );
    assert_eq!((got.channels, got.height, got.width), (out, height, width));
    r
}

#[test]
fn conv_3_to_5_odd_channels_non_square() {
    let layers: &[Layer] = &[("conv_a", 1, 3, 3, true), ("conv_b", 3, 5, 3, true)];
    assert!(conv_layer_pcc(64, 32, layers, 1, Grid::ETH_DISPATCH) >= PCC_MIN);
}

#[test]
fn conv_1_to_64_then_64_to_64() {
    let layers: &[Layer] = &[("conv1a", 1, 64, 3, true), ("conv1b", 64, 64, 3, true)];
    assert!(conv_layer_pcc(32, 32, layers, 0, Grid::ETH_DISPATCH) >= PCC_MIN);
    assert!(conv_layer_pcc(32, 32, layers, 1, Grid::ETH_DISPATCH) >= PCC_MIN);
}

#[test]
fn conv_1x1_256_to_65_without_relu_on_the_11x10_grid() {
    let layers: &[Layer] = &[("convPa", 1, 256, 3, true), ("convPb", 256, 65, 1, false)];
    assert!(conv_layer_pcc(32, 32, layers, 1, Grid::TENSIX_DISPATCH) >= PCC_MIN);
}

#[test]
fn max_pool_is_exact_with_two_channel_tiles() {
    let layers: &[Layer] = &[("conv", 1, 40, 3, true), ("pool", 0, 0, 0, false)];
    let graph = chain(64, 32, layers);
    let compiled = compile(&graph, &PlanParams::default()).expect("compiles");
    let x = bf16_rounded(&random_tensor(40, 32, 64, 5));
    let mut inputs = BTreeMap::new();
    inputs.insert("conv".to_string(), pack_activation(&x));
    let dev = common::open(&compiled);
    let (buffers, times) = run(&dev, &compiled, &inputs, &["pool"]);
    let expected = max_pool2(&x);
    let got = unpack_activation(&buffers["pool"], shape_of(&expected)).expect("output size");
    println!("pool 40x32x64: emulator {:?}", times[0].1);
    assert_eq!(got, expected);
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
    inputs.insert("frame".to_string(), pack_activation(&frame));
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

/// Runs layer 1 of `layers` (1×1, `inp` channels) alone on a `width`×`height` frame, checks its
/// PCC, and returns the reader's counters per core in split order (the sender first).
fn reader_counters(
    width: usize,
    height: usize,
    layers: &[Layer],
    grid: Grid,
) -> (kernel_gen::program::Step, Vec<tt_runtime::Counters>) {
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
        .write(layers[0].0, &pack_activation(&x))
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
    let reader = counters
        .iter()
        .find(|s| s.node == name)
        .and_then(|s| s.kernels.iter().find(|k| k.role == Role::Reader))
        .expect("reader counters");
    let order: Vec<Core> = step.kernels[0]
        .runtime_args
        .iter()
        .map(|a| a.core)
        .collect();
    let per_core = order
        .iter()
        .map(|c| {
            reader
                .cores
                .iter()
                .find(|(core, _)| core == c)
                .map(|(_, n)| *n)
                .expect("core counters")
        })
        .collect();
    (step, per_core)
}

/// The first core reads the 1×1 64→32 conv's weights (2 tiles) and bias (1 tile) from DRAM
/// and multicasts them once per rectangle of the split: the full rows (with the sender, by
/// loopback) and the partial last row on 64 cores of either grid, one rectangle on the whole
/// 12×10 grid. Every other core reads only its own input tile rows (2 tiles per block).
#[test]
fn conv_weights_are_read_once_and_multicast_per_rectangle_on_both_grids() {
    let layers: &[Layer] = &[("conv_a", 1, 64, 3, true), ("conv_b", 64, 32, 1, true)];
    let tile = 2048u64;
    for (width, height, grid, cores, rects) in [
        (64, 32, Grid::ETH_DISPATCH, 64u64, 2u64),
        (64, 32, Grid::TENSIX_DISPATCH, 64, 2),
        (64, 64, Grid::ETH_DISPATCH, 120, 1),
    ] {
        let (step, counters) = reader_counters(width, height, layers, grid);
        assert_eq!(counters.len() as u64, cores);
        assert_eq!(step.semaphores, 2);
        let blocks = (width * height / 32) as u64;
        for (i, c) in counters.iter().enumerate() {
            let own = blocks / cores + u64::from((i as u64) < blocks % cores);
            if i == 0 {
                assert_eq!(c.dram_read_bytes, (2 + 1 + 2 * own) * tile);
                assert_eq!(c.noc_mcasts, 2 * rects);
                assert_eq!(c.noc_mcast_bytes, rects * (2 + 1) * tile);
                // Destinations reached per CB: every core, the sender by loopback.
                assert_eq!(c.noc_mcast_dests, 2 * cores);
                assert_eq!(c.noc_sem_ops, rects);
            } else {
                assert_eq!(c.dram_read_bytes, 2 * own * tile, "core {i}");
                assert_eq!((c.noc_mcasts, c.noc_sem_ops), (0, 1), "core {i}");
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
    let (step, cores) = reader_counters(32, 32, layers, Grid { x: 1, y: 1 });
    assert_eq!(cores.len(), 1);
    assert_eq!(step.semaphores, 0);
    assert_eq!(cores[0].dram_read_bytes, (2 + 1 + 32 * 2) * 2048);
    assert_eq!((cores[0].noc_mcasts, cores[0].noc_sem_ops), (0, 0));
}
