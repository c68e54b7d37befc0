//! `Precision::ACCURATE` on the tt-runtime emulator against the reference evaluator of
//! superpoint-graph on the same f32 input, next to `Precision::PORT` on that input (which the
//! port rounds to bf16 on upload): a convolution from a 1-channel input and one with odd channel
//! counts, the max-pool, the fused softmax + fold, the L2 normalisation, and the whole network,
//! each of whose convs is held to the single-conv bound on its device input. Each ACCURATE error
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
use kernel_gen::layout::{
    pack_activation, unpack_activation, unpack_channels_last, unpack_frame_rows, unpack_pixel_rows,
    ActivationShape, DeviceTensor,
};
use kernel_gen::plan::Content;
use kernel_gen::runner::Loaded;
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

/// Largest |a − b| / bound over two equally shaped tensors and an elementwise bound.
fn worst_ratio(got: &Tensor<f32>, want: &Tensor<f32>, bound: &Tensor<f32>) -> f64 {
    assert_eq!(got.data.len(), want.data.len());
    assert_eq!(got.data.len(), bound.data.len());
    got.data
        .iter()
        .zip(&want.data)
        .zip(&bound.data)
        .map(|((g, w), b)| (f64::from(*g) - f64::from(*w)).abs() / f64::from(*b).max(1e-30))
        .fold(0.0, f64::max)
}

/// What one ACCURATE conv layer may lose, relative to S = Σ |w|·|x| + |b| at each output: the
/// activation truncated to tf32 (< 2^-10), the weight's residual after its bf16 high and low parts
/// (< 2^-16), and f32 rounding of the n products and n partial sums, the high and the low part each
/// a K-term product sum (`n = 2 (2 K + 1)`, K = `in_channels`·`kernel`², with the bias): γ_n =
/// n·2^-24 / (1 − n·2^-24).
fn conv_delta(in_channels: usize, kernel: usize) -> f64 {
    let n = (2 * (2 * in_channels * kernel * kernel + 1)) as f64;
    let u = 2f64.powi(-24);
    2f64.powi(-10) + 2f64.powi(-16) + n * u / (1.0 - n * u)
}

/// `w` with every weight and bias replaced by its magnitude.
fn abs_weights(w: &ConvWeights) -> ConvWeights {
    ConvWeights {
        weight: w.weight.iter().map(|v| v.abs()).collect(),
        bias: w.bias.iter().map(|v| v.abs()).collect(),
        ..w.clone()
    }
}

/// The whole network (resize → backbone → both heads → softmax + fold, L2) at one precision on
/// the random 160×128 plane with random weights: every step run on its own and its output read
/// at once (a later step may reuse its L1 arena slot), as planar tensors by node name (a fused
/// step's, each of its nodes').
struct Network {
    graph: Graph,
    weights: superpoint_graph::WeightSet,
    plane: Tensor<u8>,
    device: BTreeMap<String, Tensor<f32>>,
}

fn network(precision: Precision, grid: Grid) -> Network {
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
    let dev = common::open(&c);
    let loaded = Loaded::load(&dev, &c).expect("program loads");
    for (name, bytes) in weight_inputs(&c, &ws) {
        loaded.write(&name, &bytes).expect("weights");
    }
    loaded
        .write("input", &kernel_gen::ops::resize::pack_plane(&plane))
        .expect("plane");
    let mut device = BTreeMap::new();
    for step in &c.program.steps {
        loaded
            .run_nodes(&dev, &[step.node.as_str()])
            .unwrap_or_else(|e| panic!("step `{}` failed on the emulator: {e}", step.node));
        // A fused step (`convPa+convDa`) writes each of its nodes' outputs.
        for node in step.node.split('+') {
            let Some(tensor) = c.program.buffers.iter().find_map(|b| match &b.content {
                Content::Output { tensor, .. } if b.name == node => Some(*tensor),
                _ => None,
            }) else {
                continue;
            };
            let bytes = loaded.read(node).expect("read the step's output");
            let value = match tensor {
                DeviceTensor::FrameRows {
                    height,
                    width,
                    format,
                } => unpack_frame_rows(&bytes, height as usize, width as usize, format, 0),
                DeviceTensor::Map { height, width } => {
                    unpack_map(&bytes, height as usize, width as usize)
                }
                other => unpack_channels_last(&bytes, &other),
            }
            .unwrap_or_else(|| panic!("`{node}`: {} bytes as {tensor:?}", bytes.len()));
            device.insert(node.to_string(), value);
        }
    }
    Network {
        graph,
        weights: ws,
        plane,
        device,
    }
}

impl Network {
    /// The reference evaluator's value of every node, on the same plane and weights.
    fn reference(&self) -> BTreeMap<String, Tensor<f32>> {
        let names: Vec<&str> = self.device.keys().map(String::as_str).collect();
        let values =
            superpoint_graph::reference::evaluate(&self.graph, &self.weights, &self.plane, &names)
                .expect("the reference evaluates");
        names
            .iter()
            .map(|n| (n.to_string(), values.dense(n).expect("kept").clone()))
            .collect()
    }

    /// max |device − reference| of the logits (convPb), the scores and the dense descriptors.
    fn errors(&self, reference: &BTreeMap<String, Tensor<f32>>) -> [f32; 3] {
        ["convPb", "scores", "descriptors_dense"]
            .map(|n| max_abs_err(&self.device[n], &reference[n]))
    }
}

/// The worst error / (δ·S) of each conv of `net` on the device's own input x against the
/// reference conv of x (S = conv of |x| with |w| and |b|, δ = [`conv_delta`] of the layer), by
/// node; and checks that each max-pool is exact on its device input.
fn conv_ratios(net: &Network) -> Vec<(String, f64)> {
    let device = &net.device;
    let mut ratios = Vec::new();
    for node in &net.graph.nodes {
        let name = node.name.as_str();
        let x = || &device[&node.inputs[0]];
        match &node.op {
            superpoint_graph::Op::Conv2d {
                weights,
                in_channels,
                kernel,
                relu,
                ..
            } => {
                let (x, w) = (x(), &net.weights[weights]);
                let pad = kernel / 2;
                let mut bound = conv2d(&abs_tensor(x), &abs_weights(w), pad, false);
                let delta = conv_delta(*in_channels, *kernel) as f32;
                bound.data.iter_mut().for_each(|v| *v *= delta);
                let ratio = worst_ratio(&device[name], &conv2d(x, w, pad, *relu), &bound);
                ratios.push((name.to_string(), ratio));
            }
            superpoint_graph::Op::MaxPool2 => {
                assert_eq!(device[name], max_pool2(x()), "{name} is exact");
            }
            _ => {}
        }
    }
    ratios
}

/// Ten convolutions deep the ACCURATE logits and descriptors are several times closer to the
/// reference than the port's; the scores gain less, because the softmax itself reads the logits
/// as tf32 (x − max through SrcA/SrcB) at both precisions.
///
/// And every conv of the ACCURATE network is held to what the hardware drops ([`conv_delta`]),
/// as the single-conv tests above are: on the device's own input x, within δ·S of the reference
/// conv of x at every output (S = conv of |x| with |w| and |b|); each max-pool is exact. The port
/// precision (bf16 activations and weights) breaks that bound on every conv, so it would catch
/// an accurate program that lost precision anywhere. (An end-to-end bound propagated through
/// worst-case |w| sums grows by the layers' ‖w‖₁, orders of magnitude above the error, so the
/// bound is held layer by layer.)
#[test]
fn the_whole_network_at_accurate_against_the_reference() {
    let accurate = network(Precision::ACCURATE, Grid::TENSIX_DISPATCH);
    let port = network(Precision::PORT, Grid::TENSIX_DISPATCH);
    let reference = accurate.reference();
    let (acc, port_err) = (accurate.errors(&reference), port.errors(&reference));
    for (i, name) in ["logits", "scores", "descriptors"].iter().enumerate() {
        println!(
            "160x128 network: max |{name} err| ACCURATE {:.3e}, PORT {:.3e}",
            acc[i], port_err[i]
        );
    }
    assert!(
        acc[0] * 4.0 <= port_err[0],
        "logits {} vs {}",
        acc[0],
        port_err[0]
    );
    assert!(
        acc[1] * 1.5 <= port_err[1],
        "scores {} vs {}",
        acc[1],
        port_err[1]
    );
    assert!(
        acc[2] * 4.0 <= port_err[2],
        "descriptors {} vs {}",
        acc[2],
        port_err[2]
    );

    let convs = conv_ratios(&accurate);
    assert_eq!(convs.len(), 12, "every conv of the network is checked");
    for ((name, ratio), (_, port_ratio)) in convs.iter().zip(conv_ratios(&port)) {
        println!(
            "{name}: worst err / (δ·S) on its device input: ACCURATE {ratio:.3}, PORT {port_ratio:.3}"
        );
        assert!(*ratio <= 1.0, "{name}: ACCURATE err / (δ·S) = {ratio}");
        assert!(
            port_ratio > 1.0,
            "{name}: the port's err / (δ·S) = {port_ratio}"
        );
    }
}
