//! Shared test helpers: small test graphs, seeded random data, PCC, and a loader that runs a
//! compiled program's steps on the tt-runtime emulator.
#![allow(dead_code)]

pub mod small_kir;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kernel_gen::runner::{weight_bytes, Loaded};
use kernel_gen::summary::summary;
use kernel_gen::Compiled;
use superpoint_graph::{ConvWeights, Graph, Node, Op, Tensor, WeightSet};
use tt_runtime::{Device, Dispatch};

/// One conv layer of a test graph: name, in, out, kernel, relu.
pub type Layer = (&'static str, usize, usize, usize, bool);

/// The bytes of `x` as the input of a chain's node `input` in `format`: the frame's rows
/// ([`kernel_gen::layout::pack_frame_rows`]) for `"frame"`, an activation for any other node.
pub fn pack_input(input: &str, x: &Tensor<f32>, format: kernel_gen::Format) -> Vec<u8> {
    if input == "frame" {
        kernel_gen::layout::pack_frame_rows(x, format)
            .expect("a one-channel frame, W a multiple of 32")
    } else {
        kernel_gen::layout::pack_activation(x, format)
    }
}

/// `input → resize(width×height)` then the layers in order; `"pool"` entries (in = out = 0) are max-pools.
pub fn chain(width: usize, height: usize, layers: &[Layer]) -> Graph {
    let mut nodes = vec![
        Node {
            name: "input".into(),
            inputs: vec![],
            op: Op::InputPlane,
        },
        Node {
            name: "frame".into(),
            inputs: vec!["input".into()],
            op: Op::Resize { width, height },
        },
    ];
    let mut prev = "frame".to_string();
    for (name, inp, out, kernel, relu) in layers {
        let op = if name.starts_with("pool") {
            Op::MaxPool2
        } else {
            Op::Conv2d {
                weights: name.to_string(),
                in_channels: *inp,
                out_channels: *out,
                kernel: *kernel,
                pad: kernel / 2,
                relu: *relu,
            }
        };
        nodes.push(Node {
            name: name.to_string(),
            inputs: vec![prev.clone()],
            op,
        });
        prev = name.to_string();
    }
    Graph {
        outputs: vec![prev],
        nodes,
    }
}

/// A small deterministic generator (SplitMix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    pub fn uniform(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// Random weights for every conv layer, scaled by 1/sqrt(fan-in).
pub fn weights(layers: &[Layer], seed: u64) -> WeightSet {
    let mut rng = Rng::new(seed);
    let mut set = WeightSet::new();
    for (name, inp, out, kernel, _) in layers.iter().filter(|l| !l.0.starts_with("pool")) {
        let scale = 1.0 / ((inp * kernel * kernel) as f32).sqrt();
        let weight = (0..out * inp * kernel * kernel)
            .map(|_| rng.uniform() * scale)
            .collect();
        let bias = (0..*out).map(|_| rng.uniform() * 0.2).collect();
        set.insert(
            name.to_string(),
            ConvWeights {
                out_channels: *out,
                in_channels: *inp,
                kernel: *kernel,
                weight,
                bias,
            },
        );
    }
    set
}

/// A random C×H×W tensor in [-1, 1).
pub fn random_tensor(channels: usize, height: usize, width: usize, seed: u64) -> Tensor<f32> {
    let mut rng = Rng::new(seed);
    let data = (0..channels * height * width)
        .map(|_| rng.uniform())
        .collect();
    Tensor::from_vec(channels, height, width, data).expect("shape")
}

/// The tensor as the device sees it: every value rounded to bf16.
pub fn bf16_rounded(t: &Tensor<f32>) -> Tensor<f32> {
    let data = t
        .data
        .iter()
        .map(|v| kernel_gen::layout::bf16_to_f32(kernel_gen::layout::f32_to_bf16(*v)))
        .collect();
    Tensor::from_vec(t.channels, t.height, t.width, data).expect("shape")
}

/// Pearson correlation of two equally long slices, in f64.
pub fn pcc(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len());
    let n = a.len() as f64;
    let ma = a.iter().map(|v| f64::from(*v)).sum::<f64>() / n;
    let mb = b.iter().map(|v| f64::from(*v)).sum::<f64>() / n;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        let (dx, dy) = (f64::from(*x) - ma, f64::from(*y) - mb);
        sab += dx * dy;
        saa += dx * dx;
        sbb += dy * dy;
    }
    sab / (saa.sqrt() * sbb.sqrt())
}

/// Opens the emulated p150a with the grid the program was compiled for.
pub fn open(compiled: &Compiled) -> Device {
    let dispatch = if compiled.program.grid.x == 12 {
        Dispatch::Eth
    } else {
        Dispatch::Tensix
    };
    Device::open(dispatch).expect("open the emulator")
}

/// Every buffer's bytes by name, and the wall time of each step run.
pub type RunResult = (BTreeMap<String, Vec<u8>>, Vec<(String, Duration)>);

/// Loads the program ([`kernel_gen::runner`]), writes `inputs` (buffer name → bytes), runs the
/// steps of the nodes in `nodes` in program order, and returns every buffer's bytes and the wall
/// time of each step.
pub fn run(
    dev: &Device,
    compiled: &Compiled,
    inputs: &BTreeMap<String, Vec<u8>>,
    nodes: &[&str],
) -> RunResult {
    let loaded = Loaded::load(dev, compiled).expect("program loads");
    for (name, bytes) in inputs {
        loaded.write(name, bytes).expect("write input");
    }
    let mut times = Vec::new();
    for step in compiled
        .program
        .steps
        .iter()
        .filter(|s| nodes.contains(&s.node.as_str()))
    {
        let start = Instant::now();
        if let Err(e) = loaded.run_nodes(dev, &[step.node.as_str()]) {
            panic!("step `{}` failed on the emulator: {e}", step.node);
        }
        times.push((step.node.clone(), start.elapsed()));
    }
    let out = compiled
        .program
        .buffers
        .iter()
        .map(|b| (b.name.clone(), loaded.read(&b.name).expect("read")))
        .collect();
    (out, times)
}

/// Host bytes of every weight and resize-filter buffer of the program, from `weights`.
pub fn weight_inputs(compiled: &Compiled, weights: &WeightSet) -> BTreeMap<String, Vec<u8>> {
    weight_bytes(&compiled.program, weights).expect("every weight entry is in the set")
}

/// `graph` with `(name, op)` nodes appended, each reading the previous output; the last is the
/// graph's output.
pub fn extend(mut graph: Graph, tail: &[(&str, Op)]) -> Graph {
    for (name, op) in tail {
        let prev = graph.outputs[0].clone();
        graph.nodes.push(Node {
            name: name.to_string(),
            inputs: vec![prev],
            op: op.clone(),
        });
        graph.outputs = vec![name.to_string()];
    }
    graph
}

/// A dense f32 array of a fixture case (`tests/fixtures/cases/<case>/<array>.npy`, little-endian
/// `<f4`, C order) as a C×H×W tensor (H×W arrays get one channel).
pub fn fixture_dense(case: &str, array: &str) -> Tensor<f32> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/cases")
        .join(case)
        .join(format!("{array}.npy"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        &bytes[..6],
        b"\x93NUMPY",
        "{}: not an .npy file",
        path.display()
    );
    let (header_len, start) = if bytes[6] == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        )
    };
    let header = std::str::from_utf8(&bytes[start..start + header_len]).expect("ASCII header");
    assert!(
        header.contains("'<f4'") && header.contains("'fortran_order': False"),
        "{}: expected C-order <f4, got {header}",
        path.display()
    );
    let shape_text = &header[header.find("'shape': (").expect("shape") + 10..];
    let shape: Vec<usize> = shape_text[..shape_text.find(')').expect("shape end")]
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().expect("shape number"))
        .collect();
    let data: Vec<f32> = bytes[start + header_len..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    match shape.as_slice() {
        [h, w] => Tensor::from_vec(1, *h, *w, data),
        [c, h, w] => Tensor::from_vec(*c, *h, *w, data),
        other => panic!("{}: unexpected shape {other:?}", path.display()),
    }
    .expect("data matches the shape")
}

/// The insta snapshots of `compiled` in the top-level `snapshots/`: its summary
/// ([`kernel_gen::summary`]) as `<name>__program`, and each kernel file as `kernel__<file>`, one
/// snapshot per distinct text, shared by every program that has it.
pub fn snapshot(name: &str, compiled: &Compiled) {
    insta::with_settings!({snapshot_path => "../../../snapshots", prepend_module_to_snapshot => false, omit_expression => true}, {
        for (file, text) in &compiled.sources {
            let file = file.trim_end_matches(".cpp").replace('/', "__");
            insta::assert_snapshot!(format!("kernel__{file}"), text);
        }
        insta::assert_snapshot!(format!("{name}__program"), summary(name, &compiled.program));
    });
}
