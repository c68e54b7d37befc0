//! The fused softmax + dustbin fold and the L2 normalisation executed on the tt-runtime emulator
//! against the reference evaluator of superpoint-graph: the score map at PCC ≥ 0.9999 (after a
//! 1×1 conv, and from the logits of a fixture case's score map), the normalised descriptors
//! within 1 bf16 ulp of the reference applied to the device's own bf16 input (after a 1×1 conv,
//! on random data with an all-zero pixel, and on a fixture case's descriptors), on both grids.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{
    bf16_rounded, chain, extend, fixture_dense, pcc, random_tensor, run, weight_inputs, weights,
    Layer,
};
use kernel_gen::layout::host::unpack_map;
use kernel_gen::layout::{pack_activation, unpack_activation, unpack_pixel_rows, ActivationShape};
use kernel_gen::{compile, Compiled, Format, Grid, PlanParams};
use superpoint_graph::reference::conv::conv2d;
use superpoint_graph::reference::fold::dustbin_fold;
use superpoint_graph::reference::l2norm::l2_normalize_channels;
use superpoint_graph::reference::softmax::softmax_channels;
use superpoint_graph::{superpoint, Graph, Op, Tensor};

const PCC_MIN: f64 = 0.9999;
/// Largest |error| of a probability: the reduce and multiply operands pass the 19-bit source
/// registers (TF32, 2^-10 relative each) and the rest is f32, so about 3·2^-10 of p ≤ 1.
const MAX_PROB_ERR: f32 = 3e-3;

fn shape_of(t: &Tensor<f32>) -> ActivationShape {
    ActivationShape {
        channels: t.channels,
        height: t.height,
        width: t.width,
        format: Format::Bf16,
    }
}

fn params(grid: Grid, external: &[&str]) -> PlanParams {
    PlanParams {
        grid,
        external: external
            .iter()
            .map(|s| s.to_string())
            .collect::<BTreeSet<_>>(),
        ..PlanParams::default()
    }
}

/// conv (1→`hidden`) and three pools down to the cells, then a 1×1 conv to `out` channels named
/// `head`, then `tail`.
fn head_graph(
    width: usize,
    height: usize,
    hidden: usize,
    head: &'static str,
    out: usize,
    tail: &[(&str, Op)],
) -> (Graph, Vec<Layer>) {
    let layers: Vec<Layer> = vec![
        ("c1", 1, hidden, 3, true),
        ("pool1", 0, 0, 0, false),
        ("pool2", 0, 0, 0, false),
        ("pool3", 0, 0, 0, false),
        (head, hidden, out, 1, false),
    ];
    (extend(chain(width, height, &layers), tail), layers)
}

fn detector_tail() -> [(&'static str, Op); 2] {
    [
        ("softmax", Op::Softmax),
        ("scores", Op::DustbinFold { cell: 8 }),
    ]
}

fn compiled(graph: &Graph, params: &PlanParams) -> Compiled {
    compile(graph, params).expect("compiles")
}

/// Device score map vs the reference softmax + fold of `logits`; returns (PCC, max |error|).
fn compare_scores(got: &Tensor<f32>, logits: &Tensor<f32>) -> (f64, f32) {
    let expected = dustbin_fold(&softmax_channels(logits), 8);
    assert_eq!(
        (got.height, got.width),
        (expected.height, expected.width),
        "map size"
    );
    let max_err = got
        .data
        .iter()
        .zip(&expected.data)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    (pcc(&got.data, &expected.data), max_err)
}

/// conv 1×1 (`hidden`→65) → softmax → fold at `width`×`height` from a random pool3 tensor:
/// the map against the reference on the device's own logits and on the conv's bf16 input.
fn detector_head(width: usize, height: usize, hidden: usize, grid: Grid) {
    let (graph, layers) = head_graph(width, height, hidden, "convPb", 65, &detector_tail());
    let p = params(grid, &["pool3"]);
    let compiled = compiled(&graph, &p);
    let mut ws = weights(&layers, 21);
    // Peaked logits like the trained detector's (a few units apart), not a near-uniform softmax.
    if let Some(w) = ws.get_mut("convPb") {
        w.weight.iter_mut().for_each(|v| *v *= 6.0);
        w.bias.iter_mut().for_each(|v| *v *= 6.0);
    }
    let x = bf16_rounded(&random_tensor(hidden, height / 8, width / 8, 4));
    let mut inputs = weight_inputs(&compiled, &ws);
    inputs.insert("pool3".to_string(), pack_activation(&x, Format::Bf16));
    let dev = common::open(&compiled);
    let (buffers, times) = run(&dev, &compiled, &inputs, &["convPb", "scores"]);
    let logits_shape = ActivationShape {
        channels: 65,
        height: height / 8,
        width: width / 8,
        format: Format::Bf16,
    };
    let logits = unpack_activation(&buffers["convPb"], logits_shape).expect("logits size");
    let got = unpack_map(&buffers["scores"], height, width).expect("map size");
    let (own, max_err) = compare_scores(&got, &logits);
    let (chain_pcc, _) = compare_scores(&got, &conv2d(&x, &ws["convPb"], 0, false));
    println!(
        "softmax+fold {width}x{height} grid {}x{}: PCC {own:.8} (own logits, max |err| {max_err:e}), {chain_pcc:.8} (f64 conv), step times {times:?}",
        grid.x, grid.y
    );
    assert!(own >= PCC_MIN, "PCC {own} on the device's own logits");
    assert!(max_err <= MAX_PROB_ERR, "max |error| {max_err}");
    assert!(
        chain_pcc >= PCC_MIN,
        "PCC {chain_pcc} against the f64 chain"
    );
}

#[test]
fn softmax_fold_after_a_1x1_conv_64x32() {
    detector_head(64, 32, 16, Grid::ETH_DISPATCH);
}

/// 160×96: 20×12 cells (a block straddles cell rows, the last block is half padding) and 15 map
/// tiles (the last unit holds one), on the 11×10 grid.
#[test]
fn softmax_fold_non_square_odd_map_tiles_on_the_11x10_grid() {
    detector_head(160, 96, 16, Grid::TENSIX_DISPATCH);
}

/// Logits that reproduce a score map: per cell, ln(p / p_max) for the 64 kept channels and the
/// dustbin 1 − Σp (its softmax is the map again, up to the dustbin's rounding).
fn logits_of_scores(scores: &Tensor<f32>) -> Tensor<f32> {
    let (hc, wc) = (scores.height / 8, scores.width / 8);
    let mut logits = Tensor::zeros(65, hc, wc);
    for cy in 0..hc {
        for cx in 0..wc {
            let mut p: Vec<f64> = (0..64)
                .map(|k| f64::from(scores.data[(8 * cy + k / 8) * scores.width + 8 * cx + k % 8]))
                .collect();
            p.push((1.0 - p.iter().sum::<f64>()).max(1e-30));
            let max = p.iter().copied().fold(0.0, f64::max);
            for (k, pk) in p.iter().enumerate() {
                let l = if *pk > 0.0 { (pk / max).ln() } else { -80.0 };
                logits.data[(k * hc + cy) * wc + cx] = l as f32;
            }
        }
    }
    logits
}

/// The astronaut 640×480 fixture's score map (HF transformers) turned back into logits and
/// uploaded as convPb's output: the device map against the reference on the uploaded (bf16)
/// logits and against the fixture itself.
#[test]
fn softmax_fold_from_the_fixture_score_map_640x480() {
    let fixture = fixture_dense("astronaut_default", "scores_dense");
    let graph = superpoint(640, 480).pruned(&["scores"]);
    let p = params(Grid::ETH_DISPATCH, &["convPb"]);
    let compiled = compiled(&graph, &p);
    let logits = bf16_rounded(&logits_of_scores(&fixture));
    let mut inputs = BTreeMap::new();
    inputs.insert("convPb".to_string(), pack_activation(&logits, Format::Bf16));
    let dev = common::open(&compiled);
    let (buffers, times) = run(&dev, &compiled, &inputs, &["scores"]);
    let got = unpack_map(&buffers["scores"], 480, 640).expect("map size");
    let (own, max_err) = compare_scores(&got, &logits);
    let vs_fixture = pcc(&got.data, &fixture.data);
    println!(
        "softmax+fold astronaut 640x480: PCC {own:.8} (uploaded logits, max |err| {max_err:e}), {vs_fixture:.8} (fixture), step {times:?}"
    );
    assert!(own >= PCC_MIN, "PCC {own} on the uploaded logits");
    assert!(max_err <= MAX_PROB_ERR, "max |error| {max_err}");
    assert!(
        vs_fixture >= PCC_MIN,
        "PCC {vs_fixture} against the fixture"
    );
}

/// One bf16 ulp at `v`: 2^(exponent − 7).
fn bf16_ulp(v: f32) -> f32 {
    f32::from_bits(v.abs().to_bits() & 0x7F80_0000) / 128.0
}

/// The largest |got − expected| in bf16 ulps of `expected`; an exact zero must stay zero.
fn max_ulps(got: &Tensor<f32>, expected: &Tensor<f32>) -> f32 {
    assert_eq!(got.data.len(), expected.data.len());
    got.data
        .iter()
        .zip(&expected.data)
        .map(|(g, e)| {
            if *e == 0.0 {
                if *g == 0.0 {
                    0.0
                } else {
                    f32::INFINITY
                }
            } else {
                (g - e).abs() / bf16_ulp(*e)
            }
        })
        .fold(0.0f32, f32::max)
}

/// Normalises `x` (uploaded as `source`'s output, bf16) with the graph's `descriptors_dense`
/// node; returns the largest error in bf16 ulps against the reference on the uploaded tensor.
fn l2_external(graph: &Graph, source: &str, x: &Tensor<f32>, grid: Grid) -> f32 {
    let compiled = compiled(graph, &params(grid, &[source]));
    let x = bf16_rounded(x);
    let mut inputs = BTreeMap::new();
    inputs.insert(source.to_string(), pack_activation(&x, Format::Bf16));
    let dev = common::open(&compiled);
    let (buffers, times) = run(&dev, &compiled, &inputs, &["descriptors_dense"]);
    let got = unpack_pixel_rows(&buffers["descriptors_dense"], shape_of(&x)).expect("size");
    let ulps = max_ulps(&got, &l2_normalize_channels(&x));
    println!(
        "l2 {}x{}x{} grid {}x{}: max {ulps} bf16 ulp, step {times:?}",
        x.channels, x.height, x.width, grid.x, grid.y
    );
    ulps
}

/// convDb-like 1×1 conv (16→256) → L2Normalize at 160×96 (20×12 pixels: 7.5 blocks), compared
/// with the reference on the conv's bf16 output as the device stored it.
#[test]
fn l2_normalize_after_a_1x1_conv_on_the_11x10_grid() {
    let tail = [("descriptors_dense", Op::L2Normalize)];
    let (graph, layers) = head_graph(160, 96, 16, "convDb", 256, &tail);
    let compiled = compiled(&graph, &params(Grid::TENSIX_DISPATCH, &["pool3"]));
    let ws = weights(&layers, 5);
    let x = bf16_rounded(&random_tensor(16, 12, 20, 6));
    let mut inputs = weight_inputs(&compiled, &ws);
    inputs.insert("pool3".to_string(), pack_activation(&x, Format::Bf16));
    let dev = common::open(&compiled);
    let (buffers, times) = run(&dev, &compiled, &inputs, &["convDb", "descriptors_dense"]);
    let shape = ActivationShape {
        channels: 256,
        height: 12,
        width: 20,
        format: Format::Bf16,
    };
    let dense = unpack_activation(&buffers["convDb"], shape).expect("convDb size");
    let got = unpack_pixel_rows(&buffers["descriptors_dense"], shape).expect("output size");
    let ulps = max_ulps(&got, &l2_normalize_channels(&dense));
    println!("l2 after convDb 20x12: max {ulps} bf16 ulp, step times {times:?}");
    assert!(ulps <= 1.0, "{ulps} bf16 ulp");
}

/// Random 256×8×4 descriptors with pixel 5 all zero (must stay zero, not 0·∞) and pixel 9
/// scaled by 1e-3 (a small but non-zero norm), on the 12×10 grid.
#[test]
fn l2_normalize_random_with_a_zero_pixel() {
    let tail = [("descriptors_dense", Op::L2Normalize)];
    let (graph, _) = head_graph(64, 32, 16, "convDb", 256, &tail);
    let mut x = random_tensor(256, 4, 8, 17);
    for c in 0..256 {
        x.data[c * 32 + 5] = 0.0;
        x.data[c * 32 + 9] *= 1e-3;
    }
    let ulps = l2_external(&graph, "convDb", &x, Grid::ETH_DISPATCH);
    assert!(ulps <= 1.0, "{ulps} bf16 ulp");
}

/// The astronaut 320×240 fixture's dense descriptors (HF transformers, unit norm) scaled per
/// pixel by 0.25 … 3.25, normalised again: 30×40 pixels (37.5 blocks) on the 11×10 grid.
#[test]
fn l2_normalize_fixture_descriptors_scaled_per_pixel() {
    let mut x = fixture_dense("astronaut_320x240_r4", "descriptors_dense");
    let n = x.height * x.width;
    for (i, v) in x.data.iter_mut().enumerate() {
        *v *= 0.25 + ((i % n) % 13) as f32 * 0.25;
    }
    let graph = superpoint(320, 240).pruned(&["descriptors_dense"]);
    let ulps = l2_external(&graph, "convDb", &x, Grid::TENSIX_DISPATCH);
    assert!(ulps <= 1.0, "{ulps} bf16 ulp");
}
