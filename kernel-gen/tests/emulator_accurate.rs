//! `Precision::ACCURATE` on the tt-runtime emulator against the reference evaluator of
//! superpoint-graph on the same f32 input, next to `Precision::PORT` on that input (which the
//! port rounds to bf16 on upload): a convolution from a 1-channel input and one with odd channel
//! counts, the max-pool, the fused softmax + fold, and the L2 normalisation. Each ACCURATE error
//! is held to a bound derived from what the device drops (below) and must be well under the
//! port's error on the same data.
//!
//! At ACCURATE a Float32 activation reaches the matrix unit as tf32 (10 mantissa bits, truncated:
//! relative error < 2^-10), the bf16 high and low weight parts multiply it exactly at HiFi4
//! (SrcA holds the weight parts, 8 bits each), the weight's residual after hi + lo is below
//! 2^-16 relative, and the sums are f32. So a conv output y = b + Σ w·x is within
//! S·(2^-10 + 2^-16) + f32 sums of the reference, S = Σ |w|·|x|.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{chain, random_tensor, run, weight_inputs, weights, Layer};
use kernel_gen::layout::host::unpack_map;
use kernel_gen::layout::{pack_activation, unpack_activation, unpack_pixel_rows, ActivationShape};
use kernel_gen::{compile, Compiled, Grid, PlanParams, Precision};
use superpoint_graph::reference::conv::conv2d;
use superpoint_graph::reference::fold::dustbin_fold;
use superpoint_graph::reference::l2norm::l2_normalize_channels;
use superpoint_graph::reference::pool::max_pool2;
use superpoint_graph::reference::softmax::softmax_channels;
use superpoint_graph::{superpoint, ConvWeights, Graph, Tensor};

fn shape_of(t: &Tensor<f32>, precision: Precision) -> ActivationShape {
    ActivationShape {
        channels: t.channels,
        height: t.height,
        width: t.width,
        format: precision.format,
    }
}

fn compiled(graph: &Graph, precision: Precision, grid: Grid, external: &[&str]) -> Compiled {
    let params = PlanParams {
        grid,
        precision,
        external: external
            .iter()
            .map(|s| s.to_string())
            .collect::<BTreeSet<_>>(),
        ..PlanParams::default()
    };
    compile(graph, &params).expect("compiles")
}

fn abs_tensor(t: &Tensor<f32>) -> Tensor<f32> {
    let data = t.data.iter().map(|v| v.abs()).collect();
    Tensor::from_vec(t.channels, t.height, t.width, data).expect("shape")
}

/// Largest |a − b| over two equally shaped tensors.
fn max_abs_err(a: &Tensor<f32>, b: &Tensor<f32>) -> f32 {
    assert_eq!(a.data.len(), b.data.len());
    a.data
        .iter()
        .zip(&b.data)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Conv layer `layers[index]` alone at `precision` on the f32 input `x`: its output, and the
/// reference on `x` itself.
fn conv_run(
    layers: &[Layer],
    index: usize,
    x: &Tensor<f32>,
    precision: Precision,
    grid: Grid,
) -> (Tensor<f32>, Tensor<f32>, Tensor<f32>) {
    let (w, h) = (x.width, x.height);
    let c = compiled(&chain(w, h, layers), precision, grid, &[]);
    let ws = weights(layers, 7 + index as u64);
    let (name, _, _, kernel, relu) = layers[index];
    let input = if index == 0 {
        "frame"
    } else {
        layers[index - 1].0
    };
    let mut inputs = weight_inputs(&c, &ws);
    inputs.insert(
        input.to_string(),
        common::pack_input(input, x, precision.format),
    );
    let dev = common::open(&c);
    let (buffers, _) = run(&dev, &c, &inputs, &[name]);
    let expected = conv2d(x, &ws[name], kernel / 2, relu);
    let got = unpack_activation(&buffers[name], shape_of(&expected, precision)).expect("size");
    // S = Σ |w|·|x| per output: the scale of what truncation can lose.
    let wabs = ConvWeights {
        weight: ws[name].weight.iter().map(|v| v.abs()).collect(),
        bias: vec![0.0; ws[name].bias.len()],
        ..ws[name].clone()
    };
    let scale = conv2d(&abs_tensor(x), &wabs, kernel / 2, false);
    (got, expected, scale)
}

/// ACCURATE within S·(2^-10 + 2^-14) at every output (the derived bound with room for the f32
/// sums of K ≤ 600 terms, < 2^-14 of S), and at most a quarter of the port's largest error on
/// the same input.
fn conv_accurate_beats_port(layers: &[Layer], index: usize, grid: Grid) {
    let (w, h) = (64, 32);
    let x = random_tensor(layers[index].1, h, w, 11 + index as u64);
    let (got, expected, scale) = conv_run(layers, index, &x, Precision::ACCURATE, grid);
    let (port, _, _) = conv_run(layers, index, &x, Precision::PORT, grid);
    let (acc_err, port_err) = (max_abs_err(&got, &expected), max_abs_err(&port, &expected));
    let worst = got
        .data
        .iter()
        .zip(&expected.data)
        .zip(&scale.data)
        .map(|((g, e), s)| (g - e).abs() / s.max(f32::MIN_POSITIVE))
        .fold(0.0f32, f32::max);
    println!(
        "{}: max |err| ACCURATE {acc_err:.3e}, PORT {port_err:.3e} (ratio {:.1}); worst ACCURATE err / S = {worst:.3e} (2^-10 = {:.3e})",
        layers[index].0,
        port_err / acc_err,
        2f32.powi(-10)
    );
    assert!(
        worst <= 2f32.powi(-10) + 2f32.powi(-14),
        "err / S = {worst}"
    );
    assert!(acc_err * 4.0 <= port_err, "{acc_err} vs port {port_err}");
}

#[test]
fn conv_from_a_1_channel_input_at_accurate() {
    let layers: &[Layer] = &[("conv_a", 1, 3, 3, true), ("conv_b", 3, 5, 3, true)];
    conv_accurate_beats_port(layers, 0, Grid::ETH_DISPATCH);
}

#[test]
fn conv_3_to_5_odd_channels_at_accurate_on_the_11x10_grid() {
    let layers: &[Layer] = &[("conv_a", 1, 3, 3, true), ("conv_b", 3, 5, 3, true)];
    conv_accurate_beats_port(layers, 1, Grid::TENSIX_DISPATCH);
}

#[test]
fn conv_64_to_40_two_k_halves_at_accurate() {
    // K = 576 = 18 tiles per weight part; 40 outputs = 2 output tiles, the second half padding.
    let layers: &[Layer] = &[("c0", 1, 64, 3, true), ("c1", 64, 40, 3, false)];
    conv_accurate_beats_port(layers, 1, Grid::ETH_DISPATCH);
}

#[test]
fn max_pool_is_exact_on_float32() {
    let layers: &[Layer] = &[("conv", 1, 40, 3, true), ("pool", 0, 0, 0, false)];
    let c = compiled(
        &chain(64, 32, layers),
        Precision::ACCURATE,
        Grid::ETH_DISPATCH,
        &[],
    );
    let x = random_tensor(40, 32, 64, 5);
    let mut inputs = BTreeMap::new();
    inputs.insert(
        "conv".to_string(),
        pack_activation(&x, Precision::ACCURATE.format),
    );
    let dev = common::open(&c);
    let (buffers, _) = run(&dev, &c, &inputs, &["pool"]);
    let expected = max_pool2(&x);
    let got = unpack_activation(&buffers["pool"], shape_of(&expected, Precision::ACCURATE))
        .expect("size");
    assert_eq!(got, expected);
}

/// Peaked logits (a few units apart, like the trained detector's) at 20×12 cells.
fn logits(seed: u64) -> Tensor<f32> {
    let mut t = random_tensor(65, 12, 20, seed);
    t.data.iter_mut().for_each(|v| *v *= 6.0);
    t
}

/// The score map of uploaded f32 `logits` at `precision`, and its largest error against the
/// reference softmax + fold of the same logits.
fn scores_err(logits: &Tensor<f32>, precision: Precision) -> f32 {
    let graph = superpoint(160, 96).pruned(&["scores"]);
    let c = compiled(&graph, precision, Grid::ETH_DISPATCH, &["convPb"]);
    let mut inputs = BTreeMap::new();
    inputs.insert(
        "convPb".to_string(),
        pack_activation(logits, precision.format),
    );
    let dev = common::open(&c);
    let (buffers, _) = run(&dev, &c, &inputs, &["scores"]);
    let got = unpack_map(&buffers["scores"], 96, 160).expect("map size");
    max_abs_err(&got, &dustbin_fold(&softmax_channels(logits), 8))
}

#[test]
fn softmax_fold_at_accurate() {
    let l = logits(4);
    let (acc, port) = (
        scores_err(&l, Precision::ACCURATE),
        scores_err(&l, Precision::PORT),
    );
    println!("softmax+fold 160x96: max |p err| ACCURATE {acc:.3e}, PORT {port:.3e}");
    // tf32 logits (|l| ≤ 6: error < 6·2^-10 in the exponent, ~6e-3 relative of p ≤ 1) and the
    // tf32 operands of the sum and the scaling.
    assert!(acc <= 2e-3, "{acc}");
    assert!(acc * 2.0 <= port, "{acc} vs port {port}");
}

fn l2_err(x: &Tensor<f32>, precision: Precision) -> f32 {
    let graph = superpoint(160, 96).pruned(&["descriptors_dense"]);
    let c = compiled(&graph, precision, Grid::TENSIX_DISPATCH, &["convDb"]);
    let mut inputs = BTreeMap::new();
    inputs.insert("convDb".to_string(), pack_activation(x, precision.format));
    let dev = common::open(&c);
    let (buffers, _) = run(&dev, &c, &inputs, &["descriptors_dense"]);
    let got =
        unpack_pixel_rows(&buffers["descriptors_dense"], shape_of(x, precision)).expect("size");
    max_abs_err(&got, &l2_normalize_channels(x))
}

#[test]
fn l2_normalize_at_accurate_on_the_11x10_grid() {
    let x = random_tensor(256, 12, 20, 8);
    let (acc, port) = (l2_err(&x, Precision::ACCURATE), l2_err(&x, Precision::PORT));
    println!("l2 256x12x20: max |err| ACCURATE {acc:.3e}, PORT {port:.3e}");
    // Outputs |v| < 0.2 (256 channels in [-1, 1)): tf32 operands lose < 2^-10 relative each.
    assert!(acc <= 2e-4, "{acc}");
    assert!(acc * 4.0 <= port, "{acc} vs port {port}");
}

/// The dense maps of the whole network (resize → backbone → both heads → softmax + fold, L2)
/// at `precision` on a random 160×128 plane with random weights, against the reference
/// evaluator run on the same plane: max |error| of the detector logits (convPb), of the scores
/// and of the dense descriptors.
fn network_errors(precision: Precision, grid: Grid) -> [f32; 3] {
    let graph = superpoint(160, 128).pruned(&["scores", "descriptors_dense"]);
    let layers: Vec<Layer> = graph
        .nodes
        .iter()
        .filter_map(|n| match &n.op {
            superpoint_graph::Op::Conv2d {
                weights,
                in_channels,
                out_channels,
                kernel,
                relu,
                ..
            } => Some((
                &*Box::leak(weights.clone().into_boxed_str()),
                *in_channels,
                *out_channels,
                *kernel,
                *relu,
            )),
            _ => None,
        })
        .collect();
    let ws = weights(&layers, 31);
    let mut rng = common::Rng::new(32);
    let plane = Tensor::from_vec(
        1,
        128,
        160,
        (0..128 * 160)
            .map(|_| (rng.next_u64() >> 56) as u8)
            .collect(),
    )
    .expect("plane shape");
    let c = compiled(&graph, precision, grid, &[]);
    let mut inputs = weight_inputs(&c, &ws);
    inputs.insert(
        "input".to_string(),
        kernel_gen::ops::resize::pack_plane(&plane),
    );
    let dev = common::open(&c);
    let nodes: Vec<&str> = c.program.steps.iter().map(|s| s.node.as_str()).collect();
    let (buffers, _) = run(&dev, &c, &inputs, &nodes);
    let reference = superpoint_graph::reference::evaluate(
        &graph,
        &ws,
        &plane,
        &["convPb", "scores", "descriptors_dense"],
    )
    .expect("the reference evaluates");
    let logits = reference.dense("convPb").expect("logits");
    let scores = reference.dense("scores").expect("scores");
    let dense = reference.dense("descriptors_dense").expect("descriptors");
    let got_scores = unpack_map(&buffers["scores"], 128, 160).expect("map size");
    let got_dense =
        unpack_pixel_rows(&buffers["descriptors_dense"], shape_of(dense, precision)).expect("size");
    let got_logits =
        unpack_activation(&buffers["convPb"], shape_of(logits, precision)).expect("size");
    [
        max_abs_err(&got_logits, logits),
        max_abs_err(&got_scores, scores),
        max_abs_err(&got_dense, dense),
    ]
}

/// Ten convolutions deep the ACCURATE logits and descriptors are several times closer to the
/// reference than the port's; the scores gain less, because the softmax itself reads the logits
/// as tf32 (x − max through SrcA/SrcB) at both precisions.
#[test]
fn the_whole_network_at_accurate_against_the_reference() {
    let acc = network_errors(Precision::ACCURATE, Grid::TENSIX_DISPATCH);
    let port = network_errors(Precision::PORT, Grid::TENSIX_DISPATCH);
    for (name, a, p) in [
        ("logits", acc[0], port[0]),
        ("scores", acc[1], port[1]),
        ("descriptors", acc[2], port[2]),
    ] {
        println!("160x128 network: max |{name} err| ACCURATE {a:.3e}, PORT {p:.3e}");
    }
    assert!(acc[0] * 4.0 <= port[0], "logits {} vs {}", acc[0], port[0]);
    assert!(acc[1] * 1.5 <= port[1], "scores {} vs {}", acc[1], port[1]);
    assert!(
        acc[2] * 4.0 <= port[2],
        "descriptors {} vs {}",
        acc[2],
        port[2]
    );
}
