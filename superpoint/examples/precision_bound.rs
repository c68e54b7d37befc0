//! How close to the f32 reference a device can get when its convolutions read their operands from
//! a given storage format — the evidence behind the Tensix backend's two precisions (issue 5).
//!
//! Every fixture case whose frame the device takes (sides multiples of 32) runs through
//! superpoint-graph's executor with the reference kernels, except that each convolution first
//! rounds its input activations, its weights and its bias each to a storage format.
//! Products and sums stay exact (the reference accumulates in f64) and every other op runs in
//! f32, so the figures bound what storage alone allows, whatever the matrix unit's fidelity.
//! Each row prints DESIGN §5's score PCC, descriptor PCC and keypoint F1 against the unrounded
//! reference:
//!
//! * bf16 activations, weights and bias: the port's storage (`TensixPrecision::Port`);
//! * f32 activations with bf16 weights and bias, and bf16 activations with f32 weights and bias:
//!   either half alone;
//! * tf32 activations (what the source registers keep of Float32, truncated), weights as a bf16
//!   high plus a bf16 low part, f32 bias: the accurate storage (`TensixPrecision::Accurate`).
//!
//! `cargo run --release -p superpoint --example precision_bound` (1–2 minutes per case on two cores).

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use anyhow::{anyhow, Context};
use rayon::prelude::*;
use superpoint::backend::DenseMaps;
use superpoint::metrics::{keypoint_f1, pcc, DESCRIPTOR_PCC_GATE, F1_GATE, SCORE_PCC_GATE};
use superpoint_graph::reference::Reference;
use superpoint_graph::{
    names, run, superpoint_with, ConvWeights, Graph, Kernels, Keypoint, Tensor, WeightSet,
};
use tt_runtime::host::{bf16_to_f32, f32_to_bf16};

use common::{cases, Case};

/// A format a convolution operand is stored in, as the f32 value it holds.
#[derive(Debug, Clone, Copy)]
enum Storage {
    F32,
    /// Round to nearest, ties to even (the host's conversion; the packer breaks exact ties away
    /// from zero instead, which these bounds ignore).
    Bf16,
    /// 10 mantissa bits, truncated (Float32 in a source register).
    Tf32,
    /// `hi = bf16(v)` plus `lo = bf16(v − hi)`: two bf16 matrices whose exact products sum to
    /// the product with `hi + lo`.
    Bf16HiLo,
}

impl Storage {
    fn round(self, v: f32) -> f32 {
        let bf16 = |v: f32| bf16_to_f32(f32_to_bf16(v));
        match self {
            Storage::F32 => v,
            Storage::Bf16 => bf16(v),
            Storage::Tf32 => f32::from_bits(v.to_bits() & 0xFFFF_E000),
            Storage::Bf16HiLo => {
                let hi = bf16(v);
                hi + bf16(v - hi)
            }
        }
    }

    fn name(self) -> &'static str {
        match self {
            Storage::F32 => "f32",
            Storage::Bf16 => "bf16",
            Storage::Tf32 => "tf32",
            Storage::Bf16HiLo => "bf16 hi+lo",
        }
    }
}

/// The reference kernels with each convolution's operands rounded to their storage.
struct Rounded {
    activations: Storage,
    weights: Storage,
    bias: Storage,
}

/// The storages compared, with what they stand for.
const ROWS: [(Rounded, &str); 4] = [
    (
        Rounded {
            activations: Storage::Bf16,
            weights: Storage::Bf16,
            bias: Storage::Bf16,
        },
        "port",
    ),
    (
        Rounded {
            activations: Storage::F32,
            weights: Storage::Bf16,
            bias: Storage::Bf16,
        },
        "",
    ),
    (
        Rounded {
            activations: Storage::Bf16,
            weights: Storage::F32,
            bias: Storage::F32,
        },
        "",
    ),
    (
        Rounded {
            activations: Storage::Tf32,
            weights: Storage::Bf16HiLo,
            bias: Storage::F32,
        },
        "accurate",
    ),
];

impl Kernels for Rounded {
    type Dense = Tensor<f32>;

    fn resize(&self, input: &Tensor<u8>, width: usize, height: usize) -> Tensor<f32> {
        Reference.resize(input, width, height)
    }
    fn conv2d(&self, x: &Tensor<f32>, w: &ConvWeights, pad: usize, relu: bool) -> Tensor<f32> {
        let mut x = x.clone();
        x.data
            .iter_mut()
            .for_each(|v| *v = self.activations.round(*v));
        let mut w = w.clone();
        w.weight
            .iter_mut()
            .for_each(|v| *v = self.weights.round(*v));
        w.bias.iter_mut().for_each(|v| *v = self.bias.round(*v));
        Reference.conv2d(&x, &w, pad, relu)
    }
    fn max_pool2(&self, x: &Tensor<f32>) -> Tensor<f32> {
        Reference.max_pool2(x)
    }
    fn softmax(&self, x: &Tensor<f32>) -> Tensor<f32> {
        Reference.softmax(x)
    }
    fn dustbin_fold(&self, x: &Tensor<f32>, cell: usize) -> Tensor<f32> {
        Reference.dustbin_fold(x, cell)
    }
    fn nms(&self, x: &Tensor<f32>, radius: usize) -> Tensor<f32> {
        Reference.nms(x, radius)
    }
    fn l2_normalize(&self, x: &Tensor<f32>) -> Tensor<f32> {
        Reference.l2_normalize(x)
    }
    fn select_keypoints(
        &self,
        x: &Tensor<f32>,
        threshold: f32,
        border: usize,
        max_keypoints: i64,
    ) -> Vec<Keypoint> {
        Reference.select_keypoints(x, threshold, border, max_keypoints)
    }
    fn sample_descriptors(&self, x: &Tensor<f32>, keypoints: &[Keypoint], cell: usize) -> Vec<f32> {
        Reference.sample_descriptors(x, keypoints, cell)
    }
    fn channels(&self, x: &Tensor<f32>) -> usize {
        x.channels
    }
    fn to_planar(&self, x: &Tensor<f32>) -> Tensor<f32> {
        x.clone()
    }
}

/// The dense maps §5 compares, from `kernels` on the case's input plane.
fn maps<K: Kernels<Dense = Tensor<f32>>>(
    kernels: &K,
    graph: &Graph,
    weights: &WeightSet,
    plane: &Tensor<u8>,
) -> anyhow::Result<DenseMaps> {
    let keep = [names::SCORES, names::NMS, names::DESCRIPTORS_DENSE];
    let values = run(kernels, graph, weights, plane, &keep)?;
    let dense = |n: &str| {
        values
            .dense(n)
            .cloned()
            .ok_or_else(|| anyhow!("the graph has no dense value `{n}`"))
    };
    Ok(DenseMaps {
        scores: dense(names::SCORES)?,
        nms: dense(names::NMS)?,
        descriptors: dense(names::DESCRIPTORS_DENSE)?,
    })
}

/// §5 figures of `maps` against the reference's: (score PCC, descriptor PCC, keypoint F1).
fn figures(maps: &DenseMaps, reference: &DenseMaps) -> anyhow::Result<(f64, f64, f64)> {
    Ok((
        pcc(&maps.scores.data, &reference.scores.data).context("score PCC")?,
        pcc(&maps.descriptors.data, &reference.descriptors.data).context("descriptor PCC")?,
        keypoint_f1(&maps.nms, &reference.nms).context("keypoint F1")?,
    ))
}

/// Runs one case at every storage and prints its rows; returns the F1 of each storage.
fn case_rows(case: &Case) -> anyhow::Result<Vec<f64>> {
    let start = Instant::now();
    let graph = superpoint_with(&case.options().graph_params());
    let weights = case.weights();
    let plane = case.input_plane();
    // The reference and the four storages, in parallel.
    let mut all: Vec<anyhow::Result<DenseMaps>> = (0..=ROWS.len())
        .into_par_iter()
        .map(|i| match i.checked_sub(1) {
            None => maps(&Reference, &graph, &weights, &plane),
            Some(row) => maps(&ROWS[row].0, &graph, &weights, &plane),
        })
        .collect();
    let reference = all.remove(0)?;
    let mut f1s = Vec::with_capacity(ROWS.len());
    for ((rounded, role), maps) in ROWS.iter().zip(all) {
        let (score, descriptor, f1) = figures(&maps?, &reference)?;
        let mark = |ok: bool| if ok { "✔" } else { "✘" };
        println!(
            "{:<18} {:<11} {:<11} {:<5} {:<9} {:>9.6} {} {:>9.6} {} {:>7.4} {}",
            case.name,
            rounded.activations.name(),
            rounded.weights.name(),
            rounded.bias.name(),
            role,
            score,
            mark(score >= SCORE_PCC_GATE),
            descriptor,
            mark(descriptor >= DESCRIPTOR_PCC_GATE),
            f1,
            mark(f1 >= F1_GATE),
        );
        f1s.push(f1);
    }
    eprintln!("{}: {:.0} s", case.name, start.elapsed().as_secs_f64());
    Ok(f1s)
}

fn main() -> anyhow::Result<()> {
    let fitting: Vec<Case> = cases().into_iter().filter(Case::fits_tensix).collect();
    println!(
        "Convolution operands rounded to a storage format, exact products and sums, against the f32 reference \
         (§5 gates: score PCC ≥ {SCORE_PCC_GATE}, descriptor PCC ≥ {DESCRIPTOR_PCC_GATE}, F1 ≥ {F1_GATE})"
    );
    println!(
        "{:<18} {:<11} {:<11} {:<5} {:<9} {:>11} {:>11} {:>9}",
        "case", "activations", "weights", "bias", "precision", "score PCC", "desc. PCC", "F1"
    );
    let mut worst = vec![f64::INFINITY; ROWS.len()];
    for case in &fitting {
        for (w, f1) in worst.iter_mut().zip(case_rows(case)?) {
            *w = w.min(f1);
        }
    }
    for ((rounded, _), f1) in ROWS.iter().zip(worst) {
        println!(
            "{} activations, {} weights, {} bias: lowest F1 {f1:.4} over {} cases, {} the gate {F1_GATE}",
            rounded.activations.name(),
            rounded.weights.name(),
            rounded.bias.name(),
            fitting.len(),
            if f1 >= F1_GATE { "meets" } else { "below" }
        );
    }
    Ok(())
}
