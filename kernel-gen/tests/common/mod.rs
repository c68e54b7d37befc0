//! Shared test helpers: small test graphs, seeded random data, PCC, and a loader that runs a
//! compiled program's steps on the tt-runtime emulator.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kernel_gen::kir::{Arg, Role};
use kernel_gen::{Compiled, Fidelity};
use superpoint_graph::{ConvWeights, Graph, Node, Op, Tensor, WeightSet};
use tt_runtime::{
    CbSpec, CoreCoord, CoreRange, DataFormat, Device, Dispatch, KernelSpec, MathFidelity,
};

/// One conv layer of a test graph: name, in, out, kernel, relu.
pub type Layer = (&'static str, usize, usize, usize, bool);

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

fn fidelity(f: Fidelity) -> MathFidelity {
    match f {
        Fidelity::LoFi => MathFidelity::LoFi,
        Fidelity::HiFi2 => MathFidelity::HiFi2,
        Fidelity::HiFi3 => MathFidelity::HiFi3,
        Fidelity::HiFi4 => MathFidelity::HiFi4,
    }
}

fn range(r: &kernel_gen::CoreRange) -> CoreRange {
    CoreRange::new(
        CoreCoord::new(r.start.x, r.start.y),
        CoreCoord::new(r.end.x, r.end.y),
    )
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

/// Allocates every buffer of the program, writes `inputs` (buffer name → bytes), runs the
/// steps of the nodes in `nodes` in program order, and returns every buffer's bytes and the
/// wall time of each step.
pub fn run(
    dev: &Device,
    compiled: &Compiled,
    inputs: &BTreeMap<String, Vec<u8>>,
    nodes: &[&str],
) -> RunResult {
    let program = &compiled.program;
    let mut buffers = BTreeMap::new();
    for b in &program.buffers {
        let buf = dev
            .dram_buffer(u64::from(b.pages) * u64::from(b.page_bytes), b.page_bytes)
            .expect("allocate");
        if let Some(bytes) = inputs.get(&b.name) {
            buf.write(bytes).expect("write input");
        }
        buffers.insert(b.name.clone(), buf);
    }
    let mut times = Vec::new();
    for step in program
        .steps
        .iter()
        .filter(|s| nodes.contains(&s.node.as_str()))
    {
        let ranges: Vec<CoreRange> = step.ranges.iter().map(range).collect();
        let mut prog = dev.program().expect("program");
        for cb in &step.cbs {
            prog.add_cb(&CbSpec {
                id: cb.id,
                cores: ranges.clone(),
                total_size: cb.pages * cb.page_bytes,
                page_size: cb.page_bytes,
                format: match cb.format {
                    kernel_gen::Format::Bf16 => DataFormat::Float16B,
                    kernel_gen::Format::Fp32 => DataFormat::Float32,
                },
            })
            .expect("cb");
        }
        for k in &step.kernels {
            let source = &compiled.sources[&k.source];
            let kr: Vec<CoreRange> = k.ranges.iter().map(range).collect();
            let ct: Vec<u32> = k.compile_args.iter().map(|a| a.value).collect();
            let spec = match k.role {
                Role::Reader => KernelSpec::reader(&k.name, source, &kr),
                Role::Writer => KernelSpec::writer(&k.name, source, &kr),
                Role::Compute => KernelSpec::compute(&k.name, source, &kr)
                    .fidelity(fidelity(k.fidelity.expect("compute fidelity")))
                    .fp32_dest_acc(k.fp32_dest_acc.expect("compute DST mode")),
            }
            .compile_args(&ct);
            let id = prog.add_kernel(&spec).expect("kernel compiles");
            for core in &k.runtime_args {
                let args: Vec<u32> = core
                    .args
                    .iter()
                    .map(|a| match a {
                        Arg::Const(v) => *v,
                        Arg::BufferAddress(name) => buffers[name].address(),
                    })
                    .collect();
                prog.set_runtime_args(id, CoreCoord::new(core.core.x, core.core.y), &args)
                    .expect("runtime args");
            }
        }
        let start = Instant::now();
        if let Err(e) = dev.enqueue(&prog) {
            panic!("step `{}` failed on the emulator: {e}", step.node);
        }
        times.push((step.node.clone(), start.elapsed()));
    }
    let out = buffers
        .iter()
        .map(|(name, buf)| (name.clone(), buf.read_vec().expect("read")))
        .collect();
    (out, times)
}

/// Host bytes of every weight buffer of the program, from `weights`.
pub fn weight_inputs(compiled: &Compiled, weights: &WeightSet) -> BTreeMap<String, Vec<u8>> {
    use kernel_gen::plan::Content;
    let mut out = BTreeMap::new();
    for b in &compiled.program.buffers {
        match &b.content {
            Content::ConvWeights { entry } => {
                out.insert(
                    b.name.clone(),
                    kernel_gen::layout::pack_conv_weights(&weights[entry]),
                );
            }
            Content::ConvBias { entry } => {
                out.insert(
                    b.name.clone(),
                    kernel_gen::layout::pack_conv_bias(&weights[entry]),
                );
            }
            _ => {}
        }
    }
    out
}
